"""What the PyTorch sides of `sapo bench` share (the twin of src/bench/bench_harness.c): one
JSON object per line to the C side, the timing loop (warm-up untimed, then repeats timed one
by one), fields of /proc/self/status, the peak RSS and its reset."""
import json
import resource
import time


def emit(obj):
    """One JSON line to stdout, flushed: the C side reads them as they come."""
    print(json.dumps(obj), flush=True)


def timed(fn, warmup, repeats, sync=lambda: None):
    """fn() warmup times untimed, then repeats times timed: {"avg", "min", "max"} seconds.
    sync() after each (a GPU's queued work counts in the iteration that queued it)."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return {"avg": sum(times) / len(times), "min": min(times), "max": max(times)}


def status_kb(field):
    """A field of /proc/self/status in kB (VmHWM, VmRSS), or -1."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def peak_rss_kb():
    """This process's peak RSS in kB: VmHWM, else ru_maxrss."""
    hwm = status_kb("VmHWM")
    return hwm if hwm > 0 else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_reset():
    """Resets VmHWM to the current RSS (Linux clear_refs 5); False where that is refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False
