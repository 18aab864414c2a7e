"""Every labelled case in tests/detectors/cases/ (the same cases bench/detector_quality.py
scores): each expected signal found, nothing else of the case's kinds."""

from __future__ import annotations

import pytest
from labelled_cases import Case, load_cases, matches, run_case

CASES = load_cases()


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) >= 280


def _param(case: Case) -> object:
    if case.known_miss:  # on record: the test fails when the detectors start to get it right
        return pytest.param(case, marks=pytest.mark.xfail(reason=case.known_miss, strict=True))
    return case


@pytest.mark.parametrize("case", [_param(c) for c in CASES], ids=[c.id for c in CASES])
def test_labelled_case(case: Case) -> None:
    assert matches(case, run_case(case)) == (len(case.expected), 0, 0), (
        f"{case.source}: {case.note}"
    )
