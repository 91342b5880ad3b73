#!/usr/bin/env bash
# Run THERE (the borrowed GPU machine, from the repository root, with .deps carried), as the
# ONE command of a device run (its limit: 600 s; this script's plan: at most 480 s):
#   bash scripts/device/run-on-gpu.sh            the run; its log goes to $OUT as it goes
#   bash scripts/device/run-on-gpu.sh --plan     prints the steps' budgets; exit 1 if past 480 s
# Unpacks the Debian packages of scripts/device/gather-debs.sh under a prefix (never over /),
# configures and builds sapo with CUDA against them (only the targets the GPU steps run), then,
# each step under its own timeout (never past the 480 s deadline) and logged, later steps
# running even when an earlier check fails:
#   gpu-tests        ctest -L gpu; FAILS when any GPU test is skipped or not run (a test that
#                    sees no device exits 77, which ctest counts as "Skipped"), except
#                    gpu/test_gpu_nccl with fewer than 2 GPUs (it needs 2)
#   parity-blocking  the parity tests again under CUDA_LAUNCH_BLOCKING=1 SAPO_CUDA_SYNC=1
#   memcheck, racecheck  compute-sanitizer on gpu/test_gpu_layers, when the toolkit has it
#   bench            on the time left: byte-GPT node-rounds (quick, then the paper's) and model
#                    steps, CUDA against CPU (SmolLM2 node-rounds where its weights are)
# Everything goes to $OUT: run.log (all steps), env.log, build.log, ctest-gpu.log,
# sanitizer.log, bench.log. SAPO_DEPS_PREFIX moves the prefix (its env.sh holds the
# environment the steps ran in); SAPO_GPU_STOP_AFTER_BUILD=1 stops after the build (what
# scripts/device/rehearse.sh runs in a bare Debian root, no GPU needed), building also
# SAPO_GPU_EXTRA_TARGETS.
# Exit status: 0 when every step passed, else 1 (the failing steps are listed at the end).
set -uo pipefail # not -e: a failing step is recorded and the next one still runs
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

# The plan: step:seconds, in order. Each step's timeout is its budget, cut to what is left
# before the deadline; the sum must stay within LIMIT (tests/unit/test_device_plan.sh).
LIMIT=480
PLAN=(prepare:30 configure:45 build:150 gpu-tests:90 parity-blocking:40 memcheck:35 racecheck:35 bench:45)
# SAPO_GPU_BUDGET_SCALE (an integer, default 1) stretches the budgets and the deadline of a
# run, never the plan: for a rehearsal on a slower machine (scripts/device/rehearse.sh)
SCALE=${SAPO_GPU_BUDGET_SCALE:-1}
budget() { local s; for s in "${PLAN[@]}"; do [ "${s%%:*}" = "$1" ] && { echo $((${s#*:} * SCALE)); return; }; done; echo 0; }
plan_total() { local s t=0; for s in "${PLAN[@]}"; do t=$((t + ${s#*:})); done; echo $t; }
print_plan() {
    local s t=0
    echo "plan (step: budget, starting at the latest at):"
    for s in "${PLAN[@]}"; do
        printf '  %-16s %4ss  (at %ss)\n' "${s%%:*}" "${s#*:}" "$t"
        t=$((t + ${s#*:}))
    done
    echo "  total ${t}s of ${LIMIT}s"
}

# ctest_strict DIR MAYSKIP CTEST-ARGS...: ctest in DIR; fails when ctest does, when no test
# ran, or when any test was skipped or not run whose name MAYSKIP (an ERE; '' = none) does
# not match. ctest counts exit 77 (SKIP_RETURN_CODE) as passed, so its status alone
# would let a GPU test that saw no device pass.
ctest_strict() {
    local dir=$1 mayskip=$2 log rc bad
    shift 2
    log=$(mktemp)
    (cd "$dir" && ctest "$@") 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if ! grep -qE 'tests passed, [0-9]+ tests? failed out of [1-9]' "$log"; then
        echo "ctest_strict: FAIL: no test ran"
        [ "$rc" -ne 0 ] || rc=1
    fi
    bad=$(grep -E '\*\*\*(Skipped|Not Run)|\((Skipped|Not Run)\)' "$log" | grep -E 'Test +#' || true)
    if [ -n "$mayskip" ]; then bad=$(grep -vE "$mayskip" <<<"$bad" || true); fi
    rm -f "$log"
    if [ -n "$bad" ]; then
        echo "ctest_strict: FAIL: skipped or not run (no device seen, or not built):"
        echo "$bad"
        return 1
    fi
    return "$rc"
}

case "${1:-}" in
--plan)
    print_plan
    [ "$(plan_total)" -le "$LIMIT" ] || { echo "the plan is past ${LIMIT}s"; exit 1; }
    exit 0 ;;
--ctest-strict) shift; ctest_strict "$@"; exit $? ;;
"") ;;
*) echo "usage: $0 [--plan | --ctest-strict DIR MAYSKIP CTEST-ARGS...]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/device-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$(date +%s)
DEADLINE=$((T0 + LIMIT * SCALE))
FAILED=()
NOTRUN=()
say() { echo "[$(($(date +%s) - T0))s] $*"; }
left() { echo $((DEADLINE - $(date +%s))); }
# step NAME SECONDS LOG CMD...: runs CMD with a timeout (SECONDS, cut to the time left before
# the deadline, less the kill grace), its output appended to LOG ("-" = this log), records a
# failure, never exits; returns CMD's status
step() {
    local name=$1 secs=$2 log=$3
    shift 3
    local l=$(($(left) - 5))
    [ "$secs" -le "$l" ] || secs=$l
    if [ "$secs" -lt 5 ]; then
        FAILED+=("$name (no time left)")
        say "!! $name: no time left before the ${LIMIT}s deadline"
        return 124
    fi
    say "== $name (timeout ${secs}s$([ "$log" != - ] && echo ", output in ${log#$OUT/}"))"
    local t=$(date +%s) rc
    if [ "$log" = - ]; then
        timeout --kill-after=5 "$secs" "$@"
    else
        timeout --kill-after=5 "$secs" "$@" >>"$log" 2>&1
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
    say "== summary: $((${#FAILED[@]})) failed step(s), $((${#NOTRUN[@]})) not run"
    for f in "${FAILED[@]}"; do echo "   FAILED: $f"; done
    for f in "${NOTRUN[@]}"; do echo "   NOT RUN: $f"; done
    nvidia-smi --query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv 2>/dev/null >>"$OUT/env.log"
    [ ${#FAILED[@]} -eq 0 ] && exit 0 || exit 1
}
fatal() { # a step later ones depend on failed
    FAILED+=("$1")
    say "!! $1: cannot go on"
    finish
}
print_plan
[ "$SCALE" = 1 ] || say "SAPO_GPU_BUDGET_SCALE=$SCALE: budgets and deadline x$SCALE (a rehearsal)"
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
    if command -v dpkg >/dev/null && [ "${SAPO_GPU_UNPACK:-}" != ar ]; then
        dpkg -x "$f" "$P" || fatal "dpkg -x $f"
    else # Python, for an image without dpkg (SAPO_GPU_UNPACK=ar forces it: a rehearsal): tar
        # cannot tell data.tar.xz's compression on a pipe, and xz itself may be missing
        python3 - "$f" "$P" <<'PY' || fatal "unpacking $f"
import io, sys, tarfile
deb, dest = sys.argv[1], sys.argv[2]
with open(deb, "rb") as fh:
    assert fh.read(8) == b"!<arch>\n", "not an ar archive"
    while True:
        head = fh.read(60)
        if len(head) < 60:
            sys.exit(deb + ": no data.tar member")
        name, size = head[:16].decode().strip().rstrip("/"), int(head[48:58])
        body = fh.read(size)
        fh.read(size % 2)
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as t:
                # Debian's links may be absolute: Python 3.14's default filter would refuse them
                kw = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
                t.extractall(dest, **kw)
            break
PY
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
# $P/lib too: some packages (libnl-3-200, libkeyutils1, libcom-err2) still ship under /lib
export LD_LIBRARY_PATH=$L:$P/lib/x86_64-linux-gnu:$L/openmpi/lib:$L/hdf5/openmpi/lib:$OB:${LD_LIBRARY_PATH:-}
# the toolkit's libraries (cudart, cublas, nccl): the build links them without a run path, and
# the machine's loader may not know the toolkit (found by scripts/device/rehearse.sh)
CT=$(cd "$(dirname "$NVCC")/.." && pwd -P)
for d in "$CT/lib64" "$CT/lib" "$CT/targets/x86_64-linux/lib"; do
    [ -d "$d" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# one machine: shared memory only, no UCX/verbs probing, no CMA (containers refuse ptrace)
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# mpirun refuses to start without ssh or rsh on PATH, even for local ranks (which never use
# it): a bare machine has neither (found by scripts/device/rehearse.sh); PMIx's compression
# plugin, absent, warns about its help file under Debian's /usr path
export OMPI_MCA_plm_rsh_agent=/bin/false PMIX_MCA_pcompress_base_silence_warning=1
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
# the environment every step runs in, for a shell opened later (scripts/device/rehearse.sh)
{
    for v in PKG_CONFIG_PATH PKG_CONFIG_LIBDIR OPAL_PREFIX PATH LD_LIBRARY_PATH OMPI_ALLOW_RUN_AS_ROOT \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe OMPI_MCA_btl OMPI_MCA_pml \
        OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_plm_rsh_agent PMIX_MCA_pcompress_base_silence_warning \
        OPENBLAS_NUM_THREADS NCCL_ROOT; do
        [ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
    done
} >"$P/env.sh"
step "mpirun smoke test (prepare)" $(($(budget prepare) - ($(date +%s) - T0))) - mpirun -np 2 hostname ||
    fatal "mpirun from the prefix does not start"

# ---- 2. configure and build ---------------------------------------------------------------
B=$ROOT/build-gpu
mkdir -p "$B/venv/bin"
# the tests' SAPO_PYTHON: the machine's python3 (PyTorch, h5py, pytest), where CMake looks
# for the venv; a wrapper, not a symlink (a symlink would lose that venv's site-packages)
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" >"$B/venv/bin/python"
chmod +x "$B/venv/bin/python"
step configure "$(budget configure)" "$OUT/build.log" cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSAPO_CUDA=ON \
    -DCMAKE_CUDA_COMPILER="$NVCC" -DSAPO_SANITIZE_TESTS=OFF -DMPI_C_COMPILER="$U/bin/mpicc" \
    -DHDF5_C_COMPILER_EXECUTABLE="$U/bin/h5pcc" -DPKG_CONFIG_EXECUTABLE="$PKGCONF" ||
    { tail -30 "$OUT/build.log"; fatal "cmake configure"; }
grep -E 'sapo:|CUDA|NCCL|HDF5|MPI' "$OUT/build.log" | head -20
# only what the GPU steps run: sapo and the programs of tests/gpu (not the CPU tests, nor
# the emulation), with every core
TARGETS=(sapo)
for f in tests/gpu/test_*.c tests/gpu/tool_*.c; do [ -f "$f" ] && TARGETS+=("$(basename "$f" .c)"); done
TARGETS+=(${SAPO_GPU_EXTRA_TARGETS:-})
step build "$(budget build)" "$OUT/build.log" cmake --build "$B" -j"$(nproc)" --target "${TARGETS[@]}" ||
    { grep -E 'error|Error' "$OUT/build.log" | head -30; fatal "build"; }
{
    echo "# ldd sapo"
    ldd "$B/sapo"
    "$B/sapo" info | head -8
} >>"$OUT/env.log" 2>&1
if grep -q 'not found' <<<"$(ldd "$B/sapo")"; then
    ldd "$B/sapo" | grep 'not found'
    fatal "sapo links libraries that are not found"
fi
"$B/sapo" info | head -4
if [ -n "${SAPO_GPU_STOP_AFTER_BUILD:-}" ]; then # a dry run of the unpack and build, no GPU needed
    say "SAPO_GPU_STOP_AFTER_BUILD is set: stopping after the build"
    finish
fi

# ---- 3. the GPU tests: none may be skipped ------------------------------------------------
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
MAYSKIP=
[ "${NGPU:-0}" -ge 2 ] || MAYSKIP='gpu/test_gpu_nccl' # needs 2 GPUs: skipped by design on one
say "$NGPU GPU(s) listed by nvidia-smi$([ -n "$MAYSKIP" ] && echo "; $MAYSKIP may skip")"
step gpu-tests "$(budget gpu-tests)" "$OUT/ctest-gpu.log" bash "$SELF" --ctest-strict "$B" "$MAYSKIP" \
    -L gpu -j4 --output-on-failure --timeout 80
grep -E 'Test +#|tests passed|max \||greedy row|grad norm|AdamW|vs |FAIL|skipped' "$OUT/ctest-gpu.log" | head -60
# a fault inside a kernel surfaces at the next sync, under another kernel's name: again with
# every launch synchronous, and checked after it ran under its own name (SAPO_CUDA_SYNC=1)
echo "# CUDA_LAUNCH_BLOCKING=1 SAPO_CUDA_SYNC=1" >>"$OUT/ctest-gpu.log"
step parity-blocking "$(budget parity-blocking)" "$OUT/ctest-gpu.log" env CUDA_LAUNCH_BLOCKING=1 SAPO_CUDA_SYNC=1 \
    bash "$SELF" --ctest-strict "$B" '' -R '^gpu/test_gpu_(parity|llama_parity)$' --output-on-failure --timeout 35

# ---- 4. compute-sanitizer on the layer test -----------------------------------------------------
SAN=$(command -v compute-sanitizer || true)
for c in "$(dirname "$NVCC")/compute-sanitizer" /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [ -n "$SAN" ] || { [ -x "$c" ] && SAN=$c; }
done
for tool in memcheck racecheck; do
    if [ -z "$SAN" ]; then
        NOTRUN+=("$tool: no compute-sanitizer in this toolkit")
        continue
    fi
    echo "# compute-sanitizer --tool $tool" >>"$OUT/sanitizer.log"
    step "$tool" "$(budget $tool)" "$OUT/sanitizer.log" env SAPO_BIN="$B/sapo" SAPO_BUILD_DIR="$B" \
        SAPO_SOURCE_DIR="$ROOT" "$SAN" --tool "$tool" --error-exitcode 99 "$B/tests/test_gpu_layers"
    grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|Error|Hazard' "$OUT/sanitizer.log" | tail -4
done

# ---- 5. short benchmarks on the time left: CUDA against CPU ----------------------------------
export SAPO_PYTHON=$(command -v python3)
# soft NAME SECONDS CMD...: a benchmark: running out of time is an outcome, not a failure
soft() {
    local name=$1 secs=$2 rc
    shift 2
    local l=$(($(left) - 10))
    [ "$secs" -le "$l" ] || secs=$l
    if [ "$secs" -lt 10 ]; then NOTRUN+=("$name: no time left"); return; fi
    say "== $name (timeout ${secs}s, output in bench.log)"
    echo "# $name" >>"$OUT/bench.log"
    timeout --kill-after=5 "$secs" "$@" >>"$OUT/bench.log" 2>&1
    rc=$?
    case $rc in
    0) say "   done" ;;
    124) say "   stopped at its timeout (an outcome: see bench.log)" ;;
    *) FAILED+=("$name (rc $rc)"); say "!! $name failed with rc $rc" ;;
    esac
}
BT=$(( $(left) - 10 ))
say "== bench: ${BT}s left for the benchmarks"
for be in cuda cpu; do # the byte-level GPT: node-rounds of experiments/quick.ini, ours only
    soft "bench round quick, model.backend=$be" $((BT * 15 / 100)) "$B/sapo" bench round --config quick \
        --rounds 5 --warmup-rounds 1 --no-torch "model.backend=$be"
done
soft "bench model --backend cuda (L4 H4 C128)" $((BT * 15 / 100)) "$B/sapo" bench model --backend cuda \
    --size 4,4,128 --repeats 2 --mode fast
soft "bench model --backend cpu (L4 H4 C128)" $((BT * 15 / 100)) "$B/sapo" bench model --backend cpu \
    --size 4,4,128 --repeats 2 --mode fast --no-torch
for be in cuda cpu; do # the paper's node-round, on what is left (a timeout here is an outcome)
    soft "bench round paper, model.backend=$be" $(($(left) / 2 - 10)) "$B/sapo" bench round --config paper \
        --rounds 2 --warmup-rounds 1 --no-torch "model.backend=$be"
done
# SmolLM2 node-rounds need its weights (scripts/get-model.sh prepares them, downloading: not
# here, without a network; not carried either: 270 MB), so only where they already are
d=
for m in "$B/models/smollm2-135m-instruct" "$ROOT/build/models/smollm2-135m-instruct"; do
    [ -z "$d" ] && [ -f "$m/config.json" ] && d=$m
done
if [ -n "$d" ]; then
    for be in cuda cpu; do
        soft "bench round smollm2, model.backend=$be" $(($(left) / 2 - 10)) "$B/sapo" bench round \
            --config experiments/smollm2/4L0E.ini --rounds 1 --warmup-rounds 0 --no-torch "model.hf_dir=$d" "model.backend=$be"
    done
else
    NOTRUN+=("SmolLM2 node-rounds: no weights on this machine")
fi
grep -vE '^# sgemm +[0-9]' "$OUT/bench.log" | grep -E '^#|total|train|gen' | head -30
finish
