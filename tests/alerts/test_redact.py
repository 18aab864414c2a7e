"""Redaction: what an alert quotes from sessions leaves without addresses, keys or card numbers."""

from __future__ import annotations

import logging
from datetime import date

import pytest

from alerts.models import Alert, Example
from alerts.redact import LogRedaction, Redactor, env_secrets, luhn_ok
from sessions.errors import ConfigError


@pytest.fixture
def redactor() -> Redactor:
    return Redactor(None, [])


def test_email_addresses(redactor: Redactor) -> None:
    text = "Refund sent to jane.doe+billing@example.co.uk, cc ops@corp.io."
    assert redactor.text(text) == "Refund sent to [redacted:email], cc [redacted:email]."


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        ("sk-proj-abcdefghijklmnopqrstuvwxyz012345", "openai_key"),
        ("sk-abcdefghijklmnopqrstuvwx", "openai_key"),
        ("xoxb-1234567890-abcdefghijkl", "slack_token"),
        ("xoxp-1234567890-abcdefghijkl", "slack_token"),
        ("AKIAIOSFODNN7EXAMPLE", "aws_key"),
        ("ghp_" + "a1B2" * 9, "github_token"),
        ("https://hooks.slack.com/services/T000/B000/XXXXXXXX", "slack_webhook"),
    ],
)
def test_api_keys_and_tokens(redactor: Redactor, secret: str, kind: str) -> None:
    assert redactor.text(f"using {secret} now") == f"using [redacted:{kind}] now"


def test_bearer_and_key_value_secrets_keep_their_label(redactor: Redactor) -> None:
    text = (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl "
        "url?access_token=9f86d081884c7d659a2feaa0c55ad015&x=1 "
        '{"api_key": "QUJDREVGR0hJSktMTU5PUA=="}'
    )
    out = redactor.text(text)
    assert out == (
        "Authorization: Bearer [redacted:bearer_token] "
        'url?access_token=[redacted:secret]&x=1 {"api_key": "[redacted:secret]"}'
    )


def test_short_values_after_key_are_not_secrets(redactor: Redactor) -> None:
    # "key=" in ordinary text (a sort key, a page token of 3 chars) is not a secret.
    assert redactor.text("sort key=name, token=abc") == "sort key=name, token=abc"


@pytest.mark.parametrize(
    "card",
    ["4111 1111 1111 1111", "4111-1111-1111-1111", "5500000000000004", "3782 822463 10005"],
)
def test_luhn_valid_card_numbers(redactor: Redactor, card: str) -> None:
    assert redactor.text(f"card {card} was charged") == "card [redacted:card] was charged"


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1112",  # a card's shape, but fails the Luhn check: an order number
        "order 1234567812345670",  # Luhn-valid, but no card network starts with 1
        "20261129123045123",  # a timestamp
        "tracking 9400111899223851",  # no card network starts with 9
    ],
)
def test_order_numbers_and_timestamps_survive(redactor: Redactor, number: str) -> None:
    assert redactor.text(number) == number


def test_luhn() -> None:
    assert luhn_ok("4111111111111111")
    assert not luhn_ok("4111111111111112")


def test_configured_patterns() -> None:
    redactor = Redactor({"customer_id": r"CUST-\d{6}", "phone": r"\+44 \d{4} \d{6}"}, [])
    out = redactor.text("CUST-004211 called from +44 7700 900123")
    assert out == "[redacted:customer_id] called from [redacted:phone]"


def test_invalid_configured_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"alerts\.redact\.bad: invalid regex '\(oops'"):
        Redactor({"bad": "(oops"}, [])


def test_env_secrets_by_name_and_by_channel() -> None:
    environ = {
        "OPENAI_API_KEY": "not-a-standard-shape-1234",
        "DB_PASSWORD": "correct horse battery",
        "SUPPORT_HOOK": "https://hooks.example.com/T123/secret-path",  # named by a channel
        "TOKENIZERS_PARALLELISM": "false",  # secret by name, but too short to redact safely
        "HOME": "/home/halluwatch",
    }
    values = env_secrets(environ, names=["SUPPORT_HOOK"])
    assert set(values) == {
        "not-a-standard-shape-1234",
        "correct horse battery",
        "https://hooks.example.com/T123/secret-path",
        "false",
    }
    redactor = Redactor(None, values)
    text = (
        "tried not-a-standard-shape-1234 and correct horse battery against "
        "https://hooks.example.com/T123/secret-path: false"
    )
    assert redactor.text(text) == (
        "tried [redacted:env_secret] and [redacted:env_secret] against [redacted:env_secret]: false"
    )
    assert redactor.text("/home/halluwatch") == "/home/halluwatch"


def test_redact_alert_covers_text_fields_and_examples() -> None:
    alert = Alert(
        item_type="finding",
        key="f1",
        day=date(2026, 11, 29),
        severity="high",
        title="support-agent claims it emailed bob@example.com",
        summary="3 sessions affected; quoted card 4111 1111 1111 1111",
        agent="support-agent",
        recommended_fix="Never echo keys like sk-abcdefghijklmnopqrstuvwx",
        examples=[
            Example(
                session_id="s-1",
                agent_version="2.3",
                value="I sent the receipt to bob@example.com",
                explanation="no send_email call; user is bob@example.com",
                events=[
                    {"index": 4, "kind": "user", "text": "my email is bob@example.com"},
                    {"index": 5, "kind": "tool_call", "text": '{"to": ["bob@example.com"]}'},
                ],
            )
        ],
    )
    out = Redactor(None, []).redact_alert(alert)
    assert "@" not in str(out.to_dict())
    assert "4111" not in out.summary and "sk-" not in (out.recommended_fix or "")
    assert out.examples[0].events[0] == {
        "index": 4,
        "kind": "user",
        "text": "my email is [redacted:email]",
    }
    assert (out.key, out.agent, out.severity) == ("f1", "support-agent", "high")


def test_log_redaction_cleans_the_message_its_arguments_and_the_traceback() -> None:
    secret = "hooks-token-0123456789"
    redaction = LogRedaction(Redactor(None, [secret]))
    try:
        raise ConnectionError(f"POST https://hooks.example/services/{secret} failed")
    except ConnectionError as exc:
        record = logging.LogRecord(
            "prefect.flow_runs", logging.ERROR, __file__, 1, "Encountered %r", (exc,), None
        )
        record.exc_info = (type(exc), exc, exc.__traceback__)
    assert redaction.filter(record)  # it never drops a record
    written = logging.Formatter().format(record)
    assert secret not in written
    assert written.count("[redacted:env_secret]") == 2  # the message, and the traceback's last line
    assert "ConnectionError" in written and "Traceback" in written


def test_log_redaction_leaves_a_clean_record_as_it_was() -> None:
    record = logging.LogRecord(
        "prefect", logging.INFO, __file__, 1, "Finished in %s", ("3 s",), None
    )
    assert LogRedaction(Redactor(None, ["hooks-token-0123456789"])).filter(record)
    assert (record.msg, record.args) == ("Finished in %s", ("3 s",))
