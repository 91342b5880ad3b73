"""experiments/specialists/calibration_table.py, the specialist calibration's table and choice, on
synthetic CKPT.json cells: the plan's rule (other tasks < 0.03) and the amendment's (other tasks
at most the cell's format warm-up's level + 0.05) give different verdicts where they should; the
choice takes the FORMAT with the most tasks that meet the amendment (ties: the smaller), per
task its smallest such SPEC, and a task with none becomes a weak specialty at its best complete
cell (a one-task probe cell never counts); a stopped warm-up is pending; a cell without its
format warm-up is a one-line error."""
import importlib.util
import json
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location(
    "calibration_table", os.path.join(HERE, "..", "..", "experiments", "specialists", "calibration_table.py"))
ct = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ct)
BC, BA, FS, CA = ct.TASKS


def ckpt(pass1, tags=0.95):
    return {"steps": 1, "held_out_drawn": 3, "pass1_by_task": {t: pass1.get(t, 0.0) for t in ct.TASKS},
            "format_rate_by_task": {t: tags for t in ct.TASKS}}


def cell(root, fmt, spec, specialists, base=None):
    d = root / f"f{fmt}-s{spec}"
    d.mkdir(parents=True)
    if base is not False:
        (d / "format.ckpt.json").write_text(json.dumps(ckpt(base or {BA: 0.03})))
    for task, pass1 in specialists.items():
        (d / f"spec-{task}.ckpt.json").write_text(json.dumps(ckpt(pass1)))


def run(tmp_path, root):
    out, choice = tmp_path / "c.csv", tmp_path / "choice.json"
    ct.main([str(root), str(out), "--choose", str(choice)])
    rows = {tuple(l.split(",")[:3]): l.split(",")[-2:] for l in out.read_text().splitlines()[1:]}
    return rows, json.loads(choice.read_text())


def test_rules_and_choice(tmp_path):
    root = tmp_path / "w"
    good = {BA: {BA: 0.15}, FS: {FS: 0.12}, CA: {CA: 0.30}}
    # FORMAT 400: base_conversion never reaches 0.10; calendar's specialist answers basic_arithmetic
    # at 0.07: above the plan's 0.03, within the amendment's 0.03 + 0.05
    cell(root, 400, 300, {BC: {BC: 0.02}, BA: {BA: 0.05}, FS: {FS: 0.12, BA: 0.02}, CA: {CA: 0.30, BA: 0.07}})
    cell(root, 400, 600, {BC: {BC: 0.06, BA: 0.05}, BA: {BA: 0.15}, FS: {FS: 0.20}, CA: {CA: 0.45}})
    cell(root, 400, 1200, {BC: {BC: 0.04}, BA: {BA: 0.18}, FS: {FS: 0.2}, CA: {CA: 0.45}})
    cell(root, 400, 4800, {BC: {BC: 0.09}})  # a one-task probe: never a weak specialty's cell
    # FORMAT 800 meets as many tasks (three): the tie goes to the smaller FORMAT
    cell(root, 800, 300, {BC: {BC: 0.01}, **good})
    rows, choice = run(tmp_path, root)
    assert rows[("400", "300", CA)] == ["fails", "meets"]
    assert rows[("400", "300", FS)] == ["meets", "meets"]
    assert rows[("400", "600", CA)] == ["fails", "fails"]  # 0.45: above the band under both
    assert rows[("400", "4800", BA)] == ["pending", "pending"]
    assert choice["format_steps"] == 400
    assert choice["spec_steps"] == {BC: 600, BA: 600, FS: 300, CA: 300}
    assert choice["weak"] == [BC]
    assert choice["SPEC"] == f"{BC}=600,{BA}=600,{FS}=300,{CA}=300"


def test_amendment_ceiling_is_relative_to_the_cells_format_warmup(tmp_path):
    root = tmp_path / "w"
    # the same specialists; the format warm-up scores 0.0 on basic_arithmetic, so 0.07 there is
    # 0.07 added: above the amendment's ceiling too
    cell(root, 400, 300, {BC: {BC: 0.12}, BA: {BA: 0.15}, FS: {FS: 0.12}, CA: {CA: 0.30, BA: 0.07}},
         base={BA: 0.0})
    cell(root, 400, 600, {BC: {BC: 0.12}, BA: {BA: 0.15}, FS: {FS: 0.12}, CA: {CA: 0.30, BA: 0.04}},
         base={BA: 0.0})
    rows, choice = run(tmp_path, root)
    assert rows[("400", "300", CA)] == ["fails", "fails"]
    assert choice["spec_steps"][CA] == 600 and choice["weak"] == []


def test_more_tasks_meeting_wins_over_a_smaller_format(tmp_path):
    root = tmp_path / "w"
    cell(root, 400, 300, {BC: {BC: 0.01}, BA: {BA: 0.01}, FS: {FS: 0.12}, CA: {CA: 0.30}})
    cell(root, 800, 300, {BC: {BC: 0.01}, BA: {BA: 0.11}, FS: {FS: 0.12}, CA: {CA: 0.30}})
    _, choice = run(tmp_path, root)
    assert choice["format_steps"] == 800 and choice["weak"] == [BC]


def test_a_cell_without_its_format_warmup_is_an_error(tmp_path, capsys):
    root = tmp_path / "w"
    cell(root, 400, 300, {BC: {BC: 0.12}}, base=False)
    with pytest.raises(SystemExit) as e:
        ct.main([str(root), str(tmp_path / "c.csv")])
    assert "f400-s300/format.ckpt.json: missing" in str(e.value)
