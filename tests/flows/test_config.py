from __future__ import annotations

from pathlib import Path

import pytest

from flows.config import load_config
from sessions.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "halluwatch.yaml"
    path.write_text(text)
    return path


def test_bundled_example_config_loads() -> None:
    loaded = load_config(REPO / "examples" / "halluwatch.yaml")
    assert loaded.config.agents["support-bot"].tools
    assert len(loaded.hash) == 16


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sessions:\n  layot: x\n", "sessions.layot: unknown key"),
        ("sessions:\n  layout: '{week}/'\n", "unknown field 'week'"),
        ("sessions:\n  layout: 'all/'\n", "names no date field"),
        ("sessions:\n  format: word\n", "unknown format 'word'"),
        ("sessions:\n  agent_from_path: '(['\n", "agent_from_path"),
        ("run:\n  timezone: Mars/Base\n", "unknown time zone 'Mars/Base'"),
        ("detectors:\n  unknown_tool:\n    cutoff: 2\n", "detectors.unknown_tool: cutoff"),
        ("detectors:\n  made_up: {}\n", "unknown detector 'made_up'"),
        ("agents:\n  bot:\n    tools_file: nowhere.json\n", "nowhere.json does not exist"),
        ("- a list\n", "top level must be a mapping"),
        ("sessions: [\n", "not valid YAML"),
    ],
)
def test_bad_configs_name_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        load_config(_write(tmp_path, text))
    assert message in str(info.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "absent.yaml")


def test_the_readme_config_reference_is_a_valid_config() -> None:
    import yaml

    from flows.config import parse_config

    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Configuration") :]
    block = section[
        section.index("```yaml\n") + 8 : section.index("```", section.index("```yaml") + 8)
    ]
    loaded = parse_config(yaml.safe_load(block), base=REPO / "examples", source="README.md")
    assert loaded.config.agents["support-bot"].tools
    assert loaded.config.findings.spikes.window_days == 7
