"""The day's HTML report, written next to the results, and the index of every day's report.

    write_report(results, day)  ->  "<prefix>reports/date=YYYY-MM-DD/report.html" (and the index)

The report reads only what the day's run committed (its manifest, metrics, anomalies and
findings) plus the metrics of earlier stored days for the charts. It is one self-contained
file: inline CSS, charts as inline SVG built in ``alerts.report_charts``, no script, nothing
fetched. Session text is escaped by the template engine (autoescape), and a variable the
template names but the context lacks stops the render (``StrictUndefined``).

``base_url``, when given, is the public address of the results prefix (what ``<prefix>`` is
served at); links then are absolute, else relative to the report's own folder.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

import templates
from alerts.report_charts import caption, line_chart, metric_label, series, show_value, sparkline
from findings.metrics import ALL_VERSIONS, METRIC_BY_NAME, METRICS
from findings.store import ResultsStore
from sessions.errors import ConfigError

SEVERITIES = ("critical", "high", "medium", "low")
BASELINE_WINDOW_DAYS = 7  # the spike test's default window (findings.spikes.window_days)
MAX_EXAMPLES = 5
MAX_FAILURES_SHOWN = 20
_REPORT_KEY = re.compile(r"reports/date=(\d{4}-\d{2}-\d{2})/report\.html$")


def report_key(results: ResultsStore, day: date) -> str:
    return f"{results.prefix}reports/date={day.isoformat()}/report.html"


def index_key(results: ResultsStore) -> str:
    return f"{results.prefix}reports/index.html"


def report_url(day: date, base_url: str | None = None) -> str:
    """The report's link: under ``base_url`` if given, else relative to ``reports/``."""
    relative = f"date={day.isoformat()}/report.html"
    return f"{base_url.rstrip('/')}/reports/{relative}" if base_url else relative


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(templates.__file__).parent),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
    )
    env.filters["num"] = lambda n: f"{n:,}"
    return env


def write_report(
    results: ResultsStore, day: date, *, history_days: int = 30, base_url: str | None = None
) -> str:
    """Render the report of ``day``, write it and the index; returns the report's key."""
    manifest = results.read_manifest(day)
    if manifest is None:
        raise ConfigError(
            f"no committed run for {day} in {results.url}: run `halluwatch run --date {day}` first"
        )
    html = (
        environment()
        .get_template("report.html.j2")
        .render(
            title=f"halluwatch report {day.isoformat()}",
            day=day.isoformat(),
            run=_run_facts(manifest),
            headline=headline(manifest),
            charts=_charts(results, day, history_days),
            history_days=history_days,
            window_days=BASELINE_WINDOW_DAYS,
            spike_tests=dict(manifest.get("spike_tests", {})),
            anomalies=_anomalies(results, day),
            findings=[_finding(f) for f in results.read_document("findings_detail", day) or []],
            coverage=_coverage(manifest),
            index_url=f"{base_url.rstrip('/')}/reports/index.html" if base_url else "../index.html",
        )
    )
    key = report_key(results, day)
    results.store.write(key, html.encode())
    write_index(results, base_url=base_url)
    return key


def write_index(results: ResultsStore, *, base_url: str | None = None) -> str:
    """Rewrite ``<prefix>reports/index.html``: every day with a report, newest first."""
    days = sorted(
        {
            date.fromisoformat(m.group(1))
            for obj in results.store.list(f"{results.prefix}reports/")
            if (m := _REPORT_KEY.search(obj.key))
        },
        reverse=True,
    )
    rows = []
    for day in days:
        manifest = results.read_manifest(day)
        rows.append(
            {
                "day": day.isoformat(),
                "url": report_url(day, base_url),
                "headline": headline(manifest) if manifest is not None else None,
            }
        )
    html = (
        environment()
        .get_template("index.html.j2")
        .render(title="halluwatch reports", days=rows, severities=SEVERITIES)
    )
    key = index_key(results)
    results.store.write(key, html.encode())
    return key


def headline(manifest: dict[str, Any]) -> dict[str, Any]:
    """The day's counts a reader looks at first (shared by the report and the index)."""
    by_severity = Counter(f["severity"] for f in manifest["findings"])
    return {
        "sessions": manifest["sessions"],
        "tool_calls": manifest["tool_calls"],
        "replies": manifest["replies"],
        "signals": sum(manifest["signals_by_kind"].values()),
        "anomalies": len(manifest["anomalies"]),
        "findings": len(manifest["findings"]),
        "findings_by_severity": {s: by_severity[s] for s in SEVERITIES},
        "files_failed": manifest["files_failed"],
    }


def _run_facts(manifest: dict[str, Any]) -> dict[str, str]:
    return {
        "run_id": manifest["run_id"],
        "code_version": manifest["code_version"],
        "config_hash": manifest["config_hash"],
        "finished_at": manifest["finished_at"],
        "sessions_location": manifest["sessions_location"],
        "deploy_version": manifest.get("deploy_version") or "",
    }


def _charts(results: ResultsStore, day: date, history_days: int) -> list[dict[str, Any]]:
    """Per metric, one chart per agent (all versions) over the last ``history_days`` stored days."""
    stored = [d for d in results.committed_days() if d <= day][-history_days:]
    first = stored[0] if stored else day
    # Earlier days too, so the first days shown have their trailing baseline.
    reach = first - timedelta(days=BASELINE_WINDOW_DAYS)
    rows = {
        d: results.read_table("metrics", d).to_pylist()
        for d in results.committed_days()
        if reach <= d <= day
    }
    agents = sorted(
        {r["agent"] for rs in rows.values() for r in rs if r["agent_version"] == ALL_VERSIONS},
        key=lambda a: a or "",
    )
    sections = []
    for metric in METRICS:
        charts = []
        for agent in agents:
            points = [
                p for p in series(rows, metric, agent, BASELINE_WINDOW_DAYS) if p.day >= first
            ]
            if not any(p.denominator for p in points):
                continue
            name = agent or "(no agent)"
            today = next((p for p in points if p.day == day), None)
            svg = line_chart(points, first, day, metric, f"{metric.name}: {name}")
            charts.append({"agent": name, "svg": svg, **caption(metric, today)})
        sections.append(
            {
                "metric": metric.name,
                "label": metric_label(metric),
                "charts": charts,
                "empty": f"no {metric.unit} in the last {len(stored)} stored days",
            }
        )
    return sections


def _anomalies(results: ResultsStore, day: date) -> list[dict[str, Any]]:
    rows = [r for r in results.read_table("anomalies", day).to_pylist() if r["status"] == "anomaly"]
    rows.sort(key=lambda r: (_rank(r["severity"]), r["p_value"] or 0.0))
    out = []
    for r in rows:
        metric = METRIC_BY_NAME[r["metric"]]
        # Anomaly rows hold unscaled rates; metric rows (and charts) hold scaled ones.
        scaled = {k: r[k] and metric.scale * r[k] for k in ("today_value", "baseline_value")}
        out.append(
            {
                "metric": r["metric"],
                "agent": r["agent"] or "(no agent)",
                "version": "all" if r["agent_version"] == ALL_VERSIONS else r["agent_version"],
                "today": f"{show_value(metric, scaled['today_value'])} "
                f"({r['today_numerator']:,}/{r['today_denominator']:,})",
                "baseline": f"{show_value(metric, scaled['baseline_value'])} "
                f"({r['baseline_numerator']:,}/{r['baseline_denominator']:,}, "
                f"{r['baseline_days']} days)",
                "lift": "new (baseline 0)" if r["lift"] is None else f"{r['lift'] + 1:.2f}x",
                "p": "n/a" if r["p_value"] is None else f"{r['p_value']:.2g}",
                "severity": r["severity"] or "medium",
                "reason": r["reason"],
            }
        )
    return out


def _finding(raw: dict[str, Any]) -> dict[str, Any]:
    share = raw["affected_share"]
    trend = raw["trend"]
    return {
        "id": raw["id"],
        "title": raw["title"],
        "kind": raw["kind"],
        "agent": raw["agent"] or "(no agent)",
        "severity": raw["severity"],
        "affected_sessions": raw["affected_sessions"],
        "share": "share unknown" if share is None else f"{share:.1%} of the agent's sessions",
        "signals": raw["signals"],
        "versions": ", ".join(f"{v}: {n}" for v, n in sorted(raw["agent_versions"].items())),
        "first_seen": raw["first_seen"],
        "trend_svg": sparkline([int(t["sessions"]) for t in trend]),
        "trend": " · ".join(f"{t['date'][5:]}: {t['sessions']}" for t in trend[-7:]),
        "recommended_fix": raw["recommended_fix"],
        "examples": [
            {
                "session_id": ex["session_id"],
                "source": ex.get("source") or "",
                "agent_version": ex.get("agent_version") or "",
                "value": ex.get("value") or "",
                "explanation": ex.get("explanation") or "",
                "events": [
                    {
                        "index": ev["index"],
                        "kind": ev["kind"],
                        "name": ev.get("name") or "",
                        "is_error": bool(ev.get("is_error")),
                        "subagent": ev.get("subagent") or "",
                        "text": ev.get("text") or "",
                    }
                    for ev in sorted(ex.get("events", []), key=lambda ev: ev["index"])
                ],
            }
            for ex in raw["examples"][:MAX_EXAMPLES]
        ],
    }


def _coverage(manifest: dict[str, Any]) -> dict[str, Any]:
    judge = manifest.get("judge")
    cost = manifest.get("cost")
    return {
        "listed": manifest["listed"],
        "parsed": manifest["files_parsed"],
        "failed": manifest["files_failed"],
        "failed_by_reason": dict(manifest["failed_by_reason"]),
        "failures": list(manifest["failures"])[:MAX_FAILURES_SHOWN],
        "skipped_by_reason": dict(manifest.get("skipped_by_reason", {})),
        "sessions": manifest["sessions"],
        "without_tool_list": manifest["sessions_without_tool_list"],
        "not_found_probes": manifest["not_found_probes"],
        "formats": dict(manifest.get("formats", {})),
        # The judge section is the judge's own; "off" is said in words, never left blank.
        "judge": _facts(judge) if judge and judge.get("status") != "off" else [],
        "judge_off": (judge or {}).get("reason") or "no judge configured",
        "cost": _facts(cost) if cost is not None else [],
    }


def _facts(value: Any) -> list[tuple[str, str]]:
    """A manifest section as (name, value) lines; its shape belongs to whoever writes it."""
    if isinstance(value, dict):
        return [(str(k), _plain(v)) for k, v in sorted(value.items())]
    return [("total", _plain(value))]


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list):
        return ", ".join(_plain(v) for v in value)
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _rank(severity: str | None) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)
