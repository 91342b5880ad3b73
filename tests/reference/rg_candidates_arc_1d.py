"""Candidate answers for an arc_1d entry (reasoning_gym's default scorer): the oracle grid,
near misses, reformattings that contain it (partial credit) and junk."""


def candidates(entry):
    oracle = entry["answer"]
    cells = oracle.split(" ")
    test_input = " ".join(str(x) for x in entry["metadata"]["test_example"]["input"])
    changed = list(cells)
    changed[len(changed) // 2] = "0" if changed[len(changed) // 2] != "0" else "1"
    return [
        oracle,
        oracle + " ",
        " " + oracle,
        oracle + "\n",
        "Output: " + oracle,
        "The answer is:\n" + oracle + "\nDone.",
        oracle + " " + oracle,
        " ".join(changed),
        " ".join(cells[:-1]),
        " ".join(reversed(cells)),
        ",".join(cells),
        "[" + ", ".join(cells) + "]",
        "".join(cells),
        "  ".join(cells),
        test_input,
        oracle.replace(" ", "\t"),
        "",
        "0",
        "<answer>" + oracle + "</answer>",
        "\u00e9\u4e2d " + oracle,
        "\U0001f600" + oracle + "\U0001f600",
        "no idea",
        oracle[:-1],
        oracle + "0",
    ]
