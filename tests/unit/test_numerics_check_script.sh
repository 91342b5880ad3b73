# scripts/numerics_check.sh's input checks (its study-level verdict is analysis/numerics_check.py's,
# tested in tests/analysis/test_numerics_check.py): --help, a missing binary, bad numbers and a
# single seed each end in one line and exit 2 before any run starts; nothing is written.
set -u
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
S=${SAPO_SOURCE_DIR:-.}/scripts/numerics_check.sh
D=$TMP/runs
expect 0 "usage: scripts/numerics_check.sh" bash "$S" --help
EXPECT_ONE_LINE=1
expect 2 "usage: scripts/numerics_check.sh" bash "$S" "$SAPO"
expect 2 "numerics_check: $TMP/nope: not an executable" bash "$S" --dir "$D" "$TMP/nope" "$SAPO"
expect 2 "numerics_check: --rounds: expected an integer >= 1, got 'x'" bash "$S" --dir "$D" --rounds x "$SAPO" "$SAPO"
expect 2 "numerics_check: --ranks: expected an integer >= 1, got '0'" bash "$S" --dir "$D" --ranks 0 "$SAPO" "$SAPO"
expect 2 "numerics_check: --seeds: a paired interval needs two or more seeds" bash "$S" --dir "$D" --seeds 4 "$SAPO" "$SAPO"
expect 2 "numerics_check: --seeds: expected integers, got 'a'" bash "$S" --dir "$D" --seeds "1 a" "$SAPO" "$SAPO"
expect 2 "numerics_check: --warmup $TMP/w.ckpt: no such checkpoint" bash "$S" --dir "$D" --warmup "$TMP/w.ckpt" "$SAPO" "$SAPO"
expect 2 "numerics_check: unknown option --bogus" bash "$S" --bogus "$SAPO" "$SAPO"
[ ! -e "$D" ] || fail "a refused check created $D"
[ "$fails" -eq 0 ] && echo "all numerics_check.sh input checks passed" || echo "$fails failures"
[ "$fails" -eq 0 ]
