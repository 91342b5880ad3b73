"""The specialist study's report (analysis.specialists), checked against hand-computed values on
synthetic summaries with planted effects (synthetic_specialists.py): the non-specialty metric
averages a node's three other tasks (not its specialty, not all four), the families are the plan's
18 and 6 comparisons with Holm over each, the exact sign-flip p of six agreeing seeds is 2/64, a
missing or incomplete run is a warning with fewer seeds, mixed numerics are refused and an empty
folder gives a report that says no run is in."""
import json
import math

import numpy as np
import pytest

from synthetic_specialists import E, F, SEEDS, write_study, write_summary
from analysis.errors import AnalysisError
from analysis.paired import holm
from analysis.runs import load_summary
from analysis.specialists import MAIN, SECOND, TASKS, Study, build, main, run_values, trailing_nanmean

MISSING, INCOMPLETE = "spec_silo-8L0E-s6", "gen_ftis-4L4E-s6"


def warmup_json(task, spec_pass, other_pass, tags):
    return {"steps": 300, "demonstrations": 9600, "held_out_drawn": 7,
            "pass1_by_task": {t: spec_pass if t == task else other_pass for t in TASKS},
            "format_rate_by_task": {t: tags for t in TASKS}}


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("spec")
    summaries = write_study(str(d / "summaries"), skip=(MISSING,), incomplete=(INCOMPLETE,))
    for seed in SEEDS[:-1]:  # seed 6's warm-ups are missing
        w = d / "warmups" / f"s{seed}"
        w.mkdir(parents=True)
        (w / "spec-base_conversion.ckpt.json").write_text(json.dumps(warmup_json("base_conversion", 0.2, 0.01, 0.8)))
        (w / "spec-basic_arithmetic.ckpt.json").write_text(json.dumps(warmup_json("basic_arithmetic", 0.2, 0.05, 0.8)))
        (w / "spec-fraction_simplification.ckpt.json").write_text(
            json.dumps(warmup_json("fraction_simplification", 0.05, 0.01, 0.8)))
        (w / "spec-calendar_arithmetic.ckpt.json").write_text(
            json.dumps(warmup_json("calendar_arithmetic", 0.3, 0.07, 0.8)))
        fmt = dict(warmup_json("base_conversion", 0.01, 0.01, 0.9), held_out_drawn=0)
        (w / "format.ckpt.json").write_text(json.dumps(fmt))
    (d / "costs.csv").write_text("run,seconds,status,commit,numerics\nspec_ratio1-4L4E-s1,3600,done,abc1234,2\n"
                                 "spec_tis-4L4E-s9,60,stopped,abc1234,2\n")
    return d, summaries


@pytest.fixture(scope="module")
def report(study_dir):
    d, summaries = study_dir
    out = d / "out"
    build(summaries, str(out), costs=str(d / "costs.csv"), machine="test", warmups=str(d / "warmups"))
    return (out / "REPORT.md").read_text(), out


def row(text, start):
    return [c.strip() for c in next(l for l in text.splitlines() if l.startswith(start)).split("|")]


# ---- one run: the metrics --------------------------------------------------------------------

def test_nonspecialty_metric_by_hand(tmp_path):
    for arm, split in (("spec_ratio1", "4L4E"), ("spec_silo", "4L0E"), ("spec_tis", "4L4E")):
        for s in (1, 4):
            run = load_summary(write_summary(str(tmp_path / f"{arm}-{split}-s{s}.npz"), arm, split, s))
            v = run_values(run, arm, 5)
            # the last 5 of 7 evaluations, j = 2..6: x = 0.02 j + 0.003 s + E, mean 0.08 + 0.003 s + E
            assert v["nonspec"] == pytest.approx(0.08 + 0.003 * s + E(arm, split, s), abs=1e-12)
            assert v["spec"] == pytest.approx(0.2 + 0.002 * s + F(arm), abs=1e-12)
            assert v["all"] == pytest.approx((3 * v["nonspec"] + v["spec"]) / 4, abs=1e-12)
            assert v["nonspec0"] == pytest.approx(0.005, abs=1e-12) and v["spec0"] == pytest.approx(0.2 + 0.002 * s)
            assert v["own"] == pytest.approx(8 * 30 * (0.05 + 0.001 * s + (0.01 + 0.0005 * (s - 3.5)
                                                                             if arm == "spec_ratio1" else 0)))
            assert list(v["trained"]) == [0, 5, 10, 15, 20, 25, 30]
            assert v["notes"] == []
    # a generalist: pass@1 over all four tasks, no specialty metrics
    run = load_summary(write_summary(str(tmp_path / "gen_ratio1-4L4E-s2.npz"), "gen_ratio1", "4L4E", 2))
    v = run_values(run, "gen_ratio1", 5)
    assert v["all"] == pytest.approx(0.1 + 0.006 + 0.02 - 0.0015, abs=1e-12)
    assert math.isnan(v["nonspec"]) and math.isnan(v["spec"])


def test_arrival_by_hand(report):
    text, _ = report
    # spec_silo 8/0 (seeds 1-5): half the level 0.1 + 0.001 s, reached at j = 5 (25 rounds) by every node
    assert row(text, "| spec_silo | 8/0 | 5 | 0.103")[5:10] == ["40", "40", "0", "25", "25"]
    # spec_silo 4/0 (E = -0.05): never within the run
    assert row(text, "| spec_silo | 4/0 | 6 | 0.103")[5:10] == ["48", "0", "48", "–", "–"]
    # spec_ratio1: seeds 5-6 at j = 3 (15 rounds), seeds 1-4 at j = 4 (20): median 20, mean 18.33
    assert row(text, "| spec_ratio1 | 4/4 | 6 | 0.103")[5:10] == ["48", "48", "0", "20", "18"]


# ---- the families ----------------------------------------------------------------------------

def test_planted_effect_and_signflip(report, study_dir):
    text, _ = report
    # spec_ratio1's non-specialty pass@1 is 0.08 above spec_silo 4/0 in every seed (+- 0.005): six positive signs
    r = row(text, "| P1: spec_ratio1 4/4 vs spec_silo 4/0 |")
    assert r[3] == "6" and r[5] == "+0.080" and r[10] == "0.031" and "significant after Holm" in r[12]
    # against spec_silo 8/0 its seed 6 is missing: five pairs, 0.03 + 0.002 (s - 3.5) over s = 1..5
    r = row(text, "| P1: spec_ratio1 4/4 vs spec_silo 8/0 |")
    assert r[3] == "5" and r[4] == "0.089" and r[5] == "+0.029" and r[10] == "0.062"
    study = Study(study_dir[1], SEEDS, 5)
    p = study.compare("nonspec", "spec_ratio1", "4L4E", "spec_silo", "4L0E")
    assert p["n"] == 6 and p["mean"] == pytest.approx(0.08, abs=1e-12)
    assert p["p_signflip"] == pytest.approx(2 / 64, abs=1e-12)  # 1/32 = 0.03125
    assert study.compare("nonspec", "spec_ratio1", "4L4E", "spec_silo", "8L0E")["p_signflip"] == pytest.approx(2 / 32)
    # spec_tis against spec_positive_only: 0.004 (-1)^s - 0.02 - 0.002 (s - 3.5), mean -0.020
    assert row(text, "| P1: spec_tis 4/4 vs spec_positive_only 4/4 |")[5] == "-0.020"
    # own reward: spec_ratio1 earns 240 x (0.01 + 0.0005 (s - 3.5)) more, 2.4 on average
    assert row(text, "| P2: spec_ratio1 4/4 vs spec_silo 4/0 |")[5] == "+2.4"
    r = row(text, "| P2: spec_ftis 4/4 vs spec_silo 4/0 |")
    assert r[5] == "0.0" and r[8] == "1.000" and "not significant after Holm" in r[12]


def test_family_sizes_and_holm(report, study_dir):
    text, _ = report
    assert len(MAIN) == 18 and len({c[0] for c in MAIN}) == 18
    assert {(a, sa, b, sb) for _, _, a, sa, b, sb in MAIN} == (
        {(a, "4L4E", "spec_silo", s) for a in ("spec_ratio1", "spec_positive_only", "spec_tis", "spec_ftis")
         for s in ("8L0E", "4L0E")} | {("spec_tis", "4L4E", "spec_positive_only", "4L4E")})
    assert sorted(m for _, m, *_ in MAIN) == ["nonspec"] * 9 + ["own"] * 9
    assert len(SECOND) == 6 and sorted(m for _, m, *_ in SECOND) == ["all"] * 3 + ["own"] * 3
    main_part = text[text.index("## The main family"):text.index("## The generalists' family")]
    rows = [l for l in main_part.splitlines() if l.startswith("| P")]
    assert len(rows) == 18 and "Holm over all 18 (18 with a p" in main_part
    # the report's Holm p of each row is Holm's over all 18 t-test p values, computed here again
    study = Study(study_dir[1], SEEDS, 5)
    ps = {name: study.compare(m, a, sa, b, sb)["p"] for name, m, a, sa, b, sb in MAIN}
    adj = holm(ps)
    assert len(adj) == 18
    for name in ps:
        cells = row(main_part, f"| {name} |")
        want = adj[name][0]
        assert cells[9] == ("<0.001" if want < 0.001 else f"{want:.3f}")
    second = text[text.index("## The generalists' family"):text.index("![paired changes]")]
    assert len([l for l in second.splitlines() if l.startswith("| own:") or l.startswith("| pass@1:")]) == 6
    # gen_ratio1: own reward 240 x 0.005 = 1.2 more; pass@1 0.02 + 0.001 (s - 3.5) more
    assert row(second, "| own: gen_ratio1 4/4 vs gen_silo 8/0 |")[5] == "+1.2"
    assert row(second, "| pass@1: gen_ratio1 4/4 vs gen_silo 8/0 |")[5] == "+0.020"
    # the incomplete gen_ftis seed 6 is left out: five pairs
    assert row(second, "| own: gen_ftis 4/4 vs gen_silo 8/0 |")[3] == "5"


def test_secondary_specialty(report):
    text, _ = report
    r = row(text, "| spec_ratio1 4/4 vs spec_silo 4/0 | specialty")
    assert r[5] == "-0.010" and r[11] == "0+ / 6- of 6"


# ---- what is missing, refused, or not there yet -----------------------------------------------

def test_missing_incomplete_and_provenance(report):
    text, out = report
    assert f"missing (1): {MISSING}.npz\n" in text + "\n"  # gathered in one line
    assert f"{INCOMPLETE}.npz: incomplete: 30 of 40 rounds; left out" in text
    assert "65 of the 66 planned runs are in" in text
    assert text.startswith("# Do skills travel? A swarm of specialists (issue 35)\n\n**Interim: 65 of the 66 planned "
                           "runs are in.**")
    assert "costs.csv: 2 runs, 1.0 hours" in text and "`spec_tis-4L4E-s9` (stopped, 60 s)" in text
    assert "| `spec_ratio1-4L4E-s1.npz` | 30 | used | 3600 | abc1234 | 2 |" in text
    assert "s6: no warm-up JSON" in text
    # the plan's rule, then the amended one (other tasks at most the format warm-up's 0.01 + 0.05)
    assert row(text, "| 1 | spec-base_conversion |")[-3:-1] == ["yes", "yes"]  # specialty 0.2, others 0.01
    assert row(text, "| 1 | spec-basic_arithmetic |")[-3:-1] == ["no", "yes"]  # others at 0.05
    assert row(text, "| 1 | spec-fraction_simplification |")[-3:-1] == ["no", "weak"]  # specialty 0.05
    assert row(text, "| 1 | spec-calendar_arithmetic |")[-3:-1] == ["no", "no"]  # others at 0.07
    assert row(text, "| 1 | format |")[-3:-1] == ["–", "–"]
    assert "drawn again) over all these warm-ups: seed 1 28, seed 2 28," in text
    assert "8 specialised 133k-parameter byte models on four tasks" in text.replace("(the minipaper byte GPT, 2 layers, "
                                                                                   "d_model 64) ", "")
    assert "fixed in results/specialists/README.md" in text and "before any run" in text
    for f in ("fig_changes.png", "fig_changes_gen.png", "fig_tasks.png", "fig_curves.png", "fig_diagnostics.png"):
        assert (out / f).stat().st_size > 10000 and f"({f})" in text


def test_diagnostics(report):
    text, _ = report
    diag = text[text.index("## Diagnostics"):]
    assert row(diag, "| spec_ftis | 4/4 | 6 |")[4:8] == ["0.800 (0.800-0.800)", "0.0500 (0.0500-0.0500)",
                                                          "0.200 (0.200-0.200)", "0.500 (0.500-0.500)"]
    assert row(diag, "| spec_tis | 4/4 | 6 |")[6] == "–"  # no F-TIS drop without the filter
    assert row(diag, "| spec_ratio1 | 4/4 | 6 |")[4] == "–"  # no importance weight under ratio 1
    assert row(diag, "| spec_ratio1 | 4/4 | 6 |")[-2] == "0"  # train_in_eval


def test_deterministic(report, study_dir, tmp_path):
    text, _ = report
    d, summaries = study_dir
    build(summaries, str(tmp_path), costs=str(d / "costs.csv"), machine="test", warmups=str(d / "warmups"))
    assert (tmp_path / "REPORT.md").read_text() == text


def test_complete_study_is_not_interim(tmp_path):
    summaries = write_study(str(tmp_path / "summaries"))
    build(summaries, str(tmp_path / "out"), machine="test")
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert "66 of the 66 planned runs are in" in text and "Interim" not in text


def test_mixed_numerics_refused(tmp_path):
    write_summary(str(tmp_path / "spec_silo-8L0E-s1.npz"), "spec_silo", "8L0E", 1, numerics=2)
    write_summary(str(tmp_path / "spec_ratio1-4L4E-s1.npz"), "spec_ratio1", "4L4E", 1, numerics=1)
    with pytest.raises(AnalysisError, match="mix numerics versions"):
        build(str(tmp_path), str(tmp_path / "out"))
    assert main([str(tmp_path), "-o", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out" / "REPORT.md").exists()


def test_no_runs_yet(tmp_path):
    (tmp_path / "summaries").mkdir()
    assert main([str(tmp_path / "summaries"), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert "No runs are in yet" in text and "0 of the 66 planned runs" in text
    assert "## The main family" not in text
    # a folder that is not there is an error, not an empty study
    assert main([str(tmp_path / "nowhere"), "-o", str(tmp_path / "out2")]) == 1


def test_few_seeds_never_crash(tmp_path):
    # one seed of two arms only: every comparison untestable or absent, the report still written
    write_summary(str(tmp_path / "spec_silo-8L0E-s1.npz"), "spec_silo", "8L0E", 1)
    write_summary(str(tmp_path / "spec_ratio1-4L4E-s1.npz"), "spec_ratio1", "4L4E", 1)
    build(str(tmp_path), str(tmp_path / "out"))
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert "untestable (fewer than 2 paired seeds)" in row(text, "| P1: spec_ratio1 4/4 vs spec_silo 8/0 |")[12]
    assert "Holm over all 18 (0 with a p" in text
    assert np.isfinite(Study(str(tmp_path), SEEDS, 5).compare("nonspec", "spec_ratio1", "4L4E", "spec_silo",
                                                                "8L0E")["mean"])


def test_trailing_nanmean():
    # the diagnostics' curves: a round without received tokens (NaN) is skipped, not counted as 0
    out = trailing_nanmean([1.0, np.nan, 3.0, np.nan, np.nan, np.nan], 2)
    assert list(out[:4]) == [1.0, 1.0, 3.0, 3.0] and np.isnan(out[4:]).all()


def test_from_hdf5_through_summarize(tmp_path):
    # the path of the real runs: node_NNNN.h5 with eval_pass1_by_task over every task id (NaN for those not
    # asked) and [node.K] run.specialty, summarized by analysis.summarize, read by the report
    from synthetic_runs import TASKS as IDS, write_run
    from synthetic_specialists import LABELS, NODES, ROUNDS, pass_table
    from analysis.summarize import summarize
    for arm, split, local, external in (("spec_silo", "8L0E", 8, 0), ("spec_ratio1", "4L4E", 4, 4)):
        for s in (1, 2):
            ev = np.full((NODES, ROUNDS, len(IDS)), np.nan)
            planted = pass_table(arm, split, s)
            for t in TASKS:
                ev[:, :, IDS.index(t)] = planted[:, :, LABELS.index(t)]
            write_run(str(tmp_path / "runs" / f"{arm}-{split}-s{s}"), np.full((NODES, ROUNDS), 0.05), local=local,
                      external=external, seed=s, extra={"run.eval_first": "true"}, eval_by_task=ev,
                      nodes={k: {"run.specialty": TASKS[k % 4]} for k in range(NODES)})
    summarize([str(tmp_path / "runs")], str(tmp_path / "sum"), log=lambda msg: None)
    study = Study(str(tmp_path / "sum"), (1, 2), 5)
    for arm, split in (("spec_silo", "8L0E"), ("spec_ratio1", "4L4E")):
        values = study.values(arm, split, "nonspec")
        assert sorted(values) == [1, 2]
        for s, v in values.items():
            assert v == pytest.approx(0.08 + 0.003 * s + E(arm, split, s), abs=1e-12)
    p = study.compare("nonspec", "spec_ratio1", "4L4E", "spec_silo", "8L0E")
    assert p["n"] == 2 and p["mean"] == pytest.approx(0.03 + 0.002 * (1.5 - 3.5), abs=1e-12)  # seeds 1, 2
    assert not [w for w in study.warnings if not w.endswith(": missing")]


def test_holm_counts_the_whole_family(tmp_path):
    # two seeds of two arms: only spec_ratio1 vs spec_silo 8/0 has a p (on both metrics); Holm's m is still 18
    for s in (1, 2):
        write_summary(str(tmp_path / f"spec_silo-8L0E-s{s}.npz"), "spec_silo", "8L0E", s)
        write_summary(str(tmp_path / f"spec_ratio1-4L4E-s{s}.npz"), "spec_ratio1", "4L4E", s)
    build(str(tmp_path), str(tmp_path / "out"), seeds=(1, 2))
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert "Holm over all 18 (2 with a p" in text
    study = Study(str(tmp_path), (1, 2), 5)
    ps = sorted(study.compare(m, "spec_ratio1", "4L4E", "spec_silo", "8L0E")["p"] for m in ("nonspec", "own"))
    cells = [row(text, f"| {n}: spec_ratio1 4/4 vs spec_silo 8/0 |") for n in ("P1", "P2")]
    holm_ps = sorted(float(c[9]) for c in cells)
    assert holm_ps[0] == pytest.approx(min(1.0, 18 * ps[0]), abs=0.0006)  # printed with 3 decimals
    assert row(text, "| P1: spec_tis 4/4 vs spec_silo 8/0 |")[9] == "–"
