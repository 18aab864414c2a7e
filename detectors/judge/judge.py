"""``Judge``: judges replies with an LLM, composed of a prompt template, an answer model and a
client (``openai.OpenAI`` against any OpenAI-compatible endpoint).

    judge = Judge(config, settings, cache=MemoryCache())
    judgements = judge.judge(items)     # same order as items
    judge.totals()                      # for the run manifest

Per reply: a cached judgement makes no request; otherwise one request (the SDK retries 429,
5xx, timeouts and lost connections with backoff, honouring ``Retry-After``), and when the answer
cannot be read (invalid JSON, schema mismatch, cut at the length limit, a refusal) one repair
request that sends the error back. Still nothing usable: ``unscored`` with the reason. A request
that fails after its retries makes that reply ``unscored``; the run goes on. A rejected API key
(401) raises ``CredentialError`` at once: every other request would fail the same way.

The answer is asked for with a strict JSON schema (``response_format``, as ``parse`` sends it)
but read with ``create`` and validated here, so the raw text and the ``usage`` of an answer
that fails to parse are kept (``parse`` raises and loses both), and the same request body
serves the Batch API.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from detectors.judge.answer import Answer, Failure, grade, read_answer
from detectors.judge.batch import run_batch
from detectors.judge.cache import JudgeCache
from detectors.judge.config import JudgeConfig
from detectors.judge.evidence import JudgeItem
from detectors.judge.ledger import Ledger
from detectors.judge.prompt import (
    TEMPLATE_VERSION,
    Message,
    PromptTemplates,
    cache_key,
    request_body,
)
from detectors.judge.results import Judgement, Status, score_of
from detectors.judge.settings import JudgeSettings, build_client, resolve_model
from sessions.errors import ConfigError, CredentialError, HalluwatchError

OUTPUT_ESTIMATE = 500  # tokens of one answer, to keep a batch within the budget


@dataclass(frozen=True, slots=True)
class _Job:
    item: JudgeItem
    key: str
    messages: list[Message]


class _Unavailable(Exception):
    """A request failed after the SDK's retries; ``code`` is the unscored reason."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class Judge:
    def __init__(
        self,
        config: JudgeConfig,
        settings: JudgeSettings,
        cache: JudgeCache | None = None,
        client: openai.OpenAI | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # A client passed in brings its own credentials; only one built here needs them.
        model = (
            (config.model or settings.judge_model) if client else resolve_model(config, settings)
        )
        if model is None:
            raise ConfigError("the LLM judge is off: set judge.model or JUDGE_MODEL to use it")
        self.config = config
        self.model = model
        self.cache = cache
        base = client or build_client(config, settings)
        self.client = base.with_options(
            timeout=config.timeout_seconds, max_retries=config.max_retries
        )
        self.sleep = sleep  # between batch polls
        self.clock = clock
        self.templates = PromptTemplates()
        self.ledger = Ledger(config, model)
        key = settings.openai_api_key
        self._secret = key.get_secret_value() if key else ""

    def totals(self) -> dict[str, Any]:
        return self.ledger.totals()

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        """A judgement per item, in order; duplicates of a reply and evidence are judged once."""
        jobs: dict[str, _Job] = {}
        keys = []
        for item in items:
            key = cache_key(self.model, item)
            keys.append(key)
            jobs.setdefault(key, _Job(item, key, self.templates.messages(item)))
        done: dict[str, Judgement] = {}
        for key, job in jobs.items():
            hit = self._cached(job)
            if hit is not None:
                done[key] = hit
        todo = [job for key, job in jobs.items() if key not in done]
        first: dict[str, ChatCompletion] = {}
        if self.config.batch.enabled and todo:
            first = self._batch(todo)
        done.update(self._online(todo, first))
        out = []
        handed_out: set[str] = set()
        for item, key in zip(items, keys, strict=True):
            judgement = done[key]
            if key in handed_out:  # the same reply and evidence again: served, not requested
                judgement = self._served(judgement.for_item(item))
            handed_out.add(key)
            self.ledger.record(judgement)
            out.append(judgement)
        return out

    # -- cache and batch ---------------------------------------------------------------------

    def _cached(self, job: _Job) -> Judgement | None:
        if self.cache is None:
            return None
        try:
            data = self.cache.get(job.key)
        except (OSError, HalluwatchError):
            self.ledger.count_cache_error()  # a cache that cannot be read costs a request
            return None
        if data is None:
            return None
        try:
            judgement = Judgement.from_dict(data, item=job.item)
        except (KeyError, TypeError, ValueError):
            return None  # an entry from an older layout: judge again
        return self._served(judgement)

    def _served(self, judgement: Judgement) -> Judgement:
        """Mark a judgement served without a request: it cost this run nothing."""
        judgement.cached, judgement.requests = True, 0
        judgement.input_tokens = judgement.output_tokens = 0
        judgement.cost_usd = self.config.cost_usd(0, 0)
        return judgement

    def _batch(self, todo: list[_Job]) -> dict[str, ChatCompletion]:
        bodies: dict[str, dict[str, Any]] = {}
        estimate = 0
        for job in todo:
            size = sum(len(m["content"]) for m in job.messages) // 4 + OUTPUT_ESTIMATE
            if not self.ledger.room_for(estimate + size):
                break  # the rest goes online, where the cap is checked per request
            estimate += size
            bodies[job.key] = request_body(self.model, job.messages)
        if not bodies:
            return {}
        outcome = run_batch(
            self.client,
            bodies,
            poll_seconds=self.config.batch.poll_seconds,
            deadline_seconds=self.config.batch.deadline_minutes * 60,
            sleep=self.sleep,
            clock=self.clock,
            scrub=self._scrub,
        )
        self.ledger.count_batch("submitted", len(bodies))
        self.ledger.count_batch("completed", len(outcome.completions))
        self.ledger.count_batch("judged_online_after", len(bodies) - len(outcome.completions))
        if outcome.error:
            self.ledger.count_batch("errors")
            self.ledger.batch_error = outcome.error
        return outcome.completions

    # -- online ------------------------------------------------------------------------------

    def _online(self, todo: list[_Job], first: dict[str, ChatCompletion]) -> dict[str, Judgement]:
        if self.config.concurrency == 1 or len(todo) <= 1:
            return {job.key: self._judge_one(job, first.get(job.key)) for job in todo}
        out: dict[str, Judgement] = {}
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            futures = {pool.submit(self._judge_one, job, first.get(job.key)): job for job in todo}
            try:
                for future in as_completed(futures):
                    out[futures[future].key] = future.result()
            except CredentialError:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        return out

    def _judge_one(self, job: _Job, first: ChatCompletion | None) -> Judgement:
        messages = job.messages
        usage = [0, 0]
        requests = 0
        try:
            if first is None:
                if self.ledger.spent():
                    return self._result(job, "over_budget", messages, None, usage, 0,
                                        reason="the run's judge budget was spent")  # fmt: skip
                first = self._request(messages)
            requests += 1  # online, or one line of the batch
            self._charge(first, messages, usage)
            raw, answer = read_answer(first)
            if isinstance(answer, Failure):
                if self.ledger.spent():
                    return self._unscored(job, messages, raw, usage, requests, answer,
                                          "no repair: the budget is spent")  # fmt: skip
                messages = self.templates.repair(
                    messages, raw, answer.detail, cut=answer.code == "length"
                )
                repaired = self._request(messages)
                requests += 1
                self._charge(repaired, messages, usage)
                raw, second = read_answer(repaired)
                if isinstance(second, Failure):
                    return self._unscored(job, messages, raw, usage, requests, second,
                                          f"first answer: {answer.detail}")  # fmt: skip
                answer = second
        except _Unavailable as exc:
            return self._result(job, "unscored", messages, None, usage, requests,
                                reason=exc.detail, unscored_reason=exc.code)  # fmt: skip
        return self._scored(job, messages, raw, usage, requests, answer)

    def _request(self, messages: list[Message]) -> ChatCompletion:
        try:
            return self.client.chat.completions.create(**request_body(self.model, messages))
        except openai.AuthenticationError:
            raise CredentialError(
                f"the judge endpoint {self.client.base_url} rejected the API key (HTTP 401): "
                "check OPENAI_API_KEY"
            ) from None
        except openai.APITimeoutError:
            raise _Unavailable(
                "timeout", f"no answer within {self.config.timeout_seconds} s, after retries"
            ) from None
        except openai.APIConnectionError as exc:
            raise _Unavailable(
                "connection_error", self._scrub(f"{self.client.base_url}: {exc}")
            ) from None
        except openai.APIStatusError as exc:
            detail = f"HTTP {exc.status_code} from {self.client.base_url}: {exc.message}"
            raise _Unavailable(f"http_{exc.status_code}", self._scrub(detail)[:500]) from None

    def _charge(
        self, completion: ChatCompletion, messages: list[Message], usage: list[int]
    ) -> None:
        if completion.usage is not None:
            tokens = completion.usage.prompt_tokens, completion.usage.completion_tokens
        else:  # some local servers send no usage: count ~4 characters a token
            content = completion.choices[0].message.content if completion.choices else ""
            tokens = sum(len(m["content"]) for m in messages) // 4, len(content or "") // 4
        usage[0] += tokens[0]
        usage[1] += tokens[1]
        self.ledger.charge(*tokens, estimated=completion.usage is None)

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if len(self._secret) >= 4 else text

    # -- results -----------------------------------------------------------------------------

    def _scored(self, job: _Job, messages: list[Message], raw: str | None, usage: list[int],
                requests: int, answer: Answer) -> Judgement:  # fmt: skip
        claims = grade(answer, job.item)
        judgement = self._result(job, "scored", messages, raw, usage, requests,
                                 reason=" ".join(answer.reason.split())[:500])  # fmt: skip
        judgement.claims = claims
        judgement.score = score_of(claims)
        judgement.notes = [c.note for c in claims if c.note]
        if self.cache is not None:
            try:
                self.cache.put(job.key, judgement.to_dict())
            except (OSError, HalluwatchError):
                self.ledger.count_cache_error()  # the judgement stands; only reuse is lost
        return judgement

    def _unscored(self, job: _Job, messages: list[Message], raw: str | None, usage: list[int],
                  requests: int, failure: Failure, context: str) -> Judgement:  # fmt: skip
        reason = f"{failure.detail} ({context})"
        return self._result(job, "unscored", messages, raw, usage, requests,
                            reason=reason, unscored_reason=failure.code)  # fmt: skip

    def _result(self, job: _Job, status: Status, messages: list[Message], raw: str | None,
                usage: list[int], requests: int, *, reason: str,
                unscored_reason: str | None = None) -> Judgement:  # fmt: skip
        return Judgement(
            item=job.item,
            key=job.key,
            status=status,
            claims=[],
            score=None,
            reason=reason,
            unscored_reason=unscored_reason,
            model=self.model,
            template=TEMPLATE_VERSION,
            prompt=messages,
            raw=raw,
            input_tokens=usage[0],
            output_tokens=usage[1],
            cost_usd=self.config.cost_usd(usage[0], usage[1]),
            evidence_truncated=job.item.truncated,
            requests=requests,
        )
