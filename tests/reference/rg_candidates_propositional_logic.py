"""Candidate answers for a propositional_logic entry (the package scores by truth table):
the example conclusion and rewritings of it, the premises and their conjunction (valid),
tautologies and bare variables (trivial), negations (usually invalid), foreign variable
names, unicode whitespace, and malformed formulas of many kinds. Nesting stays shallow: the
package's parser rescans the text in every recursive call (slow in Python for deep input)
and hits Python's recursion limit near depth 1000; test_tasks_b.py checks deep input."""


def candidates(entry):
    meta = entry["metadata"]
    example = meta["example_answer"]
    premises = meta["premises"]
    variables = meta["variables"]
    p = variables[0]
    q = variables[1] if len(variables) > 1 else variables[0]
    bare = example[1:-1] if example.startswith("(") and example.endswith(")") else example
    conj = " ∧ ".join("(" + x + ")" for x in premises)
    return [
        example,
        bare,
        "  " + example + "\n",
        "\u3000" + example + "\u00a0",
        "(" + example + ")",
        "((" + example + "))",
        "¬" + example,
        "¬¬" + example,
        premises[0],
        premises[-1],
        conj,
        "(" + conj + ") → " + example,
        example + " ∨ " + p,
        example + " ∧ " + q,
        p,
        "¬" + p,
        p + " ∨ ¬" + p,
        p + " → " + p,
        p + " ↔ " + q,
        p + " ∧ ¬" + p,
        p + " " + q,
        "x ∨ ¬x",
        "x",
        "foo ∧ " + p,
        "Z ∨ " + p if "Z" not in variables else "A ∨ " + p,
        "p ∨ q",
        "",
        "   ",
        "(",
        ")",
        "()",
        "( )",
        p + " ∧",
        "∨ " + q,
        "¬",
        "→",
        p + " ∧ ∧ " + q,
        "(" + p + " ∧ " + q,
        p + " ∧ " + q + ")",
        ")" + p + "(",
        "(" + p + "))(" + q + ")",
        "[" + p + " ∨ " + q + "]",
        p + " v " + q,
        p + " & " + q,
        p + " -> " + q,
        "¬(" + p + " → " + q + ") ↔ (" + q + " ∨ ¬" + p + ")",
        "(" * 40 + p + " ∨ ¬" + p + ")" * 40,
        "¬" * 31 + p,
        " ∧ ".join([p, q] * 12),
        "<answer>" + example + "</answer>",
        "\U0001f600",
        "P\u2227Q\u2228R\u2192S\u2194T",
    ]
