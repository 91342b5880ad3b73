# `sapo tasks` error handling: unknown task / preset / subcommand, bad numbers, and a JSONL
# file to `sapo tasks score` mixing good lines with bad JSON, wrong types and missing fields;
# then `score --max-line-bytes` (bad values, an over-long line between good ones) and the
# messages for invalid UTF-8 and a lone surrogate, and U+0000 kept inside an answer.
# Each bad line must give a clear error naming its line number, every good line must still be
# scored, and the exit status must be non-zero at the end. Skips (77) the scoring part when
# no task is ported in this build.
set -u
PY=${SAPO_PYTHON:-python3}
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"

# ---- argument errors --------------------------------------------------------------------
expect 2 "usage: sapo tasks" "$SAPO" tasks
expect 2 "unknown subcommand 'frobnicate'" "$SAPO" tasks frobnicate
for sub in list gen score baseline; do expect 0 "usage: sapo tasks $sub" "$SAPO" tasks "$sub" --help; done
expect 0 "usage: sapo tasks list\|gen" "$SAPO" tasks --help
expect 2 "unknown task 'no_such_task' \(expected one of" "$SAPO" tasks gen no_such_task
expect 2 "missing TASK" "$SAPO" tasks gen
expect 2 "unknown option '--bogus'" "$SAPO" tasks gen base_conversion --bogus
expect 2 "unknown preset 'huge'" "$SAPO" tasks baseline --preset huge
expect 2 "cannot open '$TMP/absent.jsonl'" "$SAPO" tasks score "$TMP/absent.jsonl"
expect 2 "--seed 'abc': expected an integer in \\[-9223372036854775808, 9223372036854775807\\]" "$SAPO" tasks gen base_conversion --seed abc
expect 2 "--count '12x': expected an integer in \\[1, 1000000\\]" "$SAPO" tasks baseline --count 12x
expect 2 "--count '-1': expected an integer in \\[0, 9223372036854775807\\]" "$SAPO" tasks gen base_conversion --count -1
expect 2 "overflows" "$SAPO" tasks gen base_conversion --seed 9223372036854775807 --count 2
expect 0 '"presets":\["paper","small","tiny"\]' "$SAPO" tasks list --json

# ---- score: one bad line never loses the others ------------------------------------------
TASK=$("$SAPO" tasks list --json | "$PY" -c 'import json,sys; t=json.load(sys.stdin)["tasks"]; print(t[0]["name"] if t else "")')
if [ -z "$TASK" ]; then
  # Without a port every line is an error, still with its line number.
  printf '{"task":"bf","entry":{"answer":"x","metadata":{}},"answer":"x"}\nnot json\n' >"$TMP/none.jsonl"
  expect 1 "none.jsonl:1: task 'bf' is not ported" "$SAPO" tasks score "$TMP/none.jsonl"
  expect 1 "none.jsonl:2: not valid JSON" "$SAPO" tasks score "$TMP/none.jsonl"
  echo "no task ported: scoring checks skipped ($fails failures)"
  [ "$fails" -eq 0 ] && exit 77 || exit 1
fi
expect 2 "unknown preset 'huge' \(expected paper, small or tiny\)" "$SAPO" tasks gen "$TASK" --preset huge
expect 2 "--config must be a JSON object" "$SAPO" tasks gen "$TASK" --config '[1]'
"$SAPO" tasks gen "$TASK" --preset paper --seed 5 --count 2 >"$TMP/entries.jsonl" || fail "gen $TASK"

# Lines: the comment after each says what it is; blank line 9 produces no output.
"$PY" - "$TMP/entries.jsonl" "$TASK" >"$TMP/in.jsonl" <<'EOF'
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
task = sys.argv[2]
e = entries[0]
oracle = e["answer"] if e["answer"] is not None else "x"
no_meta = {k: v for k, v in e.items() if k != "metadata"}
no_answer = {k: v for k, v in e.items() if k != "answer"}
lines = [
    json.dumps({"task": task, "entry": e, "answer": oracle}),                        # 1 good
    '{"task": "' + task + '", "entry": ',                                            # 2 truncated JSON
    json.dumps({"task": "no_such_task", "entry": e, "answer": oracle}),              # 3 unknown task
    json.dumps({"task": task}),                                                      # 4 no entry
    json.dumps({"task": task, "entry": no_meta, "answer": oracle}),                  # 5 no metadata
    json.dumps({"task": task, "entry": no_answer, "answer": oracle}),                # 6 no entry.answer
    json.dumps({"task": task, "entry": e}),                                          # 7 nothing to score
    "[1, 2]",                                                                        # 8 not an object
    "   ",                                                                           # 9 blank: skipped
    json.dumps({"task": task, "entry": e, "completion": f"<answer>{oracle}</answer>"}),  # 10 good
    json.dumps({"task": task, "entry": e, "answer": 5}),                             # 11 answer not a string
    json.dumps({"task": task, "entry": e, "answer": oracle}) + " trailing",          # 12 trailing text
    json.dumps({"task": task, "entry": e, "answer": "a", "completion": "b"}),        # 13 both
    json.dumps({"entry": e, "answer": oracle}),                                      # 14 good: task from source_dataset
    json.dumps({"task": task, "entry": entries[1], "answer": None}),                 # 15 good: None scores
    json.dumps({"task": 7, "entry": e, "answer": oracle}),                           # 16 task not a string
    json.dumps({"task": task, "entry": {"answer": oracle, "metadata": []}, "answer": oracle}),  # 17 metadata not object
]
print("\n".join(lines))
EOF
"$SAPO" tasks score "$TMP/in.jsonl" >"$TMP/out.jsonl" 2>"$TMP/err.txt"
rc=$?
[ "$rc" = 1 ] || fail "score exited $rc, expected 1 (some lines bad)"
# The same through stdin, and an all-good file exits 0.
"$SAPO" tasks score - <"$TMP/in.jsonl" >"$TMP/out_stdin.jsonl" 2>/dev/null
cmp -s "$TMP/out.jsonl" "$TMP/out_stdin.jsonl" || fail "score from stdin differs from score FILE"
sed -n '1p;10p;14p;15p' "$TMP/in.jsonl" >"$TMP/good.jsonl"
expect 0 '"line":4,"score"' "$SAPO" tasks score "$TMP/good.jsonl"

"$PY" - "$TMP/out.jsonl" "$TMP/err.txt" "$TMP/in.jsonl" <<'EOF' || fails=$((fails + 1))
import json, sys
out = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if l]
err = open(sys.argv[2], encoding="utf-8").read()
by_line = {o["line"]: o for o in out}
want_error = {
    2: "not valid JSON", 3: "unknown task 'no_such_task'", 4: 'missing field "entry"',
    5: 'missing field "entry.metadata"', 6: 'missing field "entry.answer"', 7: 'missing field "completion" or "answer"',
    8: "expected a JSON object", 11: '"answer" must be a string or null', 12: "text after the JSON value",
    13: 'either "completion"', 16: '"task" must be a string', 17: '"entry.metadata" must be an object',
}
good = [1, 10, 14, 15]
problems = []
if sorted(by_line) != sorted(list(want_error) + good):
    problems.append(f"output lines {sorted(by_line)}, expected {sorted(list(want_error) + good)} (blank line 9 skipped)")
for n, frag in want_error.items():
    o = by_line.get(n, {})
    if frag not in o.get("error", ""):
        problems.append(f"line {n}: expected an error containing {frag!r}, got {o}")
    if f"in.jsonl:{n}: " not in err:
        problems.append(f"stderr does not name line {n}: {err!r}")
for n in good:
    if not isinstance(by_line.get(n, {}).get("score"), (int, float)):
        problems.append(f"good line {n} lost its score: {by_line.get(n)}")
if by_line.get(1, {}).get("score") != by_line.get(10, {}).get("score"):
    problems.append("answer X and completion <answer>X</answer> score differently")
if by_line.get(1, {}).get("score") != by_line.get(14, {}).get("score"):
    problems.append("task from metadata.source_dataset scores differently")
if "12 of 16 lines had errors (4 scored)" not in err:
    problems.append(f"summary line missing: {err[-300:]!r}")
for p in problems:
    print("FAIL:", p)
print(f"score: {len(out)} output lines, {len(want_error)} errors with line numbers, {len(good)} good lines scored")
sys.exit(1 if problems else 0)
EOF

# ---- score: --max-line-bytes, U+0000 and invalid UTF-8 ------------------------------------
expect 2 "option '--max-line-bytes' needs a value" "$SAPO" tasks score --max-line-bytes
for bad in 0 -3 abc 1073741825 12x; do
  expect 2 "--max-line-bytes '$bad': expected an integer in \\[1, 1073741824\\]" "$SAPO" tasks score --max-line-bytes "$bad" "$TMP/in.jsonl"
done
expect 0 "--max-line-bytes N" "$SAPO" tasks score --help
GOOD=$(sed -n 1p "$TMP/in.jsonl")
LIMIT=$(printf "%s" "$GOOD" | wc -c)
{ echo "$GOOD"; echo "$GOOD "; echo "$GOOD"; } >"$TMP/long.jsonl"
expect 1 "long.jsonl:2: line longer than $LIMIT bytes \(--max-line-bytes\): not parsed" \
  "$SAPO" tasks score --max-line-bytes "$LIMIT" "$TMP/long.jsonl"
"$SAPO" tasks score --max-line-bytes "$LIMIT" - <"$TMP/long.jsonl" >"$TMP/long.out" 2>/dev/null
grep -q '^{"line":1,"score":' "$TMP/long.out" && grep -q '^{"line":3,"score":' "$TMP/long.out" &&
  grep -q "^{\"line\":2,\"error\":\"line longer than $LIMIT bytes" "$TMP/long.out" ||
  fail "over-long line 2 must be an error between scored lines 1 and 3: $(cat "$TMP/long.out")"
expect 0 '"line":3,"score"' "$SAPO" tasks score --max-line-bytes "$((LIMIT + 1))" "$TMP/long.jsonl"
# The reported case: bf's "ab\u0000cd" against "ab" is len("ab")/len("ab\x00cd") = 0.4, not 1.
printf '{"task":"bf","entry":{"answer":"ab","metadata":{}},"answer":"ab\\u0000cd"}\n' >"$TMP/nul.jsonl"
if "$SAPO" tasks list --json | grep -q '"name":"bf"'; then
  expect 0 '"score":0.40000000000000002' "$SAPO" tasks score "$TMP/nul.jsonl"
fi
printf '{"task":"%s","entry":{"answer":"a\x80b","metadata":{}},"answer":"x"}\n' "$TASK" >"$TMP/utf8.jsonl"
expect 1 "utf8.jsonl:1: not valid UTF-8 \(byte 0x80 at column [0-9]+\)" "$SAPO" tasks score "$TMP/utf8.jsonl"
printf '{"task":"%s","entry":{"answer":"\\ud800","metadata":{}},"answer":"x"}\n' "$TASK" >"$TMP/sur.jsonl"
expect 1 "sur.jsonl:1: lone surrogate .uD800 at column [0-9]+: a C string cannot hold it" "$SAPO" tasks score "$TMP/sur.jsonl"

[ "$fails" -eq 0 ] && echo "all tasks CLI checks passed" || echo "$fails failures"
[ "$fails" -eq 0 ]
