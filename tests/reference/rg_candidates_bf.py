"""Candidate answers for a bf entry (reasoning_gym's default scorer): the program's output,
near misses, text around it (partial credit), the program itself and junk."""


def candidates(entry):
    oracle = entry["answer"]
    program = entry["metadata"]["bf_program"]
    return [
        oracle,
        oracle.upper(),
        oracle.capitalize(),
        '"' + oracle + '"',
        "Output: " + oracle,
        oracle + "\n",
        " " + oracle,
        oracle + oracle,
        oracle[:-1],
        oracle[1:],
        oracle[::-1],
        oracle + "s",
        "The program prints " + oracle + ".",
        "\u00ab" + oracle + "\u00bb",
        "\U0001f600" + oracle,
        program,
        program[:20],
        "",
        "a",
        "hello",
        "12",
        "<answer>" + oracle + "</answer>",
        "\t",
        oracle.replace(oracle[:1], "x", 1),
    ]
