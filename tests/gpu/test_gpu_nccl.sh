#!/usr/bin/env bash
# NCCL's all-gather against MPI's (tests/gpu/tool_gpu_nccl.c) on max(2, the GPUs visible)
# ranks: on one rank there would be nothing to compare. With one GPU NCCL refuses two ranks
# (one GPU per rank), so the program reports skipped (77) with the reason; so it does in a
# build without NCCL. SAPO_NCCL_RANKS overrides the rank count. SAPO_NCCL_TIMEOUT (default
# 30 s) bounds NCCL's start; past it every rank falls back (and the program skips).
set -uo pipefail
: "${SAPO_BUILD_DIR:?SAPO_BUILD_DIR must name the build directory}"
TOOL=$SAPO_BUILD_DIR/tests/tool_gpu_nccl
[ -x "$TOOL" ] || { echo "FAIL: $TOOL is not built"; exit 1; }
gpus=0
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then # set, even empty: only those GPUs
    IFS=, read -ra ids <<<"$CUDA_VISIBLE_DEVICES"
    gpus=${#ids[@]}
elif command -v nvidia-smi >/dev/null; then
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi
ranks=${SAPO_NCCL_RANKS:-$((gpus > 2 ? gpus : 2))}
echo "tool_gpu_nccl on $ranks ranks ($gpus GPUs visible)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 300 "${SAPO_MPIRUN:-mpirun}" --oversubscribe --bind-to none -np "$ranks" "$TOOL"
rc=$?
[ $rc -eq 124 ] && echo "FAIL: timed out"
# With 2+ GPUs, again with CUDA_VISIBLE_DEVICES set per rank: each rank sees one device
# (ordinal 0), yet each is a different GPU, so NCCL must be used, not declined (issue 39:
# a device-count test refused it there; swarm/node_gpu.c compares PCI bus ids).
if [ $rc -eq 0 ] && [ "$gpus" -ge 2 ] && [ -z "${CUDA_VISIBLE_DEVICES+set}" ]; then
    echo "tool_gpu_nccl on $gpus ranks, CUDA_VISIBLE_DEVICES = the rank's local rank"
    timeout 300 "${SAPO_MPIRUN:-mpirun}" --oversubscribe --bind-to none -np "$gpus" \
        bash -c 'export CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${PMI_LOCAL_RANK:-0}}}; exec "$0"' "$TOOL"
    rc=$?
    [ $rc -eq 124 ] && echo "FAIL: timed out (CUDA_VISIBLE_DEVICES per rank)"
    [ $rc -eq 77 ] && echo "FAIL: NCCL declined with one GPU visible per rank" && rc=1
fi
exit $rc
