"""Reader side of the h5log crash test: checks an h5log written by tool_h5log_writer (values
are a pure function of the round, mirrored here) with h5py, as the analysis scripts read it.

  h5log_expected.py check PATH [--min-last R] [--no-swmr]
      open once, check every complete row; print "ok rows=N last=R"; exit 1 on a bad value
  h5log_expected.py watch PATH SECONDS
      while the writer runs: open with swmr=True, refresh and check repeatedly; print
      "ok reads=K rows=A..B"; exit 1 on a bad value or when the rows never grow
  h5log_expected.py index RUN_H5 N
      open the run index with swmr=True and check every row of /node/0000 .. /node/N-1
      through its external link (the node files may still be written)
"""
import math
import sys
import time

import h5py
import numpy as np

VEC = 5


def expected(r):
    r = np.asarray(r, dtype=np.int64)
    loss = 0.5 * r + 0.25
    ev = np.where(r % 3 == 0, r / 7.0, np.nan)
    tokens = r * 1000003 + 7
    acc = r[:, None] + np.arange(VEC)[None, :] / 8.0
    return loss, ev, tokens, acc


def check_rows(f, refresh=False):
    """Checks the complete rows (len(/round)); returns (rows, last round). Raises on a bad row.
    Reads /round before opening (or refreshing) any column: a SWMR reader caches what it has
    read, and the writer makes /round durable last, so only in this order is every column at
    least as long as /round while the writer runs (the order h5log.h asks of readers)."""
    rd = f["round"]
    if refresh:
        rd.refresh()  # /round first: the columns are flushed before it, so never shorter
    n = rd.shape[0]
    cols = {k: f[k] for k in ("loss", "eval", "tokens", "task_acc")}
    if refresh:
        for d in cols.values():
            d.refresh()
    for k, d in cols.items():
        if d.shape[0] < n:
            raise AssertionError(f"{k} has {d.shape[0]} rows, /round has {n}")
    rounds = rd[:n]
    first = rounds[0] if n else 0
    if n and not np.array_equal(rounds, np.arange(first, first + n)):
        raise AssertionError(f"rounds not consecutive: {rounds[:10]}...")
    loss, ev, tokens, acc = expected(rounds)
    got_loss, got_eval = cols["loss"][:n], cols["eval"][:n]
    got_tokens, got_acc = cols["tokens"][:n], cols["task_acc"][:n]
    if not np.array_equal(got_loss, loss):
        i = int(np.argmax(got_loss != loss))
        raise AssertionError(f"loss row {i} (round {rounds[i]}): {got_loss[i]!r} != {loss[i]!r}")
    # NaN must come back as NaN exactly where the writer put NaN (array_equal with equal_nan).
    if not np.array_equal(got_eval, ev, equal_nan=True):
        i = int(np.argmax(~((got_eval == ev) | (np.isnan(got_eval) & np.isnan(ev)))))
        raise AssertionError(f"eval row {i} (round {rounds[i]}): {got_eval[i]!r} != {ev[i]!r}")
    if got_tokens.dtype != np.int64 or not np.array_equal(got_tokens, tokens):
        raise AssertionError(f"tokens differ (dtype {got_tokens.dtype})")
    if got_acc.shape != (n, VEC) or not np.array_equal(got_acc, acc):
        raise AssertionError(f"task_acc differs (shape {got_acc.shape})")
    return n, (int(rounds[-1]) if n else -1)


def check_attrs(f):
    labels = [x.decode() if isinstance(x, bytes) else x for x in f["task_acc"].attrs["labels"]]
    if labels != ["a", "bb", "ccc", "task_d", "e"]:
        raise AssertionError(f"labels {labels}")
    if f["loss"].attrs["help"] != "0.5 * round + 0.25":
        raise AssertionError(f"help {f['loss'].attrs['help']!r}")
    if f.attrs["node"] != 3 or f.attrs["h5log_version"] != 1:
        raise AssertionError(f"root attrs {dict(f.attrs)}")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "check":
        min_last = None
        if "--min-last" in sys.argv:
            min_last = int(sys.argv[sys.argv.index("--min-last") + 1])
        swmr = "--no-swmr" not in sys.argv
        with h5py.File(path, "r", swmr=swmr) as f:
            n, last = check_rows(f)
            check_attrs(f)
        if min_last is not None and last < min_last:
            print(f"FAIL: last complete round {last} < {min_last}, the last round the writer reported flushed")
            return 1
        print(f"ok rows={n} last={last}")
        return 0
    if mode == "watch":
        seconds = float(sys.argv[3])
        deadline = time.time() + 30
        f = None
        while f is None:  # the file is readable once the writer's first append started SWMR
            try:
                f = h5py.File(path, "r", swmr=True)
            except (OSError, FileNotFoundError):
                if time.time() > deadline:
                    raise
                time.sleep(0.01)
        reads, lo, hi = 0, math.inf, -1
        end = time.time() + seconds
        while time.time() < end:
            n, _ = check_rows(f, refresh=True)
            reads += 1
            lo, hi = min(lo, n), max(hi, n)
            time.sleep(0.005)
        check_attrs(f)
        f.close()
        if hi <= lo:
            print(f"FAIL: rows never grew while watching ({lo}..{hi})")
            return 1
        print(f"ok reads={reads} rows={lo}..{hi}")
        return 0
    if mode == "index":
        n_nodes = int(sys.argv[3])
        with h5py.File(path, "r", swmr=True) as f:
            if f.attrs["n_nodes"] != n_nodes or sorted(f["node"].keys()) != [f"{k:04d}" for k in range(n_nodes)]:
                raise AssertionError(f"index lists {sorted(f['node'].keys())}, n_nodes {f.attrs['n_nodes']}")
            rows = []
            for k in range(n_nodes):
                g = f[f"node/{k:04d}"]
                rows.append(check_rows(g)[0])
                check_attrs(g)
        print(f"ok nodes={n_nodes} rows={rows}")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
