"""``not_found``: labelled cases, unit checks, and what the real corpus shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from labelled_cases import load_cases
from tests_support import shared_path

from detectors.not_found import _NEED_LIST, _NEED_TREE, NotFoundParams, not_found
from sessions.errors import ConfigError
from sessions.models import Session
from sessions.reader import SessionReader

CASES = load_cases("not_found.jsonl")


def test_cases_cover_both_formats_and_hard_negatives() -> None:
    assert len(CASES) >= 12
    assert {c.filename for c in CASES} == {"s.json", "s.jsonl"}
    assert sum(1 for c in CASES if not c.expected) >= 6


def _read(name: str) -> Session:
    case = next(c for c in CASES if c.id == name)
    raw = "\n".join(json.dumps(line) for line in case.session).encode()
    return SessionReader().read_unit([(case.filename, raw)]).sessions[0]


def test_probes_are_counted_on_the_session() -> None:
    session = _read("nf-cc-ls-probe")
    assert not_found(session, NotFoundParams()) == []
    assert session.meta["not_found_probes"] == 1
    missing = _read("nf-cc-read-missing")
    [signal] = not_found(missing, NotFoundParams())
    assert missing.meta["not_found_probes"] == 0
    assert str(signal.severity) == "medium" and len(signal.events) == 2
    assert signal.explanation.startswith("Read `/repo/config.yaml`, which does not exist")


def test_extra_probe_command_and_bad_pattern() -> None:
    session = _read("nf-cc-command-127")
    assert not_found(session, NotFoundParams(probe_commands=["tree"])) == []
    assert session.meta["not_found_probes"] == 1
    with pytest.raises(ConfigError):
        from detectors.registry import get_detector

        get_detector("not_found").params({"patterns": ["(unclosed"]})


def _claude_code_units(folder: Path) -> list[list[tuple[str, bytes]]]:
    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        groups.setdefault(path.name.split("__")[0].removesuffix(".jsonl"), []).append(path)
    return [[(p.name, p.read_bytes()) for p in paths] for paths in groups.values()]


def test_real_claude_code_corpus() -> None:
    reader = SessionReader()
    found: list[tuple[str, str]] = []
    probes = 0
    for folder in ("spotter", "reliability"):
        for unit in _claude_code_units(shared_path(f"corpus/claude_code/{folder}")):
            for session in reader.read_unit(unit).sessions:
                found += [(s.value.rsplit("/", 1)[-1], s.data["category"]) for s in
                          not_found(session, NotFoundParams())]  # fmt: skip
                probes += session.meta["not_found_probes"]
    # Read by hand: two real "File does not exist." Reads and one `tree` that is not installed.
    # Not flagged: "Sibling tool call errored", edit mismatches, a skill template's git revision,
    # the empty Globs/Greps/finds (probes).
    assert sorted(found) == [
        ("conn_case.ex", "file"),
        ("session_live.html.heex", "file"),
        ("tree", "command"),
    ]
    assert probes >= 15


def test_real_tau_bench_file() -> None:
    path = shared_path("corpus/openai_chat/tau_airline/gpt-4o-airline.dev.json")
    sessions = SessionReader().read_unit([(path.name, path.read_bytes())]).sessions
    signals = [s for session in sessions for s in not_found(session, NotFoundParams())]
    # Every tau "Error: payment method ... not found" (7 errors, 6 distinct targets within their
    # sessions: a repeat is one signal); the other errors (balance, seats, totals) are not missing
    # targets.
    assert len(signals) == 6
    assert sum(s.data.get("repeats", 1) for s in signals) == 7
    assert {s.value.split("_")[0] for s in signals} == {"certificate", "credit"}
    assert all(s.data["category"] == "entity" for s in signals)


def _bash_session(command: str, output: str) -> Session:
    return _calls_session([("bash", {"command": command}, output)])


def _calls_session(calls: list[tuple[str, dict[str, object], str]]) -> Session:
    """An OpenAI chat session: a user turn, then each call with its output."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "set the project up"}]
    for n, (name, args, output) in enumerate(calls):
        call = {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": ""}}
        call["function"]["arguments"] = json.dumps(args)
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": output})
    raw = json.dumps({"id": "s1", "messages": messages}).encode()
    return SessionReader().read_unit([("s.json", raw)]).sessions[0]


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        ("apt-get install -y llvm-dev", "E: Unable to locate package llvm-dev", ["llvm-dev"]),
        (
            "brew install jqq",
            'Error: No available formula with the name "jqq". Did you mean jq?',
            ["jqq"],
        ),
        (
            "gem install rails-api-x",
            "ERROR:  Could not find gem 'rails-api-x' (>= 0)",
            ["rails-api-x"],
        ),
        (
            "pip install reqests",
            "ERROR: No matching distribution found for reqests",
            ["reqests"],
        ),
        ("cargo clippy", "error: no such command: `clippy`", ["clippy"]),
        (
            "uv add polars polars-autoprofile",
            "  \u00d7 No solution found when resolving dependencies:\n  \u2570\u2500\u25b6 Because "
            "polars-autoprofile was not found in the package registry and your project depends "
            "on polars-autoprofile, we can conclude that your project's requirements are "
            "unsatisfiable.",
            ["polars-autoprofile"],
        ),
        # An error quoted inside a JSON result's member (`"stderr": "... \"x\" not found"`).
        (
            "kubectl -n payments rollout restart deployment/ledger-worker",
            json.dumps(
                {
                    "exit_code": 1,
                    "stderr": 'Error from server (NotFound): deployments.apps "ledger-worker" '
                    "not found",
                }
            ),
            ["ledger-worker"],
        ),
        # A package the agent did not name (a build step's own dependency) is not its assumption.
        ("make deps", "E: Unable to locate package libfoo-dev", []),
    ],
)
def test_package_managers(command: str, output: str, expected: list[str]) -> None:
    signals = not_found(_bash_session(command, output), NotFoundParams())
    assert [s.value for s in signals] == expected


@pytest.mark.parametrize(
    ("args", "output", "expected"),
    [
        # The target is the call's argument the error names (the key, the bucket, the table).
        (
            {"bucket": "exports", "key": "manifests/2026-03-11/route.csv"},
            "Error: NoSuchKey: An error occurred (NoSuchKey) when calling the GetObject "
            "operation: The specified key does not exist.",
            ["manifests/2026-03-11/route.csv"],
        ),
        (
            {"bucket": "exports-eu", "key": "a.csv"},
            "Error: The specified bucket does not exist",
            ["exports-eu"],
        ),
        (
            {"table": "orders_v2", "key": "42"},
            "Error: ResourceNotFoundException: Requested resource not found: Table: orders_v2",
            ["orders_v2"],
        ),
        # Not an error: a listing that mentions the words.
        ({"bucket": "exports", "key": "a.csv"}, '{"Contents": [{"Key": "NoSuchKey.txt"}]}', []),
    ],
)
def test_cloud_storage_and_service_errors(
    args: dict[str, object], output: str, expected: list[str]
) -> None:
    signals = not_found(_calls_session([("s3_get_object", args, output)]), NotFoundParams())
    assert [s.value for s in signals] == expected


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        # A library the code imports is the environment's gap, whoever named it (as a module).
        (
            "GO111MODULE=off go build ./cmd/ledgerd",
            'Exit code 1\nmain.go:14:2: cannot find package "github.com/nw/ledger/reconcile" in'
            " any of:",
            ["github.com/nw/ledger/reconcile"],
        ),
        (
            "mvn -B dependency:resolve",
            "[ERROR] Failed: Could not find artifact com.nw:audit-client:jar:1.8.4 in nexus",
            ["com.nw:audit-client:jar:1.8.4"],
        ),
        (
            "dotnet add app.csproj package Contoso.Telemetry",
            '{"exit_code": 1, "output": "error: NU1101: Unable to find package Contoso.Telemetry.'
            ' No packages exist with this id"}',
            ["Contoso.Telemetry"],
        ),
        (
            "docker pull ghcr.io/nw/api:2.14.3",
            "Error response from daemon: manifest for ghcr.io/nw/api:2.14.3 not found: manifest"
            " unknown",
            ["ghcr.io/nw/api:2.14.3"],
        ),
        # Windows: PowerShell names the path (after echoing the command); cmd does not.
        (
            "Get-Content C:\\app\\web.config -ErrorAction Stop",
            "Get-Content : Cannot find path 'C:\\app\\web.config' because it does not exist.",
            ["C:\\app\\web.config"],
        ),
        (
            "copy /Y D:\\builds\\7.4.2\\pos.msi \\\\fs01\\pos\\",
            "The system cannot find the path specified.\n        0 file(s) copied.",
            ["D:\\builds\\7.4.2\\pos.msi"],
        ),
        (
            "cargo run --bin migrate -- --config config/migrate.toml",
            "Error: failed to read config file `config/migrate.toml`\n\nCaused by:\n"
            "    No such file or directory (os error 2)",
            ["config/migrate.toml"],
        ),
        (
            "az webapp show --name api-stg --resource-group rg",
            "ERROR: (ResourceNotFound) The Resource 'Microsoft.Web/sites/api-stg' under resource "
            "group 'rg' was not found.",
            ["api-stg"],
        ),
        # cmd's and PowerShell's unknown command, PowerShell's missing module (no error flag).
        (
            "terraform -chdir=infra plan",
            "'terraform' is not recognized as an internal or external command,\n"
            "operable program or batch file.",
            ["terraform"],
        ),
        (
            "kubectl get pods",
            "kubectl : The term 'kubectl' is not recognized as the name of a cmdlet, function, "
            "script file, or operable program.",
            ["kubectl"],
        ),
        (
            "Import-Module SqlServer; Invoke-Sqlcmd -Query 'SELECT 1'",
            "Import-Module : The specified module 'SqlServer' was not loaded because no valid "
            "module file was found in any module directory.",
            ["SqlServer"],
        ),
        # A 404 body naming the id the command's URL holds: that id, not the whole URL.
        (
            "curl -s http://localhost:7700/v1/jobs/0b8f3e1a-5c27-4d9e-b6a4-2f9d8c6e1b07/logs",
            '{"status": 404, "error": "Not Found", "message": "job '
            '0b8f3e1a-5c27-4d9e-b6a4-2f9d8c6e1b07 not found"}',
            ["0b8f3e1a-5c27-4d9e-b6a4-2f9d8c6e1b07"],
        ),
        # pytest's and an editor tool's missing path; python's, with no error flag.
        (
            "pytest tests/test_billing.py",
            "ERROR: file or directory not found: tests/test_billing.py",
            ["tests/test_billing.py"],
        ),
        (
            "python tests/test_x.py",
            "python: can't open file '/repo/tests/test_x.py': [Errno 2] No such file or directory",
            ["tests/test_x.py"],
        ),
        # npm's registry miss with no error flag: its `npm ERR!` lines open the output.
        (
            "npm install --save-dev @acme/eslint-config-strictest",
            "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/"
            "@acme%2feslint-config-strictest - Not found\nnpm ERR! 404  "
            "'@acme/eslint-config-strictest@*' is not in this registry.",
            ["@acme/eslint-config-strictest"],
        ),
        (
            "bq query 'SELECT 1 FROM `nw.finance.revenue_v2`'",
            "404 Not found: Table nw:finance.revenue_v2 was not found in location EU",
            ["nw:finance.revenue_v2"],
        ),
    ],
)
def test_build_tools_windows_and_clouds(command: str, output: str, expected: list[str]) -> None:
    signals = not_found(_bash_session(command, output), NotFoundParams())
    assert [s.value for s in signals] == expected


_MISSING_REPO = (
    '{"data": {"repository": null}, "errors": [{"type": "NOT_FOUND", "message": '
    "\"Could not resolve to a Repository with the name 'nw-labs/ledger-export'.\"}]}"
)


@pytest.mark.parametrize(
    ("later", "expected"),
    [
        # The name was looked up and then created: an existence check, counted as a probe.
        (
            [
                (
                    "github_graphql",
                    {
                        "query": "mutation { createRepository(input: "
                        '{name: "ledger-export"}) { id } }'
                    },
                    '{"data": {}}',
                )
            ],
            [],
        ),
        # Nothing created it afterwards (a read of another name is no creation).
        (
            [("github_graphql", {"query": '{ repository(name: "ledger-export") { id } }'}, "{}")],
            ["nw-labs/ledger-export"],
        ),
        ([], ["nw-labs/ledger-export"]),
    ],
)
def test_a_lookup_before_creating_the_target_is_a_probe(
    later: list[tuple[str, dict[str, object], str]], expected: list[str]
) -> None:
    first = (
        "github_graphql",
        {"query": '{ repository(owner: "nw-labs", name: "ledger-export") { id } }'},
        _MISSING_REPO,
    )
    session = _calls_session([first, *later])
    assert [s.value for s in not_found(session, NotFoundParams())] == expected
    assert session.meta["not_found_probes"] == (0 if expected else 1)


def test_a_missing_record_is_named_by_the_calls_id_argument() -> None:
    session = _calls_session(
        [
            (
                "sf_get_account",
                {"account_id": "0018d00000XkQ2vAAF", "fields": "Name"},
                '[{"errorCode":"NOT_FOUND","message":"The requested resource does not exist"}]',
            ),
            (
                "jira_get_issue",
                {"issue_key": "SYNC-1187"},
                '{"errorMessages":["Issue does not exist or you do not have permission to see'
                ' it."]}',
            ),
        ]
    )
    assert [s.value for s in not_found(session, NotFoundParams())] == [
        "0018d00000XkQ2vAAF",
        "SYNC-1187",
    ]


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        # zsh names the path last; a `cd` into it is an assumption, not a probe.
        (
            "cd infra/nginx && grep -rn client_max_body_size .",
            "Exit code 1\n(eval):cd:1: no such file or directory: infra/nginx",
            ["infra/nginx"],
        ),
        (
            "java -jar etl.jar --config conf/prod.properties",
            'Exception in thread "main" java.io.FileNotFoundException: conf/prod.properties (No'
            " such file or directory)",
            ["conf/prod.properties"],
        ),
        # A harness's closing exit status marks the output as a failure.
        (
            "pip install xlsx-export-utils",
            "Defaulting to user installation\nERROR: Could not find a version that satisfies the"
            " requirement xlsx-export-utils (from versions: none)\n\n[exit status 1]",
            ["xlsx-export-utils"],
        ),
        (
            "gcloud container clusters get-credentials shop-gke --region us-central1",
            "ERROR: (gcloud.container.clusters.get-credentials) ResponseError: code=404, "
            "message=Not found: projects/acme/locations/us-central1/clusters/shop-gke.",
            ["shop-gke"],
        ),
        (
            "aws iam attach-role-policy --role-name orders-exec --policy-arn arn:aws:iam::x",
            "An error occurred (NoSuchEntity) when calling the AttachRolePolicy operation: The role"
            " with name orders-exec cannot be found.",
            ["orders-exec"],
        ),
        (
            "aws dynamodb describe-table --table-name OrdersV2",
            "An error occurred (ResourceNotFoundException) when calling the DescribeTable "
            "operation: Requested resource not found: Table: OrdersV2 not found",
            ["OrdersV2"],
        ),
        (
            "mysql -e 'use legacy_crm'",
            "ERROR 1049 (42000): Unknown database 'legacy_crm'",
            ["legacy_crm"],
        ),
        (
            "helm rollback checkout-api -n shop --wait",
            "Error: release: not found",
            ["checkout-api"],
        ),
    ],
)
def test_more_runtimes_and_services(command: str, output: str, expected: list[str]) -> None:
    signals = not_found(_bash_session(command, output), NotFoundParams())
    assert [s.value for s in signals] == expected


def test_services_answering_404_with_data_and_search_tools_on_missing_containers() -> None:
    session = _calls_session(
        [
            ("zendesk_get_ticket", {"ticket_id": 48213}, 'HTTP 404\n{"error":"RecordNotFound"}'),
            ("shopify_get", {"path": "/admin/api/2024-07/orders/5630114021513.json"}, "HTTP 404"),
            # A search aimed at an index that does not exist assumed it; one that found nothing
            # is a probe.
            (
                "es_search",
                {"index": "logs-2025.06.31", "query": "level:ERROR"},
                "Error: NotFoundError(404, 'index_not_found_exception', 'no such index "
                "[logs-2025.06.31]')",
            ),
        ]
    )
    values = [s.value for s in not_found(session, NotFoundParams())]
    assert values == ["48213", "5630114021513", "logs-2025.06.31"]


def test_a_check_that_a_deleted_object_is_gone_is_a_probe() -> None:
    deleted = _calls_session(
        [
            (
                "bash",
                {"command": "kubectl delete namespace preview-482"},
                'namespace "preview-482" deleted',
            ),
            (
                "bash",
                {"command": "kubectl get namespace preview-482"},
                'Error from server (NotFound): namespaces "preview-482" not found',
            ),
        ]
    )
    assert not_found(deleted, NotFoundParams()) == []
    assert deleted.meta["not_found_probes"] == 1
    never = _calls_session(
        [
            (
                "bash",
                {"command": "kubectl get namespace preview-482"},
                'Error from server (NotFound): namespaces "preview-482" not found',
            )
        ]
    )
    assert [s.value for s in not_found(never, NotFoundParams())] == ["preview-482"]


def test_need_tree_holds_every_need_once_under_a_root_it_holds() -> None:
    # A text lacking a root lacks the needs under it: the tree must lose no need.
    placed = [root for root, _ in _NEED_TREE] + [n for _, under in _NEED_TREE for n in under]
    assert sorted(placed) == sorted(_NEED_LIST)
    assert all(root in need for root, under in _NEED_TREE for need in under)
    roots = [root for root, _ in _NEED_TREE]
    assert not any(a != b and a in b for a in roots for b in roots)


@pytest.mark.parametrize(
    ("calls", "expected", "probes"),
    [
        # A HEAD request (a link check) asks whether the page is there: a probe.
        ([("http_request", {"method": "HEAD", "url": "https://d.acme.dev/v1"}, "HTTP 404")], [], 1),
        ([("http_request", {"method": "GET", "url": "https://d.acme.dev/v1"}, "HTTP 404")], 1, 0),
        # The branch a tool's name looks up (`github_get_branch` -> `branch`), created next.
        (
            [
                (
                    "github_get_branch",
                    {"repo": "acme/payments", "branch": "fix/retry"},
                    '{"message": "Branch not found", "status": "404"}',
                ),
                ("github_create_branch", {"repo": "acme/payments", "branch": "fix/retry"}, "{}"),
            ],
            [],
            1,
        ),
        (
            [
                (
                    "github_get_branch",
                    {"repo": "acme/payments", "branch": "fix/retry"},
                    '{"message": "Branch not found", "status": "404"}',
                ),
            ],
            ["fix/retry"],
            0,
        ),
    ],
)
def test_head_requests_and_lookups_before_a_create_are_probes(
    calls: list[tuple[str, dict[str, object], str]], expected: object, probes: int
) -> None:
    session = _calls_session(calls)
    found = [s.value for s in not_found(session, NotFoundParams())]
    assert (len(found) if isinstance(expected, int) else found) == expected
    assert session.meta["not_found_probes"] == probes


def test_argv_commands_are_read_as_the_script_a_shell_runs() -> None:
    """Codex gives its shell tool argv (`["bash", "-lc", "ls config/"]`): an `ls` there is a
    probe as it is anywhere, and a miss after it is read from the script."""
    session = _calls_session(
        [
            (
                "shell",
                {"command": ["bash", "-lc", "ls config/"]},
                "Exit code: 2\nWall time: 1 seconds\nOutput:\n"
                "ls: cannot access 'config/': No such file or directory",
            ),
            (
                "shell",
                {"command": ["bash", "-lc", "cat config/app.yaml"]},
                "cat: config/app.yaml: No such file or directory",
            ),
        ]
    )
    signals = not_found(session, NotFoundParams())
    assert [s.value for s in signals] == ["config/app.yaml"]
    assert session.meta["not_found_probes"] == 1


@pytest.mark.parametrize(("then", "expected"), [("helm install web ./chart", []), ("", ["web"])])
def test_a_helm_release_looked_up_before_it_is_installed_is_a_probe(
    then: str, expected: list[str]
) -> None:
    calls = [("bash", {"command": "helm status web -n preview"}, "Error: release: not found")]
    if then:
        calls.append(("bash", {"command": then}, "NAME: web\nSTATUS: deployed"))
    assert [s.value for s in not_found(_calls_session(calls), NotFoundParams())] == expected


def test_an_editor_tools_missing_path() -> None:
    output = (
        "ERROR:\nInvalid `path` parameter: /workspace/src/utils/helpers.py. The path "
        "/workspace/src/utils/helpers.py does not exist. Please provide a valid path."
    )
    session = _calls_session(
        [
            (
                "str_replace_editor",
                {"command": "view", "path": "/workspace/src/utils/helpers.py"},
                output,
            )
        ]
    )
    assert [s.value for s in not_found(session, NotFoundParams())] == [
        "/workspace/src/utils/helpers.py"
    ]
