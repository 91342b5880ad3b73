"""Candidate answers for binary_matrix entries (1.0 for the oracle text, 0.1 when Python's
eval() of the answer prints back as the oracle), used by the cross-checks against
reasoning_gym: the oracle, Python-list forms (lists, tuples, compact, multi-line,
commented, bare tuples, int literal forms, unary signs, str and bytes rows and cells),
near misses, forms eval() rejects or that print differently (indentation, floats,
subscripts, names), empty and junk. Expressions that COMPUTE a matching value (list
concatenation, subscripts of a wrapping list) are left out: the C reader is literal-only
by design, and test_tasks_a.py lists them as known divergences.
Every candidate is a literal: eval() of it cannot do anything but build a value."""


def _rows(sol, fmt, sep=", "):
    return [sep.join(fmt(x) for x in row) for row in sol]


def candidates(entry: dict) -> list[str]:
    sol = entry["metadata"]["solution"]
    mat = entry["metadata"]["matrix"]
    oracle = entry["answer"]
    n = len(sol)
    lst = str(sol)
    compact = "[" + ",".join("[" + ",".join(str(x) for x in row) + "]" for row in sol) + "]"
    tup = str(tuple(tuple(r) for r in sol))
    multiline = "[\n" + ",\n".join("    " + str(r) for r in sol) + "\n]"
    bare = ", ".join(str(r) for r in sol)
    hexed = "[" + ", ".join("[" + ", ".join(hex(x) for x in row) + "]" for row in sol) + "]"
    signed = "[" + ", ".join("[" + ", ".join(("+" if x % 2 else "--") + str(x) for x in row) + "]" for row in sol) + "]"
    str_cells = str([[str(x) for x in row] for row in sol])
    str_rows = str(["".join(str(x) for x in row) for row in sol])
    fits_bytes = all(0 <= x < 256 for row in sol for x in row)
    bytes_rows = "[" + ", ".join(repr(bytes(row)) for row in sol) + "]" if fits_bytes else "[b'']"
    off = [row[:] for row in sol]
    off[-1][-1] += 1
    out = [
        oracle,
        oracle + "\n",
        " " + oracle,
        oracle.replace(" ", ","),
        oracle.replace("\n", " "),
        lst,
        compact,
        tup,
        multiline,
        bare,
        bare + ",",
        "  " + lst + "  # distances\n",
        "\n" + lst,
        "\n " + lst,
        lst + "\n  ",
        lst + "\r\n",
        "\\\n" + compact,
        hexed,
        signed,
        str_cells,
        str_rows,
        bytes_rows,
        repr([[oracle]]),
        repr(oracle),
        str(off),
        str(mat),
        str([[float(x) for x in row] for row in sol]),
        lst + "[0]",
        "[" + ", ".join("[" + ", ".join("0" + str(x) if x else "00" for x in row) + "]" for row in sol) + "]",
        str([[bool(x) for x in row] for row in sol]),
        "[" * 3 + "]" * 3,
        "[[",
        "",
        "None",
        "junk",
        "matrix = " + lst,
    ]
    if n > 1:
        out.append(str(sol[1:]))
    return out
