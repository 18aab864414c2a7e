"""Canary sessions and empty days: the nightly run proves its checks are alive, loudly."""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from alerts.routing import alerts_for_day
from detectors.runner import DetectorSuite
from findings.canaries import CANARIES, CanaryMissed, check_canaries
from findings.store import ResultsStore
from sessions.config import SessionsConfig
from sessions.reader import SessionReader
from sessions.storage import LocalStore

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples"
DAY = date(2026, 11, 29)
EXPECTED = {
    "invented_stripe_id": "invented_id",
    "claims_tests_pass": "unbacked_action_claim",
    "undeclared_tool": "unknown_tool",
}

CONSOLE = """
alerts:
  channels:
    console: {type: console, path: alerts.txt}
"""


def _example_copy(tmp_path: Path, extra_config: str = "") -> Path:
    shutil.copytree(EXAMPLE / "bucket", tmp_path / "bucket")
    config = tmp_path / "halluwatch.yaml"
    config.write_text((EXAMPLE / "halluwatch.yaml").read_text() + extra_config)
    return config


# --- check_canaries, without Prefect ----------------------------------------------------------


def test_every_canary_is_caught_by_the_default_detectors() -> None:
    results = check_canaries(SessionReader(), DetectorSuite())
    assert {r.canary: r.expected_kind for r in results} == EXPECTED
    assert all(r.caught and r.error is None for r in results), results


@pytest.mark.parametrize(
    ("detector", "canary"),
    [
        ("invented_id", "invented_stripe_id"),
        ("action_claims", "claims_tests_pass"),
        ("unknown_tool", "undeclared_tool"),
    ],
)
def test_a_disabled_detector_leaves_its_canary_uncaught(detector: str, canary: str) -> None:
    results = check_canaries(SessionReader(), DetectorSuite({detector: {"enabled": False}}))
    missed = [r.canary for r in results if not r.caught]
    assert missed == [canary]


def test_canaries_go_through_the_reader_so_a_reader_that_cannot_read_them_misses() -> None:
    reader = SessionReader(SessionsConfig(format="claude_code"))
    results = check_canaries(reader, DetectorSuite())
    assert not any(r.caught for r in results)
    assert all(r.error for r in results)


def test_canaries_are_built_in_code_as_openai_chat_sessions() -> None:
    assert len(CANARIES) == 3
    read = SessionReader().read_unit([("c.json", b"{}")])  # sanity: a bad file is a failure
    assert read.failures
    for canary in CANARIES:
        assert canary.session["messages"] and canary.session["tools"]


def test_run_check_rows_become_alerts_in_their_own_words() -> None:
    row = {
        "metric": "sessions",
        "agent": None,
        "agent_version": None,
        "kind": "count",
        "today_value": 0.0,
        "baseline_value": None,
        "lift": None,
        "p_value": None,
        "status": "anomaly",
        "severity": "high",
        "reason": "no sessions found under sessions/2026/11/29/: check the export",
    }
    canary = dict(
        row,
        metric="canary",
        canary="undeclared_tool",
        severity="critical",
        reason="canary undeclared_tool was not caught: the unknown_tool check is broken",
    )
    alerts = alerts_for_day(DAY, [row, canary], [], {}, None)
    assert [(a.item_type, a.severity) for a in alerts] == [
        ("anomaly", "high"),
        ("canary", "critical"),
    ]
    assert alerts[0].summary == row["reason"]
    assert alerts[0].title == "halluwatch: no sessions found under sessions/2026/11/29/"
    assert alerts[1].summary == canary["reason"]


# --- the nightly flow -------------------------------------------------------------------------


@pytest.mark.prefect
def test_a_normal_night_records_three_caught_canaries(prefect_api: str, tmp_path: Path) -> None:
    from flows.nightly import nightly

    manifest = nightly(config=str(_example_copy(tmp_path)), date="2026-11-29")
    assert [(c["canary"], c["expected_kind"], c["caught"]) for c in manifest["canaries"]] == [
        (name, kind, True) for name, kind in EXPECTED.items()
    ]
    assert not any(a["metric"] in ("canary", "sessions") for a in manifest["anomalies"])
    stored = ResultsStore(LocalStore(tmp_path / "results"), "").read_manifest(DAY)
    assert stored is not None and stored["canaries"] == manifest["canaries"]


@pytest.mark.prefect
def test_a_disabled_detector_fails_the_night_after_committing_and_alerting(
    prefect_api: str, tmp_path: Path
) -> None:
    from flows.nightly import nightly

    text = (
        (EXAMPLE / "halluwatch.yaml")
        .read_text()
        .replace(
            "detectors:\n  unknown_tool:",
            "detectors:\n  invented_id: {enabled: false}\n  unknown_tool:",
        )
    )
    assert "invented_id: {enabled: false}" in text
    config = _example_copy(tmp_path, CONSOLE)
    config.write_text(text + CONSOLE)
    with pytest.raises(CanaryMissed) as caught:
        nightly(config=str(config), date="2026-11-29")
    assert "invented_stripe_id" in str(caught.value)
    stored = ResultsStore(LocalStore(tmp_path / "results"), "").read_manifest(DAY)
    assert stored is not None
    rows = [a for a in stored["anomalies"] if a["metric"] == "canary"]
    assert rows == [
        {
            "date": "2026-11-29",
            "run_id": stored["run_id"],
            "metric": "canary",
            "agent": None,
            "agent_version": None,
            "kind": "count",
            "today_value": 0.0,
            "baseline_value": 1.0,
            "lift": None,
            "p_value": None,
            "status": "anomaly",
            "severity": "critical",
            "reason": "canary invented_stripe_id was not caught: the invented_id check is broken",
            "canary": "invented_stripe_id",
        }
    ]
    assert stored["alerts"]["alerts"] >= 1 and not stored["alerts"]["failed"]
    sent = (tmp_path / "alerts.txt").read_text()
    assert "canary invented_stripe_id was not caught" in sent


@pytest.mark.prefect
def test_a_day_with_no_sessions_is_alerted_not_a_quiet_success(
    prefect_api: str, tmp_path: Path
) -> None:
    from flows.nightly import nightly

    config = _example_copy(tmp_path, CONSOLE)
    # A fresh install: neither the results store nor the day's export exists yet.
    manifest = nightly(config=str(config), date="2026-11-30")
    assert manifest["sessions"] == 0
    reason = "no sessions found under sessions/2026/11/30/: check the export"
    rows = [a for a in manifest["anomalies"] if a["metric"] == "sessions"]
    assert [(r["severity"], r["reason"], r["status"]) for r in rows] == [
        ("high", reason, "anomaly")
    ]
    assert manifest["alerts"]["alerts"] == 1 and not manifest["alerts"]["failed"]
    assert reason in (tmp_path / "alerts.txt").read_text()


def _analysed(day: date, sessions: int) -> object:
    from findings.batch import BatchPartial
    from flows.nightly import AnalysedDay

    total = BatchPartial()
    total.sessions = sessions
    started = datetime.now(UTC)
    return AnalysedDay(day, "run-x", started, "sessions/2026/11/29/", 0, {}, 0, total, {})


@pytest.mark.parametrize(
    ("baseline", "today", "reason"),
    [
        (
            [1200, 1180, 1250],
            12,
            "12 sessions under sessions/2026/11/29/, far below the usual 1,200: check the export",
        ),
        ([1200, 1180, 1250], 500, None),
        ([1200, 1180], 12, None),  # two baseline days are too few to call a day thin
        ([], 0, "no sessions found under sessions/2026/11/29/: check the export"),
    ],
)
def test_a_thin_day_is_judged_against_the_median_of_committed_days(
    tmp_path: Path, baseline: list[int], today: int, reason: str | None
) -> None:
    from flows.nightly import AnalysedDay, volume_row

    (tmp_path / "results").mkdir()
    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    for n, count in enumerate(baseline):
        results.write_manifest(date(2026, 11, 26 + n), {"sessions": count})
    analysed = _analysed(DAY, today)
    assert isinstance(analysed, AnalysedDay)
    row = volume_row(results, analysed, 28, "run-x")
    assert (row and row["reason"]) == reason
    if row is not None:
        assert (row["metric"], row["severity"], row["kind"], row["status"]) == (
            "sessions",
            "high",
            "count",
            "anomaly",
        )
