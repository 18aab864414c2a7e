"""``not_found``: a tool call aimed at something that does not exist.

An agent that reads a file it never saw, runs a command that is not installed or looks up an
object id the service does not know has usually assumed (made up) the target. The patterns come
from real results: Claude Code's ``<tool_use_error>File does not exist.</tool_use_error>`` and
``Exit code 127`` Bash results, tau-bench's ``Error: ... not found``, Stripe's
``resource_missing``, HTTP 404 bodies, git pathspec/revision errors, ENOENT, ModuleNotFoundError.

Exploratory probes (``ls``, ``test -e``, ``which``, a Glob/Grep/find that matches nothing) are the
agent checking rather than assuming: they are counted on ``session.meta["not_found_probes"]``,
never flagged. Edit mismatches ("String to replace not found") and harness tool rejections
(``unknown_tool``'s job) are not missing targets and are left out.
"""

from __future__ import annotations

import json
import re
import shlex

import orjson

from detectors.action_rules import EXIT_TAIL, TEST_COMMANDS, name_words
from detectors.models import Severity, Signal
from detectors.params import NotFoundParams
from detectors.registry import detector
from detectors.unknown_tool import _REJECTION, fold_case, may_reject
from sessions.formats.common import argv_command
from sessions.models import Event, EventKind, Session

_I = re.IGNORECASE | re.MULTILINE
# A named object the service says is missing: kubectl `pods "x" not found`, PostgreSQL
# `relation "x" does not exist`, `table 'x' doesn't exist` (a word, then the quoted name). A
# match ends with its literal and starts at most 215 characters before it: only those stretches
# are searched (`_WINDOWS`), since the regex engine cannot skip ahead to a quote quickly.
_NAMED_MISSING = re.compile(
    r"(?<=\w )[\"'`\u2018](?P<t>[^\"'`\u2019\n]{1,200})[\"'`\u2019] "
    r"(?:was )?(?:not found|does not exist|doesn\\?'t exist)",  # `doesn\'t`: a repr'd body
    re.IGNORECASE | re.MULTILINE,
)
_WINDOWS = {_NAMED_MISSING: 215}
# (category, regex): `t` is the target when the message names it. Order matters: specific first.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("file", re.compile(r"\bfile does not exist\b", _I)),
    ("command", re.compile(r"command not found: (?P<t>\S+)", _I)),  # zsh
    # At a line's start, or a JSON string's (`"stderr": "bash: line 1: x: command not found"`).
    (
        "command",
        re.compile(
            r'(?:^|(?<=": "))(?:\S+: )?(?:line \d+: )?(?P<t>[^\s:]+): command not found', _I
        ),
    ),
    ("command", re.compile(r"^(?:/bin/)?sh: \d+: (?P<t>[^\s:]+): not found", _I)),  # dash
    ("module", re.compile(r"No module named '?(?P<t>[\w.]+)'?", _I)),
    ("module", re.compile(r"Cannot find module '(?P<t>[^']+)'", _I)),
    ("module", re.compile(r"Cannot find package '(?P<t>[^']+)' imported from", _I)),  # Node ESM
    ("git", re.compile(r"pathspec '(?P<t>[^']+)' did not match any file", _I)),
    ("git", re.compile(r"ambiguous argument '(?P<t>[^']+)': unknown revision", _I)),
    ("git", re.compile(r"(?:bad revision|invalid reference:?) '?(?P<t>[^'\s]+)'?", _I)),
    ("file", re.compile(r"ENOENT: no such file or directory, \w+ '(?P<t>[^']+)'", _I)),
    ("file", re.compile(r"No such file or directory: '(?P<t>[^']+)'", _I)),
    # zsh: `cd:1: no such file or directory: infra/nginx` (before the `x: No such file` form).
    ("file", re.compile(r"no such file or directory: (?P<t>[^\s'\"]+)$", _I)),
    (
        "file",
        re.compile(r"cannot (?:access|open|stat) [`\u2018'\"]?(?P<t>[^`\u2018\u2019'\"\s]+)", _I),
    ),
    (
        "file",
        re.compile(
            r"[\u2018'\"]?(?P<t>[^\s:\u2018\u2019'\"]+)[\u2019'\"]?: No such file(?: or dir\w*)?",
            _I,
        ),
    ),
    ("entity", re.compile(r"No such (?P<what>[\w ]{1,30}?): '?(?P<t>[\w./-]+)'?", _I)),
    # Package registries: npm, pip, cargo.
    (
        "package",
        re.compile(r"'(?P<t>(?:@[\w.-]+/)?[\w.-]+)@[^']*' is not in (?:this|the npm) registry", _I),
    ),
    ("command", re.compile(r"error: no such (?:sub)?command: [`'\"]?(?P<t>[\w-]+)", _I)),  # cargo
    ("package", re.compile(r"^E: Unable to locate package (?P<t>[\w.+:-]+)", _I)),  # apt
    ("package", re.compile(r"No available formula with the name \"(?P<t>[^\"]+)\"", _I)),  # brew
    ("package", re.compile(r"Could not find gem '(?P<t>[\w.-]+)", _I)),
    ("package", re.compile(r"No matching distribution found for (?P<t>[\w.\[\]-]+)", _I)),
    # uv: "Because polars-autoprofile was not found in the package registry and ..."
    ("package", re.compile(r"\b(?P<t>[\w.\[\]-]+) was not found in the package registry", _I)),
    ("package", re.compile(r"no matching package named `(?P<t>[^`]+)` found", _I)),
    ("package", re.compile(r"the crate [`'\"](?P<t>[\w-]+)[`'\"] could not be found", _I)),
    # Build tools and registries: Go, Maven/Gradle (a library the code imports: a module),
    # NuGet, container images and containers.
    ("module", re.compile(r'cannot find package "(?P<t>[^"]+)"', _I)),
    ("module", re.compile(r"Could not find artifact (?P<t>[\w.-]+:[\w.:-]+)", _I)),
    ("package", re.compile(r"\bNU1101: Unable to find package (?P<t>[\w.-]+?)\.?(?:\s|$)", _I)),
    ("entity", re.compile(r"manifest for (?P<t>\S+) not found", _I)),
    # Windows: PowerShell names the path; cmd does not (the call does, see `_target`).
    ("file", re.compile(r"Cannot find path '(?P<t>[^']+)' because it does not exist", _I)),
    ("file", re.compile(r"The system cannot find the (?:path|file) specified", _I)),
    # Rust's error chains: "failed to read config file `x`" ... "(os error 2)".
    (
        "file",
        re.compile(
            r"[`'\"](?P<t>[^`'\"\n]+)[`'\"][^\n]*\n(?:\s*\n)?(?:\s*Caused by:\s*\n)?\s*(?:\d+:\s*)?"
            r"No such file or directory \(os error 2\)",
            _I,
        ),
    ),
    # Azure (`The Resource '.../sites/x' ... was not found`), Terraform (an import of an object
    # that does not exist), BigQuery (`Not found: Table p:d.t`), GitHub GraphQL.
    (
        "entity",
        re.compile(r"The Resource '(?:[^'/\n]*/)*(?P<t>[^'/\n]+)' under resource group", _I),
    ),
    (
        "entity",
        re.compile(
            r'Importing from ID "(?:[^"/\n]*/)*(?P<t>[^"/\n]+)"(?=[\s\S]{0,2000}'
            r"Cannot import non-existent remote object)",
            _I,
        ),
    ),
    (
        "entity",
        re.compile(
            r"\bNot found: (?P<what>Table|Dataset|Job|Project|Model|Routine) (?P<t>[\w.:-]+)"
        ),
    ),
    (
        "entity",
        re.compile(
            r"Could not resolve to an? (?P<what>\w+) with the (?:name|login|id) '(?P<t>[^']+)'"
        ),
    ),
    # Jira (`Issue does not exist or you do not have permission`), Salesforce and GraphQL codes.
    (
        "entity",
        re.compile(
            r"\b(?P<what>Issue|Project|Board|Sprint|Page|Space|Repository|Organization|Workspace)"
            r" does not exist\b"
        ),
    ),
    # ... in JSON or as Python prints it (`[{'errorCode': 'NOT_FOUND', ...}]`).
    (
        "entity",
        re.compile(
            r"[\"'](?:errorCode|type|code)[\"']\s*:\s*[\"'](?:NOT_FOUND|ENTITY_NOT_FOUND)[\"']"
        ),
    ),
    # gcloud: `NOT_FOUND: Secret [projects/884213007412/secrets/api-token] not found`.
    (
        "entity",
        re.compile(
            r"\bNOT_FOUND: (?P<what>[A-Z]\w*) \[(?:[^\]\s/]*/)*(?P<t>[^\]\s/]+)\] not found"
        ),
    ),
    # More runtimes, registries and services: zsh, Java, pip, gcloud, AWS IAM and DynamoDB,
    # MySQL, Elasticsearch, Zendesk and HubSpot.
    ("file", re.compile(r"FileNotFoundException: (?P<t>[^\s(]+)", _I)),
    (
        "package",
        re.compile(
            r"Could not find a version that satisfies the requirement (?P<t>[\w.\[\]-]+)", _I
        ),
    ),
    ("entity", re.compile(r"code=404, message=Not found: (?:[^\s/]+/)*(?P<t>[^\s/]+?)\.?$", _I)),
    (
        "entity",
        re.compile(
            r"The (?:role|user|policy|group|instance profile) with name (?P<t>[\w+=,.@-]+)"
            r" cannot be found",
            _I,
        ),
    ),
    ("entity", re.compile(r"Requested resource not found: Table: (?P<t>[\w.-]+) not found", _I)),
    ("entity", re.compile(r"Unknown database '(?P<t>[^']+)'", _I)),
    # Ruby, systemd, Slack's `{"ok":false,"error":"channel_not_found"}`, Google Drive.
    ("module", re.compile(r"cannot load such file -- (?P<t>[\w/.-]+)", _I)),
    # Python's `can't open file`, a name a module lacks, npm scripts, make targets, git remotes.
    ("file", re.compile(r"can't open file [`'\"](?P<t>[^`'\"]+)[`'\"]: \[Errno 2\]", _I)),
    ("module", re.compile(r"cannot import name '(?P<t>[\w.]+)' from '", _I)),
    ("command", re.compile(r"\bMissing script: [\"'`]?(?P<t>[\w:.-]+)", _I)),
    ("command", re.compile(r"No rule to make target [`'\u2018](?P<t>[^`'\u2019]+)[`'\u2019]", _I)),
    (
        "git",
        re.compile(r"fatal: '(?P<t>[^'\n]+)' does not appear to be a git repository", _I),
    ),
    # A class the code uses (PHP, Java): missing like a module.
    ("module", re.compile(r"\bClass [\"'](?P<t>[\w\\.]+)[\"'] not found", _I)),
    ("module", re.compile(r"\bClassNotFoundException: (?P<t>[\w.$]+)")),
    ("entity", re.compile(r"\bUnit (?P<t>[\w@.:-]+) (?:not found|could not be found)", _I)),
    ("entity", re.compile(r'"error"\s*:\s*"(?:(?P<what>[a-z]+)_)?not_found"')),
    # MCP: `MCP error -32602: Resource not found: file:///...` (a URI).
    ("entity", re.compile(r"\bResource not found: (?P<t>[a-z][\w+.-]*://\S+?)\.?(?=[\s\"'<>]|$)")),
    (
        "entity",
        re.compile(
            r"\b(?P<what>File|Folder|Document|Spreadsheet|Item|Record|Object) not found: "
            r"(?P<t>[^\s\"'<>]+?)\.?(?=[\s\"'<>]|$)",
            _I,
        ),
    ),
    ("entity", re.compile(r"no such index \[(?P<t>[^\]]+)\]", _I)),
    # An error class named for the missing object: `OrderNotFound: no order with id ...` (a
    # harness's `ToolNotFoundError` is a rejection: `unknown_tool`).
    ("entity", re.compile(r"\b(?!Tool)(?P<what>[A-Z][a-z]+)NotFound(?:Exception|Fault|Error)?: ")),
    # SWE-agent's `open`: "File tests/x.py not found".
    ("file", re.compile(r"^File (?P<t>\S+) not found$", re.MULTILINE)),
    (
        "entity",
        re.compile(r'"(?:error|category|code)"\s*:\s*"(?:RecordNotFound|OBJECT_NOT_FOUND)"'),
    ),
    # helm names the release only in the command (see `_COMMAND_TARGETS`).
    ("entity", re.compile(r"(?:^|\")Error: (?P<what>release): not found", _I)),
    # Cloud services: S3 `NoSuchKey`, AWS `ResourceNotFoundException`, Azure `BlobNotFound`,
    # "The specified key does not exist." (the target is the call's argument of that name).
    (
        "entity",
        re.compile(r"\bNoSuch(?P<what>Key|Bucket|Upload|Version|Entity|Distribution)\b", _I),
    ),
    (
        "entity",
        re.compile(
            r"\b(?P<what>Resource|Blob|Container|Table|Function|Queue|Stream|Secret|Parameter"
            r"|Repository|Image|Cluster|Service)NotFound(?:Exception|Fault|Error)?\b",
            _I,
        ),
    ),
    (
        "entity",
        re.compile(
            r"\bThe specified (?P<what>key|bucket|blob|container|resource|queue|table|object)"
            r" does not exist",
            _I,
        ),
    ),
    ("entity", _NAMED_MISSING),
    # requests' HTTPError, and other "404 ... Not Found for url" forms.
    ("http404", re.compile(r"\b404 Client Error: Not Found for url: (?P<url>\S+)", _I)),
    ("entity", re.compile(r"\bresource_missing\b", _I)),
    (
        "http404",
        re.compile(r"\b404 (?:[a-z]+ )?not found\b|[\"']?status[\"']?\s*:\s*[\"']?404\b", _I),
    ),
    ("http404", re.compile(r"^\s*HTTP(?:/[\d.]+)?\s+404\b", _I)),  # a status line alone
    ("http404", re.compile(r"^\s*\{\s*[\"']?message[\"']?\s*:\s*[\"']not found[\"']", _I)),
    # pytest's missing test path; an editor tool's (OpenHands) missing path.
    ("file", re.compile(r"\bfile or directory not found: (?P<t>\S+)", _I)),
    ("file", re.compile(r"\bThe path (?P<t>\S+) does not exist\b", _I)),
    # tau-bench style and generic APIs: "Error: payment method certificate_1 not found".
    (
        "entity",
        re.compile(r"^\s*error:\s*(?P<what>[\w #-]{1,50}?)\s+(?:not found|does not exist)", _I),
    ),
    # Windows: cmd's and PowerShell's unknown command, PowerShell's missing module.
    (
        "command",
        re.compile(r"'(?P<t>[^'\n]+)' is not recognized as an internal or external command", _I),
    ),
    (
        "command",
        re.compile(r"\bThe term '(?P<t>[^'\n]+)' is not recognized as (?:the |a )?name of a", _I),
    ),
    (
        "module",
        re.compile(
            r"\bThe specified module '(?P<t>[^'\n]+)' was not loaded because no valid module", _I
        ),
    ),
]
# Literals that every match of the pattern at the same index of `_PATTERNS` contains, in
# `fold_case`d form: a text whose fold lacks one of them (any one, for a tuple) cannot match, so
# the (costly, case-insensitive) pattern is not run on it.
_NEEDS: list[tuple[str, ...]] = [
    ("file does not exist",),
    ("command not found: ",),
    (": command not found",),
    (": not found",),
    ("no module named",),
    ("cannot find module '",),
    ("cannot find package '",),
    ("did not match any file",),
    ("': unknown revision",),
    ("bad revision", "invalid reference"),
    ("enoent: no such file or directory, ",),
    ("no such file or directory: '",),
    ("no such file or directory: ",),
    ("cannot ",),
    (": no such file",),
    ("no such ",),
    ("registry",),
    ("no such command: ", "no such subcommand: "),
    ("unable to locate package ",),
    ("no available formula with the name",),
    ("could not find gem '",),
    ("no matching distribution found for ",),
    (" was not found in the package registry",),
    ("no matching package named `",),
    ("the crate ",),
    ('cannot find package "',),
    ("could not find artifact ",),
    ("nu1101",),
    ("manifest for ",),
    ("cannot find path '",),
    ("cannot find the ",),
    ("(os error 2)",),
    ("the resource '",),
    ("cannot import non-existent",),
    ("not found: ",),
    ("could not resolve to ",),
    tuple(
        f"{what} does not exist"
        for what in (
            "issue",
            "project",
            "board",
            "sprint",
            "page",
            "space",
            "repository",
            "organization",
            "workspace",
        )
    ),
    ("not_found",),
    ("not_found: ",),
    ("filenotfoundexception: ",),
    ("could not find a version",),
    ("code=404",),
    (" cannot be found",),
    ("requested resource not found",),
    ("unknown database '",),
    ("cannot load such file -- ",),
    ("can't open file ",),
    ("cannot import name '",),
    ("missing script: ",),
    ("no rule to make target ",),
    ("does not appear to be a git repository",),
    ("not found",),
    ("classnotfoundexception: ",),
    ("not found", "could not be found"),
    ('not_found"',),
    ("resource not found: ",),
    ("not found: ",),
    ("no such index [",),
    ("notfound",),
    ("not found",),
    ("recordnotfound", "object_not_found"),
    ("release: not found",),
    ("nosuch",),
    ("notfound",),
    ("the specified ",),
    ("not found", "does not exist", "doesn't exist", "doesn\\'t exist"),
    ("404 client error",),
    ("resource_missing",),
    ("404",),
    ("404",),
    ("not found",),
    ("file or directory not found: ",),
    ("the path ",),
    ("not found", "does not exist"),
    ("is not recognized as an internal",),
    ("is not recognized as ",),
    ("no valid module file",),
]
_CHECKS = [(c, p, n, _WINDOWS.get(p, 0)) for (c, p), n in zip(_PATTERNS, _NEEDS, strict=True)]
# Each need once, with the patterns (by index in `_CHECKS`) it lets through: the needs a text
# holds are found in one pass, and only their patterns are tried, in `_CHECKS` order.
_NEED_LIST = sorted({need for needs in _NEEDS for need in needs})
_BY_NEED: dict[str, list[int]] = {need: [] for need in _NEED_LIST}
for _i, _needs in enumerate(_NEEDS):
    for _need in _needs:
        _BY_NEED[_need].append(_i)


def _need_tree(needs: list[str]) -> list[tuple[str, list[str]]]:
    """The needs that hold no other (roots), each with the needs that hold it first of the
    roots: a text lacking a root lacks them all, so most texts are searched for the roots alone."""
    roots = [n for n in needs if not any(o != n and o in n for o in needs)]
    tree: dict[str, list[str]] = {root: [] for root in roots}
    for need in needs:
        if need not in tree:
            tree[next(root for root in roots if root in need)].append(need)
    return list(tree.items())


_NEED_TREE = _need_tree(_NEED_LIST)
_EXCLUDE_NEEDS = (
    "string to replace not found",
    "did not appear verbatim",
    "sibling tool call errored",
    "doesn't want to proceed",
    "exceeds maximum allowed",
)
# Results that say "not found" but are not a missing target.
_EXCLUDE = re.compile(
    r"string to replace not found|did not appear verbatim|sibling tool call errored|"
    r"doesn't want to proceed|exceeds maximum allowed",
    re.IGNORECASE,
)
# Without the format's error flag, only output that opens like an error counts: a successful
# `cat` of a file that mentions "not found" must not fire.
_ERROR_HEAD = re.compile(
    r"\A\s*(?:<tool_use_error>|error\b|fatal:|(?-i:E: )|exit(?:[ _]?(?:code|status))?:? ?[1-9]|"
    r"traceback \(most recent|file \S+ not found$|"
    r"[\w.]*(?:error|exception|notfound):|\{\s*[\"']?(?:error\w*|message)[\"']?\s*:|"
    r"http/[\d.]+ 404|http 4\d\d\b|\[error\]|\[\s*\{\s*\"errorcode\"|404 not found|"
    r"an error occurred \(|npm (?:ERR!|error) |'[^'\n]{1,200}' is not recognized as an internal|"
    r"(?:[\w-]+ : )?(?:the term '|the specified module ')|"
    r"\u00d7 |"  # a miette-style diagnostic (uv, pnpm): "  \u00d7 No solution found ..."
    r"\(eval\):|(?:ba|z|)sh: |[\w./-]+: (?:cannot|can't open file|'?[^\s:]+'?: no such file))",
    re.IGNORECASE,
)
# An error no flag marks and that does not open the output: a JSON body with a non-zero exit
# code or GraphQL `errors`, or a Windows error line (PowerShell echoes the command first).
_ERROR_INSIDE = re.compile(
    r'"(?:exit_code|exitCode|returncode|return_code|exit_status)"\s*:\s*[1-9]'
    # A REST body's own 404 (Airflow), a number: "404" in quotes is a value the body reports (a
    # metric's label), not the answer's status.
    r'|"(?:status|statusCode|status_code)"\s*:\s*404\b'
    r'|^\{"data"\s*:[\s\S]{0,400}?"errors"\s*:\s*\[\s*\{'
    r"|^(?:[\w-]+ : )?Cannot find path '|^The system cannot find the (?:path|file) specified",
    re.MULTILINE,
)


def _says_error(output: str) -> bool:
    """Whether an output no flag marks still says it failed: ``_ERROR_INSIDE`` in its first
    2,000 characters or ``EXIT_TAIL`` in its last 120. Each regex is tried only where a
    string its matches hold is (neither has a literal to skip to, and this runs on most
    outputs): "exit" (as "xit") near the end, a JSON key or a 404 near the start, "annot
    find "."""
    start = max(0, len(output) - 120)
    if output.find("xit", start) >= 0 and EXIT_TAIL.search(output, start) is not None:
        return True
    if output[:1] == "{":
        if (
            output.find('"exit', 0, 600) < 0
            and output.find('"return', 0, 600) < 0
            and output.find('"errors"', 0, 600) < 0
            and output.find("404", 0, 600) < 0
        ):
            return False
    elif output.find("annot find ", 0, 600) < 0:  # "Cannot find path", "cannot find the"
        return False
    return _ERROR_INSIDE.search(output, 0, 2000) is not None


_PROBE_COMMANDS = frozenset(
    {"ls", "test", "[", "[[", "stat", "which", "command", "type", "find", "file", "whereis",
     "realpath", "readlink", "hash", "fd", "locate", "where"}
)  # fmt: skip
_ASIDES = ("cd", "echo", "true", "pushd")  # steps that neither probe nor use a target
_PROBE_TOOL = re.compile(r"glob|grep|search|find|^ls$|list|exists?|lookup", re.IGNORECASE)
_NOTHING = re.compile(r"\A\s*(?:no files found|no matches found|no results?(?: found)?)?\s*\Z", _I)
_SHELL_SPLIT = re.compile(r"&&|\|\||[;|\n]")
# Without quotes or escapes, `shlex.split` (posix, no comments) splits on these and nothing else.
_SHLEX_SPECIAL = re.compile(r"[\\'\"]")
_SHLEX_SPACE = re.compile(r"[ \t\r\n]+")
# Masks that turn one error message into the template all its occurrences share: the variable
# parts (paths, quoted strings, ids, hex, numbers) become placeholders, so "payment method
# certificate_1 not found" and "... credit_card_2 not found" group as one failure mode.
_TAG = re.compile(r"</?[\w-]+>")
_MASKS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I), "<id>"),
    (re.compile(r"(['\"`\u2018])(?!<\w+>['\"`\u2019])[^'\"`\u2019\n]+['\"`\u2019]"), r"\1<str>\1"),
    (
        re.compile(r"(?<![\w<])(?:~|\.{1,2})?(?:/[\w.@+-]+)+/?|\b(?!HTTP/)[\w.-]+/[\w./-]+"),
        "<path>",
    ),
    (
        re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I),
        "<hex>",
    ),
    (re.compile(r"\b(?=\w*\d)(?=\w*[A-Za-z_])\w*_\w+\b|\b[A-Za-z]+\d[\w-]*\b"), "<id>"),
    (re.compile(r"(?<!exit code )(?<![\w<])\d+(?:\.\d+)?\b", re.I), "<n>"),
]
_PLACEHOLDER = {
    "file": "<path>",
    "command": "<cmd>",
    "module": "<module>",
    "git": "<ref>",
    "package": "<package>",
}


def mask(text: str, target: str | None = None, placeholder: str = "<id>") -> str:
    """``text`` with its variable parts masked (``target`` first, as ``placeholder``)."""
    if target:
        text = text.replace(target, placeholder)
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def template(output: str, found: re.Match[str], category: str, target: str | None) -> str:
    """The error message of ``found`` (from the match to the end of its line) as a template."""
    if category == "http404":  # the body around a 404 is the service's own, not the message
        return "404 Not Found"
    line_start = output.rfind("\n", 0, found.start()) + 1
    end = output.find("\n", found.end())
    end = len(output) if end < 0 else end
    if '"' in output[line_start : found.start()]:  # a message inside a JSON string ends with it
        closing = output.find('"', found.end(), end)
        end = end if closing < 0 else closing
    line = _TAG.sub("", output[found.start() : end])
    return mask(line, target, _PLACEHOLDER.get(category, "<id>"))[:120]


_PATH_KEYS = ("file_path", "path", "notebook_path", "filename", "file", "url", "uri")
_SHELL_KEYS = ("command", "cmd", "script", "code")
_CLI_KEYS = ("args", "arguments")  # a CLI tool's argument string (`aws_cli {"args": "s3 ls"}`)


# A call that creates something: by its tool's name (`create_repo`, `register_device`), its
# command's first words (`gh repo create`, `mkdir`, `git init`) or a GraphQL mutation's field
# (`mutation { cloneTemplateRepository(...) }`).
_CREATES_NAME = re.compile(r"create|clone|(?:^|_)(?:new|register|provision|init)(?:_|$)", re.I)
_CREATES_HEAD = re.compile(
    # At the start of the command or of a step of it (`openssl rand 32 | gcloud secrets create`).
    r"(?:^|[|;&])\W*(?:[\w.-]+\s+){0,3}(?:create|clone|mkdir|init|new)\b"
    r"|\bhelm\s+(?:install|upgrade\s+(?:\S+\s+)*?--install)\b"  # a release: `helm install x`
    r"|\bmutation\b[^{]*\{\s*(?:\w+\s*:\s*)?(?:create|clone)",
    re.I,
)


_LOOKUPS = frozenset({"entity", "http404", "custom"})  # a named object looked up, not a file
_HEAD_KEYS = (*_SHELL_KEYS, "query", "mutation")
# One is in each `_CREATES_HEAD`.
_CREATE_WORDS = ("create", "clone", "mkdir", "init", "new", "install")


_DELETES_NAME = re.compile(r"delete|remove|destroy|uninstall|terminate|(?:^|_)drop(?:_|$)", re.I)
_DELETES_HEAD = re.compile(
    r"(?:^|[|;&])\W*(?:[\w.-]+\s+){0,3}(?:delete|remove|destroy|uninstall|terminate|drop|rm)\b",
    re.I,
)
_DELETE_WORDS = ("delete", "remove", "destroy", "uninstall", "terminate", "drop", "rm")


def _lifecycle_calls(session: Session) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """The session's calls that create something and those that delete something, each that
    did not fail: (index, input text)."""
    return _calls_that(session, _CREATES_NAME, _CREATES_HEAD, _CREATE_WORDS), _calls_that(
        session, _DELETES_NAME, _DELETES_HEAD, _DELETE_WORDS
    )


def _calls_that(
    session: Session, by_name: re.Pattern[str], by_head: re.Pattern[str], words: tuple[str, ...]
) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    results: dict[str, Event] | None = None
    call_kind = EventKind.TOOL_CALL
    for event in session.events:
        if event.kind is not call_kind or not event.call_id:
            continue
        name = event.name or ""
        if not by_name.search(name):
            head = (_field(event, _HEAD_KEYS) or "")[:300].lower()
            if not any(word in head for word in words) or not by_head.search(head):
                continue
        results = session.results_by_call() if results is None else results
        result = results.get(event.call_id)
        if result is not None and not result.is_error:
            found.append((event.index, _input_text(event)))
    return found


def _named_by(calls: list[tuple[int, str]], target: str, after: int = -1, before: int = -1) -> bool:
    """Whether one of ``calls`` after index ``after`` (or before index ``before``) names
    ``target`` (or its last path part)."""
    base = target.rstrip("/").rsplit("/", 1)[-1]
    return any(
        (at > after if before < 0 else at < before)
        and (target in text or (len(base) >= 3 and base in text))
        for at, text in calls
    )


def _input_text(call: Event) -> str:
    if isinstance(call.input, str):
        return call.input
    return json.dumps(call.input, ensure_ascii=False) if call.input is not None else ""


def _field(call: Event, keys: tuple[str, ...]) -> str | None:
    if isinstance(call.input, dict):
        for key in keys:
            value = call.input.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return argv_command(value)
    return None


def _head_word(segment: str) -> str:
    """The command a shell segment runs (its first word, past assignments and wrappers)."""
    head = _HEADS.get(segment)
    if head is None:
        if len(_HEADS) >= 4096:  # an agent's commands repeat, but never grow this for good
            _HEADS.clear()
        head = _HEADS[segment] = _parse_head_word(segment)
    return head


# Shell segment -> its head word: agents run the same commands again and again, and `shlex`
# (for quoted ones) is slow.
_HEADS: dict[str, str] = {}


def _parse_head_word(segment: str) -> str:
    if _SHLEX_SPECIAL.search(segment) is None:  # shlex would only split on its whitespace
        stripped = segment.strip(" \t\r\n")
        words = _SHLEX_SPACE.split(stripped) if stripped else []
    else:
        try:
            words = shlex.split(segment, posix=True)
        except ValueError:
            words = segment.split()
    while words and ("=" in words[0] or words[0] in ("sudo", "env", "time", "!")):
        words = words[1:]
    return words[0].rsplit("/", 1)[-1] if words else ""


def _is_probe(call: Event, target: str | None, extra: frozenset[str]) -> bool:
    """Whether the call only tested for existence (its own purpose, not an assumption)."""
    command = _field(call, _SHELL_KEYS)
    if command is None:
        # An HTTP HEAD request asks only whether the resource is there (a link check).
        if isinstance(call.input, dict) and str(call.input.get("method", "")).upper() == "HEAD":
            return True
        # A search tool that found nothing is a probe; one aimed at a container that does not
        # exist (`index`, `table`, `path`) assumed it.
        return bool(call.name and _PROBE_TOOL.search(call.name)) and not (
            target and _named_as_container(call, target)
        )
    segments = [s for s in _SHELL_SPLIT.split(command) if s.strip()]
    if not target:  # the first step that is not a `cd`-like aside (else the first step) decides
        first = None
        for segment in segments:  # heads are parsed only up to the deciding step
            head = _head_word(segment)
            if head not in _ASIDES:
                return head in _PROBE_COMMANDS or head in extra
            first = head if first is None else first
        return first is not None and (first in _PROBE_COMMANDS or first in extra)
    if _HEAD_REQUEST.search(command):  # `curl -I`, `curl --head`: is it there?
        return True
    # `get X || create X`: a miss the command itself expects and handles.
    if "||" in command and target in command.split("||", 1)[1]:
        return True
    heads = [(s, _head_word(s)) for s in segments]
    heads = [(s, h) for s, h in heads if h not in _ASIDES] or heads
    probes = _PROBE_COMMANDS | extra
    # the segment that names the missing target decides (`cd` into it too: an assumption)
    for segment in segments:
        if target in segment:
            return _head_word(segment) in probes
    for segment, head in heads:
        if target.rsplit("/", 1)[-1] in segment:
            return head in probes
    return bool(heads) and heads[0][1] in probes


_HEAD_REQUEST = re.compile(
    r"\bcurl\b[^|;&\n]*\s(?:-I|--head|-X\s*HEAD)\b|\bwget\b[^|;&\n]*--spider\b"
)
_QUERY_KEYS = frozenset({"query", "q", "pattern", "text", "search", "term", "keyword", "keywords"})


def _named_as_container(call: Event, target: str) -> bool:
    """Whether ``target`` is the value of an argument that is not the search itself."""
    if not isinstance(call.input, dict):
        return False
    return any(
        key.lower() not in _QUERY_KEYS and isinstance(value, str) and target in value.split(",")
        for key, value in call.input.items()
    )


def _unquoted(output: str) -> str:
    """A JSON object result's string members, one per line: an error quoted inside one
    (`"stderr": "... \\"ledger-worker\\" not found"`) read as its tool wrote it."""
    if output[:1] != "{":
        return output
    try:
        data = orjson.loads(output)
    except orjson.JSONDecodeError:
        return output
    texts = [v for v in data.values() if isinstance(v, str) and v] if isinstance(data, dict) else []
    return "\n".join(texts) or output


def _match(output: str, extra: list[re.Pattern[str]]) -> tuple[str, re.Match[str]] | None:
    text = output[:4000]  # messages open the result; long test logs are not scanned whole
    for pattern in extra:
        if found := pattern.search(text):
            return "custom", found
    folded = fold_case(text)
    present: list[str] = []
    for root, holders in _NEED_TREE:
        if root in folded:
            present.append(root)
            present += [need for need in holders if need in folded]
    if not present:
        return None  # no pattern can match: see `_NEEDS`
    tried = sorted({i for need in present for i in _BY_NEED[need]})
    for i in tried:
        category, pattern, needs, window = _CHECKS[i]
        if window and len(folded) == len(text):
            found = _search_before(pattern, text, folded, needs, window)
        else:
            found = pattern.search(text)
        if found:
            return category, found
    return None


def _search_before(
    pattern: re.Pattern[str], text: str, folded: str, needs: tuple[str, ...], window: int
) -> re.Match[str] | None:
    """``pattern.search(text)`` for a pattern whose matches end with one of ``needs`` and start
    at most ``window`` characters before it: only those stretches are searched, in order."""
    stretches = sorted(
        (max(0, at - window), at + len(need)) for need in needs for at in _positions(folded, need)
    )
    for start, end in stretches:
        if found := pattern.search(text, start, end):
            return found
    return None


def _positions(text: str, needle: str) -> list[int]:
    out, at = [], text.find(needle)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


def _target(category: str, found: re.Match[str], call: Event) -> tuple[str | None, bool]:
    """The missing target and whether it came from the message (so must be in the input)."""
    groups = found.groupdict()
    named = groups.get("t")
    if named:
        return named.strip(), True
    if category == "file":
        return _field(call, _PATH_KEYS) or _path_argument(call), False
    what = (groups.get("what") or "").strip()
    words = what.split()
    if words and words[-1] and any(c.isdigit() or c == "_" for c in words[-1]):
        return words[-1], True  # "payment method certificate_7504069 not found"
    command = _field(call, _SHELL_KEYS) or _field(call, _CLI_KEYS)
    if what and command and (named_by := _COMMAND_TARGETS.get(what.lower())):
        m = named_by.search(command)  # `helm rollback checkout-api` -> "release: not found"
        if m:
            return m.group("t"), False
    words = what.lower().split()
    if words and isinstance(call.input, dict):  # "payment method not found": the payment_id
        for key, value in call.input.items():
            key = key.lower()
            if isinstance(value, str) and (key.startswith(words[0]) or key == "id"):
                return value, False
    named = _input_value_in(call, found.string)
    if named:  # `{"shipment_id": "SHP-40912"}` -> "Shipment SHP-40912 not found", a 404 URL
        return named, False
    if category == "http404" and command:
        # `curl .../v1/jobs/<id>/logs` answered "job <id> not found": the id both name.
        for token in _COMMAND_TOKEN.findall(command):
            if len(token) >= 6 and any(c.isdigit() for c in token) and token in found.string:
                return token, False
    path = _field(call, _PATH_KEYS)
    if path and category == "http404":  # `/admin/api/orders/5630114021513.json`: the order
        return _url_object(path), False
    if not path and category == "http404":  # `get_release_by_tag`: a 404 for its tag
        return _id_argument(call) or _argument_named_by_tool(call), False
    return path or _id_argument(call), False


_URL_ID = re.compile(r"[\w-]*\d{3,}[\w-]*")
_COMMAND_TOKEN = re.compile(r"[\w.-]+")  # the words and ids of a command (a URL's parts too)


def _url_object(path: str) -> str:
    """The object a REST path names: its last part when that is an id, else the path."""
    last = path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    last = last.rsplit(".", 1)[0] if "." in last else last
    return last if _URL_ID.fullmatch(last) else path


# What a command names for an error that does not: helm's release (its first argument).
_COMMAND_TARGETS = {
    "release": re.compile(
        r"\bhelm\s+(?:status|rollback|uninstall|upgrade|get\s+\w+|history|test)"
        r"\s+(?:-\S+\s+)*(?P<t>[\w.-]+)"
    ),
    # The AWS CLI: `NoSuchBucket` names no bucket, `ResourceNotFoundException` no table.
    "bucket": re.compile(r"(?:\bs3://|--bucket[= ])(?P<t>[\w.-]+)"),
    "key": re.compile(r"(?:\bs3://[\w.-]+/|--key[= ])(?P<t>[^\s'\"]+)"),
    "table": re.compile(r"--table-name[= ][\"']?(?P<t>[\w.-]+)"),
    "function": re.compile(r"--function-name[= ][\"']?(?P<t>[\w.:-]+)"),
    "secret": re.compile(r"--secret(?:-id)?[= ][\"']?(?P<t>[\w/.+=@-]+)"),
    "resource": re.compile(
        r"--(?:table-name|function-name|secret-id|stream-name|cluster|queue-url|log-group-name"
        r"|repository-name|name)[= ][\"']?(?P<t>[\w.:/+=@-]+)"
    ),
}


def _argument_named_by_tool(call: Event) -> str | None:
    """The argument a tool's name says it looks things up by: `get_release_by_tag` -> `tag`,
    `github_get_branch` -> `branch`."""
    if not isinstance(call.input, dict) or not call.name:
        return None
    words = [w.lower() for w in name_words(call.name)]
    key = words[words.index("by") + 1] if "by" in words[:-1] else words[-1]
    value = call.input.get(key)
    return value if isinstance(value, str) and value else None


_ANYONES = frozenset({"module"})  # missing whoever named it (see `not_found`)
_ID_KEY = re.compile(r"(?:^|_)(?:id|key|u?uid|guid|slug)$|[a-z](?:Id|Key|Uid|Slug)$")


def _id_argument(call: Event) -> str | None:
    """The call's one id-like argument (`account_id`, `issueKey`), when it has exactly one."""
    if not isinstance(call.input, dict):
        return None
    ids = [
        str(v)
        for k, v in call.input.items()
        if _ID_KEY.search(k) and isinstance(v, str | int) and not isinstance(v, bool)
    ]
    return ids[0] if len(ids) == 1 else None


# A file path (a name with an extension, maybe under folders), or a Windows drive path.
_PATH_ARG = re.compile(
    r"^(?:[A-Za-z]:\\|\\\\|\.{0,2}/|~/)?[\w.-]+(?:[\\/][\w. -]*)*\.[\w]{1,8}$|^[A-Za-z]:\\"
)


def _path_argument(call: Event) -> str | None:
    """The first argument of a shell command that is a path (`copy /Y D:\\b\\x.msi \\\\fs\\`:
    the source), for an error that names no path."""
    command = _field(call, _SHELL_KEYS)
    if not command:
        return None
    for word in command.split()[1:]:
        word = word.strip("'\"")
        if word[:1] == "-" or (word[:1] == "/" and len(word) <= 3):  # a flag (`-f`, `/Y`)
            continue
        if ("\\" in word or "/" in word) and _PATH_ARG.match(word):
            return word
    return None


_KIND_KEY = re.compile(r"(?i:^(?:s?object|kind|entity)$|type$)")


def _input_value_in(call: Event, output: str) -> str | None:
    """The call's one-word input value (an id, a key) that the error message repeats; not one
    that says which kind of object (`{"sobject": "Case"}`: "Resource Case Not Found")."""
    if not isinstance(call.input, dict):
        return None
    for key, value in call.input.items():
        if _KIND_KEY.search(key):
            continue
        if isinstance(value, str | int) and not isinstance(value, bool):
            text = str(value)
            if 3 <= len(text) <= 200 and " " not in text and text in output:
                return text
    return None


_TEST_RUN = re.compile(TEST_COMMANDS, re.IGNORECASE | re.MULTILINE)
_RANGE_DOTS = re.compile(r"\.{2,3}")


def _range_side(target: str) -> str:
    """The side of a git range that is not HEAD (`origin/develop...HEAD` -> `origin/develop`),
    or the range when both sides name something."""
    sides = [side for side in _RANGE_DOTS.split(target) if side and side != "HEAD"]
    return sides[0] if len(sides) == 1 else target


def _as_named(target: str, call: Event) -> str | None:
    """``target`` as the call's input names it: itself (or a form of it, see
    ``_named_in_input``), a BigQuery `project:dataset.table` by its table alone (a query may
    leave the project out), or None when the input does not name it."""
    text = _input_text(call)
    if target[:1] == "/" and target not in text and "/" in target[1:]:
        # An absolute path in the message, relative in the call (`python scripts/seed.py` ->
        # "can't open file '/home/x/app/scripts/seed.py'"): the path as the agent wrote it.
        parts = target.strip("/").split("/")
        for k in range(1, len(parts)):
            tail = "/".join(parts[k:])
            if len(tail) >= 3 and tail in text:
                return tail
    if _named_in_input(target, call, text):
        return target
    if ":" in target:
        table = target.split(":", 1)[1]
        if len(table) >= 3 and table in text:
            return table
    return None


def _named_in_input(target: str, call: Event, text: str) -> bool:
    """Whether ``text``, the input of ``call``, names ``target``."""
    base = target.rstrip("/").rsplit("/", 1)[-1]
    if "\\" in target and not isinstance(call.input, str):
        target = json.dumps(target, ensure_ascii=False)[1:-1]  # as the JSON of the input has it
        base = target.rstrip("/").rsplit("\\\\", 1)[-1]
    # BigQuery's `project:dataset.table` is `project.dataset.table` in SQL; systemd's
    # `x.service` is `x` to systemctl.
    unit = _UNIT_SUFFIX.sub("", target)
    return (
        target in text
        or (len(base) >= 3 and base in text)
        or (":" in target and target.replace(":", ".") in text)
        or (unit != target and len(unit) >= 3 and unit in text)
    )


_UNIT_SUFFIX = re.compile(r"\.(?:service|socket|timer|target|mount)\Z")


_WHAT = {
    "file": ("{tool} `{t}`, which does not exist (the agent assumed a file it had not seen)"),
    "command": "Ran `{t}`, a command that is not installed (the agent assumed it was available)",
    "module": "Used module `{t}`, which is not installed (the agent assumed it existed)",
    "git": "Used git path or revision `{t}`, which the repository does not have",
    "entity": "Called `{tool}` with `{t}`, which the service says does not exist",
    "http404": "Called `{tool}` on `{t}`, which answered 404 Not Found",
    "package": "Installed package `{t}`, which the registry does not have (a made-up name?)",
    "custom": "Called `{tool}` on `{t}`, which does not exist",
}


@detector("not_found", version=3, params=NotFoundParams)
def not_found(session: Session, params: NotFoundParams) -> list[Signal]:
    extra = [re.compile(p, _I) for p in params.patterns]
    probe_extra = frozenset(params.probe_commands)
    call_kind, result_kind = EventKind.TOOL_CALL, EventKind.TOOL_RESULT  # bound once
    calls = {e.call_id: e for e in session.events if e.kind is call_kind and e.call_id}
    signals: list[Signal] = []
    reported: dict[str, Signal] = {}  # missing target -> its signal
    # The calls that create and that delete something (on first need).
    lifecycle: tuple[list[tuple[int, str]], list[tuple[int, str]]] | None = None
    probes = 0
    for result in session.events:
        is_result = result.kind is result_kind and result.call_id is not None
        call = calls.get(result.call_id or "") if is_result else None
        if call is None or not call.call_id:
            continue
        output = result.output or ""
        if _NOTHING.match(output) and _is_probe(call, None, probe_extra):
            probes += 1  # a search that matched nothing is an answer, not an error
            continue
        # A configured pattern says itself that its text is an error.
        unflagged = (
            not result.is_error and not _ERROR_HEAD.match(output) and not _says_error(output)
        )
        if unflagged and (not extra or not any(p.search(output[:4000]) for p in extra)):
            continue
        head = output[:600]
        folded = fold_case(head)
        if any(need in folded for need in _EXCLUDE_NEEDS) and _EXCLUDE.search(head):
            continue
        if may_reject(folded) and _REJECTION.search(head):
            continue
        hit = _match(_unquoted(output) if '\\"' in head else output, extra)
        if hit is None:
            continue
        category, found = hit
        if category == "http404" and _TEST_RUN.search(_field(call, _SHELL_KEYS) or ""):
            continue  # a test run's output: the app under test answered 404, nothing is missing
        target, from_message = _target(category, found, call)
        as_named = _as_named(target, call) if target and from_message else target
        target = as_named or target
        if category == "git" and target and ".." in target:
            target = _range_side(target)
        if _is_probe(call, target, probe_extra):
            probes += 1
            continue
        # A target the agent never named (a skill's template, a build step's own file) was not
        # the agent's assumption: stay silent rather than blame it.
        # (A missing module is the environment's gap whoever imported it: the agent ran code
        # assuming it was installed, as with a missing command.)
        if target and from_message and category not in _ANYONES and as_named is None:
            continue
        # "Is the name free?" before creating it (a repository, a record), or "is it gone?"
        # after deleting it: an existence check.
        if target and category in _LOOKUPS:
            lifecycle = _lifecycle_calls(session) if lifecycle is None else lifecycle
            creating, deleting = lifecycle
            if _named_by(creating, target, after=result.index) or _named_by(
                deleting, target, before=call.index
            ):
                probes += 1
                continue
        first_line = found.group(0).strip().splitlines()[0][:80]
        value = target or first_line
        if value in reported:  # the same missing target again: one signal, the first
            reported[value].data["repeats"] = reported[value].data.get("repeats", 1) + 1
            continue
        tool = call.name or "tool"
        explanation = _WHAT[category].format(tool=tool, t=value)
        if category == "file" and tool.lower() not in ("read", "view"):
            explanation = explanation.replace(f"{tool} `", f"`{tool}` used `", 1)
        signal = reported[value] = Signal(
            kind="not_found",
            value=value,
            events=[call.index, result.index],
            severity=Severity.MEDIUM,
            explanation=explanation + ".",
            data={
                "category": category,
                "error": first_line,
                "tool": tool,
                "template": template(output[:4000], found, category, target),
            },
        )
        signals.append(signal)
    session.meta["not_found_probes"] = probes
    return signals
