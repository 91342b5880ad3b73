"""basic_arithmetic (src/tasks/task_basic_arithmetic.c) against reasoning_gym 0.1.25.
Generation: item-for-item equality (question, answer, metadata) at the paper preset (1000
items), small and tiny (500 each), and configs that reach the other code paths (no_space /
random whitespace, simple format, the chain mode without parentheses, no negation, only
* and /, only / (the package raises IndexError on some items: C must refuse the same ones),
operators as a string, duplicates, 8 digits, one term). An item on which the package runs
past 5 s (its divisor loop, for gcds near 10^19) is redone with an equivalent fast divisor
list swapped in (itself checked against the package's function in
test_generation_heavy_divisors, which also runs 20 000 paper items that way). Scoring: >= 20 candidates per entry (from
rg_candidates_basic_arithmetic.py) at the paper and small presets, |diff| <= 1e-9."""
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arith_refcheck as rc  # noqa: E402

rg = pytest.importorskip("reasoning_gym")
import reasoning_gym.arithmetic.basic_arithmetic as ba  # noqa: E402

TASK = "basic_arithmetic"
SEED = 20250917

PAPER_RL_SWARM = dict(min_terms=2, max_terms=6, min_digits=1, max_digits=4, operators=["+", "-", "*", "/"],
                      allow_parentheses=True, allow_negation=True, format_style="natural", whitespace="single")

VARIANTS = [
    dict(PAPER_RL_SWARM, whitespace="no_space"),
    dict(PAPER_RL_SWARM, whitespace="no_space", max_digits=1),
    dict(PAPER_RL_SWARM, whitespace="random"),
    dict(PAPER_RL_SWARM, format_style="simple", allow_negation=False),
    dict(PAPER_RL_SWARM, allow_parentheses=False),
    dict(min_terms=2, max_terms=6, min_digits=1, max_digits=3, allow_parentheses=False, operators=["/", "*"]),
    dict(PAPER_RL_SWARM, operators=["*", "/"]),
    dict(PAPER_RL_SWARM, operators=["/"]),
    dict(PAPER_RL_SWARM, operators="+-/"),
    dict(PAPER_RL_SWARM, operators=["+", "+", "/", "-"]),
    dict(min_terms=2, max_terms=4, min_digits=5, max_digits=8),
    dict(min_terms=1, max_terms=1),
    {},
]


def test_presets():
    assert rc.preset(TASK, "paper") == PAPER_RL_SWARM
    for name in ("small", "tiny"):
        cfg = rc.preset(TASK, name)
        rg.create_dataset(TASK, seed=1, size=1, **cfg)  # the package accepts it


def test_generation_paper():
    _, _, n = rc.compare_items(TASK, PAPER_RL_SWARM, SEED, 0, 1000, label="paper", slow_fallback=with_fast_divisors)
    assert n["equal"] == 1000


@pytest.mark.parametrize("name,seed", [("small", SEED + 1), ("tiny", SEED + 2)])
def test_generation_small_presets(name, seed):
    _, _, n = rc.compare_items(TASK, rc.preset(TASK, name), seed, 0, 500, label=name)
    assert n["equal"] == 500


@pytest.mark.parametrize("k", range(len(VARIANTS)))
def test_generation_variants(k):
    cfg = VARIANTS[k]
    for seed in (-7 + k, 2 ** 40 + 3 * k):
        _, _, n = rc.compare_items(TASK, cfg, seed, 0, 200, slow_fallback=with_fast_divisors)
        assert n["timeouts"] == 0


def with_fast_divisors(ds, i):
    """ds[i] with find_common_divisors swapped for fast_common_divisors (same list)."""
    pytest.importorskip("sympy")
    slow = ba.find_common_divisors
    ba.find_common_divisors = fast_common_divisors
    try:
        return ds[i]
    finally:
        ba.find_common_divisors = slow


def fast_common_divisors(a, b):
    """find_common_divisors(a, b) without the sqrt(gcd) loop: same list, same order."""
    import math

    import sympy
    g = math.gcd(a, b)
    small = [d for d in sympy.divisors(g) if d * d <= g]
    out = []
    for d in small:
        out.append(d)
        if d * d != g:
            out.append(g // d)
    return out


def test_generation_heavy_divisors(monkeypatch):
    pytest.importorskip("sympy")
    rng = random.Random(5)
    for _ in range(300):
        a = rng.randrange(-10 ** rng.randrange(1, 9), 10 ** rng.randrange(1, 9))
        b = rng.choice([0, rng.randrange(-10 ** 8, 10 ** 8)])
        if a or b:
            assert fast_common_divisors(a, b) == ba.find_common_divisors(a, b), (a, b)
    monkeypatch.setattr(ba, "find_common_divisors", fast_common_divisors)
    # Seed 300000 holds items whose gcd reaches 2.1e19 (the package alone needs minutes).
    _, _, n = rc.compare_items(TASK, PAPER_RL_SWARM, 300000, 0, 20000, time_limit=30, label="paper, fast divisors")
    assert n["timeouts"] == 0 and n["equal"] + n["raised"] == 20000


def test_scores_paper_and_small():
    ds, entries, _ = rc.compare_items(TASK, PAPER_RL_SWARM, SEED, 0, 500, label="paper")
    pairs = rc.compare_scores(TASK, ds.score_answer, entries)
    cfg = rc.preset(TASK, "small")
    ds2, entries2, _ = rc.compare_items(TASK, cfg, SEED + 1, 0, 500, label="small")
    pairs += rc.compare_scores(TASK, rg.get_score_answer_fn(TASK), entries2)
    assert pairs >= 20 * (len(entries) + len(entries2))
