#!/usr/bin/env bash
# Submits a sweep (experiments/sweeps/*.sweep) as one Slurm job array: expands it with
# scripts/sweep_expand.py into a task list under the results root, submits the warm-up
# checkpoints its [warmup] section names (when missing) and then slurm/sweep.sbatch with one
# array task per run, and prints the job id and where the results land. Submitting the same
# sweep again to the same results root skips complete runs and resumes interrupted ones.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: slurm/submit.sh SWEEP [--throttle N] [--results DIR] [--partition P] [--ntasks N]
                       [--nodes N] [--launcher mpirun|srun] [--dry-run] [-- SBATCH_OPTION...]
Submits one Slurm array task per run of the sweep file SWEEP (format: the top of
scripts/sweep_expand.py).
  --throttle N   at most N array tasks run at once (sbatch --array=0-K%N); default no limit
  --results DIR  results root (default results/sweeps/SWEEP_STEM in the repository); the runs
                 go to DIR/runs/RUN_NAME, Slurm logs to DIR/slurm/JOBID_TASK.out, the task list
                 to DIR/tasks-DATE-TIME.tsv
  --partition P  Slurm partition (default: the cluster's default)
  --ntasks N     Slurm tasks (cores) per array task (default: the sweep's largest ranks;
                 ranks beyond it share cores: mpirun --oversubscribe)
  --nodes N      each array task's ranks spread evenly over N nodes (sbatch --nodes=N
                 --ntasks-per-node=NTASKS/N; N must divide the Slurm tasks), placed in
                 blocks: with 8 tasks on 2 nodes ranks 0-3 run on the first; default:
                 wherever Slurm finds free cores
  --launcher L   mpirun (default) or srun (srun --mpi=pmix; sets SAPO_LAUNCHER)
  --dry-run      check and expand, print the sbatch commands and every task's command; submit
                 nothing
  -- ...         further options for sbatch (e.g. --time=12:00:00 --gres=gpu:1)
Environment: SAPO_BIN (default build/sapo in the repository), PYTHON (default python3).
Relative model.init and [warmup] paths are relative to the repository root, where jobs run.
USAGE
}

die() { echo "submit.sh: $*" >&2; exit 2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sweep='' throttle='' results='' partition='' ntasks='' nodes='' launcher=mpirun dry=0
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --throttle) [ $# -ge 2 ] || die "--throttle needs a value"; throttle=$2; shift 2 ;;
    --results) [ $# -ge 2 ] || die "--results needs a value"; results=$2; shift 2 ;;
    --partition) [ $# -ge 2 ] || die "--partition needs a value"; partition=$2; shift 2 ;;
    --ntasks) [ $# -ge 2 ] || die "--ntasks needs a value"; ntasks=$2; shift 2 ;;
    --nodes) [ $# -ge 2 ] || die "--nodes needs a value"; nodes=$2; shift 2 ;;
    --launcher) [ $# -ge 2 ] || die "--launcher needs a value"; launcher=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$sweep" ] || die "one sweep file expected, got '$sweep' and '$1'"; sweep=$1; shift ;;
  esac
done
[ -n "$sweep" ] || { usage >&2; exit 2; }
[ -r "$sweep" ] || die "cannot read the sweep file '$sweep'"
[ -z "$throttle" ] || [[ $throttle =~ ^[1-9][0-9]*$ ]] || die "--throttle '$throttle': expected a positive integer"
[ -z "$ntasks" ] || [[ $ntasks =~ ^[1-9][0-9]*$ ]] || die "--ntasks '$ntasks': expected a positive integer"
[ -z "$nodes" ] || [[ $nodes =~ ^[1-9][0-9]*$ ]] || die "--nodes '$nodes': expected a positive integer"
case $launcher in mpirun|srun) ;; *) die "--launcher '$launcher': expected mpirun or srun" ;; esac

export SAPO_BIN=${SAPO_BIN:-$repo/build/sapo}
[ -x "$SAPO_BIN" ] || die "no sapo binary at $SAPO_BIN (build it: make build, or set SAPO_BIN)"
SAPO_BIN=$(cd "$(dirname "$SAPO_BIN")" && pwd)/$(basename "$SAPO_BIN")
export SAPO_LAUNCHER=$launcher
python=${PYTHON:-python3}
stem=$(basename "$sweep"); stem=${stem%.*}
results=${results:-$repo/results/sweeps/$stem}
results=$(realpath -m "$results")
[ "$dry" = 1 ] || mkdir -p "$results/slurm" || die "cannot create $results/slurm"

# ---- expand (every key checked against `sapo info`) into an immutable task list ----
if [ "$dry" = 1 ]; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  tasks=$tmp/tasks.tsv
else
  tasks=$results/tasks-$(date +%Y%m%d-%H%M%S).tsv
  [ ! -e "$tasks" ] || tasks=$results/tasks-$(date +%Y%m%d-%H%M%S)-$$.tsv
fi
"$python" "$repo/scripts/sweep_expand.py" --sapo "$SAPO_BIN" "$sweep" > "$tasks.part" || { rm -f "$tasks.part"; exit 2; }
mv "$tasks.part" "$tasks"
n=$(wc -l < "$tasks")
[ "$n" -gt 0 ] || die "$sweep expands to no runs"
warmups=$("$python" "$repo/scripts/sweep_expand.py" --sapo "$SAPO_BIN" --warmups "$sweep")

abs() { case $1 in /*) echo "$1" ;; *) echo "$repo/$1" ;; esac; }

# ---- every model.init must exist, or be made by a [warmup] entry ----
declare -A made=()
while IFS=$'\t' read -r path _ _; do [ -n "$path" ] && made[$(abs "$path")]=1; done <<<"$warmups"
max_ranks=1
while IFS=$'\t' read -r name _ overrides; do
  read -ra toks <<<"$overrides"
  for tok in "${toks[@]}"; do
    case $tok in
      ranks=*) r=${tok#ranks=}; [ "$r" -le "$max_ranks" ] || max_ranks=$r ;;
      model.init=?*|node.*.model.init=?*)
        p=$(abs "${tok#*=}")
        [ -e "$p" ] || [ -n "${made[$p]:-}" ] || die "$name: ${tok%%=*}=${tok#*=}: no such checkpoint ($p) and no [warmup] entry in $sweep makes it; add one, or run: $SAPO_BIN pretrain CONFIG --out $p" ;;
    esac
  done
done < "$tasks"
ntasks=${ntasks:-$max_ranks}
per_node=
if [ -n "$nodes" ]; then
  [ $((ntasks % nodes)) = 0 ] || die "--nodes $nodes: does not divide the $ntasks Slurm tasks of each array task (--ntasks)"
  per_node=$((ntasks / nodes))
fi

common=(--chdir="$repo")
[ -z "$partition" ] || common+=(--partition="$partition")

show() { printf '%q ' "$@"; echo; }

# ---- warm-ups first (only the missing ones); the array waits for them ----
deps=()
while IFS=$'\t' read -r path config overrides; do
  [ -n "$path" ] || continue
  p=$(abs "$path")
  if [ -e "$p" ]; then echo "warm-up $p exists"; continue; fi
  read -ra toks <<<"$overrides"
  cmd=(sbatch --parsable "${common[@]}" --job-name="sapo-warmup-$stem" --output="$results/slurm/warmup-%j.out"
       "${extra[@]}" "$repo/slurm/warmup.sbatch" "$p" "$config" "${toks[@]}")
  if [ "$dry" = 1 ]; then
    echo "would submit the warm-up: $(show "${cmd[@]}")"
  else
    id=$("${cmd[@]}") || die "sbatch refused the warm-up job for $p"
    id=${id%%;*}
    deps+=("$id")
    echo "warm-up job $id makes $p (log $results/slurm/warmup-$id.out)"
  fi
done <<<"$warmups"

array="0-$((n - 1))${throttle:+%$throttle}"
cmd=(sbatch --parsable "${common[@]}" --array="$array" --ntasks="$ntasks" ${nodes:+--nodes="$nodes" --ntasks-per-node="$per_node"}
     --job-name="sapo-$stem" --output="$results/slurm/%A_%a.out")
if [ ${#deps[@]} -gt 0 ]; then
  cmd+=(--dependency="afterok:$(IFS=:; echo "${deps[*]}")" --kill-on-invalid-dep=yes)
fi
cmd+=("${extra[@]}" "$repo/slurm/sweep.sbatch" "$tasks" "$results")

if [ "$dry" = 1 ]; then
  echo "would submit: $(show "${cmd[@]}")"
  echo "tasks $n; each would run (now, given what $results/runs holds):"
  for ((t = 0; t < n; t++)); do
    SLURM_ARRAY_TASK_ID=$t SLURM_SUBMIT_DIR=$repo SAPO_SWEEP_DRY_RUN=1 bash "$repo/slurm/sweep.sbatch" "$tasks" "$results" | sed 's/^/  /'
  done
  exit 0
fi
id=$("${cmd[@]}") || die "sbatch refused the array job"
id=${id%%;*}
echo "job $id"
echo "tasks $n (array $array, $ntasks Slurm tasks each${nodes:+ on $nodes nodes}, launcher $launcher); task list $tasks"
echo "results $results/runs/RUN_NAME (one per task; DONE marks a complete run)"
echo "logs $results/slurm/${id}_TASK.out"
