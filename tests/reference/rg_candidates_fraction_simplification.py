"""Candidate answers for fraction_simplification entries (1.0 simplified, 0.1 one part of
the unsimplified fraction, 0.05 another readable fraction, 0.01 unreadable), used by the
cross-checks against reasoning_gym: every style of the right fraction (plain, $a/b$,
\\frac, \\dfrac, upper-case LaTeX, inner spaces), the unsimplified and swapped fractions,
signs, underscores, Unicode digits and whitespace, int() limits, empty and junk."""

ARABIC_INDIC = "٠١٢٣٤٥٦٧٨٩"
FULLWIDTH = "０１２３４５６７８９"


def _digits(n: int, table: str) -> str:
    return "".join(table[int(c)] for c in str(n))


def candidates(entry: dict) -> list[str]:
    m = entry["metadata"]
    a, b = m["simplified_numerator"], m["simplified_denominator"]
    n, d = m["numerator"], m["denominator"]
    out = [
        entry["answer"],
        f"{a}/{b}",
        f"${a}/{b}$",
        f"$\\frac{{{a}}}{{{b}}}$",
        f"$\\dfrac{{{a}}}{{{b}}}$",
        f"\\frac{{{a}}}{{{b}}}",
        f"\\DFRAC{{{a}}}{{{b}}}",
        f"\\Frac {{ {a} }} {{ {b} }}",
        f"\\frac{{{a}}}{{{b}}} extra text",
        f"\\frac{{{a}}}{{{b}",
        f"$$ {a} / {b} $$",
        f" {a} / {b} ",
        f"\u00a0{a}/{b}\u2003",
        f"+{a}/{b}",
        f"-{a}/{b}",
        f"{a}/-{b}",
        f"{a}.0/{b}",
        f"{a}//{b}",
        f"{a}/{b}/{b}",
        f"{n}/{d}",
        f"{n}/{d + 1}",
        f"{a + 1}/{d}",
        f"{b}/{a}",
        f"{a + 1}/{b + 1}",
        f"{_digits(a, ARABIC_INDIC)}/{_digits(b, ARABIC_INDIC)}",
        f"{_digits(a, FULLWIDTH)}/{b}",
        f"\\frac{{{_digits(a, ARABIC_INDIC)}}}{{{_digits(b, FULLWIDTH)}}}",
        f"{a}_0/{b}",
        f"1_{a}/{b}",
        f"{a}__0/{b}",
        f"0{a}/00{b}",
        "1" * 5000 + f"/{b}",
        "\\frac{" + "1" * 5000 + f"}}{{{b}}}",
        f"{a}÷{b}",
        f"{a} over {b}",
        str(a),
        "/",
        "",
        "   ",
        "$$",
        "junk",
    ]
    return out
