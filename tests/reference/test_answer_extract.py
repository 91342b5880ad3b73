"""answer_extract (src/tasks/answer.c) against reasoning_gym.utils.extract_answer, the function
rl-swarm / genrl call on every completion: regex <answer>\\s?(.*?)\\s?</answer> with DOTALL,
last match, str.strip(). Hand-picked edge cases plus thousands of random completions built
from tag fragments and Unicode whitespace; every result must be identical (None included)."""
import json
import os
import random
import subprocess

import pytest

BUILD = os.environ.get("SAPO_BUILD_DIR", "build")
TOOL = next((p for p in (os.path.join(BUILD, "tests", "tool_answer_extract"), os.path.join(BUILD, "tool_answer_extract"))
             if os.path.exists(p)), os.path.join(BUILD, "tests", "tool_answer_extract"))

rg_utils = pytest.importorskip("reasoning_gym.utils")

EDGE = [
    "", "no tags at all", "<answer>42</answer>", "<answer> 42 </answer>", "<answer>\n42\n</answer>",
    "<answer></answer>", "<answer> </answer>", "<answer>  \t </answer>", "<answer>a</answer><answer>b</answer>",
    "<answer>a</answer> text <answer>b", "<answer>a", "a</answer>", "</answer><answer>x</answer>",
    "<answer><answer>inner</answer></answer>", "<answer>x</answer></answer>", "<ANSWER>x</ANSWER>",
    "<answer >x</answer>", "<answer>x</answer >", "<answer>\u00a0x\u3000</answer>", "<answer>\x85x\x1c</answer>",
    "<answer>\u2028multi\nline\u2029</answer>", "<answer>x\u200b</answer>", "<answer>é ü 中</answer>",
    "<think>hmm <answer>1</answer></think>\n<answer>2</answer>", "<answer>1</answer>\n<answer>",
    "<answer><answer></answer>", "<<answer>>x<</answer>>", "<answer>a</answer<answer>b</answer>",
    "<answer>\\frac{1}{2}</answer>", "<answer>[[0, 1], [1, 0]]</answer>", "\n<answer>\r\n3\r\n</answer>\n",
]

FRAGMENTS = ["<answer>", "</answer>", "<answer", "answer>", "</answer", "<", ">", "/", " ", "  ", "\n", "\t", "\r",
             "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u200b", "\u2028",
             "\u202f", "\u205f", "\u3000", "\ufeff", "x", "42", "-1.5", "True", "é", "中", "😀", "<think>", "</think>"]


def random_completions(n, seed=7):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        # Tags are drawn often enough that most completions hold one or more pairs.
        out.append("".join(rng.choice(("<answer>", "</answer>")) if rng.random() < 0.3 else rng.choice(FRAGMENTS)
                           for _ in range(rng.randint(0, 14))))
    return out


def test_extraction_matches_reasoning_gym():
    assert os.path.exists(TOOL), f"{TOOL} not built"
    cases = EDGE + random_completions(20000)
    proc = subprocess.run([TOOL], input="".join(json.dumps({"c": c}) + "\n" for c in cases),
                          capture_output=True, text=True, check=True)
    got = [json.loads(line)["a"] for line in proc.stdout.split("\n") if line]
    assert len(got) == len(cases)
    bad = [(c, rg_utils.extract_answer(c), g) for c, g in zip(cases, got) if rg_utils.extract_answer(c) != g]
    n_none = sum(1 for g in got if g is None)
    print(f"extract: {len(cases)} completions compared ({n_none} without an answer), {len(bad)} mismatches")
    assert not bad, "first mismatch: completion %r: reasoning_gym %r vs C %r" % bad[0]
