"""Shared test fixtures.

Tests that read the development corpus in ``../shared`` skip, with the reason, when it is absent:
the project must work for a user who has only the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HALLUWATCH_SHARED", REPO.parent / "shared"))
EXAMPLES = REPO / "examples"


def shared_path(relative: str) -> Path:
    """The path of ``relative`` under ``../shared``, or skip the test when it is absent."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development corpus is not beside this checkout")
    return path


@pytest.fixture
def shared() -> type:
    class _Shared:
        path = staticmethod(shared_path)

    return _Shared
