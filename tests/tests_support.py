"""Helpers shared by tests (not fixtures)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


def halluwatch_bin() -> str:
    """The installed `halluwatch` console script of the interpreter running the tests."""
    beside = Path(sys.executable).parent / "halluwatch"
    if beside.exists():
        return str(beside)
    found = shutil.which("halluwatch")
    if found is None:
        raise RuntimeError("the halluwatch console script is not installed: pip install -e .")
    return found


PREFECT_ENV = {
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}


def cli_env(**extra: str) -> dict[str, str]:
    """This environment minus its Prefect settings, plus quiet defaults and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_ENV)
    env.update(extra)
    return env


REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HALLUWATCH_SHARED", REPO.parent / "shared"))


def shared_path(relative: str) -> Path:
    """The path of ``relative`` under ``../shared``, or skip the test when it is absent."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development corpus is not beside this checkout")
    return path
