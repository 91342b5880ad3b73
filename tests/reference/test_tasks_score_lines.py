"""`sapo tasks score` reads each line as Python does, json.loads(line.decode("utf-8")), and
scores it as reasoning_gym does (rl-swarm's get_score_answer_fn, extract_answer for a
completion). The same lines go through that Python model and through the C command:

  - U+0000 inside answers and completions, in all nine tasks (bf's "ab\\u0000cd" against
    "ab" is 0.4, not 1), inside the stored answer and inside metadata strings
    (calendar_arithmetic's task, propositional_logic's variables and premises, ...), in the
    task name and in keys;
  - raw invalid UTF-8 (Python refuses the line), JSON that Python refuses and cJSON took
    (control characters in strings, "01", "1.", vertical tab), JSON that Python takes and
    cJSON refused (NaN, Infinity), duplicate keys (the last wins), 4300-digit integers;
  - lone surrogates: \\udc80-\\udcff that stand for bytes under surrogateescape score as in
    Python (a stored answer "\\udcc3" is not inside "\\u00e9"); every other one, and runs
    that would read as UTF-8, are an error in C though Python scores them (the documented
    disagreement, asserted as such);
  - nesting: 995 levels parse, 996 are refused, as json.loads at a script's top level;
  - the line limit: --max-line-bytes L scores a line of L bytes and refuses L + 1 with the
    line's number and the limit, the next line still scored; a 50 MB line under the default
    limit fails in well under a second with a peak RSS below 64 MB.
Every line where Python gives a score must give the same score (1e-9) in C; every line
Python refuses must be an error in C. Run alone with:
SAPO_BIN=build/sapo build/venv/bin/python -m pytest -s tests/reference/test_tasks_score_lines.py
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

import pytest

rg = pytest.importorskip("reasoning_gym")
from reasoning_gym.utils import extract_answer  # noqa: E402

SAPO = os.environ.get("SAPO_BIN") or os.path.join(os.environ.get("SAPO_BUILD_DIR", "build"), "sapo")
SEED = 20251201
TOL = 1e-9


def listing():
    try:
        out = subprocess.run([SAPO, "tasks", "list", "--json"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"`{SAPO} tasks list --json` failed", allow_module_level=True)
    return {t["name"]: t for t in json.loads(out)["tasks"]}


TASKS = listing()
if not TASKS:
    pytest.skip("no task ported in this build", allow_module_level=True)
_SCORERS = {}


def scorer(name):
    if name not in _SCORERS:
        with contextlib.redirect_stdout(io.StringIO()):
            _SCORERS[name] = rg.get_score_answer_fn(name)
    return _SCORERS[name]


def entries(name, n=3):
    with contextlib.redirect_stdout(io.StringIO()):
        ds = rg.create_dataset(name, seed=SEED, size=n + 10, **TASKS[name]["presets"]["paper"])
        out = []
        for i in range(n + 10):
            try:
                out.append(json.loads(json.dumps(ds[i])))
            except Exception:  # decimal_arithmetic raises on a few items
                continue
    return out[:n]


# ---- the Python side: what one line means to json + reasoning_gym ----------------------------

def py_line(raw):
    """("skip",) for a blank line, ("error", why) where Python refuses the line or the
    command's field rules do, ("score", x), or ("raised", why) where the package's scorer
    itself raises (nothing to compare)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return ("error", f"utf-8: {e}")
    if text.strip(" \t\r\n") == "":
        return ("skip",)
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        return ("error", f"json: {e}")
    if not isinstance(obj, dict) or not isinstance(obj.get("entry"), dict):
        return ("error", "line or entry not an object")
    entry = obj["entry"]
    if "answer" not in entry or not (entry["answer"] is None or isinstance(entry["answer"], str)):
        return ("error", "entry.answer")
    if not isinstance(entry.get("metadata"), dict):
        return ("error", "entry.metadata")
    task = obj["task"] if "task" in obj else entry["metadata"].get("source_dataset")
    if not isinstance(task, str):
        return ("error", "task")
    if ("completion" in obj) == ("answer" in obj):
        return ("error", "completion xor answer")
    if task not in TASKS:
        return ("error", f"unknown task {task!r}")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            if "completion" in obj:
                if not isinstance(obj["completion"], str):
                    return ("error", "completion type")
                a = extract_answer(obj["completion"])
                return ("score", 0.0 if a is None else float(scorer(task)(a, entry)))
            a = obj["answer"]
            if not (a is None or isinstance(a, str)):
                return ("error", "answer type")
            return ("score", float(scorer(task)(a, entry)))
    except Exception as e:  # noqa: BLE001  the package itself fails on this input
        return ("raised", repr(e))


def c_score(lines, *args):
    """Runs `sapo tasks score` on the lines (bytes, joined by newlines); returns the output
    by line number, stderr and the exit status."""
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as f:
        f.write(b"\n".join(lines) + b"\n")
        path = f.name
    try:
        proc = subprocess.run([SAPO, "tasks", "score", *args, path], capture_output=True)
    finally:
        os.unlink(path)
    out = {}
    for text in proc.stdout.decode("utf-8").split("\n"):
        if text:
            o = json.loads(text)
            out[o["line"]] = o
    return out, proc.stderr.decode("utf-8", "replace"), proc.returncode


def dumps(obj):
    """JSON as Python writes it (ASCII, so lone surrogates become \\u escapes)."""
    return json.dumps(obj).encode("ascii")


def compare(lines, c_only_errors=()):
    """Every line through both sides. c_only_errors: (line index, message fragment) pairs
    where C must refuse a line that Python accepts (documented disagreements)."""
    out, err, rc = c_score(lines)
    want_c_error = dict(c_only_errors)
    problems, checked, raised = [], 0, 0
    for k, raw in enumerate(lines):
        n = k + 1
        py = py_line(raw)
        got = out.get(n)
        if k in want_c_error:
            if py[0] not in ("score", "raised"):
                problems.append(f"line {n}: listed as a C-only error but Python refuses it too: {py}")
            if not got or want_c_error[k] not in got.get("error", ""):
                problems.append(f"line {n}: expected a C error containing {want_c_error[k]!r}, got {got}")
            continue
        if py[0] == "skip":
            if got is not None:
                problems.append(f"line {n}: blank, but C wrote {got}")
        elif py[0] == "error":
            if not got or "error" not in got:
                problems.append(f"line {n} {raw[:120]!r}: Python refuses it ({py[1]}), C gave {got}")
        elif py[0] == "raised":
            raised += 1
        elif not got or "score" not in got:
            problems.append(f"line {n} {raw[:120]!r}: Python scores {py[1]!r}, C gave {got}")
        elif not abs(got["score"] - py[1]) <= TOL:
            problems.append(f"line {n} {raw[:160]!r}: Python {py[1]!r} vs C {got['score']!r}")
        else:
            checked += 1
    return problems, checked, raised, rc


def oracle_of(e):
    if isinstance(e["answer"], str):
        return e["answer"]
    return e["metadata"].get("example_answer", "P")  # propositional_logic stores None


# ---- U+0000 --------------------------------------------------------------------------------

def nul_lines(name):
    lines = []
    for e in entries(name):
        o = oracle_of(e)
        answers = [o + "\0", "\0" + o, o[:1] + "\0" + o[1:], o + "\0" + o, "\0", "ab\0cd", o + "\0x",
                   " " + o + "\0 ", "\0" + o + "\0", o]
        completions = [f"<answer>{o}\0</answer>", "<answer>\0</answer>", f"<answer>{o}</answer>\0",
                       f"\0<answer>{o}</answer>", f"<answer>\0{o}</answer>", f"<answer>{o}</answer>\0<answer>x</answer>"]
        lines += [dumps({"task": name, "entry": e, "answer": a}) for a in answers]
        lines += [dumps({"task": name, "entry": e, "completion": c}) for c in completions]
        # The stored answer holds U+0000.
        if isinstance(e["answer"], str):
            e2 = dict(e, answer=o + "\0tail")
            for a in [o + "\0tail", o, o + "\0tail!", "x" + o + "\0tail", o + "\0", "\0tail"]:
                lines.append(dumps({"task": name, "entry": e2, "answer": a}))
            e3 = dict(e, answer="ab")  # the reported case: "ab\u0000cd" is 2/5 by the default rule
            lines.append(dumps({"task": name, "entry": e3, "answer": "ab\0cd"}))
        # Every metadata string, and every string in a metadata list, with U+0000 appended.
        for key, v in e["metadata"].items():
            if isinstance(v, str):
                m = dict(e["metadata"], **{key: v + "\0x"})
            elif isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                m = dict(e["metadata"], **{key: [x + "\0" for x in v]})
            else:
                continue
            for a in [o, o + "\0x"]:
                lines.append(dumps({"task": name, "entry": dict(e, metadata=m), "answer": a}))
        # The task name, and keys, holding U+0000 (no lookup can name such a key).
        lines.append(dumps({"task": name + "\0", "entry": e, "answer": o}))
        meta = dict(e["metadata"], source_dataset=name + "\0x")
        lines.append(dumps({"entry": dict(e, metadata=meta), "answer": o}))
        lines.append(dumps({"task": name, "entry": e, "answer\0": "zzz", "answer": o}))
        lines.append(dumps({"task": name, "entry": e, "answer\0": o}))
        lines.append(dumps({"task": name, "entry": dict(e, **{"answer\0": "zzz"}), "answer": o}))
    return lines


@pytest.mark.parametrize("name", sorted(TASKS, key=lambda n: TASKS[n]["id"]))
def test_nul_inside_strings(name):
    lines = nul_lines(name)
    problems, checked, raised, _ = compare(lines)
    print(f"\n[nul] {name}: {len(lines)} lines, {checked} scores equal, {raised} on which the package raised")
    assert not problems, f"{len(problems)} of {len(lines)} lines differ; first: " + "; ".join(problems[:3])
    assert checked >= len(lines) // 2


def test_reported_bf_case():
    e = entries("bf", 1)[0]
    out, _, rc = c_score([dumps({"task": "bf", "entry": dict(e, answer="ab"), "answer": "ab\0cd"})])
    assert rc == 0 and out[1]["score"] == pytest.approx(0.4, abs=1e-15), out
    assert py_line(dumps({"task": "bf", "entry": dict(e, answer="ab"), "answer": "ab\0cd"})) == ("score", 0.4)


# ---- invalid UTF-8 and JSON strictness ----------------------------------------------------------

BAD_UTF8 = [b"\x80", b"\xc3\x28", b"\xc0\xaf", b"\xc1\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80",
            b"\xf5\x80\x80\x80", b"\xff", b"\xfe", b"\xe2\x82", b"\xf0\x9f\x98", b"\xe2\x82\x28"]


def test_invalid_utf8_lines():
    e = entries("bf", 1)[0]
    good = dumps({"task": "bf", "entry": e, "answer": "XANSWERX"})
    lines, want = [], []
    for bad in BAD_UTF8:
        lines += [good.replace(b"XANSWERX", b"ab" + bad + b"cd"), good.replace(b"XANSWERX", bad),
                  good + b" " + bad, bad + good, good.replace(b'"bf"', b'"b' + bad + b'f"', 1)]
    lines.append(good.replace(b"XANSWERX", "é中😀".encode()))  # valid multi-byte text: scored
    problems, checked, _, rc = compare(lines)
    assert not problems, "; ".join(problems[:3])
    assert checked == 1 and rc == 1
    out, _, _ = c_score(lines[:1])
    assert "not valid UTF-8 (byte 0x80 at column" in out[1]["error"], out


def test_json_python_refuses_or_takes():
    e = entries("bf", 1)[0]
    o = e["answer"]
    base = dumps({"task": "bf", "entry": e, "answer": o})
    body = base[:-1]  # without the closing brace, to append fields
    lines = [
        base.replace(b'"answer": "' + o.encode(), b'"answer": "\t' + o.encode()),  # raw tab in a string
        base.replace(b'"answer": "' + o.encode(), b'"answer": "\x01' + o.encode()),  # raw control character
        base.replace(b'"answer": "' + o.encode(), b'"answer": "\x7f' + o.encode()),  # DEL is fine
        base.replace(b'"answer": "' + o.encode(), b'"answer": "\x00' + o.encode()),  # raw NUL byte
        base + b"\x00",
        b"\x0b" + base,                                             # vertical tab is not JSON space
        b"\xef\xbb\xbf" + base,                                     # BOM
        body + b', "x": 01}', body + b', "x": 1.}', body + b', "x": .5}', body + b', "x": +1}',
        body + b', "x": -}', body + b', "x": 1e}', body + b', "x": 1E+2}', body + b', "x": -0}',
        body + b', "x": [1,]}', body + b', "x": {"a": 1,}}', body + b',}',
        body + b', "x": NaN}', body + b', "x": Infinity}', body + b', "x": -Infinity}', body + b', "x": -NaN}',
        body + b', "x": nul}', body + b', "x": True}', body + b', "x": "\\x41"}', body + b", \"x\": 'a'}",
        body + b', "x": "\\u00E9\\/\\b\\f\\n\\r\\t\\"\\\\"}', body + b', "x": "\\u00e"}', body + b', "x": "\\uD800\\u00zz"}',
        body + b', "x": ' + b"1" * 4300 + b"}", body + b', "x": ' + b"1" * 4301 + b"}",
        body + b', "x": -' + b"1" * 4300 + b"}", body + b', "x": ' + b"1" * 4301 + b".5}",
        body + b', "x": 1e400}', body + b', "x": "\\u0000"}', body + b', "answer": "wrong"}',
        body.replace(b'"answer": "' + o.encode() + b'"', b'"answer": "wrong"') + b', "answer": "' + o.encode() + b'"}',
        body + b', "task": "no_such_task"}', body + b', "task": 5}',
        b'{"answer": "' + o.encode() + b'", "task": "bf", "entry": ' + dumps(dict(e, answer="wrong"))[:-1]
        + b', "answer": "' + o.encode() + b'"}}',                   # a repeated key inside the entry
        b"[1, 2]", b'"just a string"', b"   ", b"\t\r", b"",
        b'{"task": "bf", "entry": ' + dumps(e) + b', "answer": "' + o.encode() + b'"',  # truncated
    ]
    problems, checked, _, _ = compare(lines)
    assert not problems, f"{len(problems)} of {len(lines)} differ: " + "; ".join(problems[:4])
    print(f"\n[json] {len(lines)} lines, {checked} scored equal")


# ---- lone surrogates -------------------------------------------------------------------------------

def test_lone_surrogates():
    lines, c_only = [], []
    for name in ["bf", "base_conversion", "calendar_arithmetic", "propositional_logic", "binary_matrix",
                 "fraction_simplification", "decimal_arithmetic", "arc_1d", "basic_arithmetic"]:
        for e in entries(name, 2):
            o = oracle_of(e)
            # \udc80-\udcff alone or in runs that are not UTF-8: the bytes they stand for.
            for a in [o + "\udc80", "\udcff" + o, "\udce2\udc82", o + "\udcc3", "\udc80", "\udcc3" + o,
                      "\ud83d\ude00" + o, o + "\udced\udca0\udc80", "é\udca9"]:
                lines.append(dumps({"task": name, "entry": e, "answer": a}))
                lines.append(dumps({"task": name, "entry": e, "completion": f"<answer>{a}</answer>"}))
            if isinstance(e["answer"], str):
                for stored, answers in [("\udcc3", ["é", "x\udcc3", "\udcc3", "\udcc3\udcc3", "a\udcc3b"]),
                                        ("\udca9", ["é", "\udca9\udca9"]),
                                        (o + "\udc80", [o + "\udc80", o + "\udc80z", o, o + "\udc80\udc80"])]:
                    for a in answers:
                        lines.append(dumps({"task": name, "entry": dict(e, answer=stored), "answer": a}))
            m = dict(e["metadata"], note="\udcff")
            lines.append(dumps({"task": name, "entry": dict(e, metadata=m), "answer": o}))
            # What a C string cannot hold: C refuses, Python scores.
            for a, frag in [("\ud800", "lone surrogate \\uD800"), (o + "\udc41", "lone surrogate \\uDC41"),
                            ("\udfff", "lone surrogate \\uDFFF"), ("\ud83dx", "lone surrogate \\uD83D"),
                            ("\udcc3\udca9", "read back as UTF-8"), ("x\udcc3\udc80", "read back as UTF-8"), (o + "\udce2\udc82\udcac", "read back as UTF-8"),
                            ("\udcf0\udc9f\udc98\udc80", "read back as UTF-8")]:
                c_only.append((len(lines), frag))
                lines.append(dumps({"task": name, "entry": e, "answer": a}))
    problems, checked, raised, _ = compare(lines, c_only)
    print(f"\n[surrogates] {len(lines)} lines: {checked} scores equal, {len(c_only)} refused by C only, "
          f"{raised} on which the package raised")
    assert not problems, f"{len(problems)} of {len(lines)} differ: " + "; ".join(problems[:4])


# ---- nesting ------------------------------------------------------------------------------------------

def test_nesting_depth_as_top_level_json_loads():
    e = entries("bf", 1)[0]
    body = dumps({"task": "bf", "entry": e, "answer": e["answer"]})[:-1]

    def line(depth):  # the line itself is one object: depth - 1 more arrays inside it
        return body + b', "x": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"

    top = [subprocess.run([sys.executable, "-c", "import json,sys; json.loads(sys.stdin.buffer.read())"],
                          input=line(d), capture_output=True).returncode for d in (995, 996)]
    assert top == [0, 1], f"json.loads at top level: depth 995 -> {top[0]}, 996 -> {top[1]} (expected 0, 1)"
    out, _, _ = c_score([line(995), line(996)])
    assert "score" in out[1], out[1]
    assert "nesting deeper than 995" in out[2].get("error", ""), out[2]


# ---- the line limit and memory -------------------------------------------------------------------------

def test_line_limit():
    e = entries("bf", 1)[0]
    good = dumps({"task": "bf", "entry": e, "answer": e["answer"]})
    limit = len(good)
    longer = good[:-1] + b" }"  # the same line, one byte longer
    out, err, rc = c_score([good, longer, good, b" " * (limit + 5)], "--max-line-bytes", str(limit))
    assert out[1]["score"] == 1 and out[3]["score"] == 1, out
    want = f"line longer than {limit} bytes (--max-line-bytes)"
    assert want in out[2]["error"] and want in out[4]["error"], out
    assert f":2: {want}" in err and rc == 1, err
    out, _, rc = c_score([good, longer])  # the default limit takes both
    assert out[2]["score"] == 1 and rc == 0


def _score_file_peak_rss(content):
    """(exit status, peak RSS in kB, parsed output lines) of `sapo tasks score` on a file."""
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as f:
        f.write(content)
        path = f.name
    try:
        probe = ("import resource, subprocess, sys; "
                 "p = subprocess.run(sys.argv[1:], capture_output=True); "
                 "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
                 "sys.stdout.write(p.stdout.decode())")
        res = subprocess.run([sys.executable, "-c", probe, SAPO, "tasks", "score", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    head, *rest = res.stdout.split("\n")
    rc, maxrss_kb = head.split()
    return rc, int(maxrss_kb), [json.loads(x) for x in rest if x]


def test_long_line_memory():
    """A 50 MB line costs what a short one does: memory is measured against the same binary
    scoring one short line (a CUDA build maps its libraries before any line is read)."""
    e = entries("bf", 1)[0]
    good = dumps({"task": "bf", "entry": e, "answer": e["answer"]})
    # 50 MB of small values: what cost 2.1 GB through cJSON.
    big = good[:-1] + b', "pad": [' + b"0," * (25 * 1024 * 1024) + b"0]}"
    _, base_kb, _ = _score_file_peak_rss(good)
    rc, big_kb, out = _score_file_peak_rss(big + b"\n" + good)  # the last line has no newline
    print(f"\n[limit] 50 MB line: exit {rc}, peak RSS {big_kb / 1024:.1f} MiB (one short line: {base_kb / 1024:.1f} MiB)")
    assert rc == "1" and "line longer than 1048576 bytes" in out[0]["error"] and out[1] == {"line": 2, "score": 1}
    assert big_kb - base_kb < 32 * 1024, f"peak RSS {big_kb} kB for a 50 MB line, {base_kb} kB for a short one"
