#!/usr/bin/env bash
# Checks slurm/sweep.sbatch and slurm/submit.sh without a scheduler: which command an array
# task picks (fresh run, `sapo run --resume` for a directory with node_0000.h5 and no DONE,
# exit 0 at once for a DONE directory), both launchers, bad task lists; one real task run
# by hand (mpirun, 2 ranks, tiny model) and re-run; submit.sh --dry-run over every shipped
# sweep and its refusals (missing checkpoint, bad options).
set -uo pipefail

SRC=${SAPO_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SAPO_BUILD_DIR:-$SRC/build}
export SAPO_BIN=${SAPO_BIN:-$BUILD/sapo}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
W=$(mktemp -d "${TMPDIR:-/tmp}/sapo-sweep-scripts.XXXXXX")
trap 'rm -rf "$W"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# task RESULTS ID [VAR=VALUE...]: runs sweep.sbatch for array task ID in dry-run mode
task() {
  local results=$1 id=$2
  shift 2
  env SLURM_ARRAY_TASK_ID="$id" SAPO_SWEEP_DRY_RUN=1 "$@" bash "$SRC/slurm/sweep.sbatch" "$W/tasks.tsv" "$results" 2>&1
}
expect() {  # expect WHAT OUTPUT PATTERN (grep -E)
  if echo "$2" | grep -Eq -- "$3"; then ok "$1"; else fail "$1: expected /$3/ in: $2"; fi
}

cfg=$SRC/experiments/quick.ini
# tasks.max_unanswerable=1: 8 new bytes answer no task; these runs test the scripts, not the budget
tiny="model.n_layer=1 model.n_head=2 model.d_model=16 model.n_ctx=64 gen.max_new_tokens=8 sampling.groups=2 sampling.local=1 sampling.external=1 grpo.completions=2 swarm.rounds=3 run.eval_every=0 tasks.max_unanswerable=1 swarm.seed=5"
printf 'tiny-a-s5\t%s\tranks=2 swarm.nodes=2 %s\n' "$cfg" "$tiny" > "$W/tasks.tsv"
printf 'tiny-b-s5\t%s\tranks=3 %s tasks.names=base_conversion,binary_matrix\n' "$cfg" "$tiny" >> "$W/tasks.tsv"
R=$W/results

# ---- which command a task picks ----
out=$(task "$R" 0)
expect "fresh task: mpirun with the task's ranks" "$out" "^mpirun --oversubscribe --bind-to none -np 2 $SAPO_BIN run "
expect "fresh task: config, overrides, run.name and --out" "$out" \
  " run $cfg swarm.nodes=2 model.n_layer=1 .* swarm.seed=5 run.name=tiny-a-s5 --out $R/runs/tiny-a-s5\s*$"
if grep -q "ranks=" <<<"$out"; then fail "ranks= reached sapo: $out"; else ok "ranks= is not passed to sapo"; fi
out=$(task "$R" 1)
expect "second line: 3 ranks, a comma in a value survives" "$out" "-np 3 .*tasks.names=base_conversion,binary_matrix run.name=tiny-b-s5"
out=$(task "$R" 0 SAPO_LAUNCHER=srun)
expect "SAPO_LAUNCHER=srun" "$out" "^srun --mpi=pmix -n 2 --overcommit --kill-on-bad-exit=1 $SAPO_BIN run "
mkdir -p "$R/runs/tiny-a-s5" && : > "$R/runs/tiny-a-s5/config.ini"
out=$(task "$R" 0)
expect "directory without node_0000.h5: a fresh run into it" "$out" " run $cfg .*--out $R/runs/tiny-a-s5\s*$"
: > "$R/runs/tiny-a-s5/node_0000.h5"
out=$(task "$R" 0)
expect "node_0000.h5 without DONE: resume" "$out" "^mpirun --oversubscribe --bind-to none -np 2 $SAPO_BIN run --resume $R/runs/tiny-a-s5\s*$"
echo "completed" > "$R/runs/tiny-a-s5/DONE"
out=$(task "$R" 0); rc=$?
[ $rc -eq 0 ] && grep -q "is complete" <<<"$out" && ! grep -q "sapo run" <<<"$out" &&
  ok "DONE: exit 0 at once, nothing launched" || fail "DONE: rc $rc, output: $out"

# ---- bad input: exit 2 with a message ----
for case_ in "7|has no line 8" "x|expected an array task" "0 SAPO_LAUNCHER=mpiexec|SAPO_LAUNCHER='mpiexec'"; do
  args=${case_%%|*} want=${case_#*|}
  # shellcheck disable=SC2086
  out=$(task "$W/r2" $args); rc=$?
  [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out" && ok "refuses: $want" || fail "task $args: rc $rc (want 2), output: $out"
done
printf 'broken\t%s\tranks=zero x=1\n' "$cfg" > "$W/bad.tsv"
out=$(SLURM_ARRAY_TASK_ID=0 SAPO_SWEEP_DRY_RUN=1 bash "$SRC/slurm/sweep.sbatch" "$W/bad.tsv" "$W/r2" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "bad.tsv:1: ranks='zero'" <<<"$out" && ok "refuses a bad ranks token" || fail "bad ranks: rc $rc, $out"

# ---- one real task by hand, then again ----
out=$(SLURM_ARRAY_TASK_ID=0 bash "$SRC/slurm/sweep.sbatch" "$W/tasks.tsv" "$W/real" 2>&1); rc=$?
d=$W/real/runs/tiny-a-s5
if [ $rc -eq 0 ] && [ -s "$d/DONE" ] && [ -s "$d/node_0000.h5" ] && [ -s "$d/node_0001.h5" ] && [ -s "$d/run.h5" ] &&
  grep -Eq "^name += tiny-a-s5( |$)" "$d/config.ini"; then
  ok "a real task ran to DONE (2 nodes, run.name recorded)"
else
  fail "real task: rc $rc, files: $(ls "$d" 2>&1 | tr '\n' ' '), output: $out"
fi
before=$(stat -c %Y "$d/DONE" 2>/dev/null)
out=$(SLURM_ARRAY_TASK_ID=0 bash "$SRC/slurm/sweep.sbatch" "$W/tasks.tsv" "$W/real" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "is complete" <<<"$out" && [ "$before" = "$(stat -c %Y "$d/DONE")" ] &&
  ok "the same task again exits at once" || fail "rerun: rc $rc, $out"

# ---- submit.sh ----
grep -q "^usage: slurm/submit.sh SWEEP" <<<"$("$SRC/slurm/submit.sh" --help)" && ok "submit.sh --help" || fail "submit.sh --help"
for s in "$SRC"/experiments/sweeps/*.sweep; do
  n=$(python3 "$SRC/scripts/sweep_expand.py" --sapo "$SAPO_BIN" "$s" | wc -l)
  out=$("$SRC/slurm/submit.sh" "$s" --dry-run --results "$W/dry" --throttle 3 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "would submit: sbatch .*--array=0-$((n - 1))%3 " <<<"$out" &&
    [ "$(echo "$out" | grep -c '^  sweep.sbatch: task ')" -eq "$n" ]; then
    ok "submit.sh --dry-run $(basename "$s"): $n tasks"
  else
    fail "submit.sh --dry-run $s: rc $rc, $out"
  fi
done
[ ! -e "$W/dry" ] && ok "--dry-run creates nothing" || fail "--dry-run created $W/dry"
out=$("$SRC/slurm/submit.sh" "$SRC/experiments/sweeps/swarm_size.sweep" --dry-run --results "$W/dry" 2>&1)
expect "--ntasks defaults to the largest ranks" "$out" "--array=0-14 --ntasks=32 "
out=$("$SRC/slurm/submit.sh" "$SRC/experiments/sweeps/swarm_size.sweep" --dry-run --results "$W/dry" --nodes 2 2>&1)
expect "--nodes N reaches the array's sbatch, tasks spread evenly" "$out" "--array=0-14 --ntasks=32 --nodes=2 --ntasks-per-node=16 "
cat > "$W/noinit.sweep" <<SWEEP
[sweep]
config = $cfg
seeds = 1
[set]
model.init = $W/missing.ckpt
SWEEP
out=$("$SRC/slurm/submit.sh" "$W/noinit.sweep" --dry-run 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "model.init=$W/missing.ckpt: no such checkpoint" <<<"$out" &&
  ok "refuses a missing model.init that no [warmup] makes" || fail "missing init: rc $rc, $out"
printf '[warmup]\n%s =\n' "$W/missing.ckpt" >> "$W/noinit.sweep"
out=$("$SRC/slurm/submit.sh" "$W/noinit.sweep" --dry-run 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "would submit the warm-up: .*warmup.sbatch $W/missing.ckpt $cfg" <<<"$out" &&
  grep -q "would submit: sbatch .*--dependency=\|would submit: sbatch " <<<"$out" &&
  ok "a [warmup] entry makes the missing checkpoint first" || fail "warm-up: rc $rc, $out"
printf '[sweep]\nconfig = %s\nseeds = 1\n[set]\nmodel.nlayer = 2\n' "$cfg" > "$W/badkey.sweep"
out=$("$SRC/slurm/submit.sh" "$W/badkey.sweep" --dry-run 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "badkey.sweep:5: unknown key 'model.nlayer'" <<<"$out" &&
  ok "a bad sweep stops submit.sh with file:line" || fail "bad key: rc $rc, $out"
for bad in "--throttle 0" "--launcher mpiexec" "--bogus" "--nodes 0" "--nodes 3"; do
  # shellcheck disable=SC2086
  out=$("$SRC/slurm/submit.sh" "$SRC/experiments/sweeps/loss.sweep" $bad --dry-run 2>&1); rc=$?
  [ $rc -eq 2 ] && ok "submit.sh refuses $bad" || fail "submit.sh $bad: rc $rc, $out"
done

echo "$failures failure(s)"
[ $failures -eq 0 ]
