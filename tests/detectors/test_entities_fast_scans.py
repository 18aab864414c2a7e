"""Extraction's quick tests and scans find what the straightforward ones find: digits by `in`,
strings behind a rarer character (`_holds_any`), and numeric anchors in an ASCII text's copy with
its digits folded to `0`."""

from __future__ import annotations

import re

import pytest

from detectors.entities import (
    _DATE_MARKS,
    _DIGIT,
    _NUMERIC,
    _folded,
    _has_digit,
    _has_id_word,
    _holds_any,
    _scan_numeric,
    extract,
)

TEXTS = [
    "",
    "no digits here, just ERRORS and a SKU",
    "Ran 12 tests in 0.5s: 3 failed, 1,234 files and 5k users; 7 items cost $1,625.00",
    "That is 12% (twelve percent), 3 per cent, 4 pct and about 50 dollars or 2.5M USD.",
    "Q3 2024, H1 2025, FY24, the first quarter of 2023, May 16, 2024 and 2024-05-16.",
    "Only \u0663 and \uff17 (Arabic-Indic and fullwidth digits) \u2192 nothing ASCII",
    "   12\u2192 total 1,625 \u20ac40 \u00a35 GBP 7 and \u00b18 items\n  13\u2192 rows 14",
    "suites=8 passed=37 :5 tests, x12 files; 3.5k users 7K\tusers .5 lines a5 b 0 errors",
    "Version 1.2.3 has 42 open issues\u2014and 9 closed ones; 19 Euros, 20 euros, 3 USD",
]


@pytest.mark.parametrize("text", TEXTS)
def test_has_digit_is_the_regex(text: str) -> None:
    assert _has_digit(text) == (_DIGIT.search(text) is not None)


@pytest.mark.parametrize("text", TEXTS)
def test_id_word_is_either_string(text: str) -> None:
    assert _has_id_word(text, False) == ("ERR" in text or "SKU" in text)


def _strings(needles: tuple[tuple[str, tuple[str, ...]], ...]) -> list[str]:
    return [string for _, strings in needles for string in strings]


def test_every_gate_is_held_by_its_strings() -> None:
    groups = [_DATE_MARKS] + [needles for *_, needles in _NUMERIC if needles is not None]
    for needles in groups:
        for gate, strings in needles:
            assert all(gate in string for string in strings), (gate, strings)


@pytest.mark.parametrize("text", TEXTS)
def test_holds_any_is_any_string(text: str) -> None:
    groups = [_DATE_MARKS] + [needles for *_, needles in _NUMERIC if needles is not None]
    for needles in groups:
        assert _holds_any(text, needles) == any(s in text for s in _strings(needles))


@pytest.mark.parametrize("text", TEXTS + [text * 3 for text in TEXTS])
def test_folded_anchors_find_what_finditer_finds(text: str) -> None:
    folded = _folded(text)
    assert folded is None or (len(folded) == len(text) and not re.search("[1-9]", folded))
    for _, pattern, anchor, _ in _NUMERIC:
        found = [m.span() for m in _scan_numeric(pattern, anchor, text, folded)]
        assert found == [m.span() for m in pattern.finditer(text)]
        assert found == [m.span() for m in _scan_numeric(pattern, anchor, text)]


@pytest.mark.parametrize("text", TEXTS)
def test_extract_reads_a_text_as_its_non_ascii_twin_does(text: str) -> None:
    """The folded scans serve ASCII texts only: a non-ASCII character where nothing is read
    (a trailing one) leaves what is found as it was."""
    for context in (False, True):
        assert extract(text, context=context) == extract(text + " \u2192", context=context)


ID_TEXTS = [
    *TEXTS,
    "P/N 7731-0452-A and 0452-7731-B2, not 2026-04-15 nor 555-0148 nor 123-456-789",
    "WS-C3850-48T, C9300-48P, INC-20931, #48213, E0425, ERR_NOT_FOUND, 0x80070002, HTTP 503",
    "error AADSTS50076, code=TS2307, MSB3073 error, ISO8601; SKU HO-JKT-M-NVY and SKU-88120",
    "x7731-0452-A 7731-0452-A-1 7731-0452-a 1b4e28ba-2fa1-11d2-883f-0016d3cca427 12.345-678-A",
]


@pytest.mark.parametrize("text", ID_TEXTS)
def test_id_triggers_find_what_finditer_finds(text: str) -> None:
    from detectors.entities import _IDS, _IDS_AT, _IDS_CONTEXT, _IDS_CONTEXT_AT, scan

    for pattern, trigger in ((_IDS, _IDS_AT), (_IDS_CONTEXT, _IDS_CONTEXT_AT)):
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in scan(pattern, trigger, text)] == expected
