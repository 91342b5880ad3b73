"""Text lines that exercise a byte-level BPE tokenizer, for test_bpe_tokenizer.py.

Deterministic (fixed seeds). What is in it, and why:
  - the questions of all nine tasks (`sapo tasks gen`, every preset), as questions, as the
    swarm's prompts (question + newline), ChatML-wrapped, and answer demonstrations: the text
    the tokenizer will actually see;
  - several scripts (CJK, kana, Hangul syllables and conjoining jamo, Arabic with harakat,
    Hebrew, Devanagari, Thai, Cyrillic, Greek), Latin with combining marks and NFD forms
    (the NFC normalizer must recompose them), emoji with skin tones, ZWJ sequences, flags
    and keycaps;
  - whitespace: CRLF, tabs, runs of spaces, leading and trailing spaces, vertical tab, form
    feed, NEL, no-break and ideographic spaces, line and paragraph separators, and the
    characters regex engines disagree on (U+001C..U+001F, U+180E, U+200B);
  - digit runs in several number systems (Digits and \\p{N}), fractions, superscripts,
    Roman numerals; contractions in both cases and with the long s (case folding);
  - the special tokens of both model families inside text: alone, adjacent, cut short,
    nested in angle brackets, next to spaces;
  - control characters (U+0000 included), code, JSON, URLs, long words, very long lines,
    and random mixtures of all of the above.
"""
import json
import random
import subprocess
import unicodedata

SPECIALS = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|box_end|>", "<|vision_pad|>",
    "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|repo_name|>", "<|file_sep|>",
    "<think>", "</think>", "<tool_response>",
    # SmolLM2's
    "<repo_name>", "<reponame>", "<file_sep>", "<filename>", "<gh_stars>", "<issue_start>", "<issue_comment>",
    "<issue_closed>", "<jupyter_start>", "<jupyter_text>", "<jupyter_code>", "<jupyter_output>",
    "<jupyter_script>", "<empty_output>",
]

SCRIPTS = {
    "cjk": [(0x4E00, 0x9FFF)],
    "kana": [(0x3041, 0x3096), (0x30A1, 0x30FA)],
    "hangul": [(0xAC00, 0xD7A3)],
    "arabic": [(0x0621, 0x064A), (0x064B, 0x0652)],
    "hebrew": [(0x05D0, 0x05EA), (0x05B0, 0x05BC)],
    "devanagari": [(0x0905, 0x0939), (0x093E, 0x094D), (0x0966, 0x096F)],
    "thai": [(0x0E01, 0x0E3A), (0x0E40, 0x0E4E)],
    "cyrillic": [(0x0410, 0x044F), (0x0400, 0x040F)],
    "greek": [(0x0391, 0x03A9), (0x03B1, 0x03C9), (0x0386, 0x038F)],
    "latin_ext": [(0x00C0, 0x00FF), (0x0100, 0x017F)],
}

SENTENCES = [
    "Hello world! How are you today?",
    "It's a test: we're sure they've done what I'll say, and you'd agree. DON'T SHOUT, IT'S RUDE.",
    "Ich heiße Jürgen und wohne in Köln; die Straße ist schön.",
    "Le cœur a ses raisons que la raison ne connaît point.",
    "日本語のテキストと、中文文本，以及한국어 문장。",
    "Привет, мир! Как дела? Ёжик в тумане.",
    "Γειά σου Κόσμε· ή ΐ ΰ ώ.",
    "مرحبا بالعالم، كيف حالك؟ ١٢٣٤٥",
    "שלום עולם, מה שלומך?",
    "नमस्ते दुनिया, आप कैसे हैं? १२३४",
    "สวัสดีชาวโลก สบายดีไหม",
    "Emoji: 😀👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇩🇪🇯🇵 1️⃣ #️⃣ ❤️‍🔥 🧑🏿‍💻",
    "def f(x):\n\treturn x ** 2  # square\n",
    '{"key": [1, 2.5, -3e10], "nested": {"a": null, "b": true}}',
    "https://example.com/path?query=1&x=%20y#frag",
    "snake_case camelCase PascalCase kebab-case SCREAMING_CASE",
    "   leading spaces and trailing spaces   ",
    "tabs\tbetween\t\twords\t",
    "line one\r\nline two\r\n\r\nline four\n\n\n",
    "numbers 0 1 22 333 4444 55555 666666 7777777 3.14159 -42 +7 1,000,000 1e-9",
    "full-width １２３ ＡＢＣ superscripts x² y³ fractions ½ ¾ roman Ⅻ ⅷ",
    "The answer is <answer>42</answer>.",
    "ﬁ ﬂ ligatures, Å (angstrom sign) vs Å, Ω (ohm) vs Ω, K (kelvin) vs K",
    "don'ſ it'S they'RE I'M we'LL you'D she'VE ’s curly ‘quotes’ “double”",
]

WHITESPACE = [" ", "  ", "   ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2000",
              "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\x1c", "\x1d", "\x1e",
              "\x1f", "\u180e", "\u200b", "\ufeff", " \n ", "\n\t", " \r\n"]

COMBINING = ["\u0300", "\u0301", "\u0302", "\u0303", "\u0308", "\u030a", "\u0327", "\u0328", "\u0323", "\u0331",
             "\u035c", "\u20dd", "\u0489"]

EMOJI = ["😀", "👍", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇩🇪", "🇯🇵", "1️⃣", "❤️", "❤️‍🔥", "🧑🏿‍💻", "🐈‍⬛", "🤷‍♀️",
         "👩🏻‍❤️‍💋‍👨🏼", "☺", "☺️", "🫠", "🦀", "🙂‍↔️"]


def task_lines(sapo_bin, per_task=120):
    """Questions of all nine tasks at every preset, as text and as the swarm's prompts."""
    listing = json.loads(subprocess.run([sapo_bin, "tasks", "list", "--json"], check=True, capture_output=True,
                                        text=True).stdout)
    names = [t["name"] for t in listing["tasks"]]
    assert len(names) == 9, names
    lines = []
    for name in names:
        for preset, count in (("paper", per_task), ("small", per_task // 4), ("tiny", per_task // 4)):
            out = subprocess.run([sapo_bin, "tasks", "gen", name, "--preset", preset, "--seed", "7",
                                  "--count", str(count)], check=True, capture_output=True, text=True).stdout
            for k, row in enumerate(out.splitlines()):
                entry = json.loads(row)
                q = entry["question"]
                lines.append(q)
                if k % 2 == 0:
                    lines.append(q + "\n")
                if k % 3 == 0:
                    lines.append("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                                 + q + "<|im_end|>\n<|im_start|>assistant\n")
                if k % 4 == 0 and entry["answer"] is not None:
                    lines.append("<answer>" + str(entry["answer"]) + "</answer>")
    return names, lines


def rand_script(rng, script, n):
    ranges = SCRIPTS[script]
    out = []
    for _ in range(n):
        lo, hi = rng.choice(ranges)
        out.append(chr(rng.randint(lo, hi)))
        if rng.random() < 0.15:
            out.append(" ")
    return "".join(out)


def rand_fragment(rng):
    kind = rng.randrange(12)
    if kind == 0:
        return rng.choice(SENTENCES)
    if kind == 1:
        return rand_script(rng, rng.choice(list(SCRIPTS)), rng.randint(1, 12))
    if kind == 2:
        return rng.choice(WHITESPACE) * rng.randint(1, 4)
    if kind == 3:
        return rng.choice(SPECIALS)
    if kind == 4:
        return "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 3)))
    if kind == 5:
        return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12)))
    if kind == 6:
        base = rng.choice("aeiouAEIOUnycsgz")
        return base + "".join(rng.choice(COMBINING) for _ in range(rng.randint(1, 3)))
    if kind == 7:
        return unicodedata.normalize("NFD", rng.choice(SENTENCES))
    if kind == 8:
        return rng.choice(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'VE", "'M", "'LL",
                           "'D", "'x", "''", "'"])
    if kind == 9:
        return "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(1, 16)))
    if kind == 10:
        return chr(rng.choice([0, 1, 2, 7, 8, 0x1b, 0x7f, 0x80, 0x9f, 0xad, 0xfffd, 0xfeff, 0x10ffff - 2,
                               0xe000, 0x1f600, 0x2f800, 0x30000]))
    return rng.choice(["<", ">", "|", "<|", "|>", "<|im_end", "im_end|>", "<<|im_end|>>", "<|im_end|><|im_start|>",
                       " <|endoftext|> ", "<think></think>", "</think>\n\n"])


def unicode_lines(n, seed=20250101):
    rng = random.Random(seed)
    lines = list(SENTENCES)
    lines += [unicodedata.normalize(form, s) for s in SENTENCES for form in ("NFD", "NFKD", "NFKC")]
    lines += ["", " ", "\n", "\r\n", "a", "'", "0", "<|im_end|>", "<|im_start|>user\n", "\x00", "a\x00b",
              " " * 1000, "\t" * 50 + "x", "x" + " " * 37, "\n" * 20, "word " * 2000, "9" * 500,
              "".join(EMOJI) * 5, "abc" * 3000, "ab" + "\u0301" * 40]
    for s in SCRIPTS:
        lines += [rand_script(rng, s, rng.randint(5, 80)) for _ in range(60)]
    for ws in WHITESPACE:
        lines += [f"a{ws}b", f"{ws}lead", f"trail{ws}", f"x {ws} y", f"1{ws}2", f"{ws}{ws}{ws}"]
    while len(lines) < n:
        lines.append("".join(rand_fragment(rng) for _ in range(rng.randint(1, 10))))
    return lines


def build(sapo_bin, n_unicode=3500):
    """All lines (at least 5,000) and the task names seen."""
    names, tl = task_lines(sapo_bin)
    return names, tl + unicode_lines(n_unicode)


def decode_cases(rng, lines, id_lists, vocab, specials, n_random=2000):
    """Id sequences to decode: every line's whole encoding; for the lines with non-ASCII text
    prefixes and slices, which cut characters; single ids; random ids over the vocabulary and
    its special ids; ids no token has."""
    cases = [[], [0], [vocab - 1], [vocab], [vocab + 1000], [2**31 - 1]]
    for line, ids in zip(lines, id_lists):
        cases.append(ids)
        if len(ids) > 1 and not line.isascii():
            for _ in range(3):
                cases.append(ids[:rng.randrange(1, len(ids))])
                a = rng.randrange(len(ids))
                cases.append(ids[a:a + rng.randint(1, 4)])
    for _ in range(n_random):
        m = rng.randint(1, 8)
        cases.append([rng.choice(specials) if specials and rng.random() < 0.1 else rng.randrange(vocab + 10)
                      for _ in range(m)])
    return cases
