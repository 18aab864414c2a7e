"""Which sessions the LLM judge reads, and how its counts become unbiased rates.

The judge is too slow and costly for every session, so it reads a sample:

- **Deterministic.** Each session gets a uniform draw ``u`` from a hash of its id, so a re-run
  or a backfill picks the same sessions (and hits the judge cache) without storing a seed.
- **Weighted.** A session's target inclusion probability is ``p = rate`` (per agent), times
  ``oversample`` when code checks already flagged it, capped at 1. A session is in when
  ``u < p`` (Poisson sampling).
- **Capped.** When more sessions qualify than ``max_sessions``, the ones with the smallest
  ``u / p`` are kept (sequential Poisson sampling, Ohlsson 1998): the cap scales every ``p`` by
  the same factor ``tau``, so the design stays the same shape and each kept session's
  inclusion probability is ``min(1, tau * p)``.
- **Bounded memory.** A batch keeps only its ``max_sessions + 1`` best candidates; the day's
  best are among the union of the batches' best, so merging frames loses nothing.

Rates are then Horvitz-Thompson ratio estimates: each judged session counts with weight
``1 / inclusion``, so oversampled flagged sessions do not inflate the rate, and the interval
comes from the linearised variance of a ratio under Poisson sampling.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

SALT = "halluwatch-judge-sample-v1"
Z_95 = 1.959963984540054


def draw(session_id: str, salt: str = SALT) -> float:
    """A uniform number in [0, 1) that depends only on the session id."""
    digest = hashlib.sha256(f"{salt}\0{session_id}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") >> 11) / float(1 << 53)


@dataclass(frozen=True, slots=True)
class SamplingPlan:
    """The judge's sampling design for one run."""

    rate: float
    agent_rates: Mapping[str, float] = field(default_factory=dict)
    oversample_flagged: float = 1.0
    max_sessions: int = 200

    def target(self, agent: str | None, flagged: bool) -> float:
        rate = self.agent_rates.get(agent or "", self.rate)
        return min(1.0, rate * (self.oversample_flagged if flagged else 1.0))


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session the judge may read, with where to find it again."""

    session_id: str
    agent: str | None
    agent_version: str | None
    unit: tuple[tuple[str, int], ...]  # the files (key, size) the session was read from
    flagged: bool
    p: float
    u: float

    @property
    def priority(self) -> float:
        return self.u / self.p


@dataclass(slots=True)
class SampleFrame:
    """The best candidates seen so far (by ``u / p``), at most ``max_sessions + 1`` of them.

    Merged with ``+=``; sessions offered and eligible are counted so the manifest can say
    what the sample was drawn from.
    """

    plan: SamplingPlan
    offered: int = 0
    eligible: int = 0
    _heap: list[tuple[float, str, Candidate]] = field(default_factory=list)

    def offer(
        self,
        session_id: str,
        agent: str | None,
        agent_version: str | None,
        unit: Sequence[tuple[str, int]],
        flagged: bool,
    ) -> None:
        self.offered += 1
        p = self.plan.target(agent, flagged)
        u = draw(session_id)
        if p <= 0 or u >= p:
            return
        self.eligible += 1
        files = tuple((key, size) for key, size in unit)
        candidate = Candidate(session_id, agent, agent_version, files, flagged, p, u)
        self._push(candidate)

    def _push(self, candidate: Candidate) -> None:
        # A max-heap on priority (negated) holding the smallest priorities; ties by id.
        item = (-candidate.priority, candidate.session_id, candidate)
        if len(self._heap) <= self.plan.max_sessions:
            heapq.heappush(self._heap, item)
        elif item > self._heap[0]:
            heapq.heapreplace(self._heap, item)

    def __iadd__(self, other: SampleFrame) -> SampleFrame:
        self.offered += other.offered
        self.eligible += other.eligible
        for _, _, candidate in other._heap:
            self._push(candidate)
        return self

    def select(self) -> Sample:
        ranked = sorted((c for _, _, c in self._heap), key=lambda c: (c.priority, c.session_id))
        cap = self.plan.max_sessions
        chosen = ranked[:cap]
        # The cap binds when more qualified than it allows: everyone's p shrinks by tau.
        tau = ranked[cap].priority if len(ranked) > cap else 1.0
        return Sample(
            [Sampled(c, min(1.0, tau * c.p)) for c in chosen],
            offered=self.offered,
            eligible=self.eligible,
            tau=tau,
        )


@dataclass(frozen=True, slots=True)
class Sampled:
    candidate: Candidate
    inclusion: float

    @property
    def weight(self) -> float:
        return 1.0 / self.inclusion


@dataclass(frozen=True, slots=True)
class Sample:
    sessions: list[Sampled]
    offered: int
    eligible: int
    tau: float

    @property
    def capped(self) -> bool:
        return self.tau < 1.0

    def describe(self) -> dict[str, object]:
        return {
            "sessions_offered": self.offered,
            "sessions_eligible": self.eligible,
            "sessions_sampled": len(self.sessions),
            "flagged_sampled": sum(1 for s in self.sessions if s.candidate.flagged),
            "cap_scale": round(self.tau, 6),
        }


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    low: float
    high: float
    sessions: int


def ratio_estimate(units: Sequence[tuple[float, float, float]], z: float = Z_95) -> Estimate | None:
    """Estimate ``sum(y) / sum(x)`` over the population from ``(weight, y, x)`` per sampled session.

    ``weight`` is ``1 / inclusion``. The variance is the Taylor linearisation of the ratio under
    Poisson sampling: ``sum((1 - pi) / pi**2 * (y - R x)**2) / X**2``. A census (every weight 1)
    has no sampling error, so its interval is the point itself. ``None`` when nothing was judged.
    """
    x_total = sum(w * x for w, _, x in units)
    if x_total <= 0:
        return None
    ratio = sum(w * y for w, y, _ in units) / x_total
    variance = 0.0
    for w, y, x in units:
        inclusion = 1.0 / w
        variance += (1.0 - inclusion) * (w * (y - ratio * x)) ** 2
    half = z * math.sqrt(variance) / x_total
    return Estimate(ratio, max(0.0, ratio - half), ratio + half, len(units))
