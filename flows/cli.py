"""The `halluwatch` command.

    halluwatch scan PATH... [--config FILE] [--format F] [--judge] [--json]
    halluwatch run --config FILE [--date YYYY-MM-DD|yesterday] [--json]
    halluwatch backfill --config FILE --start D --end D [--deploy-version V] [--concurrency N]
    halluwatch compare --config FILE (--before D1..D2 --after D3..D4 | --deploy-version V) [--json]
    halluwatch query --config FILE "SQL" [--json]
    halluwatch serve --config FILE [--cron "0 3 * * *"] [--timezone ZONE]
    halluwatch judge-eval [--set FILE] [--config FILE] [--json]

Exit codes: 0 ran (findings are a normal outcome), 2 usage or config error, 3 run errors above
the allowed share, 4 alerts not delivered. Errors print one line, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from sessions.errors import ConfigError, CredentialError, HalluwatchError

EXIT_OK, EXIT_USAGE, EXIT_RUN_ERRORS, EXIT_ALERTS = 0, 2, 3, 4

# Prefect's defaults are tuned for a server; a nightly job on a small box wants these instead
# (see STACK.md): a first ephemeral start-up can take 25 s on 2 cores, and telemetry is pointless
# offline. The user's own environment always wins.
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
    "DASK_LOGGING__DISTRIBUTED": "warning",  # a Dask cluster's start-up chatter
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="halluwatch", description="Catch AI agents making things up, every night."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    scan = commands.add_parser("scan", help="analyse session files or folders directly")
    scan.add_argument("paths", nargs="+", metavar="PATH", help="session files or folders")
    scan.add_argument("--config", help="run config (YAML) for agents, tools and detectors")
    scan.add_argument("--format", default=None, help="session format (default: detect per file)")
    scan.add_argument(
        "--judge",
        action="store_true",
        help="also run the LLM judge on every session (judge.model or JUDGE_MODEL, and "
        "OPENAI_API_KEY or OPENAI_BASE_URL)",
    )
    scan.add_argument("--json", action="store_true", help="one JSON object per session per line")

    run = commands.add_parser("run", help="run the nightly job for one day")
    run.add_argument("--config", required=True, help="run config (YAML)")
    run.add_argument("--date", default="yesterday", help="YYYY-MM-DD, 'yesterday' or 'today'")
    run.add_argument("--json", action="store_true", help="print the run manifest as JSON")
    run.add_argument(
        "--dry-run", action="store_true", help="record and print what would be sent; send nothing"
    )

    back = commands.add_parser("backfill", help="re-run the nightly job over a date range")
    back.add_argument("--config", required=True, help="run config (YAML)")
    back.add_argument("--start", required=True, help="first day, YYYY-MM-DD")
    back.add_argument("--end", required=True, help="last day (inclusive), YYYY-MM-DD")
    back.add_argument("--deploy-version", help="the deployed version, recorded on each day")
    back.add_argument("--concurrency", type=int, default=2, help="days analysed at once")
    back.add_argument("--json", action="store_true", help="print the manifests as JSON")

    comp = commands.add_parser("compare", help="each rate before and after a deploy")
    comp.add_argument("--config", required=True, help="run config (YAML)")
    comp.add_argument("--before", help="date range D1..D2 before the change")
    comp.add_argument("--after", help="date range D3..D4 after the change")
    comp.add_argument("--deploy-version", help="compare this agent version with all others")
    comp.add_argument("--range", dest="days", help="with --deploy-version: days D1..D2 (all)")
    comp.add_argument("--json", action="store_true", help="print the comparison as JSON")

    alerts = commands.add_parser("alerts", help="check the alert channels")
    alerts_cmd = alerts.add_subparsers(dest="alerts_command", required=True, metavar="ACTION")
    test = alerts_cmd.add_parser("test", help="send a sample alert through every channel")
    test.add_argument("--config", required=True, help="run config (YAML)")

    query = commands.add_parser("query", help="SQL (DuckDB) over the results store")
    query.add_argument("sql", help='e.g. "SELECT agent, count(*) FROM signals GROUP BY 1"')
    query.add_argument("--config", required=True, help="run config (YAML)")
    query.add_argument("--json", action="store_true", help="one JSON object per row")

    serve = commands.add_parser(
        "serve", help="schedule the nightly job from this process (needs PREFECT_API_URL)"
    )
    serve.add_argument("--config", required=True, help="run config (YAML)")
    serve.add_argument("--cron", default="0 3 * * *", help='when to run (default "0 3 * * *")')
    serve.add_argument(
        "--timezone", help="time zone of the cron schedule (default: the config's run.timezone)"
    )
    evaluation = commands.add_parser(
        "judge-eval", help="run the LLM judge on hand-labelled claims and print agreement"
    )
    evaluation.add_argument(
        "--set",
        dest="labelled",
        default="tests/validation/claims.jsonl",
        help="labelled claims, one case per line (default: tests/validation/claims.jsonl)",
    )
    evaluation.add_argument("--config", help="run config (YAML) with the `judge:` section")
    evaluation.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        commands = {
            "scan": _scan,
            "run": _run,
            "backfill": _backfill,
            "compare": _compare,
            "query": _query,
            "serve": _serve,
            "alerts": _alerts,
            "judge-eval": _judge_eval,
        }
        return commands[args.command](args)
    except (ConfigError, CredentialError) as exc:
        print(f"halluwatch: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except HalluwatchError as exc:
        print(f"halluwatch: error: {exc}", file=sys.stderr)
        return EXIT_RUN_ERRORS
    except KeyboardInterrupt:
        print("halluwatch: interrupted", file=sys.stderr)
        return 130


def _load(path: str | None, fmt: str | None) -> Any:
    from flows.config import load_config, parse_config

    loaded = load_config(path)
    if fmt is not None:
        data = loaded.config.model_dump(mode="json", exclude_unset=True)
        data.setdefault("sessions", {})["format"] = fmt
        loaded = parse_config(
            data, base=loaded.base, source=str(path or "--format"), path=loaded.path
        )
    return loaded


def _scan(args: argparse.Namespace) -> int:
    from flows.scan import scan
    from sessions.reader import SessionReader

    loaded = _load(args.config, args.format)
    cfg = loaded.config
    reader = SessionReader(cfg.sessions, cfg.agents, base=loaded.base)
    suite = loaded.detector_suite()
    judge = _scan_judge(loaded) if args.judge else None
    out = sys.stdout
    sessions = failed = no_tools = calls = 0
    kinds: Counter[str] = Counter()
    if not args.json:
        print(
            f"{'SOURCE':48} {'SESSION':38} {'FORMAT':18} {'EVENTS':>6} {'CALLS':>5}  SIGNALS",
            file=out,
        )
    for line in scan(args.paths, reader, suite, judge.signals if judge else None):
        row = line.to_dict()
        if line.failure:
            failed += 1
        else:
            sessions += 1
            calls += row["tool_calls"]
            no_tools += row["tools_source"] is None
            kinds.update(s["kind"] for s in row["signals"])
        if args.json:
            out.write(orjson.dumps(row).decode() + "\n")
            continue
        if line.failure:
            print(f"{_short(row['source'], 48)} ERROR {row['error']}", file=out)
            continue
        summary = ", ".join(
            f"{k} x{n}" for k, n in Counter(s["kind"] for s in row["signals"]).items()
        )
        print(
            f"{_short(row['source'], 48)} {_short(row['session_id'], 38)} {row['format']:18} "
            f"{row['events']:>6} {row['tool_calls']:>5}  {summary or '-'}",
            file=out,
        )
        for signal in row["signals"]:
            print(
                f"    [{signal['severity']}] {signal['kind']} at events {signal['events']}: "
                f"{signal['explanation']}",
                file=out,
            )
    if not args.json:
        print(
            f"\n{sessions} sessions, {calls} tool calls, {failed} unreadable files; signals: "
            f"{dict(kinds) or 'none'}",
            file=out,
        )
        if no_tools:
            print(
                f"{no_tools} sessions had no tool list: unknown_tool stayed silent for them "
                "(list their tools under `agents:` in the config).",
                file=out,
            )
        if judge is not None:
            print(f"LLM evaluations: {_judge_line(judge.totals())}", file=out)
    total = sessions + failed
    return EXIT_RUN_ERRORS if total and failed / total > cfg.run.max_error_share else EXIT_OK


def _scan_judge(loaded: Any) -> Any:
    from flows.scan import ScanJudge

    return ScanJudge.build(loaded)


def _judge_line(totals: dict[str, Any]) -> str:
    """One line about the judge: off and why, or what it judged, reused and spent."""
    if totals.get("status") == "off":
        return f"off ({totals.get('reason')})"
    if totals.get("status") == "error":
        return f"FAILED ({totals.get('reason')})"
    cost = totals.get("cost_usd")
    spent = f"${cost:.4f}" if isinstance(cost, int | float) else "cost unknown (no prices set)"
    line = (
        f"{totals.get('judged_replies', 0)} replies judged with {totals.get('model')} "
        f"({totals.get('requests', 0)} requests, {totals.get('cache_hits', 0)} from the cache, "
        f"{totals.get('input_tokens', 0) + totals.get('output_tokens', 0):,} tokens, {spent})"
    )
    if totals.get("unscored"):
        line += f"; {totals['unscored']} unscored: {totals.get('unscored_reasons')}"
    if totals.get("over_budget"):
        line += "; the budget cap stopped judging"
    return line


def _judge_eval(args: argparse.Namespace) -> int:
    from detectors.judge import Judge, JudgeSettings, require_model
    from detectors.judge.calibration import CalibrationSetError, format_report, load_cases
    from flows.judge_eval import evaluate

    loaded = _load(args.config, None)
    require_model(loaded.config.judge, JudgeSettings(), "judge-eval")
    try:
        cases = load_cases(args.labelled)
    except FileNotFoundError:
        raise ConfigError(f"--set {args.labelled}: no such file") from None
    except CalibrationSetError as exc:
        raise ConfigError(str(exc)) from None
    result = evaluate(cases, Judge(loaded.config.judge, JudgeSettings()))
    if args.json:
        print(orjson.dumps(result.to_dict(), option=orjson.OPT_INDENT_2).decode())
        return EXIT_OK
    print(format_report(result.report, title=f"Judge vs human labels: {len(cases)} cases"))
    for case_id, reason in result.unscored.items():
        print(f"unscored: {case_id}: {reason}")
    print(f"\nLLM evaluations: {_judge_line(result.totals)}")
    return EXIT_OK


def _short(text: str | None, width: int) -> str:
    text = text or "-"
    return (text if len(text) <= width else "…" + text[-(width - 1) :]).ljust(width)


def _start_prefect(loaded: Any) -> None:
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    if loaded.config.run.task_runner.type == "dask":
        from flows.runners import check_api_server

        check_api_server(loaded.config.run.task_runner)  # a Dask run needs a real server
    if not os.environ.get("PREFECT_API_URL"):
        print(
            "Starting Prefect's temporary API server (about 15 s, up to 30 s on a first run; "
            "set PREFECT_API_URL to use a running server)...",
            file=sys.stderr,
            flush=True,
        )


def _run(args: argparse.Namespace) -> int:
    from flows.alerting import build_channels
    from flows.dates import resolve_date

    loaded = _load(args.config, None)  # a bad config or date stops here, before Prefect starts
    day = resolve_date(args.date, loaded.config.run.timezone)
    build_channels(loaded)  # and so does a missing channel secret
    _start_prefect(loaded)
    began = time.monotonic()
    from alerts.dispatch import AlertsNotDelivered
    from findings.canaries import CanaryMissed
    from flows import progress
    from flows.nightly import nightly

    progress.install()
    try:
        manifest = nightly(config=str(loaded.path), date=day.isoformat(), dry_run=args.dry_run)
    except AlertsNotDelivered as exc:
        manifest = exc.manifest
        print(f"halluwatch: error: {exc}", file=sys.stderr)
    except CanaryMissed as exc:
        # The day is committed and alerted, but its checks cannot be trusted: fail the night.
        print(f"halluwatch: error: {exc}", file=sys.stderr)
        return EXIT_RUN_ERRORS
    if args.json:
        print(orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode())
    else:
        _print_summary(manifest, time.monotonic() - began)
    files = manifest["files"]
    share = manifest["files_failed"] / files if files else 0.0
    if share > loaded.config.run.max_error_share:
        return EXIT_RUN_ERRORS
    return EXIT_ALERTS if manifest.get("alerts", {}).get("failed") else EXIT_OK


def _alerts(args: argparse.Namespace) -> int:
    from datetime import date

    from flows.alerting import send_test

    loaded = _load(args.config, None)
    outcome = send_test(loaded, date.today())
    for name, status in outcome.items():
        print(f"{name}: {status}")
    return EXIT_ALERTS if any(s != "sent" for s in outcome.values()) else EXIT_OK


def _backfill(args: argparse.Namespace) -> int:
    from flows.dates import resolve_date

    loaded = _load(args.config, None)
    tz = loaded.config.run.timezone
    start, end = resolve_date(args.start, tz), resolve_date(args.end, tz)
    if end < start:
        raise ConfigError(f"--end {end} is before --start {start}")
    if args.concurrency < 1:
        raise ConfigError(f"--concurrency must be 1 or more, not {args.concurrency}")
    _start_prefect(loaded)
    began = time.monotonic()
    from flows import progress
    from flows.nightly import backfill

    progress.install(interactive=False)
    manifests = backfill(
        config=str(loaded.path),
        start=start.isoformat(),
        end=end.isoformat(),
        deploy_version=args.deploy_version,
        concurrency=args.concurrency,
    )
    if args.json:
        print(orjson.dumps(manifests, option=orjson.OPT_INDENT_2).decode())
    else:
        for m in manifests:
            _print_summary(m, time.monotonic() - began)
    failed = sum(m["files_failed"] for m in manifests)
    files = sum(m["files"] for m in manifests)
    share = failed / files if files else 0.0
    return EXIT_RUN_ERRORS if share > loaded.config.run.max_error_share else EXIT_OK


def _date_range(value: str, flag: str) -> list[Any]:
    from datetime import date, timedelta

    first, sep, last = value.partition("..")
    try:
        start = date.fromisoformat(first)
        end = date.fromisoformat(last) if sep else start
    except ValueError:
        raise ConfigError(f"{flag} {value!r} is not a range YYYY-MM-DD..YYYY-MM-DD") from None
    if end < start:
        raise ConfigError(f"{flag} {value!r} ends before it starts")
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def _compare(args: argparse.Namespace) -> int:
    from findings.compare import Side, comparison_report
    from flows.context import run_parts

    loaded = _load(args.config, None)
    results = run_parts(loaded).results
    if args.deploy_version:
        if args.before or args.after:
            raise ConfigError("use either --before/--after or --deploy-version, not both")
        days = _date_range(args.days, "--range") if args.days else results.committed_days()
        before = Side(
            f"versions other than {args.deploy_version}",
            tuple(days),
            exclude_version=args.deploy_version,
        )
        after = Side(f"version {args.deploy_version}", tuple(days), version=args.deploy_version)
    elif args.before and args.after:
        before = Side(args.before, tuple(_date_range(args.before, "--before")))
        after = Side(args.after, tuple(_date_range(args.after, "--after")))
    else:
        raise ConfigError("give --before D1..D2 and --after D3..D4, or --deploy-version V")
    report, name = comparison_report(results, before, after)
    changes, moved, missing = report["metrics"], report["findings_moved"], report["missing_days"]
    if args.json:
        print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return EXIT_OK
    print(f"before: {before.label}    after: {after.label}")
    if missing:
        print(f"  no results for {len(missing)} day(s): {', '.join(missing)}")
    print(
        f"{'agent':16} {'metric':36} {'before':>9} {'after':>9} {'change':>9} "
        f"{'95% CI':>21} {'p':>8}"
    )
    for c in changes:
        flag = " *" if c["p_value"] < 0.05 else ""
        print(
            f"{_short(c['agent'], 16)} {c['metric']:36} {c['before_value']:>9.4f} "
            f"{c['after_value']:>9.4f} {c['difference']:>+9.4f} "
            f"[{c['ci_low']:>+8.4f}, {c['ci_high']:>+8.4f}] {c['p_value']:>8.2g}{flag}"
        )
    for m in moved:
        print(f"\n{m['title']} ({m['id']}): {m['before']} -> {m['after']} sessions")
        print(f"  before: {', '.join(m['before_sessions']) or '-'}")
        print(f"  after:  {', '.join(m['after_sessions']) or '-'}")
    print(f"\nstored: {results.url}{name}")
    return EXIT_OK


def _query(args: argparse.Namespace) -> int:
    from findings.query import run_query
    from flows.context import run_parts

    loaded = _load(args.config, None)
    columns, rows = run_query(run_parts(loaded).results, args.sql)
    if args.json:
        for row in rows:
            print(orjson.dumps(dict(zip(columns, row, strict=True)), default=str).decode())
        return EXIT_OK
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for r in cells:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))
    print(f"({len(rows)} rows)")
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    loaded = _load(args.config, None)  # a bad config stops here, before Prefect is imported
    from flows.serve import check_timezone

    check_timezone(args.timezone or loaded.config.run.timezone)
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    from flows.serve import serve

    serve(loaded, cron=args.cron, timezone=args.timezone)
    return EXIT_OK


def _print_summary(m: dict[str, Any], seconds: float) -> None:
    print(
        f"halluwatch {m['date']}: {m['files']} files under {m['sessions_location']}/{m['prefix']} "
        f"({m['files_parsed']} parsed, {m['files_failed']} unreadable, "
        f"{sum(m['skipped_by_reason'].values())} skipped) in {seconds:.1f} s"
    )
    for reason, count in m["failed_by_reason"].items():
        print(f"  unreadable: {count} x {reason}")
    print(f"  {m['sessions']} sessions, {m['tool_calls']} tool calls, {m['replies']} replies")
    if m["sessions_without_tool_list"]:
        print(
            f"  {m['sessions_without_tool_list']} sessions had no tool list: unknown_tool stayed "
            "silent for them"
        )
    for kind, count in m["signals_by_kind"].items() or [("signals", 0)]:
        print(f"  {kind}: {count}")
    if m.get("judge"):
        print(f"  LLM evaluations: {_judge_line(m['judge'])}")
    for a in m.get("anomalies", []):
        print(
            f"  ANOMALY [{a['severity']}] {a['metric']} {a['agent']} {a['agent_version']}: "
            f"{a['reason']}"
        )
    for f in m.get("findings", [])[:10]:
        count = f["affected_sessions"]
        print(
            f"  finding [{f['severity']}] {f['title']} ({count} session{'' if count == 1 else 's'})"
        )
    print(f"  results: {m['results_location']}{m['manifest_key']}")
    if m.get("report_key"):
        print(f"  report:  {m['results_location']}{m['report_key']}")
    if m.get("alerts"):
        a = m["alerts"]
        what = ", ".join(f"{n} {s}" for s, n in a["deliveries"].items()) or "nothing to send"
        print(f"  alerts:  {a['alerts']} ({what}){' [dry run]' if a['dry_run'] else ''}")


if __name__ == "__main__":
    sys.exit(main())
