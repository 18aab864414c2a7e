"""Eight days with a planted rise: backfill, anomalies, stable findings, re-runs, before/after."""

from __future__ import annotations

import json
import subprocess
from datetime import date
from pathlib import Path

import pytest
from planted_days import CONFIG, write_days
from tests_support import cli_env, halluwatch_bin

from findings.store import ResultsStore
from sessions.storage import LocalStore

pytestmark = pytest.mark.prefect
FIRST = date(2026, 11, 1)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planted")
    write_days(root / "bucket", FIRST)
    (root / "halluwatch.yaml").write_text(CONFIG)
    return root


@pytest.fixture(scope="module")
def backfilled(planted: Path, prefect_api: str) -> list[dict]:
    from flows.nightly import backfill

    return backfill(
        config=str(planted / "halluwatch.yaml"),
        start="2026-11-01",
        end="2026-11-08",
        deploy_version="v2",
        concurrency=2,
    )


def test_only_the_planted_day_is_an_anomaly(backfilled: list[dict]) -> None:
    assert [m["date"] for m in backfilled] == [f"2026-11-0{n}" for n in range(1, 9)]
    for m in backfilled[:7]:
        assert m["anomalies"] == [], m["date"]
    # The first days have no baseline yet: they say so rather than guess.
    # 2 agents x (one version + all versions) x 6 metrics; nothing is judged yet.
    assert backfilled[0]["spike_tests"] == {"insufficient_baseline": 20, "insufficient_today": 4}
    anomalies = backfilled[7]["anomalies"]
    flagged = {(a["metric"], a["agent"], a["agent_version"]) for a in anomalies}
    assert ("action_claim_session_share", "support-bot", "*") in flagged
    assert all(a["agent"] == "support-bot" for a in anomalies)
    share = next(a for a in anomalies if a["agent_version"] == "*")
    assert (share["today_numerator"], share["today_denominator"]) == (30, 300)
    assert share["baseline_numerator"] == 21 and share["p_value"] < 0.01
    assert share["severity"] in ("high", "critical")
    assert backfilled[7]["deploy_version"] == "v2"


def test_the_planted_finding_keeps_its_id(backfilled: list[dict]) -> None:
    ids = []
    for m in backfilled:
        support = [
            f
            for f in m["findings"]
            if f["agent"] == "support-bot" and f["kind"] == "unbacked_action_claim"
        ]
        assert len(support) == 1, m["date"]
        ids.append(support[0]["id"])
    assert len(set(ids)) == 1
    assert [f["affected_sessions"] for f in backfilled[7]["findings"] if f["id"] == ids[0]] == [30]


def test_rerunning_a_day_gives_identical_results(planted: Path, backfilled: list[dict]) -> None:
    from flows.nightly import nightly

    results = ResultsStore(LocalStore(planted / "results"), "")
    day = date(2026, 11, 8)
    before = {
        t: results.read_table(t, day).drop_columns(["run_id"]).to_pylist()
        for t in ("sessions", "signals", "metrics", "anomalies", "findings")
    }
    again = nightly(config=str(planted / "halluwatch.yaml"), date="2026-11-08")
    assert again["run_id"] != backfilled[7]["run_id"]
    after = {t: results.read_table(t, day).drop_columns(["run_id"]).to_pylist() for t in before}
    assert after == before
    runs = {p.name for p in (planted / "results" / "signals" / "date=2026-11-08").iterdir()}
    assert runs == {f"run={again['run_id']}"}


def test_compare_and_query_show_the_change(planted: Path, backfilled: list[dict]) -> None:
    config = str(planted / "halluwatch.yaml")
    out = subprocess.run(
        [halluwatch_bin(), "compare", "--config", config, "--deploy-version", "v2", "--json"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    share = next(
        m
        for m in report["metrics"]
        if m["metric"] == "action_claim_session_share" and m["agent"] == "support-bot"
    )
    assert share["before"] == {"numerator": 21, "denominator": 2100}
    assert share["after"] == {"numerator": 30, "denominator": 300}
    assert share["ci_low"] > 0 and share["p_value"] < 0.001
    assert report["findings_moved"][0]["after_sessions"]

    ranges = subprocess.run(
        [
            halluwatch_bin(),
            "compare",
            "--config",
            config,
            "--before",
            "2026-11-01..2026-11-07",
            "--after",
            "2026-11-08..2026-11-08",
        ],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        check=False,
    )
    assert ranges.returncode == 0, ranges.stderr
    assert "action_claim_session_share" in ranges.stdout

    query = subprocess.run(
        [
            halluwatch_bin(),
            "query",
            "--config",
            config,
            "--json",
            "SELECT date, count(*) AS n FROM signals WHERE kind = 'unbacked_action_claim' "
            "AND agent = 'support-bot' GROUP BY date ORDER BY date",
        ],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
        check=False,
    )
    assert query.returncode == 0, query.stderr
    rows = [json.loads(line) for line in query.stdout.splitlines()]
    assert [r["n"] for r in rows] == [3] * 7 + [30]
