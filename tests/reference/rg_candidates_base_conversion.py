"""Candidate answers for base_conversion entries (default scorer: exact 1.0, the oracle as
a substring scores len(oracle)/len(answer) in code points, else 0), used by the
cross-checks against reasoning_gym: the oracle, near misses, case and whitespace variants,
superstrings (ASCII and non-ASCII, for code-point lengths), empty and junk."""


def _to_base(value: int, base: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if value == 0:
        return "0"
    out = []
    while value:
        out.append(digits[value % base])
        value //= base
    return "".join(reversed(out))


def candidates(entry: dict) -> list[str]:
    oracle = entry["answer"]
    meta = entry["metadata"]
    value = meta["decimal_value"]
    target = meta["target_base"]
    out = [
        oracle,
        oracle.upper(),
        " " + oracle,
        oracle + " ",
        oracle + "\n",
        "\t" + oracle + "\u3000",
        "0x" + oracle,
        "0b" + oracle,
        "0" + oracle,
        oracle + "0",
        oracle[:-1],
        oracle[1:],
        oracle * 2,
        "The answer is " + oracle + ".",
        "é" + oracle + "→",
        "\U0001F600" + oracle,
        "<answer>" + oracle + "</answer>",
        str(value),
        meta["source_repr"],
        _to_base(value + 1, target),
        _to_base(max(value - 1, 0), target),
        _to_base(value, 10),
        "",
        " ",
        "junk",
        "ZZZ",
    ]
    return out
