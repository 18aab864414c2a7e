"""Checkable entities in text, for the faithfulness detector: extraction and normalisation.

Seven kinds: ``case_id``, ``sku``, ``error_code``, ``percent``, ``money``, ``count``, ``date``.
Identifiers normalise to upper case without separators (``case-00123`` == ``CASE00123``); numbers
to a float with k/M/B suffixes applied (``$1.2M`` == ``1,200,000 dollars``) plus how precisely
they were written (``decimals``, ``scale``), so a rounded restatement still matches. Dates
normalise to scope keys (``2024-Q3``, ``2026-04``). Plain integers, versions and years alone are
not entities: only these seven kinds are checked.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

KINDS = ("case_id", "sku", "error_code", "percent", "money", "count", "date")
NUMERIC = frozenset({"percent", "money", "count"})


@dataclass(frozen=True, slots=True)
class Entity:
    kind: str
    raw: str  # as written
    norm: str  # identity key: upper-cased id, scope key, or the kind plus the number
    value: float | None = None
    decimals: int = 0  # decimals of the written mantissa (before the suffix scale)
    scale: float = 1.0  # k/M/B multiplier written
    qualifier: str = ""  # "", "approx", "gt" or "lt"
    digits: str = ""  # the digit run of an identifier (for `#48213` against `"id": 48213`)


# Line-number prefixes of file views (`   157→`, `  12 | `, `cat -n`), each replaced by a blank,
# and markup: an HTML-like tag, or one of `*`, `` ` ``, `|` (each also a blank). The regex
# engine only skips quickly to a literal (not to a character class), so a prefix is found from
# the newline before it (the first line's apart), and single characters by `str.replace`.
_FIRST_PREFIX = re.compile(r"[ \t]*\d+(?:→|[ \t]*\|[ \t]?|\t)")
_LINE_PREFIX = re.compile(r"\n" + _FIRST_PREFIX.pattern)
# Without `N |` (in a table, a number then a column bar is a value, not a line number).
_FIRST_PREFIX_NO_BAR = re.compile(r"[ \t]*\d+(?:→|\t)")
_LINE_PREFIX_NO_BAR = re.compile(r"\n" + _FIRST_PREFIX_NO_BAR.pattern)
# A table's rule line: psql `-----+-----`, markdown `|---|---|`.
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*[+|]", re.MULTILINE)
_TAG = re.compile(r"<\/?[A-Za-z][^<>\n]{0,200}>")


def _has_table_rule(text: str) -> bool:
    """``_TABLE_RULE.search(text) is not None``, the rule tried only at the start of each line
    holding `---` (which every rule line holds): `str.find` skips to those many times quicker
    than the regex engine tries `^` at every position of a long text."""
    at = text.find("---")
    while at >= 0:
        if _TABLE_RULE.match(text, text.rfind("\n", 0, at) + 1):
            return True
        end = text.find("\n", at)
        if end < 0:
            return False
        at = text.find("---", end)
    return False


def clean(text: str) -> str:
    if "→" in text or "|" in text or "\t" in text:  # what a line-number prefix needs
        first_prefix, line_prefix = _FIRST_PREFIX, _LINE_PREFIX
        if "|" in text and _has_table_rule(text):
            first_prefix, line_prefix = _FIRST_PREFIX_NO_BAR, _LINE_PREFIX_NO_BAR
        first = first_prefix.match(text)
        if first is not None:
            text = " " + text[first.end() :]
        text = line_prefix.sub("\n ", text)
    # A tag never starts or ends at one of the characters blanked first (nor holds a newline),
    # and holds them and blanks alike: blanking them first leaves every tag as it was.
    for mark in "*`|":
        if mark in text:
            text = text.replace(mark, " ")
    if "<" in text:
        text = _TAG.sub(" ", text)
    return text


_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SUF = r"(?:\s?(?:k|K|M|B|bn|mn)\b|\s(?:thousand|million|billion)\b)"
_QUAL = (
    r"(?:(?P<q>(?i:about|around|approximately|approx\.?|roughly|nearly|almost|some|close to|~|≈|"
    r"(?:just|slightly|a little) (?:over|under|above|below|more than|less than)|"
    r"over|more than|above|at least|upwards of|fewer than|less than|under|below|up to))\s*)?"
)
_SCALES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6}
_SCALES |= {"b": 1e9, "bn": 1e9, "billion": 1e9}
_QUALS = {"over": "gt", "more than": "gt", "above": "gt", "at least": "gt", "upwards of": "gt"}
_QUALS |= {"fewer than": "lt", "less than": "lt", "under": "lt", "below": "lt"}
# "Up to $2,500" quotes a limit, so it names that number (not any number below it).
_QUALS["up to"] = ""

_CASE_PREFIX = "CASE|TICKET|TKT|INC|REQ|RITM|CHG|PRB|TASK|BUG|ISSUE|SR|CS|CVE"
_NOT_MODEL = frozenset(
    [
        "SHA",
        "UTF",
        "ISO",
        "RFC",
        "PEP",
        "MD",
        "AES",
        "RSA",
        "HTTP",
        "HTTPS",
        "TLS",
        "SSL",
        "UTC",
        "GMT",
        "IPV",
        "ES",
        "CP",
        "COVID",
        "PY",
        "ID",
        "FY",
    ]
)
# A vendor's error code (`AADSTS50076`, `TS2307`, `MSB3073`, `NU1101`) where the text calls it
# one: letters then digits alone are also product names and standards (`ISO8601`), so only
# right after `error`/`code` (`error AADSTS50076`, `code=TS2307`) or right before `error`.
_LABELLED_CODE = (
    r"(?:(?<=[Ee]rror )|(?<=[Ee]rrors )|(?<=[Ee]rror: )|(?<=[Cc]ode )|(?<=[Cc]odes )"
    r"|(?<=[Cc]ode: )|(?<=[Cc]ode=)|(?<=errno )|(?<=ERROR ))[A-Z]{2,7}\d{4,6}\b"
    r"|\b[A-Z]{2,7}\d{4,6}(?= [Ee]rrors?\b)"
)
# A part number of digit groups and a letter revision (`7731-0452-A`; a date has none). Read
# in replies only: a context's numbers are many, and a reply's part number is found in it as
# written (see `faithfulness._Context._full`).
_PART = r"|(?P<part>(?<![\w./-])\d{3,6}-\d{3,6}-(?=[A-Z0-9]{0,3}[A-Z])[A-Z0-9]{1,4}\b(?![-/.]\w))"
_IDS_CORE = (
    # The year form first: `CS-2024-00534` whole, not its prefix and year (`CS-2024`).
    rf"(?P<case>\b[A-Z]{{2,5}}-(?:19|20)\d\d-\d{{3,8}}\b|\b(?:{_CASE_PREFIX})[-_ ]?\d{{3,}}\b)"
    r"|(?P<hash>(?<![\w&#/])#(?P<hd>\d{3,8})\b(?![A-Fa-f]))"
    r"|(?P<err>\bE-?\d{3,5}\b|\bERR(?:OR)?_[A-Z0-9_]{3,}\b|\b0x[0-9A-Fa-f]{6,8}\b"
    rf"|\bHTTP[ /]?[1-5]\d\d\b|{_LABELLED_CODE})"
    r"|(?P<sku>\bSKU[-_ ]?[A-Z0-9]+(?:-[A-Z0-9]+)*\b)"
    r"|(?P<model>(?<![\w./-])(?P<mp>[A-Z][A-Z0-9]{1,6})-[A-Z]{0,2}\d(?:\d{1,5}|[A-Z]\d{1,4})"
    r"[A-Z0-9]{0,4}"
    r"(?:-[A-Z0-9]{1,4})?\b(?![-/.]\w))"
)
_IDS = re.compile(_IDS_CORE + _PART)
_IDS_CONTEXT = re.compile(_IDS_CORE + r"|(?P<part>(?!))", re.IGNORECASE)  # no part numbers
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# How a month's name starts wherever a date names it (`May`, `Sep`, `Sept`, `September`).
MONTH_NAMES = [month.capitalize() for month in _MONTHS]
_MONTH_RE = (
    r"(?P<mon>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATES = re.compile(
    rf"\b(?P<qn>Q[1-4])\s*(?:FY\s?)?(?P<qy>'?\d{{2}}|\d{{4}})\b"
    r"|\b(?P<qw>first|second|third|fourth) quarter (?:of )?(?P<qwy>\d{4})\b"
    r"|\b(?P<hn>H[12])\s*(?P<hy>\d{4})\b"
    r"|\bFY\s?'?(?P<fy>\d{4}|\d{2})\b"
    rf"|\b{_MONTH_RE}\.?\s+(?:(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(?P<my>(?:19|20)\d\d)\b"
    r"|\b(?P<iy>(?:19|20)\d\d)-(?P<im>[01]\d)(?:-[0-3]\d)?\b"
)
_MONEY = re.compile(rf"{_QUAL}(?:[$€£]|\b(?:USD|EUR|GBP)\s?)(?P<num>{_NUM})(?P<suf>{_SUF})?")
_MONEY_WORD = re.compile(
    rf"{_QUAL}(?<![\w.])(?P<num>{_NUM})(?P<suf>{_SUF})?\s*(?:dollars|USD|usd|euros|EUR)\b"
)
# Not after a letter or a digit, but after `_` (markdown emphasis, `_15% off_`).
_PERCENT = re.compile(
    rf"{_QUAL}(?<![^\W_])(?<!\.)(?P<num>{_NUM})\s*(?:%|percent\b|per cent\b|pct\b)"
)
_COUNT = re.compile(
    rf"{_QUAL}(?<![\w.$€£#:/-])(?P<num>{_NUM})(?P<suf>[kKM]\b)?(?![.:/\w-])\s+"
    r"(?:(?P<adj>[a-z]+(?:-[a-z]+)?[a-rt-z])\s+)?(?P<noun>(?:[a-z]+-)?[a-z]{3,}s)\b"
)
# "Section 6.2 gives ...", "clause 4 says ...": a number naming a part of a document, not a count.
_REFERENCE_BEFORE = re.compile(
    r"(?:\b(?:section|clause|article|paragraph|chapter|step|item|rule|part|appendix|schedule"
    r"|exhibit|annex|page|version)s?|\u00a7)\s*\Z",
    re.IGNORECASE,
)
_NOT_NOUN = frozenset(
    [
        "is",
        "was",
        "has",
        "does",
        "as",
        "this",
        "its",
        "us",
        "yes",
        "plus",
        "minus",
        "less",
        "unless",
        "process",
        "access",
        "class",
        "status",
        "always",
        "across",
        "thus",
        "whereas",
        "perhaps",
        "towards",
        "seconds",
        "secs",
        "minutes",
        "mins",
        "hours",
        "hrs",
        "days",
        "weeks",
        "months",
        "years",
        "ms",
        "times",
        "bytes",
        "kbs",
        "mbs",
        "gbs",
        "percents",
        "was",
    ]
)
# Any number in context (the fallback pool) and a few number words.
# `(?<![\w.])(?:_NUM)` with the first digit taken first, so the regex engine can skip to digits.
# After the first digit; a thousands group ends the number (`3,184220.17`, a CSV row: 3 and
# 184220.17).
_NUM_REST = r"(?:\d{0,2}(?:,\d{3}(?!\d))+(?:\.\d+)?|\d*(?:\.\d+)?)"
_NUM_AT = r"\d(?<![\w.]\d)" + _NUM_REST
_ANY_NUM = re.compile(rf"(?P<num>{_NUM_AT})(?P<suf>[kKM]\b|\s(?:thousand|million|billion)\b)?")
_WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
_WORDS += "fifteen sixteen seventeen eighteen nineteen twenty"
_WORD_NUM = {w: float(i) for i, w in enumerate(_WORDS.split())}
_WORD_NUM |= {w: float(10 * (i + 3)) for i, w in enumerate(["thirty", "forty", "fifty", "sixty"])}
_WORD_NUM |= {"seventy": 70.0, "eighty": 80.0, "ninety": 90.0, "hundred": 100.0, "dozen": 12.0}
_NUM_WORD = re.compile(
    r"\b(" + "|".join(_WORD_NUM) + r")(?:-(one|two|three|four|five|six|"
    r"seven|eight|nine))?\b",
    re.IGNORECASE,
)


# Fast scanning. Python's regex engine tries a pattern that starts with an assertion or an
# optional group at every position; the triggers below start with a character class (which the
# engine skips to) and hold at every position a match of their pattern may start at, so trying
# the pattern only there finds exactly what `finditer` finds.
_IDS_AT = re.compile(
    r"[#0-9A-Z](?<!\w.)(?:(?<=[#A-Z])[A-Z0-9]{0,6}[-_ /]?(?:[A-Z]{1,2})?\d|(?<=E)RR|(?<=S)KU"
    r"|(?<=0)x|(?<=\d)\d{2,5}-\d{3})"
)
# Every identifier a context is read for starts with `#`, `0` (`0x...`) or a letter
# (case-insensitively, which takes in the few non-ASCII letters that fold to one): numbers,
# frequent in tool output, never.
_IDS_CONTEXT_AT = re.compile(
    r"[#0a-z](?<!\w.)(?:\w{0,6}[-_ /]?(?:[a-z]{1,2})?\d|(?<=e)rr|(?<=s)ku|(?<=0)x)",
    re.IGNORECASE,
)
_DATES_AT = re.compile(
    r"[QHFJMASONDfst12](?<!\w.)(?:(?<=Q)[1-4]|(?<=H)[12]|(?<=F)(?:Y|eb)|(?<=J)(?:an|u[nl])"
    r"|(?<=M)a[ry]|(?<=A)(?:pr|ug)|(?<=S)ep|(?<=O)ct|(?<=N)ov|(?<=D)ec|(?<=f)(?:irst|ourth) "
    r"|(?<=s)econd |(?<=t)hird |(?<=1)9\d\d-|(?<=2)0\d\d-)"
)


def scan(
    pattern: re.Pattern[str], trigger: re.Pattern[str], text: str, pos: int = 0
) -> list[re.Match[str]]:
    """``pattern.finditer(text, pos)``, trying ``pattern`` only where ``trigger`` matches."""
    found: list[re.Match[str]] = []
    search, match = trigger.search, pattern.match
    while (t := search(text, pos)) is not None:
        m = match(text, t.start())
        if m is None:
            pos = t.start() + 1
        else:
            found.append(m)
            pos = m.end()
    return found


# The numeric patterns: an optional qualifier, then a core that starts at an anchor (a
# currency sign or a number's first digit). The qualifier and the blanks after it hold no
# anchor, so a match's core starts at the first anchor where the core matches; the qualifier,
# if any, ends where the blanks before that anchor start.
_QUAL_END = re.compile(_QUAL[3:-5] + r"\Z")  # `(?P<q>...)` alone, ending where searched
# `_MONEY_WORD`'s core: a number, maybe a suffix, then the currency word (a number's first digit
# alone would try the pattern at every number of a text that names a currency anywhere).
_MONEY_WORD_AT = re.compile(
    r"\d(?<![\w.]\d)[\d,.]*(?:\s?(?:[kKMB]|bn|mn)|\s(?:thousand|million|billion))?"
    r"\s*(?:dollars|USD|usd|euros|EUR)"
)
_PERCENT_AT = re.compile(r"\d(?<![^\W_]\d)(?<!\.\d)[\d,.]*\s*[%p]")
_COUNT_AT = re.compile(r"\d(?<![\w.$€£#:/-]\d)[\d,.]*[kKM]?\s+[a-z]")
_MONEY_AT = re.compile(r"[$€£UEG](?:(?<=[$€£])|(?<!\w.)(?:(?<=U)SD|(?<=E)UR|(?<=G)BP))")
# What every date holds (a quarter, half, fiscal year or a year of 19xx/20xx).
_DATE_HINT = re.compile(
    r"[QHFq12](?:(?<=Q)[1-4]|(?<=H)[12]|(?<=F)Y|(?<=q)uarter|(?<=1)9\d\d|(?<=2)0\d\d)"
)


# Strings to test for with `in`, each group behind a character all its strings hold ("" =
# none): looking for one character is a memchr, many times quicker than looking for a longer
# string, and the character chosen is rarer in text (most texts hold none of the strings).
Needles = tuple[tuple[str, tuple[str, ...]], ...]


def _holds_any(text: str, needles: Needles) -> bool:
    """Whether ``text`` holds one of the strings of ``needles``."""
    for gate, strings in needles:
        if gate in text:
            for string in strings:
                if string in text:
                    return True
    return False


# What every `_DATE_HINT` match holds: tested with `in` before the regex scans the text.
_DATE_MARKS: Needles = (
    ("9", ("19",)),
    ("0", ("20",)),
    ("Y", ("FY",)),
    ("q", ("quarter",)),
    ("Q", ("Q1", "Q2", "Q3", "Q4")),
    ("H", ("H1", "H2")),
)


def _may_hold_date(text: str) -> bool:
    return _holds_any(text, _DATE_MARKS) and _DATE_HINT.search(text) is not None


# An ASCII text with its digits folded to `0`, and each anchor starting with a digit as it reads
# that copy: starting with a literal, which the regex engine skips to many times quicker than to
# a digit, it matches at the same positions (in ASCII text, `\d` is a digit, and nothing else
# in these anchors tells digits apart).
_FOLD_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_FOLDED_AT = {
    anchor: re.compile(anchor.pattern.replace(r"\d", "0"))
    for anchor in (_MONEY_WORD_AT, _PERCENT_AT, _COUNT_AT)
}


def _folded(text: str) -> str | None:
    """``text`` with its digits folded to `0` when it is ASCII (see ``_FOLDED_AT``), else None.
    Folded as bytes: `str.translate` looks each distinct character up anew on every call."""
    return text.encode().translate(_FOLD_DIGITS).decode() if text.isascii() else None


def _scan_numeric(
    pattern: re.Pattern[str], anchor: re.Pattern[str], text: str, folded: str | None = None
) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern of an optional ``_QUAL`` and a core;
    ``folded``: ``_folded(text)``, where the anchor is looked for when it has a folded form."""
    found: list[re.Match[str]] = []
    pos = 0
    search, match, scanned = anchor.search, pattern.match, text
    if folded is not None and anchor in _FOLDED_AT:
        search, scanned = _FOLDED_AT[anchor].search, folded
    while (a := search(scanned, pos)) is not None:
        at = a.start()
        m = match(text, at)
        if m is None:
            pos = at + 1
            continue
        end = at
        while end > pos and text[end - 1].isspace():
            end -= 1
        q = _QUAL_END.search(text, max(pos, end - 18), end) if end > pos else None
        if q is not None:
            m = match(text, q.start()) or m
        found.append(m)
        pos = m.end()
    return found


_DIGIT = re.compile(r"\d")
_ID_WORD_CONTEXT = re.compile("ERR|SKU", re.IGNORECASE)


def _has_digit(text: str) -> bool:
    """``_DIGIT.search(text) is not None``: an ASCII digit by `in` (the regex engine scans a
    character class slowly, and most replies hold no digit), written out (a loop or `any` costs
    more than the ten memchr calls), then other digits by the regex in non-ASCII text."""
    return (
        "0" in text
        or "1" in text
        or "2" in text
        or "3" in text
        or "4" in text
        or "5" in text
        or "6" in text
        or "7" in text
        or "8" in text
        or "9" in text
        or (not text.isascii() and _DIGIT.search(text) is not None)
    )


def _has_id_word(text: str, context: bool) -> bool:
    """Whether ``text`` holds `ERR` or `SKU` (in any case for context text)."""
    if context:
        return _ID_WORD_CONTEXT.search(text) is not None
    return ("R" in text and "ERR" in text) or ("K" in text and "SKU" in text)


def may_hold_entities(text: str, *, context: bool = False) -> bool:
    """Whether ``extract`` may find anything in ``text`` (raw or clean): every entity holds a
    digit, but for `ERR_...` and `SKU-...` identifiers. Most replies hold neither."""
    return _has_digit(text) or _has_id_word(text, context)


# Each numeric pattern, with the strings one of which any match contains (see `_holds_any`;
# None: always try it).
_NUMERIC: tuple[tuple[str, re.Pattern[str], re.Pattern[str], Needles | None], ...] = (
    ("money", _MONEY, _MONEY_AT, (("", ("$", "€", "£")), ("U", ("USD", "EUR")), ("G", ("GBP",)))),
    (
        "money",
        _MONEY_WORD,
        _MONEY_WORD_AT,
        (("U", ("USD", "EUR")), ("", ("dollars", "usd", "euros"))),
    ),
    ("percent", _PERCENT, _PERCENT_AT, (("", ("%", "percent", "per cent", "pct")),)),
    ("count", _COUNT, _COUNT_AT, None),
)


def _number(num: str, suf: str | None) -> tuple[float, int, float]:
    mantissa = num.replace(",", "")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = _SCALES.get((suf or "").strip().lower(), 1.0)
    return float(mantissa) * scale, decimals, scale


_ID_SEPARATORS = re.compile(r"[-_ /]")
_DIGIT_RUN = re.compile(r"\d+")
_LONG_DIGIT_RUN = re.compile(r"(?<!\d)\d{3,}(?!\d)")


def _id_entity(m: re.Match[str]) -> Entity | None:
    raw = m.group(0)
    norm = _ID_SEPARATORS.sub("", raw.upper())
    digits = "".join(_DIGIT_RUN.findall(raw))
    if m.group("case"):
        return Entity("case_id", raw, norm, digits=digits)
    if m.group("hash"):
        return Entity("case_id", raw, norm, digits=m.group("hd"))
    if m.group("err"):
        return Entity("error_code", raw, norm, digits=digits if raw[:1] in "Hh" else "")
    if m.group("sku"):
        # `SKU HO-JKT-M-NVY` is reported as the code it labels (`SKU-1234` is a code itself).
        return Entity("sku", raw[4:] if raw[3:4] == " " else raw, norm)
    if m.group("part"):
        return Entity("sku", raw, norm)
    if m.group("mp").upper() in _NOT_MODEL:
        return None
    return Entity("sku", raw, norm)


def _date_entity(m: re.Match[str]) -> Entity | None:
    g = m.groupdict()
    raw = m.group(0)
    if g["qn"]:
        year = g["qy"].lstrip("'")
        return Entity("date", raw, f"{_year(year)}-{g['qn'].upper()}")
    if g["qw"]:
        quarter = ["first", "second", "third", "fourth"].index(g["qw"].lower()) + 1
        return Entity("date", raw, f"{g['qwy']}-Q{quarter}")
    if g["hn"]:
        return Entity("date", raw, f"{g['hy']}-{g['hn'].upper()}")
    if g["fy"]:
        return Entity("date", raw, f"FY{_year(g['fy'])}")
    if g["mon"]:
        month = _MONTHS.index(g["mon"][:3].lower()) + 1
        return Entity("date", raw, f"{g['my']}-{month:02d}")
    if g["iy"] and 1 <= int(g["im"]) <= 12:
        return Entity("date", raw, f"{g['iy']}-{g['im']}")
    return None


def _year(text: str) -> str:
    return text if len(text) == 4 else f"20{text}"


def scope_keys(norm: str) -> list[str]:
    """A month scope also covers its quarter and half (context `2024-08` supports `Q3 2024`)."""
    year, _, rest = norm.partition("-")
    if rest.isdigit():
        month = int(rest)
        return [norm, f"{year}-Q{(month - 1) // 3 + 1}", f"{year}-H{1 if month <= 6 else 2}"]
    return [norm]


class _Spans:
    """The spans of the entities taken so far: disjoint, kept sorted, so whether a match
    overlaps one is a binary search (a long tool output holds hundreds of entities)."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def free(self, m: re.Match[str]) -> bool:
        start, end = m.span()
        # Of the spans starting before `end`, the last one ends last (they are disjoint).
        i = bisect_left(self.starts, end)
        return i == 0 or self.ends[i - 1] <= start

    def add(self, m: re.Match[str]) -> None:
        start, end = m.span()
        i = bisect_left(self.starts, start)
        self.starts.insert(i, start)
        self.ends.insert(i, end)


def extract(text: str, *, context: bool = False, is_clean: bool = False) -> list[Entity]:
    """The entities in ``text`` (cleaned of line-number prefixes and markup), in order.

    ``context=True`` matches identifiers case-insensitively and also reads dates written as ISO
    dates; a reply's entities are read strictly (what the reply writes is what is checked).
    """
    if not is_clean:
        # Cleaning only removes characters: what the checks below need is in the raw text too.
        if not may_hold_entities(text, context=context):
            return []
        text = clean(text)
    digits = _has_digit(text)  # every kind but ERR_... and SKU-... needs one
    if not digits and not _has_id_word(text, context):
        return []
    found: list[tuple[int, Entity]] = []
    taken = _Spans()
    ids = scan(_IDS_CONTEXT, _IDS_CONTEXT_AT, text) if context else scan(_IDS, _IDS_AT, text)
    for m in ids:
        entity = _id_entity(m)
        if entity is not None:
            found.append((m.start(), entity))
            taken.add(m)
    if not digits:
        return [e for _, e in found]
    for m in scan(_DATES, _DATES_AT, text) if _may_hold_date(text) else ():
        entity = _date_entity(m) if taken.free(m) and (context or not m.group("iy")) else None
        if entity is not None:
            found.append((m.start(), entity))
            taken.add(m)
    folded = _folded(text)
    for kind, pattern, anchor, needles in _NUMERIC:
        if needles is not None and not _holds_any(text, needles):
            continue  # no match without one of them
        for m in _scan_numeric(pattern, anchor, text, folded):
            if not taken.free(m):
                continue
            if kind == "count" and (
                m.group("noun") in _NOT_NOUN
                or _is_year(m.group("num"))
                or _REFERENCE_BEFORE.search(text, max(0, m.start() - 12), m.start())
            ):
                continue
            suffix = m.group("suf") if "suf" in pattern.groupindex else None
            value, decimals, scale = _number(m.group("num"), suffix)
            qualifier = _QUALS.get((m.group("q") or "").lower(), "approx" if m.group("q") else "")
            raw = text[m.end("q") if m.group("q") else m.start() : m.end()].strip()
            norm = f"{kind}:{value:g}"
            found.append((m.start(), Entity(kind, raw, norm, value, decimals, scale, qualifier)))
            taken.add(m)
    return [e for _, e in sorted(found, key=lambda pair: pair[0])]


def _is_year(num: str) -> bool:
    return len(num) == 4 and num.isdigit() and 1900 <= int(num) <= 2100


def _value(num: str, suf: str) -> float:
    """``_number(num, suf)[0]`` (``suf`` may be empty), quicker."""
    value = float(num.replace(",", "") if "," in num else num)
    return value * _SCALES.get(suf.strip().lower(), 1.0) if suf else value


def context_numbers(text: str, *, is_clean: bool = False) -> list[float]:
    """Every number in context text (digits, k/M suffixes, number words): the fallback pool."""
    text = text if is_clean else clean(text)
    return context_digit_numbers(text, is_clean=True) + context_word_numbers(text, is_clean=True)


# Number words stand for 0 to 109 (`hundred-nine`) only.
WORD_RANGE = (0.0, 109.0)


_HEX = re.compile(r"\b0[xX]([0-9a-fA-F]{1,8})\b")


def context_digit_numbers(text: str, *, is_clean: bool = False) -> list[float]:
    """The numbers of ``context_numbers`` written in digits (hex literals too: a loop bound
    `0x10` in decompiled code supports "16 iterations")."""
    text = text if is_clean else clean(text)
    numbers = [_value(num, suf) for num, suf in _ANY_NUM.findall(text)]
    if "0x" in text or "0X" in text:
        numbers += [float(int(digits, 16)) for digits in _HEX.findall(text)]
    return numbers


def context_word_numbers(text: str, *, is_clean: bool = False) -> list[float]:
    """The numbers of ``context_numbers`` written as words (all within ``WORD_RANGE``)."""
    text = text if is_clean else clean(text)
    values: list[float] = []
    for m in _NUM_WORD.finditer(text):
        value = _WORD_NUM[m.group(1).lower()]
        if m.group(2):
            value += _WORD_NUM[m.group(2).lower()]
        values.append(value)
    return values


def digit_runs(text: str) -> set[str]:
    return set(_LONG_DIGIT_RUN.findall(text))


# Not a value written to a key (`suites=8 passed=37`: 8 counts suites, not passes). As in
# `_NUM_AT`, what may not come before the number is tested after its first digit.
_COUNTED = re.compile(rf"(?P<num>\d(?<![\w.=:]\d){_NUM_REST})(?P<suf>[kKM]\b)?\s+[A-Za-z]")


def context_counts(text: str, *, is_clean: bool = False) -> list[float]:
    """Numbers followed by any word in context (`106 passed`, `14 doctests`): the count pool."""
    text = text if is_clean else clean(text)
    return [_value(num, suf) for num, suf in _COUNTED.findall(text)]


_LETTERS = re.compile(r"[A-Za-z]+")


def count_totals(text: str, *, is_clean: bool = False) -> set[float]:
    """The totals of the numbers counted with the same word, for each word counted more than
    once (`86 passed` ... `34 passed` ... `12 passed`: 132, as a reply totals a workspace's
    test runs)."""
    text = text if is_clean else clean(text)
    by_word: dict[str, list[float]] = {}
    for m in _COUNTED.finditer(text):  # each `_COUNTED` match ends at its word's first letter
        word = _LETTERS.match(text, m.end() - 1)
        if word is not None:
            by_word.setdefault(word.group().lower(), []).append(_value(m["num"], m["suf"] or ""))
    return {round(sum(values), 6) for values in by_word.values() if len(values) > 1}


# A row `^[ \t]*(\d+)(?:→|[ \t]*\|)(.*)$`; the second group holds the first non-blank of its
# rest, if any (whether `rest.strip()` is not empty). `_ROW` finds the rows after the first line
# (starting with a literal, which the regex engine skips to; a row never reads past its line).
_PREFIX_NUM = re.compile(r"[ \t]*(\d+)(?:→|[ \t]*\|)[^\S\n]*(\S?)")
_ROW = re.compile(r"\n" + _PREFIX_NUM.pattern)


def viewed_lines(text: str) -> list[float]:
    """The last line numbers of a file view (with and without a trailing blank line): a reply
    may state them as the file's length."""
    if "→" not in text and "|" not in text:
        return []
    rows = _ROW.findall(text)
    first = _PREFIX_NUM.match(text)
    if first is not None:
        rows.append(first.groups())
    if len(rows) < 3:
        return []
    filled = [n for n, rest in rows if rest]
    last = max(map(int, [n for n, _ in rows]))
    return [float(last)] + ([float(max(map(int, filled)))] if filled else [])


def view_row(text: str, start: int) -> tuple[int, bool] | None:
    """The line number of the file-view row at line start ``start`` and whether the row holds
    text, as ``viewed_lines`` reads its rows; None when that line is not a row."""
    row = _PREFIX_NUM.match(text, start)
    return None if row is None else (int(row.group(1)), bool(row.group(2)))


def view_rows(text: str, count: int) -> bool:
    """Whether ``text`` holds at least ``count`` file-view rows, as ``viewed_lines`` reads them
    (``viewed_lines`` reads a view of fewer than 3 as none)."""
    found = 0 if _PREFIX_NUM.match(text) is None else 1
    for _ in _ROW.finditer(text) if found < count else ():
        found += 1
        if found == count:
            break
    return found >= count


# (bound, filled) -> the patterns of `_rows_above` (bounded: entities repeat their numbers).
_ABOVE: dict[tuple[int, bool], tuple[re.Pattern[str], re.Pattern[str]]] = {}


def _rows_above(bound: int, filled: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A file-view row (holding text, when ``filled``) whose line number is above ``bound``
    (``bound >= 0``), or a line starting with digits other than 0-9 (not compared): as the first
    line, and after a newline. Possessive quantifiers: the search never backtracks in a row."""
    patterns = _ABOVE.get((bound, filled))
    if patterns is None:
        if len(_ABOVE) >= 256:
            _ABOVE.clear()
        digits = str(bound)
        # More digits, or the same up to one that is higher (after any leading zeros).
        above = [f"[1-9][0-9]{{{len(digits)},}}"] + [
            f"{digits[:i]}[{int(d) + 1}-9][0-9]{{{len(digits) - i - 1}}}"
            for i, d in enumerate(digits)
            if d != "9"
        ]
        rest = r"[^\S\n]*+\S" if filled else ""
        row = rf"[ \t]*+(?:0*+(?:{'|'.join(above)})(?:→|[ \t]*\|){rest}|[0-9]*+[^\D0-9])"
        patterns = _ABOVE[bound, filled] = (re.compile(row), re.compile(r"\n" + row))
    return patterns


def view_rows_above(text: str, bound: int, *, filled: bool = False) -> bool:
    """Whether a file-view row (holding text, when ``filled``), as ``viewed_lines`` reads rows,
    has a line number above ``bound`` (``bound >= 0``), or may have (one written in digits other
    than 0-9). One search, where ``viewed_lines`` makes a match of every row."""
    first, after = _rows_above(bound, filled)
    return first.match(text) is not None or after.search(text) is not None


# Line-local reading. `clean` is line-local (a line-number prefix and a tag never cross a line
# end), identifiers never span lines and a number's or count's match cannot start inside one
# that began on an earlier line (what it could run into holds no digits), so what is read below
# from one line is exactly what reading the whole text finds there. Matches whose outcome could
# depend on what follows the line are left out: these readings only ever add support.


def _line(text: str, start: int) -> tuple[str, bool]:
    """The cleaned line of ``text`` starting at ``start``, and whether it is the last line."""
    end = text.find("\n", start)
    if end < 0:
        return clean(text[start:]), True
    return clean(text[start:end]), False


# What `clean` changes on a line without a line-number prefix (`→` and tabs matter only in one).
_MARKUP = re.compile("[|<*`]")


def line_numbers(
    text: str, start: int, at: int, *, counts: bool
) -> tuple[list[float], list[float]]:
    """Numbers of ``context_counts`` (when ``counts``) and of ``context_numbers`` (digits only)
    on the line starting at ``start`` (near ``at`` on a long line `clean` leaves as it is): each
    is one the whole text's reading holds too."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if (
        end - start > 400
        and _FIRST_PREFIX.match(text, start) is None
        and _MARKUP.search(text, start, end) is None
    ):
        # Between blanks: a match cannot run into the window (what it could run into after a
        # blank holds no digits) and only a number just before its end may read on past it.
        lo = text.rfind(" ", start, max(start, at - 60)) + 1 or start
        hi = text.find(" ", min(end, at + 80), end)
        line, last = text[lo : end if hi < 0 else hi], end == len(text) and hi < 0
    else:
        line, last = _line(text, start)
    counted = [_value(num, suf) for num, suf in _COUNTED.findall(line)] if counts else []
    bare = [
        _value(m.group("num"), m.group("suf") or "")
        for m in _ANY_NUM.finditer(line)
        if last or m.end() < len(line) or m.group("suf")  # a suffix may follow on the next line
    ]
    return counted, bare


def number_at(text: str, start: int, at: int) -> float | None:
    """The number of ``line_numbers(text, start, at, ...)[1]`` starting at ``at`` (on the line
    starting at ``start``), read where it stands: None when that does not settle that the line's
    reading holds it as read here (then read the line). Reading the line cleans it and reads all
    its numbers; most numbers a reply cites stand where `clean` changes nothing near them."""
    m = _ANY_NUM.match(text, at)
    if m is None or (at > start and text[at - 1] == ","):
        return None  # not a number of its own (`v1.5`), or maybe inside one (`1,625` at `625`)
    end, suf = m.end(), m.group("suf")
    line_end = text.find("\n", at)
    if line_end < 0:
        line_end = len(text)
    if end - at >= 80 or end > line_end:
        return None  # past the window a long line is read in, or a suffix on the next line
    if not suf and end < len(text) and (end == line_end or text[end] in "|*`<"):
        # A suffix may follow on the next line, or after the blank `clean` makes of markup.
        return None
    prefix = _FIRST_PREFIX.match(text, start)
    if prefix is not None and at < prefix.end():
        return None  # the line-number prefix, which `clean` removes
    tag = text.rfind("<", start, at)
    if tag >= 0 and text.find(">", tag, at) < 0:
        return None  # maybe inside a tag, which `clean` removes
    # Else `clean` leaves the number as it is, and a blank or the same character on each side
    # of it: the line's reading holds it (no earlier number runs into it past a non-comma).
    return _value(m.group("num"), suf or "")


def line_scopes(text: str, start: int) -> set[str]:
    """Scope keys of dates on the line starting at ``start``, when the line's reading cannot
    depend on its neighbours (else none): each is one ``extract(context=True)`` finds too."""
    if start > 0:  # a date may run on from the line before: only when that ends in one's part
        before = text.rfind("\n", 0, start - 1) + 1
        tail = clean(text[before : start - 1]).rstrip()
        if not tail or tail[-1].isalnum() or tail[-1] in ".,":
            return set()
    return _scopes(*_line(text, start))


def quoted_scopes(text: str, start: int, at: int) -> set[str]:
    """Scope keys of dates between the quotes around ``at`` on the line starting at ``start``
    (a JSON string: `"date": "2024-05-20"`), when `clean` leaves that stretch as it is (else
    none): each is one ``extract(context=True)`` finds too. No identifier or date holds a quote
    (nor do its lookarounds read past one), so the stretch reads as it does within the whole
    text, and a long one-line JSON output is not read whole for one date."""
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    opening, closing = text.rfind('"', start, at), text.find('"', at, end)
    # A tag (never across lines) may hold quotes and is cut out whole; a line-number prefix is
    # all before the first quote; any other markup is one character, blanked where it is.
    if opening < 0 or closing < 0 or text.find("<", start, end) >= 0:
        return set()
    stretch = text[opening + 1 : closing]
    if "*" in stretch or "`" in stretch or "|" in stretch:
        return set()
    return _scopes(stretch, True)


def _scopes(line: str, last: bool) -> set[str]:
    """Scope keys of the dates of a cleaned ``line`` (``last``: nothing follows it that a date
    could run on into) that no identifier overlaps."""
    if not _has_digit(line):
        return set()
    ids = [m.span() for m in scan(_IDS_CONTEXT, _IDS_CONTEXT_AT, line) if _id_entity(m)]
    scopes: set[str] = set()
    for m in scan(_DATES, _DATES_AT, line):
        if not last and not line[m.end() :].strip():
            continue  # the date could run on into the next line
        start_, end_ = m.span()
        if any(not (end_ <= a or start_ >= b) for a, b in ids):
            continue
        entity = _date_entity(m)
        if entity is not None:
            scopes.update(scope_keys(entity.norm))
    return scopes
