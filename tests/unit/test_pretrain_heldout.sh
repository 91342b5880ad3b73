# `sapo pretrain` and the held-out set (issue 35): every draw that is a held-out question is
# counted (CKPT.json held_out_drawn, and a line), kept when tasks.exclude_eval is off (the
# draws, so the checkpoint, equal a warm-up that never looked: run.eval_questions = 0) and
# drawn again when it is on (another checkpoint); pretrain.tasks narrows the demonstrations to
# a subset of tasks.names (a specialist) while the held-out set and the pass@1 table stay
# tasks.names'; a task outside tasks.names is one line and exit 2.
set -u
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
PY=${SAPO_PYTHON:-python3}
SMALL=(model.n_layer=1 model.d_model=16 model.n_head=2 model.n_ctx=256 tasks.preset=tiny gen.max_new_tokens=32
       tasks.names=basic_arithmetic,calendar_arithmetic pretrain.steps=12 pretrain.batch=16 run.eval_questions=64)
json() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

EXPECT_ONE_LINE=1
expect 2 "sapo pretrain: config error: pretrain.tasks: bf is not in tasks.names \(basic_arithmetic,calendar_arithmetic\)" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.tasks=bf --out "$TMP/x.ckpt" --quiet
expect 2 "sapo pretrain: config error: pretrain.tasks: .*no_such_task" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.tasks=no_such_task --out "$TMP/x.ckpt" --quiet
[ ! -e "$TMP/x.ckpt" ] || fail "a refused warm-up wrote a checkpoint"
EXPECT_ONE_LINE=0

expect 0 "warm-up demonstrations: [1-9][0-9]* of 192 were questions of the held-out set \(kept: tasks.exclude_eval is off\)" \
    "$SAPO" pretrain "${SMALL[@]}" --out "$TMP/kept.ckpt" --quiet
expect 0 "warm-up demonstrations: [1-9][0-9]* of 192 were questions of the held-out set \(each drawn again: tasks.exclude_eval\)" \
    "$SAPO" pretrain "${SMALL[@]}" tasks.exclude_eval=true --out "$TMP/excl.ckpt" --quiet
expect 0 "warm-up demonstrations: 0 of 192 were questions of the held-out set \(no held-out set: run.eval_questions = 0\)" \
    "$SAPO" pretrain "${SMALL[@]}" run.eval_questions=0 --out "$TMP/none.ckpt" --quiet
cmp -s "$TMP/kept.ckpt" "$TMP/none.ckpt" || fail "counting the held-out draws changed the warm-up (exclusion off)"
cmp -s "$TMP/kept.ckpt" "$TMP/excl.ckpt" && fail "tasks.exclude_eval drew held-out questions again, but the checkpoint is the same"
[ "$(json "$TMP/kept.ckpt.json" "d['held_out_drawn'] > 0 and d['demonstrations'] == 192 and not d['exclude_eval'] and sum(d['held_out_drawn_by_task'].values()) == d['held_out_drawn']")" = True ] \
    || fail "kept.ckpt.json: $(cat "$TMP/kept.ckpt.json")"
[ "$(json "$TMP/excl.ckpt.json" "d['exclude_eval'] and d['eval_questions'] == 64 and len(d['eval_digest']) == 16")" = True ] \
    || fail "excl.ckpt.json: $(cat "$TMP/excl.ckpt.json")"

# a specialist: only calendar_arithmetic demonstrated, both tasks evaluated
expect 0 "wrote $TMP/spec.ckpt and $TMP/spec.ckpt.json" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.tasks=calendar_arithmetic --out "$TMP/spec.ckpt" --quiet
[ "$(json "$TMP/spec.ckpt.json" "d['demonstrated_tasks'] == ['calendar_arithmetic'] and sorted(d['pass1_by_task']) == ['basic_arithmetic', 'calendar_arithmetic'] and sorted(d['format_rate_by_task']) == sorted(d['pass1_by_task'])")" = True ] \
    || fail "spec.ckpt.json: $(cat "$TMP/spec.ckpt.json")"
cmp -s "$TMP/kept.ckpt" "$TMP/spec.ckpt" && fail "pretrain.tasks changed nothing"

[ "$fails" -eq 0 ] && echo "all pretrain held-out checks passed" || echo "$fails failures"
[ "$fails" -eq 0 ]
