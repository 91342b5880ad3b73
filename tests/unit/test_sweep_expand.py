"""Tests scripts/sweep_expand.py: the runs a sweep file expands to (order, run names,
overrides, ranks), the shipped sweeps in experiments/sweeps, and that every kind of bad
line is reported as FILE:LINE with exit status 2 (keys checked against `sapo info`)."""
import os
import subprocess
import sys
import textwrap

import pytest

SRC = os.environ.get("SAPO_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SRC, "scripts", "sweep_expand.py")
SAPO = os.environ.get("SAPO_BIN") or os.path.join(SRC, "build", "sapo")
QUICK = os.path.join(SRC, "experiments", "quick.ini")

if not os.access(SAPO, os.X_OK):
    pytest.skip("no sapo binary at %s (the expander checks keys with `sapo info`)" % SAPO, allow_module_level=True)


def run(path, *args):
    p = subprocess.run([sys.executable, SCRIPT, "--sapo", SAPO, *args, str(path)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write(tmp_path, text, name="s.sweep"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"))
    return p


def lines_of(out):
    return [l.split("\t") for l in out.splitlines()]


def test_grid_times_seeds_order_names_and_overrides(tmp_path):
    p = write(tmp_path, """
        # a comment
        [sweep]
        config = %s
        name = demo
        seeds = 1, 2

        [set]
        optim.lr = 3e-4      ; inline comment
        ranks = 4

        [grid]
        net.latency = 0 | 0.5
        sampling.local sampling.external = 2 2 | 3 1
        """ % QUICK)
    rc, out, err = run(p)
    assert rc == 0, err
    rows = lines_of(out)
    names = [r[0] for r in rows]
    assert names == [
        "demo-latency0-local2-external2-s1", "demo-latency0-local2-external2-s2",
        "demo-latency0-local3-external1-s1", "demo-latency0-local3-external1-s2",
        "demo-latency0.5-local2-external2-s1", "demo-latency0.5-local2-external2-s2",
        "demo-latency0.5-local3-external1-s1", "demo-latency0.5-local3-external1-s2",
    ]
    assert all(r[1] == QUICK for r in rows)
    assert rows[5][2].split() == ["ranks=4", "swarm.nodes=4", "optim.lr=3e-4", "net.latency=0.5",
                                  "sampling.local=2", "sampling.external=2", "swarm.seed=2"]
    # Stable: the same file gives the same lines.
    assert run(p)[1] == out


def test_labels_ranges_default_name_and_constant_axis(tmp_path):
    p = write(tmp_path, """
        [sweep]
        config = %s
        seeds = 3..5 9
        [grid]
        sampling.local sampling.external = 4L0E: 4 0 | 2L2E: 2 2
        gen.temperature = 1.0
        """ % QUICK, name="my sweep.sweep")
    rc, out, err = run(p)
    assert rc == 0, err
    names = [r[0] for r in lines_of(out)]
    # the default name is the file's stem, sanitised; a one-value axis does not enter names
    assert names == ["my_sweep-4L0E-s%d" % s for s in (3, 4, 5, 9)] + ["my_sweep-2L2E-s%d" % s for s in (3, 4, 5, 9)]
    assert "gen.temperature=1.0" in lines_of(out)[0][2].split()


def test_ranks_from_config_chain_and_grid(tmp_path):
    (tmp_path / "a.ini").write_text("[swarm]\nnodes = 6   ; six\n")
    (tmp_path / "b.ini").write_text("base = a.ini\n[model]\nn_layer = 1\n")
    p = write(tmp_path, """
        [sweep]
        config = b.ini
        seeds = 1
        """)
    rc, out, err = run(p)
    assert rc == 0, err
    (row,) = lines_of(out)
    assert row[1] == str(tmp_path / "b.ini")
    assert row[2].split() == ["ranks=6", "swarm.seed=1"]  # from the config chain; no swarm.nodes added
    p = write(tmp_path, """
        [sweep]
        config = b.ini
        seeds = 1
        [grid]
        ranks = 2 | 16
        """)
    rc, out, err = run(p)
    assert rc == 0, err
    rows = lines_of(out)
    assert [r[0] for r in rows] == ["s-ranks2-s1", "s-ranks16-s1"]
    assert rows[1][2].split()[:2] == ["ranks=16", "swarm.nodes=16"]
    (tmp_path / "c.ini").write_text("[model]\nn_layer = 1\n")
    p = write(tmp_path, "[sweep]\nconfig = c.ini\nseeds = 1\n")
    assert lines_of(run(p)[1])[0][2].split()[0] == "ranks=8"  # the schema default


def test_per_node_keys_and_qualified_short_names(tmp_path):
    p = write(tmp_path, """
        [sweep]
        config = %s
        seeds = 1
        [set]
        ranks = 4
        node.3.model.n_layer = 2
        [grid]
        node.0.optim.lr node.1.optim.lr = 1e-3 1e-3 | 1e-3 1e-4
        """ % QUICK)
    rc, out, err = run(p)
    assert rc == 0, err
    names = [r[0] for r in lines_of(out)]
    # both keys end in "lr": names use the whole key; node.0's lr does not differ, so it is
    # left out; '-' inside a value becomes '_' ('-' separates the parts)
    assert names == ["s-node_1_optim_lr1e_3-s1", "s-node_1_optim_lr1e_4-s1"]
    assert "node.3.model.n_layer=2" in lines_of(out)[0][2].split()


def test_warmups_output(tmp_path):
    p = write(tmp_path, """
        [sweep]
        config = %s
        seeds = 1
        [set]
        model.init = results/warmup/x.ckpt
        [warmup]
        results/warmup/x.ckpt =
        results/warmup/y.ckpt = model.n_layer=1 pretrain.steps=5
        """ % QUICK)
    rc, out, err = run(p, "--warmups")
    assert rc == 0, err
    assert lines_of(out) == [["results/warmup/x.ckpt", QUICK, ""],
                             ["results/warmup/y.ckpt", QUICK, "model.n_layer=1 pretrain.steps=5"]]


@pytest.mark.parametrize("name,count", [("paper_ratios", 24), ("latency", 30), ("loss", 36), ("churn", 12),
                                        ("swarm_size", 15), ("heterogeneous", 9)])
def test_shipped_sweeps(name, count):
    path = os.path.join(SRC, "experiments", "sweeps", name + ".sweep")
    rc, out, err = run(path)
    assert rc == 0, err
    rows = lines_of(out)
    assert len(rows) == count
    assert len({r[0] for r in rows}) == count, "run names must be unique"
    for r in rows:
        assert os.path.isfile(r[1])
        assert r[2].split()[0].startswith("ranks=")
    if name == "paper_ratios":
        splits = set()
        for _, _, t in rows:
            ov = dict(tok.split("=", 1) for tok in t.split())
            assert int(ov["sampling.local"]) + int(ov["sampling.external"]) == 8
            assert ov["ranks"] == "8" and ov["model.init"] == "results/warmup/paper.ckpt"
            splits.add(ov["sampling.local"])
        assert splits == {str(i) for i in range(1, 9)}
        assert {r[0] for r in rows} == {"ratios-%dL%dE-s%d" % (i, 8 - i, s) for i in range(1, 9) for s in (1, 2, 3)}


BAD = [
    # (sweep text, expected line, expected substring)
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nmodel.nlayer = 2\n", 5, "unknown key 'model.nlayer'"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nmodel.n_layer = abc\n", 5, "model.n_layer = 'abc': expected an integer in [1, 64]"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[grid]\nnet.drop = 0 | 1.5\n", 5, "net.drop = '1.5': expected a number in [0, 1]"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[grid]\ngen.top_p = 0 | 1\n", 5, "gen.top_p = '0': expected a number in (0, 1]"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nmodel.backend = gpu\n", 5, "expected one of cpu, cuda, auto"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nrun.log_every = 0\n", 5, "run.log_every = '0'"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nnode.1.swarm.rounds = 5\n", 5, "same on every node"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nranks = 2\nnode.2.model.n_layer = 1\n", 6, "node 2, but the run has 2 ranks"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nswarm.seed = 5\n", 5, "swarm.seed: comes from the [sweep] seeds"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nrun.out = x\n", 5, "run.out: is set by the Slurm job"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\nranks = 0\n", 5, "ranks = '0': expected an integer in [1, 4096]"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[grid]\nsampling.local sampling.external = 2 2 | 3\n", 5, "has 1 value(s) for 2 key(s)"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[grid]\nsampling.local = a: 1 | 2\n", 5, "labels on all or none"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[grid]\nsampling.local = 1 | 1\n", 5, "listed twice"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\noptim.lr = 1e-3\n[grid]\noptim.lr = 1e-3 | 3e-4\n", 7, "optim.lr is set twice (first at line 5)"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\noptim.lr 1e-3\n", 5, "expected 'key = value'"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[set]\ntasks.names = a b\n", 5, "expected one value without whitespace"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[things]\n", 4, "unknown section [things]"),
    ("config = {q}\n[sweep]\nseeds = 1\n", 1, "before any section"),
    ("[sweep]\nconfig = {q}\nseeds = one\n", 3, "seeds = 'one'"),
    ("[sweep]\nconfig = {q}\nseeds = 5..2\n", 3, "must run upward"),
    ("[sweep]\nconfig = {q}\nseeds = 1 1\n", 3, "listed twice"),
    ("[sweep]\nconfig = no/such.ini\nseeds = 1\n", 2, "does not exist"),
    ("[sweep]\nconfig = {q}\nseeds = 1\ncolour = red\n", 4, "unknown [sweep] key 'colour'"),
    ("[sweep]\nconfig = {q}\nname = a/b\nseeds = 1\n", 3, "name = 'a/b'"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[warmup]\nw.ckpt = model.n_layer\n", 5, "expected section.key=value overrides"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[warmup]\nw.ckpt = model.n_layers=2\n", 5, "unknown key 'model.n_layers'"),
    ("[sweep]\nconfig = {q}\nseeds = 1\n[grid]\nmodel.init = a/b | a_b\n", 5, "two runs are both named"),
]


@pytest.mark.parametrize("text,line,want", BAD, ids=[b[2][:40] for b in BAD])
def test_bad_sweeps_give_file_line_errors(tmp_path, text, line, want):
    p = tmp_path / "bad.sweep"
    p.write_text(text.format(q=QUICK))
    rc, out, err = run(p)
    assert rc == 2, (out, err)
    assert out == ""
    if "two runs are both named" in want:
        assert "%s: two runs are both named" % p in err, err
    else:
        assert ("%s:%d: " % (p, line)) in err, err
    assert want in err, err


def test_missing_config_and_seeds_reported_together(tmp_path):
    p = tmp_path / "bad.sweep"
    p.write_text("[sweep]\nname = x\n[set]\nmodel.nlayer = 1\n")
    rc, _, err = run(p)
    assert rc == 2
    errs = err.strip().splitlines()
    assert any("no 'config = FILE'" in e for e in errs)
    assert any("no 'seeds = ...'" in e for e in errs)
    assert any("%s:4: unknown key 'model.nlayer'" % p in e for e in errs)


def test_every_info_key_is_accepted(tmp_path):
    """The table parser reads every key sapo knows (no key rejected as unknown)."""
    info = subprocess.run([SAPO, "info"], capture_output=True, text=True, check=True).stdout
    sys.path.insert(0, os.path.join(SRC, "scripts"))
    import sweep_expand
    fields = sweep_expand.parse_info(info)
    table_keys = [l.split()[0] for l in info.splitlines() if l and not l.startswith("#") and "." in l.split()[0]]
    assert sorted(fields) == sorted(k for k in table_keys if k.count(".") == 1)
    assert len(fields) >= 40
    assert fields["model.n_layer"].per_node and not fields["swarm.rounds"].per_node
    assert fields["model.backend"].type == "enum" and fields["model.backend"].range == "cpu|cuda|auto"
    assert fields["swarm.seed"].check(str(2 ** 62)) is None and fields["swarm.seed"].check(str(2 ** 62 + 1))


def test_unavailable_sapo_is_an_error(tmp_path):
    p = write(tmp_path, "[sweep]\nconfig = %s\nseeds = 1\n" % QUICK)
    r = subprocess.run([sys.executable, SCRIPT, "--sapo", str(tmp_path / "nope"), str(p)], capture_output=True, text=True)
    assert r.returncode == 2 and "cannot run" in r.stderr
    r = subprocess.run([sys.executable, SCRIPT, "--no-check", str(p)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("s-s1\t")
