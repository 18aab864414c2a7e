"""Spike tests and before/after comparisons on cases whose answers are known by hand."""

from __future__ import annotations

import math
from datetime import date, timedelta
from fractions import Fraction

import pytest
from pydantic import ValidationError

from detectors.models import Severity
from findings import stats
from findings.stats import Counts, RatePoint, SpikeParams, compare_rates, exact_p_value

TODAY = date(2026, 11, 29)
PARAMS = SpikeParams()


def week(numerator: int, denominator: int, days: int = 7) -> list[RatePoint]:
    return [
        RatePoint(TODAY - timedelta(days=d), numerator, denominator) for d in range(1, days + 1)
    ]


def spike(
    numerator: int, denominator: int, baseline: list[RatePoint], kind: stats.Kind = "proportion"
) -> stats.SpikeResult:
    unit = "sessions" if kind == "proportion" else "tool calls"
    return stats.test_spike(
        RatePoint(TODAY, numerator, denominator),
        baseline,
        kind=kind,
        metric="unbacked_claim_share",
        agent="support-bot",
        agent_version="v7",
        params=PARAMS,
        unit=unit,
    )


def fisher_upper(x: int, n1: int, x0: int, n0: int) -> float:
    """P(X >= x), X hypergeometric, in exact rationals: independent of the module's log space."""
    total, size = x + x0, n1 + n0
    hits = sum(
        math.comb(total, k) * math.comb(size - total, n1 - k) for k in range(x, min(total, n1) + 1)
    )
    return float(Fraction(hits, math.comb(size, n1)))


def binom_upper(x: int, n: int, q: Fraction) -> float:
    return float(sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(x, n + 1)))


def binom_lower(x: int, n: int, q: Fraction) -> float:
    return float(sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(0, x + 1)))


# --- exact p-values -----------------------------------------------------------------------


def test_tea_tasting_one_sided_fisher_is_17_over_70() -> None:
    p = exact_p_value("proportion", Counts(3, 4), Counts(1, 4), "greater")
    assert p == pytest.approx(17 / 70, rel=1e-12)


@pytest.mark.parametrize(
    ("x", "n1", "x0", "n0"),
    [(5, 40, 3, 200), (0, 30, 4, 300), (2, 30, 0, 300), (60, 3000, 150, 21000), (30, 30, 1, 9)],
)
def test_fisher_upper_tail_matches_exact_rationals(x: int, n1: int, x0: int, n0: int) -> None:
    p = exact_p_value("proportion", Counts(x, n1), Counts(x0, n0), "greater")
    assert p == pytest.approx(fisher_upper(x, n1, x0, n0), rel=1e-9)


@pytest.mark.parametrize(
    ("c", "d1", "c0", "d0"), [(7, 200, 10, 2000), (0, 500, 3, 1000), (4, 100, 0, 700)]
)
def test_poisson_conditional_test_matches_binomial_tail(c: int, d1: int, c0: int, d0: int) -> None:
    p = exact_p_value("rate", Counts(c, d1), Counts(c0, d0), "greater")
    assert p == pytest.approx(binom_upper(c, c + c0, Fraction(d1, d1 + d0)), rel=1e-9)


def test_two_sided_doubles_the_smaller_tail() -> None:
    after, before = Counts(3, 1000), Counts(30, 2000)  # after is lower: the lower tail is small
    q = Fraction(1000, 3000)
    lower = binom_lower(3, 33, q)
    assert exact_p_value("rate", after, before, "less") == pytest.approx(lower, rel=1e-9)
    assert exact_p_value("rate", after, before, "two-sided") == pytest.approx(2 * lower, rel=1e-9)
    assert exact_p_value("rate", after, before, "greater") > 0.99


def test_bad_counts_are_refused_with_the_values() -> None:
    with pytest.raises(ValueError, match="-1/10"):
        Counts(-1, 10)
    with pytest.raises(ValueError, match="12/10"):
        exact_p_value("proportion", Counts(12, 10), Counts(1, 100), "greater")


# --- test_spike ---------------------------------------------------------------------------


def test_planted_rise_is_a_critical_anomaly() -> None:
    result = spike(25, 300, week(2, 300))
    assert result.status == "anomaly"
    assert result.p_value == pytest.approx(fisher_upper(25, 300, 14, 2100), rel=1e-9)
    assert result.p_value is not None and result.p_value < 1e-10
    assert result.baseline_value == pytest.approx(14 / 2100)
    assert result.lift == pytest.approx((25 / 300) / (14 / 2100) - 1)
    # lift 11.5 with 25 hits meets the default critical rule (lift >= 5, >= 25 hits)
    assert result.severity is Severity.CRITICAL
    assert result.reason.startswith("8.3% of 300 sessions vs 0.67% over 7 days (12.5x baseline")


def test_smaller_planted_rise_is_high() -> None:
    result = spike(12, 300, week(2, 300))  # lift 5 but only 12 hits: not critical
    assert result.status == "anomaly"
    assert result.severity is Severity.HIGH


def test_modest_fluctuation_is_normal() -> None:
    result = spike(6, 400, week(3, 300))  # 1.5% against 1.0%
    assert result.status == "normal"
    assert result.severity is None
    assert result.p_value is not None and result.p_value > PARAMS.alpha
    assert "not significant" in result.reason


def test_significant_but_small_lift_is_normal() -> None:
    result = spike(1300, 10000, week(1000, 10000))  # 13% against 10%: p tiny, lift 0.3
    assert result.p_value is not None and result.p_value < 1e-6
    assert result.status == "normal"
    assert "below the minimum lift of 50%" in result.reason


def test_zero_today_is_never_an_anomaly() -> None:
    result = spike(0, 300, week(5, 300))
    assert result.status == "normal"
    assert result.p_value == 1.0
    assert result.lift == -1.0
    assert result.severity is None


def test_zero_baseline_has_no_lift_but_is_still_tested() -> None:
    few = spike(1, 300, week(0, 300))  # one hit against none: p = 300/2400
    assert few.lift is None
    assert few.p_value == pytest.approx(1 / 8)
    assert few.status == "normal"
    assert "no baseline hits" in few.reason

    many = spike(5, 300, week(0, 300))
    assert many.status == "anomaly"
    assert many.p_value == pytest.approx(fisher_upper(5, 300, 0, 2100), rel=1e-9)
    assert many.severity is Severity.MEDIUM  # infinite lift, but only 5 hits


def test_tiny_day_is_not_tested() -> None:
    result = spike(5, 12, week(2, 300))
    assert result.status == "insufficient_today"
    assert result.p_value is None and result.severity is None
    assert result.reason == "only 12 sessions today (minimum 30): not tested"


def test_missing_days_leave_the_baseline_insufficient() -> None:
    baseline = [
        *week(2, 300, days=2),
        RatePoint(TODAY - timedelta(days=5), 0, 0),  # stored but empty: not a baseline day
        RatePoint(TODAY - timedelta(days=9), 2, 300),  # outside the 7-day window
        RatePoint(TODAY, 9, 9),  # today itself is never its own baseline
    ]
    result = spike(25, 300, baseline)
    assert result.status == "insufficient_baseline"
    assert result.baseline_days == 2
    assert result.baseline_denominator == 600
    assert result.p_value is None
    assert "only 2 of 7 baseline days have data (minimum 3)" in result.reason


def test_thin_baseline_is_insufficient() -> None:
    result = spike(25, 300, week(1, 10))
    assert result.status == "insufficient_baseline"
    assert result.reason == "only 70 sessions over 7 baseline days (minimum 100): not tested"


def test_duplicate_baseline_day_is_refused() -> None:
    with pytest.raises(ValueError, match="same day twice"):
        spike(5, 300, [*week(2, 300), RatePoint(TODAY - timedelta(days=1), 1, 100)])


def test_rate_per_100_calls() -> None:
    # 0.5 invented references per 100 tool calls for a week, then 2.5 per 100
    result = spike(20, 800, week(3, 600), kind="rate")
    assert result.status == "anomaly"
    assert result.p_value == pytest.approx(binom_upper(20, 41, Fraction(800, 800 + 4200)))
    assert result.severity is Severity.HIGH  # lift 4 with 20 hits
    assert result.reason.startswith("2.50 per 100 over 800 tool calls vs 0.50 per 100 over 7 days")

    quiet = spike(5, 800, week(3, 600), kind="rate")  # 0.62 per 100: within noise
    assert quiet.status == "normal"


# --- compare_rates ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("after", "before", "low", "high"),
    [  # Newcombe (1998), Statistics in Medicine 17:873, table II, method 10
        (Counts(56, 70), Counts(48, 80), 0.0524, 0.3339),
        (Counts(9, 10), Counts(3, 10), 0.1705, 0.8090),
        (Counts(0, 10), Counts(0, 10), -0.2775, 0.2775),
    ],
)
def test_newcombe_interval_matches_published_values(
    after: Counts, before: Counts, low: float, high: float
) -> None:
    result = compare_rates(before, after, kind="proportion")
    assert (result.ci_low, result.ci_high) == (
        pytest.approx(low, abs=5e-5),
        pytest.approx(high, abs=5e-5),
    )


def test_clear_change_excludes_zero() -> None:
    result = compare_rates(Counts(50, 10000), Counts(100, 10000), kind="rate")
    assert result.difference == pytest.approx(0.005)
    assert result.ratio == pytest.approx(2.0)
    assert 0 < result.ci_low < 0.005 < result.ci_high
    assert result.p_value == pytest.approx(2 * binom_upper(100, 150, Fraction(1, 2)), rel=1e-9)


def test_no_change_includes_zero() -> None:
    result = compare_rates(Counts(10, 1000), Counts(11, 1000), kind="proportion")
    assert result.ci_low < 0 < result.ci_high
    assert result.p_value > 0.5


def _coverage(kind: stats.Kind, n: int, means: tuple[float, float], top: int) -> float:
    """Exact coverage of the true difference, summing over every outcome pair."""

    def pmf(k: int, m: float) -> float:
        if kind == "proportion":
            return math.comb(n, k) * m**k * (1 - m) ** (n - k)
        return math.exp(k * math.log(n * m) - n * m - math.lgamma(k + 1))

    covered = 0.0
    for x0 in range(top + 1):
        for x1 in range(top + 1):
            c = compare_rates(Counts(x0, n), Counts(x1, n), kind=kind)
            if c.ci_low <= means[1] - means[0] <= c.ci_high:
                covered += pmf(x0, means[0]) * pmf(x1, means[1])
    return covered


def test_intervals_cover_the_true_difference_about_95_percent() -> None:
    assert 0.93 < _coverage("proportion", 40, (0.1, 0.3), top=40) < 0.99
    assert 0.93 < _coverage("rate", 1000, (0.01, 0.025), top=70) < 0.99


# --- parameters ---------------------------------------------------------------------------


def test_params_forbid_unknown_keys_and_describe_every_field() -> None:
    with pytest.raises(ValidationError, match="window"):
        SpikeParams.model_validate({"windows_days": 7})
    with pytest.raises(ValidationError, match="min_lift <= high_min_lift"):
        SpikeParams(min_lift=3.0)
    assert all(f.description for f in SpikeParams.model_fields.values())
