"""Is today's hallucination rate a spike? Exact one-sided tests against a trailing baseline.

- ``proportion`` (share of sessions with the signal): one-sided Fisher exact test of today
  against the pooled baseline. Not a binomial tail at the baseline rate: that treats a noisy
  baseline as known and overstates significance when it is small. Fisher stays exact with
  zero counts and tiny days.
- ``rate`` (count per tool call, per reply): the exact conditional test for two Poisson rates;
  given the total n, today's count is Binomial(n, d_today / (d_today + d_base)) under H0.

The baseline is the pooled ratio over the stored days in the ``window_days`` before today
(busy days weigh more); days with a zero denominator are not baseline days. A day is an
``anomaly`` when today is not zero, p < ``alpha`` and the relative lift (today / baseline - 1)
is at least ``min_lift``; a zero baseline is infinite lift. Only rises count. Too little data
gives an ``insufficient_*`` status with the reason and no p-value.

Severity of an anomaly: CRITICAL when lift >= ``critical_min_lift`` and today's numerator >=
``critical_min_numerator`` (defaults 5, i.e. 6x, and 25); else HIGH when lift >=
``high_min_lift`` and numerator >= ``high_min_numerator`` (2, i.e. 3x, and 10); else MEDIUM.

``compare_rates`` is the two-sided before/after counterpart. Its interval for the difference
is MOVER (Newcombe's hybrid score method, his "method 10"): each side's score interval (Wilson
for proportions, the Poisson score interval for rates) combined into one for the difference;
unlike Wald it behaves at zero counts. Its p-value is the same exact test, with the smaller
tail doubled.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from statistics import NormalDist
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from detectors.models import Severity

Kind = Literal["proportion", "rate"]
Status = Literal["anomaly", "normal", "insufficient_today", "insufficient_baseline"]
Alternative = Literal["greater", "less", "two-sided"]


class Tally(Protocol):
    """Anything with a numerator and a denominator (a ``RatePoint``, a ``Counts``)."""

    @property
    def numerator(self) -> int: ...
    @property
    def denominator(self) -> int: ...


def _check(tally: Tally) -> None:
    if tally.numerator < 0 or tally.denominator < 0:
        raise ValueError(f"counts must not be negative: {tally.numerator}/{tally.denominator}")


@dataclass(frozen=True)
class Counts:
    """Totals over some period: ``numerator`` hits out of ``denominator``."""

    numerator: int
    denominator: int

    def __post_init__(self) -> None:
        _check(self)


@dataclass(frozen=True)
class RatePoint:
    """One day of one metric for one agent/version."""

    day: date
    numerator: int
    denominator: int

    def __post_init__(self) -> None:
        _check(self)


class SpikeParams(BaseModel):
    """How much data a spike test needs and how big a rise must be to count."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window_days: int = Field(7, ge=1, description="Days before today forming the baseline.")
    min_baseline_days: int = Field(3, ge=1, description="Fewest baseline days with data.")
    min_denominator: int = Field(30, ge=1, description="Smallest denominator today to test.")
    min_baseline_denominator: int = Field(
        100, ge=1, description="Smallest denominator summed over the baseline window to test."
    )
    min_lift: float = Field(0.5, ge=0, description="Smallest relative rise (0.5: 1.5x baseline).")
    alpha: float = Field(0.01, gt=0, lt=1, description="One-sided significance level.")
    high_min_lift: float = Field(2.0, ge=0, description="Relative lift for HIGH severity.")
    high_min_numerator: int = Field(10, ge=0, description="Hits today needed for HIGH severity.")
    critical_min_lift: float = Field(5.0, ge=0, description="Relative lift for CRITICAL severity.")
    critical_min_numerator: int = Field(25, ge=0, description="Hits today for CRITICAL severity.")

    @model_validator(mode="after")
    def _ordered(self) -> SpikeParams:
        if not self.min_lift <= self.high_min_lift <= self.critical_min_lift:
            raise ValueError(
                "lifts must satisfy min_lift <= high_min_lift <= critical_min_lift, got "
                f"{self.min_lift}, {self.high_min_lift}, {self.critical_min_lift}"
            )
        return self


@dataclass(frozen=True)
class SpikeResult:
    """Today against its baseline for one metric and agent/version, with a one-line reason."""

    metric: str
    agent: str | None
    agent_version: str | None
    kind: Kind
    today_value: float | None  # None when today's denominator is 0
    today_numerator: int
    today_denominator: int
    baseline_value: float | None  # None when the baseline denominator is 0
    baseline_numerator: int
    baseline_denominator: int
    baseline_days: int
    lift: float | None  # today / baseline - 1; None when the baseline rate is 0 (infinite)
    p_value: float | None  # None when not tested
    status: Status
    severity: Severity | None
    reason: str


@dataclass(frozen=True)
class Comparison:
    """After versus before: ``difference`` = after - before, with a two-sided interval."""

    kind: Kind
    before_value: float
    after_value: float
    difference: float
    ci_low: float
    ci_high: float
    confidence: float
    ratio: float | None  # after / before; None when before is 0
    p_value: float


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _tail(log_pmf: Callable[[int], float], start: int, stop: int, step: int) -> float:
    """Sum a unimodal pmf from ``start`` towards ``stop`` (inclusive), in log space.

    Stops early once the terms fall away past the mode, so large days stay cheap.
    """
    acc = prev = peak = -math.inf
    for k in range(start, stop + step, step):
        term = log_pmf(k)
        hi, lo = max(acc, term), min(acc, term)
        acc = hi + math.log1p(math.exp(lo - hi)) if lo > -math.inf else hi
        peak = max(peak, term)
        if term < prev and term < peak - 40:  # e^-40: below double precision of the sum
            break
        prev = term
    return min(1.0, math.exp(acc))


def exact_p_value(kind: Kind, after: Tally, before: Tally, alternative: Alternative) -> float:
    """Exact p-value that ``after``'s rate differs from ``before``'s in the given direction.

    Fisher's test for proportions, the conditional binomial test for Poisson rates.
    "greater" is P(X >= after's numerator) under equal rates; two-sided doubles the smaller tail.
    """
    x, n1, x0, n0 = after.numerator, after.denominator, before.numerator, before.denominator
    if n1 <= 0 or n0 <= 0:
        raise ValueError(f"denominators must be positive: after {n1}, before {n0}")
    total = x + x0
    if kind == "proportion":
        if x > n1 or x0 > n0:
            raise ValueError(f"a proportion needs numerator <= denominator: {x}/{n1}, {x0}/{n0}")
        size = n1 + n0
        low, high = max(0, n1 - (size - total)), min(total, n1)
        denom = _log_comb(size, n1)

        def log_pmf(k: int) -> float:
            return _log_comb(total, k) + _log_comb(size - total, n1 - k) - denom

    else:
        low, high = 0, total
        share = n1 / (n1 + n0)
        log_p, log_q = math.log(share), math.log1p(-share)

        def log_pmf(k: int) -> float:
            return _log_comb(total, k) + k * log_p + (total - k) * log_q

    # A tail that starts at the end of the support is the whole distribution: exactly 1.
    upper = _tail(log_pmf, x, high, 1) if alternative != "less" and x > low else 1.0
    lower = _tail(log_pmf, x, low, -1) if alternative != "greater" and x < high else 1.0
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    return min(1.0, 2 * min(upper, lower))


def _score_interval(kind: Kind, x: int, n: int, z: float) -> tuple[float, float]:
    """Wilson interval for a proportion, Poisson score interval for a rate."""
    if kind == "proportion":
        centre = (x + z * z / 2) / (n + z * z)
        half = z * math.sqrt(x * (n - x) / n + z * z / 4) / (n + z * z)
        return max(0.0, centre - half), min(1.0, centre + half)
    half = z * math.sqrt(x + z * z / 4)
    return max(0.0, (x + z * z / 2 - half) / n), (x + z * z / 2 + half) / n


def compare_rates(
    before: Tally, after: Tally, *, kind: Kind, confidence: float = 0.95
) -> Comparison:
    """Two-sided before/after comparison: difference with a MOVER score interval, exact p."""
    p_value = exact_p_value(kind, after, before, "two-sided")  # validates the counts
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    r0, r1 = before.numerator / before.denominator, after.numerator / after.denominator
    l0, u0 = _score_interval(kind, before.numerator, before.denominator, z)
    l1, u1 = _score_interval(kind, after.numerator, after.denominator, z)
    diff = r1 - r0
    return Comparison(
        kind=kind,
        before_value=r0,
        after_value=r1,
        difference=diff,
        ci_low=diff - math.hypot(r1 - l1, u0 - r0),
        ci_high=diff + math.hypot(u1 - r1, r0 - l0),
        confidence=confidence,
        ratio=r1 / r0 if r0 > 0 else None,
        p_value=p_value,
    )


def _severity(lift: float | None, hits: int, params: SpikeParams) -> Severity:
    rise = math.inf if lift is None else lift
    if rise >= params.critical_min_lift and hits >= params.critical_min_numerator:
        return Severity.CRITICAL
    if rise >= params.high_min_lift and hits >= params.high_min_numerator:
        return Severity.HIGH
    return Severity.MEDIUM


def _show(kind: Kind, value: float) -> str:
    if kind == "rate":
        return f"{value * 100:.2f} per 100"
    return f"{value:.1%}" if value >= 0.01 else f"{value * 100:.2g}%"


def _show_p(p: float) -> str:
    if p < 1e-300:  # underflow: the exact tail is below what a double holds
        return "p<1e-300"
    return "p=" + (f"{p:.0e}".replace("e-0", "e-") if p < 0.001 else f"{p:.2g}")


def test_spike(
    today: RatePoint,
    baseline: Sequence[RatePoint],
    *,
    kind: Kind,
    metric: str,
    agent: str | None,
    agent_version: str | None,
    params: SpikeParams,
    unit: str | None = None,
) -> SpikeResult:
    """Test one day of one metric against the trailing ``params.window_days`` before it.

    ``baseline`` may hold any stored days; only those in the window are used. ``unit`` names
    the denominator in the reason ("sessions", "tool calls", "replies").
    """
    unit = unit or ("sessions" if kind == "proportion" else "units")
    start = today.day - timedelta(days=params.window_days)
    window = [p for p in baseline if start <= p.day < today.day]
    days = [p.day for p in window]
    if len(set(days)) != len(days):
        raise ValueError(f"baseline has the same day twice: {sorted(days)}")
    base = Counts(sum(p.numerator for p in window), sum(p.denominator for p in window))
    base_days = sum(1 for p in window if p.denominator > 0)
    today_value = today.numerator / today.denominator if today.denominator else None
    base_value = base.numerator / base.denominator if base.denominator else None
    lift = None
    if today_value is not None and base_value:
        lift = today_value / base_value - 1

    def result(status: Status, reason: str, p: float | None = None) -> SpikeResult:
        severity = _severity(lift, today.numerator, params) if status == "anomaly" else None
        return SpikeResult(
            metric=metric,
            agent=agent,
            agent_version=agent_version,
            kind=kind,
            today_value=today_value,
            today_numerator=today.numerator,
            today_denominator=today.denominator,
            baseline_value=base_value,
            baseline_numerator=base.numerator,
            baseline_denominator=base.denominator,
            baseline_days=base_days,
            lift=lift,
            p_value=p,
            status=status,
            severity=severity,
            reason=reason,
        )

    if today.denominator < params.min_denominator:
        return result(
            "insufficient_today",
            f"only {today.denominator:,} {unit} today (minimum {params.min_denominator:,}): "
            "not tested",
        )
    if base_days < params.min_baseline_days:
        return result(
            "insufficient_baseline",
            f"only {base_days} of {params.window_days} baseline days have data "
            f"(minimum {params.min_baseline_days}): not tested",
        )
    if base.denominator < params.min_baseline_denominator:
        return result(
            "insufficient_baseline",
            f"only {base.denominator:,} {unit} over {base_days} baseline days "
            f"(minimum {params.min_baseline_denominator:,}): not tested",
        )
    assert today_value is not None and base_value is not None  # both denominators checked
    p = exact_p_value(kind, today, base, "greater")
    of = "of" if kind == "proportion" else "over"
    ratio = "no baseline hits" if lift is None else f"{lift + 1:.{2 if lift < 1 else 1}f}x baseline"
    seen = (
        f"{_show(kind, today_value)} {of} {today.denominator:,} {unit} vs "
        f"{_show(kind, base_value)} over {base_days} days ({ratio}, {_show_p(p)})"
    )
    if today.numerator == 0:
        return result("normal", f"none of {today.denominator:,} {unit} today", p)
    if p >= params.alpha:
        return result("normal", f"{seen}: not significant at alpha={params.alpha}", p)
    if lift is not None and lift < params.min_lift:
        return result("normal", f"{seen}: below the minimum lift of {params.min_lift:.0%}", p)
    return result("anomaly", seen, p)


test_spike.__test__ = False  # type: ignore[attr-defined]  # a "test_" name pytest must not collect
