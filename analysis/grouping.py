"""Group runs into configurations. Two runs are one configuration when every config key that
varies across the runs given has the same value in both, except the keys below that name a
repeat rather than a setting (the seed is swarm.seed). A configuration is labelled by its
split "I/J" (sampling.local / sampling.external) plus its other differing keys.

Baseline of a configuration: the configuration with the same other keys, J = 0 and I = G
(sampling.groups: the paper's 8/0). Keys that do nothing without external groups (net.*,
sampling.filter) are ignored when matching; failing that, the only J = 0 configuration there
is, with the keys where it differs said in the table."""
from .paper import paper_split

# keys that name a repeat or a file rather than a setting
REPEAT_KEYS = ("swarm.seed", "run.name", "run.out", "run.resume", "run.log_every", "model.init")
SPLIT_KEYS = ("sampling.local", "sampling.external")


def _inert_without_sharing(key):
    return key.startswith("net.") or key == "sampling.filter"


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class Configuration:
    def __init__(self, label, runs, others, local, external, groups, homogeneous, split):
        self.label = label
        self.runs = runs
        self.others = others  # {key: value} of varying keys other than the split
        self.local = local
        self.external = external
        self.groups = groups
        self.homogeneous = homogeneous
        self.split = split  # "I/J", or the per-node mix
        self.baseline = None
        self.baseline_note = ""

    @property
    def is_baseline(self):
        return self.homogeneous and self.external == 0 and self.local == self.groups

    @property
    def paper(self):
        return paper_split(self.local, self.external, self.groups) if self.homogeneous else None

    @property
    def seeds(self):
        return [r.seed for r in self.runs]


def varying_keys(runs, ignore=()):
    """Config keys (node overrides as node.K.section.key) whose values differ across runs."""
    flats = [r.config.flat() for r in runs]
    keys = sorted(set().union(*flats))
    return [k for k in keys if len({f.get(k) for f in flats}) > 1 and k not in ignore]


def node_split(run):
    """(local, external, groups) of every node, from the config's swarm value and node overrides."""
    out = []
    for k in range(run.n_nodes):
        out.append(tuple(_int(run.config.node_get(k, key)) for key in SPLIT_KEYS + ("sampling.groups",)))
    return out


def _split_label(splits):
    if len(set(splits)) == 1:
        local, external, _ = splits[0]
        return f"{local}/{external}", True
    counts = {}
    for s in splits:
        counts[s] = counts.get(s, 0) + 1
    parts = [f"{l}/{e}x{n}" for (l, e, _), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "mixed " + "+".join(parts), False


def group_runs(runs, ignore=()):
    """[Configuration] in report order: by other keys, then by the share of external groups."""
    ignore = set(REPEAT_KEYS) | set(ignore)
    varying = varying_keys(runs, ignore)
    groups = {}
    for run in runs:
        flat = run.config.flat()
        splits = node_split(run)
        split, homogeneous = _split_label(splits)
        others = {k: flat.get(k, "(unset)") for k in varying
                  if k not in SPLIT_KEYS and not (k.startswith("node.") and k.split(".", 2)[2] in SPLIT_KEYS)}
        key = (split, tuple(sorted(others.items())))
        if key not in groups:
            local, external, g = splits[0]
            label = split + "".join(f", {k}={v}" for k, v in sorted(others.items()))
            groups[key] = Configuration(label, [], others, local, external, g, homogeneous, split)
        groups[key].runs.append(run)
    configs = list(groups.values())
    for c in configs:
        c.runs.sort(key=lambda r: (_int(r.seed) if _int(r.seed) is not None else 0, r.name))

    def order(c):
        share = c.external / c.groups if c.homogeneous and c.groups else 2.0
        return (tuple(sorted(c.others.items())), not c.homogeneous, share, c.label)

    configs.sort(key=order)
    _assign_baselines(configs)
    return configs


def _assign_baselines(configs):
    bases = [c for c in configs if c.is_baseline]
    for c in configs:
        if c.is_baseline and len(bases) == 1:
            c.baseline = c
            continue
        same = [b for b in bases if b.others == c.others]
        if not same:
            relevant = {k: v for k, v in c.others.items() if not _inert_without_sharing(k)}
            same = [b for b in bases
                    if {k: v for k, v in b.others.items() if not _inert_without_sharing(k)} == relevant]
        if len(same) == 1:
            c.baseline = same[0]
        elif not same and len(bases) == 1:
            c.baseline = bases[0]
            diff = sorted(k for k in set(c.others) | set(bases[0].others) if c.others.get(k) != bases[0].others.get(k))
            c.baseline_note = "baseline differs in " + ", ".join(diff)
