"""The day's HTML report, rendered from results the real pipeline wrote, read as HTML and in a
real browser (headless Chromium)."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, date, datetime
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest
from planted_days import CONFIG, _session, write_days

from alerts.report import environment, write_report
from findings.batch import BatchPartial, run_batch
from findings.store import ResultsStore
from flows.config import load_config
from flows.context import run_parts
from flows.nightly import AnalysedDay, commit_day
from sessions.errors import ConfigError
from sessions.grouping import batches, select
from sessions.storage import LocalStore, partition_prefix

FIRST, DAY = date(2026, 11, 1), date(2026, 11, 8)
SCRIPT = "<script>alert(1)</script>"
CHROMIUM = Path("/usr/bin/chromium")


def _run_day(config: Path, day: date) -> dict:
    """The nightly flow's steps for one day, without Prefect: list, batches, evaluate, commit."""
    loaded = load_config(config)
    parts = run_parts(loaded)
    prefix = partition_prefix(loaded.config.sessions.layout, day)
    selection = select(parts.sessions.list(prefix), loaded.config.sessions.include)
    total = BatchPartial()
    planned = list(batches(selection.units, 64 * 1024 * 1024))
    for n, batch in enumerate(planned):
        units = [[(o.key, o.size) for o in unit.objects] for unit in batch]
        total += run_batch(
            store=parts.sessions,
            results=parts.results,
            reader=parts.reader,
            suite=parts.suite,
            day=day,
            run_id=f"run-{day}",
            batch_no=n,
            units=units,
        )
    skipped = {reason: len(keys) for reason, keys in sorted(selection.skipped.items())}
    listed = sum(len(u.objects) for u in selection.units) + sum(skipped.values())
    analysed = AnalysedDay(
        day, f"run-{day}", datetime.now(UTC), prefix, listed, skipped, len(planned), total, {}
    )
    return commit_day(loaded, analysed)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> ResultsStore:
    """Eight days with a planted rise on day eight, and one reply that carries a script tag."""
    root = tmp_path_factory.mktemp("report")
    days = write_days(root / "bucket", FIRST)
    hostile = _session("web-bot", "w1", "web-1", unbacked=True)
    hostile["messages"][-1]["content"] = f"I have refunded your order. {SCRIPT}"
    folder = root / "bucket" / "sessions" / f"{DAY:%Y/%m/%d}"
    (folder / "web.jsonl").write_text(json.dumps(hostile) + "\n")
    (folder / "broken.jsonl").write_text('{"id": "cut-off", "messages": [')
    (folder / "README.txt").write_text("not a session")
    (root / "halluwatch.yaml").write_text(CONFIG)
    for day in days:
        _run_day(root / "halluwatch.yaml", day)
    return ResultsStore(LocalStore(root / "results"), "")


@pytest.fixture(scope="module")
def report(results: ResultsStore) -> tuple[str, str]:
    key = write_report(results, DAY)
    return key, results.store.read(key).decode()


class _Page(HTMLParser):
    """What a reader sees: the title, table rows by their class, h3 headings, each SVG's parts."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: dict[str, list[list[str]]] = {}
        self.headings: list[str] = []
        self.title = ""
        self.svgs: list[list[tuple[str, dict[str, str | None]]]] = []
        self._row: list[str] | None = None
        self._row_class = ""
        self._stack: list[str] = []
        self._text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "svg":
            self.svgs.append([(tag, attr)])
        elif self.svgs and "svg" in self._stack:
            self.svgs[-1].append((tag, attr))
        if tag == "tr" and attr.get("class"):
            self._row, self._row_class = [], str(attr["class"])
        if tag in ("td", "h3", "title"):
            self._text = ""
        self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack.pop() != tag:
                pass
        text = " ".join(self._text.split())
        if tag == "td" and self._row is not None:
            self._row.append(text)
        elif tag == "tr" and self._row is not None:
            self.rows.setdefault(self._row_class, []).append(self._row)
            self._row = None
        elif tag == "h3":
            self.headings.append(text)
        elif tag == "title" and "svg" not in self._stack and not self.title:
            self.title = text

    def handle_data(self, data: str) -> None:
        self._text += data


def _circles(html: str, label: str) -> list[dict[str, str | None]]:
    """The data points of the chart with ``aria-label`` ``label``."""
    start = html.index(f'aria-label="{label}"')
    svg = html[html.rindex("<svg", 0, start) : html.index("</svg>", start)]
    return [attrs for tag, attrs in _Page(svg + "</svg>").svgs[0] if tag == "circle"]


def test_report_is_written_beside_the_results(
    results: ResultsStore, report: tuple[str, str]
) -> None:
    key, html = report
    assert key == "reports/date=2026-11-08/report.html"
    page = _Page(html)
    assert page.title == "halluwatch report 2026-11-08"
    index = results.store.read("reports/index.html").decode()
    assert 'href="date=2026-11-08/report.html"' in index
    # Self-contained: no script, no stylesheet or image fetched.
    assert "<script" not in html and "<link" not in html and " src=" not in html


def test_anomaly_row_names_the_planted_rise(report: tuple[str, str]) -> None:
    rows = _Page(report[1]).rows["anomaly"]
    row = next(r for r in rows if r[:3] == ["action_claim_session_share", "support-bot", "all"])
    assert row[3] == "10.0% (30/300)"
    assert row[4] == "1.0% (21/2,100, 7 days)"
    assert row[5] == "10.00x"
    assert float(row[6]) < 0.01
    assert row[7] in ("high", "critical")
    assert "ops-bot" not in {r[1] for r in rows}


def test_findings_show_severity_share_fix_and_exact_events(
    results: ResultsStore, report: tuple[str, str]
) -> None:
    html = report[1]
    manifest = results.read_manifest(DAY)
    assert manifest is not None
    planted = next(
        f
        for f in manifest["findings"]
        if f["agent"] == "support-bot" and f["kind"] == "unbacked_action_claim"
    )
    page = _Page(html)
    assert f"{planted['severity']} {planted['title']}" in page.headings
    article = html[html.index(f'id="finding-{planted["id"]}"') :]
    article = article[: article.index("</article>")]
    assert "30 sessions" in article and "10.0% of the agent&#39;s sessions" in article
    assert "first seen <b>2026-11-01</b>" in article
    assert "Recommended fix:" in article
    assert article.count('class="example"') == 5
    assert "I have refunded your order." in article and "assistant_message" in article


def test_session_text_is_escaped(report: tuple[str, str]) -> None:
    html = report[1]
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_charts_draw_each_day_with_baseline_band_and_today_marked(
    report: tuple[str, str],
) -> None:
    html = report[1]
    points = _circles(html, "action_claim_session_share: support-bot")
    assert [p["data-day"] for p in points] == [f"2026-11-0{n}" for n in range(1, 9)]
    assert [p["class"] for p in points][-1] == "point today"
    assert float(points[-1]["data-value"] or 0) == pytest.approx(0.1)
    assert float(points[0]["data-value"] or 0) == pytest.approx(0.01)
    chart = html[html.index('aria-label="action_claim_session_share: support-bot"') :]
    chart = chart[: chart.index("</figure>")]
    assert '<polygon class="band"' in chart and '<polyline class="baseline"' in chart
    # Day eight sits far above the band of days one to seven (baseline 1.0%).
    assert "baseline 1.0% · band 0.0% to 2.2%" in chart


def test_coverage_counts_and_judge_off(report: tuple[str, str]) -> None:
    html = report[1]
    assert "<dt>files listed</dt><dd>5</dd>" in html
    assert "<dt>files parsed</dt><dd>3</dd>" in html
    assert "<dt>files unreadable</dt><dd>1 (1 invalid_json)</dd>" in html
    assert "<dt>files skipped</dt><dd>1 not_included</dd>" in html
    assert "<dt>sessions</dt><dd>601 (601 openai_chat)</dd>" in html
    assert "<td>sessions/2026/11/08/broken.jsonl</td><td>invalid_json</td>" in html
    assert "<dt>LLM evaluations</dt><dd>off (no judge configured)</dd>" in html
    assert "<dt>cost</dt>" not in html


def test_judge_and_cost_sections_are_shown_when_the_manifest_has_them(
    results: ResultsStore, tmp_path: Path
) -> None:
    copy = ResultsStore(LocalStore(tmp_path), "nightly/")
    manifest = results.read_manifest(DAY)
    assert manifest is not None
    for table in ("metrics", "anomalies"):
        copy.write_part(
            table, DAY, manifest["run_id"], 0, results.read_table(table, DAY).to_pylist()
        )
    copy.write_document("findings_detail", DAY, manifest["run_id"], [])
    judge = {"model": "gpt-4o-mini", "judged_replies": 120, "unscored": 2}
    copy.write_manifest(DAY, {**manifest, "judge": judge, "cost": {"usd": 0.42}})
    key = write_report(copy, DAY, base_url="https://reports.example.com/halluwatch/")
    html = copy.store.read(key).decode()
    assert key == "nightly/reports/date=2026-11-08/report.html"
    assert "judged_replies: 120; model: gpt-4o-mini; unscored: 2" in html
    assert "<dt>cost</dt><dd>usd: 0.42</dd>" in html
    assert 'href="https://reports.example.com/halluwatch/reports/index.html"' in html
    assert "No findings today." in html
    index = copy.store.read("nightly/reports/index.html").decode()
    assert "https://reports.example.com/halluwatch/reports/date=2026-11-08/report.html" in index


def test_index_lists_days_newest_first_with_counts(results: ResultsStore) -> None:
    write_report(results, date(2026, 11, 7))
    write_report(results, DAY)
    index = _Page(results.store.read("reports/index.html").decode())
    days = index.rows["day"]
    assert [d[0] for d in days[:2]] == ["2026-11-08", "2026-11-07"]
    manifest = results.read_manifest(DAY)
    assert manifest is not None
    assert days[0][1] == f"{manifest['sessions']:,}"
    assert days[0][3] == str(len(manifest["anomalies"]))
    assert days[1][3] == "0"


def test_a_day_without_results_says_so(results: ResultsStore) -> None:
    with pytest.raises(ConfigError, match=r"no committed run for 2026-12-01 .*halluwatch run"):
        write_report(results, date(2026, 12, 1))


def test_a_missing_template_variable_stops_the_render() -> None:
    template = environment().get_template("report.html.j2")
    with pytest.raises(jinja2.UndefinedError, match="'run' is undefined"):
        template.render(title="t", day="2026-11-08")


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (CI installs it: .ci/run)"
)
def test_report_in_a_real_browser(
    report: tuple[str, str], results: ResultsStore, tmp_path: Path
) -> None:
    assert isinstance(results.store, LocalStore)
    path = results.store.root / report[0]
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    url = path.resolve().as_uri()
    env = {**os.environ, "HOME": str(tmp_path)}
    dom = subprocess.run(
        [str(CHROMIUM), *flags, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    ).stdout
    page = _Page(dom)
    assert page.title == "halluwatch report 2026-11-08"
    assert any(
        r[:3] == ["action_claim_session_share", "support-bot", "all"] for r in page.rows["anomaly"]
    )
    manifest = results.read_manifest(DAY)
    assert manifest is not None
    assert {f"{f['severity']} {f['title']}" for f in manifest["findings"]} <= set(page.headings)
    # The hostile reply is text on the page, not an element the browser ran.
    assert "<script" not in dom and "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    charts = [s for s in page.svgs if s[0][1].get("class") == "chart"]
    # Five metrics with data x three agents; nothing was judged, so that metric has no chart.
    assert len(charts) == 15
    assert all(any(tag == "circle" for tag, _ in chart) for chart in charts)
    assert "no judged replies in the last 8 stored days" in dom
    points = _circles(dom, "action_claim_session_share: support-bot")
    assert len(points) == 8 and points[-1]["data-day"] == "2026-11-08"

    shot = tmp_path / "report.png"
    subprocess.run(
        [str(CHROMIUM), *flags, "--window-size=1280,1600", f"--screenshot={shot}", url],
        capture_output=True,
        timeout=120,
        env=env,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
