# One swarm of a study, sourced by the study drivers (experiments/specialists/run.sh,
# experiments/network/run.sh, experiments/weights/{calibrate,run}.sh); study_setup is their
# common preamble. study_run NAME CONFIG SEED [key=value...] runs 8 ranks of
# CONFIG fresh, resumes RUNS/NAME (`sapo run --resume`), or skips it when it is done here
# (DONE) or in an earlier session (its summary in OUT/summaries/, committed); a file RUNS/STOP
# ends the driver before its next run with exit status 3 (and is removed), so a session can stop
# a study without losing a run in flight (`touch RUNS/STOP`, then wait for the driver to exit).
# Each run's wall time, status, binary commit and numerics version go to OUT/costs.csv; a
# finished run's summary (analysis.summarize) to OUT/summaries/. Needs SAPO, PY, RUNS, OUT,
# COMMIT and the numerics version in NUMERICS; optional ROUNDS (swarm.rounds).
study_run() {
  local name=$1 config=$2 seed=$3 out=$RUNS/$1
  shift 3
  [ -f "$OUT/summaries/$name.npz" ] && return # done, here or in an earlier session
  [ -f "$out/DONE" ] && { "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null; return; }
  if [ -f "$RUNS/STOP" ]; then # asked to stop between runs: nothing in flight is lost
    rm -f "$RUNS/STOP"
    echo "# $(date +%T) $RUNS/STOP found (and removed): stopping before $name; the same command goes on"
    exit 3 # not 0: the study is not complete, and a chain `driver && next` must not go on
  fi
  [ -f "$OUT/costs.csv" ] || echo "run,seconds,status,commit,numerics" > "$OUT/costs.csv"
  local t0=$SECONDS rounds=()
  [ -n "${ROUNDS:-}" ] && rounds=(swarm.rounds="$ROUNDS")
  echo "# $(date +%T) $name"
  if [ -f "$out/node_0000.h5" ]; then
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run --resume "$out" --quiet
  else
    mpirun --oversubscribe --bind-to none -np 8 "$SAPO" run "$config" swarm.seed="$seed" \
      run.name="$name" --out "$out" --quiet "${rounds[@]}" "$@"
  fi
  echo "$name,$((SECONDS - t0)),$([ -f "$out/DONE" ] && echo done || echo stopped),$COMMIT,$NUMERICS" >> "$OUT/costs.csv"
  # a finished run's summary only: a committed summary means "done" to a later session
  [ ! -f "$out/DONE" ] || "$PY" -m analysis.summarize "$out" -o "$OUT/summaries" > /dev/null
}

# The numerics version of the binary $1 (sapo info).
study_numerics() { "$1" info | sed -n 's/^numerics *version \([0-9]*\).*/\1/p'; }

# The specialists' per-node keys for a seed's warm-up folder $1: node k starts from
# spec-TASK.ckpt, TASK the (k mod 4)-th of the four tasks, and records it as its specialty.
study_spec_keys() {
  local tasks=(base_conversion basic_arithmetic fraction_simplification calendar_arithmetic) k
  for k in 0 1 2 3 4 5 6 7; do
    echo "node.$k.model.init=$1/spec-${tasks[$((k % 4))]}.ckpt"
    echo "node.$k.run.specialty=${tasks[$((k % 4))]}"
  done
}

# The OpenBLAS kernel of the studies' runs: the specialist study's machine chose Zen. sgemm's
# blocking, and with it the bits, differ by kernel (an Intel Xeon picks SkylakeX: its warm-ups
# differed from the committed ones), so every run of a study is made on this one, whatever
# the CPU (any x86-64 with AVX2 runs it). OPENBLAS_CORETYPE set by the caller wins (a trial).
STUDY_BLAS_KERNEL=Zen

# study_setup STUDY SAPO: the drivers' common preamble: PY, MPI as root, one OpenBLAS thread
# per rank on the studies' kernel (refused when SAPO runs another), RUNS (default
# results/runs/STUDY), OUT (default results/STUDY), WARMUPS (default the specialist study's),
# their folders, COMMIT (default this checkout's HEAD) and NUMERICS.
study_setup() {
  PY=${SAPO_PYTHON:-/usr/bin/python3}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
  export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$STUDY_BLAS_KERNEL}
  local kernel
  kernel=$("$2" info | sed -n 's/^blas .*, kernel \([A-Za-z0-9]*\).*/\1/p')
  [ "${kernel,,}" = "${OPENBLAS_CORETYPE,,}" ] || {
    echo "$1: $2 runs OpenBLAS's ${kernel:-unknown} kernel, not $OPENBLAS_CORETYPE (OPENBLAS_CORETYPE): its bits would not pair with the study's runs" >&2
    exit 2
  }
  RUNS=${RUNS:-results/runs/$1}
  OUT=${OUT:-results/$1}
  WARMUPS=${WARMUPS:-results/runs/specialists/warmups}
  mkdir -p "$RUNS" "$OUT/summaries"
  COMMIT=${COMMIT:-$(git rev-parse --short HEAD)}
  NUMERICS=$(study_numerics "$2")
}
