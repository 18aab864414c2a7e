"""How a day's analysis scales with workers: 1 then 2 Dask workers, 1 then 2 processes.

    python bench/runner_scaling.py [--sessions 3000] [--batch-mb 64] [--repeat 2]
                                   [--corpus ../shared/corpus] [--json]

Writes one generated day to a temporary folder (the generator of `bench/code_checks.py`: the
corpus's tau-bench trajectories and Claude Code sessions with their sub-agent files, every id
varied per copy), then runs the nightly job's analysis of that day (`analyse_day`: list, pack
into batches, read, every code check, write the day's parts) on each task runner, in a flow
run of its own with `run.task_runner` set in its config:

    {type: dask, n_workers: 1|2, threads_per_worker: 1}   a LocalCluster of worker processes
    {type: processes, max_workers: 1|2}                   Prefect's ProcessPoolTaskRunner

The time is the analysis's wall time as a night pays it, start-up of the workers included; the
runners take turns `--repeat` times and the fastest run of each counts. It prints sessions/s
and MB/s (of session files) per runner, the speed-up from 1 to 2 workers, and the CPU seconds
the benchmark used (its own process, the Prefect server, the workers) next to what other jobs
on the machine took meanwhile, which shows whether 2 workers found 2 idle cores.

Tasks on processes and Dask workers report to a Prefect API: `PREFECT_API_URL` when set, else
a temporary server started for the benchmark (as the tests do).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from code_checks import Unit, day, templates  # noqa: E402

from flows.cli import PREFECT_DEFAULTS  # noqa: E402

DAY = date(2026, 11, 29)
RUNNERS = [
    ("dask", 1, "{type: dask, n_workers: 1, threads_per_worker: 1}"),
    ("dask", 2, "{type: dask, n_workers: 2, threads_per_worker: 1}"),
    ("processes", 1, "{type: processes, max_workers: 1}"),
    ("processes", 2, "{type: processes, max_workers: 2}"),
]


def write_day(root: Path, corpus: Path, sessions: int) -> tuple[int, int]:
    """The generated day under ``root`` in the nightly layout; (files, bytes)."""
    folder = root / "sessions" / DAY.strftime("%Y/%m/%d")
    (folder / "tau").mkdir(parents=True)
    (folder / "claude-code").mkdir()
    files = size = 0
    for n, unit in enumerate(day(templates(corpus), sessions)):
        for name, raw in _named(unit, n):
            path = folder / name
            path.write_bytes(raw)
            files, size = files + 1, size + len(raw)
    return files, size


def _named(unit: Unit, n: int) -> Unit:
    """File names for a stored day: unique per copy, sub-agent files still beside their main."""
    if unit[0][0] == "tau.json":  # one trajectory; the generator leaves its name and id alone
        (_, raw) = unit[0]
        return [(f"tau/tau-{n}.json", raw.replace(b'{"id":"x",', f'{{"id":"tau-{n}",'.encode(), 1))]
    out = []
    for name, raw in unit:  # `S-<n>.jsonl`, `S__subagents__agent-a-<n>.jsonl`
        sid, sep, rest = name.partition("__subagents__")
        if sep:
            name = f"{sid}-{n}{sep}{rest.removesuffix(f'-{n}.jsonl')}.jsonl"
        out.append((f"claude-code/{name}", raw))
    return out


def config_text(root: Path, corpus: Path, results: Path, runner: str, batch_mb: float) -> str:
    tools = corpus / "openai_chat" / "tau_airline" / "tools.json"
    return f"""
sessions:
  location: {root}
  layout: "sessions/{{date:%Y/%m/%d}}/"
  agent_from_path: "/(?P<agent>[a-z][a-z0-9-]+)/[^/]+$"
agents:
  tau:
    tools_file: {tools}
results:
  location: {results}
  prefix: ""
run:
  batch_mb: {batch_mb}
  task_runner: {runner}
"""


def measure(root: Path, corpus: Path, batch_mb: float, repeat: int) -> list[dict[str, Any]]:
    """Analyse the day ``repeat`` times per runner, each in a flow run; the fastest of each."""
    from prefect import flow

    from flows.config import load_config
    from flows.nightly import analyse_day
    from flows.runners import ConfiguredTaskRunner, use_task_runner

    @flow(name="runner-scaling", task_runner=ConfiguredTaskRunner())
    def analyse(config: str) -> dict[str, Any]:
        loaded = load_config(config)
        began = time.perf_counter()
        use_task_runner(loaded)
        analysed = analyse_day(loaded, DAY)
        seconds = time.perf_counter() - began
        total = analysed.total
        return {
            "seconds": seconds,
            "batches": analysed.batches,
            "files": total.files,
            "sessions": total.sessions,
            "mb": total.bytes / 1e6,
            "tool_calls": total.tool_calls,
            "signals": sum(total.signals_by_kind.values()),
            "failures": sum(total.failures_by_reason.values()),
        }

    best: dict[tuple[str, int], dict[str, Any]] = {}
    for _ in range(repeat):  # the runners take turns, so machine noise affects them alike
        for kind, workers, runner in RUNNERS:
            results = root / f"results-{kind}-{workers}"
            config = root / f"{kind}-{workers}.yaml"
            config.write_text(config_text(root, corpus, results, runner, batch_mb))
            cpu, machine = _cpu_seconds(), _machine_cpu_seconds()
            row = analyse(str(config))
            ours = _cpu_seconds() - cpu
            others = max(0.0, _machine_cpu_seconds() - machine - ours)
            row.update(runner=kind, workers=workers, cpu_seconds=ours, others_cpu_seconds=others)
            print(
                f"  {kind} x{workers}: {row['seconds']:.1f} s, {row['batches']} batches, "
                f"{ours:.1f} CPU s, other jobs {others:.1f} CPU s",
                file=sys.stderr,
                flush=True,
            )
            shutil.rmtree(results, ignore_errors=True)
            if (kind, workers) not in best or row["seconds"] < best[kind, workers]["seconds"]:
                best[kind, workers] = row
    return list(best.values())


def _cpu_seconds() -> float:
    """CPU time of this benchmark: this process, its descendants (the Prefect server, workers)
    and every descendant that has ended."""
    import psutil  # comes with distributed

    total = 0.0
    me = psutil.Process()
    for process in [me, *me.children(recursive=True)]:
        try:
            t = process.cpu_times()
        except psutil.Error:  # ended meanwhile: its parent's children_* count it
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _machine_cpu_seconds() -> float:
    """CPU time every process on the machine has used: with ours, what other jobs took."""
    import psutil  # comes with distributed

    times = psutil.cpu_times()
    return times.user + times.nice + times.system + times.irq + times.softirq


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--batch-mb", type=float, default=64)
    parser.add_argument("--repeat", type=int, default=2, help="runs per runner; the fastest counts")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (args.corpus / "openai_chat").is_dir():
        print(f"corpus not found at {args.corpus}: pass --corpus", file=sys.stderr)
        return 1
    corpus = args.corpus.resolve()
    for key, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(key, value)
    with tempfile.TemporaryDirectory(prefix="halluwatch-scaling-") as tmp:
        root = Path(tmp)
        began = time.perf_counter()
        files, size = write_day(root, corpus, args.sessions)
        print(
            f"generated {args.sessions:,} sessions in {files:,} files, {size / 1e6:,.1f} MB "
            f"({time.perf_counter() - began:.0f} s); analysing...",
            file=sys.stderr,
            flush=True,
        )
        if os.environ.get("PREFECT_API_URL"):
            rows = measure(root, corpus, args.batch_mb, args.repeat)
        else:
            from prefect.testing.utilities import prefect_test_harness

            with prefect_test_harness(server_startup_timeout=120):
                rows = measure(root, corpus, args.batch_mb, args.repeat)
    counts = {(r["sessions"], r["tool_calls"], r["signals"], r["failures"]) for r in rows}
    assert len(counts) == 1, f"the runners disagree: {rows}"
    one = {r["runner"]: r["seconds"] for r in rows if r["workers"] == 1}
    for r in rows:
        r["sessions_per_s"] = r["sessions"] / r["seconds"]
        r["mb_per_s"] = r["mb"] / r["seconds"]
        r["speed_up"] = one[r["runner"]] / r["seconds"]
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "runs": rows}, indent=2))
        return 0
    r0 = rows[0]
    print(
        f"{r0['sessions']:,} sessions, {r0['tool_calls']:,} tool calls, {r0['mb']:,.1f} MB in "
        f"{r0['batches']} batches of up to {args.batch_mb:g} MB; {r0['signals']:,} signals; "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'runner':16}{'seconds':>9}{'sessions/s':>12}{'MB/s':>8}{'speed-up':>10}"
        f"{'CPU s':>8}{'others':>8}"
    )
    for r in rows:
        label = f"{r['runner']} x{r['workers']}"
        print(
            f"{label:16}{r['seconds']:>9.1f}{r['sessions_per_s']:>12,.0f}{r['mb_per_s']:>8.1f}"
            f"{r['speed_up']:>9.2f}x{r['cpu_seconds']:>8.1f}{r['others_cpu_seconds']:>8.1f}"
        )
    print(
        f"(fastest of {args.repeat} runs each: wall time of the analysis, the workers' start-up "
        "included; speed-up against 1 worker; CPU s of the benchmark, workers and server included; "
        "others: CPU s other jobs on the machine took meanwhile)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
