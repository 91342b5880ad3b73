"""Resuming runs, and runs that cannot be silently corrupted (issue 13).

- A resume with another number of ranks, with one node's checkpoint missing, or by a sapo of
  another numerics version (RUN_DIR/NUMERICS; none there means version 1), is refused with
  one line before anything is touched: every file byte-identical, every node file still opens.
- A run killed with SIGKILL and resumed finishes (DONE, summary.json, every round logged) for
  each clock and transport; with the virtual clock its logs equal an uninterrupted run's.
- A resume needs no original model.init: the run directory keeps it (a hard link, or a copy
  from another filesystem) with its digest, and the resumed run equals an uninterrupted one
  (grpo.kl: the reference policy is rebuilt from it); a file given on the resume command line
  with another digest is refused with one line and exit 2, the right one is taken.
- A corrupt model.init (truncated, a flipped byte, another shape; any one node's) is a config
  error before the run directory exists.
- I/O errors (a full disk: /dev/full behind a marker's temporary file, a small tmpfs under the
  node logs) end every rank with one line naming the file and the OS error, no MPI_ABORT, no
  crash, no DONE, and the run resumes to the end (with the virtual clock, bit for bit).
"""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

import h5py
import numpy as np
import pytest

from conftest import BASE as SMALL, ENV, NP, SAPO, column, kill_one_rank, mpirun
from test_netem_p2p import same_logs as same_columns

# One easy task (as in test_grpo_learns_task.py) after a warm-up on it: rewards differ within
# groups, so the nodes really train (with BASE's task mix no reward is earned, no gradient
# flows, and a resume that lost the optimizer state would still log the same numbers).
TASK = ["tasks.names=calendar_arithmetic"]
ROUNDS = 10
# latency 1: with p2p a checkpoint holds messages in flight, and a run stopped there drains them
BASE = [a for a in SMALL if not a.startswith(("swarm.rounds=", "run.checkpoint_every="))] + TASK + \
    [f"swarm.rounds={ROUNDS}", "run.checkpoint_every=4", "net.latency=1"]
COMPARED = ("reward_own", "reward_train", "loss", "grad_norm", "completion_len", "external_used", "eval_pass1",
            "reward_by_task", "msgs_received")  # grad_norm follows the weights, where loss and rewards can agree
FULL = "No space left on device"


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A warm-up checkpoint on TASK for BASE's model."""
    path = tmp_path_factory.mktemp("learner") / "w.ckpt"
    subprocess.run([SAPO, "pretrain", "pretrain.steps=200", "pretrain.batch=16", "--out", str(path), "--quiet"] + TASK
                   + [a for a in SMALL if a.startswith(("model.", "gen.", "tasks."))],
                   env=ENV, check=True, capture_output=True, timeout=600)
    return str(path)


def start_args(out, init, extra=()):
    return BASE + list(extra) + [f"model.init={init}", "--out", str(out), "--quiet"]


def snapshot(run_dir):
    """Every file under run_dir (relative path -> sha256)."""
    files = {}
    for root, _, names in os.walk(run_dir):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                files[os.path.relpath(p, run_dir)] = hashlib.sha256(f.read()).hexdigest()
    return files


def node_files_open(run_dir):
    """Every node log opens with plain h5py (no swmr=True): no writer left it marked open."""
    paths = sorted(run_dir.glob("node_*.h5"))
    for p in paths:
        with h5py.File(p, "r") as f:
            assert len(f["round"]) >= 0
    return len(paths)


def one_error(p):
    """The run's single error line (every line sapo printed on stderr); no MPI_Abort banner,
    no rank killed by a signal (a crash in HDF5 or MPI at exit)."""
    for banner in ("MPI_ABORT", "exited on signal", "Segmentation fault", "exiting improperly"):
        assert banner not in p.stdout + p.stderr, p.stderr
    lines = [l for l in p.stderr.splitlines() if l.startswith("sapo")]
    assert len(lines) == 1, p.stderr
    return lines[0]


def rounds_logged(run_dir):
    return [len(column(run_dir, k, "round")) for k in range(NP)]


def assert_finished(run_dir, rounds=ROUNDS):
    assert (run_dir / "DONE").exists(), "the run did not finish"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["nodes"] == NP and summary["rounds"] == rounds and len(summary["per_node"]) == NP
    for k in range(NP):
        assert (column(run_dir, k, "round") == np.arange(rounds)).all(), f"node {k}: not every round logged"


@pytest.fixture(scope="module")
def straight(tmp_path_factory, learner):
    """Uninterrupted runs, per transport, to compare resumed runs with."""
    done = {}

    def get(transport):
        if transport not in done:
            out = tmp_path_factory.mktemp("straight") / transport
            mpirun(start_args(out, learner, [f"net.transport={transport}"]))
            done[transport] = out
        return done[transport]
    return get


@pytest.mark.parametrize("transport", ["p2p", "allgather"])
def test_resume_refused_before_anything_is_touched(tmp_path, learner, transport):
    out = tmp_path / "run"
    mpirun(start_args(out, learner, [f"net.transport={transport}"]))
    (out / "DONE").unlink()  # as if killed after its last round: continues from ckpt/LATEST = 8
    before = snapshot(out)
    for np_ in (2, NP + 2):
        p = mpirun(["--resume", str(out), "--quiet"], np_=np_, check=False)
        assert p.returncode == 2, p.stderr
        line = one_error(p)
        assert f"cannot resume {out}: it was started with {NP} nodes, this launch has {np_} (mpirun -np {NP})" in line
        assert snapshot(out) == before, "a refused resume changed the run directory"
        assert node_files_open(out) == NP
    # one node's checkpoint missing: refused the same way, naming the node and the file
    state = out / "ckpt" / "node_0003.r0000008.state"
    kept = state.read_bytes()
    state.unlink()
    before = snapshot(out)
    p = mpirun(["--resume", str(out), "--quiet"], check=False)
    assert p.returncode == 2, p.stderr
    line = one_error(p)
    assert "node 3" in line and str(state) in line, line
    assert snapshot(out) == before and node_files_open(out) == NP
    state.write_bytes(kept)
    # made by a sapo of other numerics (model/numerics.h), or before NUMERICS was recorded
    # (numerics 1): refused, since the continued run would not replay
    numerics = out / "NUMERICS"
    version = int(numerics.read_text())
    assert version >= 2 and numerics.read_text() == f"{version}\n"
    for text, made in ((f"{version + 1}\n", version + 1), (None, 1)):
        if text is None:
            numerics.unlink()
        else:
            numerics.write_text(text)
        before = snapshot(out)
        p = mpirun(["--resume", str(out), "--quiet"], check=False)
        assert p.returncode == 2, p.stderr
        line = one_error(p)
        assert f"cannot resume {out}: it was made with numerics version {made} and this sapo computes version " \
               f"{version}" in line, line
        assert snapshot(out) == before and node_files_open(out) == NP
    numerics.write_text(f"{version}\n")
    mpirun(["--resume", str(out), "--quiet"])
    assert_finished(out)
    assert json.loads((out / "summary.json").read_text())["numerics_version"] == version


# virtual + p2p: tests/mpi/test_netem_p2p.py::test_kill_one_rank_then_resume
@pytest.mark.parametrize("clock,transport", [("virtual", "allgather"), ("wall", "p2p"), ("wall", "allgather")])
def test_killed_run_resumes_to_the_end(tmp_path, learner, clock, transport):
    # 60 rounds: a kill between checkpoints 6 and 45 lands while the ranks still run
    net = [f"net.clock={clock}", f"net.transport={transport}", "net.drop=0.2", "swarm.rounds=60",
           "run.checkpoint_every=3"]
    out = tmp_path / "killed"
    kill_one_rank(["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(NP), SAPO, "run"] +
                  start_args(out, learner, net), out)
    mpirun(["--resume", str(out), "--quiet"], timeout=120)
    assert_finished(out, 60)
    if clock == "virtual":
        straight = tmp_path / "straight"
        mpirun(start_args(straight, learner, net))
        assert same_columns(straight, out, COMPARED) is None, same_columns(straight, out, COMPARED)


def corrupt(src, dst, how):
    data = bytearray(open(src, "rb").read())
    if how == "truncated":
        data = data[:-100]
    else:
        data[128 + len(data) // 2] ^= 0x01  # one bit of the body (after the 128-byte header)
    open(dst, "wb").write(bytes(data))


@pytest.mark.parametrize("case,node,message", [("truncated", 0, "truncated: payload has"),
                                               ("flipped", 2, "checksum mismatch"),
                                               ("shape", 1, "shape mismatch")])
def test_corrupt_init_is_a_config_error(tmp_path, learner, case, node, message):
    bad = tmp_path / "bad.ckpt"
    if case == "shape":
        extra = [f"node.{node}.model.d_model=48", f"node.{node}.model.n_head=4"]
    else:
        corrupt(learner, bad, case)
        extra = [f"node.{node}.model.init={bad}"] if node else [f"model.init={bad}"]
    out = tmp_path / "run"
    p = mpirun(BASE + [f"model.init={learner}"] + extra + ["--out", str(out)], check=False)
    assert p.returncode == 2, p.stderr
    line = one_error(p)
    assert "config error" in line and f"node {node}: model.init: checkpoint" in line and message in line, line
    if case != "shape":
        assert str(bad) in line
    assert not out.exists(), "the run directory was created despite the bad model.init"


@pytest.fixture
def rendezvous(monkeypatch):
    """Every p2p message above 256 bytes by rendezvous (Open MPI's shared-memory transport):
    a send completes only once received, so a run that stops with messages in flight ends only
    if every node drains what was sent to it (small eager sends would hide a missing drain)."""
    monkeypatch.setitem(ENV, "OMPI_MCA_btl_vader_eager_limit", "256")


# A marker whose temporary file is /dev/full (writes fail with ENOSPC; root ignores chmod):
# (path made to fail, text the error line names).
MARKERS = [("DONE.tmp", "DONE"), ("summary.json.tmp", "summary.json"), ("run.log", "run.log"),
           ("config.ini.tmp", "config.ini"), ("ckpt/node_0001.r0000008.model.tmp", "node_0001.r0000008.model"),
           ("ckpt/LATEST.tmp", "LATEST")]


@pytest.mark.parametrize("target,named", MARKERS, ids=[m[1] for m in MARKERS])
def test_full_disk_at_a_marker(tmp_path, learner, straight, rendezvous, target, named):
    out = tmp_path / "run"
    (out / target).parent.mkdir(parents=True)
    os.symlink("/dev/full", out / target)
    p = mpirun(start_args(out, learner), check=False, timeout=120)
    assert p.returncode == 1, p.stderr
    line = one_error(p)
    assert named in line and FULL in line, line
    assert not (out / "DONE").exists()
    if (out / target).is_symlink():
        (out / target).unlink()  # run.log is written in place (appended to)
    if named == "DONE":
        (out / "DONE").write_bytes(b"")  # what an older sapo left on a full disk: not a finished run
    if named == "config.ini":  # nothing started: no node file; a new start into the same directory works
        assert not list(out.glob("node_*.h5"))
        mpirun(start_args(out, learner))
    else:
        assert node_files_open(out) == NP
        mpirun(["--resume", str(out), "--quiet"])
    assert_finished(out)
    assert same_columns(straight("p2p"), out, COMPARED) is None, same_columns(straight("p2p"), out, COMPARED)


def test_full_disk_in_the_logs_tmpfs(tmp_path, learner, straight, rendezvous):
    """--out on a small tmpfs with 256 KiB left (beside the copies of model.init the run keeps
    in init/, another filesystem's file): the node logs are created (24 KB each) but
    their first append (about 330 KB of chunks each) fails. The failing nodes stop logging and
    every rank stops at the first checkpoint with one line; nothing crashes in HDF5 (whose
    close of such a file fails), and the resumed run, which starts its logs again, finishes."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if m.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (mount: {m.stderr.strip()}): the full-disk case is untested")
    try:
        st = os.statvfs(mnt)
        with open(mnt / "filler", "wb") as f:
            f.write(b"\0" * (st.f_bavail * st.f_frsize - 256 * 1024 - NP * (os.path.getsize(learner) + 4096)))
        out = mnt / "run"
        p = mpirun(start_args(out, learner), check=False, timeout=120)
        assert p.returncode == 1, p.stderr
        line = one_error(p)
        assert "h5log" in line and ("errno = 28" in line or FULL in line), line
        assert not (out / "DONE").exists()
        os.remove(mnt / "filler")
        assert all(n < ROUNDS for n in rounds_logged(out))  # readable (swmr=True: a log HDF5 could not close)
        mpirun(["--resume", str(out), "--quiet"], timeout=120)
        assert_finished(out)
        assert same_columns(straight("p2p"), out, COMPARED) is None, same_columns(straight("p2p"), out, COMPARED)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.parametrize("where", ["same_fs", "dev_shm"])  # kept as a hard link / as a copy
def test_resume_without_the_original_init(tmp_path, learner, where):
    extra = ["grpo.kl=0.05"]  # a resumed node rebuilds its reference policy from model.init
    straight = tmp_path / "straight"
    mpirun(start_args(straight, learner, extra))
    home = tmp_path if where == "same_fs" else tempfile.mkdtemp(dir="/dev/shm")
    try:
        init = os.path.join(home, "warmup.ckpt")
        shutil.copy(learner, init)
        out = tmp_path / "run"
        mpirun(start_args(out, init, extra))
        kept = out / "init" / "node_0000.ckpt"
        assert kept.exists() and (os.stat(kept).st_nlink > 1) == (where == "same_fs")
        moved = tmp_path / "moved.ckpt"
        shutil.move(init, moved)  # the init file is gone from where the run started it
        (out / "DONE").unlink()  # as if killed after its last round: continues from ckpt/LATEST = 8
        mpirun(["--resume", str(out), "--quiet"])
        assert_finished(out)
        assert same_columns(straight, out, COMPARED + ("kl",)) is None, same_columns(straight, out, COMPARED)

        # without the kept files only a file with the recorded digest is taken
        (out / "DONE").unlink()
        for f in (out / "init").glob("*.ckpt"):
            f.unlink()
        before = snapshot(out)
        p = mpirun(["--resume", str(out), "--quiet"], check=False)
        assert p.returncode == 2, p.stderr
        line = one_error(p)
        assert f"cannot resume {out}: node 0: model.init: cannot open {init}" in line and "fnv1a64" in line, line
        wrong = tmp_path / "wrong.ckpt"
        corrupt(learner, wrong, "flipped")
        p = mpirun(["--resume", str(out), f"model.init={wrong}", "--quiet"], check=False)
        assert p.returncode == 2, p.stderr
        line = one_error(p)
        assert f"node 0: model.init: {wrong} has fnv1a64" in line and "not the file the run started from" in line, line
        assert snapshot(out) == before, "a refused resume changed the run directory"
        mpirun(["--resume", str(out), f"model.init={moved}", "--quiet"])
        assert_finished(out)
        assert same_columns(straight, out, COMPARED + ("kl",)) is None
    finally:
        if where != "same_fs":
            shutil.rmtree(home, ignore_errors=True)
