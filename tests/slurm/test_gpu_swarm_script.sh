#!/usr/bin/env bash
# slurm/gpu_swarm.sbatch without a GPU: its dry run prints the sapo command it would start
# (the model directory and the cuda backend on the command line, a fresh run, then a resume
# once a node log exists), and bad arguments give one line and exit 2.
set -euo pipefail
: "${SAPO_SOURCE_DIR:?}"
script=$SAPO_SOURCE_DIR/slurm/gpu_swarm.sbatch
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/model" && echo '{}' > "$t/model/config.json"
cd "$SAPO_SOURCE_DIR"
fail=0
out=$(SAPO_SWEEP_DRY_RUN=1 SAPO_RESULTS=$t/res SLURM_JOB_ID=7 SLURM_NTASKS=8 SAPO_BIN=/x/sapo \
      bash "$script" experiments/qwen2.5-0.5b/4L4E.ini "$t/model" swarm.rounds=3)
want="mpirun -np 8 /x/sapo run experiments/qwen2.5-0.5b/4L4E.ini model.family=llama model.hf_dir=$t/model model.backend=cuda swarm.rounds=3 --out $t/res/runs/4L4E-7"
[ "$out" = "$want " ] || { echo "FAIL: fresh run: got '$out', want '$want '"; fail=1; }
mkdir -p "$t/res/runs/4L4E-7" && touch "$t/res/runs/4L4E-7/node_0000.h5"
out=$(SAPO_SWEEP_DRY_RUN=1 SAPO_RESULTS=$t/res SLURM_JOB_ID=7 SLURM_NTASKS=8 SAPO_BIN=/x/sapo \
      bash "$script" experiments/qwen2.5-0.5b/4L4E.ini "$t/model")
[ "$out" = "mpirun -np 8 /x/sapo run --resume $t/res/runs/4L4E-7 " ] || { echo "FAIL: resume: got '$out'"; fail=1; }
if err=$(bash "$script" experiments/qwen2.5-0.5b/4L4E.ini "$t/nowhere" 2>&1); then
  echo "FAIL: a directory without config.json was accepted"; fail=1
else
  [[ $err == *"has no config.json"* ]] || { echo "FAIL: message '$err'"; fail=1; }
fi
if bash "$script" 2>/dev/null; then echo "FAIL: no arguments accepted"; fail=1; fi
[ $fail = 0 ] && echo "ok: gpu_swarm.sbatch dry runs and refusals"
exit $fail
