"""The generated day of ``bench/code_checks.py``: its two mixes are what they say they are."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter

import pytest

from tests.tests_support import REPO, shared_path

sys.path.insert(0, str(REPO / "bench"))
code_checks = pytest.importorskip("code_checks")
Unit = list[tuple[str, bytes]]  # a group of files read together, as the generator makes them


@pytest.fixture(scope="module")
def units() -> list[Unit]:
    corpus = shared_path("corpus")
    code_checks._CORPUS = corpus
    return code_checks.templates(corpus)


def _families(day: list[Unit]) -> Counter[str]:
    return Counter("tau" if unit[0][0] == "tau.json" else "claude" for unit in day)


def test_the_corpus_mix_takes_every_template_once_a_cycle(units: list[Unit]) -> None:
    day = list(code_checks.day(units, len(units), "corpus"))
    assert _families(day) == _families(units)  # 100 tau-bench to 10 Claude Code
    kinds = "".join("t" if unit[0][0] == "tau.json" else "C" for unit in day)
    assert "CC" not in kinds and not kinds.startswith("C")  # spread, never bunched


def test_the_team_mix_pairs_the_families_in_like_numbers(units: list[Unit]) -> None:
    day = list(code_checks.day(units, 186))  # one cycle: 100 tau-bench, 86 Claude Code
    assert _families(day) == {"tau": 100, "claude": 86}


def test_copies_share_no_id_and_no_text(units: list[Unit]) -> None:
    claude = next(unit for unit in units if unit[0][0] != "tau.json")
    copies = [code_checks.vary(claude, n)[0][1] for n in (1, 2)]
    uuid = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    ids = [set(uuid.findall(copy)) for copy in copies]
    assert ids[0] and ids[1] and ids[0].isdisjoint(ids[1])
    texts = [set(_reply_texts(copy)) for copy in copies]
    assert texts[0] and texts[0].isdisjoint(texts[1])  # each copy's texts its own
    assert len(copies[0]) == len(copies[1])  # same size: the day's bytes stay comparable


def _reply_texts(body: bytes) -> list[str]:
    lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    return [
        block["text"]
        for line in lines
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "text"
    ]
