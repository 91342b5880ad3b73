# `sapo pretrain` runs the budget check before any work: it prints the per-task table and, when
# a task's reference answers (with <answer></answer>) exceed gen.max_new_tokens for more than
# tasks.max_unanswerable of its items, stops with one line, exit 2, and writes no checkpoint.
# [node.K] settings are checked too (the checkpoint serves every node). Its --out folder is made
# (or found unwritable) before any training step. It trains at node 0's settings ([node.0] applied).
set -u
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"

TINY=(model.n_layer=1 model.d_model=16 model.n_head=2 model.n_ctx=128 tasks.preset=tiny
      tasks.names=basic_arithmetic,binary_matrix,propositional_logic pretrain.steps=1 pretrain.batch=2)

# tiny binary_matrix: 45.5% of the check's items are 3x3 (34 bytes with the tags) > 32
out=$("$SAPO" pretrain "${TINY[@]}" gen.max_new_tokens=32 --out "$TMP/a.ckpt" --quiet 2>"$TMP/err")
rc=$?
[ "$rc" = 2 ] || fail "binary_matrix at 32 new bytes: exit $rc, expected 2"
n=$(grep -c "config error" "$TMP/err")
[ "$n" = 1 ] || fail "expected one error line, got $n: $(cat "$TMP/err")"
grep -q "sapo pretrain: config error: budget: binary_matrix at preset tiny cannot be answered in 45.5% of its items.*tasks.max_unanswerable = 0.25.*raise gen.max_new_tokens to 34 bytes" "$TMP/err" \
    || fail "error line: $(cat "$TMP/err")"
grep -Eq "^sapo pretrain: +binary_matrix +45\.5% +34 / " <<<"$out" || fail "no binary_matrix row in the table: $out"
grep -Eq "^sapo pretrain: +propositional_logic +- +- " <<<"$out" || fail "propositional_logic must read '-': $out"
[ ! -e "$TMP/a.ckpt" ] || fail "a checkpoint was written despite the budget error"

# raising the threshold lets it through (and it trains and writes the checkpoint)
"$SAPO" pretrain "${TINY[@]}" gen.max_new_tokens=32 tasks.max_unanswerable=0.5 --out "$TMP/b.ckpt" --quiet >"$TMP/out" 2>&1 \
    || fail "threshold 0.5: exit $?: $(cat "$TMP/out")"
[ -e "$TMP/b.ckpt" ] || fail "threshold 0.5: no checkpoint"

# node 0 has room for every answer, node 1 does not: the check names node 1
cat > "$TMP/hetero.ini" <<INI
[gen]
max_new_tokens = 40
[node.1]
gen.max_new_tokens = 24
INI
"$SAPO" pretrain "$TMP/hetero.ini" "${TINY[@]}" --out "$TMP/c.ckpt" --quiet >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" = 2 ] || fail "[node.1] at 24 new bytes: exit $rc, expected 2"
grep -q "gen.max_new_tokens = 24 bytes; node 1, model.n_ctx 128" "$TMP/err" || fail "node 1 not named: $(cat "$TMP/err")"
[ "$(grep -c 'budget check, preset tiny' "$TMP/out")" = 2 ] || fail "want a table per setting: $(cat "$TMP/out")"

# --out: a missing folder is made; one that cannot be made is found before any training step
OK=(model.n_layer=1 model.d_model=16 model.n_head=2 model.n_ctx=128 tasks.preset=tiny tasks.names=basic_arithmetic
    pretrain.steps=2 pretrain.batch=2 run.eval_questions=0)
"$SAPO" pretrain "${OK[@]}" --out "$TMP/new/dir/d.ckpt" >"$TMP/out" 2>&1 || fail "--out in a new folder: exit $?: $(cat "$TMP/out")"
[ -s "$TMP/new/dir/d.ckpt" ] || fail "--out in a new folder: no checkpoint"
: > "$TMP/file"
"$SAPO" pretrain "${OK[@]}" --out "$TMP/file/sub/e.ckpt" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" = 1 ] || fail "--out under a plain file: exit $rc, expected 1"
grep -q "sapo pretrain: --out $TMP/file/sub/e.ckpt: " "$TMP/err" || fail "--out under a plain file: $(cat "$TMP/err")"
! grep -q "^step " "$TMP/out" || fail "--out under a plain file: it trained before failing: $(cat "$TMP/out")"

# the warm-up trains at node 0's settings, all of them: a [node.0] optim.grad_clip counts exactly
# as the same value set swarm-wide does (and changes the checkpoint)
W=(model.n_layer=1 model.d_model=16 model.n_head=2 model.n_ctx=128 tasks.preset=tiny tasks.names=basic_arithmetic
   pretrain.steps=3 pretrain.batch=2 run.eval_questions=0 pretrain.lr=0.01)
printf '[node.0]\noptim.grad_clip = 0.001\n' > "$TMP/node0.ini"
"$SAPO" pretrain "$TMP/node0.ini" "${W[@]}" --out "$TMP/n0.ckpt" --quiet >"$TMP/out" 2>&1 || fail "[node.0] clip: $(cat "$TMP/out")"
"$SAPO" pretrain "${W[@]}" optim.grad_clip=0.001 --out "$TMP/all.ckpt" --quiet >"$TMP/out" 2>&1 || fail "clip: $(cat "$TMP/out")"
"$SAPO" pretrain "${W[@]}" --out "$TMP/dflt.ckpt" --quiet >"$TMP/out" 2>&1 || fail "default clip: $(cat "$TMP/out")"
cmp -s "$TMP/n0.ckpt" "$TMP/all.ckpt" || fail "pretrain ignored [node.0] optim.grad_clip (checkpoints differ)"
! cmp -s "$TMP/n0.ckpt" "$TMP/dflt.ckpt" || fail "optim.grad_clip = 0.001 left the checkpoint as the default makes it"

[ "$fails" = 0 ] && echo "sapo pretrain budget check: ok"
exit "$fails"
