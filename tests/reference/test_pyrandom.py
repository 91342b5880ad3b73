"""src/tasks/pyrandom.c against CPython's own random.Random: one script of interleaved calls
(random, getrandbits, _randbelow incl. n=1, randrange, randint, choice, uniform, shuffle) for
many seeds (0, small, negative, around 2^32, around 2^63 and far above it via seed words),
run through tool_pyrandom_dump and replayed here; every result must be identical."""
import os
import random
import subprocess

BUILD = os.environ.get("SAPO_BUILD_DIR", "build")
TOOL = next((p for p in (os.path.join(BUILD, "tests", "tool_pyrandom_dump"), os.path.join(BUILD, "tool_pyrandom_dump"))
             if os.path.exists(p)), os.path.join(BUILD, "tests", "tool_pyrandom_dump"))

SEEDS = [0, 1, 2, 42, 1234, -1, -42, -(2**31), 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 1, -(2**32),
         2**40 + 12345, 2**53 + 1, 2**62, 2**63 - 1, -(2**63 - 1), -(2**63),
         # beyond int64: through pyrandom_seed_words
         2**63, 2**64 - 1, 2**64, 2**64 + 7, -(2**64 + 7), 2**96 + 2**33 + 5, 3**100, 2**1000 + 1]


def words(n):
    n = abs(n)
    out = []
    while n:
        out.append(n & 0xFFFFFFFF)
        n >>= 32
    return out or [0]


def make_script(seed, plan_rng, n_calls):
    """Lines for the C tool plus a function replaying them on CPython."""
    lines = []
    if -(2**63) <= seed < 2**63:
        lines.append(f"seed {seed}")
    else:
        lines.append("seedwords " + " ".join(map(str, words(seed))))
    calls = []
    for _ in range(n_calls):
        kind = plan_rng.choice(["random", "getrandbits", "below", "below1", "randrange", "randint",
                                "choice", "uniform", "shuffle", "bigrange"])
        if kind == "random":
            calls.append(("random",))
        elif kind == "getrandbits":
            calls.append(("getrandbits", plan_rng.choice([0, 1, 2, 7, 31, 32, 33, 53, 63, 64])))
        elif kind == "below":
            calls.append(("below", plan_rng.choice([1, 2, 3, 5, 10, 100, 2**31, 2**32 - 1, 2**32 + 1, 2**63 + 5,
                                                     2**64 - 1, plan_rng.randint(1, 10**6)])))
        elif kind == "below1":
            calls.append(("below", 1))
        elif kind == "randrange":
            a = plan_rng.randint(-1000, 1000)
            calls.append(("randrange", a, a + plan_rng.randint(1, 5000)))
        elif kind == "randint":
            a = plan_rng.randint(-10**9, 10**9)
            calls.append(("randint", a, a + plan_rng.randint(0, 100)))
        elif kind == "bigrange":
            a = plan_rng.randint(-(2**62), 2**62)
            calls.append(("randint", a, a + plan_rng.randint(0, 2**62)))
        elif kind == "choice":
            calls.append(("choice", plan_rng.randint(1, 40)))
        elif kind == "uniform":
            calls.append(("uniform", plan_rng.choice([-3.5, 0.0, 1.0]), plan_rng.choice([2.0, 10.25, 1e6])))
        else:
            calls.append(("shuffle", plan_rng.choice([0, 1, 2, 5, 17, 100])))
    for c in calls:
        lines.append(" ".join(map(str, c)))

    def replay():
        r = random.Random(seed)
        out = ["seeded"]
        for c in calls:
            op = c[0]
            if op == "random":
                out.append(repr(r.random()))
            elif op == "getrandbits":
                out.append(str(r.getrandbits(c[1])))
            elif op == "below":
                out.append(str(r._randbelow(c[1])))
            elif op == "randrange":
                out.append(str(r.randrange(c[1], c[2])))
            elif op == "randint":
                out.append(str(r.randint(c[1], c[2])))
            elif op == "choice":
                out.append(str(r.choice(range(c[1]))))
            elif op == "uniform":
                out.append(repr(r.uniform(c[1], c[2])))
            elif op == "shuffle":
                x = list(range(c[1]))
                r.shuffle(x)
                out.append(" ".join(map(str, x)))
        return out

    return lines, replay


def same(py, c):
    if py == c:
        return True
    try:  # floats: %.17g and repr differ in spelling, not in value
        return float(py) == float(c)
    except ValueError:
        return False


def test_pyrandom_matches_cpython():
    assert os.path.exists(TOOL), f"{TOOL} not built"
    plan_rng = random.Random(20250917)
    seeds = SEEDS + [plan_rng.randint(-(2**70), 2**70) for _ in range(20)] + [plan_rng.randint(0, 2**32) for _ in range(20)]
    script, replays = [], []
    for s in seeds:
        lines, replay = make_script(s, plan_rng, 400)
        script += lines
        replays.append((s, len(lines), replay))
    proc = subprocess.run([TOOL], input="\n".join(script) + "\n", capture_output=True, text=True, check=True)
    got = proc.stdout.split("\n")
    pos, checked = 0, 0
    for s, n, replay in replays:
        want = replay()
        assert len(want) == n
        for k in range(n):
            c = got[pos + k]
            assert same(want[k], c), (f"seed {s}: call {k} '{script[pos + k]}': CPython {want[k]!r} vs C {c!r}")
            checked += 1
        pos += n
    print(f"pyrandom: {checked} results equal over {len(seeds)} seeds")
    assert checked > 20000
