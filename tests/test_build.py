"""The modules setup.py compiles with mypyc hold nothing mypyc miscompiles.

A pydantic model in a compiled module fails when the config is validated, and a
``functools.cached_property`` compiles to a property that keeps nothing (every read recomputes):
neither shows in the pure-Python test run, so they are kept out by reading the sources.
"""

from __future__ import annotations

import ast

import pytest
from tests_support import REPO


def _compiled() -> list[str]:
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED":
            return [ast.literal_eval(item) for item in node.value.elts]  # type: ignore[attr-defined]
    raise AssertionError("setup.py defines no COMPILED list")


def _problems(source: str) -> list[str]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name | ast.Attribute | ast.alias):
            name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
            name = node.name if isinstance(node, ast.alias) else name
            if name == "cached_property":
                found.append((node.lineno, "cached_property"))
        if isinstance(node, ast.ClassDef):
            bases = {
                b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
            }
            if bases & {"BaseModel", "DetectorParams", "BaseSettings"}:
                found.append((node.lineno, f"pydantic model {node.name}"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


@pytest.mark.parametrize("module", _compiled())
def test_compiled_module_holds_nothing_mypyc_miscompiles(module: str) -> None:
    assert (REPO / module).is_file(), f"setup.py compiles {module}, which does not exist"
    assert _problems((REPO / module).read_text()) == []


def test_the_check_finds_what_it_looks_for() -> None:
    source = (
        "from functools import cached_property\n"
        "class P(DetectorParams):\n    x: int = 1\n"
        "class E:\n    @cached_property\n    def y(self) -> int:\n        return 1\n"
    )
    assert _problems(source) == [
        "line 1: cached_property",
        "line 2: pydantic model P",
        "line 5: cached_property",
    ]
