"""The faithfulness check's quick paths answer as the slow ones do: the number read where a key
stands (`number_at`) is one the line's reading holds, small factors are found by a trigger scan
of the lowered text, a table rule is looked for on the lines holding `---`, and a pool kept
without counts answers ranges as one with them."""

from __future__ import annotations

import re

import pytest

from detectors.entities import _TABLE_RULE, _has_table_rule, line_numbers, number_at, scan
from detectors.faithfulness import _FACTOR, _FACTOR_AT, _FACTOR_LOWER, _SMALL, _factors, _Pool

LINES = [
    "Ran 12 tests in 0.5s: 3 failed, 1,234 files and 5k users; 7 items cost $1,625.00",
    '{"total": 1625.0, "items": [12, 7.5, 3], "rate": 0.12, "id": "v1.5", "n": 1,625}',
    "   12\u2192 total 1,625 \u20ac40 and 8 items",
    "  12 | 7 rows | 3,5 | x12 .5 a5 0.5",
    "<b>12</b> and <a href=14>15</a> <i 16 17> 18<br>thousand 19*thousand 20`thousand",
    "about 12\nthousand users, 13 thousand, 14k, 15 K, 16 million\n17",
    "1,625 and 625, 3,1,625 and 2.5.6; \u0663\u0664 and 12\u00d7 and 7|8*9`10",
    "\t5\tfive 6 <7 8> 9 < 10",
    "x" * 450 + " 12 " + "y" * 100 + " 34 thousand " + "z" * 300,
    "`" + "x" * 450 + " 12 " + "y" * 100,
]
TEXTS = [*LINES, "\n".join(LINES), "\n".join(reversed(LINES)) + "\n"]


@pytest.mark.parametrize("text", TEXTS)
def test_number_at_is_a_number_of_the_line(text: str) -> None:
    for m in re.finditer(r"(?<!\d)\d", text):
        at = m.start()
        start = text.rfind("\n", 0, at) + 1
        value = number_at(text, start, at)
        if value is not None:
            for counts in (False, True):
                assert value in line_numbers(text, start, at, counts=counts)[1], (text, at)


def test_number_at_settles_plain_numbers() -> None:
    text = 'Ran 12 tests\n{"total": 1625.0, "rate": 0.12}\n   7\u2192 5k users'
    assert number_at(text, 0, 4) == 12.0
    start = text.index("{")
    assert number_at(text, start, text.index("1625")) == 1625.0
    assert number_at(text, start, text.index("0.12")) == 0.12
    row = text.index("   7")
    assert number_at(text, row, text.index("5k")) == 5000.0
    assert number_at(text, row, row + 3) is None  # the line-number prefix: `clean` removes it


FACTOR_TEXTS = [
    "",
    "Two passengers, 3 nights: $348 x 2 = $696, or 2x the price; item 2. and THREE Bags",
    "five-star hotels for six guests \u00d7 4, 9* and *7; seven\tnights, eight-ish Rooms",
    "Stretch 2 and nine; ten bags, 1 bag, 23 bags, 12x, x10, two bags",
    "Non-ASCII: caf\u00e9 for Two Guests \u00d7 3 and 4 \u017fuites (long s) \u212aelvins",
    "twofold threes foursome fivers, sixteen bags; 2 KEY-CARDS s 2  x  3",
]


@pytest.mark.parametrize("text", FACTOR_TEXTS)
def test_factors_are_the_regex_ones(text: str) -> None:
    slow = {
        int(n) if n.isdigit() else _SMALL[n.lower()]
        for m in _FACTOR.finditer(text)
        for n in m.groups()
        if n
    }
    assert _factors(text) == slow
    if text.isascii():
        spans = [m.span() for m in scan(_FACTOR_LOWER, _FACTOR_AT, text.lower())]
        assert spans == [m.span() for m in _FACTOR.finditer(text)]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a | b\n---|---\n1 | 2",
        " id | name\n----+------\n  1 | x",
        "/* --- Tokens --- */ a | b\n--- not a rule |",
        "x ---\n  |:---:| b |\ny",
        "--- | a\n|",
        "a|b\n- -- ---x\n----",
    ],
)
def test_table_rule_is_the_regex_one(text: str) -> None:
    assert _has_table_rule(text) == (_TABLE_RULE.search(text) is not None)


def test_a_pool_without_pairs_answers_ranges_alike() -> None:
    values = [3.0, 12.5, 7.0, 1625.0, 0.12]
    counted, uncounted = _Pool(), _Pool(pairs=False)
    for pool in (counted, uncounted):
        pool.extend(values[:2])
        pool.extend(values[2:])
    for low, high in [(0.1, 0.2), (7, 7), (8, 12), (12, 13), (1e4, 1e5), (-5, 0)]:
        assert counted.any_between(low, high) == uncounted.any_between(low, high)
    assert counted.pair_sum(19.5)
