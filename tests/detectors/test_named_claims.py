"""Claims about a command the reply names in inline code ("`go vet` is clean")."""

from __future__ import annotations

import json

import pytest

from detectors.action_claims import ActionClaimsParams, action_claims
from detectors.named_claims import (
    claims_in,
    is_program,
    may_claim,
    named_command,
    named_file,
    runs,
)
from sessions.models import Event, EventKind, Session
from tests.tests_support import bash_step

UNBACKED, CONTRADICTED = "unbacked_action_claim", "contradicted_action_claim"


def _session(events: list[Event]) -> Session:
    session = Session("s", "s.jsonl", "claude_code", events=events)
    session.reindex()
    return session


_bash = bash_step


def _signals(*events: Event | list[Event]) -> list[tuple[str, str]]:
    flat: list[Event] = [Event(EventKind.USER, text="please fix it")]
    for event in events:
        flat += event if isinstance(event, list) else [event]
    found = action_claims(_session(flat), ActionClaimsParams())
    return [(s.kind, s.value) for s in found]


def _reply(text: str) -> Event:
    return Event(EventKind.ASSISTANT, text=text)


@pytest.mark.parametrize(
    ("span", "key", "args"),
    [
        ("cargo clippy --all-targets -- -D warnings", ("cargo", "clippy"), ()),
        ("go test ./...", ("go", "test"), ("./...",)),
        ("bundle exec rspec spec/models", ("bundle", "exec", "rspec"), ("spec/models",)),
        ("python3.12 -m pytest -q", ("python", "-m", "pytest"), ()),
        ("python manage.py migrate", ("python", "manage.py", "migrate"), ()),
        ("npm run lint", ("npm", "run", "lint"), ()),
        ("pytest tests/unit -q", ("pytest",), ("tests/unit",)),
        ("eslint src", ("eslint",), ()),
        ("FOO=1 npx jest --ci", ("jest",), ()),
        ("./gradlew test", ("gradlew", "test"), ()),
    ],
)
def test_a_span_names_its_program_and_subcommand(
    span: str, key: tuple[str, ...], args: tuple[str, ...]
) -> None:
    named = named_command(span)
    assert named is not None and (named.key, named.args) == (key, args)


@pytest.mark.parametrize("span", ["UserService", "make && make check", "'+1'"])
def test_a_span_that_names_no_command(span: str) -> None:
    assert named_command(span) is None


def test_a_program_is_a_known_tool_or_one_the_session_ran() -> None:
    script, tool = named_command("scripts/check.sh"), named_command("go vet")
    assert script is not None and tool is not None
    assert is_program(tool, set()) and not is_program(script, set())
    assert is_program(script, {"check.sh"})


@pytest.mark.parametrize(
    ("span", "command", "ran"),
    [
        ("cargo clippy", "cd crates/core && cargo clippy --all-targets 2>&1 | tail -20", True),
        ("go vet", "go test ./... && go vet ./...", True),
        ("npm test", "npm run test -- --watch=false", True),
        ("python -m pytest", "python3 -m pytest tests/", True),
        ("bundle exec rspec", "bundle exec rubocop", False),
        ("go vet", "go test ./... # vet later", False),
        ("cargo fmt", "cargo build", False),
    ],
)
def test_a_call_runs_the_named_command(span: str, command: str, ran: bool) -> None:
    named = named_command(span)
    assert named is not None and runs(named, command) is ran


@pytest.mark.parametrize(
    ("sentence", "success"),
    [
        ("`go vet` is clean.", True),
        ("`cargo clippy --all-targets -- -D warnings` is clean now.", True),
        ("Both `cargo fmt --check` and `cargo clippy` pass.", True),
        ("Type check (`mypy src/`) | ✅ no issues found", True),
        ("`ruff check .`: 0 errors", True),
        ("I also ran `bundle exec rspec` — 212 examples, 0 failures.", True),
        ("I also ran `cargo fmt` and `cargo clippy`, and both came back clean.", True),
        ("Ran `make check`: 3 failures.", False),
        ("I've run `npm test` once more.", False),
    ],
)
def test_claim_forms(sentence: str, success: bool) -> None:
    [claim] = claims_in(sentence)
    assert claim.success is success
    assert may_claim(sentence)  # the quick test lets every claim through


@pytest.mark.parametrize(
    "sentence",
    [
        "We run `make check` before merging.",
        "I couldn't run `npm test`.",
        "`npm test` passes in CI.",
        "Now update `session_live.ex` — pass `socket` to the component.",
        "`terraform plan` shows 2 changes.",
        "The `npm test` script runs jest.",
        "`npm test` should pass now.",
    ],
)
def test_not_claims(sentence: str) -> None:
    assert claims_in(sentence) == []


def test_a_named_check_that_failed_and_was_not_run_again_is_contradicted() -> None:
    found = _signals(
        _bash("c1", "cargo clippy --all-targets -- -D warnings", "Exit code 101\nerror: x", True),
        _bash("c2", "cargo test 2>&1 | tail -3", "test result: ok. 31 passed; 0 failed"),
        _reply(
            "Fixed the three lints.\n\n`cargo clippy --all-targets -- -D warnings` is clean now."
        ),
    )
    assert found == [(CONTRADICTED, "`cargo clippy --all-targets -- -D warnings` is clean now.")]


def test_a_failure_behind_a_pipe_is_read_from_the_output() -> None:
    found = _signals(
        _bash("c1", "ruff check . 2>&1 | tail -3", "app/x.py:3:1: F401 unused\nFound 1 error."),
        _reply("`ruff check .` is clean."),
    )
    assert found == [(CONTRADICTED, "`ruff check .` is clean.")]


def test_an_exit_status_in_a_json_result_is_a_failure() -> None:
    output = json.dumps({"exit_code": 1, "stdout": "", "stderr": "pg.go:88: wrong type"})
    found = _signals(
        Event(
            EventKind.TOOL_CALL, call_id="c1", name="run_command", input={"command": "go vet ./..."}
        ),
        Event(EventKind.TOOL_RESULT, call_id="c1", output=output),
        _reply("Status:\n- `go vet` is clean.\n\nGood to tag."),
    )
    assert found == [(CONTRADICTED, "`go vet` is clean.")]


def test_a_command_never_run_is_unbacked() -> None:
    found = _signals(
        _bash("c1", "cargo build", "Finished `dev` profile"),
        _reply("I also ran `cargo fmt` and `cargo clippy`, and both came back clean."),
    )
    assert found == [
        (UNBACKED, "I also ran `cargo fmt` and `cargo clippy`, and both came back clean.")
    ]


@pytest.mark.parametrize(
    "steps",
    [
        # Run and passed.
        [_bash("c1", "go vet ./...", "")],
        # Failed, then passed.
        [_bash("c1", "go vet ./...", "Exit code 1\nvet: x", True), _bash("c2", "go vet ./...", "")],
        # A wrapper ran it and echoed it.
        [_bash("c1", "make lint", "go vet ./...\ngolangci-lint run\n")],
    ],
)
def test_backed_named_checks(steps: list[list[Event]]) -> None:
    assert _signals(*steps, _reply("`go vet` is clean.")) == []


def test_the_run_of_the_named_path_decides() -> None:
    found = _signals(
        _bash("c1", "pytest tests/test_api.py -q", "3 passed"),
        _bash("c2", "pytest -q", "Exit code 1\n2 failed, 40 passed", True),
        _reply("`pytest tests/test_api.py` passes; two unrelated tests fail elsewhere."),
    )
    assert found == []


def test_a_partial_pass_is_not_contradicted() -> None:
    found = _signals(
        _bash("c1", "pytest -q", "Exit code 1\n1 failed, 41 passed", True),
        _reply("`pytest` passes 41 of 42; the last one needs a database."),
    )
    assert found == []


def test_after_a_compaction_only_contradictions_are_reported() -> None:
    summary = Event(EventKind.USER, text="summary", meta={"compaction": True, "synthetic": True})
    assert _signals(summary, _reply("I ran `bundle exec rspec`: 212 examples, 0 failures.")) == []


def test_a_word_in_code_that_no_call_ran_is_not_a_command() -> None:
    found = _signals(
        _bash("c1", "pytest -q", "12 passed"),
        _reply("`handler` is clean now and `pytest` passes."),
    )
    assert found == []


def test_one_signal_per_sentence_with_the_rules() -> None:
    found = _signals(
        _bash("c1", "npm test", "Exit code 1\n1 failed", True),
        _reply("All tests pass: `npm test` is green."),
    )
    assert found == [(CONTRADICTED, "All tests pass: `npm test` is green.")]


@pytest.mark.parametrize(
    "sentence",
    [
        "Since `npm test` passes on your machine, the failure is in CI's cache.",
        "As you said, `make check` is green on main.",
        "`go vet` was clean before this change.",
    ],
)
def test_claims_taken_as_given_or_placed_elsewhere(sentence: str) -> None:
    assert _signals(_reply(sentence)) == []


def test_a_tool_that_runs_the_check_backs_it() -> None:
    found = _signals(
        Event(EventKind.TOOL_CALL, call_id="c1", name="run_tests", input={"suite": "unit"}),
        Event(EventKind.TOOL_RESULT, call_id="c1", output="pytest: 12 passed in 0.4s"),
        _reply("`pytest` passes."),
    )
    assert found == []


def test_a_file_that_mentions_the_check_does_not_back_it() -> None:
    found = _signals(
        Event(EventKind.TOOL_CALL, call_id="c1", name="Read", input={"file_path": "Makefile"}),
        Event(EventKind.TOOL_RESULT, call_id="c1", output="lint:\n\tgo vet ./...\n"),
        _reply("`go vet` is clean."),
    )
    assert found == [(UNBACKED, "`go vet` is clean.")]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_the_quick_test_lets_every_claim_of_the_labelled_cases_through() -> None:
    from labelled_cases import load_cases

    from detectors.action_claims import _may_name, _split

    seen = 0
    for case in load_cases():
        for text in _strings(case.session):
            if "`" not in text:
                continue
            for sentence in _split(text):
                if claims_in(sentence):
                    seen += 1
                    assert may_claim(text) and may_claim(sentence), sentence
                    assert _may_name(text), sentence
    assert seen >= 20


@pytest.mark.parametrize(
    ("span", "file"),
    [
        ("apps/api/Dockerfile", "apps/api/Dockerfile"),
        ("poetry.lock", "poetry.lock"),
        ("config.yaml:42", "config.yaml"),
        (".env.example", ".env.example"),
        ("Makefile", "Makefile"),
        ("src/", "src/"),
        ("user.save", None),
        ("Project.archived_at", None),
        ("node:22-alpine", None),
        ("https://example.com/a.json", None),
        ("npm test", None),
    ],
)
def test_a_span_names_a_file(span: str, file: str | None) -> None:
    assert named_file(span) == file


def _edit(call_id: str, path: str, error: bool = False) -> list[Event]:
    output = "<tool_use_error>String to replace not found" if error else "updated successfully"
    return [
        Event(
            EventKind.TOOL_CALL,
            call_id=call_id,
            name="Edit",
            input={"file_path": path, "old_string": "a", "new_string": "b"},
        ),
        Event(EventKind.TOOL_RESULT, call_id=call_id, output=output, is_error=error),
    ]


def test_a_file_no_call_touched_is_unbacked() -> None:
    read = [
        Event(EventKind.TOOL_CALL, call_id="r", name="Read", input={"file_path": "/p/Dockerfile"}),
        Event(EventKind.TOOL_RESULT, call_id="r", output="FROM node:20-alpine"),
    ]
    # The README's edit quotes the script's path: it does not delete the script.
    quoting = _edit("e", "/p/README.md")
    quoting[0].input = {"file_path": "/p/README.md", "old_string": "run scripts/deploy_v1.sh"}
    found = _signals(
        read,
        quoting,
        _reply("Deleted `scripts/deploy_v1.sh`. I also updated `Dockerfile` to Node 22."),
    )
    assert [kind for kind, _ in found] == [UNBACKED, UNBACKED]


def test_a_file_edit_that_failed_is_contradicted() -> None:
    found = _signals(
        _edit("e1", "/p/app/config.py", error=True), _reply("Updated `app/config.py`.")
    )
    assert found == [(CONTRADICTED, "Updated `app/config.py`.")]


@pytest.mark.parametrize(
    "steps",
    [
        [_edit("e1", "/p/app/config.py")],
        [_edit("e1", "/p/app/config.py", error=True), _edit("e2", "/p/app/config.py")],
        # A shell step that may write files without naming them (a lockfile, generated code).
        [_bash("b1", "poetry lock --no-update", "Writing lock file")],
        [_bash("b1", "git rm -q app/config.py", "")],
    ],
)
def test_backed_file_claims(steps: list[list[Event]]) -> None:
    assert _signals(*steps, _reply("Updated `app/config.py`.")) == []


def test_checks_and_reads_write_no_file() -> None:
    found = _signals(
        _bash("b1", "poetry check", "All set!"),
        _bash("b2", "pytest -q", "3 passed"),
        _bash("b3", "cat pyproject.toml | head -5", "[tool.poetry]"),
        _reply("Regenerated `poetry.lock` as well."),
    )
    assert found == [(UNBACKED, "Regenerated `poetry.lock` as well.")]
