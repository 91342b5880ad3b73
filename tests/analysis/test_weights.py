"""The weights study's report (analysis.weights), checked against hand-computed values on synthetic
summaries (synthetic_specialists.write_summary) with planted effects. Non-specialty pass@1 over the
last five evaluations is 0.08 + 0.003 s + E (synthetic_specialists):

- the specialist study's runs (--clean-dir): spec_silo 8/0 E = 0 (the silo of both networks),
  spec_ratio1 and spec_positive_only as synthetic_specialists plants them (spec_positive_only is
  sapo_best here: --best positive_only), spec_ftis present and ignored;
- this study's runs: clean_diloco E = 0.03 + 0.002 (-1)^s with 50,000 bytes sent per node and
  round (30 rounds: 1.5 MB), every node holding the same weights (weights_distinct 1); the other
  arms E = 0.004 (-1)^s (no effect) and 10,000 bytes a round, noloco_sapo 300,000 more on each
  outer step's round (weights); sync.every = 10, and sync_peers 7 (diloco) or 1 (noloco) on the
  outer steps' rounds, 0 on the others; hard_diloco E = 0.03 - 0.02 = 0.01
  (+ 0.002 (-1)^s) and its own reward 0.002 lower per node and round;
- every hard run's config sets the hard network's keys, except hard_noloco seed 3 (net.drop =
  0.5): a warning; hard_noloco_sapo seed 4 is missing.
"""
import numpy as np
import pytest

from synthetic_specialists import D, E, write_summary
from analysis.errors import AnalysisError
from analysis.weights import ARMS, FROM_SPECIALISTS, HARD, NETS, PRIMARY, SECONDARY, SPLIT, Study, build, main, \
    skill_per_byte
from analysis.paired import holm

SEEDS = (1, 2, 3, 4)
MISSING = "hard_noloco_sapo-4L4E-s4"
WRONG = "hard_noloco-8L0E-s3"  # its config says net.drop = 0.5


def e_of(net, arm, s):
    if arm == "diloco":
        return (0.03 if net == "clean" else 0.01) + 0.002 * (-1) ** s
    return 0.004 * (-1) ** s


def write_clean(folder, numerics=2):
    folder.mkdir(parents=True, exist_ok=True)
    for s in SEEDS:
        write_summary(str(folder / f"spec_silo-8L0E-s{s}.npz"), "spec_silo", "8L0E", s, numerics,
                      columns={"bytes_sent": np.zeros(30)})
        for arm in ("ratio1", "positive_only", "ftis"):
            write_summary(str(folder / f"spec_{arm}-4L4E-s{s}.npz"), f"spec_{arm}", "4L4E", s, numerics,
                          config={"grpo.external": arm}, columns={"bytes_sent": np.full(30, 4000.0)})
    return folder


def write_weights(folder, omit=(MISSING,), numerics=2):
    folder.mkdir(parents=True, exist_ok=True)
    for net in NETS:
        for arm in ARMS:
            if (net, arm) in FROM_SPECIALISTS:
                continue
            for s in SEEDS:
                name = f"{net}_{arm}-{SPLIT[arm]}-s{s}"
                if name in omit:  # a planted missing run, not a skipped test
                    continue
                config = dict(HARD) if net == "hard" else {}
                if name == WRONG:
                    config["net.drop"] = "0.5"
                if arm in ("diloco", "noloco", "noloco_sapo"):
                    config["sync.method"] = "diloco" if arm == "diloco" else "noloco"
                    config["sync.every"] = "10"
                if arm.startswith("sapo") or arm == "noloco_sapo":
                    config["grpo.external"] = "ratio1" if arm == "sapo_ratio1" else "positive_only"
                cols = {"bytes_sent": np.full(30, 50000.0 if arm == "diloco" else 10000.0)
                        + (np.arange(30) % 10 == 9) * (300000.0 if arm == "noloco_sapo" else 0.0),
                        "weights_distinct": np.full(30, 1.0 if arm == "diloco" else 2.0),
                        # peers logged on the outer steps' rounds (9, 19, 29) only, 0 between
                        "sync_peers": np.where(np.arange(30) % 10 == 9, 7.0 if arm == "diloco" else 1.0, 0.0)}
                write_summary(str(folder / f"{name}.npz"), f"{net}_{arm}", SPLIT[arm], s, numerics,
                              e=e_of(net, arm, s), d=-0.002 if (net, arm) == ("hard", "diloco") else 0.0,
                              columns=cols, config=config)
    return folder


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("weights")
    write_clean(d / "clean")
    write_weights(d / "w")
    (d / "costs.csv").write_text("run,seconds,status,commit,numerics\nclean_diloco-8L0E-s1,1800,done,abc1234,2\n")
    build(str(d / "w"), str(d / "out"), str(d / "clean"), "positive_only", costs=str(d / "costs.csv"), machine="test")
    return (d / "out" / "REPORT.md").read_text(), d


def row(text, start):
    return [c.strip() for c in next(line for line in text.splitlines() if line.startswith(start)).split("|")]


def test_planted_effects(report):
    text, d = report
    r = row(text, "| nonspec: clean_diloco vs clean_silo |")
    # the silo: 0.08 + 0.003 s over s = 1..4: 0.0875
    assert r[3] == "4" and float(r[4]) == pytest.approx(0.0875, abs=0.0006) and r[5] == "+0.030"
    assert r[10] == "0.125"  # the exact sign-flip p of 4 agreeing seeds
    assert "significant after Holm" in r[12]
    assert row(text, "| nonspec: hard_diloco vs hard_silo |")[5] == "+0.010"
    assert row(text, "| own: hard_diloco vs hard_silo |")[5] == "-0.5"  # 240 x 0.002 = 0.48
    # sapo_best is the specialist study's spec_positive_only: 0.02 + 0.002 (s - 3.5), mean 0.018
    # over seeds 1-4; spec_ratio1 0.03 + 0.002 (s - 3.5), mean 0.028
    assert row(text, "| nonspec: clean_sapo_best vs clean_silo |")[5] == "+0.018"
    assert row(text, "| nonspec: clean_sapo_ratio1 vs clean_silo |")[5] == "+0.028"
    # against sapo_best: diloco 0.03 - 0.018 (clean); noloco 0 - 0.018
    assert row(text, "| nonspec: clean_diloco vs clean_sapo_best |")[5] == "+0.012"
    assert row(text, "| nonspec: clean_noloco vs clean_sapo_best |")[5] == "-0.018"
    # the missing run and the wrong config: warnings, fewer seeds, no crash
    assert f"missing (1): {MISSING}.npz\n" in text + "\n"  # gathered in one line
    assert row(text, "| nonspec: hard_noloco_sapo vs hard_silo |")[3] == "3"
    assert "31 of the 32 planned runs of this study are in" in text
    assert f"{WRONG}.npz: net.drop = 0.5, the plan's hard_noloco sets 0.3" in text
    assert text.count("the plan's") == 1 and "costs.csv: 1 run, 0.5 hours" in text
    assert "**Interim: 31 of the 32" in text


def test_families_and_holm_over_16(report):
    text, d = report
    assert len(PRIMARY) == 16 and len(SECONDARY) == 16 and len({c[0] for c in PRIMARY + SECONDARY}) == 32
    study = Study(str(d / "w"), str(d / "clean"), "positive_only", SEEDS, 5)
    for family, title, end in ((PRIMARY, "## The primary family", "## The secondary family"),
                               (SECONDARY, "## The secondary family", "![paired changes]")):
        part = text[text.index(title):text.index(end)]
        assert "Holm over all 16 (16 with a p" in part
        adj = holm({n: study.compare(m, a, sa, b, sb)["p"] for n, m, a, sa, b, sb in family})
        assert len(adj) == 16
        for name, (want, _) in adj.items():
            assert row(part, f"| {name} |")[9] == ("<0.001" if want < 0.001 else f"{want:.3f}")


def test_bytes_and_skill_per_byte(report):
    text, d = report
    study = Study(str(d / "w"), str(d / "clean"), "positive_only", SEEDS, 5)
    mean, lo, hi, n = skill_per_byte(study, "clean", "diloco")
    # per seed (0.03 + 0.002 (-1)^s) / 1.5 MB: mean 0.02, spread 0.002 / 1.5
    diffs = [(0.03 + 0.002 * (-1) ** s) / 1.5 for s in SEEDS]
    assert n == 4 and mean == pytest.approx(np.mean(diffs), abs=1e-9) and lo < mean < hi
    r = row(text, "| clean_diloco | 8L0E | 4 |")
    assert r[7].startswith("50000") and r[9].startswith("1.50") and r[10].startswith(f"{mean:+.5f} [")
    assert r[8].startswith("0 ")  # the same bytes on every round: none of them told apart as weights
    assert row(text, "| clean_silo | 8L0E | 4 |")[10] == "–"  # nothing it sends is read: no ratio
    # noloco_sapo: 10,000 bytes a round plus 300,000 on each outer step's round (3 of 30)
    r = row(text, "| clean_noloco_sapo | 4L4E | 4 |")
    assert r[7].startswith("40000 ") and r[8].startswith("30000 ")
    assert row(text, "| clean_sapo_best | 4L4E | 4 |")[8].startswith("0 ")  # no weight sync
    # every node holds the same weights in every round under clean diloco, never under noloco
    assert row(text, "| clean_diloco | 4 |")[-2].startswith("1.00")
    assert row(text, "| clean_noloco | 4 |")[-2].startswith("0.00")
    # sync_peers per outer step (rounds 9, 19, 29 of sync.every = 10), not per round (0.70)
    assert row(text, "| clean_diloco | 4 |")[3].startswith("7.00 ")
    assert row(text, "| hard_noloco | 4 |")[3].startswith("1.00 ")
    assert (d / "out" / "fig_bytes.png").stat().st_size > 0 and (d / "out" / "fig_changes.png").stat().st_size > 0


def test_no_runs_mixed_numerics_and_arguments(tmp_path, capsys):
    clean = write_clean(tmp_path / "clean")
    (tmp_path / "empty").mkdir()
    build(str(tmp_path / "empty"), str(tmp_path / "o"), str(clean), "positive_only")
    text = (tmp_path / "o" / "REPORT.md").read_text()
    assert "**No runs are in yet.**" in text and "0 of the 32 planned runs" in text
    w = write_weights(tmp_path / "w", omit=(), numerics=3)
    with pytest.raises(AnalysisError, match="numerics"):
        Study(str(w), str(clean), "positive_only", SEEDS, 5)
    assert main([str(w), "-o", str(tmp_path / "o2"), "--clean-dir", str(clean)]) == 1
    assert "--best" in capsys.readouterr().err
    assert main([str(w), "-o", str(tmp_path / "o2"), "--clean-dir", str(clean), "--best", "ratio1"]) == 1
    assert "expected one of positive_only, tis, ftis" in capsys.readouterr().err


def test_sapo_best_follows_the_declaration(tmp_path):
    clean = write_clean(tmp_path / "clean")
    w = write_weights(tmp_path / "w")
    study = Study(str(w), str(clean), "ftis", SEEDS, 5)
    # clean_sapo_best is spec_ftis now (synthetic E 0.01 + 0.001 (s - 3.5), mean 0.009) and the runs that set
    # grpo.external = positive_only are not the plan's
    vals = study.values("clean_sapo_best", "4L4E", "nonspec")
    assert np.mean([vals[s] - 0.08 - 0.003 * s for s in SEEDS]) == pytest.approx(0.009, abs=1e-9)
    assert any("grpo.external = positive_only, the plan's hard_sapo_best sets ftis" in x for x in study.warnings)
    assert E("spec_silo", "8L0E", 1) == 0 and D("spec_silo", 1) == 0


def test_shortfall_share_counts_nodes_short_per_round():
    from analysis.summarize import shortfall_share
    short = np.array([[0.0, 2.0, np.nan, np.nan], [1.0, 0.0, 0.0, np.nan], [0.0, 4.0, 3.0, np.nan]])
    got = shortfall_share(short)
    assert got[:3].tolist() == [1 / 3, 2 / 3, 0.5] and np.isnan(got[3])



def test_summaries_made_from_node_logs_carry_the_shortfall_share(tmp_path):
    import h5py
    from synthetic_runs import write_run
    from analysis.runs import load_summary
    from analysis.summarize import main as summarize
    write_run(str(tmp_path / "r"), np.full((2, 10), 0.3))
    with h5py.File(str(tmp_path / "r" / "node_0001.h5"), "a") as f:
        f["shortfall"][:] = np.where(np.arange(10) < 4, 2.0, 0.0)
    assert summarize([str(tmp_path / "r"), "-o", str(tmp_path / "s")]) == 0
    share = load_summary(str(tmp_path / "s" / "r.npz")).node_mean["shortfall_share"]
    assert share.tolist() == [0.5] * 4 + [0.0] * 6


def test_weights_distinct_counts_digests_per_round():
    from analysis.summarize import weights_distinct
    digests = np.array([[7, 7, -3], [7, 9, -3], [7, 9, 5]], dtype=np.int64)  # 3 nodes x 3 rounds
    assert weights_distinct(digests).tolist() == [1.0, 2.0, 2.0]
