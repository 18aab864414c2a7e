"""The `halluwatch` command.

    halluwatch scan PATH... [--config FILE] [--format F] [--json]
    halluwatch run --config FILE [--date YYYY-MM-DD|yesterday] [--json]

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
    scan.add_argument("--json", action="store_true", help="one JSON object per session per line")

    run = commands.add_parser("run", help="run the nightly job for one day")
    run.add_argument("--config", required=True, help="run config (YAML)")
    run.add_argument("--date", default="yesterday", help="YYYY-MM-DD, 'yesterday' or 'today'")
    run.add_argument("--json", action="store_true", help="print the run manifest as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "scan":
            return _scan(args)
        return _run(args)
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
    out = sys.stdout
    sessions = failed = no_tools = calls = 0
    kinds: Counter[str] = Counter()
    if not args.json:
        print(
            f"{'SOURCE':48} {'SESSION':38} {'FORMAT':18} {'EVENTS':>6} {'CALLS':>5}  SIGNALS",
            file=out,
        )
    for line in scan(args.paths, reader, suite):
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
    total = sessions + failed
    return EXIT_RUN_ERRORS if total and failed / total > cfg.run.max_error_share else EXIT_OK


def _short(text: str | None, width: int) -> str:
    text = text or "-"
    return (text if len(text) <= width else "…" + text[-(width - 1) :]).ljust(width)


def _run(args: argparse.Namespace) -> int:
    from flows.dates import resolve_date

    loaded = _load(args.config, None)  # a bad config or date stops here, before Prefect starts
    day = resolve_date(args.date, loaded.config.run.timezone)
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    if not os.environ.get("PREFECT_API_URL"):
        print(
            "Starting Prefect's temporary API server (about 15 s, up to 30 s on a first run; "
            "set PREFECT_API_URL to use a running server)...",
            file=sys.stderr,
            flush=True,
        )
    began = time.monotonic()
    from flows import progress
    from flows.nightly import nightly

    progress.install()
    manifest = nightly(config=str(loaded.path), date=day.isoformat())
    if args.json:
        print(orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode())
    else:
        _print_summary(manifest, time.monotonic() - began)
    files = manifest["files"]
    share = manifest["files_failed"] / files if files else 0.0
    return EXIT_RUN_ERRORS if share > loaded.config.run.max_error_share else EXIT_OK


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
    print(f"  results: {m['results_location']}{m['manifest_key']}")


if __name__ == "__main__":
    sys.exit(main())
