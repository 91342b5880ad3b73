"""Candidate answers for basic_arithmetic entries (imported by the cross-check tests):
the oracle and its near misses, other spellings of the same integer that the default
scorer must NOT accept, superstrings that earn partial credit, and junk."""
import random

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULLWIDTH = str.maketrans("0123456789-", "０１２３４５６７８９－")


def candidates(entry):
    o = entry["answer"]
    v = int(o)
    expr = entry.get("metadata", {}).get("expression", "")
    rng = random.Random(entry["question"])
    junk = "".join(rng.choice("0123456789+-*/(). eE_x") for _ in range(rng.randrange(1, 12)))
    out = [
        o, " " + o, o + " ", "\n" + o + "\n", "\t" + o, "+" + o, o + ".0", o + ".", "-" + o, o.lstrip("-"),
        "0" + o, o + "0", "1" + o, o + o, o + " " + o, f"The answer is {o}.", f"{o} is the answer",
        f"= {o}", f"({o})", f"<answer>{o}</answer>", f"{expr} = {o}", expr,
        str(v + 1), str(v - 1), str(-v), str(v * 10), str(v // 2), f"{v:,}", f"{v:_}", f"{v:e}", f"{float(v)}",
        o.translate(ARABIC_INDIC), o.translate(FULLWIDTH), "\u2212" + o.lstrip("-"),
        "", " ", "0", "-0", "1e3", "inf", "nan", "None", "9" * 60, o + "9" * 40, "-" + "1" * 30, junk,
        entry["question"], o + "\u00a0", "é" + o + "😀",
    ]
    return out
