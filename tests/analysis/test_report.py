"""The report command end to end on synthetic runs: REPORT.md has the paper table with our
numbers (cumulative mean, spread, change vs baseline, the paper's values), the figures are
PNGs, and a report made from summaries (analysis.summarize) shows the same numbers."""
import os
import re
import subprocess
import sys

import numpy as np

from synthetic_runs import ROOT, standard_sweep, table_rows, write_run
from analysis.report import build_report
from analysis.runs import load_run_dir, load_summary
from analysis.summarize import summarize

FIGURES = ["fig1_node_reward_own.png", "fig1_node_reward_train.png", "fig2_avg_reward_own.png",
           "fig2_avg_reward_train.png", "fig3_compare.png", "fig4_cumulative.png", "fig5_eval_pass1.png",
           "fig6_time_split.png"]


def cli(module, *args):
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)




def test_report_tables_and_figures(tmp_path):
    runs = standard_sweep(str(tmp_path / "runs"))
    out = tmp_path / "out"
    r = cli("analysis.report", *runs, "-o", str(out), "--title", "Synthetic sweep")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    text = (out / "REPORT.md").read_text()
    assert text.startswith("# Synthetic sweep")
    assert "python3 -m analysis.report " in text and "--title 'Synthetic sweep'" in text
    for p in runs:
        assert p in text, f"run directory {p} not listed"
    own = table_rows(text, "### On own rollouts")
    assert [row[0] for row in own] == ["4/0", "2/2"], own
    # configuration | seeds | nodes x rounds | mean | std | min – max | per node-round | vs baseline |
    # paper split | paper total | paper per agent-round | paper vs 8/0
    assert own[0][1:9] == ["1, 2", "3 x 10", "4.50", "2.12", "3.00 – 6.00", "0.1500", "baseline", "8/0"], own[0]
    assert own[1][1:9] == ["1, 2", "3 x 10", "15.00", "2.12", "13.50 – 16.50", "0.5000", "+233.3%", "4/4"], own[1]
    assert own[0][9:] == ["561.79", "0.0351", "baseline"] and own[1][9:] == ["1093.31", "0.0683", "+94%"], own
    train = table_rows(text, "### On training batch")
    assert train[1][3] == "16.50" and train[1][7] == "+175.0%", train  # 16.5 / 6.0 - 1
    assert "only the relative changes vs 8/0 are comparable" in text
    shape = table_rows(text, "## Curve shape")
    assert shape[1][:4] == ["2/2", "0.1000 ± 0.0000", "0.0000 ± 0.0000", "0.2000 ± 0.0000"], shape
    assert "window 2 rounds (the paper's 100, shrunk to fit runs of 10 rounds" in text
    for name in FIGURES:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name
        assert f"]({name})" in text, f"{name} not linked from REPORT.md"
    for cap in re.findall(r"^\*Figure [12] .*\*$", text, re.M):
        assert "own rollouts" in cap or "training batch" in cap, cap
    assert "sampling.external" in text  # the configuration differences table


def test_summaries_reproduce_report(tmp_path):
    runs = standard_sweep(str(tmp_path / "runs"))
    written = summarize(runs, str(tmp_path / "sum"), log=lambda m: None)
    assert len(written) == 4 and all(os.path.getsize(p) < 50000 for p in written)
    for path, npz in zip(runs, written):
        a, b = load_run_dir(path), load_summary(npz)
        for m in ("reward_own", "reward_train", "eval_pass1"):
            assert np.array_equal(a.per_node[m], b.per_node[m], equal_nan=True), m
        assert a.config.flat() == b.config.flat() and a.seed == b.seed
    csv = (tmp_path / "sum" / "s22-s1.csv").read_text().splitlines()
    assert csv[1].startswith("round,reward_own_mean,reward_own_min,reward_own_max")
    first = [float(x) for x in csv[2].split(",")[:4]]
    assert np.allclose(first, [0, 0.4, 0.3, 0.5]), csv[2]
    from_h5 = build_report(runs, str(tmp_path / "a"), log=lambda m: None)
    from_npz = build_report([str(tmp_path / "sum")], str(tmp_path / "b"), log=lambda m: None)
    a, b = open(from_h5).read(), open(from_npz).read()
    for heading in ("### On own rollouts", "### On training batch", "## Curve shape", "## Evaluation"):
        assert table_rows(a, heading) == table_rows(b, heading), heading
    assert "(summary of " in b


def test_folder_input_and_help(tmp_path):
    standard_sweep(str(tmp_path / "sweep"))
    r = cli("analysis.report", str(tmp_path / "sweep"), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "4 run(s) in 2 configuration(s)" in (tmp_path / "out" / "REPORT.md").read_text()
    h = cli("analysis.report", "--help")
    assert h.returncode == 0 and "analysis.summarize" in h.stdout and "RUN_DIR" in h.stdout
    h = cli("analysis.summarize", "--help")
    assert h.returncode == 0 and "-o DIR" in h.stdout


def test_other_keys_and_heterogeneous_nodes(tmp_path):
    base = tmp_path / "runs"
    p = [write_run(str(base / "b"), np.full((3, 10), 0.1), local=4, external=0),
         write_run(str(base / "l0"), np.full((3, 10), 0.2)),
         write_run(str(base / "l2"), np.full((3, 10), 0.3), extra={"net.latency": "2"}),
         write_run(str(base / "mix"), np.full((3, 10), 0.4),
                   nodes={2: {"sampling.local": "4", "sampling.external": "0"}})]
    text = open(build_report(p, str(tmp_path / "out"), log=lambda m: None)).read()
    own = table_rows(text, "### On own rollouts")
    labels = [row[0] for row in own]
    assert labels == ["4/0, net.latency=0", "2/2, net.latency=0", "mixed 2/2x2+4/0x1, net.latency=0",
                      "2/2, net.latency=2"], labels
    # latency does nothing without sharing, so the latency-0 baseline is the latency-2 row's too
    assert [row[7] for row in own] == ["baseline", "+100.0%", "+300.0%", "+200.0%"], own
    assert [row[8] for row in own] == ["8/0", "4/4", "–", "4/4"], own  # no paper split for a mixed swarm


def test_newer_columns_are_reported(tmp_path):
    """Logs from later sapo versions add t_round, online and external ages (NaN without external
    groups); the report shows them, and averages the ages over the rounds that have one."""
    age = np.full((3, 10), np.nan)
    age[:, ::2] = 3.0
    age[0, 1] = 6.0
    more = {"t_round": np.full((3, 10), 3.5), "online": np.tile([1.0, 1.0, 1.0, 0.0, 1.0], (3, 2)),
            "external_age_min": age}
    run = write_run(str(tmp_path / "new"), np.full((3, 10), 0.5), more=more)
    text = open(build_report([run], str(tmp_path / "out"), log=lambda m: None)).read()
    pool = table_rows(text, "### External pool")
    header = text[text.index("### External pool"):].splitlines()[2]
    assert "age min (rounds)" in header and "online share" in header and "age max" not in header, header
    # rounds 0,2,4,6,8: node mean 3; round 1: only node 0 has an age, 6; others NaN -> mean over 6 rounds
    assert pool[0][-2:] == [f"{(5 * 3 + 6) / 6:.2f}", "0.800"], pool
    time = table_rows(text, "### Time split")
    assert time[0][-2:] == ["3.000", "3.500"], time  # phases 1 + 2 s; t_round 3.5 s
