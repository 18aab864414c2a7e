"""Labelled detector cases: one JSON object per line in ``tests/detectors/cases/*.jsonl``.

    {"id": "refund-claim-no-call",            unique across all files
     "filename": "s.json",                    decides JSON vs JSON Lines parsing, like a real file
     "session": {...} | [lines],   a session in any supported format (a list = JSON Lines)
     "config": {"agents": {...}, "detectors": {...}},   optional run-config fragment
     "expected": [{"kind": "unbacked_action_claim", "value": "..."}],   [] for a hard negative
     "check": ["unbacked_action_claim"],      kinds this case is about (others are not scored)
     "note": "why this case exists (the trap it sets)",
     "known_miss": "why the detectors get it wrong"}   optional: a failure kept on record

``*_independent.jsonl`` were written by a separate author from the issue text and the format
docs alone, without reading the detectors, and scored before any change made for them.

``value`` is compared case-insensitively, and for sentence-valued kinds (action claims) an
expected value only has to be contained in the found one. The tests assert every case; the
quality script in ``bench/`` turns the same cases into precision and recall per detector.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CASES_DIR = Path(__file__).resolve().parent / "detectors" / "cases"
SENTENCE_KINDS = {"unbacked_action_claim", "contradicted_action_claim"}


@dataclass
class Case:
    id: str
    filename: str
    session: Any
    expected: list[dict[str, str]]
    check: list[str]
    config: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    known_miss: str = ""
    source: str = ""


def load_cases(pattern: str = "*.jsonl", directory: Path = CASES_DIR) -> list[Case]:
    cases = []
    for path in sorted(directory.glob(pattern)):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip():
                raw = json.loads(line)
                cases.append(Case(source=f"{path.name}:{number}", **raw))
    return cases


def run_case(case: Case) -> list[tuple[str, str]]:
    """The (kind, value) signals the configured detectors find for ``case``, of its kinds."""
    from flows.config import parse_config
    from sessions.reader import SessionReader

    loaded = parse_config(case.config, base=CASES_DIR, source=case.id)
    cfg = loaded.config
    reader = SessionReader(cfg.sessions, cfg.agents, base=CASES_DIR)
    suite = loaded.detector_suite()
    if isinstance(case.session, list):
        raw = "\n".join(json.dumps(line) for line in case.session).encode()
    else:
        raw = json.dumps(case.session).encode()
    result = reader.read_unit([(case.filename, raw)])
    assert not result.failures, result.failures
    found = []
    for session in result.sessions:
        found += [(s.kind, s.value) for s in suite.run(session) if s.kind in case.check]
    return found


def matches(case: Case, found: list[tuple[str, str]]) -> tuple[int, int, int]:
    """(true positives, false positives, false negatives) at the value level."""
    remaining = list(found)
    tp = fn = 0
    for want in case.expected:
        hit = next((f for f in remaining if _same(want["kind"], want["value"], f)), None)
        if hit is None:
            fn += 1
        else:
            tp += 1
            remaining.remove(hit)
    return tp, len(remaining), fn


def _same(kind: str, value: str, found: tuple[str, str]) -> bool:
    if found[0] != kind:
        return False
    if kind in SENTENCE_KINDS:
        # The claim sentence, or a distinctive part of it; or the sentence itself when the
        # label quotes more ("Done. I've committed the change." for the second sentence).
        said, want = found[1].lower(), value.lower()
        return want in said or (len(said) >= 20 and said in want)
    return value.lower() == found[1].lower()
