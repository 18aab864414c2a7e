"""What a reply and an evidence item have in common, and excerpts of long items around it.

The judge can only label a claim against evidence it is shown, and a long session does not fit
in one prompt. The parts of a reply that can be wrong in checkable ways are its numbers,
identifiers, paths and names; an evidence item sharing them is likely the one a claim rests on
(or contradicts). Rare shared tokens weigh more than ones every item has (a bare ``1``).
No tokenizer: a token is about four characters, close enough for a budget.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

CHARS_PER_TOKEN = 4
CUT = " […] "  # marks text left out of an excerpt, so the judge knows the item goes on

# Numbers (1,200.50), identifiers and paths (ORD-1234, get_order, src/app.py, v2.4.1), words.
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)*|[A-Za-z_][\w./\\-]*\w|[A-Za-z]")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_CAMEL = re.compile(r"[a-z][A-Z]")
# Capitalised words that start sentences rather than name things.
_COMMON = frozenset(
    """the this that these those there their then than your you our we it its if in on at
    for from with and but or not no yes please thanks thank here sure hello hi let also
    done great okay ok sorry unfortunately however note based after before when what which
    who how why all any some each every one my me he she they them is are was were be been
    has have had do does did can could will would should may might must""".split()  # noqa: SIM905
)


def key_tokens(text: str) -> list[tuple[str, int, int]]:
    """``(normalised token, start, end)`` of each number, identifier, path or capitalised name."""
    found = []
    for match in _TOKEN.finditer(text):
        token = _normalise(match.group())
        if token is not None:
            found.append((token, match.start(), match.end()))
    return found


def _normalise(raw: str) -> str | None:
    if raw[0].isdigit():
        number = raw.rstrip(",")
        if _THOUSANDS.match(number):
            number = number.replace(",", "")
        if "." in number and number.count(".") == 1:
            number = number.rstrip("0").rstrip(".")  # 120.00 and 120 are the same amount
        return number
    if any(c.isdigit() or c in "_./\\-" for c in raw) or _CAMEL.search(raw):
        return raw.lower().rstrip(".")
    if raw[0].isupper() and len(raw) > 2 and raw.lower() not in _COMMON:
        return raw.lower()
    return None


def token_set(text: str) -> frozenset[str]:
    return frozenset(token for token, _, _ in key_tokens(text))


def weights(item_tokens: Sequence[frozenset[str]]) -> dict[str, float]:
    """An inverse document frequency per token over the candidate items."""
    df: Counter[str] = Counter()
    for tokens in item_tokens:
        df.update(tokens)
    n = len(item_tokens)
    return {token: math.log(1 + n / count) for token, count in df.items()}


def relevance(reply: frozenset[str], item: frozenset[str], idf: dict[str, float]) -> float:
    return sum(idf.get(token, 0.0) for token in reply & item)


def excerpt(text: str, shared: Iterable[str], limit: int, *, radius: int = 160) -> str:
    """At most about ``limit`` characters of ``text``: its head, then windows around the places
    where the shared tokens occur, in text order, with ``CUT`` where text was left out."""
    if len(text) <= limit:
        return text
    wanted = set(shared)
    head = min(200, limit // 4)
    windows = [(0, head)]
    for token, start, end in key_tokens(text):
        if token in wanted:
            windows.append((max(0, start - radius), min(len(text), end + radius)))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    parts: list[str] = []
    used = 0
    last_end = 0
    for start, end in merged:
        room = limit - used - len(CUT)
        if room <= 40:
            break
        last_end = start + min(end - start, room)
        parts.append(text[start:last_end].strip())
        used += last_end - start + len(CUT)
    out = CUT.join(parts)
    return out + CUT.rstrip() if last_end < len(text) else out
