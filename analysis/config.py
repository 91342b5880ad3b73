"""Parse the resolved INI configuration a run stores (config.ini and the HDF5 `config`
attribute): `[section] key = value  ; origin` lines plus optional `[node.K]` sections whose
keys are written `section.key`. Values stay strings; callers convert what they use."""
import configparser

from .errors import AnalysisError


class RunConfig:
    """Swarm-wide keys as {'section.key': value} and per-node overrides {K: {'section.key': value}}."""

    def __init__(self, text, swarm, nodes):
        self.text = text
        self.swarm = swarm
        self.nodes = nodes

    def get(self, key, default=None):
        return self.swarm.get(key, default)

    def node_get(self, node, key, default=None):
        """The value node K runs with: its override when there is one, else the swarm's."""
        return self.nodes.get(node, {}).get(key, self.swarm.get(key, default))

    def differs(self, key, want):
        """None when the run's KEY (node.K.section.key: node K's) is want (numbers compared as
        numbers: 1 is 1.0), else what it is instead ('(not set)' when absent)."""
        if key.startswith("node."):
            _, node, rest = key.split(".", 2)
            got = self.node_get(int(node), rest)
        else:
            got = self.get(key)
        if got is None:
            return "(not set)"
        try:
            same = float(got) == float(want)
        except (TypeError, ValueError):
            same = str(got).strip() == str(want).strip()
        return None if same else got

    def get_int(self, key, default=None, where="config"):
        value = self.swarm.get(key)
        if value is None:
            return default
        try:
            return int(value)
        except ValueError:
            raise AnalysisError(f"{where}: {key} = {value!r}: expected an integer") from None

    def flat(self):
        """Every setting as one dict, node overrides under 'node.K.section.key'."""
        out = dict(self.swarm)
        for node in sorted(self.nodes):
            for key, value in self.nodes[node].items():
                out[f"node.{node}.{key}"] = value
        return out


def config_parse(text, where="config"):
    """Parse resolved INI text; `where` names the source in the one-line error."""
    parser = configparser.ConfigParser(
        comment_prefixes=("#", ";"), inline_comment_prefixes=(";",), interpolation=None, strict=False
    )
    parser.optionxform = str  # keys are lower-case already; keep them exactly
    try:
        parser.read_string(text, source=where)
    except configparser.Error as e:
        first = str(e).strip().splitlines()[0]
        raise AnalysisError(f"{where}: not a resolved sapo INI config ({first})") from None
    swarm, nodes = {}, {}
    for section in parser.sections():
        items = {k: v.strip() for k, v in parser.items(section, raw=True)}
        if section.startswith("node."):
            try:
                node = int(section[5:])
            except ValueError:
                raise AnalysisError(f"{where}: [{section}]: expected [node.K] with K an integer") from None
            nodes.setdefault(node, {}).update(items)
        else:
            for key, value in items.items():
                swarm[f"{section}.{key}"] = value
    if not swarm:
        raise AnalysisError(f"{where}: no [section] key = value lines: not a sapo config")
    return RunConfig(text, swarm, nodes)
