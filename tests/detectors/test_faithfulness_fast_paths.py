"""The faithfulness detector's quick paths answer as its full check does (they only order and
shorten the search): numbers without thousands separators, months by their ISO form or name,
dates read from a quoted JSON string, the count pattern, JSON run sums and re-cited entities."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest

from detectors.entities import (
    _COUNTED,
    _NUM_AT,
    context_counts,
    extract,
    line_scopes,
    quoted_scopes,
    scope_keys,
)
from detectors.faithfulness import FaithfulnessParams, _Context, json_run_sums

RESERVATION = json.dumps(
    {
        "reservation_id": "ZFA04Y",
        "flights": [
            {"flight_number": "HAT170", "date": "2024-05-16", "price": 1625.0},
            {"flight_number": "HAT022", "date": "2024-05-17", "price": 98},
        ],
        "payment_history": [{"payment_id": "credit_card_7815826", "amount": 1723}],
        "created_at": "2024-05-02T17:32:33",
    }
)
CONTEXTS = [
    [RESERVATION],
    ["The policy: refunds of $1,625 or less.", RESERVATION],
    ['<td data-date="2024-05-16">', "Total: 1625 dollars | paid May 2, 2024"],
    ["Shipped on October 3, 2025; 12,500 units in `2025-10` batch *7*."],
    ["  12→ created 2024-05-16\n  13→ total 1,625\n  14→ rows 14"],
]
REPLIES = [
    "Your flight costs $1,625 and the other $98; $1,723 in total.",
    "You paid $1,723 on May 16, 2024 and $1,624 later, about $1,700 in all.",
    "The trip is in May 2024 (Q2 2024), not June 2024.",
    "We shipped 12,500 units in October 2025; 12500 items were due in Oct 2025.",
    "That is $1,625.00, or $1625, booked 2024-05-02.",
]


@pytest.mark.parametrize("texts", CONTEXTS)
@pytest.mark.parametrize("reply", REPLIES)
def test_supports_answers_as_the_full_check(texts: list[str], reply: str) -> None:
    params = FaithfulnessParams()
    quick, full = _Context(params), _Context(params)
    for text in texts:
        quick.add(text)
        full.add(text)
    for e in extract(reply):
        assert quick.supports(e) == full._full(e), e
        assert quick.supports(e) == full._full(e), e  # a second time: from what it found


def test_a_number_written_with_separators_is_found_without_them() -> None:
    """`$1,625` against a tool's `1625.0`: read from that line, not from every event."""
    context = _Context(FaithfulnessParams())
    context.add(RESERVATION)
    (money,) = extract("It costs $1,625.")
    assert context.supports(money)
    assert context.merged["bare"] == 0  # the full check did not run


def test_a_month_is_found_by_its_iso_form_or_name() -> None:
    context = _Context(FaithfulnessParams())
    context.add(RESERVATION)
    context.add("Reminder: the fare rules changed on October 3, 2025.")
    for reply in ("You fly in May 2024.", "The change came in October 2025."):
        (date,) = extract(reply)
        assert context.supports(date)
    assert context.merged["entities"] == 0  # neither needed the full check


def _whole_scopes(text: str) -> set[str]:
    return {k for e in extract(text, context=True) if e.kind == "date" for k in scope_keys(e.norm)}


@pytest.mark.parametrize(
    "text",
    [
        RESERVATION,
        '{"a": "May 2024", "b": "x2024-05-16", "c": "CVE-2024-05123", "d": "2024-13-01"}',
        '{"when": "Q3 2024-08"}\n"2024-05-16" <b title="2024-06-01">',
        '"*2024-05-16*" and "`2024-07`" | "2024-09-01"',
        '   7→{"date": "2024-05-16"}\nMay\n"2024-04-30"',
    ],
)
def test_quoted_and_line_scopes_are_what_the_whole_text_holds(text: str) -> None:
    whole = _whole_scopes(text)
    for m in re.finditer(r"\d", text):
        start = text.rfind("\n", 0, m.start()) + 1
        assert quoted_scopes(text, start, m.start()) <= whole
        assert line_scopes(text, start) <= whole


def test_quoted_scopes_read_only_a_clean_quoted_stretch() -> None:
    line = '{"flight": "HAT170", "date": "2024-05-16", "price": 1625}'
    assert quoted_scopes(line, 0, line.index("2024")) == {"2024-05", "2024-Q2", "2024-H1"}
    assert quoted_scopes(line, 0, line.index("1625")) == set()  # not in quotes
    assert quoted_scopes("<i>" + line, 0, 3 + line.index("2024")) == set()  # a tag on the line
    marked = line.replace('"2024', '"*2024')
    assert quoted_scopes(marked, 0, marked.index("2024")) == set()  # markup in the stretch


# The count pattern as it was written before its lookbehind moved after the first digit.
_COUNTED_BEFORE = re.compile(rf"(?<![=:])(?P<num>{_NUM_AT})(?P<suf>[kKM]\b)?\s+[A-Za-z]")


@pytest.mark.parametrize(
    "text",
    [
        "suites=8 passed=37 :5 tests, 106 passed, 14 doctests in 2.5 seconds",
        "x12 files; 1,234 rows 3.5k users 7K\tusers .5 lines a5 b 12:30 pm 0 errors =9 a",
        "中文 12 件 3 Items 45\nlines 1,23 x 9,999,999.5 M ok",
    ],
)
def test_count_pattern_reads_as_before(text: str) -> None:
    assert _COUNTED.findall(text) == _COUNTED_BEFORE.findall(text)
    assert context_counts(text) == [
        float(n.replace(",", "")) * {"k": 1e3, "K": 1e3, "M": 1e6}.get(s, 1.0)
        for n, s in _COUNTED_BEFORE.findall(text)
    ]


def _columns_recursively(node: Any, path: str, columns: dict[str, list[float]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _columns_recursively(value, f"{path}.{key}", columns)
    elif isinstance(node, list):
        for item in node:
            _columns_recursively(item, f"{path}[]", columns)
    elif isinstance(node, int | float) and not isinstance(node, bool):
        columns.setdefault(path, []).append(float(node))


def _run_sums_recursively(text: str) -> set[float]:
    columns: dict[str, list[float]] = {}
    _columns_recursively(orjson.loads(text), "", columns)
    sums: set[float] = set()
    for values in columns.values():
        for start in range(len(values) - 1):
            total = values[start]
            for value in values[start + 1 : start + 8]:
                total += value
                sums.add(round(total, 2))
    return sums


@pytest.mark.parametrize(
    "document",
    [
        json.loads(RESERVATION),
        [1, [2, 3], {"a": 4, "b": [5, {"a": 6}]}, True, None, "7", 8.5, {"a": 9}],
        {"x": {"y": [{"p": 1, "q": [2, 3]}, {"p": 4, "q": []}, {"p": 5.25, "r": False}]}},
        {"deep": [[[[1, 2], [3]], [[4]]], [[[5, 6, 7, 8, 9, 10, 11, 12, 13]]]]},
        [],
        {},
    ],
)
def test_json_run_sums_in_document_order(document: Any) -> None:
    text = json.dumps(document)
    assert json_run_sums(text) == _run_sums_recursively(text)
