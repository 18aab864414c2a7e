"""Claims about a command or a file the reply names in inline code: "`go vet` is clean", "I also
ran `bundle exec rspec`", "`cargo fmt` and `cargo clippy` both came back clean", "I also updated
`apps/api/Dockerfile`", "Deleted `scripts/deploy_v1.sh`".

Coding agents name the check they ran by its command more often than by a noun the rule pack
knows ("lint passes"). The prose ``action_claims`` reads replaces inline code with CODE, so these
claims are found here, on the sentence as written, and checked against the calls that ran that
command:

- the command is read from the span: its program (a known developer tool, or one a shell call of
  the session ran) and its subcommand words (`cargo clippy`, `bundle exec rspec`, `go vet`,
  `python -m pytest`), not its flags or paths;
- a call runs it when one of its simple commands (split at `&&`, `;`, `|`) holds those words in
  order (`cd api && cargo clippy --all-targets 2>&1 | tail` runs `cargo clippy`);
- the claim is unbacked when no call ran it and no shell step so much as mentions its last word
  (a wrapper such as `make lint` may run `cargo clippy` and echo it); contradicted when it says
  the command succeeded ("is clean", "passes", "came back clean") and the last run of it failed.

A failed run is told by the default rules that decide the call (a test or lint run's failure
lines, even behind `| tail`), else by the result's error flag, exit code or error body.

A file (a path, a name with a known extension, `Dockerfile`) said to be updated, created, deleted
or regenerated needs a call that names it and does not only read it (an edit, a write, `git rm`,
a patch); any shell step that may write files without naming them (`npm install` rewrites the
lockfile, `make generate`) backs it too. Only a tests, lint or type run, or a command that only
reads, cannot have touched it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import takewhile


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Programs a reply may name as a check it ran. A span whose program is not here still counts
# when a shell call of the session ran that program (a project's own `./scripts/check.sh`).
PROGRAMS = _words(
    """
    pytest py.test tox nox unittest jest vitest mocha karma ava playwright cypress phpunit pest
    rspec rake bundle rails ctest cmake ninja bazel bazelisk buck2 pants make gmake just task go
    gofmt golangci-lint staticcheck govulncheck cargo rustc rustfmt clippy-driver npm npx yarn
    pnpm bun bunx deno node tsc eslint prettier biome stylelint tslint python python3 uv uvx
    poetry pipenv pdm hatch rye pip pip3 ruff mypy pyright pylint flake8 black isort bandit
    pre-commit coverage alembic mix elixir iex gradle gradlew mvn mvnw ant sbt kotlinc ktlint
    detekt dotnet msbuild nuget swift swiftlint swiftformat xcodebuild fastlane pod flutter dart
    composer php artisan terraform tofu tflint terragrunt pulumi kubectl helm kustomize docker
    podman skaffold ansible-playbook ansible packer shellcheck hadolint actionlint markdownlint
    yamllint sqlfluff dbt flyway liquibase git gh phpstan psalm phpcs php-cs-fixer pint rubocop
    standardrb brakeman sorbet credo dialyzer golint revive gosec semgrep trivy checkov tfsec
    cfn-lint clang-tidy clang-format cppcheck cpplint luacheck stylua hlint ktfmt scalafmt
    """
)
# Runners that take the program to run as their next words: their key keeps it.
_RUNNERS = {
    "bundle": ("exec",),
    "npm": ("run", "exec"),
    "yarn": ("run", "exec", "dlx"),
    "pnpm": ("run", "exec", "dlx"),
    "bun": ("run", "x"),
    "uv": ("run", "tool"),
    "poetry": ("run",),
    "pipenv": ("run",),
    "pdm": ("run",),
    "hatch": ("run",),
    "rye": ("run",),
    "dotnet": ("tool",),
    "php": ("artisan",),  # `php artisan migrate`
}
_PYTHONS = frozenset({"python", "python3"})
# Programs whose every word after them is an argument (`eslint src`, `mypy app`).
_NO_SUBCOMMAND = _words(
    """
    pytest py.test jest vitest mocha karma ava phpunit pest rspec tsc eslint prettier stylelint
    tslint mypy pyright pylint flake8 black isort bandit rustfmt gofmt staticcheck shellcheck
    hadolint actionlint markdownlint yamllint swiftlint swiftformat ktlint detekt rustc
    """
)
_WRAPPERS = frozenset({"sudo", "time", "env", "nice", "command", "exec", "npx", "uvx", "bunx"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_WORD = re.compile(r"[a-z][\w:.+-]*")  # a subcommand word: no path, flag, glob or quote
_PY_VERSION = re.compile(r"(python|pip)\d+(?:\.\d+)*")
_SEPARATORS = re.compile(r"&&|\|\||[;|\n()]")
_SPAN = re.compile(r"`([^`\n]+)`")
_PROGRAM_NAME = re.compile(r"[a-z0-9][a-z0-9_.+-]*")


@dataclass(frozen=True, slots=True)
class Command:
    """A command a reply names: the words a call must run, and its arguments (paths, names)."""

    key: tuple[str, ...]
    args: tuple[str, ...]
    written: str

    @property
    def last_word(self) -> str:
        return self.key[-1]


def _subcommand(program: str, word: str) -> bool:
    """Whether ``word`` is a subcommand (`vet`, `run`, `test:unit`), not a path or a file."""
    return bool(_WORD.fullmatch(word)) and "." not in word


def _program(token: str) -> str:
    """A program as a call may write it: no path, no version (`./gradlew`, `python3.12`)."""
    name = token.rsplit("/", 1)[-1]
    found = _PY_VERSION.fullmatch(name)
    return found.group(1) if found else name


def _tokens(command: str) -> list[str]:
    """The words of one simple command, from its program on (assignments and wrappers off)."""
    tokens = command.split()
    if "#" in command:  # a comment ends the command
        tokens = list(takewhile(lambda t: not t.startswith("#"), tokens))
    k = 0
    while k < len(tokens) and (
        _ASSIGNMENT.match(tokens[k]) or _program(tokens[k]) in _WRAPPERS or tokens[k] == "-y"
    ):
        k += 1
    return [_program(tokens[k]), *tokens[k + 1 :]] if k < len(tokens) else []


def named_command(span: str) -> Command | None:
    """The command an inline-code span may name, or None when it names none (a path, a value,
    a class). Whether its program is one is settled against the session (``is_program``)."""
    if span.count(" ") > 12 or _SEPARATORS.search(span):
        return None  # a pipeline or a long line: quoted output, not the name of a check
    tokens = _tokens(span)
    if not tokens or not _PROGRAM_NAME.fullmatch(tokens[0]):
        return None
    program, rest = tokens[0], tokens[1:]
    key = [program]
    if program in _PYTHONS and rest[:1] == ["-m"] and len(rest) > 1:
        key += rest[:2]  # `python -m pytest`
        rest = rest[2:]
    elif program in _PYTHONS and rest and rest[0].endswith(".py"):
        key.append(rest.pop(0))  # `python manage.py migrate`
        if rest and _subcommand(program, rest[0]):
            key.append(rest.pop(0))
    elif program not in _NO_SUBCOMMAND and rest and _subcommand(program, rest[0]):
        key.append(rest.pop(0))  # `cargo clippy`, `go vet`, `make check`
        if key[1] in _RUNNERS.get(program, ()) and rest and _subcommand(program, rest[0]):
            key.append(rest.pop(0))  # `bundle exec rspec`, `npm run lint`
    # What narrows the run to part of the work: paths, files, test ids (not flags' values).
    args = tuple(t for t in rest if not t.startswith("-") and ("/" in t or "." in t or "::" in t))
    if program in _ENV_RUNNERS:  # `tox -e py311`: the environments it ran, not every one
        args += tuple(m.group(1) or m.group(2) for m in _ENV_CHOICE.finditer(" ".join(rest)))
    return Command(tuple(key), args, span)


# Runners of named environments or sessions, and how a command picks them (`-e py311,lint`,
# `--env=py311`, `-s tests`).
_ENV_RUNNERS = frozenset({"tox", "nox"})
_ENV_CHOICE = re.compile(
    r"(?:^|\s)(?:-e|-s|--env|--sessions?)(?:\s+|=)([^\s-][^\s]*)|(?:^|\s)-e(\w[^\s]*)"
)


@lru_cache(maxsize=4096)
def simple_commands(command: str) -> tuple[tuple[str, ...], ...]:
    """The simple commands of a shell command, each as its words (program first)."""
    return tuple(tuple(words) for part in _SEPARATORS.split(command) if (words := _tokens(part)))


def is_program(named: Command, ran: set[str]) -> bool:
    """Whether ``named`` is a command: a known tool, or a program a call of the session ran."""
    return named.key[0] in PROGRAMS or named.key[0] in ran


def runs(named: Command, command: str) -> bool:
    """Whether the shell ``command`` runs ``named``: a simple command holds its key in order."""
    key = named.key
    for words in simple_commands(command):
        if key[0] not in words:
            continue
        at = words.index(key[0])
        for word in key[1:]:
            try:
                at = words.index(word, at + 1)
            except ValueError:
                break
        else:
            return True
    return False


def same_arguments(named: Command, command: str) -> bool:
    """Whether ``command`` names every argument the reply's span named (a test file, a path)."""
    return all(arg in command for arg in named.args)


# --- which sentences claim a named command ran, or ran clean -----------------------------------

CMD = "CMD"
_SUCCESS = (
    r"(?:clean(?:ly)?|green|passing|pass(?:es|ed)?|succeed(?:s|ed)?|successful(?:ly)?|"
    r"ok(?:ay)?\b|fine\b|happy\b|\u2705|\u2713|\u2714|"
    r"(?:with\s+)?(?:no|zero|0)\s+(?:issues|errors|warnings|failures|problems|findings|"
    r"diagnostics|offen[cs]es|complaints|lint)|without\s+(?:issues|errors|warnings|failures))"
)
_FILLER = (
    r"(?:is|are|was|were|now|all|both|still|also|again|came|comes|come|back|returns?|returned|"
    r"runs?|ran|exits?|exited|reports?|reported|looks?|stays?|remains?|fully|completely|"
    r"cleanly|green|locally|too|completed?|completes|finished|finishes)"
)
# After a mark (`:`, `|`, a dash) only a status: "`mypy src/` | ✅ no issues", not "— pass CMD".
_STATUS = (
    r"(?:clean|green|passed|passing|passes|succeeded|successful|ok(?:ay)?|\u2705|\u2713|\u2714|"
    # "`dotnet test` \u2014 148 passed, 0 failed" (not "3 passed, 2 failed")
    r"[1-9][\d,]*\s+(?:tests?\s+)?passed(?!\s*,\s*[1-9])|"
    r"(?:no|zero|0)\s+(?:issues|errors|warnings|failures|problems|findings|diagnostics|"
    r"offen[cs]es|complaints))"
)
_FILE_VERBS = (
    r"(?i:updated|edited|modified|changed|created|added|wrote|rewrote|re-?written|written|"
    r"deleted|removed|renamed|moved|re-?generated|generated|replaced|patched|refactored)"
)
_ADVERBS = r"(?:(?:also|then|just|now|again|already|first|finally|both|quickly)\s+)*"


def _claim_patterns(span: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The two claim forms, with commands written as ``span`` (CMD in a sentence's shape, or
    inline code in raw text), and the first one's tail: what follows its first command."""
    # A run of commands: "CMD", "CMD and CMD", "CMD, CMD and CMD".
    cmds = rf"{span}(?:\s*(?:,|&|and|plus|then)\s*(?:then\s+)?{span})*"
    shaped = span == CMD
    not_object = r"(?!\s+(?:CMD|CODE|the|a|an|to|for|with)\b)" if shaped else ""
    opens = r"^\W*" if shaped else r"\b"  # raw text: a sentence may start mid-line
    # "`go vet` is clean", "`cargo fmt` and `cargo clippy` both pass", "`npm test` passes".
    said = (
        rf"(?:(?:\s+{_FILLER}){{0,6}}?\s+{_SUCCESS}"
        rf"|(?:\s*\))?\s*(?:[:|\u2014\u2013\u2192]|->|\s-)\s*{_STATUS}{not_object})"
    )
    clean = re.compile(rf"(?P<cmds>{cmds}){said}", re.I)
    more = rf"(?:\s*(?:,|&|and|plus|then)\s*(?:then\s+)?{span})*"
    tail = re.compile(more + said, re.I)
    # "I ran `bundle exec rspec`", "I've also run `cargo fmt` and `cargo clippy`", "Ran `make`".
    ran = re.compile(
        rf"(?:\b(?:I|[Ww]e)(?:(?:'ve|\s+have)\s+{_ADVERBS}(?i:run|re-?run|ran|executed|re-?executed)"
        rf"|\s+{_ADVERBS}(?i:ran|re-?ran|executed|re-?executed))"
        rf"|{opens}(?i:ran|re-?ran|executed|re-?executed)"
        # "Restarted the service with `systemctl restart x`", "Code style fixed with `pint`".
        rf"|\b(?i:[a-z]{{3,}}ed)(?:\s+(?!{span}|CODE\b|FILE\b)[\w'-]+){{0,4}}?\s+(?i:with|via|using))"
        rf"\s+(?:it\s+with\s+|the\s+\w+\s+with\s+)?(?P<cmds>{cmds})",
    )
    return clean, ran, tail


_CLEAN, _RAN, _ = _claim_patterns(CMD)
_, _ANY_RAN, _ANY_TAIL = _claim_patterns(r"`[^`\n]+`")
# What may follow a backtick that closes a command a claim names (see ``_ANY_TAIL``): the
# first word or mark after blanks and a ")"; and the verbs that may come right before one that
# opens it ("ran `x`", "ran it with `x`").
_NEXT_WORDS = (
    "is are was were now all both still also again came come back return run ran exit report "
    "look stay remain fully completely clean green locally too pass succe ok fine happy with "
    "complet finish "
    "no zero 0 and plus then : | \u2014 \u2013 \u2192 , & - \u2705 \u2713 \u2714"
)
_NEXT = tuple(_NEXT_WORDS.split())
_VERB_BEFORE = tuple(
    f"{verb}{blank}"
    for word in ("ran", "run", "executed", "with", "via", "using")
    for verb in (word, word.capitalize(), word.upper())
    for blank in (" ", "\t", "\n", "\u00a0")
)


def may_claim(text: str) -> bool:
    """Whether ``text`` (a reply, its code blocks and all) may hold a claim ``claims_in`` finds:
    most replies with inline code claim no command ran, and are left here at little cost (a
    look at each span's neighbours; the claim patterns only where one may be)."""
    find = text.find
    at = find("`")
    while at >= 0:
        close = find("`", at + 1)
        if close < 0:
            return False
        span = text[at + 1 : close]
        if "\n" in span:  # no span: the next backtick may open one
            at = close
            continue
        # After it, a status ("`go vet` is clean"); before it, "ran" or a file claim's verb.
        after = text[close + 1 : close + 24].lstrip(" \t\n\u00a0)").lower()
        if after.startswith(_NEXT) and _ANY_TAIL.match(text, close + 1):
            return True
        before = text[max(0, at - 80) : at]
        if before.endswith(_VERB_BEFORE) and _ANY_RAN.search(text, max(0, at - 80), close + 1):
            return True
        if (
            ("/" in span or "." in span or span in _FILE_NAMES)
            and _file_word_before(before)
            and _FILE_VERB_NEAR.search(before)
        ):
            return True
        at = find("`", close + 1)
    return False


# A file claim's verb, before the file it names (see ``_FILE_CLAIM``); the word right before
# the file is its verb (all but "wrote" and "written" end in "ed") or one of these.
_FILE_VERB_NEAR = re.compile(_FILE_VERBS)
_BEFORE_FILE = _words(
    "wrote rewrote written re-written in to into inside within from under the a an new file "
    "files script scripts config and & , plus also"
)


def _file_word_before(before: str) -> bool:
    """Whether the word before a file may end a file claim's words before it: its verb, a
    preposition ("a retry in `x.py`"), an article or "file"."""
    words = before[-24:].split()
    if not words:
        return False
    word = words[-1].lower()
    return word.endswith("ed") or word in _BEFORE_FILE


_SUCCESS_AFTER = re.compile(rf"\b{_SUCCESS}|(?<!\w)(?:\u2705|\u2713|\u2714)", re.I)
_FAILURE_AFTER = re.compile(
    r"\b(?:[1-9]\d*\s+(?:\w+\s+)?(?:failures?|failed|failing|errors?|warnings?|issues?|"
    r"problems?|offen[cs]es)|(?<!\b0\s)(?<!\bno\s)fail(?:s|ed|ing|ure)?\b|broken|red\b|"
    r"not\s+clean)",
    re.I,
)
# The claim is CI's, not the agent's ("`npm test` passes in CI", "the pipeline ran `make`").
_ABOUT_CI = re.compile(
    r"\b(?:CI|pipeline|workflow|GitHub\s+Actions|Buildkite|Jenkins|CircleCI|GitLab)\b"
)
# Words right after the claim that make it a report of another time or place.
_ELSEWHERE_AFTER = re.compile(
    r"\W*(?:yet\b|except\b|apart\s+from\b|other\s+than\b|if\b|once\b|when\b|before\b|"
    r"previously\b|earlier\b|originally\b|on\s+(?:main|master)\b|in\s+CI\b|after\s+you\b)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class CommandClaim:
    """A sentence's claim about named commands: which, whether it says they ran clean, and
    where the claim lies in ``shape`` (the sentence with each command span as CMD)."""

    commands: tuple[Command, ...]
    success: bool
    shape: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class FileClaim:
    """A sentence's claim that files it names were changed ("I also updated `Dockerfile`"):
    the files as written, the verb, and where the claim lies in ``shape`` (files as FILE)."""

    files: tuple[str, ...]
    verb: str
    shape: str
    start: int
    end: int


FILE = "FILE"
# What a file's name ends in. A curated list: `user.save` or `os.path` name no file.
_EXTENSIONS = _words(
    """
    py pyi ipynb ts tsx js jsx mjs cjs json jsonc yaml yml toml lock md mdx rst txt ini cfg conf
    env rb erb go mod sum rs java kt kts gradle scala cs csproj sln fs php sh bash zsh ps1 sql
    html htm css scss sass less vue svelte swift m h c cc cpp hpp xml plist proto tf tfvars hcl
    properties ex exs eex heex erl dart lua r pl gemspec podspec dockerfile j2 tmpl tpl graphql
    gql prisma csv tsv ipynb nix bzl cmake mk
    """
)
_FILE_NAMES = _words(
    """
    Dockerfile Containerfile Makefile GNUmakefile Justfile Gemfile Rakefile Procfile Brewfile
    Jenkinsfile Vagrantfile Caddyfile Tiltfile CODEOWNERS LICENSE README CHANGELOG
    """
)
_PATH = re.compile(r"[\w.@~+-]*(?:/[\w.@+-]+)+/?|[\w.@+-]+/")
_LINE_SUFFIX = re.compile(r"(?::\d+(?:[:-]\d+)?|#L\d+(?:-L?\d+)?)$")


def named_file(span: str) -> str | None:
    """The file (or folder) an inline-code span names, or None: a path, a name with a known
    extension, a dotfile or a well-known name (`Dockerfile`); a line suffix (`:42`) dropped."""
    span = _LINE_SUFFIX.sub("", span.strip())
    if not span or any(c in span for c in " \t()=,;*\"'<>") or "://" in span:
        return None
    if span.startswith("-") or span.startswith("$"):
        return None
    base = span.rstrip("/").rsplit("/", 1)[-1]
    if "/" in span and _PATH.fullmatch(span) and any(c.isalpha() for c in base):
        return span
    if base in _FILE_NAMES or (base.startswith(".") and len(base) > 2 and base[1].isalpha()):
        return span
    stem, dot, extension = base.rpartition(".")
    return span if dot and stem and extension.lower() in _EXTENSIONS else None


def file_base(written: str) -> str:
    """What a call that touches the file names at least: its last part (`Dockerfile`)."""
    return _LINE_SUFFIX.sub("", written).rstrip("/").rsplit("/", 1)[-1]


def shape_of(sentence: str) -> tuple[str, list[Command], list[str]]:
    """The sentence with each file span as FILE, each command span as CMD and other spans as
    CODE; the commands and the files."""
    commands: list[Command] = []
    files: list[str] = []

    def repl(m: re.Match[str]) -> str:
        span = m.group(1).strip()
        if " " not in span and (file := named_file(span)) is not None:
            files.append(file)
            return FILE
        named = named_command(span)
        if named is None:
            return "CODE"
        commands.append(named)
        return CMD

    return _SPAN.sub(repl, sentence), commands, files


_FILES = rf"{FILE}(?:\s*(?:,|&|and|plus)\s*(?:(?i:also)\s+)?(?:the\s+)?{FILE})*"
# "I also updated `apps/api/Dockerfile`", "Deleted `a.sh` and `b.sh`", "Added a retry in `x.py`".
_FILE_CLAIM = re.compile(
    rf"(?:\b(?:I|[Ww]e)(?:'ve|\s+have)?\s+{_ADVERBS}|^\W*(?:(?i:also)\s+)?)(?P<verb>{_FILE_VERBS})"
    r"\s+(?:(?:[\w'-]+\s+){0,6}?(?i:in|to|into|inside|within|from|under)\s+)?"
    rf"(?:(?i:the|a|an|new)\s+)?(?:(?i:files?|scripts?|config)\s+)?(?P<files>{_FILES})"
)


def claims_in(sentence: str) -> list[CommandClaim | FileClaim]:
    """The claims about named commands and files in one sentence (as written, inline code in
    it)."""
    shape, commands, files = shape_of(sentence)
    found: list[CommandClaim | FileClaim] = []
    if files:
        for m in _FILE_CLAIM.finditer(shape):
            first = shape.count(FILE, 0, m.start("files"))
            count = m.group("files").count(FILE)
            named = tuple(files[first : first + count])
            found.append(FileClaim(named, m.group("verb").lower(), shape, m.start(), m.end()))
    if commands:
        found += [c for c in _command_claims(shape, commands) if not _about_ci(shape, c.start)]
    return found


_CI_BREAK = re.compile(r"[;\u2014\u2013]|\s-\s")


def _about_ci(shape: str, start: int) -> bool:
    """Whether the clause of ``shape`` holding the claim at ``start`` speaks of CI ("`npm test`
    passes in CI"; not "`mix test` is green now \u2014 the CI job should pass")."""
    cuts = [m.end() for m in _CI_BREAK.finditer(shape, 0, start)]
    after = _CI_BREAK.search(shape, start)
    end = after.start() if after else len(shape)
    return _ABOUT_CI.search(shape, cuts[-1] if cuts else 0, end) is not None


def _command_claims(shape: str, commands: list[Command]) -> list[CommandClaim]:
    found: list[CommandClaim] = []
    for pattern, success in ((_RAN, False), (_CLEAN, True)):
        for m in pattern.finditer(shape):
            first = shape.count(CMD, 0, m.start("cmds"))
            count = m.group("cmds").count(CMD)
            named = tuple(commands[first : first + count])
            claimed_from = m.start() if pattern is _RAN else m.start("cmds")
            if not success:  # "I ran X, and both came back clean": the rest may say how it went
                rest = shape[m.end() :]
                success = bool(_SUCCESS_AFTER.search(rest)) and not _FAILURE_AFTER.search(rest)
            found.append(CommandClaim(named, success, shape, claimed_from, m.end()))
            success = pattern is _CLEAN
    # One claim per command: "I ran `x` and `x` is clean" is the clean one.
    out: list[CommandClaim] = []
    seen: set[tuple[str, ...]] = set()
    for claim in sorted(found, key=lambda c: not c.success):
        fresh = tuple(c for c in claim.commands if c.key not in seen)
        seen.update(c.key for c in fresh)
        if fresh:
            out.append(CommandClaim(fresh, claim.success, shape, claim.start, claim.end))
    return out


# A reason or a report before the claim: the agent takes it as given ("Since `npm test` passes
# on your machine, ...", "As you said, `make check` is green").
_GIVEN_BEFORE = re.compile(
    r"\b(?:since|because|given|as\s+you|you\s+(?:said|mentioned|reported|noted)|according\s+to"
    r"|assuming|provided|going\s+by|based\s+on|judging\s+by)\b",
    re.I,
)


def reported(shape: str, start: int, end: int) -> bool:
    """Whether the claim at ``shape[start:end]`` is taken as given or placed elsewhere: a
    reason or report before it, or words after it naming another time or place."""
    return bool(_GIVEN_BEFORE.search(shape, 0, start) or _ELSEWHERE_AFTER.match(shape, end))
