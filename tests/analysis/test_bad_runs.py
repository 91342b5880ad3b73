"""Damaged or unfinished runs: a missing DONE or a short node file gives a warning naming the
file and the complete rows are used; a corrupt, missing or empty node file, a bad summary or a
path that is not a run stops with one line naming the file (exit 1), never a traceback."""
import os
import subprocess
import sys

import numpy as np

from synthetic_runs import ROOT, write_run


def cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis.report", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def one_line_error(r, *needles):
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("analysis.report: error: "), r.stderr
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"


def test_missing_done_warns_and_uses_complete_rows(tmp_path):
    run = write_run(str(tmp_path / "crashed"), np.full((3, 6), 0.5), done=False, expected_rounds=10)
    r = cli(run, "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "no DONE file" in r.stderr and "using the 6 rounds every node completed of 10" in r.stderr, r.stderr
    text = (tmp_path / "out" / "REPORT.md").read_text()
    assert "## Warnings" in text and "no DONE file" in text
    assert "| 6/10 | **no** | 9.00 |" in text, text  # 3 nodes x 6 rounds x 0.5


def test_truncated_node_file_uses_common_rows(tmp_path):
    run = write_run(str(tmp_path / "short"), np.full((3, 10), 0.5), rows={1: 7})
    r = cli(run, "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "node_0000.h5 10, node_0001.h5 7, node_0002.h5 10" in r.stderr and "using the first 7" in r.stderr, r.stderr
    assert "only 7 of 10 rounds" in r.stderr
    assert "| 7/10 | yes | 10.50 |" in (tmp_path / "out" / "REPORT.md").read_text()


def test_row_being_written_is_dropped(tmp_path):
    import h5py
    run = write_run(str(tmp_path / "mid"), np.full((3, 10), 0.5))
    with h5py.File(os.path.join(run, "node_0002.h5"), "a") as f:  # /round and one column got round 10
        for name in ("round", "reward_own"):
            d = f[name]
            d.resize((11,))
            d[10] = 10 if name == "round" else 0.9
    r = cli(run, "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "node_0002.h5: datasets of unequal length (10 to 11 rows)" in r.stderr, r.stderr
    assert "| 10/10 | yes | 15.00 |" in (tmp_path / "out" / "REPORT.md").read_text()


def test_corrupt_node_file_is_one_line(tmp_path):
    run = write_run(str(tmp_path / "corrupt"), np.full((3, 10), 0.5))
    path = os.path.join(run, "node_0001.h5")
    with open(path, "r+b") as f:
        f.write(b"not an hdf5 file at all" * 20)
    one_line_error(cli(run, "-o", str(tmp_path / "out")), path, "cannot open as an HDF5 node log")
    # --skip-bad: the other runs still make a report, the bad one is named in the warnings
    good = write_run(str(tmp_path / "good"), np.full((3, 10), 0.5))
    r = cli(run, good, "-o", str(tmp_path / "out2"), "--skip-bad")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "skipped" in r.stderr and path in (tmp_path / "out2" / "REPORT.md").read_text()


def test_missing_node_file_is_one_line(tmp_path):
    run = write_run(str(tmp_path / "lost"), np.full((3, 10), 0.5))
    os.remove(os.path.join(run, "node_0002.h5"))
    one_line_error(cli(run, "-o", str(tmp_path / "out")), os.path.join(run, "node_0002.h5"), "missing")


def test_empty_node_file_is_one_line(tmp_path):
    run = write_run(str(tmp_path / "empty"), np.full((3, 10), 0.5), rows={0: 0}, done=False)
    one_line_error(cli(run, "-o", str(tmp_path / "out")), "node_0000.h5", "no complete round")


def test_not_a_run_and_bad_summary_are_one_line(tmp_path):
    (tmp_path / "nothing").mkdir()
    one_line_error(cli(str(tmp_path / "nothing"), "-o", str(tmp_path / "out")), "nothing", "no run directory")
    one_line_error(cli(str(tmp_path / "absent"), "-o", str(tmp_path / "out")), "absent", "no such file")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 truncated zip")
    one_line_error(cli(str(bad), "-o", str(tmp_path / "out")), str(bad))
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    one_line_error(cli(str(other), "-o", str(tmp_path / "out")), str(other), "analysis.summarize")
    run = write_run(str(tmp_path / "badcfg"), np.full((3, 10), 0.5))
    with open(os.path.join(run, "config.ini"), "w") as f:
        f.write("this is = not\n[[[ an ini\n")
    one_line_error(cli(run, "-o", str(tmp_path / "out")), os.path.join(run, "config.ini"))


def test_summarize_refuses_broken_run_in_one_line(tmp_path):
    run = write_run(str(tmp_path / "lost"), np.full((3, 10), 0.5))
    os.remove(os.path.join(run, "node_0000.h5"))
    r = subprocess.run([sys.executable, "-m", "analysis.summarize", run, "-o", str(tmp_path / "s")], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("analysis.summarize: error: ") and "node_0000.h5" in r.stderr, r.stderr
