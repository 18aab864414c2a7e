"""Keyword prefilters for ``action_claims``: cheap substring tests implied by the default regexes.

Each table maps a regex, as written in ``action_rules``, to groups of lowercase keywords: every
match of that regex contains at least one keyword of every group. Text that fails the test cannot
match, so the regex is skipped; text that passes runs the regex as before. The results are the
same, only faster (most replies, commands and outputs hold no claim or runner word at all). A
regex with no entry (an agent's own rule) always runs.

The tests are made on ``folded(text)``. Lowercasing agrees with ``re.IGNORECASE`` on ASCII
letters except for three characters (U+0130 and the dotless U+0131 match ``i``, the long U+017F
matches ``s``, none lowercases to them), so text holding one of those is not folded and always
gets the regexes.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from detectors.action_rules import DEFAULT_RULES, Rule

Keywords = tuple[tuple[str, ...], ...]

_UNFOLDABLE = ("\u0130", "\u0131", "\u017f")


def folded(text: str) -> str | None:
    """``text`` lowercased for keyword tests, or None when lowercasing would not be exact."""
    if any(char in text for char in _UNFOLDABLE):
        return None
    return text.lower()


def may_match(keys: Keywords | None, low: str | None) -> bool:
    """Whether a regex with these keywords can match the text ``low`` was folded from."""
    if keys is None or low is None:
        return True
    for group in keys:
        for key in group:
            if key in low:
                break
        else:
            return False
    return True


def search(
    pattern: re.Pattern[str] | None, keys: Keywords | None, text: str, low: str | None
) -> re.Match[str] | None:
    """``pattern.search(text)``, skipped when the keywords rule a match out."""
    if pattern is None or not may_match(keys, low):
        return None
    return pattern.search(text)


class RuleKeys(NamedTuple):
    claim: Keywords | None
    commands: Keywords | None
    weak_commands: Keywords | None
    failure: Keywords | None


def rule_keys(rule: Rule) -> RuleKeys:
    """The keywords of a rule's regexes (None for a regex with no entry: it always runs)."""
    return RuleKeys(
        KEYS.get(rule.claim),
        KEYS.get(rule.commands or ""),
        KEYS.get(rule.weak_commands or ""),
        KEYS.get(rule.failure or ""),
    )


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Rule name -> keywords of its claim, commands, weak_commands and failure regexes.
_BY_RULE: dict[str, dict[str, Keywords]] = {
    "tests pass": {
        "claim": (_words("pass green succeed"),),
        "commands": (
            # The runner (or the tool a `test` argument follows), then a runner or `test`.
            _words(
                "pytest py.test vitest ctest nextest unittest nose tox nox jest mocha karma "
                "phpunit rspec exunit npm yarn bun npx cargo make just gradle mvn rake cypress "
                "pre-commit go mix dotnet swift deno bazel manage rails flutter playwright"
            ),
            _words(
                "test tox nox jest mocha karma phpunit rspec exunit nose npm yarn bun npx cargo "
                "make just gradle mvn rake cypress pre-commit"
            ),
        ),
        "weak_commands": (("commit",),),
        "failure": (_words("fail err exit compile"),),
    },
    "committed": {
        "claim": (("commit",),),
        "commands": (("commit",),),
        "failure": (_words("commit fatal: error:"),),
    },
    "pushed": {
        "claim": (("pushed",),),
        "commands": (_words("push sync"),),
        "failure": (_words("rejected push fatal: error: permission up-to-date"),),
    },
    "opened a pull request": {
        "claim": (_words("pr pull merge mr"), _words("open creat submit rais filed put up")),
        "commands": (_words("create pull"),),
    },
    "deployed": {
        "claim": (("deploy",),),
        "commands": (_words("deploy kubectl helm terraform pulumi vercel wrangler docker heroku"),),
    },
    "emailed": {
        "claim": (("mail",),),
        "commands": (_words("mail mutt swaks smtplib sendgrid postmark"),),
    },
    "edited the file": {
        "claim": (
            _words("updated modified edited changed"),
            _words("config settings file env readme"),
        ),
    },
}
# Regex as written -> its keywords.
KEYS: dict[str, Keywords] = {}
for _rule in DEFAULT_RULES:
    for _field, _keys in _BY_RULE[_rule.name].items():
        _regex = getattr(_rule, _field)
        if isinstance(_regex, str):
            KEYS[_regex] = _keys

# ``STATE_CLAIM``: every match holds one participle of ``STATE_VERBS`` (keep the two in step).
STATE_KEYS: Keywords = (
    _words(
        "cancel refund updated changed modified edited booked reserved booking added removed "
        "deleted sent emailed transferred created opened upgraded downgraded issued charged "
        "paid closed assigned approved rejected declined scheduled submitted exchanged reset "
        "blocked enabled disabled subscribed restored archived shipped"
    ),
)
# ``_BACKGROUND`` in ``action_claims``: all three phrases hold the word.
BACKGROUND_KEYS: Keywords = (("background",),)
