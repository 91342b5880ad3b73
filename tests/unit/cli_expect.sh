# Sourced by the CLI's shell tests (test_cli_options.sh, test_tasks_cli.sh,
# test_pretrain_budget.sh): SAPO (the binary), TMP (removed at exit), fail() counting into
# fails, expect() and finish().
SAPO=${SAPO_BIN:-build/sapo}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect RC PATTERN CMD...: CMD exits with RC and its stderr+stdout match PATTERN (grep -E);
# with EXPECT_ONE_LINE=1, an exit 2 must also be a single line.
expect() {
  local rc=$1 pat=$2
  shift 2
  local out got
  out=$("$@" 2>&1)
  got=$?
  if [ "$got" != "$rc" ]; then fail "'$*' exited $got, expected $rc; output: $out"; return; fi
  if ! grep -Eq -- "$pat" <<<"$out"; then fail "'$*' output lacks /$pat/: $out"; return; fi
  if [ "${EXPECT_ONE_LINE:-0}" = 1 ] && [ "$rc" = 2 ] && [ "$(wc -l <<<"$out")" != 1 ]; then
    fail "'$*' printed more than one line: $out"
    return
  fi
  echo "ok: $* -> $rc /$pat/"
}
