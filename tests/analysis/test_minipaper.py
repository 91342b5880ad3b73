"""The mini-paper report (analysis.minipaper, analysis.paired) on synthetic summaries whose numbers
are written out in synthetic_summaries.py: paired differences and Student t intervals against
hand-computed values, p-values and Holm's correction within each family, significance wording,
learning from rounds 0-9, oscillation and band against white noise, figures from round 0,
missing / incomplete / substituted runs, the optional per-task evaluation, determinism, and
one-line errors for bad input."""
import math
import os
import subprocess
import sys

import pytest

from synthetic_runs import ROOT, table_rows
from synthetic_summaries import write_study
from analysis.figures import trailing_mean
from analysis.minipaper import build
from analysis.paired import (NO_PAIRS, NOT_SIGNIFICANT, SIGNIFICANT, UNTESTABLE, ci95, holm, mde, p_value, paired,
                             t975, trend)

T2 = 4.302652729911275  # t(0.975, 2) as scipy.stats.t.ppf gives it; closed form 0.95 / sqrt(2 x 0.975 x 0.025)


def p_df2(m):
    """Two-sided p of the paired t test of differences m - 1, m, m + 1 (sd 1, n = 3, t = m sqrt 3):
    with 2 degrees of freedom P(|T| >= t) = 1 - t / sqrt(2 + t^2)."""
    t = m * math.sqrt(3)
    return 1 - t / math.sqrt(2 + t * t)


# MDE of sd 1, n = 3: (t(0.975, 2) + t(0.8, 2)) / sqrt 3, t(0.8, 2) = 0.6 / sqrt(2 x 0.8 x 0.2) = 1.06066
MDE_SD1 = (T2 + 0.6 / math.sqrt(0.32)) / math.sqrt(3)  # 3.0965


def cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis.minipaper", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)




def section(text, start, end):
    i = text.index(start)
    return text[i:text.index(end, i + len(start))]


# ---- statistics ----------------------------------------------------------------------------

def test_t_quantiles():
    assert t975(2) == T2 and abs(T2 - 0.95 / math.sqrt(2 * 0.975 * 0.025)) < 1e-9 and abs(t975(2) - 4.303) < 5e-4
    assert abs(t975(1) - 12.706205) < 1e-6 and abs(t975(30) - 2.042272) < 1e-6
    assert abs(t975(1000) - 1.962339) < 1e-6 and abs(t975(31) - 2.039513) < 1e-6
    with pytest.raises(ValueError):
        t975(0)
    # the old table and expansion against scipy: tests/analysis/test_paired_scipy.py


def test_paired_differences_1_2_3():
    """Differences 1, 2, 3: mean 2, sd 1, half-width t(0.975, 2) / sqrt(3) = 4.303 / 1.732 = 2.484."""
    p = paired({1: 3.0, 2: 6.0, 3: 9.0}, {1: 2.0, 2: 4.0, 3: 6.0})
    assert p["seeds"] == [1, 2, 3] and p["diffs"] == [1.0, 2.0, 3.0] and p["n"] == 3
    assert p["mean"] == 2.0 and p["sd"] == 1.0
    assert abs(p["half"] - T2 / math.sqrt(3)) < 1e-12
    assert abs(p["half"] - 4.303 / math.sqrt(3)) < 5e-4
    assert abs(p["lo"] - (2 - 2.484138)) < 1e-6 and abs(p["hi"] - (2 + 2.484138)) < 1e-6
    assert p["base"] == 4.0 and p["rel"] == 0.5
    assert abs(p["rel_lo"] - (2 - T2 / math.sqrt(3)) / 4) < 1e-12
    assert p["verdict"] == NOT_SIGNIFICANT  # the CI [-0.48, 4.48] contains 0


def test_significance_wording():
    assert paired({1: 2, 2: 3, 3: 4}, {1: 0, 2: 0, 3: 0})["verdict"] == SIGNIFICANT  # 3 +- 2.48
    assert paired({1: -2, 2: -3, 3: -4}, {1: 0, 2: 0, 3: 0})["verdict"] == SIGNIFICANT  # below 0 too
    assert paired({1: 1, 2: 2, 3: 3}, {1: 0, 2: 0, 3: 0})["verdict"] == NOT_SIGNIFICANT
    one = paired({1: 5.0, 2: 1.0}, {1: 4.0})
    assert one["verdict"] == UNTESTABLE and one["n"] == 1 and math.isnan(one["half"]) and one["only_a"] == [2]
    assert paired({1: 1.0}, {2: 1.0})["verdict"] == NO_PAIRS
    # NaN values are left out of the pairing
    assert paired({1: 1.0, 2: float("nan"), 3: 3.0}, {1: 0.0, 2: 0.0, 3: 0.0})["seeds"] == [1, 3]
    # float rounding is no difference: never "significant", never a base
    p = paired({1: 0.1 + 0.2, 2: 0.6, 3: 0.9}, {1: 0.3, 2: 0.6 - 1e-17, 3: 0.9})
    assert p["diffs"] == [0.0, 0.0, 0.0] and p["verdict"] == NOT_SIGNIFICANT
    assert math.isnan(paired({1: 1.0, 2: 1.0}, {1: 1e-19, 2: 0.0})["rel"])


def test_ci95_and_trend():
    mean, sd, half, t = ci95([2.0, 4.0, 6.0])  # sd 2 -> half 2 x 4.303 / sqrt 3
    assert (mean, sd, t) == (4.0, 2.0, T2) and abs(half - 2 * T2 / math.sqrt(3)) < 1e-12
    # per-seed slopes over x = 0, 2, 4, 6: seed 1 slope 1, seed 2 slope 2, seed 3 slope 3
    values = {x: {s: s * x + 10 for s in (1, 2, 3)} for x in (0, 2, 4, 6)}
    tr = trend(values, [0, 2, 4, 6])
    assert [round(v, 12) for v in tr["slopes"]] == [1.0, 2.0, 3.0]
    assert abs(tr["mean"] - 2) < 1e-12 and abs(tr["half"] - T2 / math.sqrt(3)) < 1e-9
    assert tr["verdict"] == NOT_SIGNIFICANT
    del values[4][3]  # seed 3 lacks one split: left out
    assert trend(values, [0, 2, 4, 6])["seeds"] == [1, 2]


def test_p_values_holm_and_mde_by_hand():
    p = paired({1: 3.0, 2: 5.0, 3: 7.0}, {1: 1.0, 2: 2.0, 3: 3.0})  # differences 2, 3, 4
    assert abs(p_value(p) - p_df2(3)) < 1e-9 and abs(p_df2(3) - 0.035098) < 1e-6
    assert abs(mde(1.0, 3) - MDE_SD1) < 1e-6 and abs(MDE_SD1 - 3.0965) < 1e-4
    # the synthetic primary family (own reward): paper 6/2, 4/4, 2/6 vs 8/0 and 4/4 vs 4/0 have mean
    # differences 3, 2, 0, 4; offpolicy 5, 4, 2, 6; offpolicy vs paper exactly 2 in every seed (p 0)
    ps = {"p62": p_df2(3), "p44": p_df2(2), "p26": 1.0, "p40": p_df2(4), "o62": p_df2(5), "o44": p_df2(4),
          "o26": p_df2(2), "o40": p_df2(6), "a62": 0.0, "a44": 0.0, "a26": 0.0}
    adj = holm(ps)
    # sorted: 0, 0, 0, o40 x 8 = 0.0730, o62 x 7 = 0.0915, p40 / o44 x 6 = 0.1212, p62 x 4 = 0.1404, ...
    assert abs(adj["o40"][0] - 8 * p_df2(6)) < 1e-12 and not adj["o40"][1]
    assert abs(adj["p62"][0] - 4 * p_df2(3)) < 1e-12 and abs(adj["p62"][0] - 0.1404) < 1e-4
    assert abs(adj["o44"][0] - 6 * p_df2(4)) < 1e-12  # the running maximum carries 6 x p to rank 5
    assert adj["a62"] == (0.0, True) and adj["p26"][0] == 1.0


def test_trailing_mean_from_round_0():
    assert list(trailing_mean([0.0, 1, 2, 3, 4, 5], 3)) == [0.0, 0.5, 1.0, 2.0, 3.0, 4.0]
    two = trailing_mean([[0.0, 2, 4], [1.0, 1, 1]], 2)
    assert two.tolist() == [[0.0, 1.0, 3.0], [1.0, 1.0, 1.0]]


# ---- the report ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def full(tmp_path_factory):
    base = tmp_path_factory.mktemp("minipaper")
    write_study(str(base / "sum"))
    cmds = base / "commands.sh"
    cmds.write_text("mpirun -np 8 sapo run experiments/minipaper/4L4E.ini swarm.seed=1\n")
    r = cli(str(base / "sum"), "-o", str(base / "out"), "--commands", str(cmds), "--commit", "abc1234",
            "--machine", "8-core test box")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return base, (base / "out" / "REPORT.md").read_text()


def test_report_header(full):
    base, text = full
    assert text.startswith("# Mini-paper")
    assert "mpirun -np 8 sapo run experiments/minipaper/4L4E.ini swarm.seed=1" in text
    assert "Commit of the runs: abc1234. Machine: 8-core test box." in text
    used = table_rows(text, "### Summaries used")
    assert len(used) == 30 and all(row[7] == "used" for row in used), used
    assert used[0][:8] == ["`paper-8L0E-s1.npz`", "paper", "8L0E", "1", "2", "10/10", "yes", "used"], used[0]
    assert "Missing runs: none" in text and "Incomplete runs: none" in text
    assert "first **10 rounds**" in text and "shorter than the study's planned 400 rounds" in text
    assert "window is 2 rounds (the paper's 100, shrunk" in text


def test_results_table(full):
    _, text = full
    paper = section(text, "## Arm: paper", "## Arm: offpolicy")
    rows = {r[0]: r for r in table_rows(paper, "#### Reward")}
    # cumulative own = 20 c: 8/0 2, 4, 6 -> 4 +- 2; 4/4 3, 6, 9 -> 6 +- 3; training batch +2 where J > 0
    assert rows["8/0"][3:5] == ["4.00 ± 2.00", "4.00 ± 2.00"], rows["8/0"]
    assert rows["4/4"][3:5] == ["6.00 ± 3.00", "8.00 ± 3.00"], rows["4/4"]
    assert rows["4/0"][3] == "2.00 ± 2.00"
    ev = {r[0]: r for r in table_rows(paper, "#### Evaluation and efficiency")}
    # pass@1 v = 0.3 + 0.02 J + 0.01 s: 4/4 last 0.40 +- 0.01, last-K (rounds 4, 9) 0.35
    assert ev["4/4"][2:4] == ["0.400 ± 0.010", "0.350 ± 0.010"], ev["4/4"]
    # completions: 10 rounds x 2 nodes x I x 8; mean own per completion = 20 c / 20; per 1000: 1000 x 20 c / comp
    assert ev["8/0"][4] == "1,280 (1.00x 8/0)" and ev["4/4"][4] == "640 (0.50x 8/0)", ev
    assert ev["4/4"][5:] == ["0.3000 ± 0.1500", "9.3750 ± 4.6875"], ev["4/4"]


def test_paired_changes_in_report(full):
    _, text = full
    paper = section(text, "## Arm: paper", "## Arm: offpolicy")
    own = {r[0]: r for r in table_rows(paper, "#### cumulative own reward (PRIMARY)")}
    h = T2 / math.sqrt(3)
    null = f"not significant after Holm (MDE {MDE_SD1:.2f}, 77.4% of the reference)"  # MDE 3.10 of 8/0's 4
    # p of differences 1, 2, 3: 0.074; Holm across the 11 own-reward comparisons: 3 x 0.074 = 0.223
    assert own["4/4 vs 8/0"] == ["4/4 vs 8/0", "3", "s1: +1.00, s2: +2.00, s3: +3.00", "+2.00",
                                 f"[{2 - h:+.2f}, {2 + h:+.2f}]", "+50.0% [-12.1%, +112.1%]",
                                 f"{p_df2(2):.3f}", f"{3 * p_df2(2):.3f}", null], own["4/4 vs 8/0"]
    # 6/2: the 95% CI excludes 0 (p 0.035) but Holm's 4 x 0.035 = 0.140 does not reject
    assert own["6/2 vs 8/0"][3:9] == ["+3.00", "[+0.52, +5.48]", "+75.0% [+12.9%, +137.1%]", "0.035", "0.140", null]
    assert own["2/6 vs 8/0"][2:5] == ["s1: -1.00, s2: 0.00, s3: +1.00", "0.00", "[-2.48, +2.48]"]
    assert own["2/6 vs 8/0"][6:9] == ["1.000", "1.000", null]  # the null result is shown, with its MDE
    assert own["4/4 vs 4/0"][3:8] == ["+4.00", "[+1.52, +6.48]", "+200.0% [+75.8%, +324.2%]", "0.020", "0.121"]
    assert own["4/4 vs 4/0"][8] == f"not significant after Holm (MDE {MDE_SD1:.2f}, 154.8% of the reference)"
    train = {r[0]: r for r in table_rows(paper, "#### cumulative training-batch reward")}
    # the training-batch family is corrected on its own (11): 4/4 vs 8/0 (differences 3, 4, 5, p 0.020) ranks
    # 9th with offpolicy 2/6 (same p): 3 x 0.020 = 0.061
    assert train["4/4 vs 8/0"][3] == "+4.00" and train["4/4 vs 8/0"][6:8] == ["0.020", "0.061"], train["4/4 vs 8/0"]
    assert train["4/4 vs 8/0"][8].startswith("not significant after Holm")
    assert "genrl's logged metric, the paper's likely +94% measure" in paper
    off = section(text, "## Arm: offpolicy", "## Arms compared")
    own_off = {r[0]: r for r in table_rows(off, "#### cumulative own reward (PRIMARY)")}
    assert own_off["4/4 vs 8/0"][3:5] == ["+4.00", "[+1.52, +6.48]"], own_off  # +2 on the sharing splits
    assert own_off["4/4 vs 4/0"][6:8] == [f"{p_df2(6):.3f}", f"{8 * p_df2(6):.3f}"], own_off["4/4 vs 4/0"]
    arms = table_rows(text, "### offpolicy vs paper")
    # exactly +2 in every seed: p 0, significant after Holm
    assert arms[0] == ["6/2", "cum. own (PRIMARY)", "3", "+2.00", "[+2.00, +2.00]", "+28.6% [+28.6%, +28.6%]",
                       "<0.001", "<0.001", "**significant after Holm**"], arms[0]
    # the family is defined in the report
    assert ("**The primary family** (11 comparisons, Holm-corrected together) is every paired change of cumulative "
            "own reward in this report: paper: 6/2 vs 8/0; paper: 4/4 vs 8/0;") in text
    assert "offpolicy vs paper: 2/6. **Secondary families**" in text


def test_constructed_quantities_are_not_tested(full):
    _, text = full
    assert "cum. own reward per 1,000 completions" in text  # still described
    assert "#### cumulative own reward per 1,000 completions" not in text  # no paired table
    assert "so against 8/0 it scales as 8/I by construction, and a test of it would only restate the split" in text


def test_learning_from_rounds_0_9(full):
    _, text = full
    # 10 rounds: rounds 0-1 against the last 5 (shrunk); node-mean own c + 0.01 J S[t]: S over rounds 0-1
    # averages 0.5, over rounds 5-9 -0.8, so the difference is -0.013 J in every seed (sd 0)
    rows = {(r[0], r[1]): r for r in table_rows(text, "## Learning from the start")}
    assert rows[("paper", "4/4")][2:7] == ["3", "0.3200 ± 0.1500", "0.2680 ± 0.1500", "-0.0520 ± 0.0000",
                                           "[-0.0520, -0.0520]"], rows[("paper", "4/4")]
    assert rows[("paper", "8/0")][5:8] == ["0.0000 ± 0.0000", "[0.0000, 0.0000]",
                                           f"{NOT_SIGNIFICANT}, uncorrected"]
    assert rows[("offpolicy", "2/6")][3:6] == ["0.3300 ± 0.1500", "0.2520 ± 0.1500", "-0.0780 ± 0.0000"]
    assert "not from the dip after the learning-rate warm-up" in text
    assert "(rounds 0-9 and the last 50, shrunk to rounds // 5 and rounds // 2 for runs of 10 rounds)" in text


def test_shapes_against_white_noise(full):
    _, text = full
    rows = {(r[0], r[1]): r for r in table_rows(text, "## Oscillation and band width against white noise")}
    r26 = rows[("paper", "2/6")]
    # I x L = 2 x 8; the observed oscillation and band are the results table's (0.0479, 0.2400)
    assert r26[3:5] == ["16", "0.0479"] and r26[9] == "0.2400", r26
    assert r26[8] == "exceeds" and rows[("paper", "8/0")][8] == "within"  # 8/0 has no swing at all
    paper = section(text, "### The paper's four findings (paper)", "### Figures (paper)")
    f3 = section(paper, "**(3)", "**(4)")
    assert "Against white noise (observed / expected oscillation of own reward" in f3
    assert "So the oscillation exceeds the white-noise expectation in 6/2, 4/4, 2/6; in 8/0 it does not" in f3
    f4 = paper[paper.index("**(4)"):]
    assert "observed / expected band of own reward" in f4


def test_held_out_overlap_caveat(full):
    _, text = full
    defs = section(text, "## Definitions", "## Learning")
    assert "*Caveat: the \"held-out\" set overlaps training.*" in defs
    assert "base_conversion about 90" in defs and "these runs predate `tasks.exclude_eval`" in defs
    assert "so the overlap was not measured" in defs


def test_findings_are_stated(full):
    _, text = full
    paper = section(text, "### The paper's four findings (paper)", "### Figures (paper)")
    f1 = section(paper, "**(1)", "**(2)")
    # own: 6/2 significant, 4/4 and 2/6 not, 2/6's point estimate 0 -> not supported
    assert "Own rollouts (PRIMARY): **not supported**" in f1
    assert ("4/4 vs 8/0 +2.00, 95% CI [-0.48, +4.48], +50.0% (n = 3; p = 0.074, Holm p = 0.223; not significant "
            "after Holm (MDE 3.10, 77.4% of the reference))") in f1
    assert "Training batch (genrl's logged metric): **not shown**" in f1  # all above 0, 2/6 not significant
    f2 = section(paper, "**(2)", "**(3)")
    assert "**contradicted**: 6/2 accumulates most, significantly more than 4/4" in f2
    assert "4/4 vs 6/2 -1.00, 95% CI [-1.00, -1.00], -14.3% (n = 3; significant at 95%, uncorrected)" in f2
    f3 = section(paper, "**(3)", "**(4)")
    assert "oscillation: 8/0 0.0000" in f3 and "slope per external group" in f3
    f4 = paper[paper.index("**(4)"):]
    assert "2/6 oscillates more than 8/0 by +0.0479" in f4 and "least 8/0" in f4
    offp = section(text, "### The paper's four findings (offpolicy)", "### Figures (offpolicy)")
    # every training-batch CI excludes 0, but after Holm only 6/2's change survives (p 0.0068 x 7 = 0.047)
    assert "Training batch (genrl's logged metric): **not shown**" in offp
    assert "Holm p = 0.047; significant after Holm)" in offp


def test_figures_written_and_linked(full):
    base, text = full
    out = base / "out"
    names = ["fig_changes.png"] + [f"{arm}/{n}" for arm in ("paper", "offpolicy") for n in
                                   ("fig1_node_band_own.png", "fig1_node_band_train.png",
                                    "fig2_avg_reward_own.png", "fig2_avg_reward_train.png", "fig5_eval_pass1.png",
                                    "fig3_compare.png", "fig4_cumulative.png")]
    for name in names:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
        assert f"]({name})" in text, name
    assert "Not in these summaries (no entry named like `eval_by_task`)" in text
    assert not any(n.startswith("fig1_node_reward") for n in os.listdir(out / "paper"))
    # every curve from round 0: the moving-average figures use the trailing mean expanding at the start
    assert "it starts at round" not in text
    assert "from round 0: the first rounds average the rounds so far" in text
    assert "drawn from round 0" in text and "moving average over 2 rounds, from round 0" in text


def test_deterministic(tmp_path):
    write_study(str(tmp_path / "sum"))
    for out in ("a", "b"):
        build(str(tmp_path / "sum"), str(tmp_path / out), commit="x", machine="y", arms=["paper"],
              argv=["SUM", "-o", "OUT"])
    for root, _, files in os.walk(tmp_path / "a"):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), tmp_path / "a")
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_missing_incomplete_and_substituted_runs(tmp_path):
    write_study(str(tmp_path / "sum"), skip=("offpolicy-8L0E-s2", "offpolicy-4L0E-s1", "offpolicy-4L0E-s2",
                                             "offpolicy-4L0E-s3", "paper-4L0E-s3", "offpolicy-6L2E-s3"),
                incomplete=("paper-2L6E-s1",))
    r = cli(str(tmp_path / "sum"), "-o", str(tmp_path / "out"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert ("offpolicy-8L0E-s2.npz is missing: using paper-8L0E-s2.npz (J = 0: no external groups, so the run is "
            "the same in every arm)") in text
    assert "offpolicy-4L0E-s1.npz is missing: using paper-4L0E-s1.npz" in text
    # no file for 4L0E seed 3 in either arm; 6L2E has no J = 0 substitute
    assert "**Missing runs (3):** paper-4L0E-s3, offpolicy-6L2E-s3, offpolicy-4L0E-s3." in text
    assert "paper-2L6E-s1.npz: no DONE, 6 of 10 configured rounds logged (excluded: 6 of 10 rounds logged)" in text
    assert "`--rounds 6` compares all runs on their first 6 rounds instead" in text
    paper = section(text, "## Arm: paper", "## Arm: offpolicy")
    own = {r[0]: r for r in table_rows(paper, "#### cumulative own reward (PRIMARY)")}
    assert own["2/6 vs 8/0"][1:3] == ["2", "s2: 0.00, s3: +1.00"], own["2/6 vs 8/0"]
    assert own["4/4 vs 4/0"][1:3] == ["2", "s1: +3.00, s2: +4.00"], own["4/4 vs 4/0"]
    off = section(text, "## Arm: offpolicy", "## Arms compared")
    own = {r[0]: r for r in table_rows(off, "#### cumulative own reward (PRIMARY)")}
    # offpolicy 4/4 vs the substituted paper 8/0: +3, +4, +5 as with its own 8/0
    assert own["4/4 vs 8/0"][2] == "s1: +3.00, s2: +4.00, s3: +5.00", own["4/4 vs 8/0"]
    assert own["6/2 vs 8/0"][1] == "2"
    # --rounds 6 brings the incomplete run back
    r = cli(str(tmp_path / "sum"), "-o", str(tmp_path / "out6"), "--rounds", "6", "--arms", "paper")
    assert r.returncode == 0, r.stderr
    text6 = (tmp_path / "out6" / "REPORT.md").read_text()
    assert "first **6 rounds** (--rounds)" in text6
    assert "(used (incomplete run, but the compared rounds are all logged))" in text6


def test_only_one_arm_and_missing_arm(tmp_path):
    write_study(str(tmp_path / "sum"), skip=tuple(f"offpolicy-{s}-s{k}" for s in ("6L2E", "4L4E", "2L6E")
                                                  for k in (1, 2, 3)))
    text = open(build(str(tmp_path / "sum"), str(tmp_path / "out"))).read()
    assert "**Missing runs (9):**" in text and "offpolicy-2L6E-s3" in text
    off = section(text, "## Arm: offpolicy", "## Arms compared")
    own = {r[0]: r for r in table_rows(off, "#### cumulative own reward (PRIMARY)")}
    assert own["4/4 vs 8/0"][1] == "0" and own["4/4 vs 8/0"][8] == NO_PAIRS
    assert "(1) Every sharing" in off and "cannot be tested" in off


def test_eval_by_task_optional(tmp_path):
    write_study(str(tmp_path / "sum"), eval_by_task=True)
    text = open(build(str(tmp_path / "sum"), str(tmp_path / "out"), arms=["paper"])).read()
    assert "summaries of arm 'offpolicy' are present but not reported (--arms paper)" in text
    rows = {r[0]: r for r in table_rows(text, "## Per-task fixed-set evaluation")}
    # at both evaluations task a = v + 0.1, b = v - 0.1 with v = 0.3 + 0.02 J + 0.01 s
    # 8/0: a = 0.41, 0.42, 0.43 over seeds -> 0.420 +- 0.010; 2/6: + 0.12
    assert rows["fixed_a"][1] == "0.420 ± 0.010" and rows["fixed_b"][1] == "0.220 ± 0.010", rows
    assert rows["fixed_a"][4] == "0.540 ± 0.010", rows


def test_bad_input_is_one_line(tmp_path):
    def one_line(r, *needles):
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith("analysis.minipaper: error: "), r.stderr
        for n in needles:
            assert n in lines[0], (n, lines[0])

    one_line(cli(str(tmp_path / "absent"), "-o", str(tmp_path / "o")), "absent", "no such directory")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.npz").write_bytes(b"x")
    one_line(cli(str(tmp_path / "empty"), "-o", str(tmp_path / "o")), "no ARM-SPLIT-sSEED.npz summaries")
    write_study(str(tmp_path / "sum"))
    bad = tmp_path / "sum" / "paper-4L4E-s2.npz"
    bad.write_bytes(b"PK\x03\x04 truncated")
    one_line(cli(str(tmp_path / "sum"), "-o", str(tmp_path / "o")), str(bad), "cannot read as a summary")
    os.remove(bad)
    one_line(cli(str(tmp_path / "sum"), "-o", str(tmp_path / "o"), "--commands", str(tmp_path / "nope.sh")),
             "nope.sh", "cannot read the commands file")
    r = cli(str(tmp_path / "sum"), "-o", str(tmp_path / "o"), "--last-k", "0")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    h = cli("--help")
    assert h.returncode == 0 and "ARM-SPLIT-sSEED.npz" in h.stdout and "--commands" in h.stdout
