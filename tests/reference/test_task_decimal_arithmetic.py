"""decimal_arithmetic (src/tasks/task_decimal_arithmetic.c) against reasoning_gym 0.1.25.
Generation: item-for-item equality (question, answer, metadata) at the paper preset (1000
items), small and tiny (500 each), and configs that reach the other paths: the package
defaults (precision 12), integer literals (0 decimal places), literals whose float repr
differs from their text (10..17 places, precision 25), one term, many terms, low precision
(scientific-notation answers), and items on which the package raises (0 terms drawn,
negative places, division by a zero group) -- C must refuse exactly those. Scoring: >= 20
candidates per entry (rg_candidates_decimal_arithmetic.py) at the paper, small and tiny
presets and one custom config, |diff| <= 1e-9, against the package's scorer as rl-swarm
calls it -- get_score_answer_fn(name), a dataset with the default config (tolerance 10^-3)
-- in the decimal context the package's own generation leaves behind (the generating
dataset's precision); at the paper preset also against that dataset's own score_answer."""
import decimal
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arith_refcheck as rc  # noqa: E402

rg = pytest.importorskip("reasoning_gym")

TASK = "decimal_arithmetic"
SEED = 20250917

PAPER_RL_SWARM = dict(min_terms=2, max_terms=6, min_num_decimal_places=1, max_num_decimal_places=3, precision=5)

VARIANTS = [
    {},
    dict(min_num_decimal_places=0, max_num_decimal_places=2, precision=4),
    dict(min_num_decimal_places=10, max_num_decimal_places=17, precision=25, max_terms=4),
    dict(min_num_decimal_places=4, max_num_decimal_places=8, precision=10),
    dict(min_terms=1, max_terms=1),
    dict(min_terms=8, max_terms=12, precision=3, min_num_decimal_places=0, max_num_decimal_places=1),
    dict(min_terms=0, max_terms=3, precision=4, min_num_decimal_places=-1, max_num_decimal_places=2),
    dict(min_terms=4, max_terms=6, min_num_decimal_places=0, max_num_decimal_places=0, precision=2),
]


def test_presets():
    assert rc.preset(TASK, "paper") == PAPER_RL_SWARM
    for name in ("small", "tiny"):
        rg.create_dataset(TASK, seed=1, size=1, **rc.preset(TASK, name))


def test_generation_paper():
    _, _, n = rc.compare_items(TASK, PAPER_RL_SWARM, SEED, 0, 1000, label="paper")
    assert n["equal"] + n["raised"] == 1000 and n["equal"] >= 990


@pytest.mark.parametrize("name,seed", [("small", SEED + 1), ("tiny", SEED + 2)])
def test_generation_small_presets(name, seed):
    _, _, n = rc.compare_items(TASK, rc.preset(TASK, name), seed, 0, 500, label=name)
    assert n["equal"] + n["raised"] == 500


@pytest.mark.parametrize("k", range(len(VARIANTS)))
def test_generation_variants(k):
    cfg = VARIANTS[k]
    for seed in (-7 + k, 2 ** 40 + 3 * k):
        _, _, n = rc.compare_items(TASK, cfg, seed, 0, 300)
        assert n["timeouts"] == 0


def test_generation_raises_somewhere():
    """The error path is exercised: division by an exact-zero group raises in both."""
    cfg = dict(min_terms=3, max_terms=6, min_num_decimal_places=0, max_num_decimal_places=0, precision=2)
    _, _, n = rc.compare_items(TASK, cfg, 11, 0, 2000)
    assert n["raised"] > 0


SCORE_CONFIGS = [("paper", SEED), ("small", SEED + 1), ("tiny", SEED + 2),
                 (dict(min_num_decimal_places=0, max_num_decimal_places=6, precision=9, max_terms=8), SEED + 3)]


@pytest.mark.parametrize("k", range(len(SCORE_CONFIGS)))
def test_scores(k):
    cfg, seed = SCORE_CONFIGS[k]
    if isinstance(cfg, str):
        cfg = rc.preset(TASK, cfg)
    ds, entries, _ = rc.compare_items(TASK, cfg, seed, 0, 500)

    def context_after_generation():
        # What the package's own generation leaves in the thread's decimal context.
        decimal.getcontext().prec = cfg["precision"]

    scorers = [rg.get_score_answer_fn(TASK)] + ([ds.score_answer] if cfg == PAPER_RL_SWARM else [])
    for scorer in scorers:
        pairs = rc.compare_scores(TASK, scorer, entries, before_score=context_after_generation)
        assert pairs >= 20 * len(entries)
