"""Cross-checks the C ports of base_conversion, fraction_simplification,
calendar_arithmetic and binary_matrix against reasoning_gym 0.1.25 itself, through
tool_task_check: for each task and preset, 500 items must be identical (question,
answer, and metadata as the same JSON text, key order included), and every candidate
answer from rg_candidates_<task>.py (plus None) must get the same score (|diff| <= 1e-9).
Where Python's score_answer raises instead of returning, the C verifier must return 0 and
the case is counted. Further tests: default and edge configs, configs the package rejects,
and random junk answers."""
import importlib
import json
import os
import random
import subprocess
import sys
import warnings

import pytest

rg = pytest.importorskip("reasoning_gym")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
BUILD = os.environ.get("SAPO_BUILD_DIR", os.path.join(HERE, "..", "..", "build"))
TOOL = os.path.join(BUILD, "tests", "tool_task_check")
TASKS = ["base_conversion", "fraction_simplification", "calendar_arithmetic", "binary_matrix"]
N_ITEMS = 500
TOL = 1e-9
SEEDS = {"paper": 20250901, "small": 77, "tiny": 3}


def tool(*args, stdin=None):
    if not os.path.exists(TOOL):
        pytest.skip(f"{TOOL} not built")
    r = subprocess.run([TOOL, *args], input=stdin, capture_output=True, text=True)
    return r


def c_items(task, config, seed, count, start=0):
    r = tool("gen", task, config, str(seed), str(start), str(count))
    assert r.returncode == 0, f"{task}: tool gen failed: {r.stderr}"
    return [json.loads(line) for line in r.stdout.splitlines()]


def py_items(task, config, seed, count, start=0):
    ds = rg.create_dataset(task, seed=seed, size=start + count, **config)
    return ds, [json.loads(json.dumps(ds[i])) for i in range(start, start + count)]


def py_score(ds, answer, entry):
    """(score, raised): the package's score, or (None, True) where it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(ds.score_answer(answer, entry=entry)), False
        except Exception:  # the package's own exception, e.g. OverflowError on 400-digit counts
            return None, True


def c_scores(task, entries, answer_lists):
    lines = "".join(json.dumps({"entry": e, "answers": a}) + "\n" for e, a in zip(entries, answer_lists))
    r = tool("score", task, stdin=lines)
    assert r.returncode == 0, f"{task}: tool score failed: {r.stderr}"
    return [json.loads(line)["scores"] for line in r.stdout.splitlines()]


def same_shape(a, b):
    """Equal as Python values (1 == 1.0) with the same key order at every level."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_shape(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b
    return type(a) is type(b) and a == b


def compare_items(task, config_name, config, seed, count=N_ITEMS, start=0, strict=True):
    """Items must be the same JSON text. With strict=False a number may print as int in one
    and float in the other (cJSON keeps no int/float distinction: p_zero 1.0 prints as 1,
    integers beyond 2^31 as 1e+15); question and answer stay exact either way."""
    cfg_arg = config_name if config_name in ("paper", "small", "tiny") else json.dumps(config)
    c = c_items(task, cfg_arg, seed, count, start)
    ds, p = py_items(task, config, seed, count, start)
    assert len(c) == len(p)
    if strict:
        bad = [i for i in range(len(p)) if json.dumps(c[i]) != json.dumps(p[i])]
    else:
        bad = [i for i in range(len(p)) if c[i]["question"] != p[i]["question"] or c[i]["answer"] != p[i]["answer"]
               or not same_shape(c[i], p[i])]
    if bad:
        i = bad[0]
        pytest.fail(f"{task}/{config_name}: {len(bad)} of {len(p)} items differ; first at index {start + i}:\n"
                    f"C:      {json.dumps(c[i])}\nPython: {json.dumps(p[i])}")
    return ds, p


def compare_scores(task, label, ds, entries, answer_lists):
    cs = c_scores(task, entries, answer_lists)
    pairs = mismatches = raised = 0
    shown = []
    for entry, answers, scores in zip(entries, answer_lists, cs):
        assert len(scores) == len(answers)
        for a, s in zip(answers, scores):
            expect, did_raise = py_score(ds, a, entry)
            pairs += 1
            if did_raise:
                raised += 1
                expect = 0.0
            if abs(expect - s) > TOL:
                mismatches += 1
                if len(shown) < 10:
                    shown.append(f"answer {a!r} (oracle {entry['answer']!r}): python {expect!r}, C {s!r}")
    print(f"AGREEMENT {task} {label}: items={len(entries)} pairs={pairs} mismatches={mismatches} "
          f"python_raised={raised}")
    if shown:
        pytest.fail(f"{task}/{label}: {mismatches} of {pairs} scores differ:\n" + "\n".join(shown))
    return pairs


def preset_config(task, name):
    r = tool("preset", task, name)
    assert r.returncode == 0
    return json.loads(r.stdout)


@pytest.mark.parametrize("preset", ["paper", "small", "tiny"])
@pytest.mark.parametrize("task", TASKS)
def test_items_and_scores(task, preset):
    config = preset_config(task, preset)
    ds, items = compare_items(task, preset, config, SEEDS[preset])
    cand = importlib.import_module(f"rg_candidates_{task}")
    answer_lists = []
    for e in items:
        answers = cand.candidates(e)
        assert len(answers) >= 20
        answer_lists.append(answers + [None])
    compare_scores(task, preset, ds, items, answer_lists)


# Package defaults and corners: value 0 (the empty base-n string), bases up to 36, years
# below 1000 (unpadded %Y) and leap-year edges, the unreduced fallback of fractions, n = 1
# matrices and p_zero = 1.
EDGE_CONFIGS = [
    ("base_conversion", {}),
    ("base_conversion", {"min_value": 0, "max_value": 2, "min_base": 2, "max_base": 36}),
    ("base_conversion", {"min_value": 10**12, "max_value": 10**15, "min_base": 3, "max_base": 5}),
    ("fraction_simplification", {}),
    ("fraction_simplification", {"min_value": 50, "max_value": 60, "styles": ["latex_inline", "plain"]}),
    ("fraction_simplification", {"min_value": 1, "max_value": 2, "min_factor": 1, "max_factor": 1}),
    ("calendar_arithmetic", {}),
    ("calendar_arithmetic", {"year": 999, "offset_upper_bound": 400}),
    ("calendar_arithmetic", {"year": 1, "offset_upper_bound": 3, "leap_year_range": 7}),
    ("calendar_arithmetic", {"year": 9998, "offset_upper_bound": 300, "tasks": ["COUNT_BUSINESS_DAYS", "Weekday_Offset"]}),
    ("calendar_arithmetic", {"year": 2000, "offset_upper_bound": 1, "leap_year_range": 0,
                             "tasks": ["weekday_of_date_from_first_date", "is_leap_year", "is_leap_year"]}),
    ("calendar_arithmetic", {"year": 123456, "leap_year_range": 1000, "tasks": ["is_leap_year"]}),
    ("binary_matrix", {}),
    ("binary_matrix", {"min_n": 1, "max_n": 2, "p_zero": 1.0}),
    ("binary_matrix", {"min_n": 12, "max_n": 14, "p_zero": 0.05}),
]


@pytest.mark.parametrize("task,config", EDGE_CONFIGS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(EDGE_CONFIGS)])
def test_edge_configs(task, config):
    ds, items = compare_items(task, "edge", config, seed=4242, count=200, start=1000, strict=False)
    cand = importlib.import_module(f"rg_candidates_{task}")
    compare_scores(task, "edge", ds, items, [cand.candidates(e) + [None] for e in items])


# Configs where the package raises when an item is drawn (or validates and refuses):
# the C generator must refuse them too, with a message.
BAD_CONFIGS = [
    ("base_conversion", {"min_base": 1}),
    ("base_conversion", {"max_value": 0}),
    ("fraction_simplification", {"styles": ["fancy"]}),
    ("fraction_simplification", {"styles": []}),
    ("fraction_simplification", {"min_value": 0}),
    ("calendar_arithmetic", {"year": 10000, "tasks": ["weekday_of_date"]}),
    ("calendar_arithmetic", {"tasks": ["nope"]}),
    ("calendar_arithmetic", {"tasks": []}),
    ("calendar_arithmetic", {"year": 0}),
    ("calendar_arithmetic", {"offset_upper_bound": -5, "tasks": ["count_days"]}),
    ("calendar_arithmetic", {"year": 9999, "offset_upper_bound": 400, "tasks": ["count_business_days"]}),
    ("calendar_arithmetic", {"leap_year_range": -4, "tasks": ["is_leap_year"]}),
    ("calendar_arithmetic", {"year": 1, "offset_upper_bound": 400, "tasks": ["weekday_offset", "is_leap_year"]}),
    ("calendar_arithmetic", {"year": 9999, "offset_upper_bound": 60, "tasks": ["weekday_offset", "count_days"]}),
    ("calendar_arithmetic", {"offset_upper_bound": 10**9, "tasks": ["count_business_days"]}),
    ("binary_matrix", {"p_zero": 0}),
    ("binary_matrix", {"min_n": 5, "max_n": 4}),
    ("binary_matrix", {"bogus_key": 1}),
]


def refused(r):
    """The tool refuses an item (or the whole config) with a one-line reason: an {"error"}
    line for the item, or a non-zero exit naming the config."""
    lines = r.stdout.splitlines()
    if r.returncode != 0:
        return bool(r.stderr.strip())
    return len(lines) == 1 and json.loads(lines[0]).get("error", "").strip() != ""


@pytest.mark.parametrize("task,config", BAD_CONFIGS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(BAD_CONFIGS)])
def test_bad_configs(task, config):
    # The first item at which the package raises (0 when its config validation does): the
    # C generator must make the items before it, identical, and refuse that one.
    first_bad = None
    try:
        ds = rg.create_dataset(task, seed=5, size=40, **config)
        good = []
        for i in range(40):
            good.append(json.loads(json.dumps(ds[i])))
    except Exception:
        first_bad = len(good) if "good" in locals() else 0
    assert first_bad is not None, f"reasoning_gym accepted {config}: the test's premise is wrong"
    if first_bad:
        assert c_items(task, json.dumps(config), 5, first_bad) == good
    r = tool("gen", task, json.dumps(config), "5", str(first_bad), "1")
    assert refused(r), f"C generator accepted item {first_bad} of {config}"


def test_configs_that_hang_python_are_refused():
    # The package loops forever on these (a second base never differs; no date but January 1).
    for task, config in [("base_conversion", {"min_base": 7, "max_base": 7}),
                         ("calendar_arithmetic", {"offset_upper_bound": 0, "tasks": ["weekday_of_date_from_first_date"]})]:
        r = tool("gen", task, json.dumps(config), "1", "0", "1")
        assert refused(r), f"C generator accepted {config}"


# Random junk built from the characters each verifier cares about. For binary_matrix the
# alphabet has no letters but the string/number prefixes and no operators but unary ones,
# so eval() of any of these can only build literals.
JUNK_ALPHABETS = {
    "base_conversion": "01aZ \n\té→",
    "fraction_simplification": "0123/\\fracdFRAC{}$ \t\n_+-٣\u00a0.",
    "calendar_arithmetic": "0123456789MondayTUESfriſ \t\n_+-٣\u3000",
    "binary_matrix": "[](),0123 \n\t'\"-+~_xXobB#\\\rrRuUTrueFalsN.\f\x0b",
}


@pytest.mark.parametrize("task", TASKS)
def test_junk_answers(task):
    config = preset_config(task, "paper")
    ds, items = compare_items(task, "paper", config, seed=99, count=60)
    rnd = random.Random(12345)
    alphabet = JUNK_ALPHABETS[task]
    answer_lists = []
    for e in items:
        answers = []
        for _ in range(100):
            k = rnd.randint(0, 24)
            answers.append("".join(rnd.choice(alphabet) for _ in range(k)))
        # Also mutate a well-formed answer, which keeps the junk near the interesting cases.
        cand = importlib.import_module(f"rg_candidates_{task}").candidates(e)
        for _ in range(100):
            s = list(rnd.choice(cand))
            for _ in range(rnd.randint(1, 3)):
                op = rnd.randint(0, 2)
                pos = rnd.randint(0, len(s))
                if op == 0:
                    s.insert(pos, rnd.choice(alphabet))
                elif s and pos < len(s):
                    if op == 1:
                        del s[pos]
                    else:
                        s[pos] = rnd.choice(alphabet)
            answers.append("".join(s))
        answer_lists.append(answers)
    compare_scores(task, "junk", ds, items, answer_lists)


# Where the C verifier knowingly differs from eval(): expressions that compute a matrix.
# Python gives 0.1, the literal-only reader 0 (see task_binary_matrix.c).
def test_binary_matrix_known_divergences():
    ds = rg.create_dataset("binary_matrix", seed=1, size=1, min_n=2, max_n=2, p_zero=0.5)
    entry = json.loads(json.dumps(ds[0]))
    sol = entry["metadata"]["solution"]
    assert sol == [[0, 1], [1, 0]]
    cases = [
        "[[0, 1], [1, 0]] * 1",               # operators other than + and -
        "[[0, 9223372036854775807 + 1 - 9223372036854775807], [1, 0]]",  # ints past 64 bits
        "[[0, " + "-" * 1001 + "-1], [1, 0]]",  # more than 1000 operators
        "[[0, 1], [1, 0]][:]",                # subscripts
        "[[[0, 1], [1, 0]]][0]",
        "list([[0, 1], [1, 0]])",             # names and calls
        "[[0, int(True)], [1, 0]]",
        "[[0, 1], [1, 0]] if 1 else 0",       # conditionals
        "[[0 if 1 else 1, 1], [1, 0]]",
        "[[*[0, 1]], [1, 0]]",                # unpacking
        "[[x for x in (0, 1)], [1, 0]]",      # comprehensions
        "[[f'{0} {1}\\n1 0']]",              # f-string replacement fields
        "[['\\N{DIGIT ZERO} 1\\n1 0']]",     # \N{...} escapes
    ]
    cs = c_scores("binary_matrix", [entry], [cases])[0]
    for a, s in zip(cases, cs):
        expect, _ = py_score(ds, a, entry)
        assert expect == 0.1, f"{a!r}: python gave {expect}, the premise of this test is wrong"
        assert s == 0.0, f"{a!r}: C gave {s}"
        print(f"known divergence: {a!r}: python {expect}, C {s}")


# Hand-made corners of Python's tokenizer and literal syntax, scored against a 1x1 oracle
# ("0") and a 2x2 one ("0 0\n0 0"): every one must score as eval() makes it score.
TRICKY_1x1 = [
    "0", "'0'", '"0"', "['0']", "[[0]]", "[['0']]", "[[0,],]", "[[0]],", "((0,),)", "[(0,)]", "[0]", "[0],",
    "[[00]]", "[[0_0]]", "[[0x0]]", "[[0X_0]]", "[[0o0]]", "[[0b0]]", "[[0b_0]]", "[[-0]]", "[[+0]]", "[[~-1]]",
    "[[- - 0]]", "[[+False]]", "[[-False]]", "[[False]]", "[[None]]", "[[0.]]", "[[0e0]]", "[[0j]]", "[[01]]",
    "[[0_]]", "[[0__0]]", "[[0x]]", "[[0b2]]", "[[0o8]]", "[[0l]]", "[[0 ]]", "[ [ 0 ] ]",
    "[b'\\x00']", "[b'\\0']", "[b'\\000']", "[b'\\400']", "[b'\\x0']", "[B'\\x00']", "[rb'\\x00']", "[b'\\N{x}']",
    "'\\x30'", "'\\60'", "'\\060'", "'\\u0030'", "'\\U00000030'", "'\\U00110000'", "'\\u003'", "'\\N{DIGIT ZERO}x'",
    "r'0'", "R'0'", "u'0'", "U'0'", "f'0'", "F'\\x30'", "rf'0'", "f'{{0}}'", "f'0' '0'", "rb'0'", "bR'0'", "ur'0'", "'0' '0'", "'0' b'0'", "['0' '']",
    "[['' '0']]", "'''0'''", '"""0"""', "''''0'''", "'\\\n0'", "'0\\\n'", "[[0]]#", "[[0]] # x", "#x\n[[0]]",
    "\n[[0]]", "\n\n[[0]]\n\n", " \n[[0]]", "\t[[0]]", " \t [[0]]", "\f[[0]]", "\f [[0]]", "[[0]]\n ", "[[0]]\n\t",
    "[[0]]\n\f", "[[0]]\n  # c", "[[0]]\n\\\n", "[[0]] \\\n ", "\\\n[[0]]", " \\\n[[0]]", "\\\n [[0]]",
    "[[0]]\\", "[[0]]\\ ", "[[\\\n0]]", "[[0\n]]", "[\n[0]\n]", "[[0]]\r", "[[0]]\r\n", "\r\n[[0]]", "'0\r'",
    "'''0\r'''", "[[0]]\x0b", "[\x0b[0]]", "[[0]]\x00x" [:5], "[[0]] [[0]]", "[[0]]\n[[0]]", "[[0]];", "[[0]])",
    "[[0]]]", "([[0]]", "[[0)]", "[(0])", "[]", "()", "''", "b''", "[[]]", "[()]", "[[(0)]]", "[[((0))]]",
    "[[(0,)]]", "[[0], 0]", "[['0', '']]", "[['', '0']]", "['0 ']", "[' 0']", "'\u00e9'", "['\u0660']", "[[\u0660]]",
    "[[０]]", "-[[0]]", "+'0'", "~[[0]]", "--[[0]]", "[[-'0']]", "((((((((((0))))))))))",
    "(" * 198 + "[[0]]" + ")" * 198, "(" * 199 + "[[0]]" + ")" * 199, "[[" + "-" * 1000 + "0]]",
    "[[" + "~" * 998 + "0]]", "[[" + "1" * 30 + "]]", "[[" + "0" * 5000 + "]]", "[[0x" + "f" * 40 + "]]",
    "[[-9223372036854775808]]", "[[--9223372036854775808]]", "[[~9223372036854775807]]", "[[0]]\x1c",
    "[[0]]\u00a0", "\u00a0[[0]]", "[[0]]\u2028", "\ufeff[[0]]", "[[0]]\\\r\n", "[[0]]\\\r",
    "[[1-1]]", "[[True-True]]", "[[--0+-0]]", "[[0]]+[]", "[]+[[0]]", "[[0]+[]]", "[['0'+'']]", "['0'+'']",
    "[[b''+b'']]", "[b'\\0'+b'']", "[b'\\0'+'']", "[[0]]-[]", "[[0]]+([0],)", "[[0]]+", "+[[0]]", "[[0 - - 0]]",
    "[[1 -1]]", "[[1-\n1]]", "([[1-\n1]])", "[[0]] + \\\n []", "[[2-1-1]]", "[[1-(1)]]", "[[1-(1,)]]",
    "[[9223372036854775807-9223372036854775807]]",
    "[[-9223372036854775807-1+9223372036854775807+1]]", "[[''+0]]", "[[True+True-2]]", "[[None+0]]",
    "[[" + "+0" * 999 + "]]", "[[0" + "+0" * 999 + "]]",
]
TRICKY_2x2 = [
    "[[0,0],[0,0]]", "([0,0],[0,0])", "[0,0],[0,0]", "[0,0],[0,0],", "[0,0],\n[0,0]",
    "([0,0],\n[0,0])", "['00', '00']", "['0 0', '0 0']", "[['0 0'], ['0 0']]", "[['0 0\\n0 0']]", "['0 0\\n0 0']",
    "'0 0\\n0 0'", "[b'\\0\\0', b'\\x00\\x00']", "[b'\\0\\0', '00']", "[(0,0),'00']", "[[0,0],[0,0],]",
    "[[0,0],[0,0]],", "[[0,0],[0,0]]\n", "[[0, 0], [0, 0]] # two rows", "[\n  [0, 0],\n  [0, 0],\n]",
    "[\n  [0, 0], # a\n\n  [0, 0]  # b\n]", "[[0,0]\n,[0,0]]", "[[0,0],[0,0]", "[[0,0],,[0,0]]", "[,[0,0]]",
    "[[0 0],[0 0]]", "[[0;0],[0;0]]", "{0: [0, 0], 1: [0, 0]}", "[{0, 0}, {0, 0}]",
    "[[0,0]] + [[0,0]]", "[[0,0],[0,0]] + []", "[[0,0]] + [(0,0)]", "([0,0],) + ([0,0],)", "[[0,0]] + ([0,0],)",
    "['0 0'] + ['0 0']", "'0 0' + '\\n0 0'", "[[0,0]] - [[0,0]]", "[[1-1, 0], [0, True-1]]", "[[0]+[0], [0, 0]]",
    "[[False, 0], [0, 0]]", "[['0', 0], [0, '0']]", "[[r'0', u'0'], [b'0'[0] , 0]]", "['0''0', '0' \"0\"]",
    "['''00''', \"\"\"00\"\"\"]", "['0\\\n0', '00']", "[[0x0, 0o0], [0b0, 00]]", "[[-0, +0], [~-1, --0]]",
]


@pytest.mark.parametrize("n,cases", [(1, TRICKY_1x1), (2, TRICKY_2x2)])
def test_binary_matrix_tricky(n, cases):
    ds = rg.create_dataset("binary_matrix", seed=1, size=1, min_n=n, max_n=n, p_zero=1.0)
    entry = json.loads(json.dumps(ds[0]))
    assert entry["answer"] == ("0" if n == 1 else "0 0\n0 0")
    compare_scores("binary_matrix", f"tricky{n}", ds, [entry], [cases])
