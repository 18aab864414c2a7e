"""``faithfulness_violation``: a reply cites an entity that nothing the agent saw supports.

Each assistant reply (its own text, not harness-injected or compaction text) is checked against
the context before it: system and user messages and tool outputs (or, with ``context_keys``, only
those JSON fields of tool outputs). Seven entity kinds are checked (see ``detectors.entities``):
case/ticket ids, SKUs and model numbers, error codes, percentages, money, counts with a noun and
date scopes. A number is supported when context holds it (in any written form, or rounded to the
precision the reply wrote it with), within ``tolerance`` when the reply marks it approximate, or
as the sum of two same-kind context numbers, of all of one context event's or of neighbouring
numbers under one key of a JSON output (a reservation's flight prices) or in one column of a text
table (a query's rows); one marked approximate may be near such a total. A reply may also work a
number out from its own supported ones (a sum, a difference, an amount times a count it states),
and a later reply may restate what an earlier one worked out. When the supported
share of a reply's entities is below ``threshold``, every unsupported entity is a signal; the
first one carries the audit record in ``data["audit"]``. Each event is read at most once, and only
as far as a reply's entities need (most replies cite none; most tool outputs are never read).
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Any

import orjson

from detectors.entities import (
    KINDS,
    MONTH_NAMES,
    WORD_RANGE,
    Entity,
    clean,
    context_counts,
    context_digit_numbers,
    context_word_numbers,
    count_totals,
    digit_runs,
    extract,
    line_numbers,
    line_scopes,
    may_hold_entities,
    number_at,
    quoted_scopes,
    scan,
    scope_keys,
    view_row,
    view_rows,
    view_rows_above,
    viewed_lines,
)
from detectors.models import Severity, Signal
from detectors.params import FaithfulnessParams
from detectors.registry import detector
from sessions.models import Event, EventKind, Session

KIND = "faithfulness_violation"
# Event kinds, bound once: looking up an enum member costs more than the test it is for.
_RESULT, _USER, _SYSTEM = EventKind.TOOL_RESULT, EventKind.USER, EventKind.SYSTEM
_ASSISTANT = EventKind.ASSISTANT
_PREFIX_NUM = re.compile(r"[ \t]*\d+(?:→|[ \t]*\|)")
_EPS = 1e-9
_ID_LABEL = re.compile(r"^SKU[\s:#]+", re.IGNORECASE)  # "SKU HO-JKT-M-NVY": the label, not the code
# What every money entity holds (see `entities._NUMERIC`).
_MONEY_SIGNS = ("$", "€", "£", "USD", "EUR", "GBP", "dollars", "usd", "euros")


class _Pool:
    """Sorted numbers with lazy sorting, for range queries; ``pairs``: also counted by value,
    for ``pair_sum`` (not kept for the pools only ranges are asked of: counting a long JSON
    output's numbers costs about as much as reading them)."""

    def __init__(self, *, pairs: bool = True) -> None:
        self.values: list[float] = []
        self.exact: Counter[float] = Counter()
        self._pairs = pairs
        self._sorted = True

    def extend(self, values: list[float]) -> None:
        """Add an event's numbers."""
        if values:
            self.values += values
            if self._pairs:
                self.exact.update(map(round, values, repeat(6)))
            self._sorted = False

    def any_between(self, low: float, high: float) -> bool:
        if not self._sorted:
            self.values.sort()
            self._sorted = True
        i = bisect.bisect_left(self.values, low - _EPS)
        return i < len(self.values) and self.values[i] <= high + _EPS

    def pair_sum(self, target: float) -> bool:
        """Whether two different context numbers add up to it (a pool made with ``pairs``
        only). Not a number twice: a document quoted in two outputs states its `$5,000` cap twice,
        which is no `$10,000` (listed equal prices are summed by ``run_sums``)."""
        assert self._pairs, "a pool made without pairs is not counted by value"
        for value in self.exact:
            rest = round(target - value, 6)
            if rest != value and rest in self.exact:
                return True
        return False


class _Event:
    """One context event's text; what is read from it is computed on first need and kept (in
    attributes by hand: mypyc compiles ``functools.cached_property`` as a property that keeps
    nothing)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._clean_: str | None = None
        self._entities_: list[Entity] | None = None
        self._norms_: set[str] | None = None
        self._ids_: set[str] | None = None
        self._scopes_: set[str] | None = None
        self._viewed_: list[float] | None = None
        self._counts_: list[float] | None = None
        self._count_totals_: set[float] | None = None
        self._bare_: list[float] | None = None
        self._words_: list[float] | None = None
        self._digits_: set[str] | None = None
        self._run_sums_: set[float] | None = None
        self._has_money_sign_: bool | None = None
        self._values_: dict[str, list[float]] | None = None
        self._columns_: dict[str, list[float]] | None = None
        self._columns_read = False

    @property
    def clean(self) -> str:
        if self._clean_ is None:
            self._clean_ = clean(self.text)
        return self._clean_

    @property
    def entities(self) -> list[Entity]:
        if self._entities_ is None:
            self._entities_ = extract(self.clean, context=True, is_clean=True)
        return self._entities_

    @property
    def norms(self) -> set[str]:
        if self._norms_ is None:
            self._norms_ = {e.norm for e in self.entities}
        return self._norms_

    @property
    def ids(self) -> set[str]:
        if self._ids_ is None:
            self._ids_ = {e.norm for e in self.entities if e.value is None and e.kind != "date"}
        return self._ids_

    @property
    def scopes(self) -> set[str]:
        if self._scopes_ is None:
            self._scopes_ = {
                k for e in self.entities if e.kind == "date" for k in scope_keys(e.norm)
            }
        return self._scopes_

    @property
    def viewed(self) -> list[float]:
        if self._viewed_ is None:
            self._viewed_ = viewed_lines(self.text)
        return self._viewed_

    @property
    def counts(self) -> list[float]:
        if self._counts_ is None:
            self._counts_ = context_counts(self.clean, is_clean=True)
        return self._counts_

    @property
    def count_totals(self) -> set[float]:
        if self._count_totals_ is None:
            self._count_totals_ = count_totals(self.clean, is_clean=True)
        return self._count_totals_

    @property
    def bare(self) -> list[float]:
        if self._bare_ is None:
            self._bare_ = self._read_bare()
        return self._bare_

    def _read_bare(self) -> list[float]:
        # An ISO date's parts are no figures (`2025-01-31` backs no "nearly 2,000 users").
        text = self.clean
        if "-" in text:
            text = _ISO_DATE.sub(" ", text)
        return context_digit_numbers(text, is_clean=True)

    @property
    def words(self) -> list[float]:
        if self._words_ is None:
            self._words_ = context_word_numbers(self.clean, is_clean=True)
        return self._words_

    @property
    def digits(self) -> set[str]:
        if self._digits_ is None:
            self._digits_ = digit_runs(self.text)
        return self._digits_

    @property
    def columns(self) -> dict[str, list[float]] | None:
        """A JSON output's numbers by key path (see ``json_columns``); None for other text."""
        if not self._columns_read:
            self._columns_ = json_columns(self.text)
            self._columns_read = True
        return self._columns_

    @property
    def run_sums(self) -> set[float]:
        """Totals a reply may state from an output: the sums of two or more neighbouring numbers
        under the same JSON key path (the prices of a reservation's flights, the legs of a
        connection) or in one column of a text table (a query's rows), within runs of at most
        ``_RUN`` items."""
        if self._run_sums_ is None:
            self._run_sums_ = self._read_run_sums()
        return self._run_sums_

    def _read_run_sums(self) -> set[float]:
        columns = self.columns
        return _column_sums(table_columns(self.text) if columns is None else columns.values())

    @property
    def has_money_sign(self) -> bool:
        if self._has_money_sign_ is None:
            self._has_money_sign_ = self._read_has_money_sign()
        return self._has_money_sign_

    def _read_has_money_sign(self) -> bool:
        # `in` for each (not one regex: the regex engine scans character classes slowly).
        return any(sign in self.text for sign in _MONEY_SIGNS)

    def values(self, kind: str) -> list[float]:
        if kind == "count":
            return self.counts
        values = self._values.get(kind)
        if values is None:
            values = [e.value for e in self.entities if e.kind == kind and e.value is not None]
            self._values[kind] = values
        return values

    @property
    def _values(self) -> dict[str, list[float]]:
        if self._values_ is None:
            self._values_ = {}  # kind -> `values(kind)`
        return self._values_

    def total(self, kind: str) -> float | None:
        """The sum of this event's numbers of ``kind``, added in order (as a reply might)."""
        values = self.values(kind)
        if not values:
            return None
        total = 0.0
        for value in values:
            total += value
        return round(total, 6)


_RUN = 8  # the longest run of listed numbers summed (a reservation's flights, an order's items)
_RUN_SUMS_MAX = 20_000  # sums kept per output: a huge listing is not summed without bound
_ACROSS = 8  # the newest outputs whose like fields are summed across calls


def json_columns(text: str) -> dict[str, list[float]] | None:
    """The numbers of the JSON document ``text`` by key path (see ``_json_columns``); None when
    ``text`` is not JSON."""
    if text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return _json_columns(orjson.loads(text))
    except orjson.JSONDecodeError:
        return None


def json_run_sums(text: str) -> set[float]:
    """Sums (rounded to cents) of 2 to ``_RUN`` consecutive numbers under one key path of the
    JSON document ``text`` (list positions ignored); empty when ``text`` is not JSON."""
    return _column_sums((json_columns(text) or {}).values())


def _column_sums(columns: Iterable[list[float]]) -> set[float]:
    sums: set[float] = set()
    for values in columns:
        for start in range(len(values) - 1):
            total = values[start]
            for value in values[start + 1 : start + _RUN]:
                total += value
                sums.add(round(total, 2))
            if len(sums) > _RUN_SUMS_MAX:
                return sums
    return sums


# A table's rule line (`-------+-------`, `|---|:--:|`, `=====  ====`): no cell of its own.
_RULE_LINE = re.compile(r"[\s|+:=-]*-[\s|+:=-]*")
# A cell that is one number: a sign, a currency sign or code, thousands separators, a percent.
_CELL_NUMBER = re.compile(
    r"[(+-]?\s*(?:[$€£]|(?:USD|EUR|GBP)\s?)?[+-]?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"\s*(?:%|USD|EUR|GBP|\)?)"
)
_TABLE_COLUMNS_MAX = 5_000  # table lines read per output: a huge listing is not read whole


def table_columns(text: str) -> list[list[float]]:
    """The numeric cells of the tables in a text output, by column: rows split at `|` (psql,
    markdown), tabs, or commas (CSV, quoted fields read as such), a table being consecutive rows
    with the same number of cells (rule lines skipped). A cell counts when it is one number, so a
    header row or a text cell adds nothing; each column's numbers are listed in row order. A
    Python list of row tuples, as a database driver prints a query's rows (`[('2026-03', 41),
    ('2026-04', 58)]`), is read as such a table."""
    if text[:2] == "[(" and text.rstrip()[-2:] == ")]":
        records = _REPR_ROW.findall(text)
        text = "\n".join(records) if len(records) >= 2 else text
    if "\n" not in text or ("|" not in text and "\t" not in text and "," not in text):
        return []
    columns: list[list[float]] = []
    block: list[list[float]] = []  # the current table's columns
    width = 0
    rows = 0
    lines = text.splitlines()
    if _is_file_view(lines):  # `  15|- Restarts: 9`: the line numbers are no column
        lines = [_VIEW_PREFIX.sub("", line, count=1) for line in lines]
    for line in lines:
        cells = _cells(line)
        if cells is None:  # a rule line: part of the table, no cells
            continue
        if len(cells) != width:
            if rows >= 2:
                columns += block
            block, width, rows = [[] for _ in cells], len(cells), 0
        if width < 2:
            continue
        rows += 1
        for column, cell in zip(block, cells, strict=True):
            cell = cell.strip()
            m = _CELL_NUMBER.fullmatch(cell)
            if m is not None:
                value = float(m.group(1).replace(",", ""))
                negative = "-" in cell[: m.start(1)] or cell[:1] == "("
                column.append(-value if negative else value)
        if rows > _TABLE_COLUMNS_MAX:
            break
    if rows >= 2:
        columns += block
    return [c for c in columns if len(c) >= 2]


_REPR_ROW = re.compile(r"\(([^()\n]*)\)")
_VIEW_PREFIX = re.compile(r"^\s*(\d+)(?:\u2192|\||\t)")


def _is_file_view(lines: list[str]) -> bool:
    """Whether ``lines`` open as a numbered file view (`  1|...`, `  2→...`): the first two
    lines' prefixes number them one after the other."""
    first = _VIEW_PREFIX.match(lines[0]) if lines else None
    second = _VIEW_PREFIX.match(lines[1]) if len(lines) > 1 else None
    return first is not None and second is not None and int(second[1]) == int(first[1]) + 1


def _cells(line: str) -> list[str] | None:
    """A line's cells, or ``None`` for a table's rule line."""
    if "-" in line and _RULE_LINE.fullmatch(line):
        return None
    if "|" in line:
        line = line.strip()
        return line[line[:1] == "|" : len(line) - (line[-1:] == "|")].split("|")
    if "\t" in line:
        return line.split("\t")
    if "," in line:
        return next(csv.reader([line])) if '"' in line else line.split(",")
    return []


def _json_columns(data: Any) -> dict[str, list[float]]:
    """The numbers of a parsed JSON document by key path (list positions ignored): each path's
    in document order, the paths in the order they first appear. An object whose members are
    all numbers (a breakdown: `{"email": 245, "chat": 167}`) is also a column of its own; one
    whose members are all objects is read as a list of records."""
    columns: defaultdict[str, list[float]] = defaultdict(list)
    breakdowns = 0
    # Iterators over (path, value) pairs: a container's children are read in order, a nested
    # container's before the rest of its parent's (document order, without recursion, whose
    # depth a document could exceed); paths are made in C, and a string is passed over.
    stack: list[Iterator[tuple[str, Any]]] = [iter([("", data)])]
    while stack:
        for path, node in stack[-1]:
            kind = type(node)  # orjson makes exactly these types (a bool is not an int here)
            if kind is dict:
                members = node.values()
                if len(node) >= 2 and all(type(v) is int or type(v) is float for v in members):
                    breakdowns += 1
                    columns[f"{path}.*{breakdowns}"] = [float(v) for v in members]
                if len(node) >= 2 and all(type(v) is dict for v in members):
                    # Records by name (`{"EMEA": {"tickets": 1204}, "AMER": {...}}`): a list's
                    # items, so one field across them is a column.
                    stack.append(zip(repeat(f"{path}.*"), members))
                else:
                    stack.append(zip(map(f"{path}.".__add__, node), members, strict=True))
                break
            if kind is list:
                stack.append(zip(repeat(f"{path}[]"), node))
                break
            if kind is int or kind is float:
                columns[path].append(float(node))
        else:
            stack.pop()
    return columns


# System prompt -> its `_Event`: an agent's sessions share one system prompt, and its facts (a
# policy full of amounts and dates) cost more to read than the rest of a short session.
_SHARED: dict[str, _Event] = {}


def _shared_event(text: str) -> _Event:
    event = _SHARED.get(text)
    if event is None:
        if len(_SHARED) >= 64:  # a night's agents are few; never grow without bound
            _SHARED.clear()
        event = _SHARED[text] = _Event(text)
    return event


# A count of a file's lines, which a file view's line-number prefixes support (`48→` as the
# last row: "the file has 48 lines"); a count of anything else they do not.
_LINE_NOUN = re.compile(r"\b(?:lines?|rows?|LOC|SLOC)\b", re.IGNORECASE)


def _counts_lines(e: Entity) -> bool:
    return _LINE_NOUN.search(e.raw) is not None


def _between(values: list[float], low: float, high: float) -> bool:
    return any(low - _EPS <= v <= high + _EPS for v in values)


def _in_range(e: Entity, value: float, low: float, high: float) -> bool:
    """Whether a context number ``value`` supports ``e`` in range ``low``-``high`` (see
    ``_Context._range``): as it is, or as a fraction for a percentage (`0.12` for 12%)."""
    return low - _EPS <= value <= high + _EPS or (
        e.kind == "percent" and low / 100 - _EPS <= value <= high / 100 + _EPS
    )


def _wants_words(e: Entity, low: float, high: float) -> bool:
    """Whether a number word (0 to 109) may fall in the range ``e`` is checked against."""
    ranges = [(low, high)] + ([(low / 100, high / 100)] if e.kind == "percent" else [])
    return any(a - _EPS <= WORD_RANGE[1] and b + _EPS >= WORD_RANGE[0] for a, b in ranges)


_LONG_TEXT = 512  # see `_Context.add`
_ISO_DATE = re.compile(r"(?<![\w.-])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?")


def _in_iso_date(text: str, at: int) -> bool:
    """Whether the number at ``at`` is part of an ISO date (`2024-05-15`, with a time or not)."""
    if at and text[at - 1] not in "-T :" and not text[at - 1].isdigit():
        return False  # a date's second part or later follows a dash, a `T`, a blank or a colon
    if text.find("-", max(0, at - 20), at + 6) < 0:
        return False  # every ISO date holds a dash near each of its parts (a look, not a regex)
    return any(
        m.start() <= at < m.end() for m in _ISO_DATE.finditer(text, max(0, at - 26), at + 26)
    )


class _Context:
    """The context so far, read lazily: an entity is first looked for in the events holding it
    as written (newest first); only when that fails are all events read into the pools the full
    check needs. More context only adds support, so this answers as reading everything would."""

    def __init__(self, params: FaithfulnessParams) -> None:
        self.params = params
        self.texts: list[str] = []  # the events' texts, and their `_Event`s once first read
        self._events: list[_Event | None] = []
        facets = ("entities", "money", "counts", "bare", "words", "digits")
        self.merged = dict.fromkeys(facets, 0)  # events read
        self.ids: set[str] = set()
        self.digits: set[str] = set()
        self.scopes: set[str] = set()
        self.kinds: dict[str, _Pool] = defaultdict(_Pool)
        self.totals: dict[str, set[float]] = defaultdict(set)
        self.bare = _Pool(pairs=False)
        self.words = _Pool(pairs=False)
        # Numbers earlier replies worked out from supported ones (a total they computed): a
        # later reply restating one is as supported as the reply that worked it out.
        self.worked: set[tuple[str, str]] = set()
        # Supported numbers earlier replies stated, by kind (the newest last, a bounded few): a
        # later reply may work from them ("$2,787 paid, $216 now: $2,571 back").
        self.stated: defaultdict[str, list[float]] = defaultdict(list)
        # Entities found supported: more context only adds support, so one a later reply cites
        # again (a session's replies restate its numbers) is not looked for again.
        self.supported: set[Entity] = set()
        self._across_sums: tuple[int, set[float]] | None = None  # (events read, `_across`)
        # The texts added, each once: short ones in a set, long ones by length, compared only
        # with those as long (hashing each long tool output would cost more than the rare match).
        self._added: set[str] = set()
        self._added_long: dict[int, list[str]] = {}

    def add(self, text: str, *, shared: bool = False) -> None:
        """Add an event's text; ``shared``: one that other sessions hold too (a system prompt),
        whose facts are read once for all of them."""
        # The same output again (a document retrieved twice) adds no fact, and must not double
        # its numbers (`$5,000` twice is no support for `$10,000`).
        if not text or text.isspace():
            return
        if len(text) < _LONG_TEXT:
            if text in self._added:
                return
            self._added.add(text)
        else:
            same_length = self._added_long.setdefault(len(text), [])
            if text in same_length:
                return
            same_length.append(text)
        self.texts.append(text)
        self._events.append(_shared_event(text) if shared else None)

    def event(self, i: int) -> _Event:
        """Event ``i``, made on first need (most events are never read)."""
        event = self._events[i]
        if event is None:
            event = self._events[i] = _Event(self.texts[i])
        return event

    def _holding(self, written: re.Pattern[str]) -> Iterator[tuple[_Event, re.Match[str]]]:
        """The events ``written`` matches in, newest first, each with its first match. Each
        event is searched on its own, from the newest back, so a caller that stops at a recent
        event never reads the rest."""
        texts, search = self.texts, written.search
        for i in range(len(texts) - 1, -1, -1):
            if (m := search(texts[i])) is not None:
                yield self.event(i), m

    def _merge(self, facet: str) -> None:
        """Add what ``facet`` reads from the events not yet read to the pools."""
        kinds = {"entities": ("percent",), "money": ("money",), "counts": ("count",)}.get(facet, ())
        for i in range(self.merged[facet], len(self.texts)):
            event = self.event(i)
            if facet == "money" and not event.has_money_sign:
                continue  # no money entity without one (cleaning only removes characters)
            if facet == "entities":
                self.ids |= event.ids
                self.scopes |= event.scopes
            elif facet == "bare":
                self.bare.extend(event.bare)
            elif facet == "words":
                self.words.extend(event.words)
            elif facet == "digits":
                self.digits |= event.digits
            for kind in kinds:
                self.kinds[kind].extend(event.values(kind))
                total = event.total(kind)
                if total is not None:
                    self.totals[kind].add(total)
        self.merged[facet] = len(self.texts)

    def _range(self, e: Entity) -> tuple[float, float]:
        """The values ``e`` may stand for: its rounding interval, widened when approximate."""
        value = e.value or 0.0
        mantissa = value / e.scale
        half = 0.5 * 10 ** (-e.decimals) * e.scale  # what rounding to the written precision hides
        low, high = mantissa * e.scale - half, mantissa * e.scale + half
        if e.qualifier == "approx":
            slack = abs(value) * self.params.tolerance
            low, high = min(low, value - slack), max(high, value + slack)
        return low, high

    def supports(self, e: Entity) -> bool:
        if e in self.supported:
            return True
        if self._supports(e):
            self.supported.add(e)
            return True
        return False

    def _supports(self, e: Entity) -> bool:
        if min(self.merged.values()) < len(self.texts):
            key, word = _key(e)
            # Events holding it as written (a number not inside a longer one), newest first.
            written = _written(key, word)
            # First only the lines holding it (cheap, and enough for most entities) ...
            if not word and any(self._in_lines(e, form) for form in _line_forms(e, key, written)):
                return True
            # ... a count as the sum of the newest events' counts (a stated test total) ...
            if e.kind == "count" and e.value is not None and self._recent_sum(e.value):
                return True
            # ... then the whole of those events (a number's full check reads all events).
            if e.value is None:
                for event, _ in self._holding(written):
                    if self._quick(event, e):
                        return True
        return self._full(e)

    def _in_lines(self, e: Entity, written: re.Pattern[str]) -> bool:
        """Whether the lines of an event ``written`` matches in support ``e`` (newest first)."""
        return any(self._lines(*at, e, written) for at in self._holding(written))

    def _recent_sum(self, value: float) -> bool:
        """Whether ``value`` is the total of one of the newest events' counts (all of them, or
        those of one word: `86 passed`, `34 passed`, `12 passed`) or the sum of two of their
        counts (a subset of what ``_full`` checks)."""
        pool = _Pool()
        value = round(value, 6)
        for i in range(max(0, len(self.texts) - 4), len(self.texts)):
            event = self.event(i)
            if event.total("count") == value or value in event.count_totals:
                return True
            pool.extend(event.counts)
        return pool.pair_sum(value)

    def _lines(
        self, event: _Event, first: re.Match[str], e: Entity, written: re.Pattern[str]
    ) -> bool:
        """Whether the lines of ``event`` holding ``e`` as written (the first at ``first``)
        support it (a subset of what ``_quick`` checks, read from those lines alone)."""
        text = event.text
        if e.value is None and e.kind != "date":
            return len(e.digits) >= 3  # the key is the digit run: `event.digits` holds it
        low, high = self._range(e) if e.value is not None else (0.0, 0.0)
        m: re.Match[str] | None = first
        for _ in range(8):
            if m is None:
                return False
            at = m.start()
            start = text.rfind("\n", 0, at) + 1
            if e.kind == "date":
                # The quoted stretch first: a one-line JSON output's line is long.
                if e.norm in quoted_scopes(text, start, at) or e.norm in line_scopes(text, start):
                    return True
            elif _in_iso_date(text, at):
                pass  # `2024-05-15` is a day, not the figure 15 (as `bare` reads it too)
            else:
                # The number where the key stands first: most often it settles the line alone.
                value = number_at(text, start, at)
                if value is not None and _in_range(e, value, low, high):
                    return True
                counted, bare = line_numbers(text, start, at, counts=e.kind == "count")
                if _between(counted, low, high) or _between(bare, low, high):
                    return True
                if e.kind == "percent" and _between(bare, low / 100, high / 100):
                    return True
                if (
                    e.kind == "count"
                    and _counts_lines(e)
                    and _PREFIX_NUM.match(text, start)
                    and not _rows_past(text, start, high)
                    and _viewed_between(event, start, low, high)
                ):
                    return True  # the key is a file view's line number (read last: it is slow)
            end = text.find("\n", m.end())
            if end < 0:
                return False
            m = written.search(text, end + 1)
        return False

    def _quick(self, event: _Event, e: Entity) -> bool:
        """Whether this one event supports ``e`` (a subset of what ``_full`` checks)."""
        if e.kind == "date":
            return e.norm in event.scopes
        if e.value is None:
            return (len(e.digits) >= 3 and e.digits in event.digits) or e.norm in event.ids
        low, high = self._range(e)
        values = event.values(e.kind)
        if _between(values, low, high) or event.total(e.kind) == round(e.value, 6):
            return True
        if e.kind == "count" and _counts_lines(e) and _between(event.viewed, low, high):
            return True
        if e.qualifier == "gt" and values and max(values) >= e.value:
            return True
        if e.qualifier == "lt" and values and min(values) <= e.value:
            return True
        for bare in (event.bare, event.words if _wants_words(e, low, high) else []):
            if _between(bare, low, high) or (
                e.kind == "percent" and _between(bare, low / 100, high / 100)
            ):
                return True
        return False

    def _full(self, e: Entity) -> bool:
        """The check against every event, reading (and pooling) only what it needs, cheap first."""
        if e.value is None and e.kind != "date" and len(e.digits) >= 3:
            self._merge("digits")
            if e.digits in self.digits:
                return True
        if e.value is None:
            self._merge("entities")
            if e.norm in (self.scopes if e.kind == "date" else self.ids):
                return True
            # An identifier written in the context as it is, in a form the context's own
            # extraction does not read as one (`"sku": "HO-JKT-M-NVY"`, no `SKU` before it).
            code = _ID_LABEL.sub("", e.raw).lower()
            return (
                e.kind != "date" and len(code) >= 4 and any(code in t.lower() for t in self.texts)
            )
        self._merge({"count": "counts", "money": "money"}.get(e.kind, "entities"))
        pool, value = self.kinds[e.kind], e.value
        low, high = self._range(e)
        if pool.any_between(low, high):
            return True
        if e.qualifier == "gt" and pool.values and max(pool.values) >= value:
            return True
        if e.qualifier == "lt" and pool.values and min(pool.values) <= value:
            return True
        if round(value, 6) in self.totals[e.kind] or pool.pair_sum(value):
            return True
        if e.kind == "count" and _counts_lines(e) and self._viewed_between(low, high):
            return True
        self._merge("bare")
        if e.kind == "percent" and self.bare.any_between(low / 100, high / 100):
            return True  # 12% from a `"rate": 0.12` field
        if self.bare.any_between(low, high):
            return True
        if _wants_words(e, low, high):  # a number word may stand for it
            self._merge("words")
            if e.kind == "percent" and self.words.any_between(low / 100, high / 100):
                return True
            if self.words.any_between(low, high):
                return True
        # Last (the slowest): a total of an output's listed numbers (a JSON key's, a column's).
        if e.kind not in ("money", "count"):
            return False
        if e.qualifier == "approx":  # "roughly $1.3M": near a total, not equal to one
            return any(_between(list(sums), low, high) for sums in self._sums(self.totals[e.kind]))
        return e.qualifier == "" and any(round(value, 2) in sums for sums in self._sums())

    def _viewed_between(self, low: float, high: float) -> bool:
        """Whether a file view's length (its last line numbers) is in range."""
        return any(
            _between(self.event(i).viewed, low, high)
            for i in range(len(self.texts) - 1, -1, -1)
            if "→" in self.texts[i] or "|" in self.texts[i]
        )

    def _sums(self, *first: set[float]) -> Iterator[set[float]]:
        """``first``, then each output's ``run_sums``, newest first (each read on first need),
        then the sums across the newest outputs (``_across``)."""
        yield from first
        for i in range(len(self.texts) - 1, -1, -1):
            yield self.event(i).run_sums
        yield self._across()

    def _across(self) -> set[float]:
        """Sums of neighbouring numbers under one key path across the newest ``_ACROSS``
        JSON outputs (one field of separate calls: two brokers' `held_shipments`)."""
        if self._across_sums is None or self._across_sums[0] != len(self.texts):
            merged: defaultdict[str, list[float]] = defaultdict(list)
            for i in range(max(0, len(self.texts) - _ACROSS), len(self.texts)):
                for path, values in (self.event(i).columns or {}).items():
                    merged[path] += values
            self._across_sums = (len(self.texts), _column_sums(merged.values()))
        return self._across_sums[1]

    def excerpt_for(self, entities: list[Entity]) -> str:
        """About 300 characters of the context event sharing most entities with the reply."""
        if not self.texts:
            return ""
        wanted = {e.norm for e in entities}
        newest_first = range(len(self.texts) - 1, -1, -1)
        event = self.event(max(newest_first, key=lambda i: len(self.event(i).norms & wanted)))
        text, norms = event.clean, event.norms
        shared = [e for e in entities if e.norm in norms]
        at = next((text.find(e.raw) for e in shared if text.find(e.raw) >= 0), 0)
        start = max(0, at - 100)
        return " ".join(text[start : start + 300].split())[:300]


# (key, word) -> the pattern of `_written`: entities repeat keys (small counts, years), and
# compiling a pattern costs far more than searching with it.
_WRITTEN: dict[tuple[str, bool], re.Pattern[str]] = {}


def _written(key: str, word: bool) -> re.Pattern[str]:
    """How an event holding an entity with ``key`` as written is found: a word without case, a
    number (or date) as a number of its own (not next to another digit)."""
    pattern = _WRITTEN.get((key, word))
    if pattern is None:
        if len(_WRITTEN) >= 4096:  # bounded: a night's keys repeat, but never grow for good
            _WRITTEN.clear()
        tail = "" if word else rf"(?!\d)(?<!\d{re.escape(key)})"
        pattern = re.compile(re.escape(key) + tail, re.IGNORECASE if word else 0)
        _WRITTEN[key, word] = pattern
    return pattern


def _line_forms(e: Entity, key: str, written: re.Pattern[str]) -> list[re.Pattern[str]]:
    """How the lines that may support ``e`` are found, the likeliest first: ``written`` (the
    pattern of ``key``) and, for a number written with thousands separators, the number without
    them (a tool's JSON output holds `1625.0` where the reply writes `$1,625`: else only the
    full check, reading every event's numbers, finds it). A month's lines are those holding its
    ISO form (`2024-05`, as JSON outputs write dates) or its name (`May 20, 2024`): every date
    of that month holds one, where its year alone is in most lines of a session."""
    if e.kind == "date":
        month = e.norm.partition("-")[2]
        if month.isdigit():
            name = MONTH_NAMES[int(month) - 1]
            return [_written(e.norm, False), _written(name, False)]
        return [written]
    if "," in key:
        return [written, _written(key.replace(",", ""), False)]
    return [written]


def _rows_past(text: str, start: int, high: float) -> bool:
    """Whether the file-view row at ``start`` or one of the next few holds text and a line
    number above ``high``: then so do the view's last line with text and its last line, so
    ``viewed_lines`` (slow on a long view) cannot be in range and need not be read."""
    for _ in range(4):
        row = view_row(text, start)
        if row is not None and row[1] and row[0] > high + _EPS:
            return True
        end = text.find("\n", start)
        if end < 0:
            return False
        start = end + 1
    return False


def _viewed_between(event: _Event, start: int, low: float, high: float) -> bool:
    """``_between(event.viewed, low, high)``, where ``start`` is a file-view row's line start.
    When that row's number is in range and no row's (or, for a row holding text, no such row's)
    is above ``high``, the view's last line (with text) is in range: one search answers,
    without ``viewed_lines`` making a match of every row of a long view."""
    if "viewed" not in vars(event) and high + _EPS < 2**53:  # not yet read; exact integers
        row = view_row(event.text, start)
        if (
            row is not None
            and _between([float(row[0])], low, high)
            and not view_rows_above(event.text, math.floor(high + _EPS), filled=row[1])
            and view_rows(event.text, 3)
        ):
            return True
    return _between(event.viewed, low, high)


_WORD = re.compile(r"\w+")
_NUMBER_KEY = re.compile(r"\d(?:[\d,.]*\d)?")


def _key(e: Entity) -> tuple[str, bool]:
    """What an event holding ``e`` most likely contains as written, and whether it is a word (to
    look for in lower case). It only orders the search: the answer does not depend on it."""
    if e.value is None and e.kind != "date":
        if len(e.digits) >= 3:
            return e.digits, False
        return max(_WORD.findall(e.raw.lower()), key=len, default=""), True
    found = _NUMBER_KEY.search(e.norm if e.kind == "date" else e.raw)
    return (found.group(0) if found else ""), False


def _context_text(event: Event, keys: list[str]) -> str:
    if event.kind is not _RESULT:
        return event.text
    if not keys:
        return event.output
    try:
        data = json.loads(event.output)
    except ValueError:
        return event.output
    found: list[str] = []
    _collect(data, set(keys), found)
    return "\n".join(found)


def _collect(data: Any, keys: set[str], found: list[str]) -> None:
    if isinstance(data, dict):
        for key, value in data.items():
            if key in keys:
                found.append(value if isinstance(value, str) else json.dumps(value))
            else:
                _collect(value, keys, found)
    elif isinstance(data, list):
        for item in data:
            _collect(item, keys, found)


def _is_reply(event: Event) -> bool:
    return (
        event.kind is _ASSISTANT
        and event.subagent is None
        and bool(event.text)
        and not event.meta.get("synthetic")
        and not event.meta.get("compaction")
    )


def _explain(e: Entity, tolerance: float) -> str:
    if e.value is None and e.kind != "date":
        return f"Reply cites {e.raw}, which appears nowhere in what the agent saw"
    if e.kind == "date":
        return f"Reply names the period {e.raw}, which no date in what the agent saw falls in"
    return (
        f"Reply states {e.raw}, which matches no {e.kind.replace('_', ' ')} in what the agent saw "
        f"(exactly, rounded, within {tolerance:.0%} when marked approximate, or as a sum)"
    )


def check_reply(
    reply: Event, context: _Context, params: FaithfulnessParams, *, audit_all: bool = True
) -> tuple[list[Signal], dict[str, Any] | None]:
    """The signals for one reply and its audit record (``None`` when it has no entities, or,
    with ``audit_all=False``, when the reply is not flagged: the detector only keeps flagged
    replies' records)."""
    written = extract(reply.text)
    entities = list({(e.kind, e.norm): e for e in written}.values())
    if not entities:
        return [], None
    supported = [context.supports(e) for e in entities]
    if not all(supported):
        supported = _worked_out(entities, supported, written, reply.text, context)
    _remember(context, entities, supported)
    score = sum(supported) / len(entities)
    if score >= params.threshold and not audit_all:
        return [], None
    breakdown: dict[str, dict[str, int]] = {}
    for kind in KINDS:
        mine = [ok for e, ok in zip(entities, supported, strict=True) if e.kind == kind]
        if mine:
            breakdown[kind] = {"supported": sum(mine), "total": len(mine)}
    unsupported = [e for e, ok in zip(entities, supported, strict=True) if not ok]
    audit = {
        "action": f"quality.{KIND}",
        "score": score,
        "threshold": params.threshold,
        "per_kind_breakdown": breakdown,
        "unsupported_sample": [e.raw for e in unsupported[:5]],
        "response_excerpt": " ".join(reply.text.split())[:300],
        "context_excerpt": "",
    }
    if score >= params.threshold:
        return [], audit
    audit["context_excerpt"] = context.excerpt_for(entities)
    signals = [
        Signal(
            kind=KIND,
            value=e.raw,
            events=[reply.index],
            severity=Severity.MEDIUM,
            explanation=f"{_explain(e, params.tolerance)} (reply score {score:.2f}).",
            data={"entity_kind": e.kind},
        )
        for e in unsupported
    ]
    signals[0].data["audit"] = audit
    return signals, audit


_ARITHMETIC_KINDS = ("money", "count", "percent")
_SMALL_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine"]
_SMALL = {w: n for n, w in enumerate(_SMALL_WORDS, start=2)} | {"both": 2}
_N = r"([2-9]|two|both|three|four|five|six|seven|eight|nine)"
_TIMES = "x\u00d7*"  # x, the multiplication sign, *
# A small count of things (`two passengers`, `3 nights`) or a multiplier (`x 2`, `2x`); not a
# list number (`2.`).
_FACTOR = re.compile(
    rf"\b{_N}\s+(?:[a-z-]+\s+)?[a-z]+s\b|[{_TIMES}]\s?{_N}\b|\b{_N}\s?[{_TIMES[:2]}](?!\w)", re.I
)
# `_FACTOR` for an ASCII text in lower case (where it matches as `_FACTOR` does in the text),
# tried only where `_FACTOR_AT` matches: at every position a match may start (a multiplication
# sign, or a digit 2-9 or a small number's word starting a word). Starting with `\b`, `_FACTOR`
# is tried at every position of a text; starting with a character class (without IGNORECASE),
# the trigger is skipped to quickly.
_FACTOR_LOWER = re.compile(_FACTOR.pattern)
_FACTOR_AT = re.compile(
    rf"[2-9tfsenb{_TIMES}](?:(?<=[{_TIMES}])|(?<!\w.)(?:(?<=[2-9])|(?<=t)(?:wo|hree)|(?<=b)oth"
    r"|(?<=f)(?:our|ive)|(?<=s)(?:ix|even)|(?<=e)ight|(?<=n)ine))"
)


def _factors(text: str) -> set[int]:
    """The small counts and multipliers ``text`` states (the numbers of `_FACTOR`'s matches)."""
    if text.isascii():
        found = scan(_FACTOR_LOWER, _FACTOR_AT, text.lower())
    else:
        found = list(_FACTOR.finditer(text))
    return {int(n) if n.isdigit() else _SMALL[n.lower()] for m in found for n in m.groups() if n}


def _worked_out(
    entities: list[Entity],
    supported: list[bool],
    written: list[Entity],
    text: str,
    context: _Context,
) -> list[bool]:
    """``supported`` (of the distinct ``entities``), plus the reply's numbers it works out from
    its own supported ones (``written``: every mention, in order): a total or difference of two
    (``$725 - $503 = $222``), the total of neighbouring ones it lists (items, then their total),
    or an amount times a small count the reply states (``$348`` for two passengers, at a price
    the reply or the context holds). Each number so supported may support the next (a running
    total)."""
    ok = {(e.kind, e.norm) for e, yes in zip(entities, supported, strict=True) if yes}
    worked = context.worked
    ok |= {(e.kind, e.norm) for e in entities if (e.kind, e.norm) in worked}
    factors = _factors(text)
    # A percentage the reply works out as a ratio of its supported figures ("71 / 6,250 =
    # 1.14%"): only where it shows a division.
    ratios = (
        [
            o.value
            for o in written
            if o.kind in ("count", "money") and o.value and (o.kind, o.norm) in ok
        ]
        if _DIVISION.search(text)
        else []
    )
    changed = True
    while changed:
        changed = False
        for e in entities:
            if (e.kind, e.norm) in ok or e.kind not in _ARITHMETIC_KINDS:
                continue
            if e.value is None or e.qualifier:
                continue
            known = [
                o.value
                for o in written
                if o.kind == e.kind and o.value is not None and (o.kind, o.norm) in ok
            ]
            earlier = context.stated[e.kind]
            if (
                _derives(e.value, known, factors if e.kind == "money" else set(), earlier)
                or (e.kind == "money" and any(context.supports(_per(e, k)) for k in factors))
                or (e.kind == "percent" and ratios and _is_ratio(e, ratios))
            ):
                ok.add((e.kind, e.norm))
                worked.add((e.kind, e.norm))
                changed = True
    return [(e.kind, e.norm) in ok for e in entities]


_DIVISION = re.compile(r"\d\s*[/\u00f7]\s*\$?\d|\bout\s+of\b", re.I)


def _is_ratio(e: Entity, values: list[float]) -> bool:
    """Whether the percentage ``e`` is 100 * a / b for two of ``values``, to its precision."""
    half = 0.5 * 10 ** (-e.decimals) + 1e-9
    return any(
        abs(100 * a / b - (e.value or 0.0)) <= half for a in values for b in values if b and a < b
    )


_STATED = 24  # numbers of each kind kept from earlier replies


def _remember(context: _Context, entities: list[Entity], supported: list[bool]) -> None:
    """Keep a reply's supported numbers for the replies after it (see ``_Context.stated``)."""
    for e, ok in zip(entities, supported, strict=True):
        if ok and e.value is not None and e.kind in _ARITHMETIC_KINDS and not e.qualifier:
            stated = context.stated[e.kind]
            if e.value not in stated:
                stated.append(e.value)
                del stated[:-_STATED]


def _per(e: Entity, k: int) -> Entity:
    """``e`` divided by ``k``: the price of one of ``k`` (written plainly, so it is looked for
    as a number)."""
    value = e.value / k if e.value is not None else 0.0
    raw = f"{value:.2f}".rstrip("0").rstrip(".")
    return Entity(e.kind, raw, f"{e.kind}:{value:g}", value, e.decimals + 2)


def _derives(
    value: float, known: list[float], factors: set[int], earlier: list[float] | None = None
) -> bool:
    """Whether ``value`` is one of ``known`` times a factor, the sum or difference of two of
    ``known`` and ``earlier`` (numbers earlier replies stated), or the total of three or more
    neighbouring ones of ``known``."""

    def same(a: float, b: float) -> bool:
        return abs(a - b) <= 0.005 + 1e-9 * abs(b)

    pool = [*known, *(earlier or [])]
    for a_index, a in enumerate(pool):
        if a_index < len(known) and any(same(value, a * k) for k in factors):
            return True
        for b in pool[a_index + 1 :]:
            if same(value, a + b) or same(value, abs(a - b)):
                return True
    for start in range(len(known) - 2):  # three or more listed in a row
        total = known[start] + known[start + 1]
        for later in known[start + 2 : start + _RUN]:
            total += later
            if same(value, total):
                return True
    return False


@detector("faithfulness", version=3, params=FaithfulnessParams, kinds=(KIND,))
def faithfulness(session: Session, params: FaithfulnessParams) -> list[Signal]:
    context = _Context(params)
    signals: list[Signal] = []
    keys = params.context_keys
    for event in session.events:
        kind = event.kind
        if kind is _RESULT and not keys:  # the usual case, first (`_context_text`, inline)
            context.add(event.output)
        elif kind is _USER or kind is _RESULT:
            context.add(_context_text(event, keys))
        elif kind is _SYSTEM:  # a system prompt, shared by sessions; or a retrieval's documents
            context.add(_context_text(event, keys), shared=not event.meta.get("retrieval"))
        elif kind is _ASSISTANT and _is_reply(event) and may_hold_entities(event.text):
            signals += check_reply(event, context, params, audit_all=False)[0]
    return signals


__all__ = ["FaithfulnessParams", "check_reply", "faithfulness"]
