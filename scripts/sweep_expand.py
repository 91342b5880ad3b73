#!/usr/bin/env python3
"""Expands a sweep file into one line per sapo run, for slurm/submit.sh (Python 3 stdlib only).

A sweep file is INI-like text: `[section]` headers, `key = value` lines, and comments on
their own line starting with `#` or `;` (or after whitespace: ` # ...`, ` ; ...`).

    [sweep]
    config = ../paper/base.ini    # the base config, relative to this sweep file (required)
    name   = ratios               # run-name prefix (default: the sweep file's stem)
    seeds  = 1 2 3                # swarm.seed values, one run per grid point and seed;
                                  # integers separated by spaces or commas, A..B = A to B (required)

    [set]                         # overrides every run gets (they do not enter run names)
    optim.lr = 3e-4
    ranks = 8                     # special key: MPI ranks of the run (also sets swarm.nodes)

    [grid]                        # axes; the runs are the cartesian product of all axes
    net.latency = 0 | 0.5 | 2     # one key: values separated by |
    sampling.local sampling.external = 8 0 | 4 4      # keys varied together (zipped): each
                                                      # |-separated tuple gives one value per key
    sampling.local sampling.external = 8L0E: 8 0 | 4L4E: 4 4   # a tuple may carry a LABEL:
                                                      # (all tuples of the axis or none); the
                                                      # label then stands for it in run names

    [warmup]                      # warm-up checkpoints the runs load through model.init
    results/warmup/paper.ckpt = model.n_layer=2       # PATH = `sapo pretrain` overrides (may
                                                      # be empty), applied to the sweep's config

Any config key of `sapo info` may appear in [set] and [grid], and `node.K.section.key` for
keys marked per-node. Values cannot contain whitespace, `|` or a comment. `swarm.seed`
comes from `seeds`; `run.out`, `run.name` and `run.resume` belong to the job. Relative
paths in values (model.init, warm-up paths) are left as written: the Slurm job runs in the
repository root, so they are relative to it.

Output, one line per run, grid axes in file order (first axis slowest), seeds innermost:

    RUN_NAME<TAB>CONFIG<TAB>ranks=N [swarm.nodes=N] SET... GRID... swarm.seed=S

CONFIG is an absolute path. `ranks=N` is always first and is not a sapo key: the job
launches N ranks and drops it. N comes from `ranks` in [set]/[grid], else from swarm.nodes
in the override list or the config file chain, else 8 (the schema default). The run name is
NAME, then one part per grid axis whose values differ (the tuple's label, or per key whose
value differs: the key's last component followed by the value, e.g. `latency0.5`), then
`sN` for the seed, joined by `-`; characters other than letters, digits, `.`, `_`, `+`
become `_`. With --warmups the output is instead one line per [warmup] entry:
PATH<TAB>CONFIG<TAB>OVERRIDES.

Keys and values are checked against the table that `sapo info` prints (run once): unknown
keys, values of the wrong type or out of range, per-node overrides of global keys, node
numbers beyond the run's ranks and duplicate run names are reported as FILE:LINE: errors,
all of them, and the exit status is 2.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

MAX_RANKS = 4096  # CONFIG_MAX_NODES in src/core/config.h
RESERVED = {
    "swarm.seed": "comes from the [sweep] seeds list",
    "run.out": "is set by the Slurm job (one run directory per task)",
    "run.name": "is set by the Slurm job (the run name)",
    "run.resume": "is decided by the Slurm job (a requeued task resumes)",
}
SAFE = re.compile(r"[^A-Za-z0-9._+]")


class SweepError(Exception):
    pass


# ---- the key table from `sapo info` ---------------------------------------------------

class Field:
    def __init__(self, key, type_, rng, per_node):
        self.key, self.type, self.range, self.per_node = key, type_, rng, per_node

    def check(self, text):
        """None when text is a valid value, else what was expected."""
        t = self.type
        if t == "int":
            if not re.fullmatch(r"[+-]?\d+", text):
                return "an integer in %s" % self.range
            return self._in_range(int(text), "an integer in %s" % self.range)
        if t == "float":
            try:
                x = float(text)
            except ValueError:
                return "a number in %s" % self.range
            if x != x or x in (float("inf"), float("-inf")):
                return "a finite number in %s" % self.range
            return self._in_range(x, "a number in %s" % self.range)
        if t == "bool":
            if text.lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
                return "a boolean (true/false, yes/no, on/off, 1/0)"
            return None
        if t == "enum":
            choices = self.range.split("|")
            return None if text in choices else "one of " + ", ".join(choices)
        return None  # string: whitespace and ';' are already excluded by the sweep syntax

    def _in_range(self, x, expected):
        m = re.fullmatch(r"([\[(])\s*(\S+)\s*,\s*(\S+)\s*([\])])", self.range)
        if not m:
            return None  # a range this script cannot read: sapo itself will check
        lo, hi = bound(m.group(2)), bound(m.group(3))
        if lo is None or hi is None:
            return None
        if x < lo or x > hi or (m.group(1) == "(" and x == lo) or (m.group(4) == ")" and x == hi):
            return expected
        return None


def bound(text):
    m = re.fullmatch(r"(\d+)\^(\d+)", text)
    if m:
        return int(m.group(1)) ** int(m.group(2))
    try:
        return float(text)
    except ValueError:
        return None


def parse_info(text):
    """The config-key table of `sapo info`: {key: Field}. Columns are located by the
    header line `# key  type  default  range  node  help`."""
    fields, cols = {}, None
    for line in text.splitlines():
        if line.startswith("# key") and " type " in line and " node " in line:
            cols = {name: line.index(" %s " % name) + 1 for name in ("type", "default", "range", "node")}
            cols["help"] = line.index(" help") + 1
            continue
        if cols is None or not line or line.startswith("#"):
            continue
        key = line[:cols["type"]].strip()
        if not re.fullmatch(r"[a-z_0-9]+\.[a-z_0-9]+", key):
            continue
        type_ = line[cols["type"]:cols["default"]].strip()
        rng = line[cols["range"]:cols["node"]].strip()
        node = line[cols["node"]:cols["help"]].strip()
        fields[key] = Field(key, type_, rng, node == "yes")
    return fields


def find_sapo(explicit):
    if explicit:
        return explicit
    if os.environ.get("SAPO_BIN"):
        return os.environ["SAPO_BIN"]
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "sapo")
    if os.access(here, os.X_OK):
        return os.path.normpath(here)
    return shutil.which("sapo")


def load_fields(sapo):
    if not sapo:
        raise SweepError("sweep_expand: cannot check keys: no sapo binary found "
                         "(build it, set SAPO_BIN, pass --sapo PATH, or --no-check)")
    try:
        out = subprocess.run([sapo, "info"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise SweepError("sweep_expand: cannot run '%s info': %s" % (sapo, e))
    fields = parse_info(out.stdout)
    if out.returncode != 0 or not fields:
        raise SweepError("sweep_expand: '%s info' gave no config-key table (exit %d): expected the "
                         "'# key type default range node help' table" % (sapo, out.returncode))
    return fields


# ---- the sweep file -------------------------------------------------------------------

def strip_comment(line):
    s = line.strip()
    if s.startswith("#") or s.startswith(";"):
        return ""
    m = re.search(r"\s[#;]", s)
    return s[:m.start()].rstrip() if m else s


class Sweep:
    def __init__(self, path):
        self.path = path
        self.config = None      # (value, lineno)
        self.name = None
        self.seeds = None       # ([ints], lineno)
        self.sets = []          # [(key, value, lineno)]
        self.axes = []          # [(keys, [(label, values)], lineno)]
        self.warmups = []       # [(path, [override tokens], lineno)]


def parse_seeds(text):
    seeds = []
    for tok in re.split(r"[\s,]+", text.strip()):
        if not tok:
            continue
        m = re.fullmatch(r"(\d+)\.\.(\d+)", tok)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if b < a or b - a > 100000:
                raise ValueError("range %s must run upward and hold at most 100000 seeds" % tok)
            seeds.extend(range(a, b + 1))
        elif re.fullmatch(r"\d+", tok):
            seeds.append(int(tok))
        else:
            raise ValueError("'%s' is not a non-negative integer or A..B range" % tok)
    if not seeds:
        raise ValueError("no seeds")
    if len(set(seeds)) != len(seeds):
        raise ValueError("a seed is listed twice")
    if max(seeds) > 2 ** 62:
        raise ValueError("seeds must be at most 2^62")
    return seeds


def parse_sweep(path, errors):
    sw = Sweep(path)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise SweepError("%s: cannot read the sweep file: %s" % (path, e))
    section = None

    def err(lineno, msg):
        errors.append("%s:%d: %s" % (path, lineno, msg))

    for lineno, raw in enumerate(lines, 1):
        line = strip_comment(raw)
        if not line:
            continue
        m = re.fullmatch(r"\[\s*([A-Za-z]+)\s*\]", line)
        if m:
            section = m.group(1).lower()
            if section not in ("sweep", "set", "grid", "warmup"):
                err(lineno, "unknown section [%s]: expected [sweep], [set], [grid] or [warmup]" % m.group(1))
                section = "?"
            continue
        if "=" not in line:
            err(lineno, "'%s': expected 'key = value' or a [section]" % line)
            continue
        lhs, rhs = (s.strip() for s in line.split("=", 1))
        if section is None:
            err(lineno, "'%s' before any section: expected [sweep] first" % line)
        elif section == "?":
            continue
        elif section == "sweep":
            if lhs == "config":
                if sw.config:
                    err(lineno, "config given twice (first at line %d)" % sw.config[1])
                sw.config = (rhs, lineno)
            elif lhs == "name":
                if not re.fullmatch(r"[A-Za-z0-9._+-]+", rhs):
                    err(lineno, "name = '%s': expected letters, digits, '.', '_', '+' or '-'" % rhs)
                sw.name = rhs
            elif lhs == "seeds":
                try:
                    sw.seeds = (parse_seeds(rhs), lineno)
                except ValueError as e:
                    sw.seeds = ([], lineno)  # reported here; no second "no seeds" error
                    err(lineno, "seeds = '%s': %s" % (rhs, e))
            else:
                err(lineno, "unknown [sweep] key '%s': expected config, name or seeds" % lhs)
        elif section == "set":
            if not rhs or re.search(r"[\s|]", rhs):
                err(lineno, "%s = '%s': expected one value without whitespace or '|'" % (lhs, rhs))
                continue
            sw.sets.append((lhs, rhs, lineno))
        elif section == "grid":
            keys = lhs.split()
            if not keys:
                err(lineno, "a grid line needs keys before '='")
                continue
            tuples, labels = [], []
            for part in rhs.split("|"):
                part = part.strip()
                label = None
                m = re.fullmatch(r"([A-Za-z0-9._+-]+):\s*(.*)", part)
                if m:
                    label, part = m.group(1), m.group(2)
                values = part.split()
                if len(values) != len(keys):
                    err(lineno, "'%s' has %d value(s) for %d key(s) (%s): expected one value per key in every "
                                "|-separated tuple" % (part, len(values), len(keys), " ".join(keys)))
                    break
                tuples.append((label, values))
                labels.append(label)
            else:
                if any(l is None for l in labels) and any(l is not None for l in labels):
                    err(lineno, "some tuples have a LABEL: and some do not: expected labels on all or none")
                elif labels[0] is not None and len(set(labels)) != len(labels):
                    err(lineno, "a tuple label is used twice")
                elif len(set(tuple(v) for _, v in tuples)) != len(tuples):
                    err(lineno, "a value (tuple) is listed twice")
                else:
                    sw.axes.append((keys, tuples, lineno))
        elif section == "warmup":
            if not lhs:
                err(lineno, "a [warmup] line needs a checkpoint path before '='")
                continue
            sw.warmups.append((lhs, rhs.split(), lineno))
    if sw.config is None:
        errors.append("%s: no 'config = FILE' in [sweep]: expected the base config of the runs" % path)
    if sw.seeds is None:
        errors.append("%s: no 'seeds = ...' in [sweep]: expected the swarm.seed values to run" % path)
    if sw.name is None:
        sw.name = SAFE.sub("_", os.path.splitext(os.path.basename(path))[0])
    return sw


# ---- checks against the key table ------------------------------------------------------

def check_key(key, value, fields, where, errors):
    """Checks one key=value; returns the node number of a node.K.* key, else None."""
    if key == "ranks":
        if not re.fullmatch(r"\d+", value) or not 1 <= int(value) <= MAX_RANKS:
            errors.append("%s: ranks = '%s': expected an integer in [1, %d]" % (where, value, MAX_RANKS))
        return None
    if key in RESERVED:
        errors.append("%s: %s: %s, not by an override" % (where, key, RESERVED[key]))
        return None
    node = None
    base = key
    m = re.fullmatch(r"node\.(\d{1,9})\.([a-z_0-9]+\.[a-z_0-9]+)", key)
    if m:
        node, base = int(m.group(1)), m.group(2)
        if node >= MAX_RANKS:
            errors.append("%s: %s: node %d: expected a node number in [0, %d]" % (where, key, node, MAX_RANKS - 1))
            return None
    if fields is None:
        return node
    f = fields.get(base)
    if f is None:
        errors.append("%s: unknown key '%s': expected a key of `sapo info` (section.key, node.K.section.key) "
                      "or ranks" % (where, key))
        return None
    if node is not None and not f.per_node:
        errors.append("%s: %s: '%s' is the same on every node: expected a per-node key (node = yes in "
                      "`sapo info`)" % (where, key, base))
        return None
    expected = f.check(value)
    if expected:
        errors.append("%s: %s = '%s': expected %s" % (where, key, value, expected))
    return node


def ini_swarm_nodes(path, depth=0):
    """swarm.nodes from an INI file and its `base =` chain (None when unset or unreadable)."""
    if depth > 16:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    value, section = None, None
    for raw in lines:
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        m = re.search(r"\s;", s)
        if m:
            s = s[:m.start()].rstrip()
        if s.startswith("["):
            section = s.strip("[] ").lower()
            continue
        if "=" not in s:
            continue
        k, v = (x.strip() for x in s.split("=", 1))
        if section is None and k == "base":
            value = ini_swarm_nodes(os.path.join(os.path.dirname(path), v), depth + 1)
        elif section == "swarm" and k == "nodes":
            value = v
    return value


# ---- expansion ------------------------------------------------------------------------

def expand(sweep_path, fields):
    errors = []
    sw = parse_sweep(sweep_path, errors)
    config = None
    if sw.config:
        config = os.path.abspath(os.path.join(os.path.dirname(sweep_path), sw.config[0]))
        if not os.path.isfile(config):
            errors.append("%s:%d: config = '%s': %s does not exist: expected a config file relative to the "
                          "sweep file" % (sweep_path, sw.config[1], sw.config[0], config))
    # Every key once: set keys, then grid keys.
    seen = {}
    for key, value, lineno in sw.sets:
        where = "%s:%d" % (sweep_path, lineno)
        if key in seen:
            errors.append("%s: %s is set twice (first at line %d)" % (where, key, seen[key]))
        seen.setdefault(key, lineno)
        check_key(key, value, fields, where, errors)
    for keys, tuples, lineno in sw.axes:
        where = "%s:%d" % (sweep_path, lineno)
        for i, key in enumerate(keys):
            if key in seen:
                errors.append("%s: %s is set twice (first at line %d)" % (where, key, seen[key]))
            seen.setdefault(key, lineno)
            for _, values in tuples:
                check_key(key, values[i], fields, where, errors)
    for path, overrides, lineno in sw.warmups:
        where = "%s:%d" % (sweep_path, lineno)
        for tok in overrides:
            if "=" not in tok:
                errors.append("%s: '%s': expected section.key=value overrides for sapo pretrain" % (where, tok))
                continue
            k, v = tok.split("=", 1)
            if k == "ranks":
                errors.append("%s: ranks: a warm-up is one process, expected config keys only" % where)
            elif k in ("pretrain.out",):
                errors.append("%s: pretrain.out: the path before '=' names the checkpoint" % where)
            else:
                check_key(k, v, fields, where, errors)
    if errors:
        raise SweepError("\n".join(errors))

    # Short names for run names: the key's last component, qualified where two differ.
    grid_keys = [k for keys, _, _ in sw.axes for k in keys]
    lasts = {}
    for k in grid_keys:
        lasts.setdefault(k.rsplit(".", 1)[-1], set()).add(k)
    short = {k: (k.rsplit(".", 1)[-1] if len(lasts[k.rsplit(".", 1)[-1]]) == 1 else k.replace(".", "_"))
             for k in grid_keys}

    points = [[]]
    for axis_i, (keys, tuples, _) in enumerate(sw.axes):
        points = [p + [(axis_i, t)] for p in points for t in tuples]

    config_nodes = ini_swarm_nodes(config) if config else None
    runs, names = [], {}
    set_line = {k: ln for k, _, ln in sw.sets}
    for point in points:
        overrides = [(k, v) for k, v, _ in sw.sets]
        parts = []
        for axis_i, (label, values) in point:
            keys, tuples, _ = sw.axes[axis_i]
            overrides += list(zip(keys, values))
            if label is not None:
                parts.append(SAFE.sub("_", label))
                continue
            for i, key in enumerate(keys):
                if len(set(t[1][i] for t in tuples)) > 1:
                    parts.append(SAFE.sub("_", short[key] + values[i]))
        ov = dict(overrides)
        ranks_explicit = "ranks" in ov
        ranks = ov.get("ranks") or ov.get("swarm.nodes") or config_nodes or "8"
        try:
            ranks = int(ranks)
        except ValueError:
            ranks = 8
        node_keys = [(k, int(k.split(".")[1])) for k, _ in overrides if k.startswith("node.")]
        for k, node in node_keys:
            if node >= ranks:
                line = set_line.get(k) or next(ln for ks, _, ln in sw.axes if k in ks)
                errors.append("%s:%d: %s: node %d, but the run has %d ranks (nodes 0..%d)"
                              % (sweep_path, line, k, node, ranks, ranks - 1))
        tokens = ["ranks=%d" % ranks]
        if ranks_explicit and "swarm.nodes" not in ov:
            tokens.append("swarm.nodes=%d" % ranks)
        tokens += ["%s=%s" % (k, v) for k, v in overrides if k != "ranks"]
        for seed in sw.seeds[0]:
            name = "-".join([sw.name] + parts + ["s%d" % seed])
            if name in names:
                errors.append("%s: two runs are both named '%s' (%s and %s): expected grid values that differ "
                              "after sanitising, or tuple labels" % (sweep_path, name, names[name],
                                                                    " ".join(tokens)))
            names[name] = " ".join(tokens)
            runs.append((name, config, tokens + ["swarm.seed=%d" % seed]))
    if errors:
        raise SweepError("\n".join(sorted(set(errors), key=errors.index)))
    return sw, config, runs


def main(argv=None):
    ap = argparse.ArgumentParser(description="Expand a sweep file into one line per sapo run "
                                             "(RUN_NAME<TAB>CONFIG<TAB>overrides); see the top of this file.")
    ap.add_argument("sweep", help="the sweep file")
    ap.add_argument("--sapo", help="the sapo binary whose `sapo info` table checks keys "
                                   "(default $SAPO_BIN, then build/sapo, then sapo on PATH)")
    ap.add_argument("--no-check", action="store_true", help="do not check keys against `sapo info`")
    ap.add_argument("--warmups", action="store_true",
                    help="print the [warmup] entries instead: PATH<TAB>CONFIG<TAB>overrides")
    args = ap.parse_args(argv)
    try:
        fields = None if args.no_check else load_fields(find_sapo(args.sapo))
        sw, config, runs = expand(args.sweep, fields)
    except SweepError as e:
        print(e, file=sys.stderr)
        return 2
    if args.warmups:
        lines = ["%s\t%s\t%s\n" % (path, config, " ".join(ov)) for path, ov, _ in sw.warmups]
    else:
        lines = ["%s\t%s\t%s\n" % (name, cfg, " ".join(tokens)) for name, cfg, tokens in runs]
    try:
        sys.stdout.write("".join(lines))
        sys.stdout.flush()
    except BrokenPipeError:  # `| head` is a normal way to look
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
