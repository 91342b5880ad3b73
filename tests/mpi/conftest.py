"""Shared set-up of the swarm tests: how to launch `sapo run` under mpirun, how to SIGKILL one
rank mid-run, a briefly warmed-up checkpoint so rewards are not all zero, reading a node's log
column, and where the helper programs (tests/<label>/tool_*.c) are built."""
import os
import shutil
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest

SAPO = os.environ.get("SAPO_BIN", "build/sapo")
BUILD = os.environ.get("SAPO_BUILD_DIR", os.path.dirname(SAPO) or "build")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
NP = 4
# A tiny model and task set: 4 ranks x a few rounds run in seconds.
BASE = ["model.n_layer=1", "model.d_model=32", "model.n_head=2", "model.n_ctx=160", "gen.max_new_tokens=24",
        "tasks.preset=tiny", "sampling.groups=3", "sampling.local=2", "sampling.external=1", "grpo.completions=4",
        "swarm.rounds=4", "run.eval_every=2", "run.eval_questions=4", "optim.lr=1e-3", "run.checkpoint_every=0",
        # 24 new bytes cannot write most tiny arc_1d answers: the budget check would stop these runs on
        # purpose; the tests here are about the swarm, so they keep the small budget and switch it off
        # (test_swarm_run.py tests the check itself).
        "tasks.max_unanswerable=1"]


def mpirun(args, np_=NP, check=True, timeout=600):
    """`mpirun -np np_ sapo run ARGS`; on timeout its whole process group (every rank) is killed."""
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(np_), SAPO, "run"] + args
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{' '.join(cmd)} did not finish in {timeout} s\n{out}\n{err}")
    p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def kill_one_rank(cmd, out, first=6, last=45, tries=3):
    """Starts cmd (an `mpirun ... sapo run ... --out out`) and SIGKILLs one rank once ckpt/LATEST
    reads a round in [first, last], then waits for mpirun; the run must not have finished.

    A tiny swarm writes a checkpoint every few tens of milliseconds, so the window is wide (about
    0.3 s of a 60-round run here) and LATEST is read every 2 ms. Where the kill still came too late
    (a poller held off the CPU until the run ended), the run is started again from an empty out, at
    most `tries` times: that is the harness missing its moment, not the run misbehaving."""
    latest = out / "ckpt" / "LATEST"
    for attempt in range(tries):
        if attempt:
            shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.time() + 120
        at = None
        while time.time() < deadline and proc.poll() is None:
            try:
                text = latest.read_text().strip()
            except OSError:
                text = ""
            if text.isdigit() and first <= int(text) <= last:
                at = int(text)
                break
            time.sleep(0.002)
        killed = False
        if at is not None and proc.poll() is None:
            ranks = subprocess.run(["pgrep", "-f", str(out)], capture_output=True, text=True).stdout.split()
            victims = [int(p) for p in ranks if int(p) != proc.pid]
            try:
                os.kill(victims[-1], signal.SIGKILL)
                killed = True
            except (IndexError, ProcessLookupError):  # no rank left to kill: the run is ending
                pass
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        if killed and not (out / "DONE").exists():
            return at
    raise AssertionError(f"{tries} runs ended before one of their ranks could be killed "
                         f"(ckpt/LATEST never read {first}..{last} while the run ran)")


def run_swarm(tmp_path, name, extra, warmup_ckpt):
    """A finished run of BASE + extra from the warm-up checkpoint; returns its directory."""
    out = tmp_path / name
    mpirun(BASE + [f"model.init={warmup_ckpt}", "--out", str(out), "--quiet"] + extra)
    assert (out / "DONE").exists(), "the run did not finish"
    return out


def column(run_dir, node, name):
    """Node `node`'s dataset `name`, complete rows only (the log is written in SWMR mode)."""
    with h5py.File(run_dir / f"node_{node:04d}.h5", "r", swmr=True) as f:
        n = len(f["round"])
        return np.array(f[name][:n])


def tool(name):
    """The path of the helper program `name` (a tests/<label>/tool_*.c) in the build."""
    return os.path.join(BUILD, "tests", name)


def pretrain(path, extra=(), steps=150):
    """Writes a warm-up checkpoint for BASE's model (plus `extra` keys) to path; returns it."""
    subprocess.run([SAPO, "pretrain", f"pretrain.steps={steps}", "pretrain.batch=16", "--out", str(path), "--quiet"]
                   + [a for a in BASE if a.startswith(("model.", "gen.", "tasks."))] + list(extra),
                   env=ENV, check=True, capture_output=True, timeout=600)
    return str(path)


# calendar_arithmetic alone: the task a briefly warmed-up tiny model answers sometimes, so
# groups have mixed rewards and advantages of both signs (the off-policy arms' tests)
CALENDAR = ["tasks.names=calendar_arithmetic"]


@pytest.fixture(scope="session")
def calendar_warmup(tmp_path_factory):
    """A warm-up on calendar_arithmetic alone (CALENDAR), for runs of that task."""
    return pretrain(tmp_path_factory.mktemp("warmup_calendar") / "w.ckpt", CALENDAR, steps=300)


@pytest.fixture(scope="session")
def warmup(tmp_path_factory):
    """A briefly warmed-up checkpoint for BASE's model, so rewards are not all zero."""
    return pretrain(tmp_path_factory.mktemp("warmup") / "w.ckpt")
