"""Alerts from the nightly flow to real protocol peers on loopback: once, never lost, escaped."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "alerts"))
from loopback import Reply, peer
from test_webhook_channel import SECRET, verify

from findings.store import ResultsStore
from sessions.storage import LocalStore

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.prefect


def _setup(tmp_path: Path, hook_url: str, slack_url: str | None = None) -> Path:
    shutil.copytree(REPO / "examples" / "bucket", tmp_path / "bucket")
    text = (REPO / "examples" / "halluwatch.yaml").read_text()
    alerts = f"""
alerts:
  channels:
    team-hook:
      {{type: webhook, url: "{hook_url}", secret_env: HW_TEST_HOOK_SECRET, max_attempts: 1}}
"""
    if slack_url:
        alerts += "    team-slack: {type: slack, webhook_url_env: HW_TEST_SLACK_URL}\n"
    (tmp_path / "halluwatch.yaml").write_text(text + alerts)
    return tmp_path / "halluwatch.yaml"


def test_webhook_gets_each_alert_once_even_when_the_run_is_repeated(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    monkeypatch.setenv("HW_TEST_HOOK_SECRET", SECRET)
    with peer({"/hook": Reply(204, b"")}) as server:
        config = _setup(tmp_path, server.base_url + "/hook")
        first = nightly(config=str(config), date="2026-11-29")
        again = nightly(config=str(config), date="2026-11-29")
    assert first["alerts"]["deliveries"] == {"sent": first["alerts"]["alerts"]}
    assert first["alerts"]["alerts"] >= 4 and not first["alerts"]["failed"]
    assert again["alerts"]["deliveries"] == {"skipped_duplicate": again["alerts"]["alerts"]}
    ids = [r.headers["webhook-id"] for r in server.received]
    assert len(ids) == len(set(ids)) == first["alerts"]["alerts"]
    assert all(verify(r, SECRET) for r in server.received)
    titles = {a["title"] for r in server.received for a in r.json()["alerts"]}
    assert "support-bot still calls `search_docs` (renamed `docs_search`?)" in titles


def test_a_channel_that_is_down_keeps_its_alerts_for_the_next_run(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    monkeypatch.setenv("HW_TEST_HOOK_SECRET", SECRET)
    from alerts.dispatch import AlertsNotDelivered

    with peer({"/hook": Reply(503, b"down")}) as down:
        config = _setup(tmp_path, down.base_url + "/hook")
        with pytest.raises(AlertsNotDelivered, match="wait in the outbox") as info:
            nightly(config=str(config), date="2026-11-28")  # the flow run fails; the CLI exits 4
        port = down.server_address[1]
    failed = info.value.manifest
    assert failed["alerts"]["failed"] is True
    assert failed["sessions"] == 31  # everything but the delivery succeeded and was committed
    results = ResultsStore(LocalStore(tmp_path / "results"), "")
    outbox = [o.key for o in results.store.list("alerts/outbox/")]
    assert len(outbox) == failed["alerts"]["alerts"] > 0
    waiting = {json.loads(results.store.read(k))["alert"]["key"] for k in outbox}

    with peer({"/hook": Reply(204, b"")}) as up:
        config.write_text(config.read_text().replace(f":{port}/", f":{up.server_address[1]}/"))
        next_day = nightly(config=str(config), date="2026-11-29")
    assert not next_day["alerts"]["failed"]
    delivered = {a["key"] for r in up.received for a in r.json()["alerts"]}
    assert waiting <= delivered  # yesterday's alerts arrived with today's
    assert [o.key for o in results.store.list("alerts/outbox/")] == []


def test_slack_alert_pings_no_one_and_shows_no_address(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.nightly import nightly

    with peer({"/slack": Reply(200, b"ok"), "/hook": Reply(204, b"")}) as server:
        monkeypatch.setenv("HW_TEST_HOOK_SECRET", SECRET)
        monkeypatch.setenv("HW_TEST_SLACK_URL", server.base_url + "/slack")
        config = _setup(tmp_path, server.base_url + "/hook", slack_url=True)
        session = {
            "id": "sneaky-1",
            "metadata": {"agent": "support-bot", "app_version": "v2.4"},
            "tools": [{"type": "function", "function": {"name": "refund_order"}}],
            "messages": [
                {"role": "user", "content": "Refund order 5521 please."},
                {
                    "role": "assistant",
                    "content": "I have refunded your order <!channel> "
                    "<@U024BE7LH>, write to bob.smith@example.com for a receipt.",
                },
            ],
        }
        day = tmp_path / "bucket" / "sessions" / "2026" / "11" / "29" / "support-bot"
        (day / "sneaky.json").write_text(json.dumps(session))
        nightly(config=str(config), date="2026-11-29")
    slack = [r.body.decode() for r in server.received if r.path == "/slack"]
    assert slack and any("refunded your order" in body for body in slack)
    for body in slack:
        assert "<!channel>" not in body and "<@U024BE7LH>" not in body
        assert "bob.smith@example.com" not in body
    assert any("&lt;!channel&gt;" in body for body in slack)
