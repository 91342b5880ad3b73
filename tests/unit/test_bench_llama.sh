#!/usr/bin/env bash
# `sapo bench model --family llama` (src/bench/bench_llama.c): a quick run on two tiny random
# shapes without the PyTorch side prints, per shape, the three table rows (train, generate,
# rss_mb) with 11 columns (harness bench_row), positive numbers on our side and '-' on torch's, the memory
# estimate line, and leaves no temporary directory; --gen-together decodes the prompts' rows in
# one batch (more prompts than training groups, so the memory estimate says its capacity was
# raised); a bad --size, --prompt, --hf-dir or --family
# is one line on stderr and exit 2; --family byte_gpt still runs the byte-level benchmark.
set -u
BIN=${SAPO_BIN:-build/sapo}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/t"

positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }

TMPDIR=$tmp/t "$BIN" bench model --family llama --size tiny --size 2,32,4,2,48,300 --groups 2 --completions 3 \
    --prompt 8 --new 6 --ctx 32 --gen-prompts 2 --warmup 1 --repeats 2 --no-torch >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "exit status $rc"; }
grep -q '^# sapo bench model --family llama: cpu, 1 thread(s)' "$tmp/out" || fail "no header"
hdr=$(grep '^# model ' "$tmp/out") || fail "no column header"
set -- ${hdr#\#}
[ "$1 $2 $3" = "model phase tok/s" ] || fail "column header '$hdr'"
[ "${!#}" = "torch" ] || fail "column header '$hdr' does not end with 'x torch'"
for shape in tiny 2,32,4,2,48,300; do
    for phase in train generate rss_mb; do
        row=$(grep "^$shape  *$phase " "$tmp/out") || fail "no '$phase' row for $shape"
        set -- $row
        [ $# -eq 11 ] || fail "row '$row': expected 11 columns, got $#"
        if [ "$phase" = rss_mb ]; then
            [ "$3" = "-" ] || fail "row '$row': '$3' where rss_mb has no rate"
            positive "$4" || fail "row '$row': '$4' is not a positive number"
            cols="$5 $6"
        else
            positive "$3" || fail "row '$row': '$3' is not a positive number"
            for v in "$4" "$5" "$6"; do positive "$v" || fail "row '$row': '$v' is not a positive time"; done
            awk -v a="$4" -v lo="$5" -v hi="$6" 'BEGIN { exit !(lo <= a && a <= hi) }' ||
                fail "row '$row': avg not within min..max"
            cols=""
        fi
        for v in $cols "$7" "$8" "$9" "${10}" "${11}"; do
            [ "$v" = "-" ] || fail "row '$row': '$v' where --no-torch should leave '-'"
        done
    done
    grep -q "^# $shape: model_memory_bytes [0-9]* MB .* vs peak RSS [0-9]* MB .* fits in 3 GiB$" "$tmp/out" ||
        fail "no memory estimate line for $shape"
done
[ "$(grep -c '^[^#]' "$tmp/out")" -eq 6 ] || fail "expected exactly 6 table rows"
[ -z "$(ls -A "$tmp/t")" ] || fail "left behind: $(ls -A "$tmp/t")"

# --gen-together: the prompts' rows decode in one batch (capacity raised to 3 prompts x 3 rows)
TMPDIR=$tmp/t "$BIN" bench model --family llama --size tiny --groups 1 --completions 3 --prompt 8 --new 6 --ctx 32 \
    --gen-prompts 3 --gen-together --warmup 1 --repeats 1 --no-torch >"$tmp/outt" 2>"$tmp/errt" ||
    { cat "$tmp/errt"; fail "--gen-together failed"; }
grep -q '^# generate = 3 prompt(s) of 8 tokens, 3 completions each .* all rows decoded together (--gen-together' \
    "$tmp/outt" || fail "--gen-together: the header does not say the rows decode together"
row=$(grep '^tiny  *generate ' "$tmp/outt") || fail "--gen-together: no generate row"
set -- $row
positive "$3" || fail "--gen-together: row '$row': '$3' is not a positive number"
grep -q 'prompts one after another' "$tmp/out" || fail "without --gen-together the prompts go one after another"
grep -q 'raised above model_capacity_for' "$tmp/outt" ||
    fail "--gen-together: 3 prompts' 9 rows exceed the training capacity (1 prompt, 3 rows); the estimate must say raised"

bad() { # ARGS... : exit 2, one line on stderr starting with $want, nothing on stdout
    "$BIN" bench model "$@" >"$tmp/out2" 2>"$tmp/err2"
    rc=$?
    [ $rc -eq 2 ] || fail "'$*' exited $rc, want 2"
    [ "$(wc -l <"$tmp/err2")" -eq 1 ] || { cat "$tmp/err2"; fail "'$*' should give one line on stderr"; }
    grep -q "^$want" "$tmp/err2" || fail "'$*': unexpected message: $(cat "$tmp/err2")"
    [ ! -s "$tmp/out2" ] || fail "'$*' printed on stdout"
}
want="sapo bench model --family llama: --size '3,3': expected qwen10m, smollm2, tiny or L,C,H,KV,F,V"
bad --family llama --size 3,3 --no-torch
want="sapo bench model --family llama: --size 'huge'"
bad --family llama --size tiny --size huge --no-torch
want="sapo bench model --family llama: --prompt 30 + --new 6 exceeds --ctx 32"
bad --family llama --size tiny --prompt 30 --new 6 --ctx 32 --no-torch
want="sapo bench model --family llama: --hf-dir '$tmp/none': no readable config.json there"
bad --family llama --size smollm2 --hf-dir "$tmp/none" --no-torch
want="sapo bench model: --family 'gpt5': expected byte_gpt or llama"
bad --family gpt5 --no-torch

# the byte-level benchmark is still the default, and --family byte_gpt names it
"$BIN" bench model --family byte_gpt --size 1,2,16 --ctx 8 --batch 2 --prompt 2 --new 4 --warmup 0 --repeats 1 \
    --mode fast --no-torch >"$tmp/out3" 2>"$tmp/err3" || { cat "$tmp/err3"; fail "--family byte_gpt failed"; }
grep -q '^# sapo bench model: backend cpu' "$tmp/out3" || fail "--family byte_gpt did not run the byte-level bench"
grep -q '^L1 H2 C16  *train ' "$tmp/out3" || fail "--family byte_gpt printed no train row"
echo "PASS"
