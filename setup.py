"""Build: pure Python by default; with ``HALLUWATCH_COMPILE=1`` the hot modules are compiled by
mypyc into C extensions (as black and mypy ship themselves), the same source and the same results,
the nightly checks about a fifth faster (bench/README.md).

    HALLUWATCH_COMPILE=1 pip install -e .   # what infra/Dockerfile does; needs a C compiler

An extension shadows its ``.py`` in the same folder, so a compiled editable checkout runs the code
as it was built: after changing a compiled module, build again (or ``make clean``). Everything
else (metadata, dependencies, packages) is in pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import setup

# The modules a night's checks spend their time in: reading sessions (every format; Claude Code
# files take the most) and every detector. None may hold a pydantic model (mypyc compiles none:
# the detectors' models are in detectors/params.py) or use functools.cached_property (compiled,
# it keeps nothing); tests/test_build.py checks both.
COMPILED = [
    "sessions/models.py",
    "sessions/documents.py",
    "sessions/reader.py",
    "sessions/formats/registry.py",
    "sessions/formats/common.py",
    "sessions/formats/claude_code.py",
    "sessions/formats/_messages.py",
    "sessions/formats/_history.py",
    "sessions/formats/_otlp.py",
    "sessions/formats/anthropic_messages.py",
    "sessions/formats/langfuse.py",
    "sessions/formats/langsmith.py",
    "sessions/formats/openai_agents.py",
    "sessions/formats/openai_chat.py",
    "sessions/formats/openai_responses.py",
    "sessions/formats/openhands.py",
    "sessions/formats/openinference.py",
    "sessions/formats/otel_genai.py",
    "sessions/formats/swe_agent.py",
    "detectors/models.py",
    "detectors/entities.py",
    "detectors/action_keywords.py",
    "detectors/action_rules.py",
    "detectors/named_claims.py",
    "detectors/action_claims.py",
    "detectors/faithfulness.py",
    "detectors/invented_ids.py",
    "detectors/not_found.py",
    "detectors/unknown_tool.py",
]


def _extensions() -> list[object]:
    flag = os.environ.get("HALLUWATCH_COMPILE", "")
    if flag in ("", "0"):
        return []
    if flag != "1":
        raise SystemExit(f"HALLUWATCH_COMPILE must be 1 or 0, not {flag!r}")
    from mypyc.build import mypycify

    return list(mypycify(COMPILED, opt_level="3"))


setup(ext_modules=_extensions())
