#!/usr/bin/env bash
# scripts/device/run-on-gpu.sh, the one command of a GPU run (no GPU needed here):
# - `--plan` prints the steps' budgets; their sum (and the printed total) stays within the
#   480 s the script must finish in, and the plan names the GPU steps in order;
# - its gpu step (`--ctest-strict DIR MAYSKIP ARGS...`, real ctest on a tiny CMake project)
#   fails when a test is skipped (exit 77, which ctest counts as passed), not run, or when no
#   test ran; passes when every test passed, or when only MAYSKIP's tests skipped.
set -u
SRC=${SAPO_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
S=$SRC/scripts/device/run-on-gpu.sh
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the plan
bash "$S" --plan >"$tmp/plan" 2>&1 || { cat "$tmp/plan"; fail "--plan exited non-zero"; }
cat "$tmp/plan"
sum=$(awk '$1 != "total" && $2 ~ /^[0-9]+s$/ { sub(/s$/, "", $2); t += $2 } END { print t + 0 }' "$tmp/plan")
total=$(sed -n 's/^ *total \([0-9]*\)s of 480s$/\1/p' "$tmp/plan")
[ -n "$total" ] || fail "no 'total Ns of 480s' line"
[ "$sum" -eq "$total" ] || fail "the budgets sum to ${sum}s, the plan says ${total}s"
[ "$sum" -le 480 ] || fail "the plan takes ${sum}s, past 480s"
order=$(awk '$1 != "total" && $2 ~ /^[0-9]+s$/ { printf "%s ", $1 }' "$tmp/plan")
case "$order" in
*build*gpu-tests*parity-blocking*memcheck*racecheck*bench*) ;;
*) fail "steps out of order: $order" ;;
esac

# ---- the gpu step's verdict on real ctest output
mkdir -p "$tmp/p"
cat >"$tmp/p/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(fake NONE)
enable_testing()
add_test(NAME gpu/test_ok COMMAND sh -c "echo ok")
add_test(NAME gpu/test_nodevice COMMAND sh -c "echo 'skipped: no GPU is visible'; exit 77")
add_test(NAME gpu/test_missing COMMAND /nonexistent/test_missing)
set_tests_properties(gpu/test_ok gpu/test_nodevice gpu/test_missing PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
EOF
cmake -S "$tmp/p" -B "$tmp/b" >"$tmp/cfg.log" 2>&1 || { cat "$tmp/cfg.log"; fail "configure of the fake project"; }

strict() { # expected-status name args...: runs --ctest-strict, checks pass (0) or fail (1)
    local want=$1 what=$2 rc
    shift 2
    bash "$S" --ctest-strict "$tmp/b" "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$want" = 0 ] && [ $rc -ne 0 ]; then cat "$tmp/out"; fail "$what: expected a pass, got rc $rc"; fi
    if [ "$want" = 1 ] && [ $rc -eq 0 ]; then cat "$tmp/out"; fail "$what: expected a failure, got rc 0"; fi
    echo "ok: $what (rc $rc)"
}
strict 0 "all passed" '' -R '^gpu/test_ok$'
strict 1 "a test skipped (exit 77, no device)" '' -R '^gpu/test_(ok|nodevice)$'
grep -q 'gpu/test_nodevice' "$tmp/out" || fail "the failure does not name the skipped test"
strict 0 "the skipped test is MAYSKIP" 'gpu/test_nodevice' -R '^gpu/test_(ok|nodevice)$'
strict 1 "a test not run (no executable)" 'gpu/test_nodevice' -L gpu
strict 1 "no test ran" '' -R '^nothing$'
echo "PASS"
