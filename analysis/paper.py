"""The SAPO paper's reported totals (arXiv 2509.08721: 8 Qwen2.5-0.5B agents, 2000 rounds,
8 groups of 8 completions per agent per round; total reward summed over agents and rounds)
and how one of our I/J splits maps onto theirs: by the share of external groups J/G, so a
swarm with G = 4 groups per round compares 2/2 with their 4/4. Only relative changes are
comparable: our model, task difficulty, round count and swarm size differ."""

PAPER_SPLITS = ("8/0", "6/2", "4/4", "2/6")
PAPER_NODE_ROUNDS = 8 * 2000  # agents x rounds behind each total
PAPER_TOTALS = {"8/0": 561.79, "6/2": 854.43, "4/4": 1093.31, "2/6": 945.87}
# as the paper states them (from the totals 4/4 is +94.6%; the paper says +94%)
PAPER_CHANGES = {"8/0": "baseline", "6/2": "+52%", "4/4": "+94%", "2/6": "+68%"}
PAPER_NOTE = ("The paper's swarm is 8 Qwen2.5-0.5B agents over 2000 rounds with 8 groups of 8 completions "
              "per agent and round; its totals are sums over those agents and rounds, so only the relative "
              "changes vs 8/0 are comparable with ours, not the totals.")


def paper_split(local, external, groups):
    """The paper's split with the same share of external groups ('4/4' for our 2/2 of G = 4), or None."""
    if local is None or external is None or not groups or local + external != groups:
        return None
    eighths = external * 8 / groups
    if abs(eighths - round(eighths)) > 1e-9:
        return None
    key = f"{8 - round(eighths)}/{round(eighths)}"
    return key if key in PAPER_TOTALS else None
