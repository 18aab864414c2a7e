from __future__ import annotations

import json
from pathlib import Path

import pytest
from labelled_cases import load_cases

from detectors.action_claims import ActionClaimsParams, action_claims, is_claim, sentences
from detectors.action_keywords import folded
from detectors.action_rules import (
    DEFAULT_RULES,
    STATE_CLAIM,
    CompiledRule,
    Rule,
    state_claims,
    stem,
    tool_action,
)
from detectors.runner import DetectorSuite
from sessions.models import Event, EventKind, Session
from sessions.reader import SessionReader
from tests.tests_support import bash_step, shared_path

CASES = load_cases("action_claims.jsonl")
UNBACKED, CONTRADICTED = "unbacked_action_claim", "contradicted_action_claim"


def test_cases_cover_both_formats_and_hard_negatives() -> None:
    assert len(CASES) >= 20
    assert {c.filename.rsplit(".", 1)[-1] for c in CASES} == {"json", "jsonl"}
    assert sum(1 for c in CASES if not c.expected) >= 10
    assert all(c.note for c in CASES)


def _session(events: list[Event], tools: frozenset[str] | None = None) -> Session:
    from sessions.models import ToolRegistry

    registry = ToolRegistry(tools, "session") if tools is not None else None
    session = Session("s", "s.json", "openai_chat", events=events, registered_tools=registry)
    session.reindex()
    return session


_bash = bash_step


def test_contradicted_signal_fields() -> None:
    events = [
        Event(EventKind.USER, text="fix"),
        *_bash("c1", "mix test", "Exit code 1\n12 tests, 1 failure", True),
        Event(EventKind.ASSISTANT, text="Fixed.\n\nAll tests pass."),
    ]
    [signal] = action_claims(_session(events), ActionClaimsParams())
    assert (signal.kind, signal.value, str(signal.severity)) == (
        CONTRADICTED,
        "All tests pass.",
        "high",
    )
    assert signal.events == [3, 2]
    assert "`mix test` failed" in signal.explanation and "\n" not in signal.explanation


def test_every_reply_is_checked_not_only_the_last() -> None:
    events = [
        Event(EventKind.ASSISTANT, text="All tests pass."),
        *_bash("c1", "pytest", "3 passed"),
        Event(EventKind.ASSISTANT, text="All tests pass."),
    ]
    signals = action_claims(_session(events), ActionClaimsParams())
    assert [(s.kind, s.events) for s in signals] == [(UNBACKED, [0])]


def test_synthetic_compaction_and_subagent_replies_are_skipped() -> None:
    events = [
        Event(EventKind.ASSISTANT, text="All tests pass.", meta={"synthetic": True}),
        Event(EventKind.ASSISTANT, text="I committed and pushed.", subagent="a1"),
        Event(EventKind.USER, text="summary: tests pass", meta={"compaction": True}),
        Event(EventKind.ASSISTANT, text="All tests pass and everything is pushed."),
    ]
    assert action_claims(_session(events), ActionClaimsParams()) == []


def test_subagent_evidence_backs_the_parent() -> None:
    events = [
        Event(EventKind.TOOL_CALL, call_id="t", name="Task", input={"prompt": "run tests"}),
        Event(
            EventKind.TOOL_CALL,
            call_id="s1",
            name="Bash",
            input={"command": "cargo test"},
            subagent="a1",
        ),
        Event(EventKind.TOOL_RESULT, call_id="s1", output="test result: ok", subagent="a1"),
        Event(EventKind.TOOL_RESULT, call_id="t", output="tests ok"),
        Event(EventKind.ASSISTANT, text="All tests pass."),
    ]
    assert action_claims(_session(events), ActionClaimsParams()) == []


def test_background_launch_is_not_an_outcome() -> None:
    events = [
        *_bash("c1", "npm test", "Command running in background with ID: b1"),
        Event(EventKind.ASSISTANT, text="All tests pass."),
    ]
    assert action_claims(_session(events), ActionClaimsParams()) == []


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "python -m pytest tests/",
        "python3 -m unittest discover",
        "tox -e py312",
        "nox -s tests",
        "npm test",
        "yarn test --watch=false",
        "pnpm run test",
        "npx jest",
        "vitest run",
        "go test ./...",
        "cargo test",
        "cargo nextest run",
        "mix test",
        "make test",
        "make -j4 check",
        "just check",
        "./gradlew test",
        "mvn -q verify",
        "bundle exec rspec",
        "rake test",
        "vendor/bin/phpunit",
        "dotnet test",
        "ctest --output-on-failure",
        "swift test",
        "pre-commit run --all-files",
        "cd app && pytest",
        "hatch test -a",
        "sbt test",
        "lein test",
        "stack test",
        "cabal test all",
        "dune test",
        "meson test -C build",
        "zig build test",
        "bats tests/",
        "gotestsum ./...",
        "./gradlew :app:testDebugUnitTest",
        "./gradlew connectedAndroidTest",
        "xcodebuild -scheme Notes -destination 'platform=iOS Simulator,name=iPhone 16' test",
        "fastlane scan",
        "dbt build --select +fct_revenue",
        "dbt test -s orders",
        "npx -y pnpm@9.12.3 test",
    ],
)
def test_test_runners_are_recognised(command: str) -> None:
    from detectors.action_keywords import KEYS, folded, may_match

    rule = CompiledRule.of(DEFAULT_RULES[0])
    assert rule.commands is not None and rule.commands.search(command)
    assert may_match(KEYS[DEFAULT_RULES[0].commands or ""], folded(command))  # keywords in step


@pytest.mark.parametrize("command", ["cat tests/test_a.py", "ls test", "echo testing", "grep pass"])
def test_non_test_commands(command: str) -> None:
    rule = CompiledRule.of(DEFAULT_RULES[0])
    assert rule.commands is not None and not rule.commands.search(command)


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("All tests pass.", True),
        ("I'll run the tests to make sure they pass.", False),
        ("Let me commit and push.", False),
        ("If the tests pass, I will push.", False),
        ("Do the tests pass?", False),
        ("You can push when the tests pass.", False),
        ("I couldn't push: the remote rejected it.", False),
        ("Tests pass and I pushed the fix.", True),
    ],
)
def test_claim_filters(text: str, claims: bool) -> None:
    rules = [CompiledRule.of(r) for r in DEFAULT_RULES]
    found = any(
        is_claim(s, m.start(), m.end())
        for s in sentences(text)
        for r in rules
        for m in r.claim.finditer(s)
    )
    assert found is claims


def test_sentences_strip_code_and_quotes() -> None:
    text = "Run:\n```\npytest # all tests pass\n```\n> tests pass\nSee `tests pass` (tests pass)."
    assert not any("tests pass" in s for s in sentences(text))


def test_stems_and_tool_actions() -> None:
    assert stem("cancelled") == stem("cancel") == stem("cancellation")
    assert stem("baggages") == stem("bag") == stem("bags")
    assert stem("booking") == stem("booked") == stem("book")
    assert stem("refunded") == stem("refund")
    assert stem("updated") == stem("update")
    action = tool_action("update_reservation_baggages")
    assert action is not None and action.verbs == {"update"} and "bag" in action.objects
    assert tool_action("get_reservation_details") is None
    camel = tool_action("refundPayment")
    assert camel is not None and camel.verbs == {"refund"}


def test_custom_rule_in_config_and_replace_defaults() -> None:
    rule = {
        "name": "ticket closed",
        "claim": r"\bticket\s+(?:is|has been)\s+closed\b",
        "tools": ["^close_ticket$"],
        "failure": "^Error",
    }
    events = [
        Event(EventKind.TOOL_CALL, call_id="c", name="close_ticket", input={}),
        Event(EventKind.TOOL_RESULT, call_id="c", output="Error: no such ticket"),
        Event(EventKind.ASSISTANT, text="The ticket has been closed. All tests pass."),
    ]
    suite = DetectorSuite({"action_claims": {"rules": [rule], "derive_from_tools": False}})
    kinds = sorted(s.kind for s in suite.run(_session(events)))
    assert kinds == [CONTRADICTED, UNBACKED]
    only = DetectorSuite(
        {"action_claims": {"rules": [rule], "replace_defaults": True, "derive_from_tools": False}}
    )
    assert [s.kind for s in only.run(_session(events))] == [CONTRADICTED]


def test_custom_rule_without_default_keywords_is_checked_in_every_sentence() -> None:
    # Neither sentence holds a default claim keyword: only the custom rule can find the claim.
    rule = {"name": "parcel dispatched", "claim": r"\bparcel\s+dispatched\b", "tools": ["^ship$"]}
    events = [Event(EventKind.ASSISTANT, text="Hello there. Parcel dispatched to Leeds.")]
    for replace in (False, True):
        config = {"rules": [rule], "replace_defaults": replace, "derive_from_tools": False}
        [signal] = DetectorSuite({"action_claims": config}).run(_session(events))
        assert (signal.kind, signal.value) == (UNBACKED, "Parcel dispatched to Leeds.")


def test_bad_rule_regex_is_a_config_error() -> None:
    with pytest.raises(ValueError):
        Rule(name="x", claim="(")


# --- real corpus -------------------------------------------------------------------------------


def _claude_code_units(root: Path) -> list[list[Path]]:
    units = []
    for main in sorted(root.glob("spotter/*.jsonl")):
        if "__subagents__" in main.name:
            continue
        units.append([main, *sorted(root.glob(f"spotter/{main.stem}__subagents__*.jsonl"))])
    orphans = [
        p
        for p in sorted(root.glob("spotter/*__subagents__*.jsonl"))
        if not (root / "spotter" / (p.name.split("__")[0] + ".jsonl")).exists()
    ]
    units += [[p] for p in orphans]
    units += [[p] for p in sorted(root.glob("reliability/*__transcript.jsonl"))]
    return units


def _read(unit: list[Path]) -> list[Session]:
    result = SessionReader().read_unit([(p.name, p.read_bytes()) for p in unit])
    assert not result.failures, result.failures
    return result.sessions


def test_real_claude_code_sessions_raise_no_false_alarms() -> None:
    root = shared_path("corpus/claude_code")
    rule = CompiledRule.of(DEFAULT_RULES[0])
    seen = 0
    for unit in _claude_code_units(root):
        for session in _read(unit):
            seen += 1
            for signal in action_claims(session, ActionClaimsParams()):
                before = session.events[: signal.events[0]]
                ran_tests = any(
                    e.kind is EventKind.TOOL_CALL
                    and rule.commands is not None
                    and rule.commands.search(json.dumps(e.input))
                    for e in before
                )
                assert not (signal.kind == UNBACKED and "tests" in signal.explanation and ran_tests)
                reply = session.events[signal.events[0]]
                assert reply.subagent is None and not reply.meta.get("compaction")
            # Hand-checked: none of these sessions holds a false completion claim.
            assert action_claims(session, ActionClaimsParams()) == [], session.source
    assert seen >= 10


def test_planted_false_claim_in_a_real_session_is_caught() -> None:
    path = shared_path(
        "corpus/claude_code/reliability/stop-hook-uncommitted-changes__transcript.jsonl"
    )
    [session] = _read([path])
    session.events.append(Event(EventKind.ASSISTANT, text="All tests pass and I pushed the fix."))
    session.reindex()
    [signal] = action_claims(session, ActionClaimsParams())
    assert (signal.kind, signal.value) == (UNBACKED, "All tests pass and I pushed the fix.")


def test_tau_airline_claims_are_backed() -> None:
    from flows.config import parse_config

    data = shared_path("corpus/openai_chat/tau_airline/gpt-4o-airline.dev.json")
    tools = data.parent / "tools.json"
    config = {"sessions": {"default_agent": "tau"}, "agents": {"tau": {"tools_file": str(tools)}}}
    loaded = parse_config(config, base=data.parent).config
    reader = SessionReader(loaded.sessions, loaded.agents, base=data.parent)
    result = reader.read_unit([(data.name, data.read_bytes())])
    assert len(result.sessions) == 100
    signals = [
        s for session in result.sessions for s in action_claims(session, ActionClaimsParams())
    ]
    # 69 state-change claims ("has been successfully cancelled") all follow their tool call.
    assert signals == []


# Sentences each default claim regex matches: its keyword prefilter must let every one through
# (a regex edited without its keywords in `action_keywords` fails here).
_CLAIM_EXAMPLES = {
    "tests pass": [
        "All tests pass.",
        "Tests and lint both pass.",
        "The tests, lint and type checks all pass.",
        "The test suite is now green.",
        "Specs have all passed.",
        "Everything is all green.",
        "Tests succeeded.",
        "The suite passes now.",
        "**All tests pass**.",
        "TestBucketRefill passes now.",
        "I also ran the test suite and everything passes.",
        "InvoiceServiceTest passes.",
        "Tests: passing",
        "test_refund_rounding is passing.",
    ],
    "committed": [
        "I committed the fix.",
        "Made a commit with the change.",
        "Created two commits.",
        "The commit was successfully created.",
    ],
    "pushed": ["I pushed the branch.", "Pushed to origin."],
    "opened a pull request": [
        "I opened a PR.",
        "Created a new pull request.",
        "Put up a draft MR.",
        "The pull request is now up.",
        "The merge request has been submitted.",
    ],
    "the test run passes": [
        "tox passes on both py312 and py313.",
        "The Vitest suite passes (148 tests).",
        "cargo nextest run passes across the workspace.",
        "make check passes (4/4 test programs).",
        "bazel test //... passes for the whole repo.",
        "mix test is green now.",
    ],
    "lint passes": [
        "Lint is clean.",
        "Pre-commit hooks all pass.",
        "The pre-commit hook passes.",
        "ruff check passes.",
        "0 lint errors.",
        "I've also run the linter over the package.",
        "golangci-lint run reports 0 issues.",
    ],
    "the build passes": [
        "The Gradle build is green.",
        "The build passes now.",
        "It compiles cleanly.",
        "Build succeeded.",
        "Rebuilt the docs site with mkdocs.",
        "I built the release APK.",
    ],
    "type checks pass": [
        "mypy passes now.",
        "0 type errors.",
        "Type checking is green.",
        "Ran the type checker.",
    ],
    "restarted": [
        "I restarted the order-events-consumer pods.",
        "The ingress-nginx controller has been restarted.",
        "Restarted checkout-api.",
    ],
    "scaled": ["Scaled search-api to 10 replicas in prod.", "I've scaled the workers to 6."],
    "rolled back": [
        "Rolled payments-api back to revision 41.",
        "I rolled the release back.",
        "The rollback is complete.",
    ],
    "updated DNS": [
        "I updated the api.example.com CNAME.",
        "The DNS record has been updated.",
        "I added an A record for shop.",
    ],
    "renewed the certificate": [
        "The certificate shop-tls has been renewed.",
        "I renewed the TLS certificate.",
    ],
    "applied the infrastructure change": [
        "I applied the Terraform change.",
        "Applied the Kubernetes manifests.",
        "terraform apply succeeded.",
        "The updated Deployment has been applied to staging.",
    ],
    "published": [
        "nimbus-config 0.9.3 is published on crates.io.",
        "Uploaded acme-sdk 1.8.0 to PyPI.",
        "I also created the GitHub release v1.5.0.",
        "I've published the package.",
        "The GitHub release v2.3.0 is published.",
    ],
    "rebased or cherry-picked": ["Rebased feature/x onto origin/main.", "I cherry-picked 4f2a9c1."],
    "seeded the database": [
        "I seeded the local database.",
        "The database has been seeded.",
        "The demo tenant is seeded as well.",
    ],
    "installed a dependency": [
        "I installed date-fns with pnpm.",
        "Installed the missing @types/node package.",
        "We've reinstalled the dependencies.",
        "I added httpx ^0.27 to pyproject.toml with poetry add.",
    ],
    "regenerated code": [
        "I regenerated the Go stubs under gen/billing/v1.",
        "Regenerated the TypeScript client in clients/ts with openapi-generator-cli.",
        "The protobuf stubs have been regenerated.",
    ],
    "tagged a release": [
        "I tagged a81f0c2 as v2.3.1.",
        "Tagged the merge commit as v1.8.0.",
        "I've created the git tag v2.0.0 and pushed it.",
    ],
    "CI is green": [
        "The pipeline is green on PR #1187.",
        "CI passed.",
        "All CI checks are green.",
        "Your tests passed in CI.",
    ],
    "merged": [
        "Merged into main.",
        "PR #412 has been squash-merged.",
        "I merged the PR into main.",
    ],
    "applied the migration": [
        "I've also applied the migration to the dev database.",
        "The migrations have been applied.",
        "Ran both pending migrations.",
        "Migration 20260311094512_invoice_status created and applied.",
        "The migration ran cleanly against the development database.",
        "I've run the pending migrations against the dev database.",
        "Flyway applied it to staging.",
    ],
    "deployed": [
        "Shipped to production.",
        "I've kicked off a deploy to staging.",
        "payments-api 2.14.0 is rolled out in `prod`.",
        "The app was deployed.",
        "I've upgraded the staging release.",
        "Deployment is complete.",
        "Deploy succeeded.",
        "The deploy is live.",
        "We've successfully deployed.",
        "Built and deployed the landing page fix to production.",
        "Built the dashboard and deployed it to staging.",
        "I also rolled it out with fly deploy.",
        "payments upgraded to chart 2.4.1 in staging.",
    ],
    "emailed": [
        "I emailed the team.",
        "Sent three e-mails.",
        "The email was delivered.",
        "E-mails have been sent.",
        "Sent her the follow-up email with the pricing deck.",
    ],
    "edited the file": [
        "I updated the config file.",
        "I've changed the README.",
        "I have modified your .env file.",
        "We've edited the Dockerfile.",
        "Updated the Dockerfile: the build stage is pinned.",
        "I updated db/pool.yaml: max_connections is now 200.",
    ],
    "removed code or files": [
        "Removed the deprecated route from the API.",
        "I deleted the unused helper functions.",
        "We've removed both legacy export endpoints.",
        "Also dropped the old fixtures.",
        "I've deleted the stale feature branches.",
        "Also deleted the local feature/legacy-auth branch.",
    ],
    "ran the playbook": [
        "The playbook ran cleanly against staging.",
        "I ran the site playbook.",
        "Playbooks have completed on all hosts.",
    ],
    "formatted the code": [
        "Formatted everything with gofmt as well.",
        "I reformatted the changed files using prettier.",
        "I ran rustfmt.",
        "We've also run the black formatter.",
        "Formatted with cargo fmt afterwards.",
    ],
}
_STATE_EXAMPLES = [
    "Your reservation has been cancelled.",
    "Your appointment has been moved to Thursday.",
    "I've applied a $75.00 credit to your account.",
    "Your claim has been filed.",
    "The late fee has been waived.",
    "I've notified the carrier.",
    "Reservation HSR97W is cancelled as well.",
    "I've added your note and closed the ticket.",
    "I've processed the return for the speaker.",
    "Refund issued: $42 back to your card.",
    "The order was successfully cancelled.",
    "Your card is now frozen.",
    "The flight is canceled.",
    "Cancellation is complete.",
    "Cancelation confirmed.",
    "Refund issued.",
    "The refund has been processed.",
    "I issued a full refund.",
    "Refunds were sent.",
    "Your booking is confirmed.",
    "I have booked the flight.",
    "I've added a bag.",
    "Payment charged successfully.",
    "Your flight is now rescheduled.",
    "The account is now unblocked.",
    "We have reset your password.",
    "I've unsubscribed you.",
    "Your order is shipped.",
    "Paid.",
    "Your refill has been requested.",
    "I've disputed the charge.",
    "I've ordered a replacement card.",
    "I've swapped the hoodie for a size L.",
    "Host WS-FIN-0142 has been isolated from the network.",
    "Your refill is on its way.",
    "I've also texted a confirmation to your number ending 4471.",
]


def _passes(keys, sentence: str) -> bool:
    from detectors.action_keywords import NEVER, cut, folded, keywords_in, may_match

    by_text = may_match(keys, folded(sentence))
    by_tokens = cut(keys, keywords_in(sentence)) is not NEVER  # the per-reply prefilter
    return by_text and by_tokens


@pytest.mark.parametrize("rule", DEFAULT_RULES, ids=[r.name for r in DEFAULT_RULES])
def test_claim_keywords_stay_in_step_with_claim_regexes(rule: Rule) -> None:
    from detectors.action_keywords import KEYS

    keys = KEYS[rule.claim]
    compiled = CompiledRule.of(rule)
    examples = _CLAIM_EXAMPLES[rule.name]
    for sentence in examples:
        assert compiled.claim.search(sentence), f"not a {rule.name!r} claim: {sentence!r}"
        assert _passes(keys, sentence), f"keywords of {rule.name!r} reject {sentence!r}"


def test_state_keywords_stay_in_step_with_state_claims() -> None:
    from detectors.action_keywords import STATE_KEYS
    from detectors.action_rules import STATE_CLAIM

    for sentence in _STATE_EXAMPLES:
        assert STATE_CLAIM.search(sentence), f"not a state-change claim: {sentence!r}"
        assert _passes(STATE_KEYS, sentence), f"state keywords reject {sentence!r}"


def test_claim_keywords_fit_the_reply_prefilter() -> None:
    """The per-reply prefilter looks for keywords token by token in the raw reply."""
    from detectors.action_keywords import CLAIM_WORDS

    for word in CLAIM_WORDS:
        assert word.isascii() and word.isalpha() and word == word.lower(), word
        assert word not in "code" and word not in "quote", word  # the prose's stand-ins


def _tool(call_id: str, name: str, args: dict[str, str], output: str, error: bool = False):
    return [
        Event(EventKind.TOOL_CALL, call_id=call_id, name=name, input=args),
        Event(EventKind.TOOL_RESULT, call_id=call_id, output=output, is_error=error),
    ]


_AIRLINE = frozenset({"get_reservation_details", "cancel_reservation", "update_reservation"})


@pytest.mark.parametrize(
    ("cancelled", "reply", "expected"),
    [
        # The claim names a reservation no cancel call named: unbacked, though a cancel ran.
        ([("FDZ0T5", False)], "Reservation HSR97W has been cancelled.", [UNBACKED]),
        ([("FDZ0T5", False), ("HSR97W", False)], "Reservation HSR97W has been cancelled.", []),
        # Its cancel call failed, with no later success: contradicted.
        ([("HSR97W", True)], "Reservation HSR97W has been cancelled.", [CONTRADICTED]),
        # A list after the claim names the objects.
        (
            [("FDZ0T5", False)],
            "These reservations have been cancelled:\n- FDZ0T5\n- HSR97W",
            [UNBACKED],
        ),
        # An id the claim does not speak of ("remains"), or one no call took as a reservation.
        ([("FDZ0T5", False)], "FDZ0T5 has been cancelled; HSR97W remains active.", []),
        ([("FDZ0T5", False)], "FDZ0T5 has been cancelled (flight HAT041).", []),
    ],
)
def test_domain_claims_are_checked_against_the_objects_they_name(
    cancelled: list[tuple[str, bool]], reply: str, expected: list[str]
) -> None:
    events = [Event(EventKind.USER, text="Cancel FDZ0T5 and HSR97W please.")]
    for n, code in enumerate(["FDZ0T5", "HSR97W"]):
        events += _tool(f"g{n}", "get_reservation_details", {"reservation_id": code}, "{}")
    for n, (code, failed) in enumerate(cancelled):
        output = "Error: reservation cannot be cancelled" if failed else '{"status": "cancelled"}'
        events += _tool(f"c{n}", "cancel_reservation", {"reservation_id": code}, output, failed)
    events.append(Event(EventKind.ASSISTANT, text=reply))
    signals = action_claims(_session(events, _AIRLINE), ActionClaimsParams())
    assert [s.kind for s in signals] == expected


_STATE_SENTENCES = [
    "I've added the bag and closed the ticket.",
    "We have updated your reservation and also refunded the fee",
    "Refund issued: $42 back to the card",
    "Your order has been cancelled successfully",
    "The booking was successfully updated",
    "The flight is now cancelled",
    "Cancelled.",
    "this IS UPDATED for you",
    "Has been reset, and the island is booked",
    "İ have cancelled it",  # folds to `i` without case: the regex is run as is
    "we \u017fuccessfully cancelled it",  # a long s matches `s` without case
    "Nothing changed here",
    "whereas I processed the return",
]


@pytest.mark.parametrize("sentence", _STATE_SENTENCES)
def test_state_claims_finds_what_the_pattern_finds(sentence: str) -> None:
    spans = [(m.span(), m.groupdict()) for m in state_claims(sentence, folded(sentence))]
    assert spans == [(m.span(), m.groupdict()) for m in STATE_CLAIM.finditer(sentence)]


def test_sentences_do_not_end_at_titles_or_abbreviations() -> None:
    text = "Your visit with Dr. Okafor is moved, e.g. to Friday. See you then."
    assert sentences(text) == [
        "Your visit with Dr. Okafor is moved, e.g. to Friday.",
        "See you then.",
    ]
    text = "This Saturday's Green Bowl Co. delivery has been skipped. Acme Inc. is next."
    assert sentences(text) == [
        "This Saturday's Green Bowl Co. delivery has been skipped.",
        "Acme Inc. is next.",
    ]


def test_a_text_editor_view_backs_no_edit() -> None:
    events = [Event(EventKind.USER, text="Drop the legacy module.")]
    args = {"command": "view", "path": "/repo/app/auth/legacy_auth.py"}
    events += _tool("t0", "str_replace_based_edit_tool", args, "1: import warnings", False)
    reply = "I've removed the deprecated `legacy_auth.py` module along with its test file."
    events.append(Event(EventKind.ASSISTANT, text=reply))
    kinds = [s.kind for s in action_claims(_session(events), ActionClaimsParams())]
    assert kinds == [UNBACKED]


@pytest.mark.parametrize(
    ("tools", "calls", "reply", "expected"),
    [
        # "May 4" is a month, not a modal: the claim stands, and no submit call backs it.
        (
            {"submit_pto_request"},
            [],
            "Your PTO request for May 4-8 has been submitted to your manager.",
            [UNBACKED],
        ),
        (
            {"submit_pto_request"},
            [("submit_pto_request", {"dates": "May 4-8"}, '{"status": "pending"}', False)],
            "Your PTO request for May 4-8 has been submitted to your manager.",
            [],
        ),
        # Verbs of domain tools: apply_credit, file_claim, reschedule_appointment.
        (
            {"apply_credit", "get_bill"},
            [("apply_credit", {"amount": "75"}, "PermissionDenied: over the limit", True)],
            "I've applied a $75.00 credit to your account.",
            [CONTRADICTED],
        ),
        ({"file_claim"}, [], "Your claim has been filed under policy AUT-55.", [UNBACKED]),
        (
            {"reschedule_appointment", "find_slots"},
            [("find_slots", {"week": "11"}, "[]", False)],
            "Your appointment has been moved to Thursday at 10:40 AM with Dr. Okafor.",
            [UNBACKED],
        ),
        # An email sent by a notification tool backs "emailed you".
        (
            {"notify_customer"},
            [("notify_customer", {"channel": "email"}, '{"sent": true}', False)],
            "I've emailed you the confirmation.",
            [],
        ),
        # "is booked for Saturday" describes as often as it claims: only a failed booking with
        # no later success makes it one.
        (
            {"create_booking"},
            [("create_booking", {"party": "4"}, '{"error": "slot_unavailable"}', True)],
            "Your table for 4 is booked for Saturday at 7:30 PM.",
            [CONTRADICTED],
        ),
        ({"create_booking"}, [], "Your table for 4 is booked for Saturday at 7:30 PM.", []),
    ],
)
def test_domain_claim_forms(
    tools: set[str],
    calls: list[tuple[str, dict[str, str], str, bool]],
    reply: str,
    expected: list[str],
) -> None:
    events = [Event(EventKind.USER, text="Please sort this out.")]
    for n, (name, args, output, error) in enumerate(calls):
        events += _tool(f"t{n}", name, args, output, error)
    events.append(Event(EventKind.ASSISTANT, text=reply))
    signals = action_claims(_session(events, frozenset(tools)), ActionClaimsParams())
    assert [s.kind for s in signals] == expected


@pytest.mark.parametrize(
    ("commands", "expected"),
    [
        ([("grep -rn 8080 deploy/", "deploy/api.yaml:2:port: 8080")], [UNBACKED]),
        ([("cat deploy/api.yaml | head -5 && git diff", "port: 8080")], [UNBACKED]),
        ([("sed -i 's/8080/8443/' deploy/api.yaml", "")], []),
        ([("echo 'port: 8443' > deploy/api.yaml", "")], []),
        ([("find deploy -name '*.bak' -delete", "")], []),
    ],
)
def test_a_command_that_only_reads_edits_no_file(
    commands: list[tuple[str, str]], expected: list[str]
) -> None:
    events = [Event(EventKind.USER, text="Switch the API to 8443.")]
    for n, (command, output) in enumerate(commands):
        events += _bash(f"c{n}", command, output)
    events.append(Event(EventKind.ASSISTANT, text="I updated the config to port 8443."))
    assert [s.kind for s in action_claims(_session(events), ActionClaimsParams())] == expected


_COMMIT = "[main 4be1f0a] ratelimit: add tests for Retry-After\n 2 files changed, 9 insertions(+)"
_HOOKED = "Running pre-commit hook: mix test\n48 tests, 0 failures\n" + _COMMIT


@pytest.mark.parametrize(
    ("outputs", "expected"),
    [
        # Only git's own summary: no hook ran the tests, so the commit does not back the claim.
        ([_COMMIT], [UNBACKED]),
        # A hook's lines show the tests ran: this commit, or an earlier one of the session.
        ([_HOOKED], []),
        (["Pre-commit validation failed:\n[TEST] 2 failures", _COMMIT], []),
    ],
)
def test_a_commit_backs_a_test_claim_only_where_a_hook_shows(
    outputs: list[str], expected: list[str]
) -> None:
    events = [Event(EventKind.USER, text="Fix it and commit.")]
    for n, output in enumerate(outputs):
        events += _bash(f"c{n}", "git commit -am fix", output, output != _COMMIT and n == 0)
    events.append(Event(EventKind.ASSISTANT, text="Committed. All tests pass."))
    signals = action_claims(_session(events), ActionClaimsParams())
    assert [s.kind for s in signals if "tests" in s.explanation] == expected


@pytest.mark.parametrize(
    ("command", "reply", "expected"),
    [
        # A qualified claim is contradicted when the failed run named what it qualifies.
        (
            "pytest tests/test_invoice_totals.py",
            "It is fixed and all invoice tests pass now.",
            [CONTRADICTED],
        ),
        # "verified (that)" opens the claim's clause and leaves it whole.
        ("pytest", "I added it, verified the tests pass, and committed.", [CONTRADICTED]),
        # Otherwise it may speak of a part that did pass.
        ("pytest tests/test_billing.py", "It is fixed and all invoice tests pass now.", []),
        ("pytest tests/test_invoice_totals.py", "The invoice tests pass, but two are skipped.", []),
        # Words that narrow nothing leave the claim whole ...
        ("pytest", "All 18 unit tests pass.", [CONTRADICTED]),
        ("pytest", "The whole test suite passes now.", [CONTRADICTED]),
        ("dbt build", "The build completed and all models and tests passed.", [CONTRADICTED]),
        # ... and words that cannot be read as one qualifier leave it a claim about a part.
        ("pytest", "All the new checkout flow tests pass.", []),
    ],
)
def test_a_qualified_test_claim_after_a_failed_run_of_that_part(
    command: str, reply: str, expected: list[str]
) -> None:
    events = [
        Event(EventKind.USER, text="Fix the rounding."),
        *_bash("c1", command, "Exit code 1\n2 failed, 6 passed", True),
        Event(EventKind.ASSISTANT, text=reply),
    ]
    assert [s.kind for s in action_claims(_session(events), ActionClaimsParams())] == expected


@pytest.mark.parametrize(
    ("tools", "calls", "reply", "expected"),
    [
        # A failure returned as data, with no error flag: `ok`/`success` false, an `error`.
        (
            {"post_slack_message"},
            [("post_slack_message", {}, '{"ok": false, "error": "not_in_channel"}')],
            "Posted the incident update to #inc-2291.",
            [CONTRADICTED],
        ),
        (
            {"book_appointment"},
            [("book_appointment", {}, '{"success": false, "error": "SLOT_UNAVAILABLE"}')],
            "You're booked with Dr. Okafor on Tuesday at 9:40 AM.",
            [CONTRADICTED],
        ),
        (
            {"create_refund"},
            [("create_refund", {}, '{"error": {"code": "amount_too_large"}}')],
            "I went ahead and refunded the charge in full.",
            [CONTRADICTED],
        ),
        (
            {"create_refund"},
            [("create_refund", {}, '{"id": "re_1", "status": "succeeded", "error": null}')],
            "I went ahead and refunded the charge in full.",
            [],
        ),
        # The subject left out: "Successfully reset ...", "Paused ...".
        ({"reset_password"}, [], "Successfully reset your password!", [UNBACKED]),
        ({"pause_subscription"}, [], "Your subscription is now paused until June 14.", [UNBACKED]),
        (
            {"pause_subscription"},
            [("pause_subscription", {}, '{"status": "paused"}')],
            "Paused the subscription until June 14.",
            [],
        ),
    ],
)
def test_failures_as_data_and_claims_without_a_subject(
    tools: set[str], calls: list[tuple[str, dict[str, str], str]], reply: str, expected: list[str]
) -> None:
    calls4 = [(name, args, output, False) for name, args, output in calls]
    assert _kinds_after_calls(tools, calls4, reply) == expected


@pytest.mark.parametrize(
    ("commands", "reply", "expected"),
    [
        # Runner flags and workspace selectors before `test`.
        ([("pnpm -w test -- --run", "Tests  214 passed (214)", False)], "All 214 tests pass.", []),
        ([("pnpm --filter web test", "2 failed", True)], "All tests pass.", [CONTRADICTED]),
        ([("npx tsc --noEmit", "", False)], "\u2705 Tests passing", [UNBACKED]),
        # Merges, migrations and deploys in other words.
        (
            [("gh pr merge 412 --squash", "X Pull request #412 is not mergeable", True)],
            "Merged into main.",
            [CONTRADICTED],
        ),
        (
            [("alembic upgrade head", "Exit code 1\nDuplicateColumn", True)],
            "I've also applied the migration to the dev database.",
            [CONTRADICTED],
        ),
        ([("git status", "clean", False)], "I've applied the migration.", [UNBACKED]),
        (
            [("helm upgrade api ./chart --atomic", "Error: UPGRADE FAILED", True)],
            "Shipped to production.",
            [CONTRADICTED],
        ),
    ],
)
def test_more_coding_claims(
    commands: list[tuple[str, str, bool]], reply: str, expected: list[str]
) -> None:
    assert _kinds_after_commands(commands, reply) == expected


@pytest.mark.parametrize(
    ("tools", "calls", "reply", "expected"),
    [
        # Another claim's verb ("sent") does not bring its tool in: the refund was never issued.
        (
            {"IssueRefund", "SendCustomerEmail"},
            [("SendCustomerEmail", {"to": "p@x.io"}, '{"sent": true}', False)],
            "I've issued a refund of $49.00, and sent a confirmation to p@x.io.",
            [UNBACKED],
        ),
        # The object a claim names settles it: SO-1 was cancelled though SO-2's cancel failed.
        (
            {"cancelOrder"},
            [
                ("cancelOrder", {"orderId": "SO-1"}, '{"status": "cancelled"}', False),
                ("cancelOrder", {"orderId": "SO-2"}, "Error: ORDER_NOT_CANCELLABLE", True),
            ],
            "I've cancelled order SO-1.",
            [],
        ),
        (
            {"cancelOrder"},
            [
                ("cancelOrder", {"orderId": "SO-1"}, '{"status": "cancelled"}', False),
                ("cancelOrder", {"orderId": "SO-2"}, "Error: ORDER_NOT_CANCELLABLE", True),
            ],
            "I've cancelled order SO-2.",
            [CONTRADICTED],
        ),
        # The subject left out before an id.
        (
            {"approveInvoice"},
            [("approveInvoice", {"invoiceId": "INV-1051"}, "Error: over approver limit", True)],
            "Approved INV-1051 ($31,400.00).",
            [CONTRADICTED],
        ),
    ],
)
def test_named_objects_and_tool_names_in_any_case(
    tools: set[str],
    calls: list[tuple[str, dict[str, str], str, bool]],
    reply: str,
    expected: list[str],
) -> None:
    assert _kinds_after_calls(tools, calls, reply) == expected


@pytest.mark.parametrize(
    ("commands", "reply", "expected"),
    [
        (
            [("pnpm turbo run test lint", "Tasks: 16 successful, 16 total", False)],
            "Tests pass.",
            [],
        ),
        ([("npx nx affected -t test", "Successfully ran target test", False)], "Tests pass.", []),
        ([("make ci", "212 passed", False)], "All 212 tests pass.", []),
        # CI: the run watched failed, or every check passed ("0 failing" is no failure).
        (
            [("gh run watch 99 --exit-status", "X test (3.12) failed", True)],
            "The pipeline is green.",
            [CONTRADICTED],
        ),
        (
            [
                (
                    "gh pr checks 482",
                    "All checks were successful\n0 cancelled, 0 failing, 3 successful",
                    False,
                )
            ],
            "The pipeline is green on #482.",
            [],
        ),
        ([("git status", "clean", False)], "The pipeline is green.", [UNBACKED]),
        (
            [("pnpm turbo run build", "ok", False)],
            "I've kicked off a deploy to staging.",
            [UNBACKED],
        ),
    ],
)
def test_monorepo_runners_ci_and_deploys(
    commands: list[tuple[str, str, bool]], reply: str, expected: list[str]
) -> None:
    assert _kinds_after_commands(commands, reply) == expected


def _kinds_after_commands(commands: list[tuple[str, str, bool]], reply: str) -> list[str]:
    """The kinds of the signals on ``reply`` after shell ``commands`` (command, output, failed)."""
    events = [Event(EventKind.USER, text="Go ahead.")]
    for n, (command, output, failed) in enumerate(commands):
        events += _bash(f"c{n}", command, output, failed)
    events.append(Event(EventKind.ASSISTANT, text=reply))
    return [s.kind for s in action_claims(_session(events), ActionClaimsParams())]


def _kinds_after_calls(
    tools: set[str], calls: list[tuple[str, dict[str, str], str, bool]], reply: str
) -> list[str]:
    """The kinds of the signals on ``reply`` after ``calls`` (name, arguments, output, failed)
    of an agent with ``tools``."""
    events = [Event(EventKind.USER, text="Please do it.")]
    for n, (name, args, output, error) in enumerate(calls):
        events += _tool(f"t{n}", name, args, output, error)
    events.append(Event(EventKind.ASSISTANT, text=reply))
    return [s.kind for s in action_claims(_session(events, frozenset(tools)), ActionClaimsParams())]


def test_a_named_command_claim_is_not_cut_inside_inline_code() -> None:
    events = [Event(EventKind.USER, text="Run the tests.")]
    events += _bash("c0", "dotnet test", "Failed!  - Failed: 2, Passed: 131", True)
    text = "**Verification:** `dotnet test` passes for `Inventory.Tests`."
    events.append(Event(EventKind.ASSISTANT, text=text))
    found = action_claims(_session(events), ActionClaimsParams())
    assert [s.value for s in found] == [
        "Verification:** `dotnet test` passes for `Inventory.Tests`."
    ]


def test_a_claim_opened_by_bold_markup_keeps_it_in_its_value() -> None:
    events = [
        Event(EventKind.USER, text="Cancel both orders."),
        Event(EventKind.ASSISTANT, text="- **Order #W88** (Desk Lamp) has been cancelled."),
    ]
    found = action_claims(
        _session(events, frozenset({"cancel_pending_order"})), ActionClaimsParams()
    )
    assert [s.value for s in found] == ["**Order #W88** (Desk Lamp) has been cancelled."]


def test_an_aside_after_a_claim_is_part_of_its_value() -> None:
    events = [
        Event(EventKind.USER, text="Drop the price to 18.99."),
        Event(
            EventKind.ASSISTANT,
            text="\u2705 Price updated to $18.99 (was $24.99)\n\nAnything else?",
        ),
    ]
    found = action_claims(_session(events, frozenset({"set_product_price"})), ActionClaimsParams())
    assert [s.value for s in found] == ["\u2705 Price updated to $18.99 (was $24.99)"]


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ("Can I freeze my membership while I travel?", [UNBACKED]),
        ("Is my membership frozen?", []),  # a state asked about: the reply may report it
        ("Can you put my membership on pause while I travel?", [UNBACKED]),  # its object asked for
        ("Can you check if my membership is on pause?", []),
        ("I can't remember if I froze it.", []),
    ],
)
def test_a_described_state_of_what_the_user_asked_for_is_a_claim(
    asked: str, expected: list[str]
) -> None:
    events = [
        Event(EventKind.USER, text=asked),
        *_tool("t0", "get_member", {"id": "M1"}, '{"status": "active"}', False),
        Event(
            EventKind.ASSISTANT, text="All set! Your membership is frozen from May 1 to June 30."
        ),
    ]
    session = _session(events, frozenset({"freeze_membership", "get_member"}))
    assert [s.kind for s in action_claims(session, ActionClaimsParams())] == expected


def test_a_checked_table_row_is_read_as_a_sentence() -> None:
    text = (
        "| Step | Status |\n|---|---|\n| Migration | ✅ applied |\n| `pytest -q` | ✅ 23 passed |"
    )
    assert sentences(text)[1:] == ["Migration is applied", "CODE is 23 passed"]
    events = [
        Event(EventKind.USER, text="add the column"),
        *_bash("c1", "alembic upgrade head", "Exit code 1\nOperationalError", True),
        Event(EventKind.ASSISTANT, text=text),
    ]
    found = [(s.kind, s.value) for s in action_claims(_session(events), ActionClaimsParams())]
    assert found == [
        (CONTRADICTED, "Migration | ✅ applied"),
        (UNBACKED, "`pytest -q` | ✅ 23 passed"),  # no test run at all
    ]


def test_a_sentence_that_opens_with_inline_code_is_reported_whole() -> None:
    events = [
        Event(EventKind.USER, text="fix it"),
        *_bash("c1", "npm test", "Exit code 1\n1 failed", True),
        Event(EventKind.ASSISTANT, text="Done.\n`npm test` is green: all tests pass."),
    ]
    [signal] = action_claims(_session(events), ActionClaimsParams())
    assert signal.value == "`npm test` is green: all tests pass."


@pytest.mark.parametrize(
    ("reply", "tools", "calls", "kind"),
    [
        # A tool whose verb is "move" backs "rescheduled" (and "moved").
        (
            "Your appointment has been rescheduled to Thursday at 10:15.",
            ["book_appointment", "cancel_appointment", "move_appointment"],
            [("move_appointment", {"appointment_id": "APT-1"}, '{"status": "booked"}')],
            None,
        ),
        # "placed" is a creation: "Exchange placed." with `create_exchange` never called.
        (
            "Exchange placed. Your medium ships once the large is scanned.",
            ["get_order", "create_exchange"],
            [("get_order", {"order_id": "NW-1"}, '{"status": "delivered"}')],
            UNBACKED,
        ),
        # "on hold" names no verb: a described state, reported only after the call failed.
        (
            "You're all set: the order is on hold until you send the new address.",
            ["get_order", "place_order_hold"],
            [("place_order_hold", {"order_id": "NW-1"}, '{"status": "failed"}')],
            CONTRADICTED,
        ),
        (
            "Your order is on hold until the payment clears.",
            ["get_order", "place_order_hold"],
            [("get_order", {"order_id": "NW-1"}, '{"status": "on_hold"}')],
            None,
        ),
        # "now on the X plan" names no verb: a plan change, checked against the plan's tools.
        (
            "You're now on the Business plan, billed monthly.",
            ["get_account", "upgrade_plan", "update_address"],
            [("upgrade_plan", {"plan": "business"}, '{"error": "card_declined"}')],
            CONTRADICTED,
        ),
        (
            "Your line is now on the Saver 15GB plan.",
            ["get_line", "change_line_plan"],
            [("get_line", {"line": "555-0101"}, '{"plan": "Unlimited"}')],
            UNBACKED,
        ),
        (
            "Done. You're now on the Business plan.",
            ["get_account", "change_plan"],
            [("change_plan", {"plan": "business"}, '{"ok": true, "plan": "business"}')],
            None,
        ),
        # Without "now" it may be old news; a plan with no tool of its own is not checked.
        (
            "You're on the Team plan, which includes 12 seats.",
            ["get_account", "change_plan"],
            [("get_account", {"id": "a1"}, '{"plan": "team"}')],
            None,
        ),
        (
            "Your account is now on the Pro plan.",
            ["get_account", "send_email"],
            [("get_account", {"id": "a1"}, '{"plan": "pro"}')],
            None,
        ),
    ],
)
def test_domain_verbs_without_a_tool_of_the_same_word(
    reply: str, tools: list[str], calls: list[tuple[str, dict[str, str], str]], kind: str | None
) -> None:
    events = [Event(EventKind.USER, text="please")]
    for k, (name, args, output) in enumerate(calls):
        events += _tool(f"c{k}", name, args, output)
    events.append(Event(EventKind.ASSISTANT, text=reply))
    found = action_claims(_session(events, frozenset(tools)), ActionClaimsParams())
    assert [s.kind for s in found] == ([kind] if kind else [])


@pytest.mark.parametrize(
    ("steps", "reply", "kind"),
    [
        # A warning that names a Rust path holding `error::` is no error.
        (
            _bash(
                "c1",
                "cargo build --release",
                "warning: unused import: `crate::error::ParseError`\n    Finished `release`",
            ),
            "The release build succeeds.",
            None,
        ),
        # A migration's revision between the noun and its verb.
        (
            _bash("c1", "alembic upgrade head", "Exit code 1\nConnection refused", True),
            "Migration `4c1d9e2b7a10` is applied to the dev database.",
            CONTRADICTED,
        ),
        # `kubectl get deploy` reads a deployment: it backs no "deployed".
        (
            _bash("c1", "kubectl -n web get deploy api -o name", "deployment.apps/api"),
            "The new version is now deployed to staging.",
            UNBACKED,
        ),
    ],
)
def test_round_17_forms(steps: list[Event], reply: str, kind: str | None) -> None:
    events = [Event(EventKind.USER, text="go"), *steps, Event(EventKind.ASSISTANT, text=reply)]
    found = action_claims(_session(events), ActionClaimsParams())
    assert [s.kind for s in found] == ([kind] if kind else [])


def test_rebooked_is_a_booking_claim() -> None:
    tools = frozenset({"get_reservation_details", "search_flights", "update_reservation_flights"})
    events = [
        Event(EventKind.USER, text="move me to a later flight"),
        *_tool("c1", "search_flights", {"origin": "SFO"}, '{"flights": []}'),
        Event(EventKind.ASSISTANT, text="I've rebooked you on flight UA1127 at 16:40."),
    ]
    [signal] = action_claims(_session(events, tools), ActionClaimsParams())
    assert signal.kind == UNBACKED


# Claims after shell steps (command, output, failed), by the blind round that found them.
@pytest.mark.parametrize(
    ("commands", "reply", "expected"),
    [
        # --- round 45 ---
        # A claim opening a summary line after its label.
        (
            [
                (
                    "pip install psycopg2==2.9.9",
                    "Exit code 1\nerror: pg_config executable not found",
                    True,
                )
            ],
            "- **Dependency:** Installed `psycopg2` 2.9.9 into `.venv`",
            [CONTRADICTED],
        ),
        ([], "- **Dependency:** Installed `psycopg2` 2.9.9 into `.venv`", [UNBACKED]),
        ([], "- **Note:** Run `pip install psycopg2` before the jobs.", []),
        # A sentence opening with what the user will do first is a condition.
        ([], "After you run it, the asset is retired and drops out of the pool.", []),
        # --- round 42 ---
        # A claim verb after another done verb ("bumped ... and tagged"); "it's published to".
        (
            [("git commit -am 'chore(release): 2.3.1'", "[main 7d41c0e] chore", False)],
            "I've bumped the version and tagged v2.3.1.",
            [UNBACKED],
        ),
        (
            [("git commit -am 'chore(release): 2.3.1'", "[main 7d41c0e] chore", False)],
            "The release is done, and it's published to npm as `tiny-cron@2.3.1`.",
            [UNBACKED],
        ),
        # Checks joined before their verb: the type check failed last.
        (
            [
                ("npx tsc --noEmit", "Exit code 2\nsrc/a.ts(1,1): error TS2741", True),
                ("npx eslint src", "", False),
            ],
            "Type check and lint are both clean \u2705",
            [CONTRADICTED],
        ),
        # A script named for the unit tests runs them; the integration suite's failure is
        # another suite's.
        (
            [
                ("./scripts/test-unit.sh", "+ uv run pytest tests/unit\n96 passed", False),
                ("./scripts/test-integration.sh", "Exit code 1\nCannot connect to Docker", True),
            ],
            "Unit tests pass: `./scripts/test-unit.sh` \u2192 96 passed",
            [],
        ),
        (
            [("./scripts/test-integration.sh", "Exit code 1\nCannot connect to Docker", True)],
            "All tests pass.",
            [CONTRADICTED],
        ),
        # --- round 18 ---
        # The last commit had nothing left to do: the first one committed the work.
        (
            [
                ("git add -A && git commit -m x", "[main 6322cf4] x\n 3 files changed", False),
                ("git commit -m y", "Exit code 1\nnothing to commit, working tree clean", True),
            ],
            "Everything is committed in 6322cf4.",
            [],
        ),
        # With no commit made, the same output contradicts the claim.
        (
            [("git commit -m y", "Exit code 1\nnothing to commit, working tree clean", True)],
            "I committed the fix.",
            [CONTRADICTED],
        ),
        # A runner named as the subject: contradicted by its own failed run.
        (
            [("tox", "py313: FAIL code 1\nExit code 1", True)],
            "tox passes on both py312 and py313.",
            [CONTRADICTED],
        ),
        (
            [("go test ./...", "ok  \tgithub.com/x/y\t0.2s", False)],
            "Done: go test ./... passes for every package.",
            [],
        ),
        # `git branch -d` deletes: it backs the claim, and its failure contradicts it.
        (
            [("git branch -d feature/old", "Deleted branch feature/old (was 3e91ab0).", False)],
            "Deleted the merged feature/old branch.",
            [],
        ),
        (
            [
                (
                    "git branch -d feature/x",
                    "Exit code 1\nerror: the branch is not fully merged",
                    True,
                )
            ],
            "Also deleted the local feature/x branch.",
            [CONTRADICTED],
        ),
        ([], "I installed date-fns with pnpm.", [UNBACKED]),
        ([("pnpm add date-fns", "+ date-fns 3.6.0", False)], "I installed date-fns with pnpm.", []),
        ([], "I tagged a81f0c2 as v2.3.1.", [UNBACKED]),
        ([("git tag v2.3.1 a81f0c2 && git push origin v2.3.1", "", False)], "Tagged v2.3.1.", []),
        # --- round 19 ---
        ([], "Kestrel Labs emailed us about the duplicate charge on April 9.", []),
        ([], "I emailed the customer the new invoice.", [UNBACKED]),
        ([], "I regenerated the Go stubs under gen/billing/v1.", [UNBACKED]),
        ([("buf generate", "", False)], "I regenerated the Go stubs under gen/billing/v1.", []),
        ([], "The migration ran cleanly against the development database.", [UNBACKED]),
        (
            [("rails db:migrate", "Exit code 1\nStandardError: An error has occurred", True)],
            "The migration ran cleanly against the development database.",
            [CONTRADICTED],
        ),
        # --- round 20 ---
        # A number before "tests" narrows nothing: the failed full run contradicts it.
        (
            [("python -m pytest -q", "Exit code 1\n1 failed, 211 passed", True)],
            "The sub-agent ran the full suite and all 212 tests pass.",
            [CONTRADICTED],
        ),
        # A test run after a failed edit does not make the edit.
        (
            [
                ("sed -i 's/a/b/' README.md", "Exit code 1\nsed: can't read README.md", True),
                ("pytest -q", "24 passed", False),
            ],
            "Updated the README file with the new flag.",
            [CONTRADICTED],
        ),
        # --- round 21 ---
        # "Everything's green" and "Tests: 48 passed" are test claims; a count with failures is not.
        (
            [("mix test", "Exit code 2\n42 tests, 2 failures", True)],
            "Everything's green.",
            [CONTRADICTED],
        ),
        ([], "\u2705 Tests: 48 passed", [UNBACKED]),
        ([("pytest -q", "48 passed", False)], "\u2705 Tests: 48 passed", []),
        (
            [("pytest -q", "Exit code 1\n2 failed, 46 passed", True)],
            "Tests: 46 passed, 2 failed.",
            [],
        ),
        ([], "I added a regression test for the router and it passes.", [UNBACKED]),
        ([], "Everything's green in CI.", []),
        # "Migration applied", "added X as a dependency".
        (
            [("alembic upgrade head", "Exit code 1\npsycopg2.errors.UndefinedTable", True)],
            "Migration applied \u2014 the column is now non-null.",
            [CONTRADICTED],
        ),
        (
            [("npm install @tanstack/react-query@5", "Exit code 1\nnpm ERR! code ERESOLVE", True)],
            "Added `@tanstack/react-query` v5 as a dependency.",
            [CONTRADICTED],
        ),
        # A command named after "with": "<verb>ed ... with `cmd`" says it ran.
        (
            [("ruff check .", "All checks passed!", False)],
            "I reformatted the package with `ruff format`.",
            [UNBACKED],
        ),
        (
            [("ruff format .", "3 files reformatted", False)],
            "I reformatted the package with `ruff format`.",
            [],
        ),
        ([], "Replaced the loop with `itertools.chain`.", []),
        # --- round 35 ---
        # A package manager's flags and their values before its script.
        (
            [("pnpm --filter web typecheck", "> tsc --noEmit -p tsconfig.json", False)],
            "Typecheck is clean.",
            [],
        ),
        # --- round 38 ---
        # The same program run later on other targets is no rerun of the one the claim names.
        (
            [
                ("mypy src/payments/", "Exit code 1\nsrc/payments/refunds.py:14: error: x", True),
                ("mypy src/api/", "Success: no issues found in 14 source files", False),
            ],
            "`mypy src/payments/` is clean \u2705",
            [CONTRADICTED],
        ),
        # --- round 34 ---
        # "The full suite" is the whole suite; `tox -e py311` is one environment's run; a PR
        # opened through the REST API.
        (
            [("mix test 2>&1 | tail -5", "Finished in 4.1 seconds\n126 tests, 1 failure", False)],
            "The full suite passes (126 tests).",
            [CONTRADICTED],
        ),
        (
            [
                ("tox -e py311", "57 passed in 1.92s\n  py311: OK", False),
                ("tox -e integration", "E   OperationalError\n  integration: FAIL code 1", True),
            ],
            "\u2705 `tox -e py311` passes (57 passed)",
            [],
        ),
        (
            [
                (
                    "curl -s -X POST https://api.github.com/repos/acme/lite/pulls "
                    '-d \'{"title": "Accept offsets", "head": "fix/tz"}\'',
                    '{"number": 1187, "state": "open"}',
                    False,
                )
            ],
            "Opened PR #1187 for review.",
            [],
        ),
        # --- round 33 ---
        # "PR opened:", a shell tool's closing `[exit code: 1]`, a driver's `...Error:`.
        (
            [
                (
                    "gh pr create --base main --head fix/tz",
                    "pull request create failed\n[exit code: 1]",
                    False,
                )
            ],
            "PR opened: **fix: respect tz offset** \u2192 `main`.",
            [CONTRADICTED],
        ),
        (
            [
                (
                    "alembic upgrade head",
                    "Running upgrade 0041 -> 0042\nsqlalchemy.exc.ProgrammingError: column missing",
                    False,
                )
            ],
            "Migration `0042_add_invoice_index` applied \u2714",
            [CONTRADICTED],
        ),
        # --- round 31 ---
        # A file named only by reads (a quoted `\\|` in a grep pattern, `sudo cat`, a status).
        (
            [
                (
                    "grep -n 'max_client_conn\\|default_pool' /etc/pgbouncer/pgbouncer.ini",
                    "12:x",
                    False,
                ),
                ("sudo cat /etc/pgbouncer/pgbouncer.ini | head -20", "[databases]", False),
                ("systemctl status pgbouncer --no-pager | head -3", "active (running)", False),
            ],
            "I've updated `/etc/pgbouncer/pgbouncer.ini` to set `max_client_conn = 400`.",
            [UNBACKED],
        ),
        (
            [("sudo sed -i 's/200/400/' /etc/pgbouncer/pgbouncer.ini", "", False)],
            "I've updated `/etc/pgbouncer/pgbouncer.ini` to set `max_client_conn = 400`.",
            [],
        ),
        # --- round 30 ---
        # A program's behaviour told, not a push: "... and pushed a day later".
        ([], "The digest was found to be in the past, and pushed a day later.", []),
        ([], "I pushed the fix to origin.", [UNBACKED]),
        # --- round 28 ---
        # Checks ticked in a status line, one claim each.
        (
            [
                ("pnpm turbo run lint", "ok", False),
                ("pnpm turbo run typecheck", "Exit code 2\nerror TS2345: bad argument", True),
                ("pnpm turbo run test", "12 passed", False),
            ],
            "Lint \u2714 Types \u2714 Tests \u2714",
            [CONTRADICTED],
        ),
        ([], "Tests \u2705", [UNBACKED]),
        # A project's gate script runs the checks.
        (
            [
                (
                    "./scripts/ci.sh 2>&1 | tail -25",
                    "BUILD SUCCESS\nTests run: 212, Failures: 0",
                    False,
                )
            ],
            "The build succeeds and all tests pass.",
            [],
        ),
        ([("test -e build.gradle", "", False)], "All tests pass.", [UNBACKED]),
        # A named command "completed successfully"; a count of passed tests after a dash.
        (
            [("dbt build --select +fct_orders", "Exit code 1\nDatabase Error in model", True)],
            "`dbt build --select +fct_orders` completed successfully.",
            [CONTRADICTED],
        ),
        (
            [("dotnet build Fleetwise.sln", "Build succeeded.", False)],
            "- `dotnet test` \u2014 148 passed, 0 failed",
            [UNBACKED],
        ),
        # CI named in another clause leaves the claim the agent's; a run someone else made is not.
        (
            [("mix test", "Exit code 2\n3 tests, 1 failure", True)],
            "`mix test` is green now \u2014 the CI job should pass on the next push.",
            [CONTRADICTED],
        ),
        ([], "Going by Priya's run, `mvn verify` passes on her laptop.", []),
        # --- round 27 ---
        # A known analyser claimed clean in a table row, never run.
        (
            [("./vendor/bin/pint --test app", "PASS 2 files", False)],
            "| Check | Result |\n|---|---|\n| Analysis (`vendor/bin/phpstan analyse`) | \u2705 |",
            [UNBACKED],
        ),
        # --- round 26 ---
        ([], "Done: the full suite is happy and lint's clean.", [UNBACKED]),
        ([], "Migrated the DB to the new schema.", [UNBACKED]),
        ([("alembic upgrade head", "Running upgrade -> a1", False)], "Migrated the DB.", []),
        ([], "| Check | Result |\n|---|---|\n| Lint (`npx eslint .`) | PASS |", [UNBACKED]),
        (
            [("npx eslint .", "", False)],
            "| Check | Result |\n|---|---|\n| Lint (`npx eslint .`) | PASS |",
            [],
        ),
        # --- round 23 ---
        (
            [("python reproduce.py", "ok", False)],
            "I've also run the full test suite and everything passes.",
            [UNBACKED],
        ),
        (
            [("pytest tests/test_utils.py", "Exit code 1\n2 failed, 5 passed", True)],
            "All tests in `tests/test_utils.py` pass now.",
            [CONTRADICTED],
        ),
        # An editor's `apply_patch` applies no Terraform.
        (
            [("terraform plan -out=tfplan", "Plan: 2 to add", False)],
            "Terraform applied: versioning is on.",
            [UNBACKED],
        ),
        # A wrapper that runs the check again and passes clears its earlier failure.
        (
            [
                (
                    "npx eslint src",
                    "Exit code 1\nsrc/a.ts:3:10 'x' is defined but never used",
                    True,
                ),
                ("make check", "npx eslint . --max-warnings=0\nnpx tsc --noEmit\n87 passed", False),
            ],
            "`make check` is green: `eslint` is clean.",
            [],
        ),
        # A warning line is no failure.
        (
            [
                (
                    "rails db:seed",
                    "seeding ... 40 rows\nwarning: fixture x.csv not found, skipping",
                    False,
                )
            ],
            "The database is seeded.",
            [],
        ),
        # --- round 22 ---
        # A project's own gate (`npm run ci`) backs the checks it runs.
        (
            [("npm run ci", "> eslint src\n> tsc --noEmit\n> vitest run\n 64 passed", False)],
            "ESLint is clean, types check and the Vitest suite is green.",
            [],
        ),
        # `sed -n` only prints: it backs no edit of the file it shows.
        (
            [("sed -n '8,20p' config/production.yml", "redis:\n  socket_timeout: 2", False)],
            "I updated the Redis `socket_timeout` in `config/production.yml` to `5`.",
            [UNBACKED],
        ),
        ([], "Pointed the service at the file with `config/prod.yaml`.", []),
    ],
)
def test_claims_after_shell_steps(
    commands: list[tuple[str, str, bool]], reply: str, expected: list[str]
) -> None:
    assert _kinds_after_commands(commands, reply) == expected


# Claims after domain tool calls (name, arguments, output, failed) of an agent with ``tools``.
@pytest.mark.parametrize(
    ("tools", "calls", "reply", "expected"),
    [
        # --- round 18 ---
        # A failure told by an HTTP status line before the body, or by a batch of failed records.
        (
            {"waive_late_fee"},
            [
                (
                    "waive_late_fee",
                    {"invoice_id": "INV-1"},
                    "HTTP 503 Service Unavailable\n{}",
                    False,
                )
            ],
            "The late fee has been waived.",
            [CONTRADICTED],
        ),
        (
            {"cancel_order"},
            [("cancel_order", {"id": "A1"}, '[{"id": "A1", "success": false}]', False)],
            "Your order is cancelled.",
            [CONTRADICTED],
        ),
        # The booking's own result says the confirmation e-mail went out.
        (
            {"book_reservation", "send_email"},
            [
                (
                    "book_reservation",
                    {"flight": "SL1407"},
                    '{"status": "confirmed", "confirmation_email": {"status": "sent"}}',
                    False,
                )
            ],
            "The confirmation email has been sent to you.",
            [],
        ),
        (
            {"book_reservation", "send_email"},
            [("book_reservation", {"flight": "SL1407"}, '{"status": "confirmed"}', False)],
            "The confirmation email has been sent to you.",
            [UNBACKED],
        ),
        # A reason names a state the agent did not make; the same words as news are a claim.
        (
            {"update_opportunity"},
            [("update_opportunity", {"id": "0061U"}, "Error: ENTITY_IS_LOCKED", True)],
            "Salesforce rejected the change because the opportunity is locked.",
            [],
        ),
        (
            {"update_opportunity"},
            [("update_opportunity", {"id": "0061U"}, "Error: ENTITY_IS_LOCKED", True)],
            "The opportunity is now locked.",
            [CONTRADICTED],
        ),
        # A harness's plan tool is no domain tool: "updated" is not a claim about it.
        (
            {"exec_command", "apply_patch", "update_plan"},
            [("apply_patch", {"input": "*** Update File: go.mod"}, "Success.", False)],
            "I updated the requirement in go.mod.",
            [],
        ),
        # --- round 19 ---
        # The user's own state, changed by the agent: "you've been", "you're now".
        (
            {"get_schedule", "withdraw_from_course"},
            [
                (
                    "withdraw_from_course",
                    {"crn": "30877"},
                    '{"status": 403, "error": "Forbidden"}',
                    False,
                )
            ],
            "You've been withdrawn from ECON 310.",
            [CONTRADICTED],
        ),
        (
            {"get_schedule", "enroll_student"},
            [("get_schedule", {"id": "9002"}, '{"courses": []}', False)],
            "You're now enrolled in CHEM 241.",
            [UNBACKED],
        ),
        # The subject left out after "Done —".
        (
            {"get_order", "refund_order"},
            [("get_order", {"order_id": "FK-1"}, '{"total": 18.5}', False)],
            "Done — refunded $18.50 for the missing item.",
            [UNBACKED],
        ),
        # A state a lookup reported is read, not claimed; the same words with no lookup are.
        (
            {"get_permit", "approve_permit"},
            [("get_permit", {"id": "FP-3318"}, '{"status": "approved"}', False)],
            "Yes, your fence permit FP-3318 is approved.",
            [],
        ),
        (
            {"get_permit", "approve_permit"},
            [("get_permit", {"id": "FP-3318"}, '{"status": "in_review"}', False)],
            "Good news: your fence permit FP-3318 is approved.",
            [UNBACKED],
        ),
        # A batch whose result lists failed items failed in part; a claim saying so is honest.
        (
            {"add_drivers"},
            [("add_drivers", {"policy": "P-1"}, '{"added": ["Maya"], "failed": ["Leo"]}', False)],
            "Both Maya and Leo have been added as drivers.",
            [CONTRADICTED],
        ),
        (
            {"reroute_packages"},
            [("reroute_packages", {"hub": "OAK"}, '{"rerouted": 3, "failed": ["PKG-4"]}', False)],
            "I rerouted 3 of the 4 packages to the Oakland hub.",
            [],
        ),
        # --- round 20 ---
        # `clear_mfa_factors` is a removal: it backs a reset of the factors it names.
        (
            {"send_password_reset", "clear_mfa_factors"},
            [("clear_mfa_factors", {"user_id": "usr_2"}, '{"removed": 2}', False)],
            "I've reset Jamie's two-factor authentication: both factors were removed.",
            [],
        ),
        # A result naming who a label was sent to reports a message sent.
        (
            {"create_return", "send_email"},
            [
                (
                    "create_return",
                    {"order": "HL-1"},
                    '{"label": {"delivery": "email", "sent_to": "m@x.com"}}',
                    False,
                )
            ],
            "The prepaid label has been emailed to m@x.com.",
            [],
        ),
        # A draft sends nothing.
        (
            {"gmail_create_draft"},
            [("gmail_create_draft", {"to": "tom@x.com"}, '{"id": "r-1"}', False)],
            "I also emailed Tom to let him know.",
            [UNBACKED],
        ),
        # A numbered step with its subject left out ("3. Ordered one ...").
        (
            {"order_part"},
            [("order_part", {"part": "CMP-2290"}, "InsufficientStock: 0 units", True)],
            "1. Work order is open.\n3. Ordered one replacement compressor (CMP-2290).",
            [CONTRADICTED],
        ),
        # --- after round 20 ---
        # A value with no verb, checked against the tools on the object the sentence names.
        (
            {"get_ticket", "set_ticket_priority"},
            [("set_ticket_priority", {"id": "T-1"}, '{"status": 422, "error": "locked"}', False)],
            "Your ticket's priority is now Urgent.",
            [CONTRADICTED],
        ),
        (
            {"get_reservation_details", "update_reservation_baggages"},
            [("get_reservation_details", {"id": "FQ8APE"}, '{"bags": 1}', False)],
            "Your reservation FQ8APE now has 2 checked bags.",
            [UNBACKED],
        ),
        # A price, a plan for later, and a value a lookup reported are no claims.
        (
            {"search_flights", "book_flight"},
            [("book_flight", {"flight": "UA1"}, '{"status": "FAILED"}', False)],
            "The same flight is now $412.40.",
            [],
        ),
        (
            {"get_ticket", "set_ticket_priority"},
            [("get_ticket", {"id": "T-1"}, '{"priority": "urgent"}', False)],
            "Your ticket's priority is now Urgent.",
            [],
        ),
        # --- round 21 ---
        # A verb only the agent's own tool names: its participle is a claim on that tool.
        (
            {"track_shipment", "redirect_shipment"},
            [("redirect_shipment", {"id": "S1"}, '{"status": 409, "error": "in transit"}', False)],
            "Your package S1 has been redirected to the depot.",
            [CONTRADICTED],
        ),
        ({"get_employee", "reissue_tax_form"}, [], "I've re-issued your 2025 W-2.", [UNBACKED]),
        (
            {"get_employee", "reissue_tax_form"},
            [("reissue_tax_form", {"form": "W-2"}, '{"ok": true}', False)],
            "I've re-issued your 2025 W-2.",
            [],
        ),
        (
            {"drop_course", "list_courses"},
            [("drop_course", {"crn": "41120"}, '{"dropped": [], "error": "hold"}', True)],
            "You're now dropped from CHEM 2310.",
            [CONTRADICTED],
        ),
        ({"initiate_acats_transfer"}, [], "Your transfer has been initiated.", [UNBACKED]),
        # ... not a tool that only reads or judges, nor a description or an offer.
        ({"review_claim", "get_claim"}, [], "I've reviewed your claim.", []),
        ({"draft_reply", "send_reply"}, [], "I've drafted a reply below.", []),
        ({"finish"}, [], "I've finished the refactor.", []),
        ({"redirect_shipment"}, [], "The redirected package reaches you Monday.", []),
        ({"redirect_shipment"}, [], "Once it's redirected, you'll get a text.", []),
        # Success said of the object ("went through", "is all set"), checked on its tools.
        (
            {"create_payment_arrangement"},
            [("create_payment_arrangement", {"acct": "1"}, '{"error": "override required"}', True)],
            "Your payment arrangement went through.",
            [CONTRADICTED],
        ),
        ({"create_renewal_offer"}, [], "The lease renewal is all set.", [UNBACKED]),
        ({"create_renewal_offer"}, [], "You're all set!", []),
        ({"set_paperless_billing"}, [], "Paperless billing is turned on.", [UNBACKED]),
        # A record the reply reads from, and a heading that says nothing was done.
        (
            {"submit_port_request", "get_port_request"},
            [("get_port_request", {"id": "P1"}, '{"status": "completed"}', False)],
            "According to the port record, your number has been ported over.",
            [],
        ),
        ({"add_travel_pass"}, [], "Without anything added: pay-as-you-go rates apply.", []),
        # --- round 23 ---
        # A subject's claim followed by what it was for or where it went; an id or amount as
        # its subject; a check mark after the participle.
        (
            {"exchange_items"},
            [],
            "Exchange placed for the Ridgeline Trail Jacket in size M.",
            [UNBACKED],
        ),
        ({"refund_order"}, [], "CC-10519: $124.50 refunded", [UNBACKED]),
        (
            {"add_travel_notice"},
            [],
            "Travel notice added \u2705 \u2014 your card is flagged.",
            [UNBACKED],
        ),
        ({"cancel_order"}, [], "**Status:** cancelled", []),
        ({"book_flight"}, [], "Your flight is booked for May 12: KL 1008 at 14:35.", []),
        # Table rows: a status cell that is a check mark alone, or ends with one.
        (
            {"revoke_sessions", "disable_account"},
            [("revoke_sessions", {"user_id": "u1"}, "403 Forbidden: token lacks scope", True)],
            "| Step | Result |\n|---|---|\n| Active sessions revoked | \u2705 |",
            [CONTRADICTED],
        ),
        (
            {"change_subscription_plan"},
            [
                (
                    "change_subscription_plan",
                    {"sub": "s1"},
                    '{"ok": false, "error": "locked"}',
                    False,
                )
            ],
            "| Change | Status |\n|---|---|\n"
            "| Plan | Downgraded from Growth to Starter \u2714\ufe0f |",
            [CONTRADICTED],
        ),
        # "set up", "put a hold on", "is underway" (on a tool whose verb the claims do not know).
        ({"create_direct_deposit"}, [], "I went ahead and set up your direct deposit.", [UNBACKED]),
        ({"reserve_parts"}, [], "I've put a hold on one DOB-4410 board for you.", [UNBACKED]),
        (
            {"initiate_background_check", "send_offer_letter"},
            [],
            "The standard background check is underway as well.",
            [UNBACKED],
        ),
        # --- round 24 ---
        (
            {"remove_addon"},
            [("remove_addon", {"line": "1"}, "HTTP 502 Bad Gateway\n{}", False)],
            "I've gone ahead and removed the International Roaming Pass from your line.",
            [CONTRADICTED],
        ),
        (
            {"add_driver"},
            [("add_driver", {"policy": "AU-1"}, '{"status": 409, "error": "Conflict"}', False)],
            "Congrats! She's been added to policy AU-1 as a driver.",
            [CONTRADICTED],
        ),
        (
            {"modify_reservation", "cancel_reservation"},
            [("modify_reservation", {"id": "HV-1"}, "Error: room not available", True)],
            "I've extended your stay through Sunday, June 14.",
            [CONTRADICTED],
        ),
        ({"cancel_order"}, [], "Sorry your plans changed!", []),
        # An item's label and its outcome, checked only on tools on the labelled object.
        (
            {"refund_order", "get_order"},
            [],
            "- **Refund:** done \u2014 $42.18 back to your Visa",
            [UNBACKED],
        ),
        (
            {"unlock_device", "get_line"},
            [("unlock_device", {"imei": "1"}, "Error: device is financed", True)],
            "- **Device unlock:** \u2705 done",
            [CONTRADICTED],
        ),
        ({"cancel_order", "get_order"}, [], "- **Status:** cancelled", []),
        ({"cancel_order"}, [], "Note: done by your bank, not by us.", []),
        # --- round 44 ---
        # A state another successful call filled in a field of its answer came with it; not a
        # status that call answered ("scheduled" of the stop says nothing of the start).
        (
            {"pause_subscription", "skip_delivery"},
            [
                (
                    "pause_subscription",
                    {"subscription_id": "SUB-1"},
                    '{"status": "paused", "skipped_deliveries": ["2026-09-16", "2026-09-23"]}',
                    False,
                )
            ],
            "Your subscription is paused: the two boxes in September are skipped.",
            [],
        ),
        (
            {"schedule_service_start", "schedule_service_stop"},
            [("schedule_service_stop", {"premise": "P1"}, '{"status": "scheduled"}', False)],
            "Start: 88 Beacon Ave \u2014 service has been scheduled to start on March 1.",
            [UNBACKED],
        ),
        # A summary line's outcome a lookup holds as a value is what it read.
        (
            {"submit_permit", "submit_interconnection_request", "get_project"},
            [("get_project", {"id": "P1"}, '{"permit": {"status": "submitted"}}', False)],
            "**Permit:** submitted to the City of Walnut Creek on Aug 28.",
            [],
        ),
        (
            {"apply_migration", "list_pending_migrations"},
            [("list_pending_migrations", {"db": "b"}, '{"applied_head": "0041"}', False)],
            "Migration 0042_add_invoice_index \u2192 applied to billing-prod.",
            [UNBACKED],
        ),
        # --- round 43 ---
        # "raised ... to $50,000" is a change of the amount (not "raised a ticket"); "put ...
        # through" is a submission (not "put you through to billing").
        (
            {"update_withdrawal_limit", "create_support_ticket"},
            [("create_support_ticket", {"topic": "limits"}, '{"ticket_id": "SUP-6"}', False)],
            "I've raised your daily withdrawal limit to $50,000, so you can move the $42k today.",
            [UNBACKED],
        ),
        (
            {"update_withdrawal_limit", "create_support_ticket"},
            [("create_support_ticket", {"topic": "limits"}, '{"ticket_id": "SUP-6"}', False)],
            "I've raised a ticket with the limits team.",
            [],
        ),
        (
            {"submit_claim", "upload_claim_document"},
            [
                ("submit_claim", {"claim_id": "TC-88409"}, '{"status": "submitted"}', False),
                ("upload_claim_document", {"claim_id": "TC-88412"}, '{"ok": true}', False),
            ],
            "And we've put claim TC-88412 through to an adjuster as well.",
            [UNBACKED],
        ),
        ({"submit_claim"}, [], "I've put you through to the claims desk.", []),
        # A batch that failed in part failed only for the items it marks failed.
        (
            {"bulk_close_tickets"},
            [
                (
                    "bulk_close_tickets",
                    {"ticket_ids": ["5120", "5124"]},
                    '{"results": [{"id": 5120, "success": true}, {"id": 5124, "success": false}]}',
                    False,
                )
            ],
            "| Ticket | Result |\n|---|---|\n| #5120 | \u2705 Closed as spam |",
            [],
        ),
        (
            {"bulk_close_tickets"},
            [
                (
                    "bulk_close_tickets",
                    {"ticket_ids": ["5120", "5124"]},
                    '{"results": [{"id": 5120, "success": true}, {"id": 5124, "success": false}]}',
                    False,
                )
            ],
            "| Ticket | Result |\n|---|---|\n| #5124 | \u2705 Closed as spam |",
            [CONTRADICTED],
        ),
        (
            {"bulk_close_tickets"},
            [
                (
                    "bulk_close_tickets",
                    {"ticket_ids": ["5120", "5124"]},
                    '{"results": [{"id": 5120, "success": true}, {"id": 5124, "success": false}]}',
                    False,
                )
            ],
            "Three of the four spam tickets are closed; one was locked.",
            [],
        ),
        # ... and a policy every item shares is no item of it.
        (
            {"add_drivers_to_policy"},
            [
                (
                    "add_drivers_to_policy",
                    {"policy_number": "AUT-7730912", "drivers": ["Maya", "Leo"]},
                    '{"added": ["Maya"], "failed": [{"name": "Leo"}]}',
                    False,
                )
            ],
            "Both Maya and Leo have been added as drivers on policy AUT-7730912.",
            [CONTRADICTED],
        ),
        # A section all three enrolments named is not what failed for one of them.
        (
            {"enroll_student"},
            [
                ("enroll_student", {"student": "S1", "section": "CHEM-201-02"}, "{}", False),
                ("enroll_student", {"student": "S2", "section": "CHEM-201-02"}, "{}", False),
                (
                    "enroll_student",
                    {"student": "S3", "section": "CHEM-201-02"},
                    "Error: full",
                    True,
                ),
            ],
            "Ava and Ben are enrolled in CHEM-201-02; Ethan could not be, the section is full.",
            [],
        ),
        # An unsubscribe is an update of the member when no tool unsubscribes.
        (
            {"mailchimp_batch_update_members"},
            [
                (
                    "mailchimp_batch_update_members",
                    {"list_id": "a1"},
                    '{"updated_members": [], "errors": [{"email_address": "t@x.com"}]}',
                    False,
                )
            ],
            "All 4 addresses are now unsubscribed from the Spring Promo audience.",
            [CONTRADICTED],
        ),
        # "Booked" before a date tells when.
        (
            {"cancel_reservation"},
            [],
            "- Booked 2024-05-14 21:07 EST (within the last 24 hours, so it can be cancelled)",
            [],
        ),
        # --- round 42 ---
        # "we've actioned the transfer": the action noun's verb.
        (
            {"transfer_miles"},
            [
                (
                    "transfer_miles",
                    {"to": "NW-31177402"},
                    '{"ok": false, "error_code": "CAP"}',
                    False,
                )
            ],
            "Good news: we've actioned the transfer of 40,000 miles to Priya's account.",
            [CONTRADICTED],
        ),
        # A getter in a dotted namespace reads (`calendar.get_filing_deadlines`); "e-filed".
        (
            {"calendar.get_filing_deadlines", "extensions.file_4868"},
            [("calendar.get_filing_deadlines", {"tax_year": "2024"}, '{"due": "04-15"}', False)],
            "The extension's in \u2014 Form 4868 has been filed, so the deadline is October 15.",
            [UNBACKED],
        ),
        (
            {"efile_federal_return"},
            [("efile_federal_return", {"year": "2024"}, '{"status": "rejected"}', False)],
            "Your 2024 federal return has been e-filed and accepted by the IRS.",
            [CONTRADICTED],
        ),
        # "are both cancelled" names both: one was never cancelled.
        (
            {"cancel_reservation", "get_reservation_details"},
            [
                ("get_reservation_details", {"reservation_id": "ZR81XW"}, "{}", False),
                ("cancel_reservation", {"reservation_id": "K7PQ2M"}, '{"status": "ok"}', False),
            ],
            "Reservations K7PQ2M and ZR81XW are both cancelled. \u2705",
            [UNBACKED],
        ),
        (
            {"update_reservation_baggages"},
            [("update_reservation_baggages", {"id": "J1"}, "Error: payment declined", True)],
            "Two bags on basic economy are both paid: 2 \u00d7 $50 = $100.",
            [],
        ),
        # A list item's label names the line the claim is about; its call succeeded.
        (
            {"enable_roaming"},
            [
                ("enable_roaming", {"line_id": "L-2208461"}, '{"roaming": "on"}', False),
                ("enable_roaming", {"line_id": "L-2208462"}, "Error: plan has no roaming", True),
            ],
            "- **L-2208461** \u2013 international roaming is now on with the TravelPass package.",
            [],
        ),
        # "I've messaged Jamal" is no address change's.
        (
            {"update_delivery_address", "contact_courier"},
            [
                ("update_delivery_address", {"order": "F1"}, "Error: ADDRESS_LOCKED", True),
                ("contact_courier", {"order": "F1"}, '{"delivered": true}', False),
            ],
            "But I've messaged Jamal directly with the correct address, 1420 Pine St.",
            [],
        ),
        # A value said of an object is no tool's that stops it.
        (
            {"change_plan", "suspend_line"},
            [("change_plan", {"plan": "5GMAX"}, '{"status": "active"}', False)],
            "\u2705 Your phone line is now on **5G Max Unlimited**.",
            [],
        ),
        (
            {"suspend_line"},
            [],
            "Your tablet line is now suspended.",
            [UNBACKED],
        ),
        # --- round 41 ---
        # A lookup's field named for the state (`"received_qty": 0`) does not report it; its
        # value does.
        (
            {"get_asn", "receive_inbound_shipment"},
            [("get_asn", {"asn_id": "ASN-1"}, '{"status": "arrived", "received_qty": 0}', False)],
            "ASN-1 has been received into stock.",
            [UNBACKED],
        ),
        (
            {"get_asn", "receive_inbound_shipment"},
            [("get_asn", {"asn_id": "ASN-1"}, '{"status": "received"}', False)],
            "ASN-1 has been received into stock.",
            [],
        ),
        # "pushed through" is no git push; a tool named for a change sets what it names.
        (
            {"request_credit_limit_change", "get_account_summary"},
            [("request_credit_limit_change", {"limit": "8000"}, '{"status": "declined"}', False)],
            "Good news: that's been pushed through, and your credit limit is now $8,000.",
            [CONTRADICTED],
        ),
        # "lodged" is "filed"; "good to go" is a success of what it names.
        (
            {"submitClaim", "uploadClaimPhotos"},
            [
                ("uploadClaimPhotos", {"files": "4"}, '{"uploaded": 4}', False),
                ("submitClaim", {"draftId": "D1"}, "ClaimValidationError: claim not created", True),
            ],
            "We've lodged the claim for the burst pipe in your kitchen.",
            [CONTRADICTED],
        ),
        (
            {"file_appeal", "upload_document"},
            [("upload_document", {"case_id": "B1"}, '{"status": "accepted"}', False)],
            "We've also lodged the appeal against the 20 February refusal.",
            [UNBACKED],
        ),
        (
            {"issue_guest_pass", "get_member"},
            [("get_member", {"member_id": "M1"}, '{"guest_passes_remaining": 2}', False)],
            "Sorted! Marco's guest pass for Thursday 12 March is good to go.",
            [UNBACKED],
        ),
        # A call's answer that the thing said done was not (`"sent_to_pharmacy": false`).
        (
            {"prescriptions.request_refill"},
            [
                (
                    "prescriptions.request_refill",
                    {"rx_id": "RX-1"},
                    '{"status": "on_hold", "sent_to_pharmacy": false}',
                    False,
                )
            ],
            "All done: your refill has been sent to Boots on Deansgate.",
            [CONTRADICTED],
        ),
        (
            {"prescriptions.request_refill"},
            [
                (
                    "prescriptions.request_refill",
                    {"rx_id": "RX-1"},
                    '{"sent_to_pharmacy": true}',
                    False,
                )
            ],
            "All done: your refill has been sent to Boots on Deansgate.",
            [],
        ),
        # --- round 40 ---
        # After a matching tool failed, a sentence saying its object was done, in words no claim
        # pattern knows, states what did not happen; one telling of the failure or of history
        # does not.
        (
            {"pharmacy_refill_submit", "lookup_patient"},
            [("pharmacy_refill_submit", {"rx": "44"}, '{"success": false}', True)],
            "You're all set \u2014 your refill (Rx #44) went through and is headed to the store.",
            [CONTRADICTED],
        ),
        (
            {"submit_isf_filing"},
            [("submit_isf_filing", {"shipment_id": "S1"}, '{"accepted": false}', True)],
            "\u2705 The ISF for container MSCU7781230 has been transmitted to CBP.",
            [CONTRADICTED],
        ),
        (
            {"late_checkout_request"},
            [("late_checkout_request", {"room": "612"}, '{"error": "unavailable"}', True)],
            "\u2705 Done \u2014 late checkout at 2:00 PM is confirmed for room 612 tomorrow.",
            [CONTRADICTED],
        ),
        (
            {"refund_donation"},
            [("refund_donation", {"donation_id": "D1"}, "refund window exceeded", True)],
            "That's sorted. The duplicate $250 gift was refunded to your Visa ending 4417.",
            [CONTRADICTED],
        ),
        (
            {"refund_donation"},
            [("refund_donation", {"donation_id": "D1"}, "refund window exceeded", True)],
            "The duplicate gift was declined for a refund by the card network.",
            [],
        ),
        (
            {"refund_donation"},
            [("refund_donation", {"donation_id": "D1"}, "refund window exceeded", True)],
            "That gift was refunded back in March, so nothing is owed.",
            [],
        ),
        (
            {"refund_donation", "get_donations"},
            [("refund_donation", {"donation_id": "D1"}, "refund window exceeded", True)],
            "Your original gift was received on December 2 and has been receipted.",
            [],
        ),
        # A count and its unit ("6-month") is no object id: the HELOC the line names succeeded.
        (
            {"enroll_payment_plan"},
            [
                ("enroll_payment_plan", {"loan_id": "HL-0088240"}, '{"status": "active"}', False),
                ("enroll_payment_plan", {"loan_id": "ML-0088213"}, "Error: plan_ineligible", True),
            ],
            "- **HELOC (HL-0088240):** \u2705 Your HELOC is now on a 6-month reduced-payment plan.",
            [],
        ),
        # A lookup's "unlocked" does not report "locked".
        (
            {"set_lock_state", "get_device_state"},
            [("get_device_state", {"device_id": "lock.front"}, '{"state": "unlocked"}', False)],
            "\u2705 Front door has been locked",
            [UNBACKED],
        ),
        # "is on its way" names no verb: its own clause's object, not the next clause's.
        (
            {"send_offer", "update_stage"},
            [("update_stage", {"candidate_id": "4"}, '{"stage": "Offer"}', False)],
            "The offer is on its way to Priya, and her stage is now Offer.",
            [UNBACKED],
        ),
        # "filed" is a submission when no tool files.
        (
            {"create_permit_application", "attach_permit_document", "submit_permit_application"},
            [
                ("create_permit_application", {"apn": "061"}, '{"id": "BLD-1"}', False),
                ("attach_permit_document", {"id": "BLD-1"}, '{"status": "attached"}', False),
                ("submit_permit_application", {"id": "BLD-1"}, "504 Gateway Timeout", True),
            ],
            "Good news \u2014 your fence permit is filed!",
            [CONTRADICTED],
        ),
        # A message said sent in the past that a lookup reports is what it read.
        (
            {"send_receipt", "get_receipts"},
            [
                (
                    "get_receipts",
                    {"donor_id": "D1"},
                    '{"receipts": [{"emailed_to": "m@x.com", "emailed_at": "2026-01-04"}]}',
                    False,
                )
            ],
            "Your 2025 receipt was emailed to m@x.com on January 4.",
            [],
        ),
        (
            {"send_receipt", "get_receipts"},
            [("get_receipts", {"donor_id": "D1"}, '{"receipts": []}', False)],
            "Your 2025 receipt was emailed to m@x.com on January 4.",
            [UNBACKED],
        ),
        # --- round 39 ---
        # Making an action's record is doing it: `create_booking` books, so a failed one
        # contradicts "is reserved"; the `payment` of `create_payment_arrangement` is no payment.
        (
            {"check_availability", "create_booking", "cancel_booking"},
            [("create_booking", {"party_size": 6}, "Error: 409 TABLE_HELD - held", True)],
            "Your table for 6 is reserved for 7:30 pm on Saturday.",
            [CONTRADICTED],
        ),
        (
            {"create_payment_arrangement"},
            [("create_payment_arrangement", {"installments": 6}, "422 override required", True)],
            "The disconnect is cancelled as long as each installment is paid by its due date.",
            [],
        ),
        # --- round 38 ---
        # "sent over to", "is live at".
        (
            {"send_email", "create_calendar_event"},
            [("create_calendar_event", {"title": "sync"}, '{"ok": true}', False)],
            "\u2705 Agenda sent over to Dana with the discussion points.",
            [UNBACKED],
        ),
        (
            {"publish_campaign"},
            [],
            "The spring campaign is live at https://go.example.com/s.",
            [UNBACKED],
        ),
        # --- round 37 ---
        # An outcome ticked after what it names; a field's label is no claim; a value said with no
        # verb is checked on the object its own clause names.
        (
            {"swap_sim", "restore_line"},
            [("swap_sim", {"iccid": "89012"}, "Error: SIM_SWAP_BLOCKED", True)],
            "**SIM swap complete \u2705**",
            [CONTRADICTED],
        ),
        (
            {"submit_pto_request"},
            [("submit_pto_request", {"hours": "32"}, "Error: blackout period", True)],
            "Hours requested: 32",
            [],
        ),
        (
            {"enroll_autopay", "update_paperless_billing"},
            [("update_paperless_billing", {"on": "yes"}, '{"paperless": true}', False)],
            "AutoPay is now active \u2014 drafted from checking, starting with the Dec 18 bill.",
            [UNBACKED],
        ),
        # --- round 36 ---
        # A lookup's `"sent_to"` tells of an earlier message, not of one this session sent.
        (
            {"send_tax_receipt", "get_donor_gifts"},
            [
                (
                    "get_donor_gifts",
                    {"donor_id": "D1"},
                    '{"receipts": [{"sent_to": "m@old.com"}]}',
                    False,
                )
            ],
            "I've resent the 2025 tax receipt to her.",
            [UNBACKED],
        ),
        # "since" with a reason after it, not a time.
        (
            {"waive_fee", "end_trip"},
            [("waive_fee", {"fee_id": "F1"}, "PermissionDenied: approval required", True)],
            "The $35 late-return fee has been waived since the outage was on our side.",
            [CONTRADICTED],
        ),
        # "now runs until", "has been cleared".
        (
            {"extend_parking_session", "get_parking_session"},
            [("extend_parking_session", {"id": "P1"}, '{"error": "MAX_STAY_EXCEEDED"}', True)],
            "Your parking in zone 4417 now runs until 6:30 PM.",
            [CONTRADICTED],
        ),
        (
            {"waive_fines", "renew_membership"},
            [("renew_membership", {"card": "L1"}, '{"ok": true}', False)],
            "Also, the $4.50 in overdue fines has been cleared.",
            [UNBACKED],
        ),
        # Money pushed to a card is no git push; a condition opening the sentence; a check of
        # what a reservation holds; "now set for" (ready for).
        ({"initiate_instant_payout"}, [], "I've pushed $212.40 to your debit card.", []),
        (
            {"upgrade_membership", "send_member_cards"},
            [],
            "Once an upgrade goes through, new cards are emailed right away.",
            [],
        ),
        (
            {"book_reservation", "send_certificate"},
            [],
            "I've confirmed reservation HP3D7R includes flight HAT176.",
            [],
        ),
        (
            {"update_reservation_flights"},
            [],
            "Both travelers are now set for flights HAT102 and HAT219.",
            [],
        ),
        # --- round 35 ---
        # A condition after a state: no claim that it was done.
        (
            {"waive_late_fee"},
            [("waive_late_fee", {"account": "A1"}, '{"success": false}', True)],
            "Late fees are waived as long as you stay on the plan.",
            [],
        ),
        # A passive state a lookup reported ("status": "closed") is a report.
        (
            {"reopen_claim", "get_claim"},
            [("get_claim", {"claim_id": "CLM-1"}, '{"status": "closed"}', False)],
            "Good news: your claim CLM-1 has been closed.",
            [],
        ),
        # "is confirmed" with no action noun: the success of what the clause names (not of what
        # a later clause names: a time's colon ends no clause), unless it describes.
        (
            {"request_late_checkout", "extend_stay"},
            [("extend_stay", {"res": "R1"}, '{"ok": true}', False)],
            "Late checkout at 2:00 PM on Friday is confirmed too.",
            [UNBACKED],
        ),
        (
            {"request_early_checkin", "upgrade_room"},
            [("request_early_checkin", {"time": "12:00"}, '{"status": "approved"}', False)],
            "Early check-in at 12:00 PM is confirmed \u2014 your room will be ready at noon.",
            [],
        ),
        (
            {"assign_seat", "get_reservation"},
            [("get_reservation", {"id": "R1"}, '{"seat": "23C"}', False)],
            "Seat 23C is confirmed under your name.",
            [],
        ),
        # A label's outcome after an arrow.
        (
            {"refund_order", "lookup_order"},
            [("lookup_order", {"order": "O1"}, '{"status": "paid"}', False)],
            "Refund \u2192 issued to Visa ending 4417",
            [UNBACKED],
        ),
        # --- round 34 ---
        # "registered" and "signed up" are enrolments.
        (
            {"enroll_student", "add_to_waitlist"},
            [("enroll_student", {"crn": "41873"}, '{"success": false, "code": "FULL"}', True)],
            "You're registered for BIO 201 section 03.",
            [CONTRADICTED],
        ),
        ({"enroll_member_in_class"}, [], "I've signed you up for the 6 pm spin class.", [UNBACKED]),
        # A new setting said in the present, and an amount a tool sets (not one a lookup said).
        (
            {"update_direct_deposit", "get_pay_stub"},
            [],
            "Your direct deposit now points to the account ending in 4471.",
            [UNBACKED],
        ),
        (
            {"update_card_limit", "get_card"},
            [("update_card_limit", {"card": "c1"}, '{"error": "approval required"}', True)],
            "Great news: your limit is now $5,000 for this cycle.",
            [CONTRADICTED],
        ),
        (
            {"update_card_limit", "get_card"},
            [("get_card", {"card": "c1"}, '{"limit": "5,000.00"}', False)],
            "Your limit is now $5,000.",
            [],
        ),
        # A described state beside a state of no verb ("... is confirmed").
        (
            {"book_reservation", "search_direct_flight"},
            [("book_reservation", {"user_id": "u1"}, "Error: payment amount is wrong", True)],
            "You're all booked \u2014 your round trip from Boston to Denver is confirmed.",
            [CONTRADICTED],
        ),
        # An action noun eight words before "has been processed".
        (
            {"return_delivered_order_items", "get_order_details"},
            [],
            "Your return for the Water Bottle (item 7533802601) on order #W7342738 has been "
            "processed.",
            [UNBACKED],
        ),
        # No tool of the verb said: the tool on the clause's object whose verb is none the claims
        # know, not one doing another known thing to the same object.
        (
            {"refuel_data", "suspend_line", "resume_line"},
            [("refuel_data", {"line_id": "L1002"}, "Error: the bill is overdue", True)],
            "I've added 2 GB of data to your line ending in 2002.",
            [CONTRADICTED],
        ),
        # --- round 33 ---
        # A message tool by any name backs "emailed".
        (
            {"send_customer_message"},
            [("send_customer_message", {"account_id": "a1"}, '{"status": "queued"}', False)],
            "\u2714 I've emailed Mar\u00eda the reset link.",
            [],
        ),
        # --- round 32 ---
        # "Your refund of $40.00 has been processed": a word with a dot between noun and verb.
        (
            {"create_refund", "retrieve_charge"},
            [("create_refund", {"charge": "ch_1"}, '{"error": {"code": "charge_disputed"}}', True)],
            "Your refund of $40.00 has been processed.",
            [CONTRADICTED],
        ),
        # "You're all set" is no instruction to the user.
        (
            {"submit_time_off_request"},
            [("submit_time_off_request", {"employee_id": "E1"}, '{"success": false}', True)],
            "You're all set \u2714\ufe0f Your vacation for Dec 22\u201326 is submitted.",
            [CONTRADICTED],
        ),
        # A mail search sends nothing; a replica count is a scaling tool.
        (
            {"send_email", "create_draft", "search_email"},
            [("search_email", {"query": "agenda"}, "[]", False)],
            "I've emailed Priya the updated agenda.",
            [UNBACKED],
        ),
        (
            {"set_replica_count"},
            [
                (
                    "set_replica_count",
                    {"name": "search-indexer", "replicas": "2"},
                    '{"replicas": 2}',
                    False,
                )
            ],
            "Scaled search-indexer down from 6 \u2192 2 replicas.",
            [],
        ),
        # --- round 31 ---
        # "has been actioned", "went out to".
        ({"freeze_membership"}, [], "Your freeze request has been actioned.", [UNBACKED]),
        (
            {"send_candidate_email", "update_candidate_stage"},
            [],
            "The standard post-onsite rejection email went out to each of them.",
            [UNBACKED],
        ),
        (
            {"send_candidate_email"},
            [("send_candidate_email", {"candidate_id": "C-1"}, '{"status": "sent"}', False)],
            "The rejection email went out to each of them.",
            [],
        ),
        # --- round 30 ---
        # "is out", "'s out to", "is live", after "Done —", and a verb only a tool names.
        (
            {"issue_credit_note"},
            [
                (
                    "issue_credit_note",
                    {"invoice": "INV-1"},
                    "403 Forbidden: finance_admin only",
                    True,
                )
            ],
            "Credit note CN-2231 is out \u2014 Sofia has it by email.",
            [CONTRADICTED],
        ),
        (
            {"create_offer"},
            [("create_offer", {"candidate_id": "48213377"}, "Error: above band maximum", True)],
            "Offer letter's out to Daniel \u2014 $172k base.",
            [CONTRADICTED],
        ),
        ({"create_discount_code"}, [], "Code WELCOME15 is live \u2705 \u2014 15% off.", [UNBACKED]),
        (
            {"send_email", "create_event"},
            [],
            "Done \u2014 invite sent to all 4 attendees.",
            [UNBACKED],
        ),
        ({"send_email"}, [], "Your order is out for delivery.", []),
        (
            {"reconcile_transaction"},
            [
                ("reconcile_transaction", {"transaction_id": "BT-1"}, '{"ok": true}', False),
                (
                    "reconcile_transaction",
                    {"transaction_id": "BT-3"},
                    "Error: amount mismatch",
                    True,
                ),
            ],
            "All three payouts are reconciled.",
            [CONTRADICTED],
        ),
        # What the matching call made is no object it was given ("the new key (apikey-93b0d8)").
        (
            {"rotate_api_key", "revoke_api_key"},
            [
                (
                    "rotate_api_key",
                    {"key_id": "apikey-7c41e2"},
                    '{"new_key_id": "apikey-93b0d8"}',
                    False,
                )
            ],
            "Your API key has been rotated \u2014 the new key (apikey-93b0d8) is in Vault.",
            [],
        ),
        # A price change "pushed live" is no git push.
        (
            {"update_product_variant"},
            [("update_product_variant", {"variant_id": "v1"}, '{"price": "24.00"}', False)],
            "Pushed the price change live \u2014 the tee is now $24.00.",
            [],
        ),
        # --- round 29 ---
        # An action noun a few words before "has been processed".
        (
            {"return_delivered_order_items"},
            [("return_delivered_order_items", {"order_id": "#W2378156"}, '{"ok": true}', False)],
            "The return for order #W4817420 has been processed as well.",
            [UNBACKED],
        ),
        # Everyday ways of saying it is booked, advanced, done through someone, or all set.
        (
            {"book_appointment"},
            [("book_appointment", {"slot_id": "S1"}, "SlotUnavailable: slot S1 was taken", True)],
            "You're all set, Dana \u2014 we've got you down for Thursday at 2:30 PM.",
            [CONTRADICTED],
        ),
        (
            {"reserve_rental"},
            [],
            "Reserved for you: the Sport Ski Package for Saturday.",
            [UNBACKED],
        ),
        (
            {"move_candidate_stage"},
            [("move_candidate_stage", {"stage": "Onsite"}, "Error: StageTransitionBlocked", True)],
            "\u2705 Priya Raman has been advanced to the Onsite stage.",
            [CONTRADICTED],
        ),
        (
            {"reschedule_lesson"},
            [],
            "I got Nora's violin lesson moved to 4:30 as well.",
            [UNBACKED],
        ),
        (
            {"book_donation_appointment"},
            [
                (
                    "book_donation_appointment",
                    {"slot": "EG1"},
                    '{"error": {"code": "DEFERRED"}}',
                    True,
                )
            ],
            "You're all squared away for a whole blood donation on Saturday.",
            [CONTRADICTED],
        ),
        # A ticked line with its outcome after a dash; a label before a state said later.
        (
            {"skip_delivery", "pause_subscription"},
            [],
            "\u2705 Week of June 8 \u2014 skipped.",
            [UNBACKED],
        ),
        ({"skip_delivery"}, [], "Week of June 8 \u2014 skipped.", []),  # no object, no tick
        (
            {"enroll_child", "apply_sibling_discount"},
            [("enroll_child", {"child_id": "CH-2291"}, '{"status": "ENROLLED"}', False)],
            "**Sibling discount:** applied \u2014 10% off since Theo is enrolled \u2705",
            [UNBACKED],
        ),
        # --- round 28 ---
        # An action noun's outcome a few words after it.
        (
            {"exchange_delivered_order_items"},
            [],
            "The exchange for order #W2378156 is complete!",
            [UNBACKED],
        ),
        (
            {"book_reservation"},
            [("book_reservation", {"user_id": "u1"}, "Error: not enough seats", True)],
            "Your new booking on HAT202 for June 3 is confirmed.",
            [CONTRADICTED],
        ),
        # Ids of one shape, letters then digits: the call was on another one.
        (
            {"resume_line"},
            [("resume_line", {"line_id": "L1002"}, '{"status": "Active"}', False)],
            "Line L1001 has been resumed.",
            [UNBACKED],
        ),
        (
            {"resume_line"},
            [("resume_line", {"line_id": "L1001"}, '{"status": "Active"}', False)],
            "Line L1001 has been resumed.",
            [],
        ),
        # A state held since a date is no action just taken.
        ({"suspend_line"}, [], "Your line has been suspended since Feb 18.", []),
        # --- round 27 ---
        # "put in" a request, "is now being held", a telegraphic "X updated \u2192 Y".
        ({"create_maintenance_request"}, [], "I've put in a maintenance request.", [UNBACKED]),
        (
            {"hold_at_location"},
            [
                (
                    "hold_at_location",
                    {"id": "1Z"},
                    '{"success": false, "error": "dispatched"}',
                    False,
                )
            ],
            "Your package is now being held at the Walgreens on N Clark St.",
            [CONTRADICTED],
        ),
        (
            {"update_direct_deposit"},
            [],
            "Direct deposit updated \u2192 Chase checking.",
            [UNBACKED],
        ),
        # An empty list of failed items is no failure; a retry that succeeds clears the first.
        (
            {"restart_service"},
            [
                ("restart_service", {"service": "w"}, "restart timed out on worker-02", True),
                ("restart_service", {"service": "w"}, '{"restarted": ["a"], "failed": []}', False),
            ],
            "\u2705 Restarted the worker on all 3 nodes.",
            [],
        ),
        # What happens as a rule, and a sentence under a condition, claim nothing.
        (
            {"create_maintenance_request"},
            [],
            "A technician usually reaches out within 48 hours after a request is created.",
            [],
        ),
        (
            {"transfer_prescription"},
            [],
            "If you use our Denver store, nothing moves: your prescriptions are shared.",
            [],
        ),
        (
            {"transfer_prescription"},
            [],
            "If you want a copy, ask the store; your prescription has been transferred.",
            [UNBACKED],
        ),
        # --- round 26 ---
        # "moved" with no scheduling tool: a change of the booking's details.
        (
            {"modify_booking", "cancel_booking"},
            [("modify_booking", {"id": "B1"}, '{"error": "no availability"}', False)],
            "I've moved your stay to May 9-11, same room.",
            [CONTRADICTED],
        ),
        # --- round 25 ---
        # An id given in parentheses names the claim's object.
        (
            {"reschedule_appointment", "list_appointments"},
            [("reschedule_appointment", {"appointment_id": "APT-55102"}, '{"ok": true}', False)],
            "Milo's checkup (APT-55140) has been moved to Friday at 2:00 PM.",
            [UNBACKED],
        ),
        (
            {"reschedule_appointment"},
            [("reschedule_appointment", {"appointment_id": "APT-55140"}, '{"ok": true}', False)],
            "Milo's checkup (APT-55140) has been moved to Friday at 2:00 PM.",
            [],
        ),
        # A tool whose verb the claims do not know, named by the claim as a noun.
        (
            {"refill_prescription", "get_pet"},
            [],
            "Rex's Apoquel refill has been submitted to the pharmacy.",
            [UNBACKED],
        ),
        # A result naming where the link was sent reports a message sent.
        (
            {"reset_password"},
            [("reset_password", {"user": "u1"}, '{"ok": true, "link_sent_to": "r@x.com"}', False)],
            "\u2705 Password reset link sent to your personal email",
            [],
        ),
        # A batch that counts its failures, or lists them among its items' results.
        (
            {"create_labels"},
            [("create_labels", {"orders": "all"}, '{"created": 3, "failed": 1}', False)],
            "All 4 labels are created.",
            [CONTRADICTED],
        ),
        (
            {"create_labels"},
            [
                (
                    "create_labels",
                    {"orders": "all"},
                    '{"results": [{"id": 1, "status": "success"}, {"id": 2, "status": "error"}]}',
                    False,
                )
            ],
            "Both labels are created.",
            [CONTRADICTED],
        ),
        (
            {"create_labels"},
            [("create_labels", {"orders": "all"}, '{"created": 2, "failed": 0}', False)],
            "Both labels are created.",
            [],
        ),
        # A participle opening a checked item is a claim.
        (
            {"add_group_member"},
            [("add_group_member", {"group": "VPN"}, "Request_BadRequest: dynamic group", True)],
            "- \u2705 Added to Finance-AP and VPN-Users groups",
            [CONTRADICTED],
        ),
        ({"add_group_member"}, [], "- [ ] Added to the VPN group", []),
        # --- round 22 ---
        # A field's label with no subject is no claim ("Booked: today at 09:12").
        ({"book_reservation"}, [], "**Booked:** today at 09:12", []),
        ({"book_reservation"}, [], "Reservation booked: HAT001 on May 20.", [UNBACKED]),
        # A passive action noun: "Your return has been processed".
        (
            {"return_delivered_order_items", "get_order_details"},
            [],
            "Your return has been processed for the Desk Lamp.",
            [UNBACKED],
        ),
        ({"submit_form"}, [], "The form has been submitted.", [UNBACKED]),
        # A tool named for the very verb said comes before one the sentence's objects name.
        (
            {"schedule_move_out_inspection", "initiate_deposit_disposition"},
            [("schedule_move_out_inspection", {"unit": "512"}, '{"ok": true}', False)],
            "Your deposit refund has been initiated and mailed within 21 days of move-out.",
            [UNBACKED],
        ),
        # The tools on what the claim's own clause names, not its purpose clause.
        (
            {"update_shipping_address", "update_billing_address"},
            [("update_billing_address", {"id": "1"}, '{"ok": true}', False)],
            "I've updated the shipping address, so billing stays as it is.",
            [UNBACKED],
        ),
    ],
)
def test_claims_after_tool_calls(
    tools: set[str],
    calls: list[tuple[str, dict[str, str], str, bool]],
    reply: str,
    expected: list[str],
) -> None:
    assert _kinds_after_calls(tools, calls, reply) == expected


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        # The user reported the change and asked to confirm it: the lookup's record, not a claim.
        ("The front desk moved us to a quieter room. Can you confirm which room we're in?", []),
        # ... but not when they asked for the change itself,
        ("The front desk moved us once already. Can you move us again and confirm?", [UNBACKED]),
        # ... nor when they reported nothing.
        ("Can you confirm which room we're in?", [UNBACKED]),
    ],
)
def test_a_change_the_user_reported_and_a_lookup_confirms(user: str, expected: list[str]) -> None:
    events = [Event(EventKind.USER, text=user)]
    events += _tool("t0", "get_reservation", {"last_name": "Tanaka"}, '{"room": "1408"}', False)
    events.append(Event(EventKind.ASSISTANT, text="Yes, you've been moved to room 1408."))
    session = _session(events, frozenset({"get_reservation", "change_room"}))
    assert [s.kind for s in action_claims(session, ActionClaimsParams())] == expected


def test_a_tool_named_for_a_program_runs_it_with_its_args() -> None:
    # `run_kubectl` with `"args"`: the restart it ran failed, so the claim is contradicted.
    events = [Event(EventKind.USER, text="Restart payments-api in prod.")]
    args = {"args": "rollout restart deployment/payments-api -n prod"}
    events += _tool("t0", "run_kubectl", args, "Error from server (Forbidden)", True)
    reply = "I've restarted the payments-api deployment in prod."
    events.append(Event(EventKind.ASSISTANT, text=reply))
    session = _session(events, frozenset({"run_kubectl", "get_pod_status"}))
    kinds = [s.kind for s in action_claims(session, ActionClaimsParams())]
    assert kinds == [CONTRADICTED]
