"""Parse throughput of halluwatch's reader on the shared corpus (a script, not a test).

Loads every session file into memory first (disk I/O is not measured), then times, over
``--repeat`` passes: plain ``json.loads`` of the same bytes (the baseline), ``read_unit`` on every
unit (detect, parse, link sub-agents, complete), and the same plus the detector suite. Also
reports tracemalloc and RSS peaks, and whether the streaming peak grows with the number of passes.

    python bench/parse_throughput.py [--corpus PATH] [--repeat N] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import orjson

from detectors.runner import DetectorSuite
from flows.scan import discover
from sessions.config import DEFAULT_INCLUDE
from sessions.reader import SessionReader

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
EXCLUDED_EXAMPLES = {"openllmetry_attributes.json"}
MB = 1_000_000

Unit = list[tuple[str, bytes]]


def load_units(corpus: Path) -> list[Unit]:
    """Group files into units as the nightly job does, and read their bytes into memory."""
    tau = sorted((corpus / "openai_chat" / "tau_airline").glob("*.dev.json"))
    groups = discover([str(corpus / "claude_code"), *map(str, tau)], DEFAULT_INCLUDE)
    examples = corpus.parent / "formats" / "examples"
    if examples.is_dir():
        groups += [
            g
            for g in discover([str(examples)], DEFAULT_INCLUDE)
            if not any(Path(o.key).name in EXCLUDED_EXAMPLES for o in g)
        ]
    return [[(o.key, Path(o.key).read_bytes()) for o in group] for group in groups]


def baseline_json(units: list[Unit], loads: Callable[[bytes], object] = json.loads) -> None:
    for unit in units:
        for key, raw in unit:
            if key.endswith((".jsonl", ".ndjson")):
                for line in raw.splitlines():
                    if line.strip():
                        loads(line)
            else:
                loads(raw)


def parse_only(units: list[Unit], reader: SessionReader) -> None:
    for unit in units:
        reader.read_unit(unit)


def parse_and_detect(units: list[Unit], reader: SessionReader, suite: DetectorSuite) -> None:
    for unit in units:
        for session in reader.read_unit(unit).sessions:
            suite.run(session)


def timed(modes: dict[str, Callable[[], None]], repeat: int) -> dict[str, list[float]]:
    """Seconds per pass of each mode; modes take turns so machine noise hits them alike."""
    times: dict[str, list[float]] = {name: [] for name in modes}
    for fn in modes.values():
        fn()  # warm-up: imports, regex compilation, first-use caches
    for _ in range(repeat):
        for name, fn in modes.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def traced_peak(fn: Callable[[], None], passes: int) -> tuple[float, float]:
    """(peak, still allocated after) in MB of Python allocations while ``fn`` runs ``passes`` x."""
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(passes):
            fn()
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / MB, current / MB


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="shared corpus folder")
    ap.add_argument("--repeat", type=int, default=5, help="timed passes over the corpus")
    ap.add_argument("--json", action="store_true", help="print one JSON object of figures")
    args = ap.parse_args()
    corpus: Path = args.corpus.resolve()
    if not (corpus / "claude_code").is_dir():
        sys.exit(f"corpus not found: {corpus} has no claude_code/ folder; pass --corpus PATH")
    if args.repeat < 1:
        sys.exit("--repeat must be at least 1")

    units = load_units(corpus)
    reader, suite = SessionReader(), DetectorSuite()
    sessions = tool_calls = 0
    failures = []
    for unit in units:
        result = reader.read_unit(unit)
        failures += result.failures
        sessions += len(result.sessions)
        tool_calls += sum(len(s.tool_calls()) for s in result.sessions)
    files = sum(len(u) for u in units)
    size_mb = sum(len(raw) for u in units for _, raw in u) / MB
    largest_mb = max(sum(len(raw) for _, raw in u) for u in units) / MB

    modes: dict[str, Callable[[], None]] = {
        "json.loads (baseline)": lambda: baseline_json(units),
        "orjson.loads (reference)": lambda: baseline_json(units, orjson.loads),
        "parse (read_unit)": lambda: parse_only(units, reader),
        "parse + detectors": lambda: parse_and_detect(units, reader, suite),
    }
    rows = {}
    for name, times in timed(modes, args.repeat).items():
        median = statistics.median(times)
        rows[name] = {
            "median_pass_seconds": median,
            "best_pass_seconds": min(times),
            "sessions_per_s": sessions / median,
            "mb_per_s": size_mb / median,
            "tool_calls_per_s": tool_calls / median,
        }
    base = rows["json.loads (baseline)"]["median_pass_seconds"]
    for row in rows.values():
        row["x_json_loads_time"] = row["median_pass_seconds"] / base

    stream = modes["parse + detectors"]  # one unit at a time, results dropped
    peak_1, left_1 = traced_peak(stream, 1)
    peak_10, left_10 = traced_peak(stream, 10)
    max_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MB  # KiB on Linux
    figures = {
        "corpus": str(corpus),
        "python": sys.version.split()[0],
        "repeat": args.repeat,
        "one_pass": {
            "files": files,
            "units": len(units),
            "sessions": sessions,
            "tool_calls": tool_calls,
            "mb": size_mb,
            "largest_unit_mb": largest_mb,
            "failures": [f"{f.source}: {f.reason}" for f in failures],
        },
        "modes": rows,
        "memory": {
            "tracemalloc_peak_mb_1_pass": peak_1,
            "tracemalloc_peak_mb_10_passes": peak_10,
            "peak_growth_10_vs_1": peak_10 / peak_1,
            "traced_mb_left_after_1_pass": left_1,
            "traced_mb_left_after_10_passes": left_10,
            "max_rss_mb": max_rss_mb,
        },
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0

    print(f"corpus {corpus} (+ formats/examples), Python {figures['python']}")
    print(
        f"one pass: {files} files in {len(units)} units, {sessions} sessions, "
        f"{tool_calls} tool calls, {size_mb:.2f} MB (largest unit {largest_mb:.2f} MB), "
        f"{len(failures)} failures"
    )
    print(f"{args.repeat} timed passes per mode after a warm-up, modes taking turns")
    for failure in failures:
        print(f"  failed: {failure.source}: {failure.reason}")
    print(f"{'':26}{'ms/pass':>9}{'sessions/s':>12}{'MB/s':>9}{'tool calls/s':>14}{'time':>10}")
    for name, r in rows.items():
        print(
            f"{name:26}{r['median_pass_seconds'] * 1000:9.1f}{r['sessions_per_s']:12.0f}"
            f"{r['mb_per_s']:9.1f}{r['tool_calls_per_s']:14.0f}"
            f"{r['x_json_loads_time']:9.2f}x"
        )
    print("(rates from the median pass; time = median pass relative to json.loads)")
    print(
        f"tracemalloc peak, parse + detectors, streaming: 1 pass {peak_1:.2f} MB, "
        f"10 passes {peak_10:.2f} MB (x{peak_10 / peak_1:.2f}); "
        f"left allocated after: {left_1:.2f} / {left_10:.2f} MB"
    )
    print(f"max RSS at end: {max_rss_mb:.1f} MB (includes the corpus bytes held in memory)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
