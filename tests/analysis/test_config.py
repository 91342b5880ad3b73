"""Parsing the resolved INI a run stores (origin comments, empty values, [node.K] sections) and
mapping our I/J splits onto the paper's by the share of external groups."""
import pytest

import synthetic_runs  # noqa: F401 (puts the source tree on sys.path)
from analysis.config import config_parse
from analysis.errors import AnalysisError
from analysis.paper import PAPER_TOTALS, paper_split

TEXT = """# sapo configuration, every key resolved (loads back to these values)
[model]
n_layer = 2                      ; experiments/quick.ini:6
init = build/warmup/quick-7dfa13bae732.ckpt ; command line
init_seed = 1337

[sampling]
local = 2                        ; experiments/quick.ini:26
external = 2                     ; experiments/quick.ini:27
groups = 4

[run]
; command line
out =
name = quick

[node.3]
sampling.local = 4               ; experiments/het.ini:9
sampling.external = 0
"""


def test_parse_resolved_config():
    c = config_parse(TEXT, "config.ini")
    assert c.get("model.n_layer") == "2"
    assert c.get("model.init") == "build/warmup/quick-7dfa13bae732.ckpt"
    assert c.get("run.out") == "" and c.get("run.name") == "quick"
    assert c.nodes == {3: {"sampling.local": "4", "sampling.external": "0"}}
    assert c.node_get(3, "sampling.local") == "4" and c.node_get(0, "sampling.local") == "2"
    assert c.flat()["node.3.sampling.external"] == "0"
    assert c.get_int("sampling.groups") == 4


def test_parse_errors_name_the_source():
    with pytest.raises(AnalysisError, match=r"^x\.ini: "):
        config_parse("no section here\n", "x.ini")
    with pytest.raises(AnalysisError, match=r"^y\.ini: \[node\.abc\]"):
        config_parse("[model]\nn_layer = 2\n[node.abc]\nsampling.local = 1\n", "y.ini")
    with pytest.raises(AnalysisError, match=r"model.n_layer = 'two': expected an integer"):
        config_parse("[model]\nn_layer = two\n", "z.ini").get_int("model.n_layer", where="z.ini")


def test_paper_split_by_share_of_external_groups():
    assert [paper_split(i, 8 - i, 8) for i in (8, 6, 4, 2)] == ["8/0", "6/2", "4/4", "2/6"]
    assert [paper_split(i, 4 - i, 4) for i in (4, 3, 2, 1)] == ["8/0", "6/2", "4/4", "2/6"]
    assert paper_split(0, 8, 8) is None and paper_split(2, 1, 3) is None and paper_split(2, 2, 5) is None
    assert PAPER_TOTALS["4/4"] == 1093.31
