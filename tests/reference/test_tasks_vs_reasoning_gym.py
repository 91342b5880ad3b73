"""The C task ports against the real reasoning_gym package (pinned in requirements.txt).

For every task that `sapo tasks list --json` reports:
  (a) generation: entries i = 0..N-1 of reasoning_gym.create_dataset(name, seed=S, size=N,
      **preset) and of `sapo tasks gen` must be equal item for item (question, answer,
      metadata after a JSON round trip) at the paper preset (N >= 500), and also at the
      small and tiny presets and at extra seeds (negative, above 2^32); an item on which the
      package raises (decimal_arithmetic's division by a zero group) must be refused by
      `sapo tasks gen` too;
  (b) scoring: >= 20 distinct candidates per entry (generic ones below plus the task's own
      from rg_candidates_<task>.py, if present) are scored by the package (extract_answer as
      rl-swarm does, then ds.score_answer) and by `sapo tasks score`; every pair must agree
      within 1e-9. 500 paper entries, plus 200 small and 200 tiny ones scored against
      rl-swarm's scorer (get_score_answer_fn). The number of pairs per task is printed.
The paper preset itself must equal rl-swarm's settings (genrl examples/rgym/datasets.yaml).
Run alone with: SAPO_BIN=build/sapo build/venv/bin/python -m pytest -s tests/reference/test_tasks_vs_reasoning_gym.py
"""
import contextlib
import importlib.util
import io
import json
import os
import subprocess
import tempfile

import pytest

rg = pytest.importorskip("reasoning_gym")
from reasoning_gym.utils import extract_answer  # noqa: E402  the function rl-swarm / genrl call

HERE = os.path.dirname(os.path.abspath(__file__))
SAPO = os.environ.get("SAPO_BIN") or os.path.join(os.environ.get("SAPO_BUILD_DIR", "build"), "sapo")
N_PAPER = int(os.environ.get("SAPO_RG_ENTRIES", "500"))
SEED = 20250917
EXTRA_RUNS = [("small", SEED + 1, 200), ("tiny", SEED + 2, 200), ("paper", -7, 100), ("paper", 2**40 + 3, 100)]
TOL = 1e-9

# rl-swarm's per-task settings (genrl src/genrl/examples/rgym/datasets.yaml, without seed/size).
RL_SWARM = {
    "arc_1d": dict(min_size=10, max_size=30, num_train=3),
    "basic_arithmetic": dict(min_terms=2, max_terms=6, min_digits=1, max_digits=4, operators=["+", "-", "*", "/"],
                             allow_parentheses=True, allow_negation=True, format_style="natural", whitespace="single"),
    "base_conversion": dict(min_base=2, max_base=16, min_value=0, max_value=1000),
    "bf": dict(difficulty=1),
    "binary_matrix": dict(min_n=3, max_n=10, p_zero=0.25),
    "calendar_arithmetic": dict(year=2023, offset_upper_bound=100, leap_year_range=200,
                                tasks=["count_days", "weekday_of_date", "is_leap_year", "recurring_event_day"]),
    "decimal_arithmetic": dict(min_terms=2, max_terms=6, min_num_decimal_places=1, max_num_decimal_places=3, precision=5),
    "fraction_simplification": dict(min_value=1, max_value=100, min_factor=2, max_factor=100,
                                    styles=["plain", "latex_frac", "latex_dfrac"]),
    "propositional_logic": dict(min_vars=2, max_vars=4, min_statements=2, max_statements=4, min_complexity=1,
                                max_complexity=3),
}

# Generators known not to reproduce the package item for item. A task may be listed here only
# with its porter's documented reason; its scoring is still checked on the package's entries.
# The issue asks for item-for-item equality on at least seven of the nine.
KNOWN_INEXACT = {
    # "task_name": "why (see docs/TASKS.md)",
}


def listed_tasks():
    try:
        out = subprocess.run([SAPO, "tasks", "list", "--json"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return json.loads(out)


LISTING = listed_tasks()
TASKS = {t["name"]: t for t in (LISTING or {}).get("tasks", [])}
TASK_NAMES = sorted(TASKS, key=lambda n: TASKS[n]["id"])


def create(name, preset, seed, size):
    cfg = TASKS[name]["presets"][preset]
    with contextlib.redirect_stdout(io.StringIO()):  # bf's generator prints progress dots
        return rg.create_dataset(name, seed=seed, size=size, **cfg)


def package_entries(ds, n):
    """ds[i] for i < n, None where the package raises on the item (decimal_arithmetic divides
    by an exactly-zero group now and then: Python raises decimal.DivisionByZero)."""
    out = []
    with contextlib.redirect_stdout(io.StringIO()):
        for i in range(n):
            try:
                out.append(ds[i])
            except Exception:
                out.append(None)
    return out


def run_gen(name, preset, seed, n, start=0):
    return subprocess.run([SAPO, "tasks", "gen", name, "--preset", preset, "--seed", str(seed), "--count", str(n),
                           "--start", str(start)], capture_output=True, text=True)


def c_entries(name, preset, seed, n, start=0):
    proc = run_gen(name, preset, seed, n, start)
    assert proc.returncode == 0, f"sapo tasks gen {name} failed: {proc.stderr}"
    lines = proc.stdout.split("\n")  # not splitlines(): U+2028 inside a JSON string is not a line break
    return [json.loads(x) for x in lines if x]


def first_diff(a, b, path="entry"):
    """Where two JSON values first differ, as a readable string."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}[{k!r}]: package {a.get(k, '<missing>')!r} vs C {b.get(k, '<missing>')!r}"
            d = first_diff(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{path}: length {len(a)} vs {len(b)}"
    if isinstance(a, bool) != isinstance(b, bool):  # JSON true is not 1, though Python says True == 1
        return f"{path}: package {a!r} vs C {b!r}"
    if a == b:
        return None
    if isinstance(a, str) and isinstance(b, str):
        i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return f"{path}: differ at char {i}: package {a[max(0, i - 30):i + 30]!r} vs C {b[max(0, i - 30):i + 30]!r}"
    return f"{path}: package {a!r} vs C {b!r}"


def compare_generation(name, preset, seed, n):
    ds = create(name, preset, seed, n)
    want = [None if e is None else json.loads(json.dumps(e)) for e in package_entries(ds, n)]
    bad = []
    i = 0
    while i < n:
        if want[i] is None:  # the package raises here: `sapo tasks gen` must refuse the item too
            if run_gen(name, preset, seed, 1, start=i).returncode == 0:
                bad.append((i, "the package raises on this item, but sapo tasks gen produced one"))
            i += 1
            continue
        j = i
        while j < n and want[j] is not None:
            j += 1
        got = c_entries(name, preset, seed, j - i, start=i)
        assert len(got) == j - i, f"{name}: sapo tasks gen gave {len(got)} entries, expected {j - i}"
        for k, (w, g) in enumerate(zip(want[i:j], got)):
            d = first_diff({key: w[key] for key in ("question", "answer", "metadata")}, g)
            if d:
                bad.append((i + k, d))
        i = j
    return bad


# ---- candidate answers ----------------------------------------------------------------------

def load_task_candidates(name):
    path = os.path.join(HERE, f"rg_candidates_{name}.py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location(f"rg_candidates_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.candidates


def generic_answers(entry):
    """Answers (what extraction would hand to the verifier) worth scoring on any task."""
    q = entry["question"]
    o = entry["answer"] if isinstance(entry["answer"], str) else ""
    toks = q.split()
    out = [o, " " + o, o + " ", "\n" + o + "\n", "\u00a0" + o, o.upper(), o.lower(), o.title(), o + ".",
           "The answer is " + o, o + o, o[:-1], o[1:], o + "0", "+" + o, "-" + o, o.replace(" ", ""),
           o.replace(" ", "  "), o.replace("\n", " "), o.replace(" ", ", "),
           "", " ", "0", "1", "-1", "4", "+4", "4.0", "0.0", "1e3", "True", "False", "None", "null", "yes",
           "1/2", "\\frac{1}{2}", "\\dfrac{3}{4}", "$\\frac{1}{2}$", "2/4", "-3/7",
           "[[0, 1], [1, 0]]", "0 1\n1 0", "[1, 2, 3]", "A", "P", "P ∧ Q", "(P ∨ ¬P)", "Monday", "0x1f", "é中😀",
           q, toks[-1] if toks else "", toks[0] if toks else ""]
    try:  # numeric near misses when the oracle is a number
        v = float(o)
        out += [repr(v), str(v + 1), str(v - 1e-4), str(v + 1e-6), f"{v:.1f}", f"{v:e}", o + "00", "0" + o]
        if v == int(v):
            out += [str(int(v) + 1), str(int(v) * 2), f"{int(v)}.0"]
    except (ValueError, OverflowError):
        pass
    return out


def generic_completions(entry):
    """Whole completions: the verifier sees what extract_answer finds in them (maybe None)."""
    o = entry["answer"] if isinstance(entry["answer"], str) else "x"
    return [f"<answer>{o}</answer>", f"<think>reasoning</think>\n<answer> {o} </answer>", o,
            f"<answer>{o}", f"{o}</answer>", f"<answer><answer>{o}</answer></answer>",
            f"<answer>0</answer> then <answer>{o}</answer>", f"<answer>{o}</answer> then <answer>0</answer>",
            f"<answer>{o}</answer><answer>", "<answer></answer>", "<answer>\n\n</answer>",
            f"<ANSWER>{o}</ANSWER>", f"<answer>\n{o}\n</answer>\n", ""]


def pairs_for(name, entries):
    extra = load_task_candidates(name)
    rows = []
    for i, e in enumerate(entries):
        answers = generic_answers(e) + (list(extra(e)) if extra else [])
        seen = set()
        for a in answers + [None]:
            if a in seen:
                continue
            seen.add(a)
            rows.append((i, "answer", a))
        comps = set()
        for c in generic_completions(e):
            if c not in comps:
                comps.add(c)
                rows.append((i, "completion", c))
        assert len(seen) + len(comps) >= 20, f"{name} entry {i}: only {len(seen) + len(comps)} candidates"
    return rows


# ---- the tests --------------------------------------------------------------------------------

def test_listing_works():
    assert LISTING is not None, f"`{SAPO} tasks list --json` failed"
    assert set(LISTING["presets"]) >= {"paper", "small", "tiny"}
    assert set(TASKS) | set(LISTING["not_ported"]) == set(RL_SWARM)
    assert len(KNOWN_INEXACT) <= 2, "the issue requires item-for-item equality on at least seven of the nine"
    if not TASKS:
        pytest.skip("no task ported in this build")


@pytest.mark.parametrize("name", TASK_NAMES)
def test_paper_preset_is_rl_swarm(name):
    assert TASKS[name]["presets"]["paper"] == RL_SWARM[name]


@pytest.mark.parametrize("name", TASK_NAMES)
def test_generation_matches(name):
    runs = [("paper", SEED, N_PAPER)] + EXTRA_RUNS
    report = []
    for preset, seed, n in runs:
        bad = compare_generation(name, preset, seed, n)
        report.append(f"{preset}/seed {seed}: {n - len(bad)}/{n} equal")
        if bad and name not in KNOWN_INEXACT:
            i, d = bad[0]
            pytest.fail(f"{name} {preset} seed {seed}: {len(bad)}/{n} entries differ; first at index {i}: {d}")
    print(f"\n[gen] {name}: " + "; ".join(report) + (" (known inexact)" if name in KNOWN_INEXACT else ""))


SCORE_RUNS = [("paper", SEED, N_PAPER), ("small", SEED + 1, 200), ("tiny", SEED + 2, 200)]


@pytest.mark.parametrize("preset,seed,n", SCORE_RUNS, ids=[r[0] for r in SCORE_RUNS])
@pytest.mark.parametrize("name", TASK_NAMES)
def test_scores_match(name, preset, seed, n):
    # A few spare items so that n are scored even where the package raises on some.
    ds = create(name, preset, seed, n + 50)
    entries = [e for e in package_entries(ds, n + 50) if e is not None][:n]
    assert len(entries) == n, f"{name}: the package raised on more than 50 of {n + 50} items"
    # The reference scorer: at the paper preset the dataset's own ds.score_answer. At the
    # other presets rl-swarm's, get_score_answer_fn(name), a dataset with the package's
    # default config: a C verifier sees only the entry, never the config, and the one
    # scorer that reads its config (decimal_arithmetic's tolerance) has paper == default.
    if preset != "paper":
        with contextlib.redirect_stdout(io.StringIO()):
            scorer = rg.get_score_answer_fn(name)
    else:
        scorer = ds.score_answer
    rows = pairs_for(name, entries)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        path = f.name
        for i, kind, text in rows:
            f.write(json.dumps({"task": name, "entry": entries[i], kind: text}) + "\n")
    try:
        proc = subprocess.run([SAPO, "tasks", "score", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    out = [json.loads(x) for x in proc.stdout.split("\n") if x]
    assert proc.returncode == 0, f"sapo tasks score failed: {proc.stderr[-2000:]}"
    assert len(out) == len(rows)
    mismatches, raised, max_diff = [], 0, 0.0
    for k, ((i, kind, text), res) in enumerate(zip(rows, out)):
        assert res["line"] == k + 1 and "score" in res, res
        answer = extract_answer(text) if kind == "completion" else text
        try:
            # reward of a completion: the score of what rl-swarm extracts, 0 when nothing is
            # (the rule; rl-swarm would score None, which only fraction_simplification
            # rates above 0). A direct "answer" (None included) is the package's score as is.
            if kind == "completion" and answer is None:
                want = 0.0
            else:
                want = float(scorer(answer, entries[i]))
        except Exception:  # the package itself fails on this input: nothing to compare against
            raised += 1
            continue
        diff = abs(want - res["score"])
        max_diff = max(max_diff, diff)
        if not diff <= TOL:
            mismatches.append((i, kind, text, want, res["score"]))
    checked = len(rows) - raised
    print(f"\n[score] {name} {preset}: {checked} pairs checked over {len(entries)} entries "
          f"({checked / len(entries):.1f} per entry), max |diff| {max_diff:.3g}, "
          f"{len(mismatches)} mismatches, {raised} inputs on which the package raised")
    assert checked >= 20 * len(entries)
    if mismatches:
        i, kind, text, want, got = mismatches[0]
        pytest.fail(f"{name} {preset}: {len(mismatches)} of {checked} pairs differ; first: entry {i} "
                    f"(answer {entries[i]['answer']!r}) {kind} {text!r}: package {want!r} vs C {got!r}")
