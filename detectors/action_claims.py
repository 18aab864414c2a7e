"""``action_claims``: the agent says it did something its tool calls do not show.

Every assistant reply to the user (not compaction summaries, harness-injected text or sub-agent
steps) is split into sentences, with code blocks, inline code, quotes and asides removed. A
sentence that states an action is done ("all tests pass", "I committed and pushed", "your
reservation is cancelled") needs a matching tool call before the reply: a rule from the default
pack (``action_rules``), a rule from the agent's config, or a domain tool whose name carries the
action or its object. No matching call: ``unbacked_action_claim``. Matching calls whose latest
known outcome failed, with no later success: ``contradicted_action_claim``.

Precision first: future tense and offers, negations, questions, conditionals, instructions and
reports of an earlier state are not claims; after a compaction the earlier work is out of view, so
only contradictions are reported; a qualified test claim ("the renderer tests pass, but ...") is
never called contradicted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from detectors.action_keywords import (
    ANY,
    BACKGROUND_KEYS,
    CLAIM_WORDS,
    NEVER,
    STATE_KEYS,
    Keywords,
    RuleKeys,
    anchored_search,
    cut,
    folded,
    keywords_in,
    may_match,
    named_words_in,
    rule_keys,
    search,
    words_of,
)
from detectors.action_rules import (
    ACTION_NOUNS,
    AMOUNT_SET,
    DEFAULT_RULES,
    DESCRIBED_STATE,
    EXIT_TAIL,
    LABEL,
    LABEL_CLAIM,
    NAMED_TEST,
    READ_ONLY_COMMAND,
    RUNNER_SUBJECT,
    STATE_VERBS,
    SUCCESS,
    TEST_COMMANDS,
    TYPE_COMMANDS,
    VALUE_CHANGE,
    CompiledRule,
    ToolAction,
    claim_verb,
    joined_verb,
    matched_verb,
    reads_only,
    sentence_stems,
    state_claims,
    stem,
    tool_action,
    tool_verb_action,
    tool_verb_claims,
)
from detectors.invented_ids import input_strings
from detectors.models import Severity, Signal
from detectors.named_claims import (
    Command,
    CommandClaim,
    FileClaim,
    claims_in,
    file_base,
    is_program,
    may_claim,
    reported,
    runs,
    same_arguments,
    simple_commands,
)
from detectors.not_found import mask
from detectors.params import ActionClaimsParams
from detectors.registry import detector
from sessions.formats.common import argv_command, lstrip_head
from sessions.models import Event, EventKind, Session

UNBACKED, CONTRADICTED = "unbacked_action_claim", "contradicted_action_claim"


# --- text: which sentences are claims ---------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTE_LINE = re.compile(r"^\s*>.*$", re.M)
# A markdown table row whose next cell opens with a check mark ("| Migration | ✅ applied |"):
# read as a sentence ("Migration is applied").
_CHECKED_CELL = re.compile(r"[ \t]*\|[ \t]*(?:\u2705|\u2714\ufe0f?|\u2611\ufe0f?)[ \t]*")
# ... and one whose last cell ends with one ("| Plan | Downgraded to Starter ✔️ |"): its cells
# read as one sentence ("Plan Downgraded to Starter ✔️").
_CHECKED_LAST_CELL = re.compile(
    r"[ \t]*\|[ \t]*(?=[^|\n]*?(?:\u2705|\u2714\ufe0f?|\u2611\ufe0f?)[ \t]*\|?[ \t]*(?:\n|\Z))"
)
# ... and one whose last cell is a check mark alone ("| Account disabled | ✅ |"): the mark
# joins the cell before it ("Account disabled ✅").
_MARK_ONLY_CELL = re.compile(
    r"[ \t]*\|[ \t]*(?:\u2705|\u2714\ufe0f?|\u2611\ufe0f?)[ \t]*(?=\|?[ \t]*(?:\n|\Z))"
)
# ... and one whose last cell is a status word alone ("| Lint (`npx eslint .`) | PASS |").
_PASS_CELL = re.compile(r"[ \t]*\|[ \t]*(?:PASS(?:ED)?|OK)[ \t]*(?=\|?[ \t]*(?:\n|\Z))")
_CHECK_MARKS = ("\u2705", "\u2714", "\u2713", "\u2611")  # what any check-mark pattern holds
# A check named and ticked in a status line ("Lint \u2714 Types \u2714 Tests \u2714", "Tests:
# \u2705"): read as the claim it stands for, one sentence each.
_TICKED_CHECK = re.compile(
    r"\b(?P<w>tests?|specs|lint(?:ing)?|types|type[- ]?checks?|typecheck(?:ing)?|typing|build)"
    r"(?:\*\*)?[ \t]*:?(?:\*\*)?[ \t]*(?:\u2705|\u2714|\u2713)\ufe0f?",
    re.I,
)


def _ticked(m: re.Match[str]) -> str:
    word = m.group("w").lower()
    if word.startswith("ty"):
        return " type checks pass. "
    if word.startswith("lint"):
        return " lint passes. "
    return " the build passes. " if word == "build" else " tests pass. "


_QUOTED = re.compile(r"\"[^\"\n]{0,300}\"|“[^”\n]{0,300}”")
_PAREN = re.compile(r"\([^()\n]{0,300}\)")
# Every split starts at a white space, a capital or `*`: the lookahead in front only lets the
# regex engine pass other characters by quickly (the same splits as without it, ~30% sooner).
# A sentence ends at `.`, `!` or `?` and a blank or a capital, or at a line break; not after a
# title or a Latin abbreviation ("with Dr. Okafor", "e.g. the flaky test"), nor after a package
# pattern ("`go test ./...` passes").
_SENTENCE = re.compile(
    r"(?=[\s.!?A-Z*])(?:(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)"
    r"(?<!\bProf\.)(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bNo\.)(?<!/\.\.\.)"
    r"(?<!\bCo\.)(?<!\bInc\.)(?<!\bLtd\.)(?<!\bCorp\.)(?<!\bJr\.)(?<!\bSr\.)\s+|\n+"
    r"|(?<=[.!?])(?=[A-Z*]))"
)
# (Not a colon or comma inside a number, "12:00 PM", "$1,820": nor in `_CLAIM_CLAUSE_END` and
# `_SCOPE_BREAK`.)
_CLAUSE_BREAK = re.compile(r";|[:,](?!\d)|\s[\u2014\u2013-]\s|\bbut\b|\bhowever\b|\bwhile\b", re.I)
_NOT_A_CLAIM = re.compile(
    r"\b(?:will|shall|(?:I|we)'ll|(?:I|we)\s+am|going\s+to|let\s+me|let's|let\s+us|need\s+to|"
    r"needs\s+to|want\s+to|plan\s+to|try(?:ing)?\s+to|have\s+to|has\s+to|should|would|could|"
    r"can|(?-i:may)|might|must|once|if|unless|whether|when|until|after\s+you|before|to\s+(?:make\s+"
    r"sure|ensure|verify|confirm|check|see)|make\s+sure|ensure|verify|check\s+(?:that|if|whether)|"
    r"expect(?:ed|s)?|hope|please|you|your\s+turn|not|no|never|n't|nothing|unable|cannot|"
    r"without|fail(?:ed|s)?\s+to|already|previously|earlier|originally|were|was\s+passing|"
    r"used\s+to|instead\s+of|rather\s+than|in\s+order\s+to|so\s+that|trying|attempt(?:ed)?\s+to|"
    r"now\s+I|next|then\s+I|about\s+to|ready\s+to|how\s+to|"
    # Someone else did it ("because someone else pushed to the branch").
    r"someone|somebody|anyone|nobody|no\s+one|others|another\s+\w+|teammates?|colleagues?|"
    r"the\s+user|upstream|"
    # A reason, not news: "rejected the change because the opportunity is locked".
    r"because|due\s+to|"
    # What happens as a rule: "a technician usually reaches out after a request is created".
    r"usually|typically|normally|generally|after\s+(?:a|an|the|your|each|every)\s)\b|n't\b|n\u2019t\b",
    re.I,
)
# Words right after a claim that undo it ("tests pass except two", "pushed? no").
_UNDONE_AFTER = re.compile(
    r"^\W*(?:yet\b|except\b|apart\s+from\b|other\s+than\b|only\s+(?:locally|partially)\b|"
    r"locally\b|if\b|once\b|when\b|after\s+(?:you|we|I)\b|"
    # ... or a condition after it ("late fees are waived as long as you stay on the plan").
    r"(?:as|so)\s+long\s+as\b|provided\b|providing\b|unless\b|as\s+soon\s+as\b)",
    re.I,
)
_CONTRAST = re.compile(
    r"\b(?:but|except|although|though|however|apart\s+from|other\s+than|aside\s+from|besides|"
    r"only|some|most|\d+\s+of\s+\d+)\b",
    re.I,
)
# "all tests pass" / "the 12 tests pass" / "tests pass": an unqualified test claim.
_UNQUALIFIED_TESTS = re.compile(
    r"^(?:(?:all|the|my|our)\s+)?(?:(?:whole|entire|full|complete)\s+)?(?:(?:\d+|the)\s+)?"
    r"(?:tests?|test\s+suites?)\b"
    r"|^(?:(?:the|our)\s+)?(?:whole\s+|entire\s+|full\s+|complete\s+)?suite\b"  # "the full suite"
    rf"|^(?:the\s+)?(?:whole\s+|entire\s+|full\s+)?{RUNNER_SUBJECT}\s"  # "the Vitest suite"
    r"|^(?:everything\s+(?:is\s+)?)?all\s+green\b"  # "all green": the whole suite
    r"|^everything(?:'s|\u2019s|\s+is)\s+(?:now\s+|still\s+|all\s+)*green\b",
    re.I,
)
# "your bag is added" is a claim, "you" is not; nor is the subject of a claim that starts at
# "re" ("you're now on the Pro plan").
# ... nor is "You're all set \u2714 Your vacation ... is submitted".
_YOUR_OBJECT = re.compile(
    r"\byour\b|\byou['\u2019]$|\byou(?:['\u2019]re|\s+are)\s+(?:all\s+)?(?:set|good\s+to\s+go)\b",
    re.I,
)


def reply_text(text: str) -> str:
    """The prose of a reply: no code, quotes, asides or markdown emphasis."""
    # Each pattern is only run on text holding the character all its matches start with.
    if "```" in text or "~~~" in text:
        text = _CODE_BLOCK.sub(" ", text)
    if "`" in text:
        text = _INLINE_CODE.sub(" CODE ", text)
    if "|" in text and ("PASS" in text or "OK" in text):
        text = _PASS_CELL.sub(" passes", text)
    if "|" in text and any(mark in text for mark in _CHECK_MARKS):
        text = _MARK_ONLY_CELL.sub(" \u2705", text)
        text = _CHECKED_LAST_CELL.sub(" ", _CHECKED_CELL.sub(" is ", text))
    if any(mark in text for mark in _CHECK_MARKS):
        text = _TICKED_CHECK.sub(_ticked, text)
    if ">" in text:
        text = _QUOTE_LINE.sub(" ", text)
    if '"' in text or "\u201c" in text:
        text = _QUOTED.sub(" QUOTE ", text)
    if "(" in text:
        text = _PAREN.sub(" ", text)
    return text.replace("**", "").replace("__", "")


def _sub_mapped(
    pattern: re.Pattern[str],
    replace: str | Callable[[re.Match[str]], str],
    text: str,
    pos: list[int],
) -> tuple[str, list[int]]:
    """``pattern.sub(repl, text)``, and where each character of the result came from in the
    text ``pos`` maps ``text`` to (a replacement's characters: its match's first and last, so a
    sentence that starts or ends inside one keeps the whole match)."""
    out: list[str] = []
    where: list[int] = []
    last = 0
    for m in pattern.finditer(text):
        out.append(text[last : m.start()])
        where += pos[last : m.start()]
        repl = replace if isinstance(replace, str) else replace(m)
        out.append(repl)
        if repl:  # its first half from the match's first character, the rest from its last
            first, final = pos[m.start()], pos[m.end() - 1]
            half = (len(repl) + 1) // 2
            where += [first] * half + [final] * (len(repl) - half)
        last = m.end()
    out.append(text[last:])
    where += pos[last:]
    return "".join(out), where


_STEPS = (
    (("```", "~~~"), _CODE_BLOCK, " "),
    (("`",), _INLINE_CODE, " CODE "),
    (("PASS", "OK"), _PASS_CELL, " passes"),
    (_CHECK_MARKS, _MARK_ONLY_CELL, " \u2705"),
    (_CHECK_MARKS, _CHECKED_CELL, " is "),
    (_CHECK_MARKS, _CHECKED_LAST_CELL, " "),
    (_CHECK_MARKS, _TICKED_CHECK, _ticked),
    ((">",), _QUOTE_LINE, " "),
    (('"', "\u201c"), _QUOTED, " QUOTE "),
    (("(",), _PAREN, " "),
    (("**",), re.compile(r"\*\*"), ""),
    (("__",), re.compile(r"__"), ""),
)


def as_written(text: str, sentence: str) -> str:
    """``sentence`` (of ``sentences(text)``) as the reply wrote it: with its code, quotes and
    asides back, for a person to read."""
    pos = list(range(len(text)))
    prose = text
    for needles, pattern, repl in _STEPS:
        if any(needle in prose for needle in needles):
            prose, pos = _sub_mapped(pattern, repl, prose, pos)
    at = prose.find(sentence)
    if at < 0 or not sentence:
        return sentence
    start, end = pos[at], pos[at + len(sentence) - 1] + 1
    aside = _ASIDE_AFTER.match(text, end)  # "Price updated to $18.99 (was $24.99)"
    end = aside.end() if aside else end
    for mark in ("**", "__"):  # "**Order #W88** has been cancelled": the bold it opens with
        if text.startswith(mark, start - 2) and text.count(mark, start, end) % 2:
            start -= 2
    return text[start:end].strip()


# An aside right after a sentence's last word, which its prose leaves out.
_ASIDE_AFTER = re.compile(r"[ \t]*\([^()\n]{0,300}\)")


def sentences(text: str) -> list[str]:
    return _split(reply_text(text))


# Where a `_SENTENCE` break may start: a newline, or just after a sentence's closing mark (the
# pattern itself starts with a lookahead, which the regex engine tries at every position).
_SENTENCE_AT = re.compile(r"[.!?\n]")


def _split(prose: str) -> list[str]:
    """``_SENTENCE.split(prose)``, stripped, blank pieces left out; `_SENTENCE` is only tried
    where a break may start (see ``_SENTENCE_AT``)."""
    pieces: list[str] = []
    last = pos = 0
    search, match = _SENTENCE_AT.search, _SENTENCE.match
    while (t := search(prose, pos)) is not None:
        at = t.start()
        pos = at + 1
        m = match(prose, at if prose[at] == "\n" else pos)
        if m is not None and prose[at] != "\n" and "|" in prose:
            # A table row is one sentence, whatever its cells hold ("Giveaway!!! 2x your BTC").
            start, end = prose.rfind("\n", 0, at) + 1, prose.find("\n", at)
            if "|" in prose[start : end if end >= 0 else None]:
                m = None
        if m is not None:
            pieces.append(prose[last : m.start()])
            last = m.end()
            pos = max(pos, last)
    pieces.append(prose[last:])
    return [s.strip(" \t-*#|•") for s in pieces if s.strip(" \t-*#|")]


# A noun phrase right before the subject: a relative clause ("the data we submitted", "the file
# I created") describes the object, it does not claim the action.
_NOUN_PHRASE = (
    r"\b(?:the|a|an|this|these|those|what|which|any|every)\s+"
    r"(?:(?!(?:and|but|so|then|also|now|I|we)\b)[\w-]+\s+){1,3}"
)
_RELATIVE_BEFORE_SUBJECT = re.compile(_NOUN_PHRASE + r"$", re.I)
_RELATIVE_WITH_SUBJECT = re.compile(
    _NOUN_PHRASE + r"(?-i:I|[Ww]e)(?:'ve|\s+have|\s+had)?\s+$", re.I
)
_SUBJECT_FIRST = re.compile(r"(?:I|[Ww]e)\b")


def is_claim(sentence: str, start: int, end: int) -> bool:
    """Whether the match at ``start:end`` states a completed action (see module docstring)."""
    if sentence.rstrip().endswith("?") or _UNCHECKED.match(sentence):
        return False
    if _REPORTED.match(sentence):  # "According to the port record, your number has been ported"
        return False
    if _CONDITIONAL.match(sentence) and ";" not in sentence[:start]:
        return False  # "If you use our store, nothing moves: your files are shared across all"
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    prefix = sentence[breaks[-1] if breaks else 0 : start]
    if _SUBJECT_FIRST.match(sentence, start):
        if _RELATIVE_BEFORE_SUBJECT.search(prefix):
            return False
    elif _RELATIVE_WITH_SUBJECT.search(prefix):
        return False
    # "your" names the user's object ("your bag is added"); any other "you" is an instruction.
    if _NOT_A_CLAIM.search(_YOUR_OBJECT.sub(" ", prefix)):
        return False
    return not _UNDONE_AFTER.match(sentence[end:])


# A sentence that opens with a condition: what follows depends on it, up to a semicolon.
_CONDITIONAL = re.compile(
    r"^\W*(?:if|unless|whenever|in\s+case|once|as\s+soon\s+as"
    r"|(?:after|when|before|until)\s+you)\b",  # "After you run it, the asset is retired"
    re.I,
)  # "Once an upgrade goes through, new cards are emailed right away"
# A sentence that says whose record it reads: what follows is reported, not done.
_REPORTED = re.compile(r"^\W*(?:according\s+to|per\s+(?:the|our|its|their|your)\s)", re.I)
# An unchecked box of a markdown task list ("- [ ] Tests pass"): still to do.
_UNCHECKED = re.compile(r"^[\s*+-]*\[ \]")


# What may open a test claim's clause and leave it whole ("and", "verified (that)" ...).
_LEAD_WORD = re.compile(
    r"^\W*(?:(?:and|so|now|also|great|good|done|ok(?:ay)?)\W+|(?:I\s+)?(?:verified|confirmed"
    r"|checked|made\s+sure|ensured)\s+(?:that\s+)?)*",  # marks first: `✅ Tests passing`
    re.I,
)


# "all invoice tests pass": the words that narrow a test claim to part of the suite.
_TEST_QUALIFIER = re.compile(
    r"^(?:(?:all|the|my|our)\s+)?(?:(?:\d+|the)\s+)?(?P<q>(?:[\w-]+\s+){1,2}?)"
    r"(?:tests?|specs?|test\s+suites?)\b"
    rf"|^(?P<name>{NAMED_TEST})\s",  # the test's own name: "TestBucketRefill passes"
    re.I,
)


def qualifier_words(sentence: str, start: int) -> list[str] | None:
    """The words that narrow a test claim with no 'but'/'except' ("all invoice tests pass":
    ``["invoice"]``), read from its clause (after a comma, 'and' or the like); [] when the words
    before "tests" narrow nothing ("all 18 unit tests"), None when they cannot be read (or the
    sentence holds a 'but')."""
    if _CONTRAST.search(sentence):
        return None
    breaks = [m.end() for m in _TEST_CLAUSE.finditer(sentence, 0, start)]
    clause = _LEAD_WORD.sub("", sentence[breaks[-1] if breaks else 0 :].strip())
    m = _TEST_QUALIFIER.match(clause)
    if m is None:  # "... and tests passed": no word before them
        return [] if _UNQUALIFIED_TESTS.match(clause) else None
    words = (m.group("q") or m.group("name")).lower().split()
    return [w for w in words if len(w) >= 3 and w not in _NOT_QUALIFIERS and not w.isdigit()]


# Words before "tests" that narrow nothing: "all 18 unit tests", "all models and tests" (dbt).
_NOT_QUALIFIERS = frozenset(
    {"all", "the", "our", "these", "those", "both", "new", "now", "and", "unit", "models", "data"}
    | {"whole", "entire", "full", "complete"}
)


# A claim about the unit tests, and a run of another suite.
_UNIT_TESTS = re.compile(r"\bunit\s+(?:tests?|specs?|suite)\b", re.I)
_OTHER_SUITE = re.compile(
    r"integration|e2e|end-to-end|acceptance|functional|smoke|system|cypress|playwright"
)
_TEST_CLAUSE = re.compile(_CLAUSE_BREAK.pattern + r"|\band\b", re.I)


def unqualified_test_claim(sentence: str, start: int) -> bool:
    """A test claim that speaks of the whole suite, with no 'but'/'except' anywhere."""
    if _CONTRAST.search(sentence):
        return False
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    clause = sentence[breaks[-1] if breaks else 0 :].strip()
    words = _LEAD_WORD.sub("", clause)
    return bool(_UNQUALIFIED_TESTS.match(words))


# --- evidence: what the calls so far show ------------------------------------------------------

_BACKGROUND = re.compile(r"running in background|background with ID|started in background", re.I)
_SHELL_KEYS = ("command", "cmd", "commands", "script")


_SHELL_NAME = re.compile(r"bash|shell|exec|command", re.I)
_PROGRAM_TOOL = re.compile(
    r"(?:^|_)(kubectl|git|helm|terraform|docker|gh|npm|pnpm|yarn|cargo|make|aws|gcloud|az"
    r"|systemctl|psql|mix|go|pytest|dotnet|gradle|mvn)(?:_|$)",
    re.I,
)
_EDITOR = re.compile(r"str_replace|text_editor|edit_tool", re.I)


def command_text(call: Event) -> str:
    """The shell command of a call, or '' when the call is not a shell command."""
    value: Any = call.input
    if isinstance(value, dict):
        # Most calls (file reads and edits, domain tools) name none of the keys: one test in C.
        if value.keys().isdisjoint(_SHELL_KEYS):
            # `run_kubectl` with `"args": "rollout restart ..."`: the program its name carries.
            args = value.get("args")
            if args and isinstance(args, (str, list)):
                program = _PROGRAM_TOOL.search(call.name or "")
                if program is not None:
                    rest = args if isinstance(args, str) else argv_command([str(a) for a in args])
                    return f"{program.group(1).lower()} {rest}"
            return ""
        for key in _SHELL_KEYS:  # the first one present (a loop: run for every call classified)
            if key in value:
                value = value[key]
                break
        else:
            return ""
    if isinstance(value, list):
        return argv_command([str(v) for v in value])
    if isinstance(value, str) and (
        not isinstance(call.input, str) or _SHELL_NAME.search(call.name or "")
    ):
        return value
    return ""


@dataclass
class Evidence:
    """Per rule: the calls seen so far and the latest failure and success among them."""

    calls: list[int] = field(default_factory=list)
    last_failure: int = -1
    last_failure_why: str = ""
    last_failure_masked: str = ""  # the same, with paths, ids and counts masked, for grouping
    last_success: int = -1

    def contradicted(self) -> bool:
        return self.last_failure >= 0 and self.last_failure > self.last_success


class _Call:
    """A tool call; what it says to each rule is worked out only when a claim needs it."""

    __slots__ = ("backed", "command", "event", "known", "low", "paths", "rec", "strong")

    def __init__(self, event: Event) -> None:
        self.event = event
        # Bit i of `known`: rule i's view of the call is worked out; then bit i of `backed` says
        # the call backs rule i's claim and bit i of `strong` that its outcome decides the claim.
        self.known = self.backed = self.strong = 0
        self.command: str | None = None
        self.low: str | None = None
        # The same three, shared by the calls with this call's tool name and command.
        self.rec: list[int] | None = None
        self.paths: list[str] | None = None  # where it may name a file it changes (`_touches`)


class _Result:
    """A tool result paired with its call; its folded output and outcomes are cached."""

    __slots__ = ("_background", "call", "event", "low", "why")

    def __init__(self, event: Event, call: _Call) -> None:
        self.event, self.call = event, call
        self.low: str | None = None
        self._background: bool | None = None
        self.why: dict[int, str | None] | None = None  # rule index -> failure reason or None

    def background(self) -> bool:
        """A background launch says nothing about the outcome."""
        if self._background is None:
            output = self.event.output or ""
            self.low = folded(output)
            self._background = bool(
                may_match(BACKGROUND_KEYS, self.low) and _BACKGROUND.search(output)
            )
        return self._background


_EXIT_CODE = re.compile(r"Exit code \d+")


def _failure_reason(
    rule: CompiledRule, keys: RuleKeys, result: Event, low: str | None
) -> str | None:
    output = result.output or ""
    anchors = keys.failure_anchors
    if anchors is not None and rule.failure is not None and low is not None:
        hit = (
            anchored_search(rule.failure, anchors, output, low)
            if may_match(keys.failure, low)
            else None
        )
    else:
        hit = search(rule.failure, keys.failure, output, low)
    while hit is not None and rule.failure is not None:
        if _is_json_key(output, hit.start(), hit.end()):
            # `"failed": []`: a JSON member's name, its value is what tells (``failure_body``).
            hit = rule.failure.search(output, hit.end())
        elif _on_warning_line(output, hit.start()):
            # "warning: fixture file x.csv not found, skipping": told, not failed.
            end = output.find("\n", hit.end())
            hit = rule.failure.search(output, end) if end >= 0 else None
        else:
            break
    if hit:
        return hit.group(0).strip()[:60]
    if result.is_error:
        code = _EXIT_CODE.search(output)
        return code.group(0).lower() if code else "an error"
    start = max(0, len(output) - 120)
    closing = EXIT_TAIL.search(output, start) if output.find("xit", start) >= 0 else None
    if closing is not None:  # `... [exit code: 1]`: a shell tool's own note that it failed
        return f"exit code {closing.group(1)}"
    return failure_body(output)


_KEY_END = re.compile(r'"\s*:')


def _is_json_key(output: str, start: int, end: int) -> bool:
    """Whether ``output[start:end]`` is the whole name of a JSON member (`"failed": []`)."""
    return output[start - 1 : start] == '"' and _KEY_END.match(output, end) is not None


_WARNING_LINE = re.compile(r"[ \t]*(?:\[?(?:warn(?:ing)?|notice|info)\]?\b[:\s]|W\d{4}\b)", re.I)


def _on_warning_line(output: str, at: int) -> bool:
    """Whether the line of ``output`` holding ``at`` opens as a warning or a notice."""
    return _WARNING_LINE.match(output, output.rfind("\n", 0, at) + 1) is not None


_FAILED_STATUS = frozenset(
    {"failed", "failure", "error", "rejected", "declined", "denied", "partial_failure"}
)
# A batch's items that failed (`{"added": [...], "failed": [{...}]}`): a part of it failed.
_FAILED_ITEMS = ("failed", "failures", "failed_items", "failed_count", "failure_count")
# A batch's per-item results (`{"results": [{"id": 1, "status": "success"}, ...]}`).
_BATCH_ITEMS = ("results", "items", "records")


def _failed_items(output: str) -> str | None:
    """The failed items of a batch's JSON result, as lowercased text to find ids in: the items
    its per-item results mark failed and the members of its `failed`/`errors` lists; None when
    it names none (the whole call failed)."""
    try:
        data = orjson.loads(output) if lstrip_head(output, 1) in ("{", "[") else None
    except orjson.JSONDecodeError:
        return None
    items: list[Any] = []
    if isinstance(data, dict):
        for key in (*_FAILED_ITEMS, "errors"):
            found = data.get(key)
            if isinstance(found, list):
                items += found
        for key in _BATCH_ITEMS:
            found = data.get(key)
            if isinstance(found, list):
                items += [i for i in found if isinstance(i, dict) and _failed_item(i)]
    elif isinstance(data, list):
        items = [i for i in data if isinstance(i, dict) and _failed_item(i)]
    if not items:
        return None
    return " ".join(s.lstrip("#").lower() for s in input_strings(items))


def _failed_item(item: dict[str, Any]) -> bool:
    status = item.get("status")
    return (isinstance(status, str) and status.lower() in _FAILED_STATUS) or item.get(
        "success"
    ) is False


_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status")
_HTTP_STATUS_KEYS = ("statusCode", "status_code", "httpStatus", "http_status", "status")


def failure_body(output: str) -> str | None:
    """What a JSON object result says of a failure that no error flag marks (chat formats have
    none, and a tool may return its error as data): `"ok": false`, `"success": false`, a failed
    `status`, or an `error`/`errors` member with content and no `ok`/`success` of true; an
    array of such objects, every one failed (a batch API's per-record results); or an HTTP error
    status line before the body (`HTTP 503 Service Unavailable`)."""
    head = lstrip_head(output, 1)
    if head == "H":
        status = _HTTP_STATUS_LINE.match(output.lstrip())
        return f"HTTP {status.group(1)}" if status else None
    if head not in ("{", "[") or len(output) > 200_000:
        return None
    text = output.lstrip()
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if isinstance(data, list):
        failures = [_object_failure(d, text) if isinstance(d, dict) else None for d in data]
        return failures[0] if failures and all(failures) else None
    if not isinstance(data, dict):
        return None
    return _object_failure(data, text)


_HTTP_STATUS_LINE = re.compile(r"HTTP(?:/\d(?:\.\d)?)?\s+([45]\d\d)\b")


def _object_failure(data: dict[str, Any], text: str) -> str | None:
    """``failure_body`` of one JSON object (``text``: the output it was read from)."""
    if data.get("ok") is False or data.get("success") is False:
        return "an error: " + " ".join(text.split())[:60]
    status = data.get("status")
    if isinstance(status, str) and status.lower() in _FAILED_STATUS:
        return f"status {status}"
    for key in _FAILED_ITEMS:
        items = data.get(key)
        if isinstance(items, list) and items:
            return f"partly failed: {len(items)} {key.replace('_', ' ')}"
        if isinstance(items, int) and not isinstance(items, bool) and items > 0:
            return f"partly failed: {key.replace('_', ' ')} {items}"  # `"failed": 1`, a count
    for key in _BATCH_ITEMS:  # `"results": [{... "status": "error"}, ...]`: some items failed
        items = data.get(key)
        if isinstance(items, list) and items:
            failed = sum(1 for item in items if isinstance(item, dict) and _failed_item(item))
            if failed:
                return f"partly failed: {failed} of {len(items)} {key}"
    # A command's exit status (`{"exit_code": 1, "stdout": ..., "stderr": ...}`).
    for key in _EXIT_KEYS:
        code = data.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return f"exit code {code}"
    # An HTTP error status in the body (`{"statusCode": 500, ...}`).
    for key in _HTTP_STATUS_KEYS:
        code = data.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
            return f"HTTP {code}"
    error = data.get("error") or data.get("errors")
    if error and data.get("ok") is not True and data.get("success") is not True:
        return "an error: " + " ".join(text.split())[:60]
    return None


def _short(command: str) -> str:
    line = command.strip().splitlines()[0] if command.strip() else ""
    return line if len(line) <= 60 else line[:57] + "..."


# --- the detector -------------------------------------------------------------------------------


def _domain_tools(session: Session) -> tuple[list[ToolAction], list[ToolAction]]:
    """The session's domain tools as ``tool_action`` reads them, and those whose first word is
    a verb the claims do not know (``tool_verb_action``)."""
    registry = session.registered_tools
    names: set[str] = set()
    if registry is not None and registry.source != "claude_code_builtin":
        names |= registry.names
    if registry is None or registry.allow_mcp:
        call = EventKind.TOOL_CALL
        names |= {e.name for e in session.events if e.kind is call and e.name}
        if registry is not None:  # a harness's own tools (Claude Code's Edit) act on no object
            names -= registry.names
    key = frozenset(names - _HARNESS_TOOLS)
    if key not in _DERIVED:
        if len(_DERIVED) >= 256:
            _DERIVED.clear()
        actions = [tool_action(n) for n in sorted(key)]
        extra = [tool_verb_action(n) for n in sorted(key)]
        _DERIVED[key] = (
            [a for a in actions if a is not None],
            [a for a in extra if a is not None],
        )
    return _DERIVED[key]


# A harness's own bookkeeping tools (Codex's plan, to-do lists, a scratchpad): they act on the
# agent's notes, never on what a reply says was done ("I updated go.mod" is no `update_plan`).
_HARNESS_TOOLS = frozenset(
    {"update_plan", "TodoWrite", "todo_write", "write_todos", "think", "ExitPlanMode"}
)
# Tool names -> their actions: an agent's sessions share one tool set (`tool_action` is pure).
_DERIVED: dict[frozenset[str], tuple[list[ToolAction], list[ToolAction]]] = {}


def _domain_targets(
    actions: list[ToolAction], sentence: str, verb: str, start: int
) -> list[ToolAction]:
    """The domain tools a state-change claim (at ``start``) points at: same verb (narrowed by
    object), else a tool whose object or action the claim's clause names ("refund issued" ->
    `refund_payment`; not "the group's membership is synced, so direct edits are blocked")."""
    stems = sentence_stems(sentence)
    same_verb = [a for a in actions if verb in a.verbs]
    if not same_verb and verb in _UPDATE_LIKE:  # "I've extended your stay": `modify_reservation`
        same_verb = [a for a in actions if "update" in a.verbs]
    if not same_verb and verb in _SAME_AS:  # "Your permit is filed": `submit_permit_application`
        same_verb = [a for a in actions if _SAME_AS[verb] in a.verbs]
    if same_verb:
        # The tools on what the claim's clause names most closely ("I've updated the default
        # address on your profile so future orders go there": `modify_user_address`, not
        # `modify_pending_order_address`), else on what the sentence names.
        for words in (_clause_stems(sentence, start), stems):
            shared = [len(a.objects & words) for a in same_verb]
            most = max(shared)
            if most:
                return [a for a, n in zip(same_verb, shared, strict=True) if n == most]
        return same_verb
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    if breaks:
        stems = sentence_stems(sentence[breaks[-1] :])
    # The object the claim names (for a value or a success said with no verb of its own, its own
    # clause first: "AutoPay is now active — drafted ... starting with the Dec 18 bill" is
    # `enroll_autopay`'s, not the billing tool's; a verb's claim may name its object anywhere in
    # the sentence: "Your return is approved (RMA-661204)" and `create_rma`), else an action it
    # names ("sent" in "... and sent a note" is another claim's verb: `send_email` does not back
    # "issued a refund").
    # ("... is on its way" says no verb: "The offer is on its way to Priya, and her stage is now
    # Offer" is `send_offer`'s, not `update_stage`'s.)
    first = _clause_stems(sentence, start) if verb not in STATE_VERBS or verb == "ship" else stems
    for words in (first, stems):
        named = [a for a in actions if a.objects & words]
        if named and verb in (VALUE_CHANGE, SUCCESS):
            # A value or a success said of the object is no tool's that stops it, unless the
            # sentence says so ("Your phone line is now on 5G Max" is not `suspend_line`'s).
            named = [a for a in named if not a.verbs & _STOPS or a.verbs & stems]
        if named:
            return named
    return [a for a in actions if any(stem(v) in stems for v in a.verbs)]


# Claim verbs that are changes of an object's details when no tool names them.
_UPDATE_LIKE = frozenset({"extend", "swap", "schedule", "unsubscribe", "subscribe"})
# The words of a tool that sends a message (`send_email`, `notify_customer`, `contact_courier`).
_MESSAGING = frozenset(
    {stem(w) for w in ("send", "notify", "notification", "email", "message", "contact", "text")}
    | {stem(w) for w in ("sms", "reply", "forward", "mail", "respond", "post", "chat", "call")}
)
# Tool verbs that stop or end what they act on.
_STOPS = frozenset(
    {"suspend", "cancel", "close", "block", "freeze", "deactivate", "disable", "revoke"}
    | {"terminate", "pause", "lock", "delete", "remove", "end", "stop", "archive"}
)
_MESSAGED = re.compile(r"\b(?:e-?mailed|messaged|texted|replied|responded)\b", re.I)
# Words that make a tool a change of what it names whatever its verb (`request_limit_change`).
_CHANGE_STEMS = frozenset(stem(w) for w in ("change", "increase", "decrease", "adjust"))
# Claim verbs that are another's action when no tool names them.
_SAME_AS = {"file": "submit"}


def _clause_stems(sentence: str, start: int) -> frozenset[str]:
    """The stems of the clause of ``sentence`` holding the claim at ``start``."""
    cut = [m.end() for m in _SCOPE_BREAK.finditer(sentence, 0, start)]
    after = _CLAIM_CLAUSE_END.search(sentence, start)
    return sentence_stems(sentence[cut[-1] if cut else 0 : after.start() if after else None])


# Where a claim's clause ends: a break of its scope, or a reason or purpose after it.
_CLAIM_CLAUSE_END = re.compile(
    r"[;()\u2014\u2013]|:(?!\d)|\s-\s|,(?!\d)|\b(?:and|but|so|because|since|while|which|though)\b",
    re.I,
)


_DEFAULTS = [CompiledRule.of(r) for r in DEFAULT_RULES]  # compiled once, at import


class _Run:
    """One session's pass: the rules, their keyword prefilters and the evidence so far.

    Calls and results are only logged as they come; what a rule's (or the domain tools')
    evidence holds is worked out from the log when a claim needs it, at that claim's reply. Most
    sessions hold no claim at all, so most calls are never looked at.
    """

    def __init__(
        self,
        rules: list[CompiledRule],
        keys: list[RuleKeys],
        actions: list[ToolAction],
        tables: _Tables,
        extra: list[ToolAction] | None = None,
    ) -> None:
        self.rules, self.keys, self.actions = rules, keys, actions
        self.tables = tables
        self.evidence = [Evidence() for _ in rules]
        # Tools whose verb the claims do not know, and those verbs: a reply's sentence holding
        # one of `extra_keys` is read for claims in them (see `_tool_verb_states`).
        self.extra = extra or []
        self.extra_verbs = frozenset(v for a in self.extra for v in a.verbs)
        self.extra_keys = tuple(
            {v[2:] if v.startswith("re") and len(v) > 5 else v for v in self.extra_verbs}
        )
        # Only these tools' evidence is ever read.
        self.domain = {a.name for a in actions} | {a.name for a in self.extra}
        self.by_tool: dict[str, Evidence] = {}  # domain tools called so far
        self.log: list[_Call | _Result] = []  # calls and paired results, in order
        self.calls: list[_Call] = []  # the same, apart
        self.results: list[_Result] = []
        self.monotonic = True  # result indexes strictly increase (as after `Session.reindex`)
        self.called = [0] * len(rules)  # per rule: how many calls were searched for a backing one
        self.seen = [0] * len(rules)  # per rule: how many results (or log entries) it covers
        self.weak: list[list[int]] = [[] for _ in rules]  # per rule: weak calls not yet shown
        self.tools_seen = 0  # the same, for ``by_tool``
        self.by_name = _BY_NAME if rules is _DEFAULTS else {}
        self.classes = _CLASSES if rules is _DEFAULTS else {}
        self.compacted = False
        self.logged = 0  # events[:logged] are logged
        self.pending: dict[str, _Call] = {}  # calls with no result yet, by id
        self.last_index = -2  # the index of the latest result
        self.may_write: list[_Call] = []  # see ``writers``
        self.write_seen = 0
        self.failures: list[tuple[_Result, str]] = []  # see ``failed``
        self.failed_seen = 0
        self.sent_seen = 0  # results[:sent_seen] hold no report of a message sent
        self.sent = False
        self.asked_for = ""  # the latest user message so far (see ``asked``)
        self.asked_at = -1  # ... and its index

    def reports_sent(self) -> bool:
        """Whether a successful result so far reports a message sent (a booking's confirmation
        email, a request's notifications): the call that made it sent one, by whatever name (not
        a lookup, whose `"sent_to"` tells of an earlier message)."""
        if not self.sent:
            results = self.results
            for k in range(self.sent_seen, len(results)):
                if not reads_only(results[k].call.event.name or "") and _sent_report(results[k]):
                    self.sent = True
                    break
            self.sent_seen = len(results)
        return self.sent

    def read_sent(self) -> bool:
        """Whether a lookup's successful result so far reports a message sent earlier (a receipt's
        `"emailed_to"`, a notice's `"sent_at"`)."""
        return any(reads_only(r.call.event.name or "") and _sent_report(r) for r in self.results)

    def asked(self, verb: str, targets: list[ToolAction]) -> bool:
        """Whether the latest user message asks for the action of ``verb`` or of one of
        ``targets``: the verb before what it acts on ("Can I freeze my membership?"), not a
        state asked about ("Is my card frozen?")."""
        text = self.asked_for
        if not text:
            return False
        # The plain verb only: "I can't remember if I booked it" asks for nothing.
        verbs = {verb, *(v for t in targets for v in t.verbs)}
        if any(m.group(1).lower() in verbs for m in _REQUEST.finditer(text)):
            return True
        # ... or asks for something done to what the tools act on ("Get me on the earliest
        # United flight" and `book_flight`), not to look something up.
        request = _ASKED_FOR.search(text)
        if request is None:
            return False
        return any(t.objects & sentence_stems(text[request.start() :]) for t in targets)

    def confirms_report(self, verb: str, said: str, targets: list[ToolAction]) -> bool:
        """Whether ``said``, a change said of the user's object with no doer ("you've been moved
        to room 1408"), answers a user who reported that change and asked to confirm it, not to
        make it ("the front desk moved us; can you confirm which room?"), after a lookup since:
        what the record shows, not what the agent did."""
        text = self.asked_for
        if _DOER.match(said) or not _TO_CONFIRM.search(text) or _ASKED_FOR.search(text):
            return False
        if self.asked(verb, targets):
            return False
        reported = any(claim_verb(w) == verb for w in _PARTICIPLE_WORD.findall(text.lower()))
        return reported and any(
            r.event.index > self.asked_at
            and not r.event.is_error
            and tool_action(r.call.event.name or "") is None
            for r in self.results
        )

    def read_state(self, said: str, own: frozenset[str] = frozenset()) -> bool:
        """Whether ``said``, a present state ("is approved", "is now Urgent"), is one that a
        lookup's output so far reports (`get_permit`: `"status": "approved"`): read, not done."""
        m = _PRESENT_STATE.fullmatch(said)
        if m is None:
            return False
        word = m.group(1).lower()
        if word[:1].isdigit():  # an amount ("is now $5,000"): as a lookup writes it, commas or not
            digits = word.replace(",", "")
            found = re.compile(rf"(?<![\d.]){re.escape(digits)}(?:\.0+)?(?![\d])").search
            return any(
                found((r.event.output or "").replace(",", ""))
                and tool_action(r.call.event.name or "") is None
                for r in self.results
            )
        # As a word of the output: "locked" is not what `"state": "unlocked"` reports, nor
        # "received" what a field `"received_qty": 0` does (`"fee_waived": true` does).
        found_word = re.compile(
            rf"(?<![a-z]){re.escape(word)}(?![a-z])(?![\w-]*\"\s*:\s*(?:false|0|null)\b)"
        ).search
        # ... by a lookup, or by a call of another tool than the claim's that succeeded in an
        # action the state came with (`pause_subscription`: `"skipped_deliveries": [...]` for
        # "the four boxes are skipped", when `skip_delivery` was never called).
        # (As a field it fills, not a status it answers: "scheduled" of `schedule_service_stop`
        # says nothing of the start.)
        found_field = re.compile(
            rf'"(?:[\w-]*_)?{re.escape(word)}(?:_[\w-]*)?"\s*:(?!\s*(?:false|0\b|null|\[\]|""|\{{\}}))'
        ).search
        for r in self.results:
            low = (r.event.output or "").lower()
            if tool_action(r.call.event.name or "") is None and found_word(low):
                return True
            if (
                r.call.event.name not in own
                and not r.event.is_error
                and found_field(low) is not None
                and failure_body(r.event.output or "") is None
            ):
                return True
        return False

    def log_until(self, events: list[Event], end: int) -> None:
        """Logs the calls and results of ``events[:end]`` not logged yet, in order."""
        log, pending = self.log, self.pending
        add, add_call, add_result = log.append, self.calls.append, self.results.append
        call_kind, result_kind = EventKind.TOOL_CALL, EventKind.TOOL_RESULT
        user_kind = EventKind.USER
        last_index = self.last_index
        for k in range(self.logged, end):
            event = events[k]
            meta = event.meta
            if meta and meta.get("compaction"):
                self.compacted = True
            kind = event.kind
            if kind is call_kind:
                entry = _Call(event)
                add(entry)
                add_call(entry)
                if event.call_id is not None:
                    pending[event.call_id] = entry
            elif kind is user_kind:
                self.asked_for, self.asked_at = event.text or "", event.index
            elif kind is result_kind and event.call_id in pending:
                result = _Result(event, pending.pop(event.call_id or ""))
                add(result)
                add_result(result)
                if event.index <= last_index and self.monotonic:
                    self.restart()
                last_index = event.index
        self.last_index = last_index
        self.logged = max(self.logged, end)

    def failed(self) -> list[tuple[_Result, str]]:
        """The results so far of calls that may change files that failed (``_result_failure``),
        with why."""
        found, results = self.failures, self.results
        for k in range(self.failed_seen, len(results)):
            why = _result_failure(results[k].event)
            if why is None:
                continue
            call = results[k].call
            if call.paths is None:
                call.paths = _changed_paths(call)
            if call.paths:  # not a read: whether a read failed says nothing of a change
                found.append((results[k], why))
        self.failed_seen = len(results)
        return found

    def writers(self) -> list[_Call]:
        """The shell calls so far that may write files without naming them (``_may_write``)."""
        found, calls = self.may_write, self.calls
        for k in range(self.write_seen, len(calls)):
            command = _shell(calls[k])
            if command and _may_write(command):
                found.append(calls[k])
        self.write_seen = len(calls)
        return found

    def restart(self) -> None:
        """Result indexes went back: the rules' evidence is replayed from the start."""
        self.monotonic = False
        self.evidence = [Evidence() for _ in self.rules]
        self.seen = [0] * len(self.rules)

    def _classify(self, entry: _Call, i: int) -> None:
        """Whether ``entry`` backs rule ``i``'s claim, and whether its outcome decides it.

        That depends on the tool name and command alone: it is worked out once per name and
        command (and rule), and shared by the calls that repeat them."""
        rec, call = entry.rec, entry.event
        if rec is None:
            command = entry.command = command_text(call)
            key = (call.name or "", command)
            rec = self.classes.get(key)
            if rec is None:
                if len(self.classes) > 50_000:
                    self.classes.clear()
                rec = self.classes[key] = [0, 0, 0]
            entry.rec = rec
        bit = 1 << i
        if not rec[0] & bit:
            self._work_out(rec, entry, i)
        entry.known, entry.backed, entry.strong = rec

    def _work_out(self, rec: list[int], entry: _Call, i: int) -> None:
        bit = 1 << i
        rec[0] |= bit
        rule, keys = self.rules[i], self.keys[i]
        command = entry.command
        # Folded only here: most calls repeat a tool name and command already worked out.
        if entry.low is None and command:
            entry.low = folded(command)
        low = entry.low
        name = entry.event.name or ""
        matches = self.by_name.get(name)
        if matches is None:
            if len(self.by_name) > 10_000:
                self.by_name.clear()
            matches = [any(p.search(name) for p in r.tools) for r in self.rules]
            self.by_name[name] = matches
        by_name = matches[i]
        by_command = bool(command) and search(rule.commands, keys.commands, command or "", low)
        if by_command or (by_name and not command) or (by_name and rule.commands is None):
            rec[2] |= bit
        if command == "view" and _EDITOR.search(name):
            return  # Anthropic's text editor showing a file (`"command": "view"`) changes nothing
        backed = by_name or by_command
        if not backed and command:  # a weak command backs the claim but decides nothing
            backed = search(rule.weak_commands, keys.weak_commands, command, low) is not None
        if backed:
            rec[1] |= bit

    def _outcome(
        self,
        entry: _Result,
        i: int,
        ev: Evidence,
        succeeded: bool = False,
        before: int | None = None,
    ) -> None:
        """Records in ``ev`` the outcome for rule ``i`` of a result whose call decides it. After
        an earlier success (``succeeded``, or one among ``results[:before]``, looked for only
        then) a failure saying nothing was left to do is none."""
        why = entry.why
        if why is None:
            why = entry.why = {}
        if i not in why:
            entry.background()  # folds the output
            why[i] = _failure_reason(self.rules[i], self.keys[i], entry.event, entry.low)
        reason, already = why[i], self.rules[i].already_done
        if (
            reason is not None
            and already is not None
            and already.search(entry.event.output or "")
            and (succeeded or (before is not None and self._succeeded_before(before, i)))
        ):
            reason = None
        call = entry.call
        command = _short(call.command or "") or call.event.name or "the call"
        _update(ev, entry.event.index, reason, command)

    def backed(self, i: int) -> bool:
        """Whether any call so far backs rule ``i``'s claim."""
        ev = self.evidence[i]
        if not self.monotonic:
            return bool(self._replay(i).calls)
        if not ev.calls:
            calls, bit = self.calls, 1 << i
            for k in range(self.called[i], len(calls)):
                entry = calls[k]
                if not entry.known & bit:
                    self._classify(entry, i)
                if entry.backed & bit:
                    if not entry.strong & bit and self.rules[i].weak_evidence is not None:
                        self.weak[i].append(entry.event.index)  # backs once its work shows
                        continue
                    ev.calls.append(entry.event.index)  # only whether there is one is read
                    break
            self.called[i] = len(calls)
            if not ev.calls and self.weak[i] and self._weak_shown(i):
                ev.calls.append(self.weak[i][0])
        return bool(ev.calls)

    def _weak_shown(self, i: int) -> bool:
        """Whether a result of a weak command of rule ``i`` shows it did the work (a hook)."""
        pattern, bit = self.rules[i].weak_evidence, 1 << i
        for entry in self.results:
            call = entry.call
            if not call.known & bit:
                self._classify(call, i)
            weak = call.backed & bit and not call.strong & bit
            if weak and pattern is not None and pattern.search(entry.event.output):
                return True
        return False

    def outcome(self, i: int) -> Evidence:
        """Rule ``i``'s evidence with the latest failure and success among the calls so far.

        With increasing result indexes, the latest failure comes after the latest success
        exactly when the last result that decides the claim failed: only that one is looked
        for, from the end. Otherwise every call and result is replayed.
        """
        if not self.monotonic:
            return self._replay(i)
        results, ev, bit = self.results, self.evidence[i], 1 << i
        for k in range(len(results) - 1, self.seen[i] - 1, -1):
            entry = results[k]
            call = entry.call
            if not call.known & bit:
                self._classify(call, i)
            if call.strong & bit and not entry.background():
                succeeded = ev.last_success >= 0
                ev.last_failure = ev.last_success = -1
                self._outcome(entry, i, ev, succeeded, before=k)
                break
        self.seen[i] = len(results)
        return ev

    def _succeeded_before(self, k: int, i: int) -> bool:
        """Whether a result before ``results[k]`` that decides rule ``i`` succeeded (looked for
        only when the rule has a failure that says nothing was left to do)."""
        rule, bit = self.rules[i], 1 << i
        if rule.already_done is None:
            return False
        for entry in self.results[:k]:
            if not entry.call.known & bit:
                self._classify(entry.call, i)
            if (
                entry.call.strong & bit
                and not entry.background()
                and _failure_reason(rule, self.keys[i], entry.event, entry.low) is None
            ):
                return True
        return False

    def _replay(self, i: int) -> Evidence:
        """Rule ``i``'s evidence, replaying every call and result logged since the last time."""
        log, ev, bit = self.log, self.evidence[i], 1 << i
        for k in range(self.seen[i], len(log)):
            entry = log[k]
            if isinstance(entry, _Call):
                if not entry.known & bit:
                    self._classify(entry, i)
                if entry.backed & bit:
                    weak = not entry.strong & bit and self.rules[i].weak_evidence is not None
                    if not weak or self._weak_shown(i):
                        ev.calls.append(entry.event.index)
            elif entry.call.strong & bit and not entry.background():
                self._outcome(entry, i, ev, ev.last_success >= 0)
        self.seen[i] = len(log)
        return ev

    def tool_evidence(self) -> dict[str, Evidence]:
        """The domain tools' evidence from every call and result logged so far."""
        log, by_tool, domain = self.log, self.by_tool, self.domain
        for k in range(self.tools_seen, len(log)):
            entry = log[k]
            if isinstance(entry, _Call):
                name = entry.event.name
                if name in domain:
                    by_tool.setdefault(name, Evidence()).calls.append(entry.event.index)
                continue
            call = entry.call.event
            tool = by_tool.get(call.name or "")
            if tool is None or entry.background():
                continue
            result = entry.event
            output = result.output or ""
            why = ("an error: " + output.strip()[:60]) if result.is_error else failure_body(output)
            _update(tool, result.index, why, call.name or "")
        self.tools_seen = len(log)
        return by_tool


# Tool name -> whether each default rule's tools match it (kept across sessions).
_BY_NAME: dict[str, list[bool]] = {}
# (tool name, command) -> what a call says to the default rules (see ``_Call``).
_CLASSES: dict[tuple[str, str], list[int]] = {}


# A sentence that may hold a claim: the sentence; per rule that finds a claim in it, the rule's
# index and where the claim starts; the state-change claims in it (verb, where it starts and
# where it ends, what it says), or None when it cannot hold one.
# (verb group, start, end, as said, whether only a contradiction may be reported)
_StateClaim = tuple[str | None, int, int, str, bool]
_Candidate = tuple[str, list[tuple[int, int]], list[_StateClaim] | None]


@dataclass
class _Tables:
    """The claim keywords of a session's rules (NEVER: no text can match)."""

    state: Keywords | None
    claims: list[Keywords | None]
    words: tuple[str, ...]  # the keywords of `state` and `claims`
    unfiltered: bool  # a rule with no keywords: every reply is looked at
    indexed: bool  # all are default claim keywords: ``keywords_in`` finds them
    rules: list[CompiledRule]
    # The keywords a reply holds -> `state` and `claims` cut down to them, or None when no claim
    # can match (few sets of keywords recur in every night's replies: each is cut once).
    cuts: dict[frozenset[str], tuple[Keywords | None, list[Keywords | None]] | None] = field(
        default_factory=dict
    )

    def cut(self, words: frozenset[str]) -> tuple[Keywords | None, list[Keywords | None]] | None:
        if words in self.cuts:
            return self.cuts[words]
        state = cut(self.state, words)
        claims = [cut(keys, words) for keys in self.claims]
        none = state is NEVER and all(keys is NEVER for keys in claims)
        found = None if none else (state, claims)
        if len(self.cuts) >= 4096:  # bounded: never grow for good
            self.cuts.clear()
        self.cuts[words] = found
        return found


def _is_reply(event: Event) -> bool:
    """A reply to the user: not a tool step, sub-agent step, injected text or compaction."""
    meta = event.meta
    return (
        event.kind is EventKind.ASSISTANT
        and bool(event.text)
        and event.subagent is None
        and not (meta and (meta.get("synthetic") or meta.get("compaction")))
    )


_DEFAULT_KEYS = [rule_keys(r.rule) for r in _DEFAULTS]
_CLAIM_WORDS = frozenset(CLAIM_WORDS)
_DEFAULT_WORDS = (  # without and with the state-change keywords
    words_of([k.claim for k in _DEFAULT_KEYS]),
    words_of([STATE_KEYS, *(k.claim for k in _DEFAULT_KEYS)]),
)

_DEFAULT_TABLES = tuple(
    _Tables(state, [k.claim for k in _DEFAULT_KEYS], words, False, True, _DEFAULTS)
    for state, words in zip((NEVER, STATE_KEYS), _DEFAULT_WORDS, strict=True)
)


@detector(
    "action_claims",
    version=3,
    params=ActionClaimsParams,
    kinds=("unbacked_action_claim", "contradicted_action_claim"),
)
def action_claims(session: Session, params: ActionClaimsParams) -> list[Signal]:
    if params.rules or params.replace_defaults:
        base = [] if params.replace_defaults else _DEFAULTS
        rules = base + [CompiledRule.of(r) for r in params.rules]
        keys = [rule_keys(r.rule) for r in rules]
    else:
        rules, keys = _DEFAULTS, _DEFAULT_KEYS
    actions, extra = _domain_tools(session) if params.derive_from_tools else ([], [])
    claims = [k.claim for k in keys]
    # State changes are only checked against the agent's own tools.
    state = STATE_KEYS if actions or extra else NEVER
    words = words_of([state, *claims]) if rules is not _DEFAULTS else ()
    if rules is _DEFAULTS:
        tables = _DEFAULT_TABLES[bool(actions or extra)]
    else:
        indexed = set(words) <= _CLAIM_WORDS
        tables = _Tables(state, claims, words, None in claims, indexed, rules)
    run = _Run(rules, keys, actions, tables, extra)
    signals: list[Signal] = []
    events, reply_kind = session.events, EventKind.ASSISTANT
    for at, event in enumerate(events):
        if event.kind is not reply_kind or not event.text:
            continue
        meta = event.meta  # a reply to the user (see ``_is_reply``)
        if event.subagent is not None or (
            meta and (meta.get("synthetic") or meta.get("compaction"))
        ):
            continue
        text = event.text
        found_in = _candidates(text, tables)
        if run.extra_keys:
            found_in = _tool_verb_states(text, run, found_in)
        named = _named_claims(text) if _may_name(text) and may_claim(text) else []
        found = []
        if found_in or named:  # the calls and results so far are logged when a claim needs them
            run.log_until(events, at)
            found = _check_reply(event, run, found_in)
            if named:
                found = _check_named(event, run, named, found)
        if run.domain and _DONE_WORDS.search(text):
            run.log_until(events, at)
            found += _after_failure(event, run, {s.value for s in found})
        signals += found
    return signals


# --- what a failed call's reply says was done --------------------------------------------------

# A sentence saying its object was done, in words no claim pattern knows ("The ISF has been
# transmitted to CBP", "your refill (Rx #44) went through", "Late checkout is confirmed for
# room 612", "The duplicate gift was refunded"): after a matching tool failed with no later
# success, the reply states what did not happen.
_DONE_AFTER_FAILURE = re.compile(
    r"\b(?P<past>was|were)\s+(?:successfully\s+)?(?P<pv>[a-z]{3,}(?:ed|en))\b"
    r"|\b(?:has|have|(?<=[a-z]['\u2019])ve)\s+(?:now\s+|also\s+|just\s+)?been\s+"
    r"(?:successfully\s+)?(?P<hv>[a-z]{3,}(?:ed|en))\b"
    r"|\b(?:is|are)\s+(?:now\s+|all\s+|fully\s+)?"
    r"(?P<done>confirmed|complete|completed|done|processed|finali[sz]ed|submitted|through)\b"
    r"|\b(?P<went>went\s+through)\b",
    re.I,
)
_DONE_WORDS = re.compile(r"\b(?:was|were|been|is|are|went)\s", re.I)  # a cheap first look
# A sentence that tells of a failure or of history is no such claim ("Your refund was declined",
# "The order was already refunded on May 3").
_TELLS_FAILURE = re.compile(
    r"\b(?:not|no|never|unable|unfortunately|failed|fails?|failure|error|declined|rejected|denied"
    r"|refused|bounced|already|previously|earlier|originally|still|pending|yet|instead|ago"
    r"|yesterday|back\s+in|last\s+(?:week|month|year|night)"
    r"|(?:on|in|since)\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s*\d)\b"
    r"|n't\b",
    re.I,
)


def _after_failure(reply: Event, run: _Run, said: set[str]) -> list[Signal]:
    """Contradicted claims of ``reply`` in the words of ``_DONE_AFTER_FAILURE``: about a tool
    whose calls so far all failed (the object the claim's clause names before the claim, or the
    tool's own verb), in a sentence no other claim of the reply was found in."""
    evidence = run.tool_evidence()
    if not any(ev.contradicted() for ev in evidence.values()):
        return []
    tools = [*run.actions, *run.extra]
    out: list[Signal] = []
    for sentence in _split(reply_text(reply.text)):
        if _TELLS_FAILURE.search(sentence) or not _DONE_AFTER_FAILURE.search(sentence):
            continue
        value = as_written(reply.text, sentence.strip())
        if value in said:
            continue
        for m in _DONE_AFTER_FAILURE.finditer(sentence):
            if not is_claim(sentence, m.start(), m.end()):
                continue
            word = m.group("pv") or m.group("hv")
            verb = claim_verb(word) if word else None
            if verb is not None:  # a known verb: only its own tools ("was refunded": `refund_*`)
                targets = [a for a in tools if verb in a.verbs]
            elif m.group("past"):  # "was needed", "were located": no claim of its own
                continue
            else:  # the object the clause names before the claim: "The ISF ... has been ..."
                cut = [b.end() for b in _SCOPE_BREAK.finditer(sentence, 0, m.start())]
                before = sentence_stems(sentence[cut[-1] if cut else 0 : m.start()])
                targets = [a for a in tools if a.objects & before]
            if not targets:
                continue
            said_here = m.group(0)
            verdict = _tool_verdict(targets, evidence, said_here, verb or "", run.compacted)
            if verdict[0] != CONTRADICTED:
                continue
            by_object = _object_verdict(
                run, targets, sentence, m.start(), said_here, verb or "", reply.text
            )
            verdict = verdict if by_object is None else by_object
            if verdict[0] != CONTRADICTED:
                continue
            out.append(_claim_signal(reply, value, verdict))
            break
    return out


def _tool_verb_states(text: str, run: _Run, found_in: list[_Candidate]) -> list[_Candidate]:
    """``found_in`` with the claims of the reply in the verbs of the session's own tools that
    the claims do not know (``tool_verb_claims``), each a state of its sentence (verb None: its
    tools are found by the participle it says) unless a known claim covers it already."""
    low = text.lower()
    keys = [k for k in run.extra_keys if k in low]
    if not keys:
        return found_in
    out = list(found_in)
    at = {candidate[0]: k for k, candidate in enumerate(out)}
    for sentence in _split(reply_text(text)):
        lowered = sentence.lower()
        if not any(k in lowered for k in keys):
            continue
        claims = tool_verb_claims(sentence, run.extra_verbs)
        if not claims:
            continue
        k = at.get(sentence)
        states = list((out[k][2] or []) if k is not None else [])
        spans = [(s[1], s[2]) for s in states]
        for start, end, said in claims:
            if not any(start < e and end > s for s, e in spans):
                states.append((None, start, end, said, False))
        if k is None:
            at[sentence] = len(out)
            out.append((sentence, [], states))
        else:
            out[k] = (sentence, out[k][1], states)
    return out


_SAID_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?")


def _verb_targets(extra: list[ToolAction], sentence: str, said: str) -> list[ToolAction]:
    """The tools of ``extra`` whose verb ``said`` says ("has been redirected" ->
    `redirect_shipment`), narrowed to those on an object the sentence names."""
    words = _SAID_WORD.findall(said)
    forms = {stem(w.replace("-", "")) for w in words} | {stem(w.rsplit("-", 1)[-1]) for w in words}
    same = [a for a in extra if a.verbs & forms]
    stems = sentence_stems(sentence)
    return [a for a in same if a.objects & stems] or same


def _label_targets(run: _Run, label: str, verb: str, sentence: str) -> list[ToolAction]:
    """The tools on the object a summary's label names ("Refund", "Device unlock", "Late
    checkout"): its action noun's tools, or those whose objects it names (of its verb, if one
    is said and any has it); none for a label naming no tool's object ("Status"), unless the
    line is ticked ("\u2705 Week of June 8 \u2014 skipped": the tools of its verb)."""
    stems = sentence_stems(label)
    nouns = {ACTION_NOUNS[w] for w in label.lower().split() if w in ACTION_NOUNS}
    tools = [*run.actions, *run.extra]
    named = [a for a in tools if a.objects & stems or a.verbs & (nouns | stems)]
    if not named and verb and any(mark in sentence for mark in _CHECK_MARKS):
        return [a for a in tools if verb in a.verbs]
    same = [a for a in named if verb in a.verbs]
    return same or named


def _update(ev: Evidence, index: int, why: str | None, command: str) -> None:
    if why is None:
        ev.last_success = index
    else:
        ev.last_failure, ev.last_failure_why = index, f"`{command}` failed ({why})"
        ev.last_failure_masked = f"`{mask(command)}` failed ({mask(why)})"


def _keywords(text: str, tables: _Tables) -> frozenset[str] | None:
    """The claim keywords in ``text`` (None: it cannot be folded, any keyword may be in it).

    Every keyword of the prose, so of any of its sentences, is in the raw text once `*` and `_`
    are dropped (the prose only drops text, puts spaced words in its place and drops `**` and
    `__`), so the keywords the raw text lacks can be left out of every test.
    """
    if tables.indexed:
        found = keywords_in(text)
        return None if ANY in found else found
    raw = folded(text)
    if raw is None:
        return None
    if "*" in raw or "_" in raw:
        raw = raw.replace("*", "").replace("_", "")
    return frozenset([word for word in tables.words if word in raw])


def _candidates(text: str, tables: _Tables) -> list[_Candidate]:
    """The sentences of a reply that may hold a claim, with what the text alone says of them."""
    state_keys, claim_keys = tables.state, tables.claims
    if any(mark in text for mark in _CHECK_MARKS) and _TICKED_CHECK.search(text):
        words = None  # "Tests \u2714" says "pass" in a mark: every keyword may be in it
    else:
        words = _keywords(text, tables)
    if words is not None:
        if not words and not tables.unfiltered:
            return []  # no sentence can hold a claim
        found = tables.cut(words)
        if found is None:
            return []
        state_keys, claim_keys = found
    prose = reply_text(text)
    low = folded(prose)
    state = state_keys is not NEVER and may_match(state_keys, low)
    active = [i for i, keys in enumerate(claim_keys) if keys is not NEVER and may_match(keys, low)]
    if not state and not active:
        return []  # no sentence can hold a claim
    rules = tables.rules
    out: list[_Candidate] = []
    # A sentence without one of the reply's keywords can only hold a claim of a rule with none.
    skip_bare = words is not None and not tables.unfiltered
    for sentence in _split(prose):
        low = folded(sentence)
        if skip_bare and low is not None:
            for word in words or ():
                if word in low:
                    break
            else:  # none of the reply's keywords: no claim (the keys are cut down to them)
                continue
        hits: list[tuple[int, int]] = []
        for i in active:
            if not may_match(claim_keys[i], low):
                continue
            for m in rules[i].claim.finditer(sentence):
                if is_claim(sentence, m.start(), m.end()):
                    hits.append((i, m.start()))
                    break
        if not hits and ":" in sentence:
            # "**Dependency:** Installed `psycopg2` 2.9.9": a claim opening the line after its
            # label, read as the sentence it would be without it.
            head = _LABEL_HEAD.match(sentence)
            if head is not None:
                rest, at = sentence[head.end() :], head.end()
                for i in active:
                    if may_match(claim_keys[i], low):
                        hit = rules[i].claim.search(rest)
                        if hit is not None and is_claim(rest, hit.start(), hit.end()):
                            hits.append((i, at + hit.start()))
        states: list[_StateClaim] | None = None
        if state and may_match(state_keys, low):
            states = []
            for m in state_claims(sentence, low):
                states.append((matched_verb(m), m.start(), m.end(), m.group(0), False))
                if m.group("v6"):  # "... and closed the ticket": a claim of its own
                    said = m.group("v6")
                    states.append((joined_verb(m), m.start("v6"), m.end("v6"), said, False))
            if any(mark in sentence for mark in _LABEL_MARKS):
                # "Refund: done", "Late checkout: added ✔", "Week of June 8 — skipped" (before
                # any state said later: "Sibling discount: applied, since Theo is enrolled").
                label = LABEL_CLAIM.match(sentence)
                if label is not None and not any(s[1] < label.end() for s in states):
                    verb = claim_verb(label.group("v")) if label.group("v") else None
                    said = label.group("label")
                    states.append(
                        (f"{LABEL}:{verb or ''}", label.start(), label.end(), said, False)
                    )
            # "is booked for Saturday": only a failed booking makes it one (also beside another
            # state: "You're all booked — your round trip is confirmed").
            said_at = [(s[1], s[2]) for s in states]
            for m in DESCRIBED_STATE.finditer(sentence):
                if not any(a < m.end() and m.start() < b for a, b in said_at):
                    verb = claim_verb(m.group("v"))
                    states.append((verb, m.start(), m.end(), m.group(0), True))
        if hits or states:
            out.append((sentence, hits, states))
    return out


# A summary line's label before a capitalised sentence ("Dependency: Installed ...").
_LABEL_HEAD = re.compile(r"^\W*[A-Z][\w /&-]{1,30}?\s*:\s+(?=[A-Z])")
# What separates a label from its outcome (see `LABEL_CLAIM`).
_LABEL_MARKS = (":", "\u2014", "\u2013", "\u2192", "->")


# A result's report of a message it sent: `"status": "sent"`, `"email_sent": true` (not an
# order's `"status": "delivered"`).
_SENT_REPORT = re.compile(
    r'"(?:status|state|delivery_status)"\s*:\s*"sent"|"delivery_status"\s*:\s*"delivered"'
    r'|"(?:\w+_)?(?:sent|e?mailed|texted)_(?:to|at)"\s*:\s*"'  # its recipient or time
    r'|"(?:\w*_)?(?:e-?mail|notification|message|sms)s?_?sent"\s*:\s*true',
    re.I,
)
_MESSAGE_WORD = re.compile(r"e-?mail|notif|sms|message|@[\w-]+\.\w", re.I)  # or an address
_MESSAGE_RULES = re.compile(r"^(?:emailed|(?:send|notify) via )")


# A claim about part of a batch ("3 of the 4 packages", "all but one"): a partly failed call
# is what it reports.
_COUNT = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_PARTIAL_CLAIM = re.compile(
    rf"\b{_COUNT}\s+of\s+(?:the\s+|your\s+)?{_COUNT}\b|\ball\s+but\b|\b(?:some|most)\s+of\b",
    re.I,
)
# A verb before what it acts on, as a request says it ("freeze my membership").
_REQUEST = re.compile(
    r"\b([A-Za-z]+)\s+(?:my|the|a|an|our|it|this|these|those|them|me|us|his|her|their)\b", re.I
)
# A request to act: "Get me on ...", "Can you move ...", "I'd like to cancel ..." (not "can you
# check whether ...": a question about what is).
_ASKED_FOR = re.compile(
    r"(?:^|[.!?]\s+)(?:please\s+)?(?:(?:can|could|would)\s+you\s+(?:please\s+)?|"
    r"I(?:'d|\s+would)\s+like\s+(?:you\s+)?to\s+|I\s+(?:want|need)\s+(?:you\s+)?to\s+)?"
    r"(?!(?:check|confirm|tell|see|look|find|verify|show|let|know|is|are|do|does|did)\b)"
    r"(?:get|put|sign|add|move|make|set|book|cancel|change|switch|send|schedule|reserve)\b",
    re.I,
)
# A state said in the present: "is approved", "are closed", or a value "is now Urgent" (a
# lookup reporting it makes the sentence a report).
_PRESENT_STATE = re.compile(
    r"(?:is|are|(?:has|have)\s+(?:also\s+)?been)\s+(?:also\s+|now\s+(?:an?\s+)?)?(?:[$\u20ac\u00a3]\s?)?(\w+|\d[\d,]*(?:\.\d+)?)\s?%?",
    re.I,
)


_DOER = re.compile(r"\W*(?:I|we)\b", re.I)
_PARTICIPLE_WORD = re.compile(r"\b[a-z]{3,}(?:ed|en)\b")
_TO_CONFIRM = re.compile(r"\b(?:confirm|check|verify|make\s+sure|double-check)\b", re.I)


def _sent_report(result: _Result) -> bool:
    """Whether a successful result reports a message sent (see ``_SENT_REPORT``)."""
    output = result.event.output or ""
    return (
        not result.event.is_error
        and '"' in output
        and _SENT_REPORT.search(output) is not None
        and _MESSAGE_WORD.search(output) is not None
        and failure_body(output) is None
    )


def _sent_elsewhere(run: _Run, found: list[_Verdict], sentence: str) -> bool:
    """Whether the only unbacked claims of a sentence are of a message sent ("the confirmation
    email has been sent") and a successful result reports one; or, said in the past ("Your
    receipt was emailed to you on January 4"), a lookup does: what it read, not what was done."""
    if not all(v[0] == UNBACKED and _MESSAGE_RULES.match(v[3].get("rule", "")) for v in found):
        return False
    return run.reports_sent() or (_SENT_IN_PAST.search(sentence) is not None and run.read_sent())


_SENT_IN_PAST = re.compile(r"\b(?:was|were)\s+(?:e-?mailed|sent|texted)\b", re.I)


def _check_reply(reply: Event, run: _Run, found_in: list[_Candidate]) -> list[Signal]:
    signals: list[Signal] = []
    for sentence, hits, states in found_in:
        if any(run.rules[i].rule.about_ci for i, _ in hits):
            # The checks of a sentence about CI are CI's ("... and lint passed too").
            hits = [(i, at) for i, at in hits if not run.rules[i].rule.ci_runs_it]
        verdicts = [_verdict(run, i, sentence, start) for i, start in hits]
        # A domain-tool check only speaks when no rule already found the claim backed
        # ("I sent the email" after `send_email`); rules about different actions stand alone.
        if states and not any(v[0] == "" for v in verdicts):
            for verb, start, end, said, only_contradiction in states:
                # A tool named for the very verb said ("has been initiated" and
                # `initiate_deposit_disposition`) first, else the tools the verb or object point at.
                targets = _verb_targets(run.extra, sentence, said) if run.extra else []
                if verb == AMOUNT_SET:  # "your limit is now $5,000": a tool that sets the limit
                    stems = _clause_stems(sentence, start)
                    targets = [
                        a
                        for a in run.actions
                        if ("update" in a.verbs or a.objects & _CHANGE_STEMS) and a.objects & stems
                    ]
                    verb = "update"
                elif verb and verb.startswith(f"{LABEL}:"):  # only tools on the labelled object
                    verb = verb[len(LABEL) + 1 :]
                    targets = _label_targets(run, said, verb, sentence)
                elif targets:
                    verb = verb or next(iter(targets[0].verbs))
                elif verb:
                    targets = _domain_targets(run.actions, sentence, verb, start)
                    if (
                        run.extra
                        and verb in STATE_VERBS  # a verb, not a value or plan said changed
                        and not any(verb in a.verbs for a in targets)
                        and not any(_SAME_AS.get(verb) in a.verbs for a in targets)
                    ):
                        # No tool of the verb said: a tool on the clause's object whose verb the
                        # claims do not know ("I've added 2 GB of data" and `refuel_data`) may be
                        # the one, rather than one that does another known thing to the same
                        # object (`suspend_line`); "the background check is underway".
                        stems = _clause_stems(sentence, start)
                        targets = (
                            [a for a in run.extra if a.objects & stems]
                            or targets
                            or [a for a in run.extra if a.verbs & stems]
                        )
                if verb == "send" and _MESSAGED.search(said):
                    # "I've messaged Jamal": only a tool that sends a message did (a refill "sent
                    # to the pharmacy" may be any tool's).
                    targets = [a for a in targets if (a.verbs | a.objects) & _MESSAGING]
                if targets and is_claim(sentence, start, end):
                    verdict = _tool_verdict(
                        targets, run.tool_evidence(), said, verb or "", run.compacted
                    )
                    if verdict[0] in ("", CONTRADICTED):  # what of the objects the claim names?
                        by_object = _object_verdict(
                            run, targets, sentence, start, said, verb or "", reply.text
                        )
                        verdict = verdict if by_object is None else by_object
                    if verdict[0] == "":
                        verdict = _flag_verdict(run, targets, said, verb or "") or verdict
                    if verdict[0] == UNBACKED and (
                        run.read_state(said, frozenset(t.name for t in targets))
                        or _read_label(run, sentence, said)
                        or run.confirms_report(verb or "", said, targets)
                    ):
                        continue  # "Yes, your permit is approved": what a lookup said
                    if (
                        not only_contradiction
                        or verdict[0] == CONTRADICTED
                        # "Your membership is frozen from May 1" after "Can I freeze my
                        # membership?": said of what was asked for, not of an old state.
                        or (verdict[0] == UNBACKED and run.asked(verb or "", targets))
                    ):
                        verdicts.append(verdict)
        found = [v for v in verdicts if v[0] not in ("", "skip")]
        if _PARTIAL_CLAIM.search(sentence):  # "I rerouted 3 of the 4": it says what failed
            found = [v for v in found if "partly failed" not in v[1]]
        if not found or _sent_elsewhere(run, found, sentence):
            continue
        # One signal per sentence: a contradiction outranks a missing call.
        verdict = next((v for v in found if v[0] == CONTRADICTED), found[0])
        signals.append(_claim_signal(reply, as_written(reply.text, sentence.strip()), verdict))
    return signals


def _claim_signal(reply: Event, value: str, verdict: _Verdict) -> Signal:
    """The signal of a claim ``value`` in ``reply`` that ``verdict`` found unbacked or
    contradicted."""
    kind, why, events, data = verdict
    return Signal(
        kind=kind,
        value=value,
        events=[reply.index, *events],
        explanation=why,
        severity=Severity.HIGH if kind == CONTRADICTED else Severity.MEDIUM,
        data=data,
    )


# (kind, or "" when backed, "skip" when undecidable; explanation; events; Signal.data)
_Verdict = tuple[str, str, list[int], dict[str, Any]]
_NONE: _Verdict = ("", "", [], {})
_SKIP: _Verdict = ("skip", "", [], {})


def _verdict(run: _Run, i: int, sentence: str, start: int) -> _Verdict:
    rule = run.rules[i]
    if not run.backed(i):
        if run.compacted:
            return _SKIP
        how = "no matching command" if rule.commands is not None else "no matching tool"
        why = f"Says {rule.name}, but {how} ran before this reply."
        return UNBACKED, why, [], {"rule": rule.name, "preceding_error": None}
    ev = run.outcome(i)
    if not ev.contradicted():
        return _NONE
    if rule.rule.strict_subject and not unqualified_test_claim(sentence, start):
        # Only an unqualified claim can be contradicted, or one whose qualifier the failed run
        # named ("all invoice tests pass" after `pytest tests/test_invoice_totals.py` failed),
        # or one whose words narrow nothing ([]: "all 18 unit tests").
        words = qualifier_words(sentence, start)
        failed = ev.last_failure_why.split("` failed", 1)[0].lower()
        if _UNIT_TESTS.search(sentence) and _OTHER_SUITE.search(failed):
            return _NONE  # "Unit tests pass" after the integration suite failed to start
        if words != [] and not any(stem(w) in failed for w in words or ()):
            return _NONE
    return (
        CONTRADICTED,
        f"Says {rule.name} after {ev.last_failure_why} with no later successful run.",
        [ev.last_failure],
        {"rule": rule.name, "preceding_error": ev.last_failure_masked},
    )


def _tool_verdict(
    targets: list[ToolAction], by_tool: dict[str, Evidence], said: str, verb: str, compacted: bool
) -> _Verdict:
    names = ", ".join(f"`{t.name}`" for t in targets[:3])
    seen = {t.name: by_tool[t.name] for t in targets if t.name in by_tool}
    if not seen:
        if compacted:
            return _SKIP
        why = f'Says "{said}", but no matching tool ({names}) was called before this reply.'
        data = {"rule": f"{verb} via `{targets[0].name}`", "preceding_error": None}
        return UNBACKED, why, [], data
    if all(ev.contradicted() for ev in seen.values()):
        tool, last = max(seen.items(), key=lambda item: item[1].last_failure)
        why = f'Says "{said}" after {last.last_failure_why} with no later successful call.'
        data = {"rule": f"{verb} via `{tool}`", "preceding_error": last.last_failure_masked}
        return CONTRADICTED, why, [last.last_failure], data
    return _NONE


def _read_label(run: _Run, sentence: str, said: str) -> bool:
    """Whether a summary line's outcome ("**Permit:** submitted to the city on Aug 28") is a
    value a lookup's output so far holds (`"status": "submitted"`): read, not done."""
    label = LABEL_CLAIM.match(sentence)
    if label is None or label.group("label") != said or not label.group("v"):
        return False
    word = re.escape(label.group("v").lower())
    value = re.compile(rf'":\s*"[^"]*(?<![a-z]){word}(?![a-z])')
    return any(
        tool_action(r.call.event.name or "") is None
        and value.search((r.event.output or "").lower()) is not None
        for r in run.results
    )


def _flag_verdict(run: _Run, targets: list[ToolAction], said: str, verb: str) -> _Verdict | None:
    """A backed claim whose matching call's latest result says, in a field named for the
    participle said, that it did not happen: "has been sent to Boots" after a refill request
    answered `"status": "on_hold", "sent_to_pharmacy": false`."""
    word = _LAST_WORD.search(said)
    if word is None or len(word.group(0)) < 4:
        return None
    names = {t.name for t in targets}
    latest = next(
        (r for r in reversed(run.results) if r.call.event.name in names and not r.event.is_error),
        None,
    )
    output = latest.event.output or "" if latest is not None else ""
    flag = re.search(rf'"({word.group(0).lower()}(?:_\w+)?)"\s*:\s*false\b', output)
    if latest is None or flag is None:
        return None
    tool = latest.call.event.name
    why = f'Says "{said}", but `{tool}` answered `"{flag.group(1)}": false`.'
    data = {"rule": f"{verb} via `{tool}`", "preceding_error": f'"{flag.group(1)}": false'}
    return CONTRADICTED, why, [latest.event.index], data


_LAST_WORD = re.compile(r"[A-Za-z]+(?=\W*$)")


# --- the object a domain claim names -----------------------------------------------------------

# An identifier as a reply writes it: letters and digits (at least one digit), maybe a `#` or
# dashes ("HSR97W", "#W2890441", "INC-20431").
# (Not a count and its unit: "a 6-month plan", "the 30-day window".)
_OBJECT_ID = re.compile(
    r"(?<![\w$.:/-])(?!\d+-[a-z]+(?![\w/-]))#?(?=[\w-]*\d)[A-Za-z0-9][\w-]{3,}(?![\w/-])"
)
# What ends the part of a sentence a claim speaks of ("I cancelled ABC123; XYZ789 remains").
_SCOPE_BREAK = re.compile(
    r"[;()\u2014\u2013]|:(?!\d)|\s-\s|,\s*(?:and|then|so)\b"
    r"|\b(?:but|however|while|whereas|although|though|except|which|and\s+then)\b",
    re.I,
)
_NEAR = 6  # words either side of the claim an object id may be, within its part
# Words that make an id in the claim's part not its object ("XYZ789 remains active").
_NOT_THE_OBJECT = re.compile(
    r"\b(?:not|no|n't|never|remains?|remained|still|unchanged|untouched|other|already|"
    r"previously|kept|keep)\b|n't\b",
    re.I,
)


def _object_verdict(
    run: _Run,
    targets: list[ToolAction],
    sentence: str,
    start: int,
    said: str,
    verb: str,
    text: str,
) -> _Verdict | None:
    """A domain claim, checked against the objects it names: each id the claim's part of the
    sentence (or the list a sentence ending in a colon introduces) names that an earlier call
    passed as the kind of argument the matching tools take (a `reservation_id`) needs a matching
    call naming it, and one that did not fail. None when it names no such object (the tools'
    verdict stands); backed when it does and those calls succeeded, though another failed."""
    cut = [m.end() for m in _SCOPE_BREAK.finditer(sentence, 0, start)]
    after = _SCOPE_BREAK.search(sentence, start)
    first, last = cut[-1] if cut else 0, after.start() if after else len(sentence)
    before = sentence[first:start].split()
    end = start + len(said)
    scope = (
        " ".join(before[-_NEAR:]) + " " + said + " " + " ".join(sentence[end:last].split()[:_NEAR])
    )
    if sentence.rstrip().endswith(":"):  # "These reservations are cancelled:" then a list
        scope += " " + _listed(text, as_written(text, sentence.strip()))
    named = {m.group(0).lstrip("#").lower() for m in _OBJECT_ID.finditer(scope)}
    if not named and "(" in text and not _PARTIAL_CLAIM.search(sentence):
        # ... else the ids it gives in parentheses ("Milo's checkup (APT-55140) has been moved"),
        # which its prose leaves out (not for a claim about part of a batch: "3 of the 4 (...)").
        asides = " ".join(_PAREN.findall(as_written(text, sentence.strip())))
        named = {m.group(0).lstrip("#").lower() for m in _OBJECT_ID.finditer(asides)}
    if not named and cut:
        # ... else those of a list item's label before it ("**L-2208461** \u2013 roaming is now
        # on"), for a claim the label's line holds alone.
        label = sentence[: cut[0]]
        if "|" in label:  # ... or of a table row's first cell ("#5120 | Subject | \u2705 Closed")
            label = label.split("|", 1)[0]
        if _LABEL_LINE.match(label):
            named = {m.group(0).lstrip("#").lower() for m in _OBJECT_ID.finditer(label)}
    if not named or _NOT_THE_OBJECT.search(scope):
        return None
    names = {t.name for t in targets}
    keys: set[str] = set()  # the arguments the matching tools were given
    for entry in run.calls:
        if entry.event.name in names and isinstance(entry.event.input, dict):
            keys.update(entry.event.input)
    objects = set()  # the named ids some earlier call passed as one of those arguments
    given = set()  # what the matching tools were given as those arguments
    for entry in run.calls:
        args = entry.event.input
        if isinstance(args, dict):
            for key in keys & args.keys():
                # A list argument names each of its items (`"ticket_ids": ["4411", "4415"]`).
                for item in input_strings(args[key]):
                    value = item.lstrip("#").lower()
                    if value in named:
                        objects.add(value)
                    if entry.event.name in names:
                        given.add(value)
    # ... and those of the shape the matching tools take (`po_...Fe7` where `cancel_payout` was
    # given `po_...Fe3`): read from a listing, never passed to a call.
    shaped = {n for n in named - objects if any(_same_shape(n, g) for g in given)}
    if shaped:  # ... but not what a matching call made ("the new key (apikey-93b0d8)")
        made = " ".join(
            (r.event.output or "").lower()
            for r in run.results
            if r.call.event.name in names and not r.event.is_error
        )
        objects |= {n for n in shaped if n not in made}
    if not objects:
        return None
    outcome: dict[str, tuple[int, int, str]] = {}  # object -> last failure, last success, why
    for result in run.results:
        call = result.call.event
        if call.name not in names:
            continue
        values = {v.lstrip("#").lower() for v in input_strings(call.input)}
        on = objects & values
        if not on:
            continue
        output = result.event.output or ""
        body = None if result.event.is_error else failure_body(output)
        call_failed = result.event.is_error or body is not None
        # A batch that failed in part failed for the items its output marks failed.
        marked = _failed_items(output) if body and body.startswith("partly failed") else None
        # ... and succeeded for the others its lists name (not a policy they all share).
        listed: set[str] = set()
        if marked is not None and isinstance(call.input, dict):
            for arg in call.input.values():  # (not `value`, a str above: mypyc checks types)
                if isinstance(arg, list):
                    listed.update(v.lstrip("#").lower() for v in input_strings(arg))
        for obj in on:
            if marked is not None and obj not in marked and obj not in listed:
                continue
            failure, success, why = outcome.get(obj, (-1, -1, ""))
            if call_failed and (marked is None or obj in marked):
                failure = result.event.index
                why = f"`{call.name}` failed: {output.strip()[:60]}"
            else:
                success = result.event.index
            outcome[obj] = (failure, success, why)
    calls_on = {
        obj
        for entry in run.calls
        if entry.event.name in names
        for obj in objects & {v.lstrip("#").lower() for v in input_strings(entry.event.input)}
    }
    missing = sorted(objects - calls_on)
    rule = f"{verb} via `{targets[0].name}`"
    if missing:
        tools = ", ".join(f"`{n}`" for n in sorted(names)[:3])
        why = f'Says "{said}" of {missing[0].upper()}, but no matching call ({tools}) named it.'
        return UNBACKED, why, [], {"rule": rule, "preceding_error": None, "object": missing[0]}
    # (An object that some call acted on with success is not one whose action failed: a section
    # all the calls named, "CHEM-201-02", when one of three students' enrolments failed.)
    if not outcome:  # only objects a batch's partial failure leaves undecided (a shared policy)
        return None
    failed = [(o, f) for o, (f, ok, _) in outcome.items() if f > ok and ok < 0]
    if failed:
        obj, index = failed[0]
        why = f'Says "{said}" of {obj.upper()} after {outcome[obj][2]} with no later success.'
        data = {"rule": rule, "preceding_error": mask(outcome[obj][2]), "object": obj}
        return CONTRADICTED, why, [index], data
    return _NONE


# What a list item's label looks like up to its break: a few words or an id, no verb of a clause.
_LABEL_LINE = re.compile(r"^\W*(?:[\w#.-]+\s*){1,5}[\s:\u2014\u2013-]*$")


_ID_PREFIX = re.compile(r"^([a-z]{2,8})[_-][a-z0-9]")
_LETTERS_DIGITS = re.compile(r"([a-z]{1,4})\d{3,}")  # `l1001`, `w2378156`


def _same_shape(a: str, b: str) -> bool:
    """Whether two ids share a type prefix (`po_`, `cus_`, `INC-`) and about their length, or
    are the same letters then as many digits (`L1001` and `L1002`)."""
    pa, pb = _ID_PREFIX.match(a), _ID_PREFIX.match(b)
    if pa is not None and pb is not None:
        return pa[1] == pb[1] and abs(len(a) - len(b)) <= 2
    la, lb = _LETTERS_DIGITS.fullmatch(a), _LETTERS_DIGITS.fullmatch(b)
    return la is not None and lb is not None and la[1] == lb[1] and len(a) == len(b)


_LIST_ITEM = re.compile(r"\s*(?:[-*\u2022]|\d{1,2}[.)])\s+\S")


def _listed(text: str, intro: str) -> str:
    """The list items right after the sentence ``intro`` in ``text`` (none when it is not
    found, or no list follows)."""
    at = text.find(intro)
    if at < 0:
        return ""
    items: list[str] = []
    for line in text[at + len(intro) :].splitlines()[1:]:
        if _LIST_ITEM.match(line):
            items.append(line)
        elif line.strip() or items:
            break
    return " ".join(items)


# --- commands the reply names in inline code ----------------------------------------------------


def _may_name(text: str) -> bool:
    """Whether a reply may claim a named command or file ran or changed: inline code, and one of
    the words such a claim holds (``NAMED_WORDS``) or a check mark."""
    if "`" not in text:
        return False
    return named_words_in(text) or any(mark in text for mark in _CHECK_MARKS)


# A sentence's closing marks inside inline code, stood in for while a reply is split.
_MASK = str.maketrans(".!?", "\ue000\ue001\ue002")
_UNMASK = str.maketrans("\ue000\ue001\ue002", ".!?")


def _named_claims(text: str) -> list[tuple[str, list[CommandClaim | FileClaim]]]:
    """The sentences of a reply (as written) that claim a command it names in inline code ran,
    with those claims (whether a span names a program is settled when the claim is checked)."""
    if "```" in text or "~~~" in text:
        text = _CODE_BLOCK.sub(" ", text)
    if ">" in text:
        text = _QUOTE_LINE.sub(" ", text)
    masked = "`" in text
    if masked:  # no sentence ends inside inline code (`Inventory.Tests`, `pytest -x?`)
        text = _INLINE_CODE.sub(lambda m: m.group(0).translate(_MASK), text)
    out: list[tuple[str, list[CommandClaim | FileClaim]]] = []
    for sentence in _split(text):
        if masked:
            sentence = sentence.translate(_UNMASK)
        if sentence.rstrip().endswith("?") or not may_claim(sentence):
            continue
        claims = [
            claim
            for claim in claims_in(sentence)
            if is_claim(claim.shape, claim.start, claim.start)
            and not reported(claim.shape, claim.start, claim.end)
        ]
        if claims:
            out.append((sentence, claims))
    return out


def _check_named(
    reply: Event,
    run: _Run,
    named: list[tuple[str, list[CommandClaim | FileClaim]]],
    found: list[Signal],
) -> list[Signal]:
    """``found`` (the rules' signals of the reply) with the named-command claims' added: one
    signal per sentence, a contradiction outranking a missing call."""
    out = list(found)
    for sentence, claims in named:
        verdicts = [v for v in (_named_verdict(run, c) for c in claims) if v[0]]
        if not verdicts:
            continue
        verdict = next((v for v in verdicts if v[0] == CONTRADICTED), verdicts[0])
        kind = verdict[0]
        same = next(
            (k for k, s in enumerate(out) if s.value in sentence or sentence in s.value), None
        )
        if same is not None:
            if out[same].kind == CONTRADICTED or kind != CONTRADICTED:
                continue  # the rules' signal stands
            del out[same]
        out.append(_claim_signal(reply, sentence, verdict))
    return out


def _shell(entry: _Call) -> str:
    if entry.command is None:
        entry.command = command_text(entry.event)
    return entry.command


def _named_verdict(run: _Run, claim: CommandClaim | FileClaim) -> _Verdict:
    """Whether the calls so far ran the commands a claim names, and how their last runs went;
    or touched the files it names."""
    if isinstance(claim, FileClaim):
        return _file_verdict(run, claim)
    programs = {words[0] for entry in run.calls for words in simple_commands(_shell(entry))}
    verdict = _NONE
    for named in claim.commands:
        if not is_program(named, programs):
            continue  # not a command after all (a word in code that no call ran)
        said = " ".join(named.key)
        matching = [entry for entry in run.calls if runs(named, _shell(entry))]
        if not matching:
            if run.compacted or _mentioned(run, named.last_word):
                continue  # a wrapper (`make lint`) may have run it; the work before is unseen
            why = f"Says it ran `{named.written}`, but no call ran `{said}` before this reply."
            data = {"rule": f"ran `{said}`", "preceding_error": None}
            verdict = verdict if verdict[0] else (UNBACKED, why, [], data)
            continue
        if not claim.success or _CONTRAST.search(claim.shape):
            continue
        narrowed = [e for e in matching if same_arguments(named, _shell(e))] or matching
        last = next(
            (
                entry
                for entry in reversed(run.results)
                if any(entry.call is call for call in narrowed) and not entry.background()
            ),
            None,
        )
        failed = _command_failure(run, last, named.written) if last is not None else None
        if last is not None and failed is not None and _rerun_since(run, named, last):
            continue  # a wrapper (`make check`) that runs it passed after the failure
        if last is not None and failed is not None:
            command = _short(_shell(last.call))
            return (
                CONTRADICTED,
                f"Says `{named.written}` ran clean after `{command}` failed ({failed}) with no "
                "later successful run.",
                [last.event.index],
                {
                    "rule": f"`{said}` ran clean",
                    "preceding_error": f"`{mask(command)}` failed ({mask(failed)})",
                },
            )
    return verdict


def _command_failure(run: _Run, entry: _Result, written: str) -> str | None:
    """Why a run of the command a reply named (``written``) failed, or None: by the rules whose
    commands it is (a test or lint run's failure lines, even behind `| tail`), else by the
    result's error flag, exit status or error body."""
    call, result = entry.call, entry.event
    why = entry.why
    if why is None:
        why = entry.why = {}
    decided = False
    for i, rule in enumerate(run.rules):
        if rule.commands is None or not rule.commands.search(written):
            continue
        bit = 1 << i
        if not call.known & bit:
            run._classify(call, i)
        if call.strong & bit:
            decided = True
            if i not in why:
                why[i] = _failure_reason(rule, run.keys[i], result, entry.low)
            if why[i] is not None:
                return why[i]
    return None if decided else _result_failure(result)


def _rerun_since(run: _Run, named: Command, failed: _Result) -> bool:
    """Whether a later shell step that does not only read, and did not fail, names the command's
    program in its command or output: a wrapper (`make check`, `npm run ci`) that ran it again
    and passed."""
    words = r"\s+".join(re.escape(word) for word in named.key)  # `go test`, not any `go`
    pattern = re.compile(rf"(?<![\w-]){words}(?![\w-])", re.I)
    for result in run.results:
        if result.event.index <= failed.event.index:
            continue
        command = _shell(result.call)
        if not command or _READ_ONLY.fullmatch(command) or _result_failure(result.event):
            continue
        if named.args and runs(named, command) and not same_arguments(named, command):
            continue  # the program on other targets (`mypy src/api/` after `mypy src/payments/`)
        if pattern.search(command) or pattern.search(result.event.output or ""):
            return True
    return False


def _mentioned(run: _Run, word: str) -> bool:
    """Whether a step so far names ``word``: a tool's name, a shell command, or the output of a
    call that is not a file read or search (a wrapper such as `make lint` echoes what it runs,
    a `run_tests` tool reports its runner)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.I)
    for entry in run.calls:
        if pattern.search(entry.event.name or "") or pattern.search(_shell(entry)):
            return True
    for result in run.results:
        if not _READS.match(result.call.event.name or "") and pattern.search(
            result.event.output or ""
        ):
            return True
    return False


# Tools that only read or search files: naming a file, they do not change it.
_READS = re.compile(
    r"^(?:mcp__\w+__)?(?:read|view|grep|glob|ls|list|search|find|open|cat|get|fetch|show|stat"
    r"|NotebookRead|WebFetch|WebSearch|TodoWrite|codebase_search|file_search)",
    re.I,
)
_READ_ONLY = re.compile(READ_ONLY_COMMAND, re.I)
# Commands that only run checks or show things: they leave the project's files as they are.
_CHECKS_ONLY = re.compile(
    rf"{TEST_COMMANDS}|{TYPE_COMMANDS}"
    r"|\b[\w.-]+\s+(?:check|validate|verify|ls|list|show|info|outdated|version|plan|diff"
    r"|describe|inspect|status|log|view|doctor|tree|why|search|--version|--help)\b",
    re.I,
)
_WRITES_ANYWAY = re.compile(r"--fix\b|--write\b|\s-w\b|--update-snapshots|\s-u\b|>\s*\S")


def _may_write(command: str) -> bool:
    """Whether a shell command may change files without naming them: anything but a command
    that only reads, or only runs tests, type checks and other checks (no `--fix`, no `>`)."""
    known = _MAY_WRITE.get(command)
    if known is None:
        if len(_MAY_WRITE) > 20_000:
            _MAY_WRITE.clear()
        known = _MAY_WRITE[command] = not _READ_ONLY.fullmatch(command) and (
            bool(_WRITES_ANYWAY.search(command))
            or not all(_CHECKS_ONLY.search(" ".join(w)) for w in simple_commands(command))
        )
    return known


_MAY_WRITE: dict[str, bool] = {}  # command -> `_may_write` (commands recur across sessions)


def _file_verdict(run: _Run, claim: FileClaim) -> _Verdict:
    """Whether a call so far touched each file a claim names, and how those calls went: the
    claim is contradicted when every one failed (an edit whose old text was not found), and
    no shell step that may write files ran after the last."""
    writers = run.writers()
    verdict = _NONE
    for written in claim.files:
        base = file_base(written)
        if not base:
            continue
        failed = [(r, why) for r, why in run.failed() if _touches(r.call, base)]
        if failed:
            last, why = failed[-1]
            if any(w.event.index > last.event.index for w in writers) or len(failed) < sum(
                1 for r in run.results if _touches(r.call, base)
            ):
                continue  # a later shell step may have done it, or another call did
            command = _short(_shell(last.call)) or last.call.event.name or "the call"
            return (
                CONTRADICTED,
                f"Says it {claim.verb} `{written}` after `{command}` failed ({why}) with no "
                "later successful call.",
                [last.event.index],
                {
                    "rule": f"{claim.verb} a file",
                    "preceding_error": f"`{mask(command)}` failed ({mask(why)})",
                },
            )
        if writers or run.compacted or any(_touches(c, base) for c in reversed(run.calls)):
            continue  # a call named it, a shell step may have written it, or it is out of view
        why = (
            f"Says it {claim.verb} `{written}`, but no call before this reply wrote, edited "
            f"or removed `{base}`."
        )
        data = {"rule": f"{claim.verb} a file", "preceding_error": None}
        verdict = verdict if verdict[0] else (UNBACKED, why, [], data)
    return verdict


# Input keys that say which file a call acts on (an edit's `old_string` may merely quote a path).
_PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "filename", "target_file", "paths")


def _touches(entry: _Call, base: str) -> bool:
    """Whether a call may change the file whose last part is ``base``: a shell command that
    names it and does not only read, or a call (not a read) whose path, or else any input,
    names it."""
    paths = entry.paths
    if paths is None:
        paths = entry.paths = _changed_paths(entry)
    for text in paths:  # noqa: SIM110 (a loop: no generator for every call looked at)
        if base in text:
            return True
    return False


def _changed_paths(entry: _Call) -> list[str]:
    """The texts of a call that name the files it may change."""
    command = _shell(entry)
    if command:
        return [] if _READ_ONLY.fullmatch(command) else [command]
    if _READS.match(entry.event.name or ""):
        return []
    value = entry.event.input
    if isinstance(value, dict) and any(key in value for key in _PATH_KEYS):
        value = [value.get(key) for key in _PATH_KEYS]
    return input_strings(value)


def _result_failure(result: Event) -> str | None:
    """Why a result failed, from its error flag (and exit code) or a JSON error body, or None."""
    output = result.output or ""
    if result.is_error:
        code = _EXIT_CODE.search(output)
        return code.group(0).lower() if code else "an error: " + " ".join(output.split())[:60]
    return failure_body(output)
