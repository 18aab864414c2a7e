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

# The modules where a night's time goes (reading Claude Code files, the claim and not-found
# checks), and which hold no pydantic model (mypyc compiles none: detectors/params.py holds the
# detectors' ones). faithfulness.py and entities.py run no faster compiled (measured), so stay.
COMPILED = [
    "sessions/formats/claude_code.py",
    "sessions/formats/common.py",
    "detectors/action_claims.py",
    "detectors/action_keywords.py",
    "detectors/action_rules.py",
    "detectors/named_claims.py",
    "detectors/not_found.py",
    "detectors/invented_ids.py",
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
