"""Candidate answers for calendar_arithmetic entries, used by the cross-checks against
reasoning_gym. Weekday kinds: the oracle, other weekday names, case variants that
str.title() repairs (0.05), Unicode whitespace and look-alikes (long s, Kelvin sign,
dotless i). Count kinds: the oracle and near numbers (exp(-5|a-o|/o)), int() forms (signs,
underscores, leading zeros, Unicode digits, 4300-digit limit). Leap years: case and
whitespace variants. Every kind also gets empty strings and junk."""

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ARABIC_INDIC = "٠١٢٣٤٥٦٧٨٩"
FULLWIDTH = "０１２３４５６７８９"


def _digits(s: str, table: str) -> str:
    return "".join(table[int(c)] if c.isdigit() else c for c in s)


def _weekday(oracle: str) -> list[str]:
    other = [w for w in WEEKDAYS if w != oracle]
    out = [
        oracle,
        oracle.lower(),
        oracle.upper(),
        oracle.swapcase(),
        " " + oracle + " ",
        "\n" + oracle.lower() + "\t",
        "\u00a0" + oracle + "\u3000",
        "\x1c" + oracle.lower() + "\x1f",
        oracle + ".",
        oracle[:3],
        "The answer is " + oracle,
        oracle + " " + oracle,
        other[0],
        other[1].lower(),
        other[2].upper(),
        " " + other[3] + "\n",
        "ſunday",
        "ſaturday",
        "Sunday".replace("u", "ſ"),
        "Wednesday".replace("d", "ď"),
        "Friday".replace("i", "ı"),
        "Fr\u0130day",
        "\u212aonday",
        "",
        "   ",
        "0",
        "junk",
    ]
    return out


def _count(oracle: str) -> list[str]:
    o = int(oracle)
    out = [
        oracle,
        str(o + 1),
        str(o - 1),
        str(o + 5),
        str(max(o - 5, 0)),
        str(2 * o),
        str(-o),
        "0",
        "-0",
        "+" + oracle,
        " " + oracle + "\n",
        "\u2003" + oracle + "\u00a0",
        "0" + oracle,
        oracle + ".0",
        oracle + " days",
        "1_" + oracle,
        oracle[0] + "_" + oracle[1:] if len(oracle) > 1 else oracle + "_",
        "1__0",
        _digits(oracle, ARABIC_INDIC),
        _digits(oracle, FULLWIDTH),
        "- " + oracle,
        "9" * 30,
        "9" * 300,
        "9" * 400,  # |a-o|/o past 1e308: Python raises OverflowError; C gives 0
        "1" + "0" * 4300,
        "1" * 4301,
        "",
        " ",
        "thirteen",
        "Monday",
    ]
    return out


def _leap(oracle: str) -> list[str]:
    other = "No" if oracle == "Yes" else "Yes"
    return [
        oracle,
        oracle.lower(),
        oracle.upper(),
        " " + oracle.lower() + "\n",
        "\u3000" + oracle + "\u0085",
        other,
        other.lower(),
        oracle + ".",
        oracle[0],
        "True",
        "False",
        "yeſ",
        "Yes, it is",
        "N o",
        "",
        "  ",
        "junk",
        "1",
        "Monday",
        oracle.swapcase(),
    ]


def candidates(entry: dict) -> list[str]:
    task = entry["metadata"]["task"]
    oracle = entry["answer"]
    if task in ("weekday_offset", "weekday_of_date", "weekday_of_date_from_first_date"):
        return _weekday(oracle)
    if task in ("count_days", "count_business_days", "recurring_event_day"):
        return _count(oracle)
    return _leap(oracle)
