#!/usr/bin/env bash
# Run THERE (the borrowed GPU machine, from the repository root, with .deps carried):
#   bash scripts/device/run-on-gpu.sh
# Unpacks the Debian packages of scripts/device/gather-debs.sh under a prefix (never over /),
# configures and builds sapo with CUDA against them, then runs in order, each step under its
# own timeout and logged, later steps running even when an earlier check fails:
#   1. ctest -L gpu            parity with the CPU, NCCL vs MPI all-gather (>= 2 GPUs), 4-rank swarm
#   2. sapo bench model --backend cuda (PyTorch on the GPU beside it), and --backend cpu
#   3. the paper's 4L4E config (else experiments/quick.ini) on 8 ranks sharing the GPU,
#      model.backend = cuda, SAPO_GPU_ROUNDS rounds (default 300) or until its time is up
# Everything goes to $OUT (at most 8 files come back): run.log (all steps), env.log,
# build.log, ctest-gpu.log, bench.log, paper-run.log, paper-summary.json. The whole script
# is sized for about 8 minutes; SAPO_GPU_PAPER_SECONDS bounds step 3 (default 200).
# SAPO_DEPS_PREFIX moves the prefix; SAPO_GPU_STOP_AFTER_BUILD=1 stops after the build (a
# dry run of the unpack, configure and link on any x86-64 machine).
# Exit status: 0 when every step passed, else 1 (the failing steps are listed at the end).
set -uo pipefail # not -e: a failing step is recorded and the next one still runs
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
FAILED=()
say() { echo "[$(($(date +%s) - T0))s] $*"; }
# step NAME SECONDS LOG CMD...: runs CMD with a timeout, its output appended to LOG ("-" =
# this log), records a failure, never exits; returns CMD's status
step() {
    local name=$1 secs=$2 log=$3
    shift 3
    say "== $name (timeout ${secs}s$([ "$log" != - ] && echo ", output in ${log#$OUT/}"))"
    local t=$(date +%s) rc
    if [ "$log" = - ]; then
        timeout --kill-after=10 "$secs" "$@"
    else
        timeout --kill-after=10 "$secs" "$@" >>"$log" 2>&1
    fi
    rc=$?
    if [ $rc -ne 0 ]; then
        FAILED+=("$name (rc $rc$([ $rc -eq 124 ] && echo ', timed out'))")
        say "!! $name failed with rc $rc after $(($(date +%s) - t))s"
    else
        say "   $name passed in $(($(date +%s) - t))s"
    fi
    return $rc
}
finish() {
    say "== summary: $((${#FAILED[@]})) failed step(s)"
    for f in "${FAILED[@]}"; do echo "   FAILED: $f"; done
    nvidia-smi --query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv 2>/dev/null >>"$OUT/env.log"
    [ ${#FAILED[@]} -eq 0 ] && exit 0 || exit 1
}
fatal() { # a step later ones depend on failed
    FAILED+=("$1")
    say "!! $1: cannot go on"
    finish
}

# ---- 0. the machine ----------------------------------------------------------------------
{
    echo "# $(date -u) $(uname -a)"
    nvidia-smi 2>&1 | head -20
    command -v nvcc && nvcc --version | tail -2
    cmake --version | head -1
    gcc --version | head -1
    python3 --version
    nproc
    command -v dpkg pkg-config mpirun h5pcc || true
} >"$OUT/env.log" 2>&1
say "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null), $(nproc) cores"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$NVCC" ] || fatal "no nvcc on PATH or at /usr/local/cuda/bin/nvcc"

# ---- 1. unpack the packages under a prefix --------------------------------------------------
P=${SAPO_DEPS_PREFIX:-/opt/sapo-deps}
U=$P/usr
L=$U/lib/x86_64-linux-gnu
ls .deps/*.deb >/dev/null 2>&1 || fatal "no .deps/*.deb: run scripts/device/gather-debs.sh here and carry .deps"
say "== unpacking $(ls .deps/*.deb | wc -l) packages under $P"
mkdir -p "$P"
for f in .deps/*.deb; do
    if command -v dpkg >/dev/null; then
        dpkg -x "$f" "$P" || fatal "dpkg -x $f"
    else # ar + tar, for an image without dpkg
        member=$(ar t "$f" | grep '^data\.tar')
        ar p "$f" "$member" | tar -x -C "$P" -f - || fatal "unpacking $f"
    fi
done
# what Debian's maintainer scripts and alternatives would have made
ln -sf mpicc.openmpi "$U/bin/mpicc"
ln -sf mpirun.openmpi "$U/bin/mpirun"
[ -e "$U/bin/mpiexec.openmpi" ] && ln -sf mpiexec.openmpi "$U/bin/mpiexec"
OB=$L/openblas-pthread
ln -sf libopenblas.so.0 "$OB/libopenblas.so" 2>/dev/null || true
# Debian's h5pcc holds /usr paths: a stand-in answering what CMake's FindHDF5 asks
cat >"$U/bin/h5pcc" <<EOF
#!/bin/sh
# sapo's stand-in for h5pcc under $P (FindHDF5 runs -showconfig, -show and a compile)
case "\$1" in
  -showconfig) printf '            HDF5 Version: 1.10.8\n         Parallel HDF5: yes\n'; exit 0 ;;
  -show) shift; echo "mpicc -I$U/include/hdf5/openmpi \$* -L$L/hdf5/openmpi/lib -lhdf5"; exit 0 ;;
esac
exec mpicc -I$U/include/hdf5/openmpi "\$@" -L$L/hdf5/openmpi/lib -lhdf5
EOF
chmod +x "$U/bin/h5pcc"
# .pc files with the prefix's paths: Debian's say /usr (openblas.pc is an alternative, taken
# from openblas-pthread/); PKG_CONFIG_LIBDIR below points at these alone, hiding any system copy
PC=$P/pkgconfig
mkdir -p "$PC"
for f in "$L"/pkgconfig/*.pc "$U"/share/pkgconfig/*.pc "$OB"/pkgconfig/openblas.pc; do
    [ -f "$f" ] || continue
    sed -E -e "s#^([A-Za-z_]+)=/usr(/|\$)#\1=$U\2#" -e "s#(-[IL])/usr/#\1$U/#g" "$f" >"$PC/$(basename "$f")"
done
export PKG_CONFIG_PATH=$PC PKG_CONFIG_LIBDIR=$PC
PKGCONF=$(command -v pkg-config || echo "$U/bin/pkgconf")
export OPAL_PREFIX=$U PATH=$U/bin:$PATH
export LD_LIBRARY_PATH=$L:$L/openmpi/lib:$L/hdf5/openmpi/lib:$OB:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# one machine: shared memory only, no UCX/verbs probing, no CMA (containers refuse ptrace)
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OPENBLAS_NUM_THREADS=1
# NCCL: the toolkit's, else the nvidia-nccl wheel beside PyTorch
if [ -z "${NCCL_ROOT:-}" ] && ! ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h >/dev/null 2>&1; then
    NCCL_ROOT=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
    if [ -n "$NCCL_ROOT" ] && [ -e "$NCCL_ROOT/include/nccl.h" ]; then
        export NCCL_ROOT
        export LD_LIBRARY_PATH=$NCCL_ROOT/lib:$LD_LIBRARY_PATH
    else
        unset NCCL_ROOT
    fi
fi
# every module CMakeLists.txt asks pkg-config for, found in the prefix (else configure fails)
NOPC=()
for m in $(sed -n 's/^ *pkg_check_modules([A-Za-z0-9_]* .*REQUIRED.* \([A-Za-z0-9_.+-]*\))$/\1/p' CMakeLists.txt); do
    "$PKGCONF" --exists "$m" || NOPC+=("$m")
done
[ ${#NOPC[@]} -eq 0 ] || fatal "no .pc under $PC for: ${NOPC[*]} (add the -dev packages to gather-debs.sh)"
say "prefix ready; pkg-config $PKGCONF; NCCL_ROOT ${NCCL_ROOT:-(toolkit or none)}"
step "mpirun smoke test" 60 - mpirun -np 2 hostname || fatal "mpirun from the prefix does not start"

# ---- 2. configure and build ---------------------------------------------------------------
B=$ROOT/build-gpu
mkdir -p "$B/venv/bin"
# the tests' SAPO_PYTHON: the machine's python3 (PyTorch, h5py, pytest), where CMake looks
# for the venv; a wrapper, not a symlink (a symlink would lose that venv's site-packages)
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" >"$B/venv/bin/python"
chmod +x "$B/venv/bin/python"
say "== configure"
if ! timeout 180 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSAPO_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" \
        -DSAPO_SANITIZE_TESTS=OFF -DMPI_C_COMPILER="$U/bin/mpicc" -DHDF5_C_COMPILER_EXECUTABLE="$U/bin/h5pcc" \
        -DPKG_CONFIG_EXECUTABLE="$PKGCONF" >"$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"
    fatal "cmake configure"
fi
grep -E 'sapo:|CUDA|NCCL|HDF5|MPI' "$OUT/build.log" | head -20
say "== build"
if ! timeout 300 cmake --build "$B" -j"$(nproc)" >>"$OUT/build.log" 2>&1; then
    grep -E 'error|Error' "$OUT/build.log" | head -30
    fatal "build"
fi
{
    echo "# ldd sapo"
    ldd "$B/sapo"
    "$B/sapo" info | head -8
} >>"$OUT/env.log" 2>&1
if ldd "$B/sapo" | grep -q 'not found'; then
    ldd "$B/sapo" | grep 'not found'
    fatal "sapo links libraries that are not found"
fi
"$B/sapo" info | head -4
if [ -n "${SAPO_GPU_STOP_AFTER_BUILD:-}" ]; then # a dry run of the unpack and build, no GPU needed
    say "SAPO_GPU_STOP_AFTER_BUILD is set: stopping after the build"
    finish
fi

# ---- 3. the GPU tests ---------------------------------------------------------------------
step "ctest -L gpu" 300 "$OUT/ctest-gpu.log" bash -c "cd '$B' && ctest -L gpu --output-on-failure --timeout 280"
grep -E 'Test +#|tests passed|max \||greedy row|grad norm|AdamW|vs |FAIL|skipped' "$OUT/ctest-gpu.log" | head -60
# (gpu/test_gpu_nccl starts the NCCL-vs-MPI comparison on max(2, the GPUs) ranks itself)
say "== parity with TF32 (informational: TF32 is expected to exceed the fp32 tolerances)"
SAPO_CUDA_TF32=1 timeout 120 "$B/tests/test_gpu_parity" 2>&1 | grep -E 'max \||FAIL|passed|failures' | head -12 \
    | tee -a "$OUT/ctest-gpu.log"

# ---- 4. the benchmark -------------------------------------------------------------------------
export SAPO_PYTHON=$(command -v python3)
step "sapo bench model --backend cuda" 150 "$OUT/bench.log" "$B/sapo" bench model --backend cuda
step "sapo bench model --backend cpu (one size, for the ratio)" 90 "$OUT/bench.log" \
    "$B/sapo" bench model --backend cpu --size 4,4,128 --repeats 2 --no-torch
grep -vE '^# sgemm +[0-9]' "$OUT/bench.log" | head -30

# ---- 5. the paper's 4L4E config on 8 ranks, model.backend = cuda ------------------------------
CFG=experiments/paper/4L4E.ini
[ -f "$CFG" ] || CFG=experiments/quick.ini
ROUNDS=${SAPO_GPU_ROUNDS:-300}
SECS=${SAPO_GPU_PAPER_SECONDS:-200}
RUN=/tmp/sapo-gpu-run
rm -rf "$RUN"
say "== $CFG on 8 ranks, model.backend=cuda, $ROUNDS rounds or ${SECS}s (random init: no warm-up here)"
# Running out of time is an outcome here, not a failure: the node logs say how far it got.
timeout --kill-after=10 "$SECS" mpirun -np 8 --bind-to none "$B/sapo" run "$CFG" model.backend=cuda \
    "swarm.rounds=$ROUNDS" run.log_every=10 run.checkpoint_every=0 --out "$RUN" >"$OUT/paper-run.log" 2>&1
rc=$?
[ -f "$RUN/summary.json" ] && cp "$RUN/summary.json" "$OUT/paper-summary.json"
if [ $rc -eq 0 ]; then
    say "   the 8-rank run completed $ROUNDS rounds"
elif [ $rc -ne 124 ]; then
    FAILED+=("8-rank run of $CFG (rc $rc)")
    tail -20 "$OUT/paper-run.log"
fi
if [ $rc -ne 0 ]; then
    say "   the run stopped (rc $rc); rounds logged per node:"
    python3 - "$RUN" <<'EOF' 2>&1 | tee -a "$OUT/paper-run.log"
import glob, sys
try:
    import h5py
    for f in sorted(glob.glob(sys.argv[1] + "/node_*.h5")):
        with h5py.File(f, "r", swmr=True) as h:
            n = len(h["round"])
            r = h["reward_own"][:n]
            print(f"{f.split('/')[-1]}: {n} rounds, mean reward_own {r.mean() if n else float('nan'):.3f}, "
                  f"t_round {h['t_round'][:n].mean() if n and 't_round' in h else float('nan'):.2f}s")
except Exception as e:
    print("could not read the node logs:", e)
EOF
fi
grep -E '^node 0|^round|summary|^total|^[0-9] ' "$OUT/paper-run.log" | tail -25
nvidia-smi --query-gpu=memory.used --format=csv,noheader 2>/dev/null
finish
