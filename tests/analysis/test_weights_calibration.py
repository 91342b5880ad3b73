"""The weights study's calibration rule (analysis.weights_calibration) on synthetic seed-0
summaries: non-specialty pass@1 over the last five evaluations is 0.08 + E (synthetic_specialists,
seed 0), E planted per candidate."""
import csv

import pytest

from synthetic_specialists import write_summary
from analysis.weights_calibration import diloco_grid, main, noloco_grid


def write(folder, stage_grid, es, skip=(), wrong=None):
    folder.mkdir(parents=True, exist_ok=True)
    for (name, keys), e in zip(stage_grid, es):
        if name in skip:
            continue
        config = dict(keys)
        if name == wrong:
            config["sync.every"] = "20"
        write_summary(str(folder / f"{name}-8L0E-s0.npz"), name, "8L0E", 0, e=e, config=config)
    return folder


def chosen(out, stage):
    with open(out / f"{stage}-candidates.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return [r["name"] for r in rows if r["chosen"] == "yes"], rows, (out / f"{stage}.keys").read_text().split()


def test_grids():
    names = [n for n, _ in diloco_grid()]
    assert names == ["clean_diloco_H10_lr0.7_m0.9", "clean_diloco_H10_lr1_m0", "clean_diloco_H50_lr0.7_m0.9",
                     "clean_diloco_H50_lr1_m0"]
    nol = noloco_grid({"sync.every": "50", "sync.outer_lr": "0.7", "sync.outer_momentum": "0.9"})
    assert [n for n, _ in nol] == ["clean_noloco_pull0", "clean_noloco_pull0.5"]
    assert nol[1][1] == {"sync.method": "noloco", "sync.every": "50", "sync.outer_lr": "0.7",
                         "sync.outer_momentum": "0.9", "sync.group": "2", "sync.pull": "0.5"}


@pytest.mark.parametrize("h50, want", [(0.016, "clean_diloco_H50_lr0.7_m0.9"),  # within 0.005: the larger H
                                        (0.014, "clean_diloco_H10_lr0.7_m0.9")])  # 0.006 below: the largest
def test_diloco_rule(tmp_path, h50, want):
    s = write(tmp_path / "s", diloco_grid(), [0.020, 0.010, h50, 0.0])
    assert main(["choose", "diloco", str(s), "-o", str(tmp_path / "c")]) == 0
    got, rows, keys = chosen(tmp_path / "c", "diloco")
    assert got == [want] and len(rows) == 4
    assert float(rows[0]["primary1"]) == pytest.approx(0.100, abs=1e-6)
    assert keys == [f"{k}={v}" for k, v in dict(diloco_grid())[want].items()]


def test_noloco_rule_and_refusals(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "diloco.keys").write_text("sync.method=diloco\nsync.every=50\nsync.outer_lr=1\n"
                                                "sync.outer_momentum=0\n")
    dk = str(tmp_path / "c" / "diloco.keys")
    grid = noloco_grid({"sync.every": "50", "sync.outer_lr": "1", "sync.outer_momentum": "0"})
    s = write(tmp_path / "s", grid, [0.01, 0.02])
    assert main(["choose", "noloco", str(s), "-o", str(tmp_path / "c"), "--diloco", dk]) == 0
    assert chosen(tmp_path / "c", "noloco")[0] == ["clean_noloco_pull0.5"]
    s2 = write(tmp_path / "s2", grid, [0.02, 0.02])  # an exact tie: the first listed, pull 0
    assert main(["choose", "noloco", str(s2), "-o", str(tmp_path / "c"), "--diloco", dk]) == 0
    assert chosen(tmp_path / "c", "noloco")[0] == ["clean_noloco_pull0"]
    # a candidate missing, or run with other settings: refused, one line
    s3 = write(tmp_path / "s3", diloco_grid(), [0.02] * 4, skip=("clean_diloco_H10_lr1_m0",))
    assert main(["choose", "diloco", str(s3), "-o", str(tmp_path / "d")]) == 1
    assert "clean_diloco_H10_lr1_m0-8L0E-s0.npz: missing" in capsys.readouterr().err
    s4 = write(tmp_path / "s4", diloco_grid(), [0.02] * 4, wrong="clean_diloco_H50_lr1_m0")
    assert main(["choose", "diloco", str(s4), "-o", str(tmp_path / "d")]) == 1
    assert "sync.every = 20, the candidate clean_diloco_H50_lr1_m0 sets 50" in capsys.readouterr().err
    assert not (tmp_path / "d" / "diloco.keys").exists()
    assert main(["grid", "noloco"]) == 1 and "--diloco" in capsys.readouterr().err
    (tmp_path / "bad.keys").write_text("every=5\n")
    assert main(["grid", "noloco", "--diloco", str(tmp_path / "bad.keys")]) == 1
    assert "bad.keys:1: 'every=5': expected sync.KEY=VALUE" in capsys.readouterr().err
