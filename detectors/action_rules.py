"""The rule pack of ``action_claims``: what a completion claim looks like and what backs it.

A ``Rule`` pairs a claim pattern (over a reply sentence, code and quotes already stripped) with
the evidence that backs it: tool names and/or a pattern over a shell command, and what a failed
result looks like. ``DEFAULT_RULES`` covers tests, git and deploys; ``derive_tool_rules`` turns an
agent's own domain tools (``cancel_reservation``, ``refund_payment``) into checks without any
configuration, by matching the verb and object stems of tool names against state-change claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from detectors.entities import scan
from detectors.params import Rule

_I = re.IGNORECASE


@dataclass(frozen=True)
class CompiledRule:
    """A rule with its regexes compiled once (rules are reused across a night's sessions)."""

    rule: Rule
    claim: re.Pattern[str]
    tools: tuple[re.Pattern[str], ...]
    commands: re.Pattern[str] | None
    failure: re.Pattern[str] | None
    weak_commands: re.Pattern[str] | None
    weak_evidence: re.Pattern[str] | None = None
    already_done: re.Pattern[str] | None = None
    tool_names: tuple[str, ...] = ()  # derived rules: the tools the claim maps to, for messages

    @classmethod
    def of(cls, rule: Rule, tool_names: tuple[str, ...] = ()) -> CompiledRule:
        def opt(pattern: str | None) -> re.Pattern[str] | None:
            return re.compile(pattern, _I) if pattern else None

        return cls(
            rule,
            re.compile(rule.claim, _I),
            tuple(re.compile(p, _I) for p in rule.tools),
            opt(rule.commands),
            re.compile(rule.failure, _I | re.M) if rule.failure else None,
            opt(rule.weak_commands),
            re.compile(rule.weak_evidence, _I | re.M) if rule.weak_evidence else None,
            opt(rule.already_done),
            tool_names,
        )

    @property
    def name(self) -> str:
        return self.rule.name


# --- the default pack --------------------------------------------------------------------------

_SHELL_TOOLS = [r"^(?:Bash|bash|shell|local_shell|terminal|run_command|execute_command|exec)$"]

# A shell command that only reads: read-only programs (`cd` first, pipes and `&&` between), no
# redirection into a file, no `find -delete`/`-exec`.
_READER = (
    r"(?:grep|egrep|fgrep|rg|ag|ack|cat|bat|less|more|head|tail|ls|ll|find|fd|tree|wc|stat|file|du|"
    r"df|pwd|which|type|whereis|echo|printf|diff|cmp|jq|sort|uniq|cut|tr|column|nl|xxd|od|"
    r"hexdump|strings|realpath|dirname|basename|env|printenv|date|git\s+(?:status|log|diff|show|"
    r"branch(?![^;&|>\n]*\s-(?:[dDmMcC]\b|-delete\b|-move\b|-copy\b))|blame|grep|ls-files|rev-parse"
    r"|remote\s+-v)|sed\s+-n\b(?![^;&|>\n]*\s-(?:i|-in-place)\b)|awk|journalctl|ps|whoami|uname|"
    r"hostname|systemctl\s+(?:status|is-active|is-enabled|show|list-units|cat))"
)
# Its arguments: anything but a step's end or a redirection, and quoted text whole (a grep
# pattern `'a\\|b'` holds a `|` that is no pipe); `sudo` may come first.
_READ_STEP = (
    rf"\s*(?:sudo\s+)?{_READER}\b(?![^;&|>]*\s-(?:delete|exec)\b)"
    r"(?:[^;&|>'\"]|'[^'\n]*'|\"[^\"\n]*\")*"
)
READ_ONLY_COMMAND = rf"(?:\s*cd\s+[^;&|>]*&&)?{_READ_STEP}(?:(?:\|\|?|&&|;){_READ_STEP})*"

# A project's own gate as a script (`./scripts/ci.sh`, `bin/check`, `script/test`, `verify.sh`):
# a path or a `.sh`, never the shell's `test` builtin.
_GATE_NAMES = r"(?:ci|check|checks|verify|validate{})"
_SCRIPT = r"|(?:^|[\s;&|(])(?:(?:\.{{1,2}}/|[\w.-]+/)+{0}(?:\.sh)?|{0}\.sh)(?=$|[\s;&|)])"
# (... and a script named for tests: `./scripts/test-unit.sh`, `bin/run-tests`, `e2e_test.sh`.)
_GATE_SCRIPT = _SCRIPT.format(
    _GATE_NAMES.format("|tests?|run[-_]tests|tests?[-_][\\w-]+|[\\w-]+[-_]tests?")
)
_CHECK_SCRIPT = _SCRIPT.format(_GATE_NAMES.format(""))
# A package manager's flags and workspace selectors before its script (`pnpm -w test`,
# `pnpm --filter web typecheck`, `yarn workspace api lint`), then the script (maybe after `run`).
_PM_SCRIPT = (
    r"\b(?:npm|yarn|pnpm|bun)(?:@[\w.-]+)?\s+"
    r"(?:(?:-{1,2}(?:filter|prefix|dir|cwd|workspace)[= ]\S+|-[FC]\s+\S+"
    r"|-{1,2}[\w-]+|workspace\s+\S+)\s+)*(?:run\s+)?"
)
TEST_COMMANDS = (
    r"(?:^|[\s;&|(/'\"])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|karma|phpunit|rspec|ctest|"
    r"nextest|exunit)\b"
    r"|\bpython[\d.]*\s+(?:-\w+\s+)*-m\s+(?:pytest|unittest|nose2?|tox|nox)\b"
    # Flags and workspace selectors may come first (`pnpm -w test`, `pnpm --filter web test`).
    # A pinned runner too (`npx -y pnpm@9.12.3 test`).
    "|" + _PM_SCRIPT + r"(?:test|t)\b"
    # A project's own gate (`npm run ci`, `pnpm verify`), as `make ci` and `just ci` are.
    "|"
    + _PM_SCRIPT
    + r"(?:ci|check|verify|validate)\b"
    + _GATE_SCRIPT
    + r"|\bnpx\s+(?:jest|vitest|mocha|playwright)\b"
    r"|\bgo\s+test\b|\bcargo\s+(?:test|nextest|llvm-cov)\b|\bmix\s+test\b"
    r"|\bmake\s+(?:-\S+\s+)*(?:\S+\s+)*?(?:test|tests|check|ci)\b|\bjust\s+(?:test|check|ci)\b"
    # Monorepo runners: `turbo run test lint`, `nx affected -t test`, `nx run api:test`.
    r"|\bturbo\s+(?:run\s+)?(?:[\w:-]+\s+)*?test\b|\bnx\s+(?:run-many|affected)\b[^\n;&|]*?"
    r"(?:-t|--targets?)[= ]?(?:\S*,)?test\b|\bnx\s+(?:run\s+\S+:test|test)\b"
    r"|\bxcodebuild\s+(?:\S+\s+)*?test\b|\bfastlane\s+(?:\S+\s+)?(?:scan|test\w*)\b"
    r"|\bdbt\s+(?:\S+\s+)*?(?:build|test)\b"
    # Gradle tasks by path and variant too (`:app:testDebugUnitTest`, `connectedAndroidTest`).
    r"|\bgradlew?\s+(?:\S+\s+)*?(?:\S*:)?(?:test\w*|check|\w+Test)\b|\bmvnw?\s+(?:\S+\s+)*?(?:test|verify)\b"
    r"|\brake\s+(?:test|spec)\b|\bdotnet\s+test\b|\bswift\s+test\b|\bdeno\s+test\b"
    r"|\bbazel\s+test\b|\bmanage\.py\s+test\b|\brails\s+test\b|\bflutter\s+test\b"
    r"|\bplaywright\s+test\b|\bcypress\s+run\b|\bpre-commit\s+run\b"
    r"|\b(?:hatch|sbt|lein|stack|cabal|dune|meson|ninja)\s+(?:\S+\s+)*?test\b"
    r"|\bzig\s+build\s+test\b|\bbats\b|\bgotestsum\b"
)
TEST_FAILURE = (
    # Not a zero count in a summary (automake's `# FAIL:  0`, `FAILED: 0`).
    r"\b[1-9]\d*\s+(?:failed|failures?|errors?)\b|(?-i:\bFAILED\b|\bFAIL\b)(?!:?\s*0\b)|npm ERR!"
    r"|Exit code [1-9]"
    r"|(?<!\b0\s)(?<!\bno\s)Tests? failed|BUILD FAILED|could not compile|error\[E\d+\]"
)
# A line of a commit's output that git did not write itself (its `[branch sha] subject`
# summary, file counts and modes) and that shows a hook at work.
HOOK_OUTPUT = (
    r"^(?!\[[^\]\n]*\b[0-9a-f]{7,40}\]|\s*\d+\s+files?\s+changed|\s*(?:create|delete)\s+mode\b"
    r"|\s*rename\b|\s*mode\s+change\b)[^\n]*?(?:pre-?commit|husky|lint-staged|\bhooks?\b"
    r"|\b(?:tests?|specs?|pass(?:ed)?|fail(?:ed)?)\b)"
)
_TESTS_NOUN = r"(?:tests?|specs?|test suites?|test cases|suite)"
# A test runner named as the subject of a claim ("tox passes", "the Vitest suite is green",
# "`bazel test //...` passes"): the runner, maybe what it runs on the whole project.
RUNNER_SUBJECT = (
    r"(?<![\w./-])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|karma|phpunit|rspec|minitest|ctest"
    r"|(?:cargo\s+)?nextest|cargo\s+test|go\s+test|mix\s+test|(?:make|just)\s+(?:test|check)"
    r"|bazel\s+test|dotnet\s+test|swift\s+test|(?:\./)?gradlew?\s+test|mvnw?\s+test"
    r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test|deno\s+test|playwright|cypress|unittest)"
    r"(?:\s+(?:run|suite|(?://|\./)\.\.\.))?"
)
# One test by its name: `TestBucketRefill` (Go), `InvoiceServiceTest` (JUnit), `test_refund`.
NAMED_TEST = r"(?-i:Test[A-Z0-9_]\w*|[A-Z]\w*[a-z]Tests?|test_\w+)"
# Other checks a test claim may name with the tests ("tests and lint both pass").
_AND_CHECKS = (
    r"(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)(?:the\s+)?(?:lint(?:ing|ers?)?|type[- ]?checks?|"
    r"typecheck(?:ing)?|builds?|format(?:ting)?(?:\s+checks?)?|checks|mypy|eslint|clippy|ruff)){0,3}"
)

# A harness's exit status closing a command's output (`[exit code: 1]`, `[exit status 1]`,
# `exited with code 2`): the command failed, whatever else the output says. Group 1: the code.
EXIT_TAIL = re.compile(
    r"(?:exit (?:status|code)|exited with (?:code|status))\s*:?\s*([1-9]\d*)\]?\s*\Z", re.I
)
# A tool name that does not open with a reading verb (`list_pending_migrations` shows the
# migrations, it applies none): only such a tool's call backs a claim that something was done.
_ACTS = (
    r"^(?!(?:get|list|show|describe|check|find|search|read|fetch|view|lookup|query|status)"
    r"(?:[_\-.]|[A-Z]|$))"
)
# Lint and type checks: the tools a claim names, and the commands that run them (a hook runner
# or a project's check target runs either).
_LINT_NOUNS = (
    r"(?:lint(?:ing|ers?)?|eslint|ruff|flake8|pylint|clippy|rubocop|golangci-lint"
    r"|pre-commit\s+hooks?)"
)
_TYPE_NOUNS = r"(?:type[- ]?checks?|typecheck(?:ing)?|type\s+checking|mypy|pyright|tsc)"
_CHECK_HUBS = (
    r"(?:^|[\s;&|(/'\"])pre-commit\b|\b(?:make|just)\s+(?:check|ci)\b"
    "|" + _PM_SCRIPT + r"(?:check|ci|verify|validate)\b" + _CHECK_SCRIPT
)
LINT_COMMANDS = (
    _CHECK_HUBS
    + r"|(?:^|[\s;&|(/'\"])(?:ruff|flake8|pylint|eslint|biome|rubocop|golangci-lint|staticcheck"
    r"|stylelint|shellcheck|hadolint|swiftlint|ktlint|detekt)\b"
    r"|\b(?:black|isort|prettier)\s+(?:\S+\s+)*?--check\b|\bgo\s+vet\b"
    r"|\bcargo\s+(?:clippy|fmt)\b|\bdeno\s+lint\b|\bdotnet\s+format\b"
    r"|\bmix\s+(?:credo|format\s+--check-formatted)\b"
    "|" + _PM_SCRIPT + r"lint(?::\S+)?\b"
    r"|\b(?:turbo|nx)\s+(?:run(?:-many)?\s+)?(?:\S+\s+)*?lint\b|\b(?:make|just)\s+lint\b"
    r"|\btox\s+-e\s*\S*lint|\bnox\s+-s\s*\S*lint"
)
TYPE_COMMANDS = (
    _CHECK_HUBS + r"|(?:^|[\s;&|(/'\"])(?:mypy|pyright|tsc|vue-tsc|phpstan|psalm)\b"
    r"|\bcargo\s+check\b|\bdeno\s+check\b|\bmix\s+dialyzer\b"
    "|" + _PM_SCRIPT + r"(?:typecheck|type-check|tsc)\b"
    r"|\b(?:turbo|nx)\s+(?:run(?:-many)?\s+)?(?:\S+\s+)*?typecheck\b"
    r"|\b(?:make|just)\s+typecheck\b|\btox\s+-e\s*\S*(?:type|mypy)|\bnox\s+-s\s*\S*(?:type|mypy)"
)
BUILD_COMMANDS = (
    r"\b(?:\./)?gradlew?\s+(?:\S+\s+)*?(?:build|assemble\w*|compile\w*)\b"
    r"|\bmvnw?\s+(?:\S+\s+)*?(?:package|install|verify|compile)\b|\b(?:cargo|go|dotnet|swift)\s+build\b"
    "|" + _PM_SCRIPT + r"build\b|\bxcodebuild\b"
    r"|\bdocker\s+(?:buildx\s+)?build\b|\bbazel\s+build\b|\b(?:next|vite|nuxt|astro)\s+build\b"
    r"|\bwebpack\b|\bcmake\s+--build\b|\bninja\b|\bmix\s+compile\b|(?:^|[\s;&|(])tsc\b"
    r"|\b(?:mkdocs|docusaurus|jekyll|mdbook|zola)\s+build\b|\bsphinx-build\b|\bhugo\b"
    r"|\b(?:turbo|nx)\s+(?:run(?:-many)?\s+)?(?:\S+\s+)*?build\b"
    r"|\bmake(?:\s+(?:-\S+\s+)*(?:build|all|release|dist))?\s*(?:$|[;&|])"
)
# Code formatters, as a claim names them and as a command runs them.
_FORMATTERS = (
    r"(?:gofmt|goimports|go\s+fmt|black|prettier|rustfmt|cargo\s+fmt|ruff\s+format|clang-format"
    r"|mix\s+format|dotnet\s+format|ktlint|spotless(?:Apply)?|swift-?format|php-cs-fixer|isort"
    r"|biome(?:\s+format)?|deno\s+fmt|terraform\s+fmt|shfmt|yapf|autopep8|stylua"
    r"|google-java-format|scalafmt|ormolu|zig\s+fmt|dart\s+format)"
)
FORMAT_COMMANDS = (
    _CHECK_HUBS + rf"|(?:^|[\s;&|(/'\"]){_FORMATTERS}\b"
    "|" + _PM_SCRIPT + r"(?:format|fmt|prettier)(?::\S+)?\b"
    r"|\b(?:make|just)\s+(?:fmt|format)\b|\b(?:turbo|nx)\s+(?:run(?:-many)?\s+)?(?:\S+\s+)*?format\b"
)
_CHECK_FAILURE = (
    r"Exit code [1-9]|\b[1-9]\d*\s+(?:errors?|problems?)\b|^Found [1-9]|(?-i:\bFailed\b)"
    r"|would reformat|(?-i:\bFAILED\b)|\berror(?:\[\w+\])?:(?![:\w])(?!\s*0\b)"
)


# A commit runs the repository's hooks (tests, linters), unless told not to.
COMMIT_HOOKS = r"\bgit\s+commit\b(?![^\n]*--no-verify)"


def _test_rule(name: str, claim: str) -> Rule:
    """A test claim rule: a test run or tool, or a commit whose hooks are seen running tests."""
    return Rule(
        name=name,
        claim=claim,
        tools=[r"(?:^|_)(?:run_?)?tests?(?:_|$)|^RunTests$|^run_?tests$"],
        commands=TEST_COMMANDS,
        failure=TEST_FAILURE,
        weak_commands=COMMIT_HOOKS,
        weak_evidence=HOOK_OUTPUT,
        strict_subject=True,
        ci_runs_it=True,
    )


def _check_rule(name: str, claim: str, tool: str, commands: str) -> Rule:
    """A lint or type check rule: its commands, a tool of that name, or a commit's hooks."""
    return Rule(
        name=name,
        claim=claim,
        tools=[tool],
        commands=commands,
        failure=_CHECK_FAILURE,
        weak_commands=COMMIT_HOOKS,
        weak_evidence=HOOK_OUTPUT,
        ci_runs_it=True,
    )


def _check_claim(nouns: str, short: str, runner: str) -> str:
    """A lint or type check claim: "<nouns> pass(es)/is clean", "0 <short> errors", "ran the
    <runner>"."""
    return (
        rf"\b{nouns}(?:\s+(?:checks?|run))?{_AND_CHECKS}(?:['\u2019]s\b)?"  # "Type check and lint"
        r"\s+(?:now\s+|still\s+|all\s+|also\s+|both\s+)*"
        r"(?:pass(?:es|ed)?|(?:(?:is|are)\s+(?:now\s+|all\s+|still\s+|both\s+)*)?"
        r"(?:clean|passing|green)"
        r"|(?:has|have)\s+(?:all\s+)?passed|reports?\s+(?:no|0|zero)\s+(?:issues|errors|problems))\b"
        rf"|\b(?:0|zero|no)\s+{short}\s+(?:errors|issues|warnings|problems)\b"
        r"|\b(?:ran|(?:I've|I\s+have|we've)\s+(?:also\s+)?run)\s+(?:the\s+)?"
        rf"{runner}\b"
    )


# --- operations: restarts, scaling, rollbacks, DNS, certificates, infrastructure ----------------

# ... also after another done verb: "I've bumped the version and tagged v2.3.1".
_WE = (
    r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:also\s+|just\s+|now\s+|successfully\s+)*"
    r"(?:[a-z]{3,}ed\s+(?:(?!and\b)[^\s.!?;,]+\s+){0,4}?and\s+(?:also\s+|then\s+)?)?"
)
_OPS_FAILURE = (
    r"Exit code [1-9]|exit (?:status|code):? ?[1-9]|Error from server|^\W*Error:|^error:"
    r"|\bfailed\b|\bForbidden\b|permission denied|timed out|exceeded its progress deadline"
    r"|UPGRADE FAILED|\bnot found\b|could not be found"
)
_KUBECTL = r"\bkubectl\s+(?:\S+\s+)*?"


DEFAULT_RULES: tuple[Rule, ...] = (
    _test_rule(
        "tests pass",
        # "Tests: passing" too.
        # "All tests in `tests/test_utils.py` pass now": the file a qualifier too.
        rf"\b{_TESTS_NOUN}(?:\s+in\s+(?:CODE|[\w./-]+\.\w+))?{_AND_CHECKS}(?:\s*:)?\s+"
        r"(?:now\s+|still\s+|all\s+|also\s+|both\s+)*"
        r"(?:pass(?:es|ed)?|(?:(?:are|is)\s+(?:now\s+|all\s+|still\s+)*)?(?:passing|green|happy)"
        r"|(?:have|has)\s+(?:all\s+)?passed|succeed(?:s|ed)?)\b"
        r"(?!\s+(?:in|on)\s+(?:CI|the\s+(?:CI|pipeline))\b)"  # said of CI: "CI is green"
        r"|\ball\s+green\b"
        # "Everything's green" (not "... in CI"); "Tests: 48 passed" (not "..., 2 failed").
        r"|\beverything(?:'s|\u2019s|\s+is)\s+(?:now\s+|still\s+|all\s+)*green\b"
        r"(?!\s+(?:in|on)\s+(?:CI|the\s+(?:CI|pipeline))\b)"
        rf"|\b{_TESTS_NOUN}\s*:\s*\d[\d,]*\s+pass(?:ed|ing)\b(?![^.;\n]*\b(?:fail|error))"
        # "I've added a regression test in `x` and it passes".
        r"|\btests?\b[^.;\n]{0,80}?\band\s+(?:it|they)\s+(?:now\s+|all\s+)?pass(?:es|ed)?\b"
        # "I ran the test suite and everything passes".
        r"|\b(?:ran|run)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:test\s+suite|tests|specs)\s+and\s+(?:everything"
        r"|all\s+(?:of\s+them|tests)|they|it)\s+(?:all\s+|still\s+)?pass(?:es|ed)?\b"
        # One test by its name ("TestBucketRefill passes now").
        rf"|\b{NAMED_TEST}\s+(?:now\s+|still\s+|also\s+)*"
        r"(?:pass(?:es|ed)?|(?:is|are)\s+(?:now\s+)?(?:passing|green))\b",
    ),
    # A claim naming the runner ("tox passes", "the Vitest suite is green"): a rule of its own,
    # so its long alternation of runners only runs on sentences that name one (in the claim
    # above it would be tried at every word of every test claim).
    _test_rule(
        "the test run passes",
        rf"{RUNNER_SUBJECT}\s+(?:now\s+|still\s+|all\s+|also\s+|both\s+)*"
        r"(?:pass(?:es|ed)?|(?:(?:is|are)\s+(?:now\s+|all\s+|still\s+)*)(?:passing|green|clean)"
        r"|(?:has|have)\s+(?:all\s+)?passed|succeed(?:s|ed)?)\b",
    ),
    _check_rule(
        "lint passes",
        _check_claim(_LINT_NOUNS, r"lint(?:ing)?", r"linters?"),
        r"(?:^|_)lint(?:_|$)",
        LINT_COMMANDS,
    ),
    _check_rule(
        "type checks pass",
        _check_claim(_TYPE_NOUNS, "type", r"type[- ]?checkers?"),
        r"(?:^|_)(?:typecheck|type_check)(?:_|$)",
        TYPE_COMMANDS,
    ),
    _check_rule(
        "formatted the code",
        # "Formatted everything with gofmt", "I ran prettier": not "formatted the output as".
        rf"\b(?:re)?formatted\s+(?:[\w./*-]+\s+){{0,4}}?(?:with|using|via|through)\s+(?:the\s+)?"
        rf"{_FORMATTERS}\b|\b(?:ran|(?:I've|I\s+have|we've)\s+(?:also\s+)?run)\s+(?:the\s+)?"
        rf"{_FORMATTERS}\b",
        r"(?:^|_)(?:format|fmt)(?:_|$)",
        FORMAT_COMMANDS,
    ),
    Rule(
        name="the build passes",
        claim=(
            r"\b(?:[\w-]+\s+)?builds?\s+(?:now\s+|still\s+|also\s+)*(?:pass(?:es|ed)?|succeed(?:s|ed)?"
            r"|(?:is|are)\s+(?:now\s+|all\s+|still\s+)*(?:green|passing|clean|successful)"
            r"|(?:has|have)\s+(?:all\s+)?(?:passed|succeeded)|completed\s+successfully)\b"
            r"(?!\s+(?:in|on)\s+(?:CI|the\s+(?:CI|pipeline))\b)"
            r"|\b(?:builds|compiles)\s+(?:cleanly|successfully|without\s+(?:errors|warnings))\b"
            # "Rebuilt the docs site": a thing the project builds, not "built a summary table".
            r"|(?:\b(?:I|we)(?:'ve|\s+have)?\s+|^\W*)(?:also\s+)?(?:re)?built\s+(?:the\s+|a\s+|an\s+)?"
            r"(?:[\w-]+\s+){0,2}?(?:docs|documentation|site|app|apk|ipa|binary|binaries|bundle|image"
            r"|package|wheel|project|frontend|backend)\b"
        ),
        tools=[_ACTS + r".*(?:^|_)build(?:_|$)"],
        # A test run builds what it tests (`gradle test`, `cargo test`): it backs the claim too.
        commands=BUILD_COMMANDS + "|" + TEST_COMMANDS,
        failure=(
            # Not a zero count, nor a path in a warning (`crate::error::ParseError`).
            TEST_FAILURE + r"|FAILURE:|(?-i:\bERROR\b)(?!:?\s*0\b)"
            r"|\berror(?:\[\w+\])?:(?![:\w])(?!\s*0\b)|Compilation failed"
            r"|\bAborted\b"  # mkdocs --strict: "Aborted with 2 warnings in strict mode!"
        ),
        ci_runs_it=True,
    ),
    Rule(
        name="committed",
        claim=(
            r"\bcommitted\b|\b(?:made|created)\s+(?:a\s+|the\s+|\w+\s+)?commits?\b"
            r"|\bcommits?\s+(?:was\s+|has\s+been\s+)?(?:successfully\s+)?created\b"
        ),
        tools=[r"(?:^|_)commit(?:_|$)|create_commit"],
        commands=r"\bgit\s+(?:\S+\s+)*?commit\b",
        failure=(
            r"nothing to commit|nothing added to commit|no changes added to commit"
            r"|Aborting commit|^fatal:|^error:"
        ),
        # A commit made, then one more with nothing left: the work is committed.
        already_done=r"nothing to commit, working tree clean",
    ),
    Rule(
        name="pushed",
        # Not "pushed the price change live" (published, not code), nor "pushed a day later".
        # Nor money pushed to a card ("I've pushed $212.40 to your debit card").
        # Nor an idiom of success ("that's been pushed through").
        claim=r"\bpushed\b(?!\s+(?:(?:a|an|one|two|three|\d+)\s+(?:hour|day|week|month)s?\s+)?"
        r"(?:back|later|through)\b)(?!\s+(?:[\w-]+\s+){0,3}?live\b)(?!\s+(?:the\s+)?[$\u20ac\u00a3\d])",
        tools=[r"(?:^|_)push(?:_|$)|push_files"],
        # A branch, or an image to a registry.
        commands=(
            r"\bgit\s+(?:\S+\s+)*?push\b|\bgh\s+repo\s+sync\b"
            r"|\b(?:docker|podman|buildah)\s+(?:\S+\s+)*?push\b|\bdocker\s+buildx\s+build\b[^\n]*--push"
            r"|\bcrane\s+push\b|\bskopeo\s+copy\b|\bhelm\s+push\b"
        ),
        failure=(
            r"\[rejected\]|failed to push|^fatal:|^error:|Permission denied|Everything up-to-date"
            r"|^denied:|requested access to the resource is denied|unauthorized: |Exit code [1-9]"
        ),
        already_done=r"Everything up-to-date",
    ),
    Rule(
        name="opened a pull request",
        claim=(
            r"\b(?:opened|created|submitted|raised|filed|put\s+up)\s+(?:a\s+|an\s+|the\s+)?"
            r"(?:new\s+|draft\s+)?(?:PR|pull\s+request|merge\s+request|MR)\b"
            r"|\b(?:PR|pull\s+request|merge\s+request)\s+(?:is\s+|has\s+been\s+|was\s+)"
            r"(?:now\s+)?(?:opened|created|up|submitted)\b"
            # ... and telegraphic: "PR opened: fix: ... → main".
            r"|^\W*(?:PR|pull\s+request|merge\s+request|MR)\s+(?:opened|created|submitted)\b"
        ),
        tools=[_ACTS + r".*(?:pull_?request|(?:^|_)create_pr(?:_|$)|merge_?request)"],
        commands=(
            r"\bgh\s+pr\s+create\b|\bglab\s+mr\s+create\b|\bhub\s+pull-request\b"
            # ... or the REST API, as agents without `gh` do: a POST to the pulls of a repository.
            r"|\b(?:curl|http|https|xh)\b(?=[^\n]*(?:-X\s*POST|--request\s+POST|\s-d\s|--data\b|--json\b"
            r"|\sPOST\s))[^\n]*/(?:pulls|merge_requests)\b"
            r"|\bgh\s+api\b(?=[^\n]*(?:\s-[fF]\s|--(?:raw-)?field\b|--method\s+POST|-X\s*POST))"
            r"[^\n]*/pulls\b"
        ),
        failure=r"^(?:error|fatal|GraphQL):|already exists|failed to create",
    ),
    Rule(
        name="deployed",
        claim=(
            r"\b(?:I|we|I've|we've|has\s+been|have\s+been|was|were|is|are|successfully)\s+"
            r"(?:now\s+|successfully\s+|also\s+)?deployed\b"
            # "Deployed to prod." / "Built, tested and deployed ...": the elided "I".
            r"|^\W*(?:\w+(?:,\s*|\s+and\s+|\s+&\s+)){0,3}deployed\b"
            # "Built the app and deployed it": a first verb, then "and deployed" (no "not").
            r"|^\W*(?:built|rebuilt|made|ran|\w+ed)\b(?:(?!n't|\bnot\b|\bnever\b)[^.!?;]){0,60}?"
            r"\s+and\s+deployed\b"
            r"|\bdeploy(?:ment)?\s+(?:is\s+|was\s+|has\s+)?(?:now\s+)?"
            r"(?:complete|completed|successful|succeeded|done|live)\b"
            # "Shipped to production", "is rolled out in prod".
            r"|\bshipped\s+(?:it\s+|\S+\s+)?to\s+(?:prod(?:uction)?|staging|live)\b"
            r"|\brolled\s+out\s+(?:to|in|on)\s+`?(?:prod(?:uction)?|staging)\b"
            # "I also rolled it out with fly deploy".
            rf"|{_WE}rolled\s+(?:(?:it|this|them)\s+|the\s+(?:[\w-]+\s+){{1,2}}?)?out\b"
            r"|\b(?:kicked\s+off|triggered)\s+(?:a\s+|the\s+)?(?:new\s+)?deploy(?:ment)?\b"
            # "I've upgraded the staging release": a helm release or chart.
            rf"|{_WE}upgraded\s+(?:the\s+)?(?:[\w-]+\s+){{0,2}}?(?:release|chart)\b"
            # "payments upgraded to chart 2.4.1".
            r"|\bupgraded\s+to\s+(?:the\s+)?(?:chart|release)\b"
        ),
        # Or a tool that starts a pipeline, which is how many teams deploy (`trigger_pipeline`
        # on `payments-deploy-staging`): alerts lean to precision.
        tools=[
            _ACTS + r".*(?:deploy|rollout|release)",
            r"(?:trigger|run|start|dispatch)_?(?:pipeline|workflow)|(?:pipeline|workflow)_?(?:run|trigger)",
        ],
        commands=(
            # Global flags may come first (`kubectl --context prod-eu1 apply`).
            # Not `kubectl get deploy x` (a read).
            r"(?<!\bget\s)(?<!\bdescribe\s)\bdeploy\b"
            r"|\bkubectl\s+(?:-\S+\s+(?:[^-\s]\S*\s+)?)*(?:apply|rollout|set\s+image)"
            r"|\bhelm\s+(?:-\S+\s+(?:[^-\s]\S*\s+)?)*(?:upgrade|install)"
            r"|\bterraform\s+apply|\bpulumi\s+up|\bvercel\b|\bwrangler\s+(?:deploy|publish)"
            r"|\bdocker\s+push|\bgit\s+push\s+heroku"
        ),
        failure=r"\berror\b|\bfailed\b|rollback",
    ),
    Rule(
        name="CI is green",
        claim=(
            # Not "all checks pass": `make check` runs local checks.
            r"\b(?:pipeline|CI|workflow)\s+(?:is|are)\s+(?:now\s+|all\s+)?(?:green|passing)\b"
            r"|\bCI\s+(?:passed|passes)\b|\ball\s+CI\s+checks\s+(?:pass(?:ed)?|are\s+green)\b"
            r"|\b(?:tests?|checks?|builds?|specs?)\s+(?:all\s+)?(?:pass(?:ed)?|succeeded|(?:are|is)\s+"
            r"green)\s+(?:in|on)\s+(?:CI|the\s+(?:CI|pipeline))\b"
        ),
        tools=[r"(?:^|_)(?:ci|pipeline|workflow|check_?runs?)(?:_|$)"],
        commands=(
            r"\bgh\s+(?:run\s+(?:watch|view|list)|pr\s+checks|workflow\s+view)\b|\bglab\s+ci\b"
            r"|\bcircleci\b|\bbuildkite\b"
        ),
        # Not a zero count ("0 failing").
        failure=r"(?<!\b0 )\b(?:fail(?:ed|ure|ing)?|cancell?ed)\b|Exit code [1-9]|^X\s|\u2717",
        about_ci=True,
    ),
    Rule(
        name="merged",
        claim=(
            r"\bmerged\s+(?:it\s+|this\s+|the\s+(?:PR|pull\s+request|MR|branch)\s+|(?:PR|MR)\s+)?"
            r"(?:#?\d+\s+)?(?:in)?to\s+(?:the\s+)?`?(?:main|master|develop|trunk)\b"
            r"|\b(?:PR|pull\s+request|MR|merge\s+request)\s+(?:#?\d+\s+)?(?:is\s+|has\s+been\s+|was\s+)"
            r"(?:now\s+|successfully\s+)?(?:squash-|rebase-)?merged\b|\b(?:squash|rebase)-merged\b"
        ),
        tools=[_ACTS + r".*(?:(?:^|_)merge(?:_|$)|merge_?pull_?request)"],
        commands=r"\bgit\s+(?:\S+\s+)*?merge\b|\bgh\s+pr\s+merge\b|\bglab\s+mr\s+merge\b",
        failure=(
            r"not mergeable|CONFLICT|Automatic merge failed|^fatal:|^error:|prohibit"
            r"|Exit code [1-9]"
        ),
    ),
    Rule(
        name="applied the migration",
        claim=(
            r"\b(?:applied|ran)\s+(?:the\s+|all\s+|both\s+|pending\s+|new\s+|[\w-]+\s+){0,2}"
            # "Migration `4c1d9e2b7a10` is applied": its revision may come between.
            r"migrations?\b|\bmigrations?\s+(?:(?:CODE|[\w.-]*\d[\w.-]*)\s+)?"
            r"(?:has\s+been\s+|have\s+been\s+|was\s+|were\s+|are\s+|is\s+)"
            r"(?:now\s+|all\s+|successfully\s+)*(?:applied|run)\b"
            # "Migration 2026..._status created and applied", "the migration ran cleanly",
            # "I've run the pending migrations", "Flyway applied it to staging".
            r"|\bmigrations?\s+(?:(?:CODE|[\w.-]*\d[\w.-]*)\s+)?created\s+and\s+applied\b"
            r"|\bmigrations?\s+ran\s+(?:cleanly|successfully|fine|without\s+errors)\b"
            r"|\bmigrated\s+(?:the\s+|our\s+|your\s+)?(?:[\w-]+\s+)?(?:DB|database|schema)\b"
            # "Migration applied — ...", "both migrations applied cleanly".
            r"|\bmigrations?\s+(?:(?:CODE|[\w.-]*\d[\w.-]*)\s+)?(?:successfully\s+)?applied\b"
            r"|\b(?:I|we)(?:'ve|\s+have)\s+(?:also\s+|now\s+)?run\s+(?:the\s+|all\s+|both\s+"
            r"|pending\s+|new\s+|[\w-]+\s+){0,2}migrations?\b"
            r"|\b(?:flyway|alembic|liquibase|prisma|goose|dbmate|sqitch)\s+applied\b"
        ),
        tools=[_ACTS + r".*migrat"],
        commands=(
            r"\balembic\s+(?:\S+\s+)*?upgrade\b|\bmanage\.py\s+migrate\b|\b(?:rails|rake)\s+db:migrate\b"
            r"|\bprisma\s+migrate\b|\bknex\s+migrate|\bflyway\s+(?:\S+\s+)*?migrate\b"
            r"|\bliquibase\s+(?:\S+\s+)*?update\b|\bgoose\s+(?:\S+\s+)*?up\b|\bsqlx\s+migrate\s+run\b"
            r"|\bmix\s+ecto\.migrate\b|\bdbmate\s+(?:up|migrate)\b|\bmigrate\s+(?:\S+\s+)*?up\b"
            r"|\b(?:npm|yarn|pnpm)\s+(?:run\s+)?(?:db:)?migrate|\bsequelize\s+db:migrate\b"
            r"|\bdiesel\s+migration\s+run\b|\bartisan\s+migrate\b"
            r"|\bgradlew?\s+(?:\S+\s+)*?(?:flywayMigrate|update)\b|\bmvnw?\s+(?:\S+\s+)*?flyway:migrate\b"
        ),
        # ... and a driver's exception (`sqlalchemy.exc.ProgrammingError: ...`).
        failure=r"\berror\b|\bfailed\b|Traceback|Exit code [1-9]|\b[A-Z]\w*Error:",
    ),
    Rule(
        name="restarted",
        claim=(
            rf"{_WE}restarted\b|\b(?:has|have)\s+(?:now\s+|also\s+)?been\s+(?:successfully\s+)?"
            r"restarted\b|^\W*(?:successfully\s+)?restarted\b"
        ),
        tools=[_ACTS + r".*(?:restart|reboot|bounce|recycle)"],
        commands=(
            rf"{_KUBECTL}(?:rollout\s+restart|delete\s+(?:pods?|po)\b)|\bsystemctl\s+(?:\S+\s+)*?"
            r"(?:restart|reload)\b|\bservice\s+\S+\s+restart\b|\bdocker(?:[\s-]compose)?\s+"
            r"(?:\S+\s+)*?restart\b|\bpm2\s+restart\b|\bheroku\s+(?:ps:)?restart\b"
            r"|\bsupervisorctl\s+restart\b|\bbrew\s+services\s+restart\b|\blaunchctl\s+kickstart\b"
            # A dev server started again (after the old one was stopped).
            r"|\b(?:npm|yarn|pnpm|bun)(?:@[\w.-]+)?\s+(?:run\s+)?(?:dev|start|serve)\b|\bnext\s+dev\b"
            r"|(?:^|[\s;&|])(?:vite|nodemon|uvicorn|gunicorn)\b|\bflask\s+run\b"
            r"|\brails\s+s(?:erver)?\b|\bmanage\.py\s+runserver\b"
        ),
        failure=_OPS_FAILURE,
    ),
    Rule(
        name="scaled",
        claim=rf"{_WE}scaled\b|\b(?:has|have)\s+(?:now\s+)?been\s+scaled\b|^\W*scaled\b",
        tools=[_ACTS + r".*(?:scale|replica)"],  # `set_replica_count`
        commands=(
            rf"{_KUBECTL}(?:scale|autoscale)\b|{_KUBECTL}patch\s+(?:hpa|horizontalpodautoscaler)"
            r"|\baws\s+(?:ecs\s+update-service|autoscaling\s+(?:set-desired-capacity"
            r"|update-auto-scaling-group))\b|\bheroku\s+ps:(?:scale|resize)\b"
            r"|\bdocker(?:[\s-]compose)?\s+(?:\S+\s+)*?--scale\b|\bdocker\s+service\s+scale\b"
            r"|\bgcloud\s+[^\n]*(?:resize|--num-nodes|--min-instances|--max-instances)"
            r"|\baz\s+(?:\S+\s+)*?scale\b|\bhelm\s+upgrade\b[^\n]*replica"
        ),
        failure=_OPS_FAILURE,
    ),
    Rule(
        name="rolled back",
        claim=(
            rf"{_WE}rolled\s+(?:[\w.-]+\s+){{0,3}}?back\b|\b(?:has|have)\s+(?:now\s+)?been\s+"
            r"rolled\s+back\b|^\W*rolled\s+(?:[\w.-]+\s+){0,3}?back\b"
            r"|\brollback\s+(?:is\s+|was\s+|has\s+)?(?:completed?|done|succeeded|finished)\b"
        ),
        tools=[_ACTS + r".*(?:rollback|roll_back|revert|undo)"],
        commands=(
            rf"{_KUBECTL}rollout\s+undo\b|\bhelm\s+(?:\S+\s+)*?rollback\b|\bargocd\s+app\s+rollback\b"
            rf"|{_KUBECTL}set\s+image\b|\bheroku\s+(?:releases:)?rollback\b|\bvercel\s+rollback\b"
            r"|\bgcloud\s+run\s+services\s+update-traffic\b|\baws\s+deploy\s+stop-deployment\b"
        ),
        failure=_OPS_FAILURE,
    ),
    Rule(
        name="updated DNS",
        claim=(
            rf"{_WE}(?:updated|changed|created|added|pointed|switched|repointed)\s+(?:the\s+|a\s+"
            r"|an\s+)?(?:[\w.-]+\s+){0,2}?(?:DNS|CNAME|(?-i:A|AAAA|TXT|MX|NS)\s+records?)\b"
            r"|\b(?:DNS|CNAME)\s+(?:records?\s+)?(?:has\s+been\s+|have\s+been\s+|was\s+|is\s+now\s+)"
            r"(?:updated|changed|created|pointed)\b"
            r"|^\W*(?:updated|changed|created|added|pointed)\s+(?:the\s+)?(?:[\w.-]+\s+){0,2}?"
            r"(?:DNS|CNAME)\b"
        ),
        tools=[_ACTS + r".*(?:dns|record|route53|zone|cname)"],
        commands=(
            r"\baws\s+route53\s+change-resource-record-sets\b|\bgcloud\s+dns\s+record-sets\b"
            r"|\baz\s+network\s+(?:private-)?dns\s+record-set\b|\bdoctl\s+compute\s+domain\s+records\b"
            r"|\bflarectl\s+dns\b|\bcurl\b[^\n]*dns_records|\b(?:terraform|tofu)\s+(?:\S+\s+)*?apply\b"
            r"|\boctodns-sync\b|\bdnscontrol\s+push\b"
        ),
        failure=_OPS_FAILURE,
    ),
    Rule(
        name="renewed the certificate",
        claim=(
            r"\bcert(?:ificate)?s?\b(?:\s+[\w.-]+){0,3}?\s+(?:has|have)\s+(?:now\s+)?been\s+"
            r"(?:successfully\s+)?(?:renewed|reissued|rotated|issued)\b"
            rf"|{_WE}(?:renewed|reissued|rotated)\s+(?:the\s+)?(?:[\w.-]+\s+){{0,3}}?"
            r"(?:TLS\s+|SSL\s+)?cert(?:ificate)?s?\b"
            r"|^\W*(?:renewed|reissued|rotated)\s+(?:the\s+)?(?:[\w.-]+\s+){0,3}?(?:TLS\s+|SSL\s+)?"
            r"cert(?:ificate)?s?\b"
        ),
        tools=[_ACTS + r".*(?:cert|tls|ssl|acme)"],
        commands=(
            r"\bcertbot\s+(?:\S+\s+)*?(?:renew|certonly|--force-renewal)\b|\bcmctl\s+renew\b"
            r"|\bkubectl\s+cert-manager\s+renew\b|\bacme\.sh\s+(?:\S+\s+)*?--(?:renew|issue)\b"
            r"|\blego\s+(?:\S+\s+)*?renew\b|\baws\s+acm\s+(?:renew|request|import)-certificate\b"
            rf"|\bstep\s+ca\s+renew\b|{_KUBECTL}delete\s+(?:secret|certificate|certificaterequest)\b"
            rf"|{_KUBECTL}annotate\b[^\n]*cert-manager"
        ),
        failure=_OPS_FAILURE + r"|rate.?limit|too many certificates",
    ),
    Rule(
        name="applied the infrastructure change",
        claim=(
            rf"{_WE}applied\s+(?:the\s+|a\s+|my\s+|this\s+)?(?:[\w.-]+\s+){{0,2}}?"
            r"(?:Terraform|OpenTofu|Pulumi|infra(?:structure)?\s+(?:change|plan)s?|Kubernetes\s+"
            r"manifests?|manifests?)\b"
            r"|^\W*applied\s+(?:the\s+)?(?:[\w.-]+\s+){0,2}?(?:Terraform|manifests?)\b"
            r"|\b(?:terraform|tofu)\s+apply\s+(?:succeeded|completed|finished|went\s+through)\b"
            # "Terraform applied: 2 added, 1 changed", "the Terraform changes applied cleanly".
            r"|\b(?:Terraform|OpenTofu|Pulumi)\s+(?:changes?\s+|plan\s+)?(?:successfully\s+)?applied\b"
            # "The updated Deployment has been applied to staging".
            r"|\b(?:manifests?|Deployment|ConfigMap|StatefulSet|DaemonSet|Ingress|CronJob"
            r"|Terraform\s+(?:plan|changes?))\s+(?:has|have)\s+(?:now\s+)?been\s+applied\b"
        ),
        tools=[_ACTS + r".*(?:terraform|tofu|pulumi|apply(?![_-]?patch))"],  # not `apply_patch`
        commands=(
            r"\b(?:terraform|tofu|terragrunt)\s+(?:\S+\s+)*?apply\b|\bpulumi\s+up\b"
            rf"|{_KUBECTL}apply\b|\bhelm\s+(?:upgrade|install)\b|\bcdk\s+deploy\b"
            r"|\bansible-playbook\b|^apply\b"
        ),
        failure=_OPS_FAILURE,
    ),
    Rule(
        name="ran the playbook",
        claim=(
            rf"\bplaybooks?\s+(?:has\s+|have\s+|was\s+)?(?:now\s+|also\s+)?(?:ran|run|completed|applied"
            rf"|succeeded|finished)\b|{_WE}(?:ran|run|applied)\s+(?:the\s+)?(?:[\w-]+\s+){{0,2}}?playbooks?\b"
        ),
        tools=[_ACTS + r".*(?:playbook|ansible)"],
        commands=r"\bansible-playbook\b(?![^\n;&|]*--syntax-check)",
        failure=r"\b(?:failed|unreachable)=[1-9]|fatal: \[|ERROR!|Exit code [1-9]",
    ),
    Rule(
        name="published",
        claim=(
            rf"{_WE}published\b|\b(?:is|are|['\u2019]s|has\s+been|have\s+been|was|were)\s+"
            r"(?:now\s+)?(?:successfully\s+)?(?:\w+\s+and\s+)?published\s+(?:to|on)\b"
            r"|^\W*(?:published|uploaded|released)\s+\S+(?:\s+\S+){0,5}?\s+(?:to|on)\s+(?:npm|PyPI"
            r"|crates\.io|RubyGems|Maven(?:\s+Central)?|NuGet|Packagist|Hex|the\s+registry)\b"
            rf"|{_WE}uploaded\s+\S+(?:\s+\S+){{0,5}}?\s+to\s+(?:PyPI|npm|crates\.io|RubyGems|NuGet)\b"
            rf"|{_WE}created\s+(?:the\s+|a\s+)?(?:GitHub\s+|GitLab\s+)?release\b"
            # "The GitHub release v2.3.0 is published".
            r"|\brelease\s+(?:[\w.-]+\s+)?(?:is|has\s+been|was)\s+(?:now\s+)?(?:published|live|out)\b"
        ),
        tools=[_ACTS + r".*(?:publish|release|upload_package)"],
        commands=(
            r"\b(?:npm|yarn|pnpm|bun)(?:@[\w.-]+)?\s+(?:\S+\s+)*?publish\b|\btwine\s+upload\b|\bcargo\s+publish\b"
            r"|\bgem\s+push\b|\b(?:poetry|flit|uv|hatch)\s+publish\b|\bgh\s+release\s+create\b"
            r"|\bglab\s+release\s+create\b|\bgoreleaser\b|\bmvn\s+(?:\S+\s+)*?deploy\b"
            r"|\bdotnet\s+nuget\s+push\b|\bmix\s+hex\.publish\b"
        ),
        failure=_OPS_FAILURE
        + r"|npm ERR!|HTTPError: [45]\d\d|error: failed to publish|\b40[0-9]\b",
    ),
    Rule(
        name="rebased or cherry-picked",
        claim=(
            rf"{_WE}(?:rebased|cherry-picked)\b|^\W*(?:rebased|cherry-picked)\b"
            r"|\b(?:has|have)\s+been\s+(?:rebased|cherry-picked)\b"
        ),
        commands=r"\bgit\s+(?:\S+\s+)*?(?:--)?(?:rebase|cherry-pick)\b",  # `git pull --rebase`
        failure=(
            r"CONFLICT|could not apply|error: could not|Exit code [1-9]|^fatal:|^error:"
            r"|Resolve all conflicts"
        ),
    ),
    Rule(
        name="installed a dependency",
        # "I installed date-fns with pnpm", "Installed the missing types": not "is installed"
        # (a state the agent may have read).
        claim=(
            rf"{_WE}(?:re)?installed\b|^\W*(?:re)?installed\s+(?:the\s+)?\S"
            # "Added httpx ^0.27 to pyproject.toml with poetry add".
            r"|\badded\s+\S+(?:\s+\S+){0,4}?\s+(?:with|via|using)\s+`?(?:poetry|npm|pnpm|yarn|bun"
            r"|cargo|uv|pip|go|bundle|composer|dotnet)\s+(?:add|install|get|require|i)\b"
            # "Added `@tanstack/react-query` v5 as a dependency".
            r"|\badded\s+\S+(?:\s+\S+){0,3}?\s+as\s+an?\s+(?:(?:new|dev|runtime|peer|direct)"
            r"\s+)?(?:dev-?)?dependency\b"
        ),
        tools=[_ACTS + r".*(?:install|add_?(?:dependency|package))"],
        commands=(
            r"\b(?:npm|pnpm|yarn|bun)(?:@[\w.-]+)?\s+(?:-\S+\s+)*(?:i|install|add|ci)\b"
            r"|\b(?:pip\d*|pipx|uv\s+pip|conda|mamba|gem|brew|apt(?:-get)?|dnf|yum|apk|choco"
            r"|winget|pipenv|bundle|composer|mix\s+deps\.get|go|cargo|poetry|uv|pdm|rye|hatch"
            r"|dotnet)\b(?:\s+-\S+)*\s+(?:install|add|get|require|sync|deps\.get|package)\b"
            r"|\bdotnet\s+add\s+(?:\S+\s+)?package\b|\bmix\s+deps\.get\b"
        ),
        failure=(
            _OPS_FAILURE + r"|npm ERR!|ERR_PNPM|ERESOLVE|No matching distribution|Could not find a"
            r" version|Unable to locate package|error:"
        ),
    ),
    Rule(
        name="tagged a release",
        claim=(
            rf"{_WE}(?:re)?tagged\b|^\W*(?:re)?tagged\s+(?:the\s+|commit\s+)?\S"
            rf"|{_WE}(?:created|pushed|added)\s+(?:the\s+|a\s+)?(?:git\s+|release\s+)?tag\b"
        ),
        tools=[_ACTS + r".*(?:(?:^|_)tags?(?:_|$)|release)"],
        commands=(
            r"\bgit\s+(?:\S+\s+)*?tag\b(?!\s+(?:-l|--list)\b)|\bgit\s+push\b[^\n]*--tags"
            r"|\b(?:gh|glab)\s+release\s+create\b"
        ),
        failure=r"^fatal:|^error:|already exists|Exit code [1-9]|\b403\b|Permission denied",
    ),
    Rule(
        name="regenerated code",
        # "I regenerated the Go stubs", "Regenerated the TypeScript client with ...".
        claim=(
            # (A file named in inline code, CODE here, is ``named_claims``'s: "Regenerated
            # `uv.lock`".)
            rf"{_WE}regenerated\b(?!\s+CODE\b)|^\W*regenerated\s+(?!CODE\b)\S"
            r"|\b(?:stubs?|clients?|code|bindings|types|models|schemas?)\s+(?:(?:has|have)\s+been"
            r"|is|are|was|were)\s+(?:now\s+|also\s+)?regenerated\b"
        ),
        tools=[_ACTS + r".*(?:generat|codegen)"],
        commands=(
            r"\b(?:protoc|sqlc|openapi-generator(?:-cli)?|swagger-codegen|graphql-codegen|oapi-codegen"
            r"|mockgen|gqlgen|wire|quicktype|datamodel-codegen)\b|\bbuf\s+generate\b"
            r"|\b(?:prisma|ent|go)\s+generate\b|\b(?:make|just)\s+(?:gen|generate|codegen|protos?)\b"
            r"|\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:gen|generate|codegen)(?::\S+)?\b"
            r"|\b(?:uv|poetry|pdm|cargo|bundle|pipenv)\s+lock\b|\b(?:npm|pnpm|yarn)\s+install\b"
        ),
        failure=_OPS_FAILURE + r"|error:|\bERROR\b",
    ),
    Rule(
        name="seeded the database",
        claim=(
            rf"{_WE}seeded\b|^\W*seeded\b|\b(?:has|have)\s+been\s+seeded\b"
            r"|\b(?:is|are)\s+(?:now\s+|also\s+)?seeded\b(?:\s+as\s+well)?(?!\s+(?:with|by|from)\b)"
        ),
        tools=[_ACTS + r".*seed"],
        commands=r"seed",
        failure=_OPS_FAILURE + r"|\bError\b",
    ),
    Rule(
        name="emailed",
        claim=(
            # The agent's own mail ("I emailed the team", "Emailed the invoice"), not another's
            # ("Kestrel Labs emailed us about ...").
            r"(?:\b(?:I|we)(?:'ve|\s+have|\s+had)?\s+(?:also\s+|just\s+|now\s+|already\s+)*"
            r"|^\W*|\b(?:has|have|was|were)\s+(?:been\s+)?|\band\s+)(?:\w+ed\s+and\s+)?e-?mailed\b"
            r"|\bsent\s+(?:[\w-]+\s+){0,3}e-?mails?\b"
            r"|\be-?mails?\s+(?:has\s+been\s+|was\s+|have\s+been\s+|were\s+)(?:sent|delivered)\b"
        ),
        # Not a draft (`gmail_create_draft` sends nothing), nor a read (`search_email`).
        tools=[
            _ACTS + r"(?!.*draft)(?:.*(?:e-?mail|smtp|gmail|outlook|send_(?:\w+_)?message|notif))"
        ],
        commands=r"\b(?:sendmail|mailx?|mutt|swaks)\b|smtplib|sendgrid|mailgun|postmark",
        failure=r"\berror\b|\bfailed\b|\bbounced\b",
    ),
    Rule(
        name="removed code or files",
        # "Removed the deprecated route", "I deleted the unused helper functions": a coding
        # agent's removal of a part of its project (a domain tool's "removed the item" is the
        # domain check's).
        claim=(
            r"(?:\b(?:I|we)(?:'ve|\s+have)?\s+|^\W*)(?:also\s+|just\s+)?(?:removed|deleted|dropped)\s+"
            r"(?:the\s+|all\s+|both\s+|th[eo]se\s+|this\s+|that\s+|its\s+|their\s+)?(?:[\w./-]+\s+){0,3}?"
            r"(?:files?|routes?|endpoints?|functions?|modules?|director(?:y|ies)|folders?|scripts?"
            r"|imports?|dependenc(?:y|ies)|tests?|specs?|handlers?|controllers?|components?"
            r"|migrations?|fixtures?|dead\s+code|branch(?:es)?)\b"
        ),
        tools=[
            r"^(?:Edit|MultiEdit|Write|NotebookEdit|apply_patch)$|edit|write|patch|str_replace"
            r"|delete|remove|trash|(?:^|_)rm(?:_|$)"
        ],
        # What removes a file or a part of one from a shell; a project's own tools (`php
        # artisan route:list`) only show.
        commands=(
            r"\b(?:rm|rmdir|unlink|shred|truncate|mv|sed|perl|awk|ed|patch|tee|cp|xargs)\b"
            r"|\bgit\s+(?:\S+\s+)*?(?:rm|mv|apply|am|checkout|restore|clean|reset|branch\s+-[dD]|push\b.*--delete)\b"
            r"|\b(?:python\d*(?:\.\d+)?|node|ruby|php\s+-r|bash|sh|zsh)\s+(?:-\S+\s+)*(?:-|<<|\S+\.(?:py|js|rb|sh))"
            r"|-delete\b|>\s*\S"
        ),
    ),
    Rule(
        name="edited the file",
        claim=(
            # "I've updated the config", or with no subject: "Updated the Dockerfile: ...".
            r"(?:\b(?:I|I've|I\s+have|we've)\s+|^\W*)(?:also\s+)?(?:updated|modified|edited|changed)\s+"
            r"(?:the\s+|your\s+|my\s+|this\s+)?(?:[\w.-]+\s+)?"
            r"(?:config(?:uration)?|settings|file|\.env|Makefile|Justfile|Dockerfile|README"
            # ... or a config file by its path ("I updated db/pool.yaml").
            r"|[\w./-]*\.(?:ya?ml|json|toml|ini|cfg|conf|properties|xml))\b"
        ),
        tools=[
            r"^(?:Edit|MultiEdit|Write|NotebookEdit|apply_patch)$|edit|write|patch|str_replace"
            # An agent's own config tool (`update_service_config`, `setFeatureSettings`).
            r"|(?:update|set|change|modify|put)_?\w*?(?:config|setting)"
        ],
        # Any shell command could have edited a file, but for one that only reads or runs the
        # tests (a test run after a failed edit does not make the edit).
        commands=rf"\A(?!{READ_ONLY_COMMAND}\Z)(?![^\n]*?(?:{TEST_COMMANDS}))",
    ),
)


# --- rules derived from an agent's own tool names ----------------------------------------------

# verb group -> (claim forms). A claim is a completed state change: "cancelled", "refund issued".
STATE_VERBS: dict[str, str] = {
    "cancel": r"cancell?ed|cancell?ation\s+(?:is\s+|has\s+been\s+|was\s+)?(?:complete|confirmed|"
    r"processed|done)",
    "refund": r"refunded|refunds?\s+(?:has\s+been\s+|have\s+been\s+|was\s+|were\s+|is\s+)?"
    r"(?:issued|processed|initiated|completed|sent)|issued\s+(?:a\s+|the\s+|your\s+)?"
    r"(?:full\s+|partial\s+)?refund",
    # ... "raised your limit to $50,000" (not "raised a ticket").
    "update": r"updated|changed|modified|edited"
    r"|(?:raised|increased|lowered|decreased|reduced)(?=\s+(?:[\w'\u2019-]+\s+){0,5}?to\s+[$\u20ac\u00a3\d])",
    "book": r"(?:re)?booked|reserved|booking\s+(?:is\s+|has\s+been\s+)?confirmed"
    r"|got\s+you\s+down"  # "we've got you down for Thursday at 2:30"
    r"|(?:put|placed)\s+(?:a\s+)?hold\s+on",  # "put a hold on one board": reserved it
    "add": r"added",
    "remove": r"removed|deleted|cleared",  # "the $4.50 in fines has been cleared"
    "send": r"sent|re-?sent|emailed|replied|responded|texted|messaged",
    "transfer": r"transferred",
    "create": r"created|opened|placed|set\s+up(?!\s+to\b)",  # "Exchange placed.", "set up autopay"
    "upgrade": r"upgraded",
    "downgrade": r"downgraded",
    "issue": r"issued",
    "charge": r"charged",
    "pay": r"paid",
    "close": r"closed",
    "assign": r"assigned",
    "approve": r"approved",
    "reject": r"rejected|declined",
    "schedule": r"(?:re)?scheduled|moved",  # "your appointment has been moved to Thursday"
    # "I've put in a repair request" (not "put in touch")
    # ... "we've put claim TC-88412 through" (not "put you through to billing").
    "submit": r"submitted|put\s+in(?!\s+(?!(?:a|an|the|your)\s)\S)"
    r"|put\s+(?!(?:you|him|her|them|me|us)\b)(?:[\w#-]+\s+){1,3}?through\b",
    "exchange": r"exchanged",
    "reset": r"reset",
    "block": r"blocked",
    "unblock": r"unblocked",
    "enable": r"enabled|(?:turned|switched)\s+on",  # "Paperless billing is turned on"
    "disable": r"disabled|(?:turned|switched)\s+off",
    "subscribe": r"subscribed",
    "unsubscribe": r"unsubscribed",
    "restore": r"restored",
    "archive": r"archived",
    "ship": r"shipped|on\s+(?:its|their)\s+way",  # "your refill is on its way"
    "return": r"returned",
    "freeze": r"frozen|froze",
    "start": r"started|underway|kicked\s+off",  # "the background check is underway"
    "unfreeze": r"unfrozen|unfroze",
    "lock": r"locked",
    "unlock": r"unlocked",
    "suspend": r"suspended",
    "activate": r"(?:re)?activated",
    "deactivate": r"deactivated",
    "revoke": r"revoked",
    "upload": r"uploaded",
    "share": r"shared",
    "log": r"logged",
    "grant": r"granted",
    "renew": r"renewed",
    "resolve": r"resolved",
    "reopen": r"reopened",
    "escalate": r"escalated",
    "acknowledge": r"acknowledged",
    "restart": r"restarted|rebooted",
    "rollback": r"rolled\s+back|reverted",
    "merge": r"merged",
    "publish": r"published",
    "install": r"installed",
    "uninstall": r"uninstalled",
    "apply": r"applied",
    "waive": r"waived",
    "void": r"voided",
    "adjust": r"adjusted",
    "extend": r"extended",
    "notify": r"notified",
    "page": r"paged",  # `page_oncall`: "I've paged the on-call engineer"
    "reverse": r"reversed",  # `reverse_fee`: "I've reversed the $35 overdraft fee"
    "port": r"ported",  # `submit_port_in`: "your number has been ported over"
    "file": r"(?:e-?)?filed|lodged",  # "We've lodged your appeal", "e-filed"
    # "You're registered for BIO 201", "I've signed you up for the 6 pm class" (`enroll_student`).
    "enroll": r"enrolled|registered|signed\s+(?:(?:you|him|her|them|me|us)\s+)?up\b",
    "withdraw": r"withdrawn",  # `withdraw_from_course`: "you've been withdrawn from ECON 310"
    "redeem": r"redeemed",
    "dispatch": r"dispatched",
    "release": r"released",
    "forward": r"forwarded",
    "invite": r"invited",
    "replace": r"replaced",
    "purge": r"purged",
    "pause": r"paused",
    "resume": r"resumed",
    "export": r"exported",
    "import": r"imported",
    "reroute": r"rerouted|redirected",
    "post": r"posted",
    "scale": r"scaled",
    "rotate": r"rotated",
    # Not "as requested" or "the refund you requested": what was asked, not what was done.
    # Nor a field's label ("Hours requested: 32").
    "request": r"(?<!\bas\s)(?<!\byou\s)requested(?!\W*:)",
    "dispute": r"disputed",
    "order": r"ordered",
    "swap": r"swapped|switched",
    "isolate": r"isolated",
    "quarantine": r"quarantined",
    "hold": r"held",  # `hold_at_location`: "your package is now being held at ..."
    "advance": r"advanced",  # `move_candidate_stage`: "has been advanced to the Onsite stage"
    "skip": r"skipped",  # `skip_delivery`: "Week of June 8 \u2014 skipped"
}
# States with no verb of their own ("the order is on hold"): said of a state that exists as often
# as of one just made, so only a described state (``DESCRIBED_STATE``), reported when the call
# that would have made it failed.
STATE_PHRASES: dict[str, str] = {"hold": r"on\s+hold"}
# Action nouns a reply says it completed ("I've processed the return", "I've completed your
# booking"): the verb group each stands for.
ACTION_NOUNS: dict[str, str] = {
    "return": "return",
    "refund": "refund",
    "exchange": "exchange",
    "cancellation": "cancel",
    "cancelation": "cancel",
    "booking": "book",
    "reservation": "book",
    "transfer": "transfer",
    "payment": "pay",
    "upgrade": "upgrade",
    "downgrade": "downgrade",
}
# Tool-name verbs that mean the same action as a claim verb.
VERB_ALIASES: dict[str, str] = {
    "change": "update",
    "modify": "update",
    "edit": "update",
    "set": "update",
    "delete": "remove",
    "reserve": "book",
    "email": "send",
    "resend": "send",
    "text": "send",
    "sms": "send",
    "open": "create",
    "make": "create",
    "place": "create",
    "process": "refund",
    "reschedule": "schedule",
    "move": "schedule",  # `move_appointment`: "your appointment has been moved / rescheduled"
    "undo": "rollback",
    "revert": "rollback",
    "reboot": "restart",
    "ack": "acknowledge",
    "terminate": "cancel",
    "clear": "remove",  # `clear_mfa_factors`, `clear_cart`
    "invalidate": "revoke",
    "reactivate": "activate",
    "register": "enroll",
    "efile": "file",  # `efile_federal_return`
    "lodge": "file",
}
_IRREGULAR = {
    "baggage": "bag",
    "baggages": "bag",
    "luggage": "bag",
    "bags": "bag",
    "sent": "send",
    "paid": "pay",
    "cancellation": "cancel",
    "cancelled": "cancel",
    "canceled": "cancel",
    "booking": "book",
    "bookings": "book",
    "addresses": "address",
}
_NAME_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def name_words(name: str) -> list[str]:
    """The words of a tool name, as written: `get_release_by_tag`, `getReleaseByTag` ->
    get, release, by, tag."""
    return [t for t in _NAME_SPLIT.split(name) if t]


_STOP = frozenset(
    {"to", "the", "a", "an", "of", "for", "by", "from", "with", "on", "in", "at", "and", "or"}
    | {"id", "ids", "all", "new", "my", "your", "details", "detail", "info", "user", "users"}
    | {"get", "list", "find", "search", "lookup"}
)
_READ_ONLY = frozenset(
    {"get", "list", "find", "search", "lookup", "fetch", "read", "query", "check", "calculate"}
    | {"compute", "think", "describe", "show", "view", "count", "validate", "verify"}
)


@lru_cache(maxsize=16_384)  # words recur in every night's replies; each is stemmed once
def stem(word: str) -> str:
    """Light stemming so `cancelled`, `cancellation` and `cancel` (or `bags`, `baggage`) meet."""
    w = word.lower()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for suffix, repl in (("ations", ""), ("ation", ""), ("ings", ""), ("ing", ""), ("ies", "y")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + repl
            break
    else:
        for suffix in ("ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
                w = w[: -len(suffix)]
                break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "s":
        w = w[:-1]
    return w


_VERB_BY_STEM = {stem(v): v for v in (*STATE_VERBS, *STATE_PHRASES)} | {
    stem(a): t for a, t in VERB_ALIASES.items()
}


# Tool-name verbs that make a record of an action (see ``tool_action``).
_MAKES = frozenset({"create", "submit"})


@dataclass(frozen=True)
class ToolAction:
    """What a domain tool's name says it does: a state-change verb and the objects it acts on."""

    name: str
    verbs: frozenset[str]
    objects: frozenset[str]


def reads_only(name: str) -> bool:
    """Whether a tool's name opens with a verb that only reads (`get_donor_gifts`,
    `searchOrders`, `calendar.get_filing_deadlines`: the last part of a dotted name is the
    tool's own): what its results report was done before."""
    tokens = name_words(name.rsplit("__", 1)[-1].rsplit(".", 1)[-1])
    return bool(tokens) and stem(tokens[0]) in _READ_ONLY


def tool_action(name: str) -> ToolAction | None:
    """The verb/object stems of a state-changing tool name, or None for read-only tools."""
    if reads_only(name):
        return None
    tokens = name_words(name.rsplit("__", 1)[-1])
    stems = [stem(t) for t in tokens]
    # The verb leads (`cancel_reservation`), trails (`reservationCancel`) or follows the
    # resource (`forms-submit-application`); the rest are objects.
    at = next(
        (i for i in (0, len(stems) - 1, *range(1, len(stems) - 1)) if stems[i] in _VERB_BY_STEM), -1
    )
    if at < 0:
        return None
    verb = _VERB_BY_STEM[stems[at]]
    objects = frozenset(
        s
        for i, (s, t) in enumerate(zip(stems, tokens, strict=True))
        if i != at and t.lower() not in _STOP and len(s) > 2
    )
    # Making an action's record is doing it: `create_booking` books ("your table is reserved"),
    # `submit_refund` refunds (the noun that ends the name is what is made: not the `payment`
    # of `create_payment_arrangement`).
    head = tokens[-1].lower()
    if verb in _MAKES and at == 0 and len(tokens) > 1 and head in ACTION_NOUNS:
        return ToolAction(name, frozenset({verb, ACTION_NOUNS[head]}), objects)
    return ToolAction(name, frozenset({verb}), objects)


# Tool-name verbs that name no change a reply could claim done: a reading, a judgement, a
# browser's steps, text the model may write itself ("I've drafted a reply below"), the
# harness's own steps (see ``tool_verb_action``).
_NOT_ACTION_WORDS = (
    "review analyze analyse assess evaluate inspect summarize summarise estimate quote "
    "preview simulate test track monitor poll ping echo explain suggest recommend classify "
    "detect predict translate parse render format diagnose audit forecast rank score match "
    "compare navigate click scroll type hover screenshot wait sleep retry handle call run "
    "execute use try ask answer say reply respond print load finish complete end stop exit "
    "handoff delegate think plan reflect note browse visit goto download write draft "
    "compose rewrite outline convert"
)
_NOT_ACTIONS = frozenset(stem(w) for w in _NOT_ACTION_WORDS.split())


def tool_verb_action(name: str) -> ToolAction | None:
    """A state-changing tool whose name opens with a verb the claims do not know
    (`redirect_shipment`, `transmit_ace_entry`, `initiate_acats_transfer`): that word is taken
    as its verb, the rest as its objects. Only a claim saying that very verb's participle ("has
    been redirected", "I've transmitted", "you're now dropped") is matched to it (see
    ``tool_verb_claims``), so a first word that is no verb matches nothing. None when the first
    word is a known verb (``tool_action`` reads the tool), a reading or no action."""
    tokens = name_words(name.rsplit("__", 1)[-1])
    if not tokens:
        return None
    word, stems = tokens[0].lower(), [stem(t) for t in tokens]
    verb = stems[0]
    if (
        len(word) < 4
        or not word.isalpha()
        or word in _STOP
        or verb in _VERB_BY_STEM
        or verb in _READ_ONLY
        or word in _READ_ONLY
        or verb in _NOT_ACTIONS
    ):
        return None
    pairs = zip(stems[1:], tokens[1:], strict=True)
    objects = frozenset(s for s, t in pairs if t.lower() not in _STOP and len(s) > 2)
    return ToolAction(name, frozenset({verb}), objects)


_PARTICIPLES = "|".join(f"(?:{form})" for form in STATE_VERBS.values())
_DESCRIPTIVE_AFTER = (
    r"(?!\s+(?:in|on|for|at|from|under|with|by|since|through|via|more|less|within|ago|"
    r"before|after|during|between|unless|because|pending|"
    r"as(?!\s+(?:well|requested|asked|agreed|planned|promised)\b))\b)"
)
_NOT_DESCRIBED = re.compile(_DESCRIPTIVE_AFTER, re.I)
# A time after "since": a date, a day, a month, a year or a time word.
_SINCE_TIME = (
    r"(?:\d|(?:the\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)"
    r"|last\b|yesterday\b|today\b|then\b|early\b|late\b|this\b|(?:the\s+)?(?:start|beginning|end)\b)"
)
# A completed state change needs a frame: "I (have) cancelled", "has been cancelled", "is now
# cancelled", "cancelled successfully", or a bare "Refund issued.". "was booked on May 12" and
# "the cancelled flight" describe, they do not claim.
_SUBJECT = (
    r"\b(?:I|we)(?:'ve|\s+have|\s+had|'d)?\s+"
    r"(?:successfully\s+|now\s+|just\s+|also\s+|already\s+|(?:went|gone)\s+ahead\s+and\s+)*"
    r"(?:re-(?=[a-z]))?"  # "I've re-sent the invoice": the verb after the prefix
)
_NOUNS = "|".join(ACTION_NOUNS)
# Words that do not open a subject: "Without anything added: ..." says nothing was; an
# auxiliary makes a described state ("Your flight is booked for May 12"), read as such.
_NOT_SUBJECT = r"(?!(?:without|no|not|nothing|never|none|is|are|was|were|be|been|has|have|had)\b)"
# A word of a subject left bare: a word, or an id or amount with its marks ("CC-10519: $124.50
# refunded"); not a field's label ("Status: cancelled").
_SUBJECT_WORD = r"(?:[\w-]+|[\w$.,:#-]*\d[\w$.,:#-]*)"
# A plan or tier named after "now on": checked against the tools whose objects the sentence names
# (`change_plan`, `update_line_plan`), whatever their verb.
_ON_PLAN = r"on\s+(?:the\s+|a\s+|your\s+)?(?:[\w+.-]+\s+){0,3}?(?:plan|tier)\b"
_NOUN_BEFORE = re.compile(rf"\b({_NOUNS})s?\s+\Z", re.I)
# An action noun a few words before the end, none of them ending its clause ("The exchange for
# order #W2378156 " before "is complete").
_NOUN_IN_CLAUSE = re.compile(
    rf"\b({_NOUNS})s?\b(?:\s+(?:[^\s.!?;:,]|\.(?=\S))+){{0,8}}?\s+\Z", re.I
)  # (a word may hold a dot: "$40.00")
PLAN_CHANGE = "plan change"
SUCCESS = "success"  # "went through", "is all set": the object's action, whatever its verb
VALUE_CHANGE = "value change"
AMOUNT_SET = "amount set"  # "is now $5,000": checked only on the tools that set what it names
STATE_CLAIM = re.compile(
    rf"{_SUBJECT}(?P<v1>{_PARTICIPLES})\b"
    # "I've added your note and closed the ticket": a second participle joined to the first.
    rf"(?:(?:\s+[^\s.!?;]+){{0,12}}?\s+and\s+(?:also\s+)?(?P<v6>{_PARTICIPLES})\b{_DESCRIPTIVE_AFTER})?"
    rf"|{_SUBJECT}(?:processed|completed|initiated|submitted|finali[sz]ed|confirmed|placed"
    r"|actioned|arranged|organi[sz]ed)\s+"  # "we've actioned the transfer of 40,000 miles"
    rf"(?:the\s+|your\s+|a\s+|an\s+)?(?:[\w-]+\s+){{0,2}}?(?P<v7>{_NOUNS})s?\b"
    # (Not a check: "I've confirmed reservation HP3D7R includes flight HAT176".)
    r"(?!\s+(?:[\w#*-]+\s+)?(?:includes?|is|are|has|have|shows?|contains?|was|were)\b)"
    # ... and passive: "Your return has been processed" (the noun before it, see `matched_verb`).
    r"|\b(?:has|have)\s+(?:now\s+|also\s+)?been\s+(?:successfully\s+)?"
    r"(?P<v18>processed|completed|initiated|submitted|finali[sz]ed|placed)\b"
    # "I got Nora's lesson moved to 4:30", "I got that changed for you": done through someone.
    r"|\b(?:I|we)(?:'ve|\s+have)?\s+(?:also\s+|just\s+)?got\s+(?:[\w'\u2019-]+\s+){1,5}?"
    rf"(?P<v20>{_PARTICIPLES})\b"
    # "You've been withdrawn", "you're enrolled": the user's own state, changed by the agent.
    r"|\b(?:has|have|(?<=you['\u2019])ve|(?<=[a-z]['\u2019])s(?=\s+been))\s+(?:now\s+|also\s+)?been"
    r"\s+(?:successfully\s+|now\s+|fully\s+|also\s+)*"
    # Not "has been suspended since Feb 18" (a state since a time), but "has been waived since
    # the outage was on our side" (a reason).
    rf"(?P<v2>{_PARTICIPLES})\b(?!\s+since\s+{_SINCE_TIME})"
    # "Case 00129384 is now closed with reason ...": "now" says it changed, whatever follows.
    r"|\b(?:is|are|(?<=you['\u2019])re)\s+(?:also\s+)?(?:now|successfully)\s+"
    r"(?:now\s+|successfully\s+|also\s+|being\s+)*"  # "is now being held at the Walgreens"
    rf"(?P<v12>{_PARTICIPLES})\b"
    # ("are both cancelled", not "are both paid: 2 x $50", which says what they cost).
    r"|\b(?:is|are|(?<=you['\u2019])re)\s+(?:also\s+)*(?P<both>both\s+)?"
    rf"(?P<v3>{_PARTICIPLES})\b{_DESCRIPTIVE_AFTER}(?(both)(?!\s*:))"
    # "Your line is now on the Saver plan", "you're now on Business": a plan change with no
    # verb of its own ("now" says it was just made; "is on the Pro plan" may be old news).
    rf"|\b(?:is|are|(?<=you['\u2019])re)\s+now\s+(?P<v11>{_ON_PLAN})"
    # "Its priority is now Urgent", "FQ8APE now has 2 checked bags": a value with no verb of its
    # own, checked against the tools on the object the sentence names (as a plan change is).
    # (Not "is now set to move ..." or "now set for flights ..."; an amount is a setting only of
    # what a tool sets, see `AMOUNT_SET`: "your limit is now $5,000", but "the flight is now
    # $412.40".)
    r"|\b(?:is|are)\s+now\s+(?!set\s+(?:to|for)\b)(?P<v13>(?:an?\s+)?[A-Za-z][\w-]*)"
    r"|\b(?:is|are)\s+now\s+(?P<v23>(?:[$\u20ac\u00a3]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?%))"
    r"|(?<=\bnow\s)has\s+(?P<v14>\d+\s+[a-z][\w-]*)"
    # "Your direct deposit now points to the new account", "the dashboard now refreshes every
    # morning": a new setting said in the present, checked as a value is.
    r"|\bnow\s+(?P<v22>(?:points|goes|routes|forwards|redirects|refreshes|renews|runs|ends|expires)\b)"
    rf"|\b(?P<v4>{_PARTICIPLES})\s+successfully\b"
    rf"|\b(?:was|were)\s+successfully\s+(?P<v9>{_PARTICIPLES})\b"
    # "Successfully reset your password", "Posted the update to #inc": the subject left out.
    # ... also after "Done —" / "All set:" ("Done — refunded $18.50 for the missing item").
    rf"|^\W*(?:(?:done|all\s+set|ok(?:ay)?)\s*[\u2014\u2013:,-]\s*)?(?:successfully\s+)?"
    rf"(?P<v10>{_PARTICIPLES})\s+"
    # ... an article, an id, an amount, a path (`/assets/*`) or a kebab-case name (`search-api`).
    r"(?:(?:the|your|a|an|it|them|all|both|one|two|three|four|five)\b|for\s+you\s*:"
    # (... not a date: "Booked 2024-05-14 21:07 EST" describes when.)
    r"|#?[A-Z]{2,}[-_]?\d[\w-]*|[$#]?\d(?![\d,.]*\d[-/]\d{1,2}[-/]\d)"  # "Closed #4411, #4412"
    r"|/[\w*.-]|from\s"  # "Downgraded from Growth to Starter"
    r"|(?-i:[a-z][a-z0-9]*(?:-[a-z0-9]+)+)\b)"
    rf"|^\W*(?:(?:done|all\s+set|ok(?:ay)?)\s*[\u2014\u2013:,-]\s*)?(?:your\s+|the\s+)?"
    rf"(?P<subj5>(?:{_NOT_SUBJECT}{_SUBJECT_WORD}\s+){{1,2}}?"
    r"(?:[\w$.,:#-]*\d[\w$.,:#-]*\s+)?)?"
    rf"(?P<id5>#?(?-i:[A-Z0-9])[\w-]*\d[\w-]*\s+)?(?P<v5>{_PARTICIPLES})"
    # "Refund issued: $42 ...", but not a field's label with no subject ("Booked: today");
    # "Travel notice added ✅ — ..."; "Exchange placed for the jacket", "Packet sent to x@y.de".
    r"(?:\s*[\u2705\u2713\u2714]\ufe0f?)?"
    r"(?:\s*[.!]*\s*\|?\s*$|(?(subj5)\s*[:;]\s|(?(id5)\s*[:;]\s|(?!)))|\s+[\u2014\u2013-]\s"
    r"|(?(subj5)\s*(?:\u2192|->)\s|(?!))"  # "Direct deposit updated \u2192 Chase checking"
    r"|(?(subj5)\s+(?:over\s+)?(?:for|to|from)\s|(?!)))"  # "Agenda sent over to Dana"
    # "Your payment plan went through.", "The lease renewal is all set.": success said of the
    # object, with no verb of its own (checked against the tools on the object it names).
    rf"|^\W*(?:your\s+|the\s+)?(?:{_NOT_SUBJECT}[\w-]+(?:\s+|(?=['\u2019]s\s))){{1,4}}?"
    r"(?P<v15>went\s+(?:through|out)|(?:is|are)\s+(?:now\s+)?all\s+set"
    # "Your freeze request has been actioned", "The duplicate charge has been taken care of".
    r"|(?:has|have)\s+been\s+(?:actioned|taken\s+care\s+of)"
    # "Credit note CN-2231 is out", "Offer letter's out to Daniel", "Code WELCOME15 is live".
    r"|(?:is|are|['\u2019]s)\s+(?:now\s+)?(?:out(?!\s+for\s+delivery)|live|on\s+order)"
    # "SIM swap complete ✅": an outcome ticked after what it names.
    r"|(?:complete|completed|done)(?=\s*[\u2705\u2713\u2714]))"
    r"(?:\s*[\u2705\u2713\u2714]\ufe0f?)?"
    r"(?:\s*[.!]*\s*$|\s*[:;,]\s|\s+[\u2014\u2013-]\s|\s+(?:to|at)\s)"  # "is live at https://..."
    # "You're all squared away for a whole blood donation on Saturday": the same, of the user.
    r"|\b(?:(?<=you['\u2019])re|(?<=you\s)are)\s+(?:now\s+)?"
    r"(?P<v21>all\s+(?:set|squared\s+away))\s+for\b"
    # "The exchange for order #W23 is complete", "Your new booking on HAT202 is confirmed": an
    # action noun's outcome, a few words after it (see `matched_verb`).
    r"|\b(?:is|are|has\s+been|have\s+been)\s+(?:now\s+|all\s+|fully\s+)?"
    r"(?P<v19>complete|completed|done|confirmed|processed|finali[sz]ed|good\s+to\s+go)\b"
    # "- ✅ Added to Finance-AP and VPN-Users groups": a participle opening a checked item.
    rf"|^\s*(?:[-*+\u2022]\s+)?(?:\*\*)?[\u2705\u2713\u2714]\ufe0f?\s*(?:\*\*)?(?P<v16>{_PARTICIPLES})\b",
    _I,
)


# An item's label and its outcome, as a summary lists them ("Refund: done — $42 back to your
# Visa", "Device unlock: ✅ done", "Late checkout: added ✔"): a claim about the object the label
# names, checked only against tools on that object (a field's label, "Status: cancelled", names
# none).
LABEL_CLAIM = re.compile(
    r"^\W*(?P<label>[A-Za-z][\w '&/-]{1,40}?)(?:\s*:|\s+[\u2014\u2013]|\s*(?:\u2192|->))\s*"
    r"(?:[\u2705\u2714\u2713\u2611]\ufe0f?\s*)?"
    rf"(?:(?P<v>{_PARTICIPLES})|done|completed?)\b(?!\s+(?:by|on|at|in)\b)",
    _I,
)
LABEL = "label"  # the verb group of a `LABEL_CLAIM` that says only "done"


# "Your table is booked for Saturday", "You're booked with Dr. Okafor": said of a booking that
# exists, too ("your flight is booked for May 12"), so it is no claim of its own; but after the
# matching tool failed, with no later success, it states what did not happen.
DESCRIBED_STATE = re.compile(
    rf"\b(?:is|are|you(?:'re|\u2019re|\s+are)|(?:she|he|it)(?:'s|\u2019s))\s+(?:now\s+|all\s+|also\s+)?"
    rf"(?P<v>{_PARTICIPLES}|{'|'.join(STATE_PHRASES.values())})\b",
    _I,
)


# Where a ``STATE_CLAIM`` match can start, but for the branches anchored at the start or holding
# "successfully": the first letter of the word I, we, has, have, is, are or now, or the "re" of
# "you're" and the "ve" of "you've". Starting with a character class, it lets the regex engine
# skip to those letters (the pattern itself would be tried at every position).
_STATE_AT = re.compile(
    r"[ahiwrvn](?<!\w[ahiwrvn])(?:(?<=i)s?|(?<=w)e|(?<=h)a(?:s|ve)|(?<=a)re|(?<=r)e|(?<=v)e"
    r"|(?<=n)ow)\b"
    r"|(?<=[a-z]['\u2019])s(?=\s+been\b)",  # "She's been added"
    _I,
)


def state_claims(sentence: str, low: str | None) -> list[re.Match[str]]:
    """``STATE_CLAIM.finditer(sentence)``; ``low`` is ``folded(sentence)``."""
    if low is None or "successfully" in low:
        return list(STATE_CLAIM.finditer(sentence))
    first = STATE_CLAIM.match(sentence)  # `^...` matches only here
    if first is None:
        return scan(STATE_CLAIM, _STATE_AT, sentence)
    return [first, *scan(STATE_CLAIM, _STATE_AT, sentence, first.end())]


def matched_verb(match: re.Match[str]) -> str | None:
    """The verb group of a ``STATE_CLAIM`` match (`has been cancelled` -> `cancel`)."""
    if match.group("v7"):
        return ACTION_NOUNS.get(match.group("v7").lower())
    if match.group("v18"):
        # "Your return has been processed", "The return for order #W48 has been processed".
        noun = _action_noun_before(match)
        return noun or claim_verb(match.group("v18"))  # "The form has been submitted"
    if match.group("v19"):
        # "Late checkout at 2:00 PM is confirmed": with no action noun, the success of what
        # the clause names (checked against the tools on it, as "went through" is), unless it
        # reads as a description ("Seat 23C is confirmed under your name").
        noun = _action_noun_before(match)
        if noun is None and _NOT_DESCRIBED.match(match.string, match.end()):
            return SUCCESS
        return noun
    if match.group("v11"):
        return PLAN_CHANGE
    if match.group("v23"):
        return AMOUNT_SET
    if match.group("v13") or match.group("v14") or match.group("v22"):
        return VALUE_CHANGE
    if match.group("v15") or match.group("v21"):
        return SUCCESS
    said = next(
        g for g in match.group("v1", "v2", "v3", "v12", "v4", "v5", "v9", "v10", "v16", "v20") if g
    )
    return claim_verb(said)


def _action_noun_before(match: re.Match[str]) -> str | None:
    """The verb group of the action noun right before ``match`` ("Your return has been ..."),
    else of one a few words before it in its clause ("The exchange for order #W23 is ...")."""
    text, at = match.string, match.start()
    noun = _NOUN_BEFORE.search(text, max(0, at - 40), at) or _NOUN_IN_CLAUSE.search(
        text, max(0, at - 80), at
    )
    return ACTION_NOUNS.get(noun.group(1).lower()) if noun is not None else None


def joined_verb(match: re.Match[str]) -> str | None:
    """The verb group of the participle joined to a ``STATE_CLAIM`` match (`I've added X and
    closed Y` -> `close`), or None."""
    said = match.group("v6")
    return claim_verb(said) if said else None


def claim_verb(text: str) -> str | None:
    """The verb group of a state-change form (`cancelled` -> `cancel`)."""
    if text in _CLAIM_VERBS:
        return _CLAIM_VERBS[text]
    found = next((v for v, form in _STATE_FORMS if form.fullmatch(text)), None)
    if len(_CLAIM_VERBS) < 10_000:
        _CLAIM_VERBS[text] = found
    return found


_STATE_FORMS = [
    (verb, re.compile(f"{STATE_VERBS[verb]}|{form}" if verb in STATE_VERBS else form, _I))
    for verb, form in (STATE_VERBS | STATE_PHRASES).items()
]
# Form as said -> its verb group (seeded with the forms whose pattern looks past the word:
# "raised" is an update only before "to <amount>", which ``STATE_CLAIM`` has checked).
_RAISED = ("raised", "increased", "lowered", "decreased", "reduced")
_CLAIM_VERBS: dict[str, str | None] = {
    w: "update" for w in (*_RAISED, *(w.title() for w in _RAISED))
}


# The frames of ``STATE_CLAIM`` with any participle in place of a known one: a claim in a verb
# only an agent's own tools name ("Your package has been redirected" <-> `redirect_shipment`).
_ANY_PARTICIPLE = r"(?P<{}>(?:re-)?[a-z]{{3,}}(?:ed|en))\b"
TOOL_VERB_CLAIM = re.compile(
    _SUBJECT
    + _ANY_PARTICIPLE.format("g1")
    + r"|\b(?:has|have|(?<=you['\u2019])ve|(?<=[a-z]['\u2019])s(?=\s+been))\s+"
    r"(?:now\s+|also\s+)?been\s+"
    r"(?:successfully\s+|now\s+|fully\s+|also\s+)*"
    + _ANY_PARTICIPLE.format("g2")
    + r"|\b(?:is|are|(?<=you['\u2019])re)\s+(?:also\s+)?(?:now|successfully)\s+"
    r"(?:now\s+|successfully\s+|also\s+)*"
    + _ANY_PARTICIPLE.format("g3")
    + r"|\b(?:was|were)\s+successfully\s+"
    + _ANY_PARTICIPLE.format("g4")
    # "All three payouts are reconciled" (not "are reconciled by finance", "is provisioned in").
    + r"|\b(?:is|are)\s+(?:also\s+|all\s+)?"
    + _ANY_PARTICIPLE.format("g6")
    + _DESCRIPTIVE_AFTER
    + r"|^\W*(?:(?:done|all\s+set|ok(?:ay)?)\s*[\u2014\u2013:,-]\s*)?(?:successfully\s+)?"
    + _ANY_PARTICIPLE.format("g5")
    + r"\s+(?:the|your|a|an|it|them|all|both)\b",
    _I,
)


def tool_verb_claims(sentence: str, verbs: frozenset[str]) -> list[tuple[int, int, str]]:
    """The spans (start, end, as said) of ``TOOL_VERB_CLAIM`` in ``sentence`` whose participle
    is one of ``verbs`` (stems of ``tool_verb_action`` verbs; "re-issued" is "reissue")."""
    found = []
    for m in TOOL_VERB_CLAIM.finditer(sentence):
        group = next(g for g in ("g1", "g2", "g3", "g4", "g5", "g6") if m.group(g))
        word, at = m.group(group).lower(), m.start(group)
        forms = {stem(word.replace("-", "")), stem(word.rsplit("-", 1)[-1])}
        if sentence[max(0, at - 3) : at].lower() == "re-":
            forms.add(stem("re" + word))
        if forms & verbs:
            found.append((m.start(), m.end(), m.group(0)))
    return found


_WORD = re.compile(r"[A-Za-z]+")


def sentence_stems(sentence: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(sentence))
