from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alerts.models import Example
from alerts.render import Renderer, message_id, slack_escape
from sessions.errors import ConfigError
from tests.alerts.loopback import make_alert

HOSTILE = Example(
    session_id="<!channel>",
    agent_version="<@U123>",
    value="ping <!channel> and <@U123>, *bold* _it_ ~gone~ `code`",
    explanation="see <https://evil.example|here> & *bold*",
)


def texts(node: Any) -> list[str]:
    """Every "text" string anywhere in a blocks structure."""
    if isinstance(node, dict):
        found = [node["text"]] if isinstance(node.get("text"), str) else []
        return found + [t for value in node.values() for t in texts(value)]
    if isinstance(node, list):
        return [t for item in node for t in texts(item)]
    return []


def test_slack_blocks_show_headline_baseline_examples_fix_and_button() -> None:
    blocks = Renderer().slack_blocks([make_alert()], max_examples=1)
    assert blocks[0]["type"] == "header"
    assert blocks[0]["text"]["text"] == "[high] support-bot v7 invents order ids"
    all_text = "\n".join(texts(blocks))
    assert "invented_id rate 4.1% today" in all_text
    assert "*Baseline*\n0.006" in all_text and "*Lift*\n6.83 \u00d7" in all_text
    assert "*Affected sessions*\n37" in all_text
    assert (
        "`sess-001`" in all_text and "ORD-99812" in all_text and "no tool returned it" in all_text
    )
    assert "sess-002" not in all_text  # max_examples=1
    assert "*Examples* (1 of 2)" in all_text
    assert "Make the order lookup tool mandatory" in all_text
    button = blocks[-1]["elements"][0]
    assert button["type"] == "button"
    assert button["url"] == "https://reports.example.com/2026-11-29/support-bot"


def test_slack_blocks_without_report_url_have_no_button_and_tolerate_missing_figures() -> None:
    alert = make_alert(report_url=None, baseline=None, lift=None, examples=[], agent=None)
    blocks = Renderer().slack_blocks([alert], max_examples=3)
    assert all(block["type"] != "actions" for block in blocks)
    assert "*Baseline*\nn/a" in "\n".join(texts(blocks))


def test_session_text_cannot_ping_link_or_format_in_slack() -> None:
    alert = make_alert(
        examples=[HOSTILE],
        summary="rate up <!here>",
        recommended_fix="*do* <@U999>",
        agent="<!channel>",
    )
    renderer = Renderer()
    blocks = renderer.slack_blocks([alert], max_examples=3)
    rendered = [*texts(blocks), renderer.slack_text([make_alert(title="<!channel> *x*")])]
    for text in rendered:
        for markup in ("<!channel>", "<@U123>", "<!here>", "<@U999>", "*bold*", "_it_", "~gone~"):
            assert markup not in text
        assert "<https://evil" not in text and "`code`" not in text
    joined = "\n".join(rendered)
    assert "&lt;!channel&gt;" in joined and "&lt;@U123&gt;" in joined and "&amp;" in joined
    # the words are still there for a person to read
    assert "bold" in joined and "gone" in joined


def test_slack_escape_puts_zero_width_spaces_around_formatting_characters() -> None:
    assert slack_escape("*a*") == "\u200b*\u200ba\u200b*\u200b"
    assert slack_escape("a<b>&c") == "a&lt;b&gt;&amp;c"
    assert slack_escape("invented_id_rate x*y") == "invented_id_rate x*y"  # inside a word: inert
    assert slack_escape("_x") == "\u200b_\u200bx"


def test_digest_separates_alerts_and_stays_within_slacks_block_limit() -> None:
    two = Renderer().slack_blocks([make_alert(), make_alert(key="other")], max_examples=2)
    assert two[0]["type"] == "context" and "2 alerts" in two[0]["elements"][0]["text"]
    assert sum(block["type"] == "divider" for block in two) == 1
    many = [make_alert(key=f"k{i}", examples=[HOSTILE] * 10) for i in range(30)]
    blocks = Renderer().slack_blocks(many, max_examples=10)
    assert len(blocks) <= 50
    assert "more alerts not shown" in blocks[-1]["elements"][0]["text"]


def test_email_escapes_session_text_in_html_and_keeps_the_subject_on_one_line() -> None:
    alert = make_alert(
        title="ids\r\nBcc: victim@example.com",
        examples=[Example("s<1>", None, "<script>alert(1)</script>", "a & b")],
    )
    subject, text, html = Renderer().email([alert], chart_cids={alert.id: "chart1@x"})
    assert "\n" not in subject and "\r" not in subject
    assert subject == "[halluwatch] high: ids Bcc: victim@example.com"
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "s&lt;1&gt;" in html and "a &amp; b" in html
    assert '<img src="cid:chart1@x"' in html
    assert "<script>alert(1)</script>" in text  # plain text needs no escaping
    assert "Baseline:          0.006" in text and f"Alert id: {alert.id}" in text


def test_email_digest_subject_names_count_and_highest_severity() -> None:
    alerts = [make_alert(severity="low"), make_alert(key="b", severity="critical")]
    subject, text, _ = Renderer().email(alerts)
    assert subject == "[halluwatch] 2 alerts (highest: critical)"
    assert text.startswith("halluwatch digest: 2 alerts")


def test_webhook_payload_is_the_documented_versioned_schema() -> None:
    alert = make_alert()
    payload = Renderer().webhook_payload([alert])
    assert payload["type"] == "halluwatch.alerts" and payload["version"] == 1
    assert payload["id"] == alert.id and payload["count"] == 1
    (item,) = payload["alerts"]
    assert item["id"] == alert.id and item["day"] == "2026-11-29"
    assert item["examples"][0]["session_id"] == "sess-001"
    assert json.loads(json.dumps(payload)) == payload


def test_digest_id_is_a_hash_of_the_ids_independent_of_order() -> None:
    a, b = make_alert(), make_alert(key="other")
    assert message_id([a, b]) == message_id([b, a])
    assert message_id([a, b]) not in {a.id, b.id} and len(message_id([a, b])) == 24
    assert message_id([a]) == a.id


def test_console_text_has_the_figures() -> None:
    text = Renderer().console([make_alert()])
    assert text.startswith("[HIGH] support-bot v7 invents order ids")
    assert "baseline 0.006, lift 6.83" in text and "sess-001" in text


def test_override_folder_wins_and_strict_undefined_raises(tmp_path: Path) -> None:
    (tmp_path / "console.txt.j2").write_text("{{ alerts | length }} alerts, {{ owner }}\n")
    renderer = Renderer(tmp_path)
    with pytest.raises(ConfigError, match="'owner' is undefined"):
        renderer.console([make_alert()])
    # templates the team did not override still come from the package
    assert renderer.slack_blocks([make_alert()], max_examples=1)[0]["type"] == "header"


def test_override_template_reads_a_missing_attribute_strictly(tmp_path: Path) -> None:
    (tmp_path / "email.txt.j2").write_text("{% for a in alerts %}{{ a.colour }}{% endfor %}")
    with pytest.raises(ConfigError, match="colour"):
        Renderer(tmp_path).email([make_alert()])


def test_missing_folder_and_broken_template_stop_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Renderer(tmp_path / "nope")
    (tmp_path / "email.html.j2").write_text("{% if %}")
    with pytest.raises(ConfigError, match=r"email\.html\.j2, line 1"):
        Renderer(tmp_path)
