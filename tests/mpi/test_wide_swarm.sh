# scripts/bench/wide_swarm.sh, the width benchmark of docs/SWARM.md, on 6 ranks from a random
# init: it must run the swarm to DONE, print the estimate, the measured peak per rank and the
# host's peak, exit 0; and refuse a missing binary or NP with exit 2.
set -u
SAPO=$(readlink -f "${SAPO_BIN:-build/sapo}")
cd "${SAPO_SOURCE_DIR:-.}" || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

WIDE_INIT=random WIDE_OUT="$TMP/w" bash scripts/bench/wide_swarm.sh 6 "$SAPO" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
[ $rc = 0 ] || fail "exit status $rc, expected 0"
grep -q "^sapo run: estimated memory [0-9]* MB per rank" "$TMP/out" || fail "no estimate line"
grep -Eq "^peak private memory [1-9][0-9]* MB per rank" "$TMP/out" || fail "no measured peak per rank"
grep -Eq "^host: the ranks' private memory peaked at [1-9][0-9]* MB in all" "$TMP/out" || fail "no host peak (or none above 0 MB: the sampler saw no sapo)"
grep -q "^DONE: completed 2 rounds on 6 nodes" "$TMP/out" || fail "the run did not reach DONE"
[ -f "$TMP/w/run/run.h5" ] || fail "no run.h5 in the run directory"

bash scripts/bench/wide_swarm.sh >"$TMP/usage" 2>&1
[ $? = 2 ] || fail "no NP: expected exit 2"
grep -q "^usage:" "$TMP/usage" || fail "no NP: no usage line"
bash scripts/bench/wide_swarm.sh 4 "$TMP/no-such-sapo" >"$TMP/bad" 2>&1
[ $? = 2 ] || fail "a missing binary: expected exit 2"
grep -q "not an executable sapo" "$TMP/bad" || fail "a missing binary: no one-line error"

[ $fails = 0 ] && echo "wide swarm: all checks passed" || echo "wide swarm: $fails failures"
[ $fails = 0 ]
