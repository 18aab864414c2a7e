"""``unknown_tool``: the agent called a tool that is not registered.

The usual cause is not wild invention but a renamed tool that a prompt or a tool description still
names (`search_docs` after it became `docs_search`), so the explanation names the closest
registered tool. Two kinds of evidence count: the name is absent from the registry the session
resolved to, or the harness itself answered that no such tool exists (which holds even when the
registry is unknown).
"""

from __future__ import annotations

import difflib
import re

from detectors.models import Severity, Signal
from detectors.params import UnknownToolParams
from detectors.registry import detector
from sessions.models import Event, EventKind, Session

# What harnesses answer when the model calls a tool they do not have (Claude Code, the Agents SDK,
# LangChain, generic dispatchers). Anchored on "tool" so a missing *file* never matches.
_REJECTION = re.compile(
    r"no such tool(?: available)?|unknown tool\b|tool \S+ (?:is )?not found|"
    r"tool \S+ does not exist|is not a valid tool|tool not found|no tool named",
    re.IGNORECASE,
)


# The non-ASCII characters that `re.IGNORECASE` matches to an ASCII letter (found by trying
# every code point): mapped to that letter, `str.lower` then makes any case-insensitive match of
# an ASCII literal a plain substring.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def fold_case(text: str) -> str:
    """``text`` lowercased so that ASCII literals matched ignoring case are substrings of it."""
    if not text.isascii() and any(c in text for c in "\u0130\u0131\u017f\u212a"):
        text = text.translate(_ASCII_FOLD)
    return text.lower()


def may_reject(low: str) -> bool:
    """Whether `fold_case`d text holds the literals of some `_REJECTION` alternative."""
    return (
        "no such tool" in low
        or "unknown tool" in low
        or "is not a valid tool" in low
        or "no tool named" in low
        or ("tool " in low and ("not found" in low or "does not exist" in low))
    )


def _rejects(result: Event) -> bool:
    """Whether ``result`` is the harness answering that it has no such tool."""
    return (
        result.is_error
        and may_reject(fold_case(result.output))
        and bool(_REJECTION.search(result.output))
    )


_SPLIT = re.compile(r"[^a-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def _tokens(name: str) -> frozenset[str]:
    return frozenset(t.lower() for t in _SPLIT.split(name) if t)


def _similarity(a: str, b: str) -> float:
    ratio = difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
    ta, tb = _tokens(a), _tokens(b)
    overlap = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
    return max(ratio, overlap)


def closest_tool(name: str, registered: frozenset[str], cutoff: float) -> str | None:
    """The registered tool most like ``name``, when one is similar enough to be a rename."""
    best, score = None, cutoff
    for candidate in sorted(registered):
        similarity = _similarity(name, candidate)
        if similarity >= score and candidate != name:
            best, score = candidate, similarity
    return best


@detector("unknown_tool", version=2, params=UnknownToolParams)
def unknown_tool(session: Session, params: UnknownToolParams) -> list[Signal]:
    registry = session.registered_tools
    names = registry.names if registry is not None else frozenset()
    ignored = set(params.ignore)
    signals: list[Signal] = []
    reported: dict[str, Signal] = {}  # one signal per name: the first call, the others counted
    # Without a single rejecting result, only unregistered calls need their result looked up.
    rejections = any(_rejects(e) for e in session.events if e.kind is EventKind.TOOL_RESULT)
    results: dict[str, Event] | None = None
    for call in session.events:
        if call.kind is not EventKind.TOOL_CALL or not call.name or call.name in ignored:
            continue
        unregistered = registry is not None and call.name not in names and call.name not in registry
        if not (rejections or unregistered):
            continue
        result = None
        if call.call_id:
            if results is None:
                results = session.results_by_call()
            result = results.get(call.call_id)
        rejected = result is not None and _rejects(result)
        if not (rejected or unregistered):
            continue
        events = [call.index] + ([result.index] if result is not None else [])
        earlier = reported.get(call.name)
        if earlier is not None:  # the same tool called again: one signal per session
            earlier.events += events
            earlier.data["repeats"] = earlier.data.get("repeats", 1) + 1
            continue
        closest = (
            closest_tool(call.name, registry.names, params.closest_cutoff) if registry else None
        )
        why = (
            "the harness answered that it has no such tool"
            if rejected
            else (
                f"it is not among the {len(registry.names) if registry else 0} tools registered "
                f"for this agent ({registry.source if registry else 'unknown'} list)"
            )
        )
        hint = f"; closest registered tool: `{closest}` (renamed?)" if closest else ""
        signal = reported[call.name] = Signal(
            kind="unknown_tool",
            value=call.name,
            events=events,
            severity=Severity.HIGH if rejected else Severity.MEDIUM,
            explanation=f"Called tool `{call.name}`, but {why}{hint}.",
            data={"closest": closest, "rejected": rejected},
        )
        signals.append(signal)
    return signals
