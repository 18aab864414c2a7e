"""End-to-end code-check throughput on a large generated day, next to a plain orjson parse.

    python bench/code_checks.py [--sessions 20000] [--mix team|corpus] [--corpus DIR] [--json]

The corpus is first timed once as it is: every text new, so per-text caches are cold. Then the
day is generated from the real corpus (tau-bench trajectories and Claude Code transcripts,
sub-agent files included) with every id varied per copy, so no two sessions share ids, the way a
real day looks. Files are generated one unit at a time and dropped after use, so generation never
holds the day; only the timed parts are timed. Reports sessions/s and MB/s for
(a) `orjson.loads` of the same bytes and (b) read + all code checks (format detection, parsing,
sub-agent linking, every registered detector), their ratio, and the process's peak memory after
2,000 sessions and at the end, to show memory does not grow with the day (tracemalloc is not used:
it slows allocation-heavy code far more than C parsing and would distort the ratio). The same
figures per family of session (tau-bench, Claude Code) show how much the mix weighs (see `day`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import resource
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from detectors import registered  # noqa: E402
from detectors.runner import DetectorSuite  # noqa: E402
from sessions.config import AgentConfig, SessionsConfig  # noqa: E402
from sessions.reader import SessionReader  # noqa: E402

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TOOLU = re.compile(rb"(toolu_|call_|msg_|req_)([A-Za-z0-9]{6})")
# A message's text (a reply, a prompt, a tool output), but an agent's system prompt, which its
# sessions share. Each copy's texts get a tail of blanks of its own (see `vary`).
_TEXT = re.compile(
    rb'("(?:text|content)":"(?<!"role":"system","content":")[^"\\]*+(?:\\.[^"\\]*+)*+)"'
)

Unit = list[tuple[str, bytes]]


def templates(corpus: Path) -> list[Unit]:
    """Units of the corpus: each tau trajectory alone, each Claude Code session with its files."""
    units: list[Unit] = []
    tau = corpus / "openai_chat" / "tau_airline" / "gpt-4o-airline.dev.json"
    for trajectory in json.loads(tau.read_text()):
        units.append([("tau.json", orjson.dumps({"id": "x", "messages": trajectory["traj"]}))])
    spotter = corpus / "claude_code" / "spotter"
    for main in sorted(spotter.glob("*-*-*-*-*.jsonl")):
        if "__subagents__" in main.name:
            continue
        files = [main, *sorted(spotter.glob(f"{main.stem}__subagents__*.jsonl"))]
        units.append([(p.name, p.read_bytes()) for p in files])
    for path in sorted((corpus / "claude_code" / "reliability").glob("*__transcript.jsonl")):
        units.append([(path.name, path.read_bytes())])
    return units


def vary(unit: Unit, n: int) -> Unit:
    """A copy of ``unit`` whose ids are all new (same length, so sizes stay comparable) and whose
    texts are its own: each ends in 16 blanks, spaces and tabs spelling ``n`` in binary. A real
    day repeats few texts, so nothing may gain from copies sharing them (a cache keyed by text
    would); trailing blanks change no check's outcome (a JSON output still parses)."""
    tag = f"{n:012x}".encode()
    blanks = b"".join(b"\\t" if bit == "1" else b" " for bit in f"{n % 65536:016b}")
    out = []
    for name, raw in unit:
        raw = _UUID.sub(lambda m: m.group(0)[:24] + tag, raw)
        raw = _TOOLU.sub(lambda m: m.group(1) + tag[-6:], raw)
        raw = _TEXT.sub(lambda m: m.group(1) + blanks + b'"', raw)
        out.append((name.replace(".jsonl", f"-{n}.jsonl"), raw))
    return out


MIXES = ("team", "corpus")


def day(units: list[Unit], sessions: int, mix: str = "team") -> Iterator[Unit]:
    """Units until ``sessions`` sessions, cycling the templates, ids varied per copy.

    ``team``: every tau-bench trajectory once a cycle, the Claude Code sessions repeated to pair
    with them (100 tau-bench units to 86 Claude Code units a cycle: 54% of the sessions, 2% of the
    bytes), as a team running both kinds of agent in like numbers might. ``corpus``: every template
    once a cycle, as the corpus holds them (10 tau-bench units to 1 Claude Code unit: 14% of the
    bytes are tau-bench). Tau-bench sessions are small and hold many replies, so the more of them,
    the more checking per byte.
    """
    tau = [u for u in units if u[0][0] == "tau.json"]
    claude = [u for u in units if u[0][0] != "tau.json"]
    if mix == "corpus":  # each template once, the Claude Code ones spread evenly
        order = list(tau)
        for k, unit in enumerate(claude):
            order.insert((k + 1) * len(tau) // len(claude) + k, unit)
    else:
        order = [*tau[:8], claude[0], *tau[8:16], claude[1 % len(claude)]] + [
            x for pair in zip(tau[16:], itertools.cycle(claude)) for x in pair
        ]
    for n, unit in enumerate(itertools.islice(itertools.cycle(order), sessions)):
        yield vary(unit, n)


def measure(units: list[Unit], sessions: int, mix: str = "team") -> dict[str, Any]:
    """Time the corpus once as it is (every text new, caches cold), then the generated day."""
    reader = SessionReader(
        SessionsConfig(default_agent="tau"),
        {"tau": AgentConfig(tools_file=str(units_tools()))},
        base=REPO,
    )
    suite = DetectorSuite()
    cold = _timed(units, reader, suite)
    figures = _timed(day(units, sessions, mix), reader, suite, rss_mark=2000)
    figures["mix"] = mix
    figures["cold_checks_share_of_parse"] = cold["checks_share_of_parse"]
    figures["cold_sessions"] = cold["sessions"]
    figures["cold_mb"] = cold["mb"]
    return figures


def _family(unit: Unit) -> str:
    return "tau-bench" if unit[0][0] == "tau.json" else "Claude Code"


def _timed(
    units: Iterable[Unit], reader: SessionReader, suite: DetectorSuite, rss_mark: int = 0
) -> dict[str, Any]:
    parse_s = checks_s = 0.0
    size = produced = tool_calls = signals = 0
    rss_at_2000 = 0
    # Per family of session: [sessions, bytes, parse seconds, checks seconds].
    families: dict[str, list[float]] = {}
    for unit in units:
        unit_size = sum(len(raw) for _, raw in unit)
        size += unit_size
        began = time.perf_counter()
        for name, raw in unit:
            if name.endswith(".jsonl"):
                for line in raw.splitlines():
                    if line.strip():
                        orjson.loads(line)
            else:
                orjson.loads(raw)
        parsed = time.perf_counter() - began
        began = time.perf_counter()
        result = reader.read_unit(unit)
        for session in result.sessions:
            signals += len(suite.run(session))
        checked = time.perf_counter() - began
        parse_s, checks_s = parse_s + parsed, checks_s + checked
        tool_calls += sum(len(session.tool_calls()) for session in result.sessions)  # reported
        produced += len(result.sessions)
        family = families.setdefault(_family(unit), [0, 0, 0.0, 0.0])
        family[0] += len(result.sessions)
        family[1] += unit_size
        family[2] += parsed
        family[3] += checked
        if rss_mark and produced >= rss_mark and not rss_at_2000:
            rss_at_2000 = _max_rss()
    mb = size / 1e6
    return {
        "sessions": produced,
        "tool_calls": tool_calls,
        "signals": signals,
        "mb": mb,
        "orjson_sessions_per_s": produced / parse_s,
        "orjson_mb_per_s": mb / parse_s,
        "checks_sessions_per_s": produced / checks_s,
        "checks_mb_per_s": mb / checks_s,
        "checks_share_of_parse": parse_s / checks_s,
        "max_rss_mb_at_2000": (rss_at_2000 or _max_rss()) / 1e6,
        "max_rss_mb_at_end": _max_rss() / 1e6,
        "by_family": {
            name: {
                "sessions": n,
                "share_of_bytes": b / size,
                "checks_sessions_per_s": n / c,
                "checks_share_of_parse": p / c,
            }
            for name, (n, b, p, c) in sorted(families.items())
        },
    }


def _max_rss() -> int:
    """Peak resident memory of this process so far, in bytes (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


_CORPUS: Path | None = None


def units_tools() -> Path:
    assert _CORPUS is not None
    return _CORPUS / "openai_chat" / "tau_airline" / "tools.json"


def build() -> str:
    """Which build is measured: how many of the modules setup.py compiles are extensions."""
    compiled = [
        m for name, m in sys.modules.items() if name.startswith(("sessions.", "detectors."))
    ]
    native = sum(1 for m in compiled if str(getattr(m, "__file__", "")).endswith(".so"))
    if not native:
        return "pure Python (HALLUWATCH_COMPILE=1 compiles the hot modules: make bench-compiled)"
    return f"{native} modules compiled by mypyc (setup.py)"


def main() -> int:
    global _CORPUS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument(
        "--mix", choices=MIXES, default="team", help="how the day mixes the kinds of session"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (args.corpus / "openai_chat").is_dir():
        print(f"corpus not found at {args.corpus}: pass --corpus", file=sys.stderr)
        return 1
    _CORPUS = args.corpus.resolve()
    figures = measure(templates(_CORPUS), args.sessions, args.mix)
    figures["detectors"] = ", ".join(sorted(registered()))
    figures["build"] = build()
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    f = figures
    print(
        f"{f['sessions']:,} sessions ({f['mix']} mix), {f['tool_calls']:,} tool calls, "
        f"{f['mb']:.1f} MB, "
        f"{f['signals']:,} signals; detectors: {f['detectors']}"
    )
    print(f"build: {f['build']}")
    print(f"{'':28}{'sessions/s':>12}{'MB/s':>9}")
    for label, key in (
        ("orjson.loads (raw parse)", "orjson"),
        ("read + all code checks", "checks"),
    ):
        print(f"{label:28}{f[key + '_sessions_per_s']:>12,.0f}{f[key + '_mb_per_s']:>9.1f}")
    print(f"code checks run at {f['checks_share_of_parse']:.0%} of raw parse throughput (one core)")
    for name, family in f["by_family"].items():
        print(
            f"  {name} sessions ({family['sessions']:,}, {family['share_of_bytes']:.0%} of the "
            f"bytes): {family['checks_sessions_per_s']:,.0f} sessions/s, "
            f"{family['checks_share_of_parse']:.0%} of raw parse"
        )
    print(
        f"the corpus itself, first sight ({f['cold_sessions']:,} sessions, "
        f"{f['cold_mb']:.1f} MB, every text new): "
        f"{f['cold_checks_share_of_parse']:.0%} of raw parse throughput"
    )
    print(
        f"peak memory (max RSS): {f['max_rss_mb_at_2000']:.0f} MB after 2,000 sessions, "
        f"{f['max_rss_mb_at_end']:.0f} MB after {f['sessions']:,}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
