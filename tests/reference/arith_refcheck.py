"""Shared plumbing of test_task_basic_arithmetic.py and test_task_decimal_arithmetic.py:
run tool_task_check (gen / score / preset), generate the same items with reasoning_gym
(a per-item time limit, since a few basic_arithmetic items make the package loop for
minutes), and compare item for item and score for score."""
import contextlib
import importlib.util
import io
import json
import os
import signal
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("SAPO_BUILD_DIR", "build")
TOOL = next((p for p in (os.path.join(BUILD, "tests", "tool_task_check"), os.path.join(BUILD, "tool_task_check"))
             if os.path.exists(p)), os.path.join(BUILD, "tests", "tool_task_check"))
TOL = 1e-9


def tool(*args, stdin=None):
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing (build the project first)")
    proc = subprocess.run([TOOL, *map(str, args)], input=stdin, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"tool_task_check {' '.join(map(str, args[:2]))} failed: {proc.stderr[-2000:]}"
    return [json.loads(x) for x in proc.stdout.split("\n") if x]


def preset(task, name):
    return tool("preset", task, name)[0]


def c_items(task, config, seed, start, count):
    cfg = config if isinstance(config, str) else json.dumps(config)
    return tool("gen", task, cfg, seed, start, count)


class ItemTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise ItemTimeout()


def py_items(task, config, seed, start, count, time_limit=5.0, slow_fallback=None):
    """ds[i] for i in range; each slot is an entry (JSON round trip), ("raised", repr) or
    ("timeout", None). An item past the time limit is retried with slow_fallback(ds, i)
    when given (an equivalent, faster computation), counted as ("fallback", entry)."""
    import reasoning_gym as rg
    ds = rg.create_dataset(task, seed=seed, size=start + count, **config)
    out = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for i in range(start, start + count):
            signal.setitimer(signal.ITIMER_REAL, time_limit)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    e = ds[i]
                out.append(json.loads(json.dumps(e)))
            except ItemTimeout:
                if slow_fallback:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    out.append(("fallback", json.loads(json.dumps(slow_fallback(ds, i)))))
                else:
                    out.append(("timeout", None))
            except Exception as ex:  # the package raises on this item
                out.append(("raised", repr(ex)))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    return ds, out


def compare_items(task, config, seed, start, count, time_limit=5.0, label=None, slow_fallback=None):
    """Returns (dataset, package entries, counts dict); fails on any difference."""
    ds, want = py_items(task, config, seed, start, count, time_limit, slow_fallback)
    got = c_items(task, config, seed, start, count)
    assert len(got) == count
    equal = raised_both = timeouts = fallbacks = 0
    bad = []
    for k, (w, g) in enumerate(zip(want, got)):
        i = start + k
        if isinstance(w, tuple) and w[0] == "timeout":
            timeouts += 1
            continue
        if isinstance(w, tuple) and w[0] == "fallback":
            fallbacks += 1
            w = w[1]
        if isinstance(w, tuple):
            if "error" in g:
                raised_both += 1
            else:
                bad.append((i, f"package raised {w[1]}, C gave {g}"))
            continue
        if "error" in g:
            bad.append((i, f"C refused: {g['error']}; package gave {w}"))
        elif {k2: w[k2] for k2 in ("question", "answer", "metadata")} != g:
            bad.append((i, f"package {w} vs C {g}"))
        else:
            equal += 1
    name = label or json.dumps(config)
    print(f"\n[gen] {task} {name} seed {seed}: {count} items, {equal} equal ({fallbacks} of them checked with "
          f"the fast divisor list, the package being over {time_limit}s), {raised_both} raised in both, "
          f"{timeouts} skipped (package over {time_limit}s), {len(bad)} mismatches")
    assert not bad, f"{task} {name}: {len(bad)} of {count} differ; first: index {bad[0][0]}: {bad[0][1]}"
    entries = [w if isinstance(w, dict) else w[1] for w in want
               if isinstance(w, dict) or (isinstance(w, tuple) and w[0] == "fallback")]
    return ds, entries, {"items": count, "equal": equal, "raised": raised_both, "timeouts": timeouts,
                         "fallbacks": fallbacks}


def load_candidates(task):
    path = os.path.join(HERE, f"rg_candidates_{task}.py")
    spec = importlib.util.spec_from_file_location(f"rg_candidates_{task}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.candidates


def compare_scores(task, scorer, entries, extra=(), min_per_entry=20, before_score=None):
    """Scores candidates(entry) + extra (+ None) with the package's scorer (a bound
    score_answer) and the C verifier."""
    candidates = load_candidates(task)
    rows = []
    for e in entries:
        answers = []
        for a in list(candidates(e)) + list(extra) + [None]:
            if a not in answers:
                answers.append(a)
        assert len(answers) >= min_per_entry, f"only {len(answers)} candidates for {e['answer']!r}"
        rows.append((e, answers))
    text = "".join(json.dumps({"entry": e, "answers": a}) + "\n" for e, a in rows)
    got = tool("score", task, stdin=text)
    assert len(got) == len(rows)
    if before_score:
        before_score()
    pairs, bad, max_diff = 0, [], 0.0
    for (e, answers), g in zip(rows, got):
        assert len(g["scores"]) == len(answers)
        for a, c_score in zip(answers, g["scores"]):
            want = float(scorer(a, e))
            pairs += 1
            diff = abs(want - c_score)
            max_diff = max(max_diff, diff)
            if not diff <= TOL:
                bad.append((e["answer"], a, want, c_score))
    print(f"\n[score] {task}: {len(rows)} entries, {pairs} pairs ({pairs / max(1, len(rows)):.1f} per entry), "
          f"max |diff| {max_diff:.3g}, {len(bad)} mismatches")
    assert not bad, f"{task}: {len(bad)} of {pairs} pairs differ; first (oracle, answer, package, C): {bad[:3]}"
    return pairs
