#!/usr/bin/env bash
# usage: scripts/warmup_ckpt.sh SAPO CONFIG.ini
# The warm-up checkpoint of CONFIG (`sapo pretrain CONFIG`), cached beside the binary under
# warmup/ and keyed by the config and the binary, so a second call reuses it: pretrains when
# it is missing, then prints its path on stdout (progress lines go to stderr). Used by
# scripts/demo.sh and scripts/bench/wide_swarm.sh.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 SAPO CONFIG.ini" >&2; exit 2; }
SAPO=$1 CONFIG=$2
dir=$(dirname "$SAPO")/warmup
key=$(cat "$CONFIG" "$SAPO" | sha256sum | cut -c1-12)
ckpt="$dir/$(basename "$CONFIG" .ini)-$key.ckpt"
if [ ! -f "$ckpt" ]; then
  mkdir -p "$dir"
  echo "== warm-up: sapo pretrain $CONFIG (cached as $ckpt)" >&2
  "$SAPO" pretrain "$CONFIG" --out "$ckpt" >&2
else
  echo "== warm-up: cached $ckpt" >&2
fi
echo "$ckpt"
