"""``invented_id``: a tool call passes an identifier the agent never saw.

Provenance is what the agent read: system prompts, user messages (typed or injected by the
harness, compaction summaries included) and earlier tool outputs. The agent's own text and its
earlier tool-call inputs are not provenance: an id the model wrote twice is still made up. Ids are
compared without case and found anywhere in the seen text (inside JSON, inside URLs).

Sessions hold thousands of events and most tool inputs hold no id, so nothing is done with the
seen text until a tool input yields an id candidate: only then is what arrived since the last
check lowercased (once) into a block, and the id looked for as a substring of the blocks. An id
found is seen for good; an id flagged is not checked again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from detectors.models import Severity, Signal
from detectors.params import InventedIdParams
from detectors.registry import detector
from sessions.models import EventKind, Session

UUID = r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
_UUID_MIDDLE = re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-")


class _Check(NamedTuple):
    """One id pattern, and what lets most tool inputs skip it.

    ``precheck`` is a fast search that matches wherever (and only where) a match of ``pattern``
    holds its ``char`` literal followed by the rest of its id body, at most ``reach`` characters
    after the match's start: a text it misses needs no run of the pattern, and a text it hits
    needs the pattern tried only just before each hit. A custom pattern has none of these.
    """

    name: str
    pattern: re.Pattern[str]
    precheck: re.Pattern[str] | None = None
    char: str | None = None
    reach: int = 0


_CACHE: dict[tuple[Any, ...], list[_Check]] = {}


def _compile(params: InventedIdParams) -> list[_Check]:
    key = (
        tuple(params.prefixes),
        params.min_body,
        params.uuids,
        tuple(params.patterns.items()),
    )
    compiled = _CACHE.get(key)
    if compiled is None:
        if len(_CACHE) >= 64:  # configs are few; never let a caller grow this without bound
            _CACHE.clear()
        compiled = _CACHE[key] = _compile_uncached(params)
    return compiled


def _compile_uncached(params: InventedIdParams) -> list[_Check]:
    compiled: list[_Check] = []
    if params.prefixes:
        stripped = [p.rstrip("_") for p in sorted(params.prefixes)]
        prefixes = "|".join(re.escape(p) for p in stripped)
        # The body must hold a digit or a capital: random ids do, `in_progress`-style code
        # identifiers do not.
        body = rf"(?=[A-Za-z0-9]*[0-9A-Z])[A-Za-z0-9]{{{params.min_body},}}"
        pattern = re.compile(rf"\b(?:{prefixes})_{body}\b")
        # `_` and a run of `min_body` or more alphanumerics whose first non-lowercase character
        # is a digit or a capital: `body` said faster (no backtracking through the run).
        precheck = re.compile(rf"_(?=[A-Za-z0-9]{{{params.min_body}}})[a-z]*+[0-9A-Z]")
        compiled.append(_Check("prefixed", pattern, precheck, "_", max(map(len, stripped))))
    if params.uuids:
        compiled.append(_Check("uuid", re.compile(UUID), _UUID_MIDDLE, "-", 8))
    compiled += [_Check(name, re.compile(regex)) for name, regex in params.patterns.items()]
    return compiled


def _finditer(check: _Check, text: str) -> Iterator[re.Match[str]]:
    """``check.pattern.finditer(text)``, with the pattern tried only near precheck hits.

    The first match from ``pos`` starts at most ``reach`` before the first hit from ``pos`` (its
    own hit is no earlier), so trying each start up to that hit finds it, or shows that none
    starts before the hit's next character. A pattern's ``\\b`` sees the text before ``pos``.
    """
    precheck = check.precheck
    if precheck is None:
        yield from check.pattern.finditer(text)
        return
    match = check.pattern.match
    pos = 0
    while (hit := precheck.search(text, pos)) is not None:
        start = hit.start()
        for begin in range(max(pos, start - check.reach), start + 1):
            if (found := match(text, begin)) is not None:
                yield found
                pos = found.end()
                break
        else:
            pos = start + 1


def _pattern_label(name: str, ident: str) -> str:
    """What kind of id it is, for grouping: `stripe:cus_`, `uuid` or the custom pattern's name."""
    return f"stripe:{ident.split('_', 1)[0]}_" if name == "prefixed" else name


# Type tuples bound once: `list | tuple` in a call builds a union object each time.
_SEQUENCE, _NUMBER = (list, tuple), (int, float)


def _strings(value: Any) -> Iterator[str]:
    """Every string (and number) value inside a tool input; keys are field names, not ids."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, _SEQUENCE):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, _NUMBER) and not isinstance(value, bool):
        yield str(value)


def input_strings(value: Any) -> list[str]:
    """Every string (and number) value inside a tool input, as strings."""
    return [value] if isinstance(value, str) else _collect(value, [])


def _collect(value: Any, out: list[str]) -> list[str]:
    """``list(_strings(value))``, built without a generator per nested value."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            if isinstance(item, str):  # the common case, inline
                out.append(item)
            elif item is not None and item is not True and item is not False:
                _collect(item, out)
    elif isinstance(value, _SEQUENCE):
        for item in value:
            _collect(item, out)
    elif isinstance(value, _NUMBER) and not isinstance(value, bool):
        out.append(str(value))
    return out


class _Seen:
    """What the agent has read so far, lowercased lazily (see the module docstring)."""

    def __init__(self) -> None:
        self.texts: list[str] = []  # every text read, as read
        self.blocks: list[str] = []  # texts[:blocked], lowercased and joined by NUL
        self.blocked = 0
        self.found: set[str] = set()  # lowercased ids known to be seen

    def add(self, text: str) -> None:
        if text:
            self.texts.append(text)

    def __contains__(self, ident: str) -> bool:
        key = ident.lower()
        if key in self.found:
            return True
        if "\0" in key:  # could straddle two joined texts: look text by text
            hit = any(key in text.lower() for text in self.texts)
        elif ident.isascii() and any(ident in text for text in self.texts):
            # An ASCII id read as written is read lowercased too (`lower` maps ASCII one to
            # one): found without lowercasing what was read, which only misses need.
            hit = True
        else:
            if self.blocked < len(self.texts):
                self.blocks.append("\0".join(t.lower() for t in self.texts[self.blocked :]))
                self.blocked = len(self.texts)
            hit = any(key in block for block in self.blocks)
        if hit:  # seen now means seen for good: later uses need no second look
            self.found.add(key)
        return hit


@detector("invented_id", version=2, params=InventedIdParams)
def invented_id(session: Session, params: InventedIdParams) -> list[Signal]:
    patterns = _compile(params)
    if not patterns:
        return []
    seen = _Seen()
    # A sub-agent's prompt is the parent's tool input, and the sub-agent reads it: once the
    # spawning call is checked, its input is provenance for the sub-agent's own calls.
    spawns = set((session.meta.get("subagent_calls") or {}).values())
    decided: set[str] = set()  # each id is flagged (or cleared) once per session
    signals: list[Signal] = []
    texts = seen.texts
    tool_result, tool_call = EventKind.TOOL_RESULT, EventKind.TOOL_CALL
    messages = (EventKind.SYSTEM, EventKind.USER)
    for event in session.events:
        kind = event.kind
        if kind is tool_result:
            if event.output:  # `seen.add`, inline
                texts.append(event.output)
            continue
        if kind in messages:
            if event.text:
                texts.append(event.text)
            continue
        if kind is not tool_call:
            continue
        value = event.input
        for text in [value] if isinstance(value, str) else _collect(value, []):
            for check in patterns:
                if check.char is not None and check.char not in text:
                    continue
                if check.precheck is not None and check.precheck.search(text) is None:
                    continue
                name = check.name
                for found in _finditer(check, text):
                    ident = found.group(0)
                    key = ident.lower()
                    if key in decided or ident in seen:
                        continue
                    decided.add(key)
                    signals.append(
                        Signal(
                            kind="invented_id",
                            value=ident,
                            events=[event.index],
                            severity=Severity.HIGH,
                            explanation=(
                                f"Passed {name} id `{ident}` to `{event.name or 'a tool'}`, "
                                "but it appears in nothing the agent had read (system prompt, "
                                "user messages, earlier tool output): it was made up."
                            ),
                            data={
                                "tool": event.name,
                                "pattern": _pattern_label(name, ident),
                            },
                        )
                    )
        if event.call_id in spawns:
            seen.add(" ".join(_strings(event.input)))
    return signals
