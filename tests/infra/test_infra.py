"""Static checks of the deployment files in ``infra/`` (no Docker engine, no Terraform, no cloud
here): they parse, and every name, path and reference in them points at something real."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from tests_support import cli_env, halluwatch_bin

REPO = Path(__file__).resolve().parents[2]
INFRA = REPO / "infra"


def _yaml(name: str) -> Any:
    return yaml.safe_load((INFRA / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------- prefect.yaml


def _work_pool_name() -> str:
    names = {d["work_pool"]["name"] for d in _yaml("prefect.yaml")["deployments"]}
    assert len(names) == 1, names
    return names.pop()


def test_prefect_yaml_entrypoints_are_real_flows_with_the_parameters_they_declare() -> None:
    from prefect import Flow

    from flows.serve import BACKFILL_DEPLOYMENT, NIGHTLY_DEPLOYMENT

    spec = _yaml("prefect.yaml")
    deployments = {d["name"]: d for d in spec["deployments"]}
    assert set(deployments) == {NIGHTLY_DEPLOYMENT, BACKFILL_DEPLOYMENT}
    flow_names = {}
    for name, d in deployments.items():
        path, _, attr = d["entrypoint"].partition(":")
        assert (REPO / path).is_file(), f"{name}: entrypoint file {path} does not exist"
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        flow = getattr(module, attr)
        assert isinstance(flow, Flow), f"{name}: {d['entrypoint']} is not a Prefect flow"
        flow_names[name] = flow.name
        signature = inspect.signature(flow.fn)
        declared = set(d["parameters"])
        assert declared <= set(signature.parameters), f"{name}: unknown {declared}"
        required = {p.name for p in signature.parameters.values() if p.default is p.empty}
        assert required <= declared, f"{name}: parameters without a value: {required - declared}"
        assert d["work_pool"]["name"] == "halluwatch"
    assert flow_names == {NIGHTLY_DEPLOYMENT: "nightly", BACKFILL_DEPLOYMENT: "backfill"}

    nightly = deployments[NIGHTLY_DEPLOYMENT]
    assert nightly["parameters"]["date"] == "yesterday"
    (schedule,) = nightly["schedules"]
    assert len(schedule["cron"].split()) == 5
    ZoneInfo(schedule["timezone"])
    assert not deployments[BACKFILL_DEPLOYMENT]["schedules"]
    # the config path of the deployments is where compose mounts the config
    assert nightly["parameters"]["config"] in _compose_mounts("worker")

    (pull,) = spec["pull"]
    assert list(pull) == ["prefect.deployments.steps.set_working_directory"]
    assert pull["prefect.deployments.steps.set_working_directory"]["directory"]


# ---------------------------------------------------------------------------- docker compose

ENV_REF = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)")
SECRET_WORDS = ("PASSWORD", "SECRET", "TOKEN", "API_KEY", "ACCESS_KEY")


def _compose() -> dict[str, Any]:
    spec = _yaml("docker-compose.yml")
    assert isinstance(spec, dict)
    return spec


def _compose_mounts(service: str) -> dict[str, Path]:
    """Container path -> host path of a service's bind mounts."""
    mounts = {}
    for volume in _compose()["services"][service].get("volumes", []):
        host, container = volume.split(":")[:2]
        if host.startswith("."):
            mounts[container] = (INFRA / host).resolve()
    return mounts


def _env_example() -> dict[str, str]:
    pairs = {}
    for line in (INFRA / ".env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value
    return pairs


def test_compose_services_references_and_mounts_are_consistent() -> None:
    services = _compose()["services"]
    assert {"prefect-server", "minio", "minio-init", "worker", "halluwatch"} <= set(services)
    assert services["prefect-server"]["image"] == "prefecthq/prefect:3-latest"
    assert "prefect server start --host 0.0.0.0" in services["prefect-server"]["command"]
    assert services["minio-init"]["image"].startswith("minio/mc")

    for name, service in services.items():
        assert "build" in service or "image" in service, name
        if "build" in service:
            context = (INFRA / service["build"]["context"]).resolve()
            assert (context / service["build"]["dockerfile"]).is_file(), name
            assert context == REPO, f"{name}: the image is built from the repository root"
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} depends on unknown service {dependency}"
        for host in _compose_mounts(name).values():
            assert host.exists(), f"{name} mounts {host}, which does not exist"
        for env_file in service.get("env_file", []):
            assert (INFRA / f"{env_file}.example").is_file(), f"{name}: no {env_file}.example"

    # the worker and the job are the job image; the worker serves prefect.yaml's pool
    worker, job = services["worker"], services["halluwatch"]
    assert worker["image"] == job["image"] and worker["build"] == job["build"]
    command = worker["command"]
    assert command[:2] == ["worker", "start"] and worker["entrypoint"] == ["prefect"]
    assert command[command.index("--pool") + 1] == _work_pool_name()

    # Prefect and S3 endpoints name real services
    for name in ("worker", "halluwatch", "deploy"):
        env = services[name]["environment"]
        assert env["PREFECT_API_URL"] == "http://prefect-server:4200/api"
        assert env["AWS_ENDPOINT_URL"] == "http://minio:9000"


def test_compose_secrets_come_from_the_env_file_only() -> None:
    text = (INFRA / "docker-compose.yml").read_text()
    example = _env_example()
    for ref in ENV_REF.findall(text):
        assert ref in example, f"docker-compose.yml uses ${{{ref}}}, not listed in .env.example"
    for name, service in _compose()["services"].items():
        env = service.get("environment", {})
        for key, value in env.items():
            if any(word in key for word in SECRET_WORDS):
                assert str(value).startswith("${"), f"{name}: {key} is inline, not from .env"
    # the example holds no real secret
    for key, value in example.items():
        if any(word in key for word in SECRET_WORDS):
            assert value in ("", "change-me-to-a-long-random-password"), key


def test_compose_job_config_is_valid_and_reads_the_bucket_minio_init_creates() -> None:
    from flows.config import load_config

    mounts = _compose_mounts("worker")
    host = mounts["/etc/halluwatch/halluwatch.yaml"]
    assert host == INFRA / "halluwatch.compose.yaml"
    cfg = load_config(host).config
    assert cfg.sessions.endpoint_url == cfg.results.endpoint_url == "http://minio:9000"
    bucket = cfg.sessions.location.removeprefix("s3://").split("/")[0]
    assert cfg.results.location is not None
    assert cfg.results.location.removeprefix("s3://").split("/")[0] == bucket
    init = " ".join(_compose()["services"]["minio-init"]["command"])
    assert f"mc mb --ignore-existing local/{bucket}" in init


# ---------------------------------------------------------------------------- Dockerfile


def test_dockerfile_copies_what_exists_and_runs_as_a_non_root_user() -> None:
    # One instruction per entry, its continuation lines joined.
    text = "\n".join(
        line
        for line in (INFRA / "Dockerfile").read_text().splitlines()
        if not line.lstrip().startswith("#")
    )
    lines = [line.strip() for line in text.replace("\\\n", " ").splitlines() if line.strip()]
    assert lines[0] == "FROM python:3.11-slim"
    copied = set()
    for line in lines:
        if line.startswith("COPY "):
            *sources, _dest = [p for p in line.split()[1:] if not p.startswith("--")]
            for source in sources:
                assert (REPO / source).exists(), f"COPY {source}: not in the repository"
                copied.add(source.split("/")[0])
    # every package `pip install .` installs is copied
    pyproject = (REPO / "pyproject.toml").read_text()
    packages = re.search(r"include = \[(.*?)\]", pyproject)
    assert packages is not None
    for package in re.findall(r'"(\w+)\*"', packages.group(1)):
        assert package in copied, f"package {package} is not copied into the image"
    assert "setup.py" in copied  # the build (and the list of modules it compiles)
    # the package with the extra a `task_runner: {type: dask}` config needs (workers use the
    # image), its hot modules compiled in place and checked to be
    (install,) = [line for line in lines if line.startswith("RUN ") and "pip install" in line]
    assert 'HALLUWATCH_COMPILE=1 pip install -e ".[dask]"' in " ".join(install.split())
    assert 'm.__file__.endswith(".so")' in install
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    (entrypoint,) = [line for line in lines if line.startswith("ENTRYPOINT ")]
    assert json.loads(entrypoint.removeprefix("ENTRYPOINT ")) == ["halluwatch"]


# ---------------------------------------------------------------------------- Terraform

TERRAFORM = INFRA / "terraform"
WRITE_ACTIONS = {"s3:PutObject", "s3:DeleteObject"}


def _policy(
    bucket: str = "acme-agents", sessions: str = "sessions/", results: str = "halluwatch/"
) -> dict[str, Any]:
    text = (TERRAFORM / "policy.json.tftpl").read_text()
    placeholders = set(re.findall(r"\$\{(\w+)\}", text))
    values = {"bucket": bucket, "sessions_prefix": sessions, "results_prefix": results}
    assert placeholders == set(values)
    for key, value in values.items():
        text = text.replace("${" + key + "}", value)
    policy: dict[str, Any] = json.loads(text)
    return policy


def _listify(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def test_iam_policy_is_least_privilege() -> None:
    policy = _policy()
    allowed: dict[str, set[str]] = {}
    for statement in policy["Statement"]:
        assert statement["Effect"] == "Allow"
        assert "NotAction" not in statement and "NotResource" not in statement
        actions = _listify(statement["Action"])
        for action in actions:
            assert "*" not in action, f"wildcard action {action}"
            resources = _listify(statement["Resource"])
            allowed.setdefault(action, set()).update(resources)
            if action == "s3:ListBucket":
                assert resources == ["arn:aws:s3:::acme-agents"]
                prefixes = statement["Condition"]["StringLike"]["s3:prefix"]
                assert all(p in ("sessions/*", "halluwatch/*") for p in _listify(prefixes))
    assert set(allowed) == {"s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
    assert allowed["s3:GetObject"] == {
        "arn:aws:s3:::acme-agents/sessions/*",
        "arn:aws:s3:::acme-agents/halluwatch/*",
    }
    for action in WRITE_ACTIONS:  # never bucket-wide, never on the sessions
        assert allowed[action] == {"arn:aws:s3:::acme-agents/halluwatch/*"}, action


def test_terraform_renders_the_policy_and_holds_no_secret_values() -> None:
    main = (TERRAFORM / "main.tf").read_text()
    assert 'templatefile("${path.module}/policy.json.tftpl"' in main
    for var in ("bucket", "sessions_prefix", "results_prefix"):
        assert re.search(rf"\n\s+{var}\s+=", main), f"templatefile does not pass {var}"
    every = "\n".join(p.read_text() for p in TERRAFORM.glob("*.tf"))
    assert "aws_secretsmanager_secret_version" not in every
    assert "secret_string" not in every
    assert 'resource "aws_secretsmanager_secret"' in every
    assert 'resource "aws_s3_bucket_lifecycle_configuration"' in every
    variables = (TERRAFORM / "variables.tf").read_text()
    for name in ("detail_retention_days", "summary_retention_days", "results_prefix"):
        assert f'variable "{name}"' in variables
    for text in [main, variables, (TERRAFORM / "outputs.tf").read_text()]:
        assert text.count("{") == text.count("}"), "unbalanced braces"


# ---------------------------------------------------------------------------- halluwatch serve


def _serve(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [halluwatch_bin(), "serve", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=cli_env(PREFECT_HOME=str(tmp_path / "prefect-home"), **env),
        timeout=120,
        check=False,
    )


def test_serve_with_a_bad_config_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("run:\n  timezone: Mars/Olympus\n")
    result = _serve("--config", str(bad), tmp_path=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "halluwatch: error: run.timezone: unknown time zone 'Mars/Olympus'"
    ]
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--timezone", "Nowhere/Land"], "--timezone: unknown time zone 'Nowhere/Land'"),
        (["--cron", "every night"], "--cron 'every night' is not a cron expression"),
    ],
)
def test_serve_with_bad_arguments_exits_2_with_one_line(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    config = str(REPO / "examples" / "halluwatch.yaml")
    result = _serve("--config", config, *extra, tmp_path=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert message in line


def test_serve_without_a_prefect_server_exits_2_naming_prefect_api_url(tmp_path: Path) -> None:
    config = str(REPO / "examples" / "halluwatch.yaml")
    result = _serve("--config", config, "--timezone", "Europe/Berlin", tmp_path=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("halluwatch: error: PREFECT_API_URL is not set")
    assert "prefect server start" in line
