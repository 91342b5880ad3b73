"""The arithmetic under basic_arithmetic and decimal_arithmetic against Python itself:
BigInt (+ - * // % gcd) against Python ints, divisor enumeration against sympy.divisors,
PyDec (+ - * / at a context precision, str(), Decimal(str) parsing) against CPython's
decimal module. Every case goes through tests/reference/tool_arith_check `ops`; every
mismatch is listed (first few) and counted."""
import decimal
import json
import math
import os
import random
import subprocess

import pytest

BUILD = os.environ.get("SAPO_BUILD_DIR", "build")
TOOL = next((p for p in (os.path.join(BUILD, "tests", "tool_arith_check"), os.path.join(BUILD, "tool_arith_check"))
             if os.path.exists(p)), os.path.join(BUILD, "tests", "tool_arith_check"))


def run_ops(requests):
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing (build the project first)")
    text = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.run([TOOL, "ops"], input=text, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(x) for x in proc.stdout.split("\n") if x]
    assert len(out) == len(requests)
    return out


def report(name, cases, bad):
    print(f"\n[{name}] {len(cases)} cases, {len(bad)} mismatches")
    assert not bad, f"{name}: {len(bad)}/{len(cases)} differ; first: " + "; ".join(map(repr, bad[:5]))


def rand_int(rng):
    k = rng.choice([0, 1, 2, 5, 9, 10, 18, 19, 20, 27, 40, 60])
    v = rng.randrange(10 ** k) if k else rng.randrange(3)
    if rng.random() < 0.2:
        v = 10 ** rng.randrange(1, 40) - rng.randrange(2)  # 99..9 and 10..0 edges
    return -v if rng.random() < 0.5 else v


def test_bigint_vs_python_int():
    rng = random.Random(1)
    cases = []
    for _ in range(6000):
        a, b = rand_int(rng), rand_int(rng)
        cases.append((rng.choice(["+", "-", "*", "//", "%", "gcd"]), a, b))
    out = run_ops([["int", op, str(a), str(b)] for op, a, b in cases])
    bad = []
    for (op, a, b), got in zip(cases, out):
        try:
            want = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
                    "%": lambda: a % b, "gcd": lambda: math.gcd(a, b)}[op]()
            want = {"r": str(want)}
        except ZeroDivisionError:
            want = {"error": "ZeroDivisionError"}
        if got != want:
            bad.append((op, a, b, want, got))
    report("bigint", cases, bad)


def test_divisors_vs_sympy():
    sympy = pytest.importorskip("sympy")
    rng = random.Random(2)
    ns = list(range(1, 400)) + [2 ** 64 - 59, 2 ** 64, 2 ** 63 - 25, 10 ** 18, 10 ** 24, 2 ** 126,
                                 21031654147764448230, 736453112000214, 2147025387120768]
    # Pollard rho costs about sqrt(smallest prime factor): the basic_arithmetic values (below
    # 10^25) never have two prime factors above 2^42.
    primes = [sympy.prevprime(2 ** k) for k in (20, 31, 32, 36, 40, 42)]
    for _ in range(150):
        ns.append(rng.randrange(1, 10 ** rng.randrange(2, 25)))
    for _ in range(60):  # products of large primes: the rho path
        n = 1
        while True:
            p = rng.choice(primes) ** rng.randrange(1, 3)
            if (n * p).bit_length() >= 127:
                break
            n *= p
            if rng.random() < 0.3:
                break
        ns.append(n * rng.choice([1, 2, 6, 9999]) if (n * 9999).bit_length() < 127 else n)
    for _ in range(40):  # products of four-digit numbers, as basic_arithmetic makes
        n = 1
        for _ in range(rng.randrange(2, 7)):
            n *= rng.randrange(1, 10000)
        ns.append(n)
    ns += [sympy.prevprime(2 ** 126), sympy.prevprime(2 ** 84) * sympy.prevprime(2 ** 42)]
    out = run_ops([["divisors", str(n)] for n in ns])
    bad = []
    for n, got in zip(ns, out):
        want = ",".join(str(d) for d in sympy.divisors(n))
        if got != {"r": want}:
            bad.append((n, want[:80], got))
    report("divisors", ns, bad)
    assert run_ops([["divisors", str(2 ** 127)]]) == [{"error": "range"}]


def rand_dec(rng):
    kind = rng.random()
    if kind < 0.1:
        coef = 0
    else:
        nd = rng.choice([1, 1, 2, 3, 4, 5, 6, 9, 12, 20, 35])
        coef = rng.randrange(10 ** (nd - 1), 10 ** nd)
        if rng.random() < 0.15:
            coef = 10 ** nd - 1
    exp = rng.choice([rng.randrange(-8, 4), rng.randrange(-40, 40), rng.choice([999990, -999990, -1000010, 999999])])
    sign = "-" if rng.random() < 0.4 else ""
    return f"{sign}{coef}E{exp:+d}"


def py_dec_op(op, a, b, prec):
    ctx = decimal.Context(prec=prec)
    try:
        x, y = decimal.Decimal(a), decimal.Decimal(b)
        with decimal.localcontext(ctx):
            r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y}[op]()
        return {"r": str(r)}
    except decimal.DivisionByZero:
        return {"error": "DivisionByZero"}
    except decimal.Overflow:
        return {"error": "Overflow"}
    except decimal.InvalidOperation:
        return {"error": "InvalidOperation"}


def test_pydecimal_ops_vs_python():
    rng = random.Random(3)
    cases = []
    for _ in range(8000):
        a, b = rand_dec(rng), rand_dec(rng)
        if rng.random() < 0.25:  # near-equal operands: cancellation and ties
            b = a.replace("E", "1E") if rng.random() < 0.5 else a
        prec = rng.choice([1, 2, 3, 4, 5, 6, 9, 12, 28, 40])
        cases.append((rng.choice("+-*/"), a, b, prec))
    # Tie-breaking: exact halves at the rounding digit.
    for prec in (1, 2, 3, 5):
        for c in range(0, 40):
            cases.append(("+", f"{c}5E-{prec}", "0", prec - 1 if prec > 1 else 1))
            cases.append(("+", f"{c}5", "0E-3", max(1, len(str(c)))))
    out = run_ops([["dec", op, a, b, prec] for op, a, b, prec in cases])
    bad = []
    for (op, a, b, prec), got in zip(cases, out):
        want = py_dec_op(op, a, b, prec)
        if got != want:
            bad.append((op, a, b, prec, want, got))
    report("pydecimal ops", cases, bad)


# No NUL bytes: a verifier receives a C string, so "1\x00" (which Python rejects) arrives as "1".
PARSE_STRINGS = [
    "1", "-0", "+.5", "5.", ".", "", " ", "1e", "e5", "1E+05", "1e-05", "0.000", "-0.0E-7", "00012.3400",
    "infinity", "-Inf", "INFINITY", "infinit", "infx", "nan", "-NaN", "NaN123", "nan_1", "sNaN", "snan9", "nanx",
    "1__0", "_1", "1_", "_", "1_000", "1._5", "1e1_0", "_ 1", " _1_ ", "1 0", "1\t", "\t1\n", "\u00a01\u3000",
    "\u2028 1", "1\x1c", "\x85 2", "1.2.3", "++1", "+-1", "0x10", "1,000", "1e+-5", "1e5.3", "1.e5", ".e5", "0.e5",
    "١٢٣", "１２", "𝟏.𝟓", "߀", "᭐", "٣.١٤", "1\u200b", "١e٣", "e", "E", "-", "+", "-.", "1e+", "1E-",
    "1e999999999999999999", "1e1000000000000000000", "1e9999999999999999999999", "1e-999999999999999999",
    "1e-1000000000000000000", "1e-1999999999999999997", "1e-1999999999999999998", "10e-1999999999999999998",
    "1e-99999999999999999999999", "0e9999999999999999999999", "0e-1999999999999999998", "0e-1999999999999999997",
    "0e999999999999999999", "0e1000000000000000000", "12345678901234567890123456789012345678901234567890",
    "9" * 300 + "e-300", "3.14159", "-2.71828E+10", "1E+999999", "1E-999999", "0.1e-1000000",
]


def test_decimal_parse_vs_python():
    rng = random.Random(4)
    strings = list(PARSE_STRINGS)
    alphabet = "0123456789.eE+-_ \t\u00a0١𝟏xn"
    for _ in range(3000):
        strings.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 9))))
    out = run_ops([["parse", s] for s in strings])
    bad = []
    for s, got in zip(strings, out):
        try:
            d = decimal.Decimal(s)
            if d.is_nan():
                want = {"r": ("-" if d.is_signed() else "") + ("sNaN" if d.is_snan() else "NaN")}
            else:
                want = {"r": str(d)}
        except decimal.InvalidOperation:
            want = {"error": "InvalidOperation"}
        if got != want:
            bad.append((s, want, got))
    report("Decimal(str)", strings, bad)
