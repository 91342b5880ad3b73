#!/usr/bin/env bash
# `sapo bench round`: one quick node-round, ours and PyTorch's, prints the four rows of the
# table with positive numbers and exits 0; a bad --config is one line on stderr and exit 2.
set -u
BIN=${SAPO_BIN:-build/sapo}
PY=${SAPO_PYTHON:-/usr/bin/python3}
fail() { echo "FAIL: $*"; exit 1; }
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "SKIP: $PY cannot import torch"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

SAPO_PYTHON=$PY "$BIN" bench round --config quick --rounds 1 --warmup-rounds 0 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { cat "$tmp/err"; fail "exit status $rc"; }
grep -q '^# sapo bench round' "$tmp/out" || fail "no header"
grep -q '^# quick  init: random' "$tmp/out" || fail "the header does not say which init was measured"
grep -q 'scorer: ' "$tmp/out" || fail "the footer does not name the torch side's scorer"
for phase in 'gen+score s' 'train s' 'total s' 'peak RSS MB'; do
    row=$(grep "^quick  *$phase " "$tmp/out") || fail "no row for '$phase'"
    # label, phase (1 or 3 words), ours -/avg/min/max, torch -/avg/min/max (no tok/s here), ratio
    set -- ${row#quick}
    shift $(( $(echo "$phase" | wc -w) ))
    [ $# -eq 9 ] || fail "row '$row': expected 9 columns, got $#"
    [ "$1 $5" = "- -" ] || fail "row '$row': a tok/s where the round has none"
    for v in "$2" "$6"; do
        awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || fail "row '$row': '$v' is not a positive number"
    done
    case "$9" in *x) awk -v v="${9%x}" 'BEGIN { exit !(v + 0 > 0) }' || fail "row '$row': bad ratio '$9'";;
                 *) fail "row '$row': ratio '$9' has no x";; esac
done
[ "$(grep -c '^quick ' "$tmp/out")" -eq 4 ] || fail "expected exactly 4 table rows"
# where the products went: a header with the sgemm peak, then generation and passes, each with
# a share of its phase in (0, 100] and, per kind, a rate and a share of the peak
grep -Eq '^# quick  matrix products per timed round \(sgemm peak here [0-9.]+ GFLOP/s' "$tmp/out" ||
    fail "no matrix-product header with the sgemm peak"
for phase in generation passes; do
    line=$(grep -E "^# quick    $phase " "$tmp/out") || fail "no matrix-product line for $phase"
    share=$(echo "$line" | sed -nE 's/.* s = *([0-9.]+)% of (gen\+score|train):.*/\1/p')
    awk -v v="$share" 'BEGIN { exit !(v + 0 > 0 && v + 0 <= 100) }' || fail "$phase: share '$share' not in (0, 100]: $line"
    for kind in linear attention; do
        echo "$line" | grep -Eq "$kind [0-9.]+ s, [0-9.]+ GFLOP/s = [0-9]+% of peak, [0-9]+ calls" ||
            fail "$phase: no '$kind' figures: $line"
    done
    rate=$(echo "$line" | sed -nE 's/.*linear [0-9.]+ s, ([0-9.]+) GFLOP\/s.*/\1/p')
    awk -v v="$rate" 'BEGIN { exit !(v + 0 > 0) }' || fail "$phase: linear products at '$rate' GFLOP/s"
done

"$BIN" bench round --config no-such-config >"$tmp/out2" 2>"$tmp/err2"
rc=$?
[ $rc -ne 0 ] || fail "a bad --config exited 0"
[ "$(wc -l <"$tmp/err2")" -eq 1 ] || { cat "$tmp/err2"; fail "a bad --config should give one line on stderr"; }
grep -q "^sapo bench round: --config 'no-such-config'" "$tmp/err2" || fail "unexpected message: $(cat "$tmp/err2")"
[ ! -s "$tmp/out2" ] || fail "a bad --config printed on stdout"
echo "PASS"
