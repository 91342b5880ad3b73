"""The specialist study's calibration rule, the plan's and the amended one, in one place: the
calibration table (experiments/specialists/calibration_table.py) and the study's report
(analysis/specialists.py) both judge a specialist warm-up's CKPT.json with it.
- the plan (results/specialists/README.md, "Calibration"): the specialty's held-out pass@1 in
  0.10-0.40, each other task below 0.03, an answer-tag rate of at least 0.7 on every task;
- the amendment (results/specialists/calibration/README.md, "The amendment"): the same, but each
  other task at most the format warm-up's pass@1 on that task + 0.05; a specialist that meets
  all but the specialty's band is a weak specialty where no SPEC reached the band."""

TASKS = ["base_conversion", "basic_arithmetic", "fraction_simplification", "calendar_arithmetic"]
OWN_LOW, OWN_HIGH = 0.10, 0.40
OTHER_BELOW = 0.03  # the plan's ceiling on the other tasks
AMENDED_MARGIN = 0.05  # the amendment's: the format warm-up's level + this
FORMAT_FLOOR = 0.7


class Verdict:
    """One specialist's verdicts: `plan`, `amended`, and `weak_ok` (the amendment's other-task and
    format parts, without the specialty's band)."""

    def __init__(self, plan, amended, weak_ok):
        self.plan, self.amended, self.weak_ok = plan, amended, weak_ok


def judge(task, pass1, tag_rates, format_pass1):
    """task: the specialty; pass1, tag_rates: {task: value} of the specialist's CKPT.json;
    format_pass1: {task: pass@1} of the format warm-up it continued (None: only the plan judged,
    the amended verdicts False)."""
    own = pass1[task]
    others = [t for t in TASKS if t != task]
    band = OWN_LOW <= own <= OWN_HIGH
    tags_ok = min(tag_rates[t] for t in TASKS) >= FORMAT_FLOOR
    plan = band and tags_ok and all(pass1[t] < OTHER_BELOW for t in others)
    if format_pass1 is None:
        return Verdict(plan, False, False)
    adds_nothing = all(pass1[t] <= format_pass1[t] + AMENDED_MARGIN for t in others)
    return Verdict(plan, band and tags_ok and adds_nothing, tags_ok and adds_nothing)
