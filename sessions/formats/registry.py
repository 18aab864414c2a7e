"""The format registry: one adapter per session format, detected from the parsed document.

An adapter is a plain function ``parse(doc) -> Iterable[Session]`` registered with a name and a
``sniff(doc) -> bool`` predicate. Detection asks the adapters in ``priority`` order (lower
first), so a specific format (Claude Code lines) is tried before a generic one (any object with
``messages``). An adapter may also register ``link(sessions) -> sessions``, run once per group of
files read together, to join sessions that one file cannot see whole (Claude Code sub-agents).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sessions.documents import Document
from sessions.errors import ConfigError, UnknownFormatError
from sessions.models import Session

Parse = Callable[[Document], Iterable[Session]]
Sniff = Callable[[Document], bool]
Link = Callable[[list[Session]], list[Session]]


@dataclass(frozen=True, slots=True)
class Adapter:
    name: str
    parse: Parse
    sniff: Sniff
    priority: int = 100
    link: Link | None = None


_ADAPTERS: dict[str, Adapter] = {}


def adapter(
    name: str, *, sniff: Sniff, priority: int = 100, link: Link | None = None
) -> Callable[[Parse], Parse]:
    """Register ``parse`` as the adapter for format ``name``."""

    def register(parse: Parse) -> Parse:
        if name in _ADAPTERS:
            raise ValueError(f"format {name!r} is registered twice")
        _ADAPTERS[name] = Adapter(name, parse, sniff, priority, link)
        return parse

    return register


def adapters() -> list[Adapter]:
    return sorted(_ADAPTERS.values(), key=lambda a: (a.priority, a.name))


def format_names() -> list[str]:
    return sorted(_ADAPTERS)


def get_adapter(name: str) -> Adapter:
    try:
        return _ADAPTERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown format {name!r}: choose one of {', '.join(format_names())}, or 'auto'"
        ) from None


def detect(doc: Document) -> Adapter:
    for candidate in adapters():
        try:
            if candidate.sniff(doc):
                return candidate
        except (KeyError, TypeError, AttributeError, IndexError):
            continue
    shape = "JSON Lines" if doc.jsonl else type(doc.data).__name__
    raise UnknownFormatError(
        f"{doc.source}: no known session format matches this {shape} file "
        f"(known: {', '.join(format_names())})"
    )
