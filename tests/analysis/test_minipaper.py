"""The mini-paper report (analysis.minipaper, analysis.paired) on synthetic summaries whose numbers
are written out in synthetic_summaries.py: paired differences and Student t intervals against
hand-computed values, significance wording, missing / incomplete / substituted runs, the optional
per-task evaluation, determinism, and one-line errors for bad input."""
import math
import os
import subprocess
import sys

import pytest

from synthetic_runs import ROOT, table_rows
from synthetic_summaries import write_study
from analysis.minipaper import build
from analysis.paired import (NO_PAIRS, NOT_SIGNIFICANT, SIGNIFICANT, UNTESTABLE, ci95, paired, t975, trend)

T2 = 4.302653  # t(0.975, 2)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis.minipaper", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)




def section(text, start, end):
    i = text.index(start)
    return text[i:text.index(end, i + len(start))]


# ---- statistics ----------------------------------------------------------------------------

def test_t_quantiles():
    assert t975(2) == T2 and abs(t975(2) - 4.303) < 5e-4
    assert t975(1) == 12.706205 and t975(30) == 2.042272
    assert abs(t975(1000) - 1.962339) < 1e-6 and abs(t975(31) - 2.039513) < 1e-6
    with pytest.raises(ValueError):
        t975(0)
    try:
        from scipy.stats import t
    except ImportError:
        return
    for df in list(range(1, 61)) + [100, 500]:
        assert abs(t975(df) - t.ppf(0.975, df)) < 1e-6, df


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
    assert own["4/4 vs 8/0"] == ["4/4 vs 8/0", "3", "s1: +1.00, s2: +2.00, s3: +3.00", "+2.00",
                                 f"[{2 - h:+.2f}, {2 + h:+.2f}]", "+50.0% [-12.1%, +112.1%]",
                                 NOT_SIGNIFICANT], own["4/4 vs 8/0"]
    assert own["6/2 vs 8/0"][3:5] == ["+3.00", "[+0.52, +5.48]"] and own["6/2 vs 8/0"][6] == f"**{SIGNIFICANT}**"
    assert own["2/6 vs 8/0"][2:5] == ["s1: -1.00, s2: 0.00, s3: +1.00", "0.00", "[-2.48, +2.48]"]
    assert own["2/6 vs 8/0"][6] == NOT_SIGNIFICANT  # the null result is shown
    assert own["4/4 vs 4/0"][3:7] == ["+4.00", "[+1.52, +6.48]", "+200.0% [+75.8%, +324.2%]", f"**{SIGNIFICANT}**"]
    train = {r[0]: r for r in table_rows(paper, "#### cumulative training-batch reward")}
    assert train["4/4 vs 8/0"][3] == "+4.00" and train["4/4 vs 8/0"][6] == f"**{SIGNIFICANT}**"
    assert "genrl's logged metric, the paper's likely +94% measure" in paper
    off = section(text, "## Arm: offpolicy", "## Arms compared")
    own_off = {r[0]: r for r in table_rows(off, "#### cumulative own reward (PRIMARY)")}
    assert own_off["4/4 vs 8/0"][3:5] == ["+4.00", "[+1.52, +6.48]"], own_off  # +2 on the sharing splits
    arms = table_rows(text, "### offpolicy vs paper")
    assert arms[0][:4] == ["6/2", "cum. own (PRIMARY)", "3", "+2.00"], arms[0]


def test_findings_are_stated(full):
    _, text = full
    paper = section(text, "### The paper's four findings (paper)", "### Figures (paper)")
    f1 = section(paper, "**(1)", "**(2)")
    # own: 6/2 significant, 4/4 and 2/6 not, 2/6's point estimate 0 -> not supported
    assert "Own rollouts (PRIMARY): **not supported**" in f1
    assert "4/4 vs 8/0 +2.00, 95% CI [-0.48, +4.48], +50.0% (n = 3; not significant at 95%)" in f1
    assert "Training batch (genrl's logged metric): **not shown**" in f1  # all above 0, 2/6 not significant
    f2 = section(paper, "**(2)", "**(3)")
    assert "**contradicted**: 6/2 accumulates most, significantly more than 4/4" in f2
    f3 = section(paper, "**(3)", "**(4)")
    assert "oscillation: 8/0 0.0000" in f3 and "slope per external group" in f3
    f4 = paper[paper.index("**(4)"):]
    assert "2/6 oscillates more than 8/0 by +0.0479" in f4 and "least 8/0" in f4
    offp = section(text, "### The paper's four findings (offpolicy)", "### Figures (offpolicy)")
    assert "Training batch (genrl's logged metric): **supported** (every comparison significant at 95%)" in offp


def test_figures_written_and_linked(full):
    base, text = full
    out = base / "out"
    names = ["fig_changes.png"] + [f"{arm}/{n}" for arm in ("paper", "offpolicy") for n in
                                   ("fig1_node_reward_own.png", "fig1_node_reward_train.png",
                                    "fig2_avg_reward_own.png", "fig2_avg_reward_train.png", "fig5_eval_pass1.png",
                                    "fig3_compare.png", "fig4_cumulative.png")]
    for name in names:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
        assert f"]({name})" in text, name
    assert "Not in these summaries (no entry named like `eval_by_task`)" in text


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
    assert own["4/4 vs 8/0"][1] == "0" and own["4/4 vs 8/0"][6] == NO_PAIRS
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
