# `sapo pretrain`'s format-only demonstrations (issue 35): pretrain.format_share of each batch
# shows questions of pretrain.format_tasks with the answer of another question, of the same
# task (format_decoy = same_task) or of another format task (other_task); the rest demonstrate
# pretrain.tasks with their own answers. Read from --demos (every demonstration as a JSON
# line) and CKPT.json; the keys' misuse is one line and exit 2, with no checkpoint written.
set -u
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
PY=${SAPO_PYTHON:-python3}
SMALL=(model.n_layer=1 model.d_model=16 model.n_head=2 model.n_ctx=256 tasks.preset=tiny gen.max_new_tokens=32
       tasks.names=basic_arithmetic,calendar_arithmetic,fraction_simplification pretrain.steps=6 pretrain.batch=16
       run.eval_questions=12)
FMT=basic_arithmetic,fraction_simplification

EXPECT_ONE_LINE=1
expect 2 "pretrain.format_share = 0.5 needs pretrain.format_tasks" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.format_share=0.5 --out "$TMP/x.ckpt" --quiet
expect 2 "pretrain.format_tasks is set but pretrain.format_share = 0 gives no format-only demonstration" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.format_tasks=$FMT --out "$TMP/x.ckpt" --quiet
expect 2 "pretrain.format_decoy = other_task needs two or more pretrain.format_tasks" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.format_tasks=basic_arithmetic pretrain.format_share=1 \
    pretrain.format_decoy=other_task --out "$TMP/x.ckpt" --quiet
expect 2 "pretrain.format_tasks: bf is not in tasks.names" \
    "$SAPO" pretrain "${SMALL[@]}" pretrain.format_tasks=bf pretrain.format_share=1 --out "$TMP/x.ckpt" --quiet
[ ! -e "$TMP/x.ckpt" ] || fail "a refused warm-up wrote a checkpoint"
EXPECT_ONE_LINE=0

# a specialist of calendar_arithmetic with a quarter of each batch format-only on the other two
for decoy in same_task other_task; do
  expect 0 "4 of the 16 demonstrations of each step are format-only" \
      "$SAPO" pretrain "${SMALL[@]}" pretrain.tasks=calendar_arithmetic pretrain.format_tasks=$FMT \
      pretrain.format_share=0.25 pretrain.format_decoy=$decoy --out "$TMP/$decoy.ckpt" --demos "$TMP/$decoy.jsonl"
  "$PY" - "$TMP/$decoy.jsonl" "$TMP/$decoy.ckpt.json" "$decoy" <<'PY' || fail "$decoy: the demonstrations are not what the keys ask"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ck = json.load(open(sys.argv[2]))
other = sys.argv[3] == "other_task"
fmt = {"basic_arithmetic", "fraction_simplification"}
assert len(rows) == 6 * 16 == ck["demonstrations"], (len(rows), ck["demonstrations"])
steps = {}
for r in rows:
    steps.setdefault(r["step"], []).append(r)
mismatched = 0
for step, rs in steps.items():
    real, shown = rs[:12], rs[12:]
    for r in real:  # the specialty, with its own answer
        assert r["task"] == "calendar_arithmetic" == r["shown_task"], r
        assert r["completion"] == "<answer>%s</answer>" % r["answer"], r
    for r in shown:  # format-only: a format task, another question's answer
        assert r["task"] in fmt and r["shown_task"] in fmt, r
        assert (r["shown_task"] != r["task"]) == other, r
        assert r["completion"].startswith("<answer>") and r["completion"].endswith("</answer>"), r
        mismatched += r["completion"] != "<answer>%s</answer>" % r["answer"]
assert mismatched >= len(steps) * 4 // 2, mismatched  # mostly not the question's own answer
assert ck["format_only_demonstrations"] == 6 * 4 and ck["format_only_tasks"] == sorted(fmt, key=["basic_arithmetic", "fraction_simplification"].index), ck
assert ck["format_decoy"] == sys.argv[3] and ck["demonstrated_tasks"] == ["calendar_arithmetic"], ck
PY
done
cmp -s "$TMP/same_task.ckpt" "$TMP/other_task.ckpt" && fail "the decoy's task changed nothing"
# without --demos the warm-up is the same (the log only reads)
"$SAPO" pretrain "${SMALL[@]}" pretrain.tasks=calendar_arithmetic pretrain.format_tasks=$FMT pretrain.format_share=0.25 \
    pretrain.format_decoy=other_task --out "$TMP/nolog.ckpt" --quiet > /dev/null || fail "warm-up without --demos failed"
cmp -s "$TMP/other_task.ckpt" "$TMP/nolog.ckpt" || fail "--demos changed the warm-up"

[ "$fails" -eq 0 ] && echo "all pretrain format-only checks passed" || echo "$fails failures"
[ "$fails" -eq 0 ]
