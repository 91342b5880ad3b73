"""Candidate answers for decimal_arithmetic entries (imported by the cross-check tests):
the oracle in other notations, values at and just past the tolerance (10^-3, the default
config's, and 10^-max_num_decimal_places of the entry's own config), where
the package's rounded subtraction decides, ties to even included), the forms Decimal()
accepts or rejects (signs, whitespace, underscores, Unicode digits, exponents at the
constructor's limits, NaN / Infinity), superstrings and junk."""
import decimal
import random
import re

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _places(entry):
    try:
        return int(entry["metadata"]["difficulty"]["decimal_places"][1])
    except (KeyError, TypeError, IndexError, ValueError):
        return 3


def _prec(entry):
    m = re.match(r"Please solve this problem to a maximum of (\d+) significant digits", entry.get("question", ""))
    return int(m.group(1)) if m else 28


def candidates(entry):
    o = entry["answer"]
    rng = random.Random(entry["question"])
    out = [o, " " + o + " ", "\n" + o, "+" + o, "-" + o, o + "0", "0" + o, o + "e0", o + "E+00", o.lower(),
           o.replace(".", ","), o.replace(".", "_"), o.translate(ARABIC_INDIC), o.translate(FULLWIDTH),
           o[:1] + "_" + o[1:], "_" + o, o + "_", f"The answer is {o}", f"≈{o}", o + " units", o + "%",
           "", " ", ".", "-", "1,000.5", "0x1A", "inf", "-Infinity", "nan", "-NaN7", "sNaN", "1e", "e3",
           "1e999999999999999999", "1e1000000000000000000", "1e-1999999999999999997", "9.99999E+999999",
           "0E+999999999999999999", "0e-1999999999999999998",
           "".join(rng.choice("0123456789.eE+-_ ") for _ in range(rng.randrange(1, 10)))]
    try:
        d = decimal.Decimal(o)
    except decimal.InvalidOperation:
        return out
    if not d.is_finite():
        return out
    prec = _prec(entry)
    # The scorer rl-swarm uses has the default tolerance 10^-3; a dataset's own score_answer
    # uses 10^-max_num_decimal_places. Probe both boundaries.
    for places in sorted({3, _places(entry)}):
        with decimal.localcontext(decimal.Context(prec=200)):
            tol = decimal.Decimal(10) ** -places
            ulp = tol * decimal.Decimal(10) ** (1 - prec)  # one unit in the last place of a prec-digit tol
            steps = [tol, -tol, tol / 2, -tol / 2, 2 * tol, tol * decimal.Decimal("1.000001"),
                     tol + ulp / 2, -(tol + ulp / 2), tol + ulp * decimal.Decimal("0.5000001"), tol + ulp * 3 / 2,
                     tol + ulp, tol - ulp / 2, decimal.Decimal("1E-40"), tol * 10]
            out += [str(d + s) for s in steps]
    places = _places(entry)
    out += [f"{d:f}", f"{d:e}", f"{d:E}", str(d.normalize()), str(float(d)), repr(float(d)),
            str(d * 10), str(-d), o + "0" * 60, o + "0" * 60 + "1" if "E" not in o else o,
            str(round(d, 0)) if abs(d) < 10 ** 20 else o, str(round(d, 1)) if abs(d) < 10 ** 20 else o,
            f"{d:.{max(0, places)}f}" if abs(d) < 10 ** 20 else o]
    return out
