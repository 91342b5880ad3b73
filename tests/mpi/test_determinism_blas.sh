# model.deterministic = true gives the same bits whatever OpenBLAS kernel or thread count runs
# (it calls no BLAS and no libm transcendental): `sapo pretrain` checkpoints and a 4-rank
# swarm's checkpoints and HDF5 logs (every dataset but the t_* timings) are compared across
# the OpenBLAS core types this CPU can run (SkylakeX with AVX-512, Haswell with AVX2,
# Sandybridge with AVX, Prescott always) and OPENBLAS_NUM_THREADS 1 and 2. The control, the
# same runs with the default numerics, is reported (it differs by core type on an AVX-512
# machine; a CPU where it does not is said so, not failed).
set -u
SAPO=${SAPO_BIN:-build/sapo}
SRC=${SAPO_SOURCE_DIR:-.}
PY=${SAPO_PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cores=(Prescott)
grep -qw avx /proc/cpuinfo && cores+=(Sandybridge)
grep -qw avx2 /proc/cpuinfo && cores+=(Haswell)
grep -qw avx512f /proc/cpuinfo && cores+=(SkylakeX)
echo "OpenBLAS core types this CPU runs: ${cores[*]}"

CFG=("$SRC/experiments/quick.ini" run.eval_questions=16 run.eval_every=2)
PRE=(pretrain.steps=12 pretrain.batch=16)

# ---- sapo pretrain ------------------------------------------------------------------------
for det in true false; do
    for ct in "${cores[@]}"; do
        for th in 1 2; do
            OPENBLAS_CORETYPE=$ct OPENBLAS_NUM_THREADS=$th "$SAPO" pretrain "${CFG[@]}" "${PRE[@]}" \
                model.deterministic=$det --out "$TMP/pre_${det}_${ct}_$th.ckpt" --quiet >"$TMP/log" 2>&1 \
                || fail "pretrain $det $ct $th: $(tail -3 "$TMP/log")"
        done
    done
    n=$(md5sum "$TMP"/pre_${det}_*.ckpt | awk '{print $1}' | sort -u | wc -l)
    echo "pretrain, deterministic=$det: $n distinct checkpoint(s) over ${#cores[@]} core types x 2 thread counts"
    if [ "$det" = true ]; then
        [ "$n" = 1 ] || fail "deterministic pretrain checkpoints differ across core types / threads"
    elif [ "$n" = 1 ]; then
        echo "control: the default numerics did not differ across these core types on this CPU"
    fi
done

# ---- a 4-rank swarm from a deterministic warm-up long enough to earn rewards ---------------------
INIT="$TMP/warmup.ckpt"
"$SAPO" pretrain "${CFG[@]}" pretrain.steps=150 model.deterministic=true --out "$INIT" --quiet >"$TMP/log" 2>&1 \
    || fail "warm-up: $(tail -3 "$TMP/log")"
run_swarm() { # det core threads dir
    OPENBLAS_CORETYPE=$2 OPENBLAS_NUM_THREADS=$3 mpirun --oversubscribe -np 4 "$SAPO" run "${CFG[@]}" \
        model.init="$INIT" model.deterministic=$1 swarm.rounds=5 run.checkpoint_every=4 --out "$4" --quiet \
        >"$4.log" 2>&1 || fail "swarm $1 $2 $3: $(tail -5 "$4.log")"
}
# h5 datasets (all but t_*) and checkpoints of run A equal run B's bit for bit: prints what differs
same_runs() {
    "$PY" - "$1" "$2" <<'PYEOF'
import glob, os, sys
import h5py, numpy as np
a, b = sys.argv[1], sys.argv[2]
diff = []
for fa in sorted(glob.glob(os.path.join(a, "node_*.h5"))):
    fb = os.path.join(b, os.path.basename(fa))
    with h5py.File(fa, "r", swmr=True) as ha, h5py.File(fb, "r", swmr=True) as hb:
        names = sorted(k for k in ha.keys() if isinstance(ha[k], h5py.Dataset) and not k.startswith("t_"))
        if not names: diff.append(f"{fa}: no datasets")
        if "reward_own" in ha and not np.nansum(ha["reward_own"][()]) > 0: diff.append(f"{fa}: no reward (nothing trained)")
        for k in names:
            x, y = ha[k][()], hb[k][()]
            if x.shape != y.shape or x.tobytes() != y.tobytes(): diff.append(f"{os.path.basename(fa)}:{k}")
ca = sorted(glob.glob(os.path.join(a, "ckpt", "*.model")))
if not ca: diff.append("no checkpoints")
for f in ca:
    g = os.path.join(b, "ckpt", os.path.basename(f))
    if not os.path.exists(g) or open(f, "rb").read() != open(g, "rb").read(): diff.append(os.path.basename(f))
print(" ".join(diff) if diff else "identical")
sys.exit(1 if diff else 0)
PYEOF
}
runs=()
i=0
for ct in "${cores[@]}"; do
    th=$((i % 2 + 1)); i=$((i + 1))
    run_swarm true "$ct" "$th" "$TMP/swarm_true_$ct"
    runs+=("$ct/$th")
done
ref="$TMP/swarm_true_${cores[0]}"
for ct in "${cores[@]:1}"; do
    out=$(same_runs "$ref" "$TMP/swarm_true_$ct") || fail "deterministic swarm ${cores[0]} vs $ct: $out"
    echo "swarm, deterministic: ${cores[0]} vs $ct: $out"
done
# the control: default numerics on the first and last core type
last=${cores[${#cores[@]}-1]}
if [ "$last" != "${cores[0]}" ]; then
    run_swarm false "${cores[0]}" 1 "$TMP/swarm_false_a"
    run_swarm false "$last" 1 "$TMP/swarm_false_b"
    out=$(same_runs "$TMP/swarm_false_a" "$TMP/swarm_false_b")
    echo "swarm, default numerics (control): ${cores[0]} vs $last: ${out:0:300}"
fi
[ "$fails" = 0 ] && echo "determinism across BLAS kernels: all checks passed"
exit $((fails > 0))
