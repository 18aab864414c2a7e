"""Inline SVG line charts of a headline rate over the stored days, with its baseline band.

Built in Python as plain SVG text so the report needs no JavaScript and no network.

The band around each day is what that day's rate would look like if nothing had changed: the
baseline is the pooled rate of the stored days in the ``window_days`` before it (the spike
test's window, numerators and denominators summed, never an average of daily rates), and the
band is the 95% range of that day's rate if it came from the same process, by the normal
approximation ``b ± 1.96·sqrt(v·(1/n + 1/N))`` for that day's denominator ``n`` and the
baseline's ``N``, with ``v = b(1-b)`` for a proportion (binomial) and ``v = b`` per unit for a
rate (Poisson), clipped to [0, 1] or at 0. ``v`` is computed with half a hit added,
``b' = (x + 0.5) / (N + 1)``, so a baseline with no hits still has a band. A point above the
band is a day that deserves a look; the exact test in ``findings.stats`` decides what is an
anomaly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from markupsafe import Markup, escape

from findings.metrics import ALL_VERSIONS, MetricDef

Z95 = 1.96
WIDTH, HEIGHT = 340, 150
LEFT, RIGHT, TOP, BOTTOM = 46, 12, 12, 24


@dataclass(frozen=True, slots=True)
class DayRate:
    """One stored day of one metric for one agent (all versions), with its baseline band."""

    day: date
    numerator: int
    denominator: int
    value: float | None  # scaled, as the metrics table stores it; None when denominator is 0
    baseline: float | None = None
    low: float | None = None
    high: float | None = None


def metric_label(metric: MetricDef) -> str:
    """What the scaled value of ``metric`` is measured in: "per 100 tool calls", "of sessions"."""
    if metric.kind == "proportion":
        return f"of {metric.unit}"
    if metric.scale != 1:
        return f"per {metric.scale:g} {metric.unit}"
    singular = metric.unit[:-3] + "y" if metric.unit.endswith("ies") else metric.unit.rstrip("s")
    return f"per {singular}"


def short_value(metric: MetricDef, value: float | None) -> str:
    """A scaled metric value without its unit ("4.55", "10.0%")."""
    if value is None:
        return "n/a"
    return f"{value:.1%}" if metric.kind == "proportion" else f"{value:.3g}"


def show_value(metric: MetricDef, value: float | None) -> str:
    """A scaled metric value as a person reads it ("4.55 per 100 tool calls", "10.0%")."""
    if value is None or metric.kind == "proportion":
        return short_value(metric, value)
    return f"{short_value(metric, value)} {metric_label(metric)}"


def caption(metric: MetricDef, point: DayRate | None) -> dict[str, str]:
    """The figures under a chart: the day's value with its counts, its baseline and band."""
    if point is None:
        return {"today": "no sessions today", "baseline": "n/a", "band": "no baseline yet"}
    banded = point.low is not None and point.high is not None
    return {
        "today": f"{short_value(metric, point.value)} ({point.numerator:,}/{point.denominator:,})",
        "baseline": short_value(metric, point.baseline),
        "band": f"{short_value(metric, point.low)} to {short_value(metric, point.high)}"
        if banded
        else "no baseline yet",
    }


def series(
    rows_by_day: Mapping[date, Sequence[Mapping[str, Any]]],
    metric: MetricDef,
    agent: str | None,
    window_days: int = 7,
) -> list[DayRate]:
    """The days ``agent`` has a row of ``metric`` (all versions), each with its baseline band."""
    raw = [
        (day, int(row["numerator"]), int(row["denominator"]))
        for day, rows in sorted(rows_by_day.items())
        for row in rows
        if row["metric"] == metric.name
        and row["agent"] == agent
        and row["agent_version"] == ALL_VERSIONS
    ]
    out = []
    for day, numerator, denominator in raw:
        window = [(n, d) for t, n, d in raw if day - timedelta(days=window_days) <= t < day]
        base_n, base_d = sum(n for n, _ in window), sum(d for _, d in window)
        value = metric.scale * numerator / denominator if denominator else None
        if not base_d:
            out.append(DayRate(day, numerator, denominator, value))
            continue
        rate = base_n / base_d
        low = high = None
        if denominator:
            # Half a hit added for the spread only, so a baseline of 0 still has a band.
            shrunk = (base_n + 0.5) / (base_d + 1)
            spread = shrunk * (1 - shrunk) if metric.kind == "proportion" else shrunk
            half = Z95 * math.sqrt(spread * (1 / denominator + 1 / base_d))
            top = 1.0 if metric.kind == "proportion" else math.inf
            low, high = metric.scale * max(rate - half, 0.0), metric.scale * min(rate + half, top)
        out.append(DayRate(day, numerator, denominator, value, metric.scale * rate, low, high))
    return out


def line_chart(
    points: Sequence[DayRate], first: date, last: date, metric: MetricDef, title: str
) -> Markup:
    """An SVG of ``points`` from ``first`` to ``last``: band, baseline, line, today marked."""
    span = max((last - first).days, 1)
    tops = [v for p in points for v in (p.value, p.high, p.baseline) if v is not None]
    y_max = _nice_ceiling(max(tops, default=0.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(day: date) -> float:
        return LEFT + plot_w * (day - first).days / span

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / y_max)

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" '
        f'y2="{TOP + plot_h}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}"/>',
        _text(LEFT - 4, TOP + 4, _tick(metric, y_max), "end"),
        _text(LEFT - 4, TOP + plot_h, _tick(metric, 0.0), "end"),
        _text(LEFT, HEIGHT - 6, first.strftime("%b %d"), "start"),
        _text(LEFT + plot_w, HEIGHT - 6, last.strftime("%b %d"), "end"),
    ]
    banded = [p for p in points if p.low is not None and p.high is not None]
    if banded:
        upper = [f"{x(p.day):.1f},{y(p.high or 0.0):.1f}" for p in banded]
        lower = [f"{x(p.day):.1f},{y(p.low or 0.0):.1f}" for p in reversed(banded)]
        parts.append(f'<polygon class="band" points="{" ".join(upper + lower)}"/>')
    based = [p for p in points if p.baseline is not None]
    if based:
        coords = " ".join(f"{x(p.day):.1f},{y(p.baseline or 0.0):.1f}" for p in based)
        parts.append(f'<polyline class="baseline" points="{coords}"/>')
    valued = [p for p in points if p.value is not None]
    if len(valued) > 1:
        coords = " ".join(f"{x(p.day):.1f},{y(p.value or 0.0):.1f}" for p in valued)
        parts.append(f'<polyline class="rate" points="{coords}"/>')
    for p in valued:
        today = p.day == last
        tip = f"{p.day}: {show_value(metric, p.value)} ({p.numerator:,}/{p.denominator:,})"
        if p.baseline is not None:
            tip += f"; baseline {show_value(metric, p.baseline)}"
        parts.append(
            f'<circle class="{"point today" if today else "point"}" cx="{x(p.day):.1f}" '
            f'cy="{y(p.value or 0.0):.1f}" r="{5 if today else 2.5}" data-day="{p.day}" '
            f'data-value="{p.value:.6g}"><title>{escape(tip)}</title></circle>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def sparkline(counts: Sequence[int], width: int = 90, height: int = 22) -> Markup:
    """A tiny SVG of a finding's daily affected sessions, oldest first."""
    top = max(max(counts, default=0), 1)
    step = width / max(len(counts) - 1, 1)
    coords = " ".join(
        f"{i * step:.1f},{2 + (height - 4) * (1 - c / top):.1f}" for i, c in enumerate(counts)
    )
    shape = (
        f'<polyline class="spark" points="{coords}"/>'
        if len(counts) > 1
        else f'<circle class="spark-point" cx="{width / 2}" cy="{height / 2}" r="2.5"/>'
    )
    shape += f"<title>{escape(', '.join(str(c) for c in counts))} sessions</title>"
    return Markup(
        f'<svg class="sparkline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" aria-hidden="true">{shape}</svg>'
    )


def _text(x_pos: float, y_pos: float, text: str, anchor: str) -> str:
    return f'<text x="{x_pos:.1f}" y="{y_pos:.1f}" text-anchor="{anchor}">{escape(text)}</text>'


def _tick(metric: MetricDef, value: float) -> str:
    return f"{value * 100:.3g}%" if metric.kind == "proportion" else f"{value:.3g}"


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above ``value`` (1 when there is nothing)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value)
