"""The network study's report (analysis.network), checked against hand-computed values on synthetic
summaries (synthetic_specialists.write_summary) with planted effects:

- clean runs (the specialist study's): spec_ratio1 and spec_positive_only as synthetic_specialists
  plants them; spec_ftis's non-specialty offset E = 0.002 + 0.01 (-1)^s (clean - silo not
  distinguishable from 0: its survival ratio is unbounded); spec_silo 8/0 E = 0.
- network runs COND_ARM: the clean arm's E + 0.004 (-1)^s (no effect over seeds 1-4), except
  lat32_ratio1: the clean E - 0.015 in every seed, and its own reward 0.002 per node and round
  lower (240 x 0.002 = 0.48 cumulative). slow4: nodes 0 and 5 a further -0.01.
- the mean external age per round: lat4 4, lat32 32, the others 0.5 / 1.5 alternating; the F-TIS
  drop rate of the ftis arms 0.1 + 0.01 age; shortfall drop50 0.5, others 0.
- every run's config sets its condition's keys (node.0 and node.5's net.slowdown for slow4), except
  lat4_ftis seed 2's (net.latency = 8): a warning.
- drop50_positive_only seed 4 is missing.
"""
import numpy as np
import pytest

from synthetic_specialists import D, E, ROUNDS, write_summary
from analysis.errors import AnalysisError
from analysis.network import ARMS, CONDS, KEYS, PRIMARY, SECONDARY, Study, build, fieller, main
from analysis.paired import holm, t975

SEEDS = (1, 2, 3, 4)
MISSING = "drop50_positive_only-4L4E-s4"
WRONG = "lat4_ftis-4L4E-s2"  # its config says net.latency = 8


def clean_e(arm, s):
    return 0.002 + 0.01 * (-1) ** s if arm == "ftis" else E(f"spec_{arm}", "4L4E", s)


def write_clean(folder, numerics=2):
    folder.mkdir(parents=True, exist_ok=True)
    for s in SEEDS:
        write_summary(str(folder / f"spec_silo-8L0E-s{s}.npz"), "spec_silo", "8L0E", s, numerics)
        for arm in ARMS:
            write_summary(str(folder / f"spec_{arm}-4L4E-s{s}.npz"), f"spec_{arm}", "4L4E", s, numerics,
                          e=clean_e(arm, s))
    return folder


def write_network(folder, skip=(MISSING,), only=None):
    folder.mkdir(parents=True, exist_ok=True)
    t = np.arange(ROUNDS)
    for cond in CONDS:
        age = np.full(ROUNDS, {"lat4": 4.0, "lat32": 32.0}.get(cond, 0.0)) if cond.startswith("lat") else 0.5 + t % 2
        for arm in ARMS:
            for s in SEEDS:
                name = f"{cond}_{arm}-4L4E-s{s}"
                if name in skip or (only and name not in only):
                    continue
                hit = cond == "lat32" and arm == "ratio1"
                cols = {"external_age_mean": age, "external_age_min": age - 0.5, "external_age_max": age + 0.5,
                        "shortfall": np.full(ROUNDS, 0.5 if cond == "drop50" else 0.0),
                        "shortfall_share": np.full(ROUNDS, 0.25 if cond == "drop50" else 0.0)}
                if arm == "ftis":
                    cols["offpolicy_dropped"] = 0.1 + 0.01 * age
                if arm == "ratio1":  # what sapo logged before 2026-12-04 in a round without a loss token
                    cols["offpolicy_weight"] = cols["offpolicy_capped"] = np.where(t % 50 == 0, 0.0, np.nan)
                config = dict(KEYS[cond]) if name != WRONG else {"net.latency": "8"}
                write_summary(str(folder / f"{name}.npz"), f"{cond}_{arm}", "4L4E", s, config=config,
                              e=clean_e(arm, s) + (-0.015 if hit else 0.004 * (-1) ** s),
                              d=D(f"spec_{arm}", s) - (0.002 if hit else 0.0),
                              node_e={0: -0.01, 5: -0.01} if cond == "slow4" else None, columns=cols)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("net")
    write_clean(d / "clean")
    write_network(d / "net")
    (d / "costs.csv").write_text("run,seconds,status,commit,numerics\nlat4_ratio1-4L4E-s1,1800,done,abc1234,2\n"
                                 "lat4_ratio1-4L4E-s2,1800,done,abc1234,2\n")
    build(str(d / "net"), str(d / "out"), str(d / "clean"), costs=str(d / "costs.csv"), machine="test")
    return (d / "out" / "REPORT.md").read_text(), d


def row(text, start):
    return [c.strip() for c in next(line for line in text.splitlines() if line.startswith(start)).split("|")]


def test_planted_cost_of_the_network(report):
    text, d = report
    r = row(text, "| nonspec: lat32_ratio1 vs clean ratio1 |")
    # clean ratio1: 0.08 + 0.003 s + 0.03 + 0.002 (s - 3.5) over s = 1..4: 0.0875 + 0.028 = 0.1155
    assert r[3] == "4" and float(r[4]) == pytest.approx(0.1155, abs=0.0006) and r[5] == "-0.015"
    assert r[10] == "0.125"  # the exact sign-flip p of 4 agreeing seeds: 2/16
    assert r[6] == "[-0.015, -0.015]" and "significant after Holm" in r[12]
    assert row(text, "| own: lat32_ratio1 vs clean ratio1 |")[5] == "-0.5"  # 240 x 0.002 = 0.48
    # no effect planted elsewhere: +-0.004 alternating, mean 0
    r = row(text, "| nonspec: lat4_ftis vs clean ftis |")
    assert r[5] == "0.000" and "not significant" in r[12]
    # the missing run: a warning, three seeds, no crash
    assert f"missing (1): {MISSING}.npz\n" in text + "\n"  # gathered in one line
    assert row(text, "| nonspec: drop50_positive_only vs clean positive_only |")[3] == "3"
    assert "59 of the 60 planned network runs are in" in text
    assert text.startswith("# The network at learning scale (issue 36)\n\n**Interim: 59 of the 60 planned runs are in.**")
    # a run whose config is not its condition's: a warning, and only that one
    assert f"{WRONG}.npz: net.latency = 8, the plan's lat4 sets 4" in text
    assert text.count("the plan's") == 1 and "costs.csv: 2 runs, 1.0 hours" in text


def test_families_and_holm_over_30(report):
    text, d = report
    assert len(PRIMARY) == 30 and len(SECONDARY) == 30 and len({c[0] for c in PRIMARY + SECONDARY}) == 60
    assert {(a, b) for _, _, a, _, b, _ in PRIMARY} == {(f"{c}_{x}", f"spec_{x}") for c in CONDS for x in ARMS}
    assert {b for *_, b, sb in SECONDARY} == {"spec_silo"} and {sb for *_, sb in SECONDARY} == {"8L0E"}
    study = Study(str(d / "net"), str(d / "clean"), SEEDS, 5)
    for family, title, end in ((PRIMARY, "## The primary family", "## The secondary family"),
                               (SECONDARY, "## The secondary family", "## What survives")):
        part = text[text.index(title):text.index(end)]
        assert "Holm over all 30 (30 with a p" in part
        rows = [line for line in part.splitlines() if line.startswith(("| nonspec:", "| own:"))]
        assert len(rows) == 30
        adj = holm({n: study.compare(m, a, sa, b, sb)["p"] for n, m, a, sa, b, sb in family})
        assert len(adj) == 30
        for name, (want, _) in adj.items():
            assert row(part, f"| {name} |")[9] == ("<0.001" if want < 0.001 else f"{want:.3f}")
    # the secondary family: lat32_ratio1 against the silo, 0.028 - 0.015 = 0.013
    assert row(text, "| nonspec: lat32_ratio1 vs spec_silo 8/0 |")[5] == "+0.013"


def test_survival_fieller(report):
    text, d = report
    study = Study(str(d / "net"), str(d / "clean"), SEEDS, 5)
    b = np.array([0.03 + 0.002 * (s - 3.5) for s in SEEDS])  # clean ratio1 - silo
    a = b - 0.015
    s, lo, hi, n = fieller(a, b)
    assert n == 4 and s == pytest.approx(0.013 / 0.028, abs=1e-9)
    # the Fieller bounds are where the paired t test of a - S b sits exactly at the critical t
    for x in (lo, hi):
        dd = a - x * b
        assert abs(dd.mean()) / (dd.std(ddof=1) / 2) == pytest.approx(t975(3), rel=1e-6)
    assert lo < s < hi
    assert row(text, "| lat32 | ratio1 | 4 |")[4] == f"{s:.2f} [{lo:.2f}, {hi:.2f}]"
    # own reward: (2.28 - 0.48) / 2.28
    assert row(text, "| lat32 | ratio1 | 4 |")[5].startswith(f"{1.8 / 2.28:.2f} [")
    # clean ftis - silo: 0.002 +- 0.01, its interval includes 0: unbounded, and said so
    assert "unbounded" in row(text, "| lat4 | ftis | 4 |")[4]
    assert np.isinf(fieller([0.01, -0.01, 0.012, -0.008], [0.012, -0.008, 0.012, -0.008])[1])
    assert study.values("spec_ftis", "4L4E", "own")[1] == pytest.approx(240 * 0.051)


def test_slow_nodes_and_diagnostics(report):
    text, d = report
    slow = row(text, "| slow4_ratio1 | 4 |")
    assert float(slow[3].split()[0]) == pytest.approx(float(slow[4].split()[0]) - 0.01, abs=0.0015)
    diag = text[text.index("## Diagnostics"):]
    r = row(diag, "| lat32_ftis | 4 |")
    assert r[3].startswith("32.000") and r[4].startswith("31.500") and r[10].startswith("0.420")
    assert row(diag, "| drop50_ratio1 | 4 |")[6].startswith("0.500")
    assert row(diag, "| drop50_ratio1 | 4 |")[7].startswith("0.250")
    assert row(diag, "| drop50_ratio1 | 4 |")[8:11] == ["–"] * 3  # ratio1 weights nothing: no 0.000 shown
    assert row(diag, "| spec_ratio1 | 4 |")[7] == "–"  # summaries made before the share was kept
    # by age: lat32_ftis's 120 rounds at age 32 drop 0.42, lat4_ftis's at 4 drop 0.14
    assert row(diag, "| [32, 64) |")[2:5] == ["120", "0.800", "0.420"]
    assert row(diag, "| [4, 8) |")[2:5] == ["120", "0.800", "0.140"]
    assert row(diag, "| [0, 1) |")[2] == "180"
    for f in ("fig_survival.png", "fig_age.png"):
        assert (d / "out" / f).stat().st_size > 10000 and f"({f})" in text


def test_mixed_numerics_no_runs_and_cli(tmp_path):
    write_clean(tmp_path / "clean", numerics=1)
    write_network(tmp_path / "net", only={"lat4_ratio1-4L4E-s1"})
    with pytest.raises(AnalysisError, match="mix numerics versions"):
        build(str(tmp_path / "net"), str(tmp_path / "out"), str(tmp_path / "clean"))
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), "-o", str(tmp_path / "out2"), "--clean-dir", str(tmp_path / "clean")]) == 0
    text = (tmp_path / "out2" / "REPORT.md").read_text()
    assert "No runs are in yet" in text and "0 of the 60 planned runs" in text and "primary family" not in text
    assert main([str(tmp_path / "empty"), "-o", str(tmp_path / "out3")]) == 1  # --clean-dir is required
