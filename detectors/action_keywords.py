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

from detectors.action_rules import DEFAULT_RULES, TEST_FAILURE, Rule

Keywords = tuple[tuple[str, ...], ...]


def folded(text: str) -> str | None:
    """``text`` lowercased for keyword tests, or None when lowercasing would not be exact."""
    if "\u0130" in text or "\u0131" in text or "\u017f" in text:
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


# What ``cut`` gives for keywords a text lacks: no text can match (``may_match`` is False).
NEVER: Keywords = ((),)


def words_of(keys: list[Keywords | None]) -> tuple[str, ...]:
    """Every keyword of these tables, once."""
    return tuple(sorted({key for table in keys if table for group in table for key in group}))


def cut(keys: Keywords | None, found: frozenset[str]) -> Keywords | None:
    """``keys`` cut down to the keywords ``found`` in a text (NEVER when a group has none).

    For any text the found text holds (a part of it, or of what it was made from with nothing
    added), ``may_match`` gives the same answer with the cut-down keywords, with fewer tests.
    """
    if keys is None:
        return None
    out = []
    for group in keys:
        kept = found.intersection(group)
        if not kept:
            return NEVER
        out.append(tuple(kept))
    return tuple(out)


def search(
    pattern: re.Pattern[str] | None, keys: Keywords | None, text: str, low: str | None
) -> re.Match[str] | None:
    """``pattern.search(text)``, skipped when the keywords rule a match out."""
    if pattern is None or not may_match(keys, low):
        return None
    return pattern.search(text)


class Anchors(NamedTuple):
    """Where a regex's matches can start: each holds one of ``words`` (in the folded text) that
    starts at most ``lead`` characters after the match does, or (``digit_run``) right after a
    run of digits and white space the match starts in."""

    words: tuple[str, ...]
    lead: int
    digit_run: bool


class RuleKeys(NamedTuple):
    claim: Keywords | None
    commands: Keywords | None
    weak_commands: Keywords | None
    failure: Keywords | None
    failure_anchors: Anchors | None = None


def rule_keys(rule: Rule) -> RuleKeys:
    """The keywords of a rule's regexes (None for a regex with no entry: it always runs)."""
    return RuleKeys(
        KEYS.get(rule.claim),
        KEYS.get(rule.commands or ""),
        KEYS.get(rule.weak_commands or ""),
        KEYS.get(rule.failure or ""),
        ANCHORS.get(rule.failure or ""),
    )


def anchored_search(
    pattern: re.Pattern[str], anchors: Anchors, text: str, low: str
) -> re.Match[str] | None:
    """``pattern.search(text)``, with ``pattern.match`` tried only where a match can start.

    A match of a test runner's failure regex is short and holds a word like "fail" or "err":
    the places it can start are found from those words in the folded text, so long outputs
    with no failure are not scanned position by position.
    """
    if len(low) != len(text):
        return pattern.search(text)
    starts: set[int] = set()
    lead, digit_run = anchors.lead, anchors.digit_run
    for word in anchors.words:
        at = low.find(word)
        while at >= 0:
            first = at - lead
            if digit_run:
                j = at
                while j > 0 and (text[j - 1].isspace() or text[j - 1].isdigit()):
                    j -= 1
                first = min(first, j)
            starts.update(range(max(first, 0), at + 1))
            at = low.find(word, at + 1)
        if len(starts) * 4 > len(text):
            return pattern.search(text)
    match = pattern.match
    for start in sorted(starts):
        found = match(text, start)
        if found:
            return found
    return None


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Rule name -> keywords of its claim, commands, weak_commands and failure regexes.
_BY_RULE: dict[str, dict[str, Keywords]] = {
    "tests pass": {
        # The noun (or "all green"), then the verb.
        "claim": (_words("test spec suite green"), _words("pass green succeed")),
        "commands": (
            # The runner (or the tool a `test` argument follows), then a runner or `test`.
            _words(
                "pytest py.test vitest ctest nextest unittest nose tox nox jest mocha karma "
                "phpunit rspec exunit npm yarn bun npx cargo make just gradle mvn rake cypress "
                "pre-commit go mix dotnet swift deno bazel manage rails flutter playwright "
                "hatch sbt lein stack cabal dune meson ninja zig bats gotestsum turbo nx "
                "xcodebuild fastlane dbt ci check verify validate test"
            ),
            _words(
                "test tox nox jest mocha karma phpunit rspec exunit nose npm yarn bun npx cargo "
                "make just gradle mvn rake cypress pre-commit bats ci dbt scan check verify "
                "validate"
            ),
        ),
        "weak_commands": (("commit",),),
        "failure": (_words("fail err exit compile"),),
    },
    # The runner's name (`make check`, `tox`, or one holding "test"), then the verb.
    "the test run passes": {
        "claim": (
            _words("test spec tox nox jest mocha karma phpunit check playwright cypress"),
            _words("pass green succeed clean"),
        ),
    },
    "lint passes": {
        "claim": (
            _words("lint ruff flake clippy rubocop hook"),
            _words("pass clean green report error issue warning problem ran run"),
        ),
        "commands": (
            _words(
                "commit make just check ci ruff flake lint biome rubocop staticcheck shellcheck "
                "hadolint detekt black isort prettier vet cargo deno dotnet credo format verify "
                "validate"
            ),
        ),
        "weak_commands": (("commit",),),
        "failure": (_words("exit error problem found failed reformat"),),
    },
    "type checks pass": {
        "claim": (
            _words("type mypy pyright tsc"),
            _words("pass clean green report error issue warning problem ran run"),
        ),
        "commands": (
            _words(
                "commit make just check ci mypy pyright tsc phpstan psalm cargo deno dialyzer type "
                "verify validate"
            ),
        ),
        "weak_commands": (("commit",),),
        "failure": (_words("exit error problem found failed reformat"),),
    },
    "formatted the code": {
        "claim": (
            _words("formatted ran run"),  # not "format": it is in the formatters' names too
            _words(
                "fmt format goimports black prettier ktlint spotless fixer isort yapf autopep "
                "stylua ormolu biome"
            ),
        ),
    },
    "the build passes": {
        "claim": (
            _words("build compile built"),
            _words(
                "pass succeed green clean success complet docs documentation site app apk ipa "
                "binar bundle image package wheel project frontend backend"
            ),
        ),
    },
    "ran the playbook": {"claim": (("playbook",),)},
    "committed": {
        "claim": (("commit",), _words("committed made created")),
        "commands": (("commit",),),
        "failure": (_words("commit fatal: error:"),),
    },
    "pushed": {
        "claim": (("pushed",),),
        "commands": (_words("push sync skopeo"),),
        "failure": (
            _words("rejected push fatal: error: permission up-to-date denied unauthorized exit"),
        ),
    },
    "opened a pull request": {
        "claim": (
            _words("pr pull merge mr"),
            _words("opened created submitted raised filed put up"),
        ),
        "commands": (_words("create pull merge_request"),),
    },
    "deployed": {
        "claim": (
            _words("deploy shipped rolled upgraded"),
            _words(
                "deployed complete successful succeeded done live prod staging kicked triggered "
                "release chart out"
            ),
        ),
        "commands": (_words("deploy kubectl helm terraform pulumi vercel wrangler docker heroku"),),
    },
    "CI is green": {
        "claim": (_words("ci pipeline workflow"), _words("green pass succeeded")),
        "commands": (_words("gh glab circleci buildkite"),),
    },
    "merged": {
        "claim": (("merged",),),
        "commands": (("merge",),),
    },
    "applied the migration": {
        "claim": (_words("migrat flyway alembic liquibase prisma goose dbmate sqitch"),),
        "commands": (
            _words(
                "alembic manage rails rake prisma knex flyway liquibase goose sqlx mix dbmate "
                "migrate sequelize diesel artisan gradle"
            ),
        ),
    },
    "restarted": {"claim": (("restarted",),)},
    "scaled": {"claim": (("scaled",),)},
    "rolled back": {"claim": (_words("rolled rollback"),)},
    "updated DNS": {
        "claim": (
            _words("dns cname record"),
            _words("updated changed created added pointed switched"),
        ),
    },
    "renewed the certificate": {
        "claim": (("cert",), _words("renewed issued rotated")),
    },
    "applied the infrastructure change": {
        "claim": (
            _words("applied apply"),
            _words(
                "terraform tofu pulumi infra manifest deployment configmap statefulset daemonset "
                "ingress cronjob"
            ),
        ),
    },
    "published": {"claim": (_words("published released uploaded release"),)},
    "rebased or cherry-picked": {"claim": (_words("rebased cherry"),)},
    "installed a dependency": {"claim": (_words("installed added"),)},
    "regenerated code": {"claim": (("regenerated",),)},
    "tagged a release": {"claim": (_words("tagged tag"),)},
    "seeded the database": {"claim": (("seeded",),)},
    "emailed": {
        "claim": (("mail",), _words("mailed sent delivered")),
        "commands": (_words("mail mutt swaks smtplib sendgrid postmark"),),
    },
    "removed code or files": {
        "claim": (
            _words("removed deleted dropped"),
            _words(
                "file route endpoint function module director folder script import dependenc "
                "test spec handler controller component migration fixture dead branch"
            ),
        ),
    },
    "edited the file": {
        "claim": (
            _words("updated modified edited changed"),
            _words(
                "config settings file env readme yaml yml json toml ini cfg conf properties xml"
            ),
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

# ``STATE_CLAIM``: every match holds one of these words of a form in ``STATE_VERBS`` (keep the
# two in step): a participle, or the word that completes "cancellation ...", "refund ..." or
# "booking ...".
STATE_KEYS: Keywords = (
    _words(
        "cancelled canceled cancellation cancelation refunded issued processed initiated "
        "completed sent updated changed modified edited booked reserved confirmed added removed "
        "deleted emailed transferred created opened upgraded downgraded charged paid closed "
        "assigned approved rejected declined scheduled submitted exchanged reset blocked "
        "enabled disabled subscribed restored archived shipped returned placed finalized "
        "finalised frozen froze unfrozen unfroze locked unlocked suspended activated reactivated "
        "deactivated revoked granted renewed resolved reopened escalated acknowledged restarted "
        "rebooted rolled reverted merged published installed uninstalled moved applied "
        "waived voided adjusted extended notified filed registered enrolled redeemed dispatched "
        "released forwarded invited replaced paused resumed exported imported rerouted redirected "
        "posted scaled rotated purged uploaded replied responded shared logged requested disputed "
        "ordered swapped switched isolated quarantined way hold plan tier texted messaged paged "
        "reversed withdrawn ported now turned went set put underway started kicked done complete "
        "held completed advanced skipped got squared out live actioned taken signed cleared "
        "lodged good arranged organised organized raised increased lowered decreased reduced"
    ),
)
# Regex as written -> where its matches can start (see ``Anchors``). ``TEST_FAILURE``: "fail" in
# "FAILED", "N failures", "Tests failed", "BUILD FAILED" (at most 6 characters in), "err" in "N
# errors", "npm ERR!", "error[E..]" (4), "exit code", "compil" in "could not compile" (10).
ANCHORS: dict[str, Anchors] = {
    TEST_FAILURE: Anchors(("fail", "err", "exit code", "compil"), 10, True),
}
# ``_BACKGROUND`` in ``action_claims``: all three phrases hold the word.
BACKGROUND_KEYS: Keywords = (("background",),)


# --- which keywords a reply holds ----------------------------------------------------------------

# The keywords of the default claims: ASCII letters, none inside "code" or "quote".
CLAIM_WORDS: tuple[str, ...] = words_of([STATE_KEYS, *(KEYS[r.claim] for r in DEFAULT_RULES)])
# Every claim about a command or file named in inline code (``named_claims``) holds one of these
# (or a check mark): its status ("clean", "passes", "0 errors"), "ran" or a file verb.
NAMED_WORDS: tuple[str, ...] = tuple(
    sorted(
        _words(
            "clean green pass succe ok fine happy issue error warning fail problem finding "
            "diagnostic offen complaint lint ran run execut updat edit modif chang creat add wrot "
            "writ delet remov renam mov generat replac patch refactor with via using"
        )
    )
)
ANY = "\0"  # in ``keywords_in``'s answer: the text cannot be folded, any keyword may be in it
_NONE: frozenset[str] = frozenset()


class _TokenWords:
    """Which whitespace-separated tokens hold one of ``words`` (folded, `*` and `_` dropped; a
    word holds no space, so any place it turns up in a text lies within one token). Tokens
    repeat from text to text, so each is only looked at once."""

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = words
        self.known: set[str] = set()  # tokens looked at so far
        self.hit_tokens: set[str] = set()  # those holding a word (or that cannot be folded)
        self.hits: dict[str, frozenset[str]] = {}  # token -> its words

    def learn(self, tokens: list[str]) -> None:
        known, words = self.known, self.words
        if len(known) > 200_000:  # bounded: a night's vocabulary stays well under this
            known.clear()
            self.hit_tokens.clear()
            self.hits.clear()
        for token in tokens:
            if token in known:
                continue
            known.add(token)
            low = folded(token)
            if low is None:
                found = frozenset((ANY,))
            else:
                if "*" in low or "_" in low:
                    low = low.replace("*", "").replace("_", "")
                found = frozenset([word for word in words if word in low])
            if found:
                self.hit_tokens.add(token)
                self.hits[token] = found


_CLAIMS = _TokenWords(CLAIM_WORDS)
_NAMED = _TokenWords(NAMED_WORDS)


def keywords_in(text: str) -> frozenset[str]:
    """The keywords of ``CLAIM_WORDS`` found in ``text`` folded with `*` and `_` dropped, found
    token by token (see ``_TokenWords``)."""
    tokens, index = text.split(), _CLAIMS
    if not index.known.issuperset(tokens):
        index.learn(tokens)
    hits = index.hit_tokens.intersection(tokens)
    if not hits:
        return _NONE
    if len(hits) == 1:
        return index.hits[hits.pop()]
    return _NONE.union(*[index.hits[token] for token in hits])


def named_words_in(text: str) -> bool:
    """Whether ``text`` holds a word of ``NAMED_WORDS`` (found as ``keywords_in`` finds its
    keywords)."""
    tokens, index = text.split(), _NAMED
    if not index.known.issuperset(tokens):
        index.learn(tokens)
    return not index.hit_tokens.isdisjoint(tokens)
