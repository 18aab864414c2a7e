"""Judge calibration: the labelled set loads, claims pair up, and the agreement math is right.

No model is called: judge claims here are plain objects with ``.claim`` and ``.label``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from detectors.judge.calibration import (
    EVIDENCE_SOURCES,
    LABELS,
    CalibrationSetError,
    ClaimPair,
    HumanClaim,
    agreement,
    cohen_kappa,
    format_report,
    load_cases,
    match_claims,
    similarity,
)

SHIPPED = Path(__file__).resolve().parent / "claims.jsonl"


@dataclass(frozen=True)
class Judged:
    """What a judge returns, as far as calibration cares."""

    claim: str
    label: str


def _case(**over: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": "c1",
        "agent": "airline-support",
        "domain": None,
        "evidence": [{"source": "tool_output", "name": "get_order", "text": '{"amount": 102}'}],
        "reply": "You paid $120.",
        "claims": [{"claim": "paid $120", "label": "partial", "note": "tool says 102"}],
    }
    case.update(over)
    return case


def _write(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    return path


def _error(path: Path) -> CalibrationSetError:
    with pytest.raises(CalibrationSetError) as info:
        load_cases(path)
    return info.value


# ------------------------------------------------------------------------------------- loading


def test_good_file_loads_and_skips_blank_lines(tmp_path: Path) -> None:
    second = _case(
        id="c2",
        domain="medical",
        evidence=[{"source": "reference", "text": "Max 8 tablets a day."}],
        claims=[
            {"claim": "max 8 tablets", "label": "supported", "note": "stated"},
            {"claim": "safe with ibuprofen", "label": "unsupported", "note": "absent"},
        ],
    )
    path = _write(tmp_path, [_case(), "", "   ", second])
    cases = load_cases(path)
    assert [c.id for c in cases] == ["c1", "c2"]
    assert cases[0].domain is None and cases[1].domain == "medical"
    assert cases[1].evidence[0].name is None
    assert cases[1].evidence[0].source == "reference"
    assert [c.label for c in cases[1].claims] == ["supported", "unsupported"]
    assert isinstance(cases[0].claims[0], HumanClaim)


def _claims_with(label: str) -> list[dict[str, str]]:
    return [{"claim": "paid $120", "label": label, "note": "n"}]


BAD_LINES: list[tuple[str, Any, str]] = [
    ("invalid json", '{"id": "c1", ', "not valid JSON"),
    ("not an object", [1, 2], "expected a JSON object, got list"),
    (
        "unknown label",
        _case(claims=_claims_with("hallucinated")),
        "claims[0].label: unknown label 'hallucinated' (expected one of supported, partial, "
        "unsupported, contradicted)",
    ),
    (
        "label in wrong case",
        _case(claims=_claims_with("Supported")),
        "unknown label 'Supported'",
    ),
    (
        "unknown evidence source",
        _case(evidence=[{"source": "assistant", "name": None, "text": "x"}]),
        "evidence[0].source: unknown evidence source 'assistant'",
    ),
    ("unknown domain", _case(domain="tax"), "domain: unknown domain 'tax'"),
    ("missing reply", {k: v for k, v in _case().items() if k != "reply"}, "reply: missing field"),
    (
        "missing note",
        _case(claims=[{"claim": "paid $120", "label": "partial"}]),
        "claims[0].note: missing field",
    ),
    ("unexpected field", _case(expected=[]), "expected: unexpected field"),
    ("no claims", _case(claims=[]), "claims:"),
    (
        "blank claim",
        _case(claims=[{"claim": "", "label": "partial", "note": "n"}]),
        "claims[0].claim:",
    ),
    ("blank id", _case(id="  "), "id: Value error, must not be blank"),
    (
        "repeated claim text",
        _case(
            claims=[
                {"claim": "Paid $120.", "label": "partial", "note": "n"},
                {"claim": "paid $120", "label": "contradicted", "note": "n"},
            ]
        ),
        "claims[1] repeats claims[0]",
    ),
]


@pytest.mark.parametrize(("what", "bad", "message"), BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_bad_line_names_file_line_and_problem(
    tmp_path: Path, what: str, bad: Any, message: str
) -> None:
    path = _write(tmp_path, [_case(id="fine"), "", bad])
    error = _error(path)
    assert len(error.problems) >= 1
    problem = error.problems[0]
    assert problem.path == str(path)
    assert problem.line == 3
    assert f"{path}:3: " in str(error)
    assert message in str(error), str(error)


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, [_case(), _case(reply="Another reply.")])
    error = _error(path)
    assert str(error) == f"{path}:2: duplicate id 'c1' (first used on line 1)"


def test_every_bad_line_is_reported_at_once(tmp_path: Path) -> None:
    path = _write(tmp_path, ["nope", _case(), _case(id="c2", claims=_claims_with("maybe"))])
    error = _error(path)
    assert [p.line for p in error.problems] == [1, 3]
    assert "case 'c2': claims[0].label: unknown label 'maybe'" in str(error)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert str(_error(missing)) == f"{missing}: file not found"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert str(_error(empty)) == f"{empty}: no cases (the file is empty)"


# ------------------------------------------------------------------------------------ matching


def test_similarity_normalises_case_numbers_and_number_words() -> None:
    assert similarity("Paid $1,240.00", "paid 1240") == pytest.approx(1.0)
    assert similarity("you have two checked bags", "The reservation has 2 checked bags") > 0.8
    assert similarity("the tests passed", "all tests pass") > 0.5
    assert similarity("", "") == 1.0


def test_claims_about_different_numbers_do_not_match() -> None:
    # Same words, different flight and time: the shared-number penalty keeps them apart.
    assert similarity("HAT204 departs at 09:00", "HAT216 departs at 17:00") < 0.5


def test_paraphrase_matches_and_unrelated_does_not() -> None:
    human = [
        HumanClaim(claim="reservation K7QM2P is cancelled", label="supported", note="n"),
        HumanClaim(claim="ruff passes", label="contradicted", note="n"),
    ]
    judged = [
        Judged("I cancelled your booking K7QM2P", "supported"),
        Judged("mypy found no issues in 41 source files", "supported"),
    ]
    pairs = match_claims(human, judged)
    assert [p.status for p in pairs] == ["matched", "missed", "extra"]
    assert pairs[0].human is human[0] and pairs[0].judged is judged[0]
    assert pairs[0].score >= 0.5
    assert pairs[1].human is human[1] and pairs[1].judged is None
    assert pairs[2].human is None and pairs[2].judged is judged[1]


def test_matching_is_one_to_one_and_prefers_the_best_pair() -> None:
    human = [
        Judged("HAT204 economy costs $134", "supported"),
        Judged("HAT216 economy costs $121", "partial"),
    ]
    # Judge order is reversed, and a near-duplicate of the first claim competes for it.
    judged = [
        Judged("Economy on HAT216 is $121.", "partial"),
        Judged("Economy on HAT204 is $134.", "supported"),
        Judged("HAT204 economy costs $134 per person", "supported"),
    ]
    pairs = match_claims(human, judged)
    matched = {p.human.claim: p.judged.claim for p in pairs if p.human and p.judged}
    assert matched == {
        "HAT204 economy costs $134": "HAT204 economy costs $134 per person",
        "HAT216 economy costs $121": "Economy on HAT216 is $121.",
    }
    extras = [p.judged.claim for p in pairs if p.status == "extra" and p.judged]
    assert extras == ["Economy on HAT204 is $134."]


def test_threshold_and_empty_inputs() -> None:
    human = [Judged("the suite has 50 tests", "supported")]
    judged = [Judged("the suite has 50 tests", "supported")]
    assert [p.status for p in match_claims(human, judged, threshold=1.01)] == ["missed", "extra"]
    assert match_claims([], []) == []
    assert [p.status for p in match_claims(human, [])] == ["missed"]
    assert [p.status for p in match_claims([], judged)] == ["extra"]


# ----------------------------------------------------------------------------------- agreement


def _pairs(cells: dict[tuple[str, str], int], missed: list[str], extra: list[str]) -> list[Any]:
    pairs: list[ClaimPair] = []
    n = 0
    for (human, judge), count in cells.items():
        for _ in range(count):
            n += 1
            pairs.append(ClaimPair(Judged(f"h{n}", human), Judged(f"j{n}", judge), 1.0))
    pairs += [ClaimPair(Judged(f"m{i}", label), None) for i, label in enumerate(missed)]
    pairs += [ClaimPair(None, Judged(f"e{i}", label)) for i, label in enumerate(extra)]
    return pairs


# Ten matched claims, computed by hand (rows: human, columns: judge):
#
#                 supported  partial  unsupported  contradicted | row
#   supported             3        1            0             0 |   4
#   partial               1        1            0             0 |   2
#   unsupported           0        0            2             0 |   2
#   contradicted          0        0            1             1 |   2
#   column                4        2            3             1 |  10
#
#   agreed = 3 + 1 + 2 + 1 = 7, p_o = 7/10 = 0.7
#   p_e = (4*4 + 2*2 + 2*3 + 2*1) / 10^2 = 28/100 = 0.28
#   kappa = (0.7 - 0.28) / (1 - 0.28) = 0.42 / 0.72 = 0.58333...
#   precision = agreed / column: supported 3/4, partial 1/2, unsupported 2/3, contradicted 1/1
#   recall = agreed / row: supported 3/4, partial 1/2, unsupported 2/2, contradicted 1/2
# Plus two human claims the judge missed (supported, contradicted) and one extra judge claim
# (unsupported), which count in no figure above.
CELLS = {
    ("supported", "supported"): 3,
    ("supported", "partial"): 1,
    ("partial", "partial"): 1,
    ("partial", "supported"): 1,
    ("unsupported", "unsupported"): 2,
    ("contradicted", "contradicted"): 1,
    ("contradicted", "unsupported"): 1,
}


def test_agreement_matches_hand_computed_figures() -> None:
    report = agreement(_pairs(CELLS, ["supported", "contradicted"], ["unsupported"]))
    assert report.labels == LABELS
    assert (report.matched, report.agreed, report.missed, report.extra) == (10, 7, 2, 1)
    assert (report.human_total, report.judged_total) == (12, 11)
    assert report.agreement == pytest.approx(0.7)
    assert report.kappa == pytest.approx(0.42 / 0.72)
    assert report.confusion["supported"] == {
        "supported": 3,
        "partial": 1,
        "unsupported": 0,
        "contradicted": 0,
    }
    assert report.confusion["contradicted"]["unsupported"] == 1
    expected = {
        # label: (human, judged, agreed, missed, extra, precision, recall)
        "supported": (4, 4, 3, 1, 0, 3 / 4, 3 / 4),
        "partial": (2, 2, 1, 0, 0, 1 / 2, 1 / 2),
        "unsupported": (2, 3, 2, 0, 1, 2 / 3, 1.0),
        "contradicted": (2, 1, 1, 1, 0, 1.0, 1 / 2),
    }
    for label, (human, judged, agreed, missed, extra, precision, recall) in expected.items():
        s = report.per_label[label]
        assert (s.human, s.judged, s.agreed, s.missed, s.extra) == (
            human,
            judged,
            agreed,
            missed,
            extra,
        ), label
        assert s.precision == pytest.approx(precision), label
        assert s.recall == pytest.approx(recall), label


def test_report_as_plain_dict() -> None:
    report = agreement(_pairs(CELLS, ["supported", "contradicted"], ["unsupported"]))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["agreement"] == pytest.approx(0.7)
    assert data["kappa"] == pytest.approx(0.42 / 0.72)
    assert data["labels"]["unsupported"]["precision"] == pytest.approx(2 / 3)
    assert data["labels"]["partial"]["missed"] == 0
    assert data["confusion"]["contradicted"]["unsupported"] == 1


def test_cohen_kappa_edge_cases() -> None:
    assert cohen_kappa({}) is None
    assert cohen_kappa({"supported": {"supported": 0}}) is None
    # Both raters always say "supported": chance agreement is 1, kappa undefined.
    assert cohen_kappa({"supported": {"supported": 5, "partial": 0}, "partial": {}}) is None
    # Perfect agreement over two labels, and perfect disagreement.
    perfect = {"supported": {"supported": 3, "partial": 0}, "partial": {"partial": 2}}
    assert cohen_kappa(perfect) == pytest.approx(1.0)
    # p_o = 0, p_e = (2*2 + 2*2) / 16 = 0.5, kappa = -0.5 / 0.5 = -1.
    swapped = {"supported": {"partial": 2}, "partial": {"supported": 2}}
    assert cohen_kappa(swapped) == pytest.approx(-1.0)


def test_labels_are_normalised_and_unknown_judge_labels_get_a_column() -> None:
    pairs = [
        ClaimPair(Judged("a", "supported"), Judged("a", " Supported "), 1.0),
        ClaimPair(Judged("b", "unsupported"), Judged("b", "unverifiable"), 1.0),
    ]
    report = agreement(pairs)
    assert report.labels == (*LABELS, "unverifiable")
    assert report.agreed == 1 and report.matched == 2
    assert report.confusion["unsupported"]["unverifiable"] == 1
    assert report.per_label["unsupported"].recall == 0.0
    assert report.per_label["unverifiable"].precision == 0.0
    assert report.per_label["partial"].precision is None


def test_empty_report() -> None:
    report = agreement([])
    assert report.matched == 0 and report.agreement is None and report.kappa is None
    text = format_report(report)
    assert "agreement 0/0 = n/a" in text and "kappa n/a" in text


# -------------------------------------------------------------------------------------- report


def test_format_report_is_a_fixed_width_table_with_every_label() -> None:
    report = agreement(_pairs(CELLS, ["supported", "contradicted"], ["unsupported"]))
    text = format_report(report)
    lines = text.splitlines()
    assert "human claims 12, judge claims 11: matched 10, missed 2, extra 1" in text
    assert "agreement 7/10 = 70.0%" in text
    assert "Cohen's kappa 0.583" in text
    header = next(i for i, line in enumerate(lines) if line.startswith("label "))
    table = lines[header : header + len(LABELS) + 2]
    assert len({len(line) for line in table}) == 1, table
    rows = {line.split()[0]: line.split()[1:] for line in table[1:]}
    assert set(rows) == {*LABELS, "all"}
    # human judge agree precision recall missed extra
    assert rows["supported"] == ["4", "4", "3", "75.0%", "75.0%", "1", "0"]
    assert rows["unsupported"] == ["2", "3", "2", "66.7%", "100.0%", "0", "1"]
    assert rows["contradicted"] == ["2", "1", "1", "100.0%", "50.0%", "1", "0"]
    assert rows["all"] == ["10", "10", "7", "70.0%", "70.0%", "2", "1"]
    confusion = lines.index(next(line for line in lines if line.startswith("human \\ judge")))
    matrix = {line.split()[0]: line.split()[1:] for line in lines[confusion + 1 : confusion + 5]}
    assert matrix == {
        "supported": ["3", "1", "0", "0"],
        "partial": ["1", "1", "0", "0"],
        "unsupported": ["0", "0", "2", "0"],
        "contradicted": ["0", "0", "1", "1"],
    }


# ---------------------------------------------------------------------------- the shipped set


def test_shipped_set_loads_with_unique_ids_and_enough_of_each_label() -> None:
    cases = load_cases(SHIPPED)
    assert 40 <= len(cases) <= 70
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    counts: Counter[str] = Counter(claim.label for case in cases for claim in case.claims)
    assert set(counts) == set(LABELS)
    for label in LABELS:
        assert counts[label] >= 8, (label, counts)


def test_shipped_set_covers_domains_sources_and_traps() -> None:
    cases = load_cases(SHIPPED)
    assert {c.domain for c in cases} == {None, "medical", "financial", "legal"}
    assert {e.source for c in cases for e in c.evidence} == set(EVIDENCE_SOURCES)
    injected = [
        c.id
        for c in cases
        if any("ignore previous instructions" in e.text.lower() for e in c.evidence)
    ]
    assert len(injected) >= 2
    assert all(claim.note.strip() for c in cases for claim in c.claims)


def test_each_shipped_case_pairs_its_claims_with_themselves() -> None:
    # If two claims of one case were too alike, a judge's wording could land on the wrong one.
    for case in load_cases(SHIPPED):
        pairs = match_claims(case.claims, case.claims)
        assert all(p.human is p.judged for p in pairs), case.id
