#!/usr/bin/env bash
# Run HERE (Debian 12, as root, no GPU): a rehearsal of scripts/device/run-on-gpu.sh on a root
# file system holding only what the bare GPU machine has, so that the real run (15 minutes of
# device time in all) does not find a missing package.
#   bash scripts/device/rehearse.sh            reuse the cached root (.rehearsal/root)
#   bash scripts/device/rehearse.sh --fresh    make the root again with debootstrap
# The root: Debian 12 "minbase" (debootstrap from deb.debian.org, or $SAPO_REHEARSE_MIRROR)
# plus cmake and python3, the GPU machine's two tools, and gcc, g++, make (and binutils, ar),
# which it is ASSUMED to have too: nvcc needs a host compiler. Nothing else: no pkg-config,
# MPI, HDF5, inih, cJSON, OpenBLAS, PCRE2 or utf8proc, which must come from .deps alone.
# /usr/local/cuda is bound in (read-only) as the machine's toolkit; the tree is copied in as
# a device run carries it (tracked and untracked, not ignored, files), with .deps.
# Inside, without a GPU, in order (any failure stops the rehearsal, exit 1):
#   1. run-on-gpu.sh with SAPO_GPU_STOP_AFTER_BUILD=1: unpack (with ar and tar, as on a machine
#      without dpkg), pkg-config checks, mpirun smoke test, configure, build (its budgets scaled by SAPO_GPU_BUDGET_SCALE: 2 cores here)
#   2. CPU-side tests from the carried packages: ctest -R on REHEARSE_TESTS (below)
#   3. the gpu step must FAIL here, every GPU test being skipped (no device)
# Its log: .rehearsal/out/ (rehearse.log, and run.log, build.log, env.log, ctest-cpu.log,
# ctest-gpu-nodevice.log).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
R=$ROOT/.rehearsal
FS=$R/root
MIRROR=${SAPO_REHEARSE_MIRROR:-http://deb.debian.org/debian}
CUDA=$(readlink -f /usr/local/cuda)
# tests/ programs to build beside the GPU targets, and the CPU-side tests to run
REHEARSE_TARGETS="test_tokenizer_iface test_h5log test_decode_check"
REHEARSE_TESTS='^(unit/test_sapo_info|unit/test_tokenizer_iface|unit/test_h5log|unit/test_decode_check|unit/test_device_plan|gpu/test_gpu_swarm)$'

[ "$(id -u)" = 0 ] || { echo "rehearse: needs root (debootstrap, chroot, mount)"; exit 1; }
[ -d "$CUDA/bin" ] || { echo "rehearse: no CUDA toolkit at /usr/local/cuda"; exit 1; }
ls .deps/*.deb >/dev/null 2>&1 || bash scripts/device/gather-debs.sh
mkdir -p "$R"
grep -qx '/.rehearsal/' .gitignore || echo '/.rehearsal/' >>.gitignore

# ---- the root, made once ----------------------------------------------------------------
# never rm -rf a root with something bound in (the host's /dev, /sys, the toolkit)
if grep -q " $FS/" /proc/mounts; then
    echo "rehearse: mounts left under $FS (an interrupted run?); umount them first:"
    grep " $FS/" /proc/mounts | cut -d' ' -f2
    exit 1
fi
if [ "${1:-}" = --fresh ]; then rm -rf "$FS"; fi
if [ ! -f "$FS/.sapo-rehearsal-root" ]; then
    command -v debootstrap >/dev/null || { echo "rehearse: apt-get install debootstrap first"; exit 1; }
    rm -rf "$FS.tmp"
    echo "rehearse: debootstrap bookworm (minbase + cmake python3 gcc g++ make) from $MIRROR"
    if ! debootstrap --variant=minbase --include=cmake,python3,gcc,g++,make bookworm "$FS.tmp" "$MIRROR" \
        >"$R/debootstrap.log" 2>&1; then
        tail -5 "$R/debootstrap.log"
        echo "rehearse: debootstrap failed (is $MIRROR reachable?); see $R/debootstrap.log"
        exit 1
    fi
    date -u >"$FS.tmp/.sapo-rehearsal-root"
    rm -rf "$FS" # a root left without its stamp (an interrupted run)
    mv "$FS.tmp" "$FS"
fi
for t in pkg-config pkgconf mpicc h5pcc; do # the root must lack what the machine lacks
    [ ! -e "$FS/usr/bin/$t" ] || { echo "rehearse: the root has /usr/bin/$t: use --fresh"; exit 1; }
done

# ---- a clean copy of the tree, the packages and the toolkit --------------------------------
rm -rf "$FS/src" "$FS/out" "$FS/opt/sapo-deps"
mkdir -p "$FS/src" "$FS/out" "$FS$CUDA"
git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$FS/src"
tar -cf - .deps | tar -xf - -C "$FS/src"
ln -sfn "$CUDA" "$FS/usr/local/cuda"
MOUNTS=()
cleanup() {
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}"; done
}
trap cleanup EXIT
bind() { # bind SRC DEST [ro]
    mount --bind "$1" "$2"
    MOUNTS+=("$2")
    [ "${3:-}" != ro ] || mount -o remount,bind,ro "$2"
}
bind "$CUDA" "$FS$CUDA" ro
bind /proc "$FS/proc"
bind /dev "$FS/dev"
bind /sys "$FS/sys" ro # hwloc reads the CPU topology there, as on the machine
if mountpoint -q /dev/shm; then bind /dev/shm "$FS/dev/shm"; fi # Open MPI shared memory

# ---- the rehearsal, inside ---------------------------------------------------------------
OUTDIR=$R/out
rm -rf "$OUTDIR"
ln -sfn root/out "$OUTDIR"
echo "rehearse: running in $FS (log: .rehearsal/out/rehearse.log)"
set +e
chroot "$FS" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    OUT=/out SAPO_GPU_STOP_AFTER_BUILD=1 SAPO_GPU_UNPACK=ar SAPO_GPU_BUDGET_SCALE="${SAPO_GPU_BUDGET_SCALE:-20}" \
    SAPO_GPU_EXTRA_TARGETS="$REHEARSE_TARGETS" REHEARSE_TESTS="$REHEARSE_TESTS" \
    /bin/bash -c '
set -uo pipefail
cd /src
exec > >(tee -a /out/rehearse.log) 2>&1
fail() { echo "REHEARSAL FAILED: $*"; exit 1; }
echo "== 1. run-on-gpu.sh up to the build (SAPO_GPU_STOP_AFTER_BUILD=1)"
bash scripts/device/run-on-gpu.sh || fail "run-on-gpu.sh (see /out/run.log, /out/build.log)"
. /opt/sapo-deps/env.sh
echo "== 2. CPU-side tests from the carried packages: $REHEARSE_TESTS"
(cd build-gpu && SAPO_TEST_GPU_BACKEND=cpu ctest -R "$REHEARSE_TESTS" --output-on-failure --timeout 1200) ||
    fail "CPU-side tests"
cp build-gpu/Testing/Temporary/LastTest.log /out/ctest-cpu.log
echo "== 3. the gpu step without a GPU: it must fail"
bash scripts/device/run-on-gpu.sh --ctest-strict build-gpu "" -L gpu --timeout 120 >/out/ctest-gpu-nodevice.log 2>&1 &&
    fail "the gpu step passed with no GPU (see /out/ctest-gpu-nodevice.log)"
grep -E "Skipped|Not Run" /out/ctest-gpu-nodevice.log | head -8
echo "   the gpu step failed, as it must with no device"
echo "REHEARSAL PASSED"
'
rc=$?
exit $rc
