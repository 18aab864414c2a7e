"""The action_claims quick paths answer as the plain code does: the sentence split with its
lookahead in front, the split that tries it only where a break may start, and the
shell-command lookup that passes calls with no command key."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from detectors.action_claims import _SENTENCE, _SHELL_KEYS, _split, command_text
from sessions.models import Event, EventKind

# The split as first written: the lookahead in front of ``_SENTENCE`` only speeds it up.
_PLAIN_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|(?<=[.!?])(?=[A-Z*])")

_PROSE = [
    "All tests pass. I committed and pushed!Done?Yes",
    "Fixed it.\n\n  - **Tests** pass\r\nNext.\u00a0Then\u2028more",
    "Version 1.2.3 is out...   Really?!*Bold* text.\tTab",
    "",
    "\n\n\n",
    "no split here at all",
]


def _random_prose(count: int) -> list[str]:
    rnd = random.Random(7)  # fixed: the same texts every run
    alphabet = "ab .!?\n\r\t\u00a0\u2028AZ*x\x0b\x0c\x1c"
    return ["".join(rnd.choices(alphabet, k=rnd.randint(0, 30))) for _ in range(count)]


@pytest.mark.parametrize("prose", _PROSE)
def test_sentence_split_is_the_plain_split(prose: str) -> None:
    assert _SENTENCE.split(prose) == _PLAIN_SENTENCE.split(prose)


def test_sentence_split_is_the_plain_split_on_random_prose() -> None:
    for prose in _random_prose(20_000):
        assert _SENTENCE.split(prose) == _PLAIN_SENTENCE.split(prose), repr(prose)
    assert _split("Done. All tests pass") == ["Done.", "All tests pass"]


def _plain_split(prose: str) -> list[str]:
    """``_split`` as first written: ``_SENTENCE`` tried at every position."""
    return [s.strip(" \t-*#|•") for s in _SENTENCE.split(prose) if s.strip(" \t-*#|")]


_ABBREVIATED = [
    "Booked with Dr. Okafor. Done.",
    "Paid e.g. fees.\nNext",
    "See No. 5.Then *this*",
    "Dr.\nSmith is in. Mr. \nX",
    "vs. them!And?\n\n- done.",
]


@pytest.mark.parametrize("prose", _PROSE + _ABBREVIATED)
def test_split_tried_only_at_breaks_is_the_plain_split(prose: str) -> None:
    assert _split(prose) == _plain_split(prose)


def test_split_tried_only_at_breaks_is_the_plain_split_on_random_prose() -> None:
    rnd = random.Random(11)
    words = ["Dr.", "e.g.", "No.", "Mrs.", "i.e.", ". ", "!A", "?*", " \n ", "\n\n", "x", "A"]
    texts = _random_prose(20_000)
    texts += ["".join(rnd.choices(words, k=rnd.randint(0, 12))) for _ in range(20_000)]
    for prose in texts:
        assert _split(prose) == _plain_split(prose), repr(prose)


def _plain_command_text(call: Event) -> str:
    """``command_text`` as first written: no quick exit for inputs with no command key."""
    value: Any = call.input
    if isinstance(value, dict):
        for key in _SHELL_KEYS:
            if key in value:
                value = value[key]
                break
        else:
            return ""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, str) and (
        not isinstance(call.input, str)
        or re.search("bash|shell|exec|command", call.name or "", re.I)
    ):
        return value
    return ""


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Bash", {"command": "pytest -q", "description": "run"}),
        ("exec", {"cmd": ["make", "test"]}),
        ("run", {"script": "npm test", "command": "ignored: command comes first"}),
        ("shell", {"commands": ["git add .", "git commit -m x"]}),
        ("Read", {"file_path": "/tmp/x"}),
        ("cancel_reservation", {"reservation_id": "ABC123"}),
        ("Bash", {}),
        ("Bash", "pytest -q"),
        ("custom", "pytest -q"),
        ("custom", ["a", 1]),
        ("Bash", None),
        (None, {"command": 3}),
    ],
)
def test_command_text_is_the_plain_lookup(name: str | None, value: object) -> None:
    call = Event(EventKind.TOOL_CALL, name=name, input=value)
    assert command_text(call) == _plain_command_text(call)
