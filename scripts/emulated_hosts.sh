#!/usr/bin/env bash
# usage: scripts/emulated_hosts.sh up | down | status | run HOST CMD... | mpirun [--slots N] MPIRUN_ARGS... | rsh ADDRESS CMD...
# Two emulated hosts on this machine, to run a swarm across "hosts" over TCP (docs/SWARM.md,
# "Across hosts"); needs root, `ip` and `unshare`.
#   up      makes the network namespaces hA (10.77.0.1) and hB (10.77.0.2), joined by a veth
#           pair, loopback up in each; what already exists is kept (idempotent)
#   down    removes both namespaces (and the veth pair with them); nothing to remove is fine
#   status  prints each namespace and its addresses; exit 1 unless both are up
#   run HOST CMD...   runs CMD "on" HOST (hA or hB): in its network namespace and in a UTS
#           namespace of its own whose hostname is HOST (without it both hosts are named
#           alike and Open MPI groups their ranks as one host)
#   mpirun [--slots N] ARGS...   runs `mpirun ARGS` on hA with N slots (default 4) on each
#           host, TCP only on 10.77.0.0/24, the remote daemon started on hB by `rsh` below;
#           e.g. `scripts/emulated_hosts.sh mpirun -np 8 build/sapo run experiments/quick.ini`
#   rsh ADDRESS CMD...   Open MPI's remote shell agent (plm_rsh_agent): runs CMD on the host
#           of ADDRESS (10.77.0.1 or hA: hA; 10.77.0.2 or hB: hB) through `run`
# SAPO_HOSTS_PREFIX=P (letters, digits, - or _; at most 8) names the namespaces PhA and PhB
# and the veth ends PhA/PhB instead of hA, hB and sapo-hA/sapo-hB, so that two users of the
# script (tests/mpi/test_two_hosts.sh, tests/slurm/test_two_node_slurm.sh) never share
# namespaces; the hosts' names (hA, hB) and addresses stay the same, each pair in its own
# namespaces.
# Exit 0 on success, 2 on bad input (one line on stderr), 1 when a command fails; `run`,
# `mpirun` and `rsh` exit with their command's status.
set -euo pipefail
trap 'exit 1' ERR # a failing ip command has printed its line: exit 1, not its own status
SELF=$(readlink -f "$0")
NET=10.77.0
die() { echo "emulated_hosts: $1" >&2; exit "${2:-2}"; }
PREFIX=${SAPO_HOSTS_PREFIX:-}
[[ $PREFIX =~ ^[A-Za-z0-9_-]{0,8}$ ]] || die "SAPO_HOSTS_PREFIX='$PREFIX': expected at most 8 letters, digits, - or _"
NS_hA=${PREFIX}hA NS_hB=${PREFIX}hB  # the network namespace of each host
VETH_A=${PREFIX:-sapo-}hA VETH_B=${PREFIX:-sapo-}hB
ns() { if [ "$1" = hA ]; then echo "$NS_hA"; else echo "$NS_hB"; fi; }
usage() { sed -n '2p' "$SELF" | sed 's/^# //' >&2; exit 2; }

# the host name of an address or a name; empty when unknown
host_of() {
  case "$1" in
    hA | $NET.1) echo hA ;;
    hB | $NET.2) echo hB ;;
    *) echo "" ;;
  esac
}

need_tools() {
  [ "$(id -u)" = 0 ] || die "$1 needs root (network and UTS namespaces)" 1
  command -v ip >/dev/null || die "$1 needs ip (iproute2)" 1
  command -v unshare >/dev/null || die "$1 needs unshare (util-linux)" 1
}

# (outputs are captured, never piped into grep -q: with pipefail a writer cut off by grep's
# early exit would fail the test)
has_ns() {
  local list
  list=$(ip netns list 2>/dev/null | awk '{print $1}')
  grep -qx "$1" <<<"$list"
}
has_addr() {
  local addrs
  addrs=$(ip -n "$1" -4 addr show dev "$2" 2>/dev/null)
  grep -q "inet $3/24" <<<"$addrs"
}

up() {
  need_tools up
  for h in hA hB; do has_ns "$(ns $h)" || ip netns add "$(ns $h)"; done
  if ! ip -n "$NS_hA" link show $VETH_A >/dev/null 2>&1; then
    # a half-made pair (one end left after a failed up) is removed first
    ip -n "$NS_hB" link del $VETH_B >/dev/null 2>&1 || true
    ip link del $VETH_A >/dev/null 2>&1 || true
    ip link add $VETH_A type veth peer name $VETH_B
    ip link set $VETH_A netns "$NS_hA"
    ip link set $VETH_B netns "$NS_hB"
  fi
  local i=1 dev
  for h in hA hB; do
    if [ $h = hA ]; then dev=$VETH_A; else dev=$VETH_B; fi
    has_addr "$(ns $h)" $dev $NET.$i || ip -n "$(ns $h)" addr add $NET.$i/24 dev $dev
    ip -n "$(ns $h)" link set $dev up
    ip -n "$(ns $h)" link set lo up
    i=$((i + 1))
  done
}

down() {
  need_tools down
  for h in hA hB; do
    if has_ns "$(ns $h)"; then ip netns del "$(ns $h)"; fi
  done
  ip link del $VETH_A >/dev/null 2>&1 || true
}

status() {
  local ok=0 i=1 dev
  for h in hA hB; do
    if [ $h = hA ]; then dev=$VETH_A; else dev=$VETH_B; fi
    if has_ns "$(ns $h)" && has_addr "$(ns $h)" $dev $NET.$i; then
      echo "$h: $NET.$i (up, namespace $(ns $h))"
    else
      echo "$h: down (namespace $(ns $h))"
      ok=1
    fi
    i=$((i + 1))
  done
  return $ok
}

run_on() {
  local h
  h=$(host_of "$1")
  [ -n "$h" ] || die "run: unknown host '$1' (hA, hB, $NET.1 or $NET.2)"
  shift
  [ $# -ge 1 ] || die "run: no command to run on $h"
  need_tools run
  has_ns "$(ns $h)" || die "run: host $h is not up (no namespace $(ns $h); scripts/emulated_hosts.sh up)" 1
  exec ip netns exec "$(ns $h)" unshare --uts sh -c 'hostname "$0" && exec "$@"' $h "$@"
}

# Open MPI calls the agent as `AGENT [options] HOST ORTED_COMMAND...`, the command's words
# meant for a remote shell: they are joined and given to sh, as ssh would.
rsh() {
  while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
  [ $# -ge 2 ] || die "rsh: expected ADDRESS CMD..."
  local h
  h=$(host_of "$1")
  [ -n "$h" ] || die "rsh: unknown host '$1' (hA, hB, $NET.1 or $NET.2)"
  shift
  need_tools rsh
  has_ns "$(ns $h)" || die "rsh: host $h is not up (no namespace $(ns $h); scripts/emulated_hosts.sh up)" 1
  exec ip netns exec "$(ns $h)" unshare --uts sh -c "hostname $h && exec $*"
}

mpirun_on() {
  local slots=4
  if [ "${1:-}" = --slots ]; then
    [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "mpirun: --slots: expected an integer >= 1, got '${2:-}'"
    slots=$2
    shift 2
  fi
  [ $# -ge 1 ] || die "mpirun: no arguments for mpirun (e.g. -np 8 build/sapo run CONFIG.ini)"
  run_on hA mpirun --mca plm_rsh_agent "$SELF rsh" --mca btl tcp,self \
    --mca btl_tcp_if_include $NET.0/24 --mca oob_tcp_if_include $NET.0/24 \
    --host $NET.1:$slots,$NET.2:$slots "$@"
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case "$cmd" in
  -h | --help) sed -n '2,23p' "$SELF" | sed 's/^# \{0,1\}//'; exit 0 ;;
  up) [ $# = 0 ] || die "up takes no arguments"; up ;;
  down) [ $# = 0 ] || die "down takes no arguments"; down ;;
  status) [ $# = 0 ] || die "status takes no arguments"; status ;;
  run) [ $# -ge 1 ] || die "run: expected HOST CMD..."; run_on "$@" ;;
  rsh) rsh "$@" ;;
  mpirun) mpirun_on "$@" ;;
  *) die "unknown command '$cmd' (up, down, status, run, mpirun, rsh; --help)" ;;
esac
