"""analysis/numerics_check.py, the study-level check of a change of numerics: the verdict on paired
per-seed rewards (an interval that holds 0 and a difference below the margin passes; a shift of
0.02, or a small but consistent one, fails), the exact sign-flip p (analysis/paired.py), and the run directories it
reads (summary.json, DONE, the seed in config.ini), with one-line errors and exit 2 on bad input."""
import json

import numpy as np
import pytest

from synthetic_runs import config_text
from analysis.numerics_check import main, paired_verdict


def run_dir(tmp_path, name, seed, own_per_agent_round, nodes=8, rounds=300, done=True, version=2):
    d = tmp_path / name
    d.mkdir()
    (d / "config.ini").write_text(config_text(8, 0, seed, rounds))
    (d / "summary.json").write_text(json.dumps({"nodes": nodes, "rounds": rounds, "numerics_version": version,
                                                "cum_reward_own": own_per_agent_round * nodes * rounds}))
    if done:
        (d / "DONE").write_text("done\n")
    return str(d)


def test_identical_runs_pass_with_a_zero_interval():
    v = paired_verdict([0.30, 0.31, 0.29], [0.30, 0.31, 0.29])
    assert v["passed"] and v["mean"] == 0 and v["lo"] == 0 and v["hi"] == 0 and v["p_sign_flip"] == 1.0


def test_noise_around_zero_passes():
    v = paired_verdict([0.300, 0.310, 0.290], [0.302, 0.308, 0.291])
    assert v["lo"] < 0 < v["hi"] and v["passed"]


def test_a_shift_of_two_hundredths_fails():
    v = paired_verdict([0.300, 0.310, 0.290], [0.321, 0.329, 0.311])
    assert v["mean"] == pytest.approx(0.0203, abs=1e-4) and not v["passed"]


def test_a_consistent_small_shift_fails_on_its_interval():
    v = paired_verdict([0.300, 0.310, 0.290], [0.3050, 0.3151, 0.2949])
    assert abs(v["mean"]) < 0.01 and v["lo"] > 0 and not v["passed"]


def test_interval_is_students_t():
    d = np.array([0.01, -0.02, 0.005])
    v = paired_verdict(np.zeros(3), d)
    half = 4.302652729911275 * d.std(ddof=1) / np.sqrt(3)  # t(0.975, 2)
    assert v["lo"] == pytest.approx(d.mean() - half) and v["hi"] == pytest.approx(d.mean() + half)


def test_sign_flip_p_is_the_exact_one():
    assert paired_verdict(np.zeros(4), [1.0, 2.0, 3.0, 4.0])["p_sign_flip"] == pytest.approx(0.125)
    assert paired_verdict(np.zeros(4), [1.0, -1.0, 1.0, -1.0])["p_sign_flip"] == 1.0


def test_the_command_passes_and_fails(tmp_path, capsys):
    olds = [run_dir(tmp_path, f"old-s{s}", s, r, version=1) for s, r in ((1, 0.30), (2, 0.31), (3, 0.29))]
    same = [run_dir(tmp_path, f"new-s{s}", s, r) for s, r in ((1, 0.301), (2, 0.309), (3, 0.291))]
    assert main(olds + ["--new"] + same) == 0
    out = capsys.readouterr().out
    assert "old numerics [1], new numerics [2]" in out and "PASS" in out and "exact sign-flip p" in out
    moved = [run_dir(tmp_path, f"moved-s{s}", s, r) for s, r in ((1, 0.33), (2, 0.34), (3, 0.31))]
    assert main(olds + ["--new"] + moved) == 1
    assert "FAIL" in capsys.readouterr().out


@pytest.mark.parametrize("case,message", [
    ("seed", "seed 5, but its pair"),
    ("unfinished", "not a finished run (no DONE)"),
    ("count", "2 old run directories but 1 new ones"),
    ("summary", "expected sapo's summary.json"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case, message):
    olds = [run_dir(tmp_path, f"old-s{s}", s, 0.3) for s in (1, 2)]
    news = [run_dir(tmp_path, "new-s1", 1, 0.3)]
    if case == "seed":
        news.append(run_dir(tmp_path, "new-s5", 5, 0.3))
    elif case == "unfinished":
        news.append(run_dir(tmp_path, "new-s2", 2, 0.3, done=False))
    elif case == "summary":
        news.append(run_dir(tmp_path, "new-s2", 2, 0.3))
        (tmp_path / "new-s2" / "summary.json").write_text("{\"nodes\": 8}")
    assert main(olds + ["--new"] + news) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("numerics_check: ") and message in err[0], err


# ---- a study reports runs of one numerics version -------------------------------------------

def test_summaries_carry_the_numerics_version(tmp_path):
    from synthetic_runs import write_run
    from analysis.runs import load_any, load_summary
    from analysis.summarize import main as summarize
    old, new = tmp_path / "old", tmp_path / "new"
    write_run(str(old), np.full((2, 10), 0.3))  # a directory from before NUMERICS: version 1
    write_run(str(new), np.full((2, 10), 0.3))
    (new / "NUMERICS").write_text("2\n")
    assert load_any(str(old)).numerics == 1 and load_any(str(new)).numerics == 2
    assert summarize([str(old), str(new), "-o", str(tmp_path / "s")]) == 0
    assert load_summary(str(tmp_path / "s" / "old.npz")).numerics == 1
    assert load_summary(str(tmp_path / "s" / "new.npz")).numerics == 2
    (new / "NUMERICS").write_text("two\n")
    from analysis.errors import AnalysisError
    with pytest.raises(AnalysisError, match="NUMERICS: 'two\\\\n': expected the numerics version"):
        load_any(str(new))


def test_a_study_mixing_numerics_is_refused(tmp_path):
    from analysis.errors import AnalysisError
    from analysis.paper_regime import build
    from analysis.runs import require_one_numerics
    from synthetic_summaries import write_summary
    require_one_numerics([("a", type("R", (), {"numerics": 2})()), ("b", type("R", (), {"numerics": 2})())])
    summaries = tmp_path / "summaries"
    summaries.mkdir()
    for seed in (1, 2):
        for split in ("8L0E", "4L4E"):
            write_summary(str(summaries / f"paper-{split}-s{seed}.npz"), "paper", split, seed)
    path = summaries / "paper-4L4E-s2.npz"
    with np.load(path) as z:
        arrays = dict(z)
    arrays["numerics"] = np.array(2)
    np.savez_compressed(path, **arrays)
    with pytest.raises(AnalysisError, match=r"mix numerics versions: version 1 \(.*\), version 2 \(.*paper-4L4E-s2"):
        build(str(summaries), str(tmp_path / "out"), seeds=(1, 2), last_k=2, window=2)


# ---- and on one OpenBLAS kernel -------------------------------------------------------------

def _set_kernel(run_dir, kernels):
    import h5py
    for k, kernel in enumerate(kernels):
        with h5py.File(str(run_dir / f"node_{k:04d}.h5"), "a") as f:
            f.attrs["blas_kernel"] = kernel


def test_summaries_carry_the_blas_kernel(tmp_path):
    from synthetic_runs import write_run
    from analysis.runs import load_any, load_summary
    from analysis.summarize import main as summarize
    old, zen, mixed = tmp_path / "old", tmp_path / "zen", tmp_path / "mixed"
    for d in (old, zen, mixed):
        write_run(str(d), np.full((2, 10), 0.3))
    _set_kernel(zen, ["Zen", "Zen"])
    _set_kernel(mixed, ["Zen", b"SkylakeX"])  # two hosts of one run
    assert load_any(str(old)).blas_kernel == ""  # logs from before the record
    assert load_any(str(zen)).blas_kernel == "Zen" and load_any(str(mixed)).blas_kernel == "SkylakeX+Zen"
    assert summarize([str(old), str(zen), str(mixed), "-o", str(tmp_path / "s")]) == 0
    got = {n: load_summary(str(tmp_path / "s" / f"{n}.npz")).blas_kernel for n in ("old", "zen", "mixed")}
    assert got == {"old": "", "zen": "Zen", "mixed": "SkylakeX+Zen"}, got


def test_a_study_mixing_blas_kernels_is_refused(tmp_path):
    from analysis.errors import AnalysisError
    from analysis.paper_regime import build
    from analysis.runs import require_one_numerics
    from synthetic_summaries import write_summary
    R = lambda kernel: type("R", (), {"numerics": 1, "blas_kernel": kernel})()
    require_one_numerics([("a", R("Zen")), ("b", R("")), ("c", R("Zen"))])  # unrecorded: not compared
    summaries = tmp_path / "summaries"
    summaries.mkdir()
    for seed in (1, 2):
        for split in ("8L0E", "4L4E"):
            write_summary(str(summaries / f"paper-{split}-s{seed}.npz"), "paper", split, seed)
    for name, kernel in (("paper-8L0E-s1", "Zen"), ("paper-4L4E-s2", "SkylakeX")):
        path = summaries / f"{name}.npz"
        with np.load(path) as z:
            arrays = dict(z)
        arrays["blas_kernel"] = np.array(kernel)
        np.savez_compressed(path, **arrays)
    with pytest.raises(AnalysisError, match=r"mix OpenBLAS kernels: SkylakeX \(.*paper-4L4E-s2.*\), Zen \(.*paper-8L0E-s1"):
        build(str(summaries), str(tmp_path / "out"), seeds=(1, 2), last_k=2, window=2)
