"""The LLM judge: labels the factual claims of sampled replies against what the agent saw.

    config.py     the `judge:` config section, reference facts      JudgeConfig, load_references
    settings.py   endpoint and key from the environment; on or off   JudgeSettings, OFF_REASON
    evidence.py   the replies to judge and the evidence that fits    judge_items, JudgeItem
    relevance.py  what a reply and an item share; excerpts
    prompt.py     templates/judge/*.j2 into messages; cache keys     TEMPLATE_VERSION
    answer.py     the answer schema; reading and checking answers
    results.py    the outcome of one reply                           Judgement
    judge.py      the client, retries, repair, cache, budget         Judge
    batch.py      the OpenAI Batch API path
    ledger.py     the run's totals and budget
    cache.py      the cache protocol and two caches                  JudgeCache
    signals.py    judged claims as signals                           judgement_signals

Usage::

    model = resolve_model(config, JudgeSettings())        # None: report OFF_REASON
    items = [i for s in sampled for i in judge_items(s, config, refs.get(s.agent or "", []))]
    judge = Judge(config, JudgeSettings(), cache=DirectoryCache(path))
    for judgement in judge.judge(items):
        signals = judgement_signals(judgement)
    manifest["judge"] = judge.totals()
"""

from detectors.judge.answer import GradedClaim
from detectors.judge.cache import DirectoryCache, JudgeCache, MemoryCache
from detectors.judge.config import BatchConfig, JudgeConfig, load_references, parse_judge_config
from detectors.judge.evidence import EvidenceItem, JudgeItem, judge_items
from detectors.judge.judge import Judge
from detectors.judge.prompt import TEMPLATE_VERSION
from detectors.judge.results import Judgement
from detectors.judge.settings import OFF_REASON, JudgeSettings, require_model, resolve_model
from detectors.judge.signals import judgement_signals

__all__ = [
    "OFF_REASON",
    "TEMPLATE_VERSION",
    "BatchConfig",
    "DirectoryCache",
    "EvidenceItem",
    "GradedClaim",
    "Judge",
    "JudgeCache",
    "JudgeConfig",
    "JudgeItem",
    "JudgeSettings",
    "Judgement",
    "MemoryCache",
    "judge_items",
    "judgement_signals",
    "load_references",
    "parse_judge_config",
    "require_model",
    "resolve_model",
]
