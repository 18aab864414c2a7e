"""What a run's judging cost and produced, and whether its budget is spent.

Shared by the worker threads, so every change takes the lock. The budget is checked before each
request: once the tokens or dollars used reach a cap, no new request starts (requests already in
flight finish, so a run can pass the cap by up to ``concurrency`` requests) and the remaining
replies are ``over_budget``. Spending the budget ends judging, not the run.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from detectors.judge.config import JudgeConfig
from detectors.judge.prompt import TEMPLATE_VERSION
from detectors.judge.results import Judgement


class Ledger:
    def __init__(self, config: JudgeConfig, model: str) -> None:
        self.config = config
        self.model = model
        self.lock = threading.Lock()
        self.requests = 0
        self.cache_hits = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.usage_estimated = 0  # responses without `usage`, counted at ~4 characters a token
        self.statuses: Counter[str] = Counter()
        self.unscored: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()
        self.truncated = 0
        self.over_budget = False
        self.batch: dict[str, int] = {}
        self.cache_errors = 0
        self.batch_error: str | None = None  # why the Batch API could not be used, if so

    @property
    def cost_usd(self) -> float | None:
        return self.config.cost_usd(self.input_tokens, self.output_tokens)

    def spent(self) -> bool:
        """Whether a cap is reached; from then on it stays reached for the run."""
        with self.lock:
            if not self.over_budget:
                self.over_budget = self._at_cap()
            return self.over_budget

    def _at_cap(self) -> bool:
        cap_tokens, cap_usd = self.config.budget_tokens, self.config.budget_usd
        if cap_tokens is not None and self.input_tokens + self.output_tokens >= cap_tokens:
            return True
        cost = self.cost_usd
        return cap_usd is not None and cost is not None and cost >= cap_usd

    def room_for(self, estimated_tokens: int) -> bool:
        """Whether a request of about this many tokens still fits under the caps (batch mode,
        where nothing can be stopped once submitted)."""
        with self.lock:
            tokens = self.input_tokens + self.output_tokens + estimated_tokens
            if self.config.budget_tokens is not None and tokens > self.config.budget_tokens:
                return False
            cost = self.config.cost_usd(tokens, 0) if self.config.budget_usd else None
            return cost is None or self.config.budget_usd is None or cost <= self.config.budget_usd

    def charge(self, input_tokens: int, output_tokens: int, *, estimated: bool = False) -> None:
        with self.lock:
            self.requests += 1
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            self.usage_estimated += estimated

    def count_batch(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.batch[key] = self.batch.get(key, 0) + n

    def count_cache_error(self) -> None:
        with self.lock:
            self.cache_errors += 1

    def record(self, judgement: Judgement) -> None:
        with self.lock:
            self.statuses[judgement.status] += 1
            self.cache_hits += judgement.cached
            self.truncated += judgement.evidence_truncated
            if judgement.unscored_reason:
                self.unscored[judgement.unscored_reason] += 1
            self.labels.update(c.label for c in judgement.claims)

    def totals(self) -> dict[str, Any]:
        """The run's judging in numbers, for the manifest."""
        with self.lock:
            cost = self.cost_usd
            return {
                "model": self.model,
                "template": TEMPLATE_VERSION,
                "judged_replies": self.statuses["scored"],
                "unscored": self.statuses["unscored"],
                "requests": self.requests,
                "cache_hits": self.cache_hits,
                "cache_errors": self.cache_errors,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "usage_estimated": self.usage_estimated,
                "cost_usd": None if cost is None else round(cost, 6),
                "by_status": dict(self.statuses),
                "unscored_reasons": dict(self.unscored),
                "claims": dict(self.labels),
                "evidence_truncated": self.truncated,
                "over_budget": self.over_budget,
                "budget": {"tokens": self.config.budget_tokens, "usd": self.config.budget_usd},
                "batch": dict(self.batch),
                **({"batch_error": self.batch_error} if self.batch_error else {}),
            }
