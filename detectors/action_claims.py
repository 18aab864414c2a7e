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
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from detectors.action_keywords import (
    BACKGROUND_KEYS,
    STATE_KEYS,
    RuleKeys,
    folded,
    may_match,
    rule_keys,
    search,
)
from detectors.action_rules import (
    DEFAULT_RULES,
    STATE_CLAIM,
    CompiledRule,
    Rule,
    ToolAction,
    matched_verb,
    sentence_stems,
    tool_action,
)
from detectors.models import Severity, Signal
from detectors.not_found import mask
from detectors.registry import DetectorParams, detector
from sessions.models import Event, EventKind, Session

UNBACKED, CONTRADICTED = "unbacked_action_claim", "contradicted_action_claim"


class ActionClaimsParams(DetectorParams):
    rules: list[Rule] = Field(
        default_factory=list, description="Extra claim rules (added to the defaults)."
    )
    replace_defaults: bool = Field(False, description="Use only `rules`, not the default pack.")
    derive_from_tools: bool = Field(
        True, description="Check state-change claims against the agent's domain tool names."
    )


# --- text: which sentences are claims ---------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTE_LINE = re.compile(r"^\s*>.*$", re.M)
_QUOTED = re.compile(r"\"[^\"\n]{0,300}\"|“[^”\n]{0,300}”")
_PAREN = re.compile(r"\([^()\n]{0,300}\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|(?<=[.!?])(?=[A-Z*])")
_CLAUSE_BREAK = re.compile(r"[;:,]|\s[\u2014\u2013-]\s|\bbut\b|\bhowever\b|\bwhile\b", re.I)
_NOT_A_CLAIM = re.compile(
    r"\b(?:will|shall|(?:I|we)'ll|(?:I|we)\s+am|going\s+to|let\s+me|let's|let\s+us|need\s+to|"
    r"needs\s+to|want\s+to|plan\s+to|try(?:ing)?\s+to|have\s+to|has\s+to|should|would|could|"
    r"can|may|might|must|once|if|unless|whether|when|until|after\s+you|before|to\s+(?:make\s+"
    r"sure|ensure|verify|confirm|check|see)|make\s+sure|ensure|verify|check\s+(?:that|if|whether)|"
    r"expect(?:ed|s)?|hope|please|you|your\s+turn|not|no|never|n't|nothing|unable|cannot|"
    r"without|fail(?:ed|s)?\s+to|already|previously|earlier|originally|were|was\s+passing|"
    r"used\s+to|instead\s+of|rather\s+than|in\s+order\s+to|so\s+that|trying|attempt(?:ed)?\s+to|"
    r"now\s+I|next|then\s+I|about\s+to|ready\s+to|how\s+to)\b|n't\b|n\u2019t\b",
    re.I,
)
# Words right after a claim that undo it ("tests pass except two", "pushed? no").
_UNDONE_AFTER = re.compile(
    r"^\W*(?:yet\b|except\b|apart\s+from\b|other\s+than\b|only\s+(?:locally|partially)\b|"
    r"locally\b|if\b|once\b|when\b|after\s+(?:you|we|I)\b)",
    re.I,
)
_CONTRAST = re.compile(
    r"\b(?:but|except|although|though|however|apart\s+from|other\s+than|aside\s+from|besides|"
    r"only|some|most|\d+\s+of\s+\d+)\b",
    re.I,
)
# "all tests pass" / "the 12 tests pass" / "tests pass": an unqualified test claim.
_UNQUALIFIED_TESTS = re.compile(
    r"^(?:(?:all|the|my|our)\s+)?(?:(?:\d+|the)\s+)?(?:tests?|test\s+suites?)\b", re.I
)
_YOUR_OBJECT = re.compile(r"\byour\b", re.I)  # "your bag is added" is a claim, "you" is not


def reply_text(text: str) -> str:
    """The prose of a reply: no code, quotes, asides or markdown emphasis."""
    text = _CODE_BLOCK.sub(" ", text)
    text = _INLINE_CODE.sub(" CODE ", text)
    text = _QUOTE_LINE.sub(" ", text)
    text = _QUOTED.sub(" QUOTE ", text)
    text = _PAREN.sub(" ", text)
    return text.replace("**", "").replace("__", "")


def sentences(text: str) -> list[str]:
    return _split(reply_text(text))


def _split(prose: str) -> list[str]:
    return [s.strip(" \t-*#|•") for s in _SENTENCE.split(prose) if s.strip(" \t-*#|")]


def is_claim(sentence: str, start: int, end: int) -> bool:
    """Whether the match at ``start:end`` states a completed action (see module docstring)."""
    if sentence.rstrip().endswith("?"):
        return False
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    prefix = sentence[breaks[-1] if breaks else 0 : start]
    # "your" names the user's object ("your bag is added"); any other "you" is an instruction.
    if _NOT_A_CLAIM.search(_YOUR_OBJECT.sub(" ", prefix)):
        return False
    return not _UNDONE_AFTER.match(sentence[end:])


def unqualified_test_claim(sentence: str, start: int) -> bool:
    """A test claim that speaks of the whole suite, with no 'but'/'except' anywhere."""
    if _CONTRAST.search(sentence):
        return False
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    clause = sentence[breaks[-1] if breaks else 0 :].strip()
    words = re.sub(r"^(?:and|so|now|also|great|good|done|ok(?:ay)?)\W+", "", clause, flags=re.I)
    return bool(_UNQUALIFIED_TESTS.match(words))


# --- evidence: what the calls so far show ------------------------------------------------------

_BACKGROUND = re.compile(r"running in background|background with ID|started in background", re.I)
_SHELL_KEYS = ("command", "cmd", "commands", "script")


def command_text(call: Event) -> str:
    """The shell command of a call, or '' when the call is not a shell command."""
    value: Any = call.input
    if isinstance(value, dict):
        found = next((value[k] for k in _SHELL_KEYS if k in value), None)
        if found is None:
            return ""
        value = found
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, str) and (
        not isinstance(call.input, str)
        or re.search(r"bash|shell|exec|command", call.name or "", re.I)
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
    first_command: str = ""

    def contradicted(self) -> bool:
        return self.last_failure >= 0 and self.last_failure > self.last_success


@dataclass
class _Pending:
    call: Event
    command: str
    strong: list[int]  # rule indexes whose outcome this call decides


def _failure_reason(
    rule: CompiledRule, keys: RuleKeys, result: Event, low: str | None
) -> str | None:
    output = result.output or ""
    hit = search(rule.failure, keys.failure, output, low)
    if hit:
        return hit.group(0).strip()[:60]
    if result.is_error:
        code = re.search(r"Exit code \d+", output)
        return code.group(0).lower() if code else "an error"
    return None


def _short(command: str) -> str:
    line = command.strip().splitlines()[0] if command.strip() else ""
    return line if len(line) <= 60 else line[:57] + "..."


# --- the detector -------------------------------------------------------------------------------


def _derived(session: Session) -> list[ToolAction]:
    registry = session.registered_tools
    names: set[str] = set()
    if registry is not None and registry.source != "claude_code_builtin":
        names |= registry.names
    if registry is None or registry.allow_mcp:
        names |= {e.name for e in session.events if e.kind is EventKind.TOOL_CALL and e.name}
    actions = [tool_action(n) for n in sorted(names)]
    return [a for a in actions if a is not None]


def _domain_targets(actions: list[ToolAction], sentence: str, verb: str) -> list[ToolAction]:
    """The domain tools a state-change claim points at: same verb (narrowed by object), else
    a tool whose object or action the sentence names ("refund issued" -> `refund_payment`)."""
    stems = sentence_stems(sentence)
    same_verb = [a for a in actions if verb in a.verbs]
    if same_verb:
        narrowed = [a for a in same_verb if a.objects & stems]
        return narrowed or same_verb
    return [a for a in actions if (a.objects | a.verbs) & stems]


_DEFAULTS = [CompiledRule.of(r) for r in DEFAULT_RULES]  # compiled once, at import


class _Run:
    """One session's pass: the rules, their keyword prefilters and the evidence so far."""

    def __init__(self, rules: list[CompiledRule], actions: list[ToolAction]) -> None:
        self.rules, self.actions = rules, actions
        self.keys = [rule_keys(r.rule) for r in rules]
        self.evidence = [Evidence() for _ in rules]
        self.domain = {a.name for a in actions}  # only these tools' evidence is ever read
        self.by_tool: dict[str, Evidence] = {}  # domain tools called so far
        self.pending: dict[str, _Pending] = {}
        self.by_name: dict[str, list[bool]] = {}  # tool name -> whether each rule's tools match
        self.compacted = False


@detector(
    "action_claims",
    version=1,
    params=ActionClaimsParams,
    kinds=("unbacked_action_claim", "contradicted_action_claim"),
)
def action_claims(session: Session, params: ActionClaimsParams) -> list[Signal]:
    base = [] if params.replace_defaults else _DEFAULTS
    rules = base + [CompiledRule.of(r) for r in params.rules]
    run = _Run(rules, _derived(session) if params.derive_from_tools else [])
    signals: list[Signal] = []
    for event in session.events:
        if event.meta.get("compaction"):
            run.compacted = True
        if event.kind is EventKind.TOOL_CALL:
            _record_call(event, run)
        elif event.kind is EventKind.TOOL_RESULT and event.call_id in run.pending:
            _record_result(event, run.pending.pop(event.call_id or ""), run)
        elif (
            event.kind is EventKind.ASSISTANT
            and event.text
            and event.subagent is None
            and not event.meta.get("synthetic")
            and not event.meta.get("compaction")
        ):
            signals += _check_reply(event, run)
    return signals


def _record_call(call: Event, run: _Run) -> None:
    command = command_text(call)
    low = folded(command) if command else None
    name = call.name or ""
    if name not in run.by_name:
        run.by_name[name] = [any(p.search(name) for p in rule.tools) for rule in run.rules]
    strong: list[int] = []
    for i, (rule, keys) in enumerate(zip(run.rules, run.keys, strict=True)):
        by_name = run.by_name[name][i]
        by_command = bool(command) and search(rule.commands, keys.commands, command, low)
        if by_command or (by_name and not command) or (by_name and rule.commands is None):
            strong.append(i)
        backed = by_name or by_command
        if not backed and command:  # a weak command backs the claim but decides nothing
            backed = search(rule.weak_commands, keys.weak_commands, command, low) is not None
        if backed:
            run.evidence[i].calls.append(call.index)
            run.evidence[i].first_command = run.evidence[i].first_command or command
    if call.name in run.domain:
        run.by_tool.setdefault(call.name, Evidence()).calls.append(call.index)
    if call.call_id is not None:
        run.pending[call.call_id] = _Pending(call, command, strong)


def _record_result(result: Event, pending: _Pending, run: _Run) -> None:
    tool = run.by_tool.get(pending.call.name or "")
    if not pending.strong and tool is None:
        return  # the outcome backs or contradicts nothing checked
    output = result.output or ""
    low = folded(output)
    if may_match(BACKGROUND_KEYS, low) and _BACKGROUND.search(output):
        return  # a background launch says nothing about the outcome
    command = _short(pending.command) or pending.call.name or "the call"
    for i in pending.strong:
        why = _failure_reason(run.rules[i], run.keys[i], result, low)
        _update(run.evidence[i], result.index, why, command)
    if tool is not None:
        why = ("an error: " + output.strip()[:60]) if result.is_error else None
        _update(tool, result.index, why, pending.call.name or "")


def _update(ev: Evidence, index: int, why: str | None, command: str) -> None:
    if why is None:
        ev.last_success = index
    else:
        ev.last_failure, ev.last_failure_why = index, f"`{command}` failed ({why})"
        ev.last_failure_masked = f"`{mask(command)}` failed ({mask(why)})"


def _check_reply(reply: Event, run: _Run) -> list[Signal]:
    prose = reply_text(reply.text)
    low = folded(prose)
    state = bool(run.actions) and may_match(STATE_KEYS, low)
    active = [i for i, keys in enumerate(run.keys) if may_match(keys.claim, low)]
    if not state and not active:
        return []  # no sentence can hold a claim
    signals: list[Signal] = []
    for sentence in _split(prose):
        low = folded(sentence)
        verdicts: list[_Verdict] = []
        for i in active:
            rule, ev = run.rules[i], run.evidence[i]
            if not may_match(run.keys[i].claim, low):
                continue
            for m in rule.claim.finditer(sentence):
                if is_claim(sentence, m.start(), m.end()):
                    verdicts.append(_verdict(rule, ev, sentence, m.start(), run.compacted))
                    break
        # A domain-tool check only speaks when no rule already found the claim backed
        # ("I sent the email" after `send_email`); rules about different actions stand alone.
        backed_by_rule = any(v[0] == "" for v in verdicts)
        checks_state = state and not backed_by_rule and may_match(STATE_KEYS, low)
        for m in STATE_CLAIM.finditer(sentence) if checks_state else ():
            verb = matched_verb(m)
            targets = _domain_targets(run.actions, sentence, verb) if verb else []
            if targets and is_claim(sentence, m.start(), m.end()):
                verdicts.append(
                    _tool_verdict(targets, run.by_tool, m.group(0), verb or "", run.compacted)
                )
                break
        found = [v for v in verdicts if v[0] not in ("", "skip")]
        if not found:
            continue
        # One signal per sentence: a contradiction outranks a missing call.
        kind, why, events, data = next((v for v in found if v[0] == CONTRADICTED), found[0])
        signals.append(
            Signal(
                kind=kind,
                value=sentence.strip(),
                events=[reply.index, *events],
                explanation=why,
                severity=Severity.HIGH if kind.startswith("contradicted") else Severity.MEDIUM,
                data=data,
            )
        )
    return signals


# (kind, or "" when backed, "skip" when undecidable; explanation; events; Signal.data)
_Verdict = tuple[str, str, list[int], dict[str, Any]]
_NONE: _Verdict = ("", "", [], {})
_SKIP: _Verdict = ("skip", "", [], {})


def _verdict(
    rule: CompiledRule, ev: Evidence, sentence: str, start: int, compacted: bool
) -> _Verdict:
    if not ev.calls:
        if compacted:
            return _SKIP
        how = "no matching command" if rule.commands is not None else "no matching tool"
        why = f"Says {rule.name}, but {how} ran before this reply."
        return UNBACKED, why, [], {"rule": rule.name, "preceding_error": None}
    if ev.contradicted() and (
        not rule.rule.strict_subject or unqualified_test_claim(sentence, start)
    ):
        return (
            CONTRADICTED,
            f"Says {rule.name} after {ev.last_failure_why} with no later successful run.",
            [ev.last_failure],
            {"rule": rule.name, "preceding_error": ev.last_failure_masked},
        )
    return _NONE


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
