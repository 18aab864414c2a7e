"""Precision and recall of every detector on the labelled cases in tests/detectors/cases/.

    python bench/detector_quality.py [--json] [--cases DIR]

Cases in ``*_independent.jsonl`` files (written without reading the detectors) are also scored
apart. ``--cases`` scores another folder of ``*.jsonl`` cases in the same format (see
tests/labelled_cases.py), such as a team's own labelled sessions.

Scored two ways: per signal (each expected kind and value found, nothing else of the case's
kinds) and per session (the case has any expected signal vs any found signal of its kinds).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from labelled_cases import CASES_DIR, Case, load_cases, matches, run_case  # noqa: E402


def score(cases: list[Case]) -> dict[str, dict[str, float]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for case in cases:
        found = run_case(case)
        for kind in case.check:
            expected = [e for e in case.expected if e["kind"] == kind]
            got = [f for f in found if f[0] == kind]
            sub = type(case)(**{**case.__dict__, "expected": expected})
            tp, fp, fn = matches(sub, got)
            c = counts[kind]
            c["cases"] += 1
            c["tp"], c["fp"], c["fn"] = c["tp"] + tp, c["fp"] + fp, c["fn"] + fn
            want, have = bool(expected), bool(got)
            c["s_tp"] += want and have
            c["s_fp"] += have and not want
            c["s_fn"] += want and not have
    table = {}
    for kind, c in sorted(counts.items()):
        table[kind] = {
            "cases": c["cases"],
            "tp": c["tp"],
            "fp": c["fp"],
            "fn": c["fn"],
            "precision": _ratio(c["tp"], c["tp"] + c["fp"]),
            "recall": _ratio(c["tp"], c["tp"] + c["fn"]),
            "session_precision": _ratio(c["s_tp"], c["s_tp"] + c["s_fp"]),
            "session_recall": _ratio(c["s_tp"], c["s_tp"] + c["s_fn"]),
        }
    return table


def _ratio(num: int, den: int) -> float:
    return num / den if den else 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cases", type=Path, default=CASES_DIR, help="folder of *.jsonl cases")
    args = parser.parse_args()
    if not args.cases.is_dir():
        parser.error(f"no such folder of cases: {args.cases}")
    cases = load_cases(directory=args.cases)
    independent = [c for c in cases if c.source.split(":")[0].endswith("_independent.jsonl")]
    sets = {"all": cases}
    if independent and len(independent) < len(cases):
        sets["written with the detectors"] = [c for c in cases if c not in independent]
        sets["written independently"] = independent
    tables = {name: score(chosen) for name, chosen in sets.items()}
    if args.json:
        print(json.dumps(tables, indent=2))
        return 0
    for name, table in tables.items():
        print(f"{name} ({len(sets[name])} cases)")
        _print(table)
        print()
    return 0


def _print(table: dict[str, dict[str, float]]) -> None:
    print(
        f"{'kind':28}{'cases':>6}{'TP':>5}{'FP':>4}{'FN':>4}{'precision':>11}{'recall':>8}"
        f"{'session P':>11}{'session R':>10}"
    )
    for kind, r in table.items():
        print(
            f"{kind:28}{r['cases']:>6}{r['tp']:>5}{r['fp']:>4}{r['fn']:>4}{r['precision']:>11.2f}"
            f"{r['recall']:>8.2f}{r['session_precision']:>11.2f}{r['session_recall']:>10.2f}"
        )


if __name__ == "__main__":
    sys.exit(main())
