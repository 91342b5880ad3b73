"""Analysis numbers against hand-computed values: moving average, roughness, oscillation, band,
cumulative sums, mean/spread over seeds and the change vs the baseline, on synthetic runs."""
import math

import numpy as np
import pytest

from synthetic_runs import standard_sweep
from analysis.grouping import group_runs
from analysis.metrics import (band_width, change, config_metrics, moving_average, oscillation, roughness, spread,
                              window_for)
from analysis.runs import load_run_dir


def close(got, want, tol=1e-12):
    assert abs(got - want) <= tol, f"got {got!r}, want {want!r} (diff {abs(got - want):.3g})"


def test_moving_average_is_trailing_valid():
    got = moving_average([1, 2, 3, 4, 5], 2)
    assert np.allclose(got, [1.5, 2.5, 3.5, 4.5]), got
    got = moving_average([[0, 3, 6, 9], [1, 1, 1, 1]], 3)
    assert np.allclose(got, [[3, 6], [1, 1]]), got
    assert moving_average([1, 2], 3).size == 0
    assert np.allclose(moving_average([4, 5], 1), [4, 5])


def test_window_shrinks_for_short_runs():
    assert window_for(2000) == 100
    assert window_for(60) == 12
    assert window_for(10) == 2
    assert window_for(3) == 1
    assert window_for(600, 50) == 50


def test_roughness_oscillation_band():
    close(roughness([0, 1, 0, 1]), 1.0)
    close(roughness([0.2, 0.5, 0.4]), 0.2)
    assert math.isnan(roughness([1.0]))
    # a straight line plus [1,-1,-1,1] (orthogonal to 1 and t): the fit removes the line exactly
    t = np.arange(4)
    close(oscillation(3 + 2 * t + np.array([1, -1, -1, 1])), 1.0, 1e-9)
    close(oscillation(5 - 0.5 * t), 0.0, 1e-9)
    assert math.isnan(oscillation([1, 2]))
    close(band_width([[0, 1, 2], [1, 1, 1], [3, 1, 2]]), (3 + 0 + 1) / 3)


def test_spread_and_change():
    s = spread([3.0, 6.0])
    close(s["mean"], 4.5)
    close(s["std"], math.sqrt(4.5))
    assert (s["min"], s["max"], s["n"]) == (3.0, 6.0, 2)
    assert math.isnan(spread([2.0])["std"])
    close(change(15.0, 4.5), 15.0 / 4.5 - 1)
    assert math.isnan(change(1.0, 0.0)) and math.isnan(change(1.0, None))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    base = tmp_path_factory.mktemp("sweep")
    runs = [load_run_dir(p) for p in standard_sweep(str(base))]
    configs = group_runs(runs)
    return configs, [config_metrics(c, window_for(10)) for c in configs]


def test_grouping_and_baseline(sweep):
    configs, _ = sweep
    assert [c.label for c in configs] == ["4/0", "2/2"], [c.label for c in configs]
    assert [c.seeds for c in configs] == [["1", "2"], ["1", "2"]]
    assert configs[0].is_baseline and configs[1].baseline is configs[0]
    assert configs[0].paper == "8/0" and configs[1].paper == "4/4"


def test_cumulative_per_run_and_config(sweep):
    _, ms = sweep
    base, shared = ms
    # 4/0: 3 nodes x 10 rounds x s, s = 0.1, 0.2
    for got, want in zip([r["reward_own"]["cumulative"] for r in base["runs"]], [3.0, 6.0]):
        close(got, want, 1e-9)
    # 2/2: sum_k,t (s + 0.1k + 0.1 (t mod 2)) = 10 (3s + 0.3) + 3 x 0.5
    for got, want in zip([r["reward_own"]["cumulative"] for r in shared["runs"]], [13.5, 16.5]):
        close(got, want, 1e-9)
    # training batch = own + 0.05 on 30 node-rounds
    for got, want in zip([r["reward_train"]["cumulative"] for r in shared["runs"]], [15.0, 18.0]):
        close(got, want, 1e-9)
    s = base["reward_own"]["cumulative"]
    close(s["mean"], 4.5, 1e-9), close(s["std"], math.sqrt(4.5), 1e-9), close(s["min"], 3.0, 1e-9)
    close(s["max"], 6.0, 1e-9)
    s = shared["reward_own"]["cumulative"]
    close(s["mean"], 15.0, 1e-9), close(s["std"], math.sqrt(4.5), 1e-9)
    close(change(s["mean"], base["reward_own"]["cumulative"]["mean"]), 15.0 / 4.5 - 1, 1e-9)
    close(change(shared["reward_train"]["cumulative"]["mean"], base["reward_train"]["cumulative"]["mean"]),
          16.5 / 6.0 - 1, 1e-9)


def test_shape_numbers(sweep):
    _, ms = sweep
    base, shared = ms
    assert base["window"] == 2
    # 2/2: the node mean alternates s + 0.1, s + 0.2: every step changes by 0.1; the window-2
    # average is flat (oscillation 0); per-node averages are s + 0.1k + 0.05, so the band is 0.2
    close(shared["reward_own"]["roughness"]["mean"], 0.1, 1e-9)
    close(shared["reward_own"]["oscillation"]["mean"], 0.0, 1e-9)
    close(shared["reward_own"]["band_width"]["mean"], 0.2, 1e-9)
    close(shared["reward_own"]["peak_ma"]["mean"], 0.35 + 0.1 + 0.05, 1e-9)
    close(base["reward_own"]["roughness"]["mean"], 0.0, 1e-12)
    close(base["reward_own"]["band_width"]["mean"], 0.0, 1e-12)


def test_eval_and_network(sweep):
    _, ms = sweep
    ev = ms[1]["eval"]
    assert ev["rounds"].tolist() == [4, 9]
    assert np.allclose(ev["mean"], [0.2, 0.2]), ev["mean"]  # nodes score 0.1, 0.2, 0.3
    close(ms[1]["network"]["bytes_sent"], 2000.0)  # nodes send 1000, 2000, 3000 bytes a round
    close(ms[0]["network"]["msgs_sent"], 0.0)
    close(ms[1]["time"]["t_train"], 2.0)
