"""The judge's sample: deterministic, capped, mergeable, and unbiased once weighted."""

from __future__ import annotations

import statistics

import pytest

from findings.metrics import GroupCounts, metric_rows
from findings.sampling import SampleFrame, SamplingPlan, draw, ratio_estimate


def frame_of(plan: SamplingPlan, ids: list[str], flagged: set[str] = frozenset()) -> SampleFrame:
    frame = SampleFrame(plan)
    for sid in ids:
        frame.offer(sid, "bot", "v1", [(f"{sid}.jsonl", 10)], sid in flagged)
    return frame


def test_draw_is_uniform_and_depends_only_on_the_id() -> None:
    values = [draw(f"s{i}") for i in range(20_000)]
    assert draw("s1") == draw("s1")
    assert all(0 <= v < 1 for v in values)
    assert abs(statistics.fmean(values) - 0.5) < 0.01
    assert abs(sum(v < 0.1 for v in values) / len(values) - 0.1) < 0.01


def test_a_rerun_picks_the_same_sessions_in_any_order() -> None:
    plan = SamplingPlan(rate=0.2, max_sessions=50)
    ids = [f"session-{i}" for i in range(1_000)]
    first = frame_of(plan, ids).select()
    second = frame_of(plan, list(reversed(ids))).select()
    assert [s.candidate.session_id for s in first.sessions] == [
        s.candidate.session_id for s in second.sessions
    ]


def test_without_the_cap_the_rate_is_the_inclusion_probability() -> None:
    plan = SamplingPlan(rate=0.1, max_sessions=100_000)
    sample = frame_of(plan, [f"s{i}" for i in range(10_000)]).select()
    assert not sample.capped
    assert 900 <= len(sample.sessions) <= 1_100
    assert {s.inclusion for s in sample.sessions} == {0.1}
    assert sample.offered == 10_000 and sample.eligible == len(sample.sessions)


def test_the_cap_keeps_the_smallest_priorities_and_scales_inclusion() -> None:
    plan = SamplingPlan(rate=0.5, max_sessions=40)
    ids = [f"s{i}" for i in range(1_000)]
    sample = frame_of(plan, ids).select()
    assert len(sample.sessions) == 40 and sample.capped
    ranked = sorted((draw(i) / 0.5, i) for i in ids)
    assert [s.candidate.session_id for s in sample.sessions] == [i for _, i in ranked[:40]]
    # inclusion = tau * p with tau the 41st priority: about 40 / 1,000 here.
    assert sample.tau == pytest.approx(ranked[40][0])
    assert all(s.inclusion == pytest.approx(sample.tau * 0.5) for s in sample.sessions)
    assert 0.03 < sample.sessions[0].inclusion < 0.055


def test_merging_batch_frames_equals_one_frame() -> None:
    plan = SamplingPlan(rate=0.3, oversample_flagged=3, max_sessions=25)
    ids = [f"s{i}" for i in range(2_000)]
    flagged = {i for i in ids if i.endswith("7")}
    whole = frame_of(plan, ids, flagged).select()
    merged = SampleFrame(plan)
    for start in range(0, len(ids), 300):
        merged += frame_of(plan, ids[start : start + 300], flagged)
    parts = merged.select()
    assert [s.candidate.session_id for s in parts.sessions] == [
        s.candidate.session_id for s in whole.sessions
    ]
    assert parts.tau == whole.tau and parts.offered == whole.offered == 2_000


def test_flagged_sessions_are_oversampled_by_agent_rate() -> None:
    plan = SamplingPlan(rate=0.05, agent_rates={"bot": 0.1}, oversample_flagged=4)
    assert plan.target("bot", flagged=False) == pytest.approx(0.1)
    assert plan.target("bot", flagged=True) == pytest.approx(0.4)
    assert plan.target("other", flagged=True) == pytest.approx(0.2)
    assert SamplingPlan(rate=0.5, oversample_flagged=4).target(None, True) == 1.0
    assert SamplingPlan(rate=0.0).target("bot", True) == 0.0


def population(replicate: int) -> list[tuple[str, bool, int, int]]:
    """5,000 sessions: 10% flagged by code checks, and those make far more unbacked claims."""
    rows = []
    for i in range(5_000):
        flagged = i % 10 == 0
        replies = 1 + i % 3
        claims = (i % 4) if flagged else int(i % 25 == 0)
        rows.append((f"r{replicate}-s{i}", flagged, claims, replies))
    return rows


def test_weighted_estimates_are_unbiased_and_their_intervals_cover() -> None:
    plan = SamplingPlan(rate=0.05, oversample_flagged=5, max_sessions=400)
    estimates, naive, covered = [], [], 0
    truth = None
    for replicate in range(120):
        rows = population(replicate)
        truth = sum(r[2] for r in rows) / sum(r[3] for r in rows)
        frame = SampleFrame(plan)
        for sid, flagged, _, _ in rows:
            frame.offer(sid, "bot", "v1", [], flagged)
        by_id = {r[0]: r for r in rows}
        units = [
            (s.weight, by_id[s.candidate.session_id][2], by_id[s.candidate.session_id][3])
            for s in frame.select().sessions
        ]
        estimate = ratio_estimate(units)
        assert estimate is not None
        estimates.append(estimate.value)
        naive.append(sum(u[1] for u in units) / sum(u[2] for u in units))
        covered += estimate.low <= truth <= estimate.high
    assert truth is not None
    # Flagged sessions are 5x oversampled: unweighted, the rate is far too high; weighted, not.
    assert statistics.fmean(naive) > 1.5 * truth
    assert abs(statistics.fmean(estimates) - truth) < 0.03 * truth
    assert covered / 120 >= 0.88


def test_a_census_has_no_sampling_error_and_nothing_judged_has_no_estimate() -> None:
    estimate = ratio_estimate([(1.0, 2, 4), (1.0, 0, 4)])
    assert estimate is not None
    assert (estimate.value, estimate.low, estimate.high) == (0.25, 0.25, 0.25)
    assert ratio_estimate([]) is None
    assert ratio_estimate([(2.0, 0, 0)]) is None


def test_the_judge_metric_row_carries_the_weighted_estimate_and_raw_counts() -> None:
    counts = GroupCounts()
    counts.add_session(3, 2, [])
    counts.add_judged(weight=1.0, unbacked_claims=2, judged_replies=2)
    counts.add_judged(weight=9.0, unbacked_claims=0, judged_replies=2)
    rows = metric_rows({("bot", "v1"): counts}, "2026-11-29", "r1")
    row = next(
        r
        for r in rows
        if r["metric"] == "unbacked_claims_per_judged_reply" and r["agent_version"] == "v1"
    )
    assert (row["numerator"], row["denominator"]) == (2, 4)
    assert row["value"] == pytest.approx(2 / 20)  # (1*2 + 9*0) / (1*2 + 9*2)
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    other = next(r for r in rows if r["metric"] == "unknown_tool_per_100_calls")
    assert other["ci_low"] is None and other["ci_high"] is None
