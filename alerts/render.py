"""Turn alerts into messages: Slack blocks, an email, a webhook payload, console text.

Rendering is separate from sending (the channels in ``alerts/channels/`` only deliver what this
module produced). Templates come from the ``templates`` package, or first from a team's own
folder; a variable missing from a template is an error, never an empty string.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

import templates
from alerts.models import Alert
from sessions.errors import ConfigError

PACKAGE_TEMPLATES = Path(templates.__file__).parent
TEMPLATE_NAMES = (
    "slack_blocks.json.j2",
    "email.txt.j2",
    "email.html.j2",
    "console.txt.j2",
)
WEBHOOK_PAYLOAD_VERSION = 1
SLACK_MAX_BLOCKS = 50  # Slack rejects a message with more blocks

_ZWSP = "\u200b"
_SLACK_FORMATTING = re.compile(r"(?<![^\W_])([*_~`])|([*_~`])(?![^\W_])")


def slack_escape(value: object) -> str:
    """Make text from a session inert in Slack mrkdwn.

    ``&``, ``<`` and ``>`` are entity-escaped, so ``<!channel>`` and ``<@U123>`` never ping or
    link. Each of ``* _ ~ ` `` that could open or close formatting (one not between two letters
    or digits: ``snake_case`` stays as it is) gets a zero-width space on both sides: whether Slack
    counts that space as a word character or as white space, the character can then neither open
    nor close bold, italics, strike-through or code.
    """
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SLACK_FORMATTING.sub(lambda m: _ZWSP + m.group() + _ZWSP, text)


def slack_code(value: object) -> str:
    """Text for inside a Slack code span (ids): escaped, and a backtick cannot end the span."""
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("`", "\u02cb")


def fmt_num(value: float | int | None, spec: str = ".4g") -> str:
    """A figure for people: ``n/a`` when unknown, else formatted with ``spec``."""
    return "n/a" if value is None else format(value, spec)


def one_line(value: object, limit: int = 200) -> str:
    """Collapse white space (no header injection in a subject) and cut to ``limit`` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_id(alerts: Sequence[Alert]) -> str:
    """The idempotency key of one message: the alert's id, or a hash of the ids of a digest."""
    if len(alerts) == 1:
        return alerts[0].id
    joined = "|".join(sorted(alert.id for alert in alerts))
    return hashlib.sha256(joined.encode()).hexdigest()[:24]


class Renderer:
    """Renders alerts with the package templates, or a team's own (``override_dir``) first.

    Every template is loaded when the renderer is made, so a missing or broken one stops the run
    before any work with a ``ConfigError`` that names it.
    """

    def __init__(self, override_dir: Path | None = None) -> None:
        search = [PACKAGE_TEMPLATES]
        if override_dir is not None:
            if not override_dir.is_dir():
                raise ConfigError(f"template folder {override_dir} does not exist")
            search.insert(0, override_dir)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(search),
            undefined=jinja2.StrictUndefined,
            autoescape=jinja2.select_autoescape(
                enabled_extensions=("html.j2",), default_for_string=False, default=False
            ),
            keep_trailing_newline=True,
        )
        self.env.filters.update(
            slack_escape=slack_escape, slack_code=slack_code, num=fmt_num, one_line=one_line
        )
        for name in TEMPLATE_NAMES:
            self._template(name)

    def _template(self, name: str) -> jinja2.Template:
        try:
            return self.env.get_template(name)
        except jinja2.TemplateNotFound:
            raise ConfigError(f"template {name} not found (looked in {self.search_path})") from None
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"template {name}, line {exc.lineno}: {exc.message}") from None

    @property
    def search_path(self) -> str:
        loader = self.env.loader
        assert isinstance(loader, jinja2.FileSystemLoader)
        return ", ".join(str(p) for p in loader.searchpath)

    def _render(self, name: str, **context: Any) -> str:
        template = self._template(name)
        try:
            return template.render(**context)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"template {template.filename}: {exc.message}") from None

    def slack_blocks(self, alerts: Sequence[Alert], *, max_examples: int) -> list[dict[str, Any]]:
        """Block Kit blocks for one message; several alerts make a digest, cut to Slack's limit."""
        blocks: list[dict[str, Any]] = []
        if len(alerts) > 1:
            blocks.append(_context(f"halluwatch digest: {len(alerts)} alerts"))
        for shown, alert in enumerate(alerts):
            raw = self._render("slack_blocks.json.j2", alert=alert, max_examples=max_examples)
            try:
                own = json.loads(raw)["blocks"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ConfigError(
                    f"slack_blocks.json.j2 did not render a JSON blocks list: {exc}"
                ) from exc
            extra = 1 if shown else 0  # the divider
            if len(blocks) + extra + len(own) > SLACK_MAX_BLOCKS - 1:
                blocks.append(_context(f"… and {len(alerts) - shown} more alerts not shown"))
                break
            if shown:
                blocks.append({"type": "divider"})
            blocks.extend(own)
        return blocks

    def slack_text(self, alerts: Sequence[Alert]) -> str:
        """The notification text that goes with the blocks (Slack parses it as mrkdwn too)."""
        if len(alerts) == 1:
            return slack_escape(one_line(f"[{alerts[0].severity}] {alerts[0].title}"))
        worst = max(alerts, key=lambda a: a.severity_rank)
        return slack_escape(f"halluwatch: {len(alerts)} alerts (highest: {worst.severity})")

    def email(
        self, alerts: Sequence[Alert], *, chart_cids: Mapping[str, str] | None = None
    ) -> tuple[str, str, str]:
        """``(subject, text, html)``; ``chart_cids`` maps alert ids to the Content-ID of a chart."""
        if len(alerts) == 1:
            subject = f"[halluwatch] {alerts[0].severity}: {alerts[0].title}"
        else:
            worst = max(alerts, key=lambda a: a.severity_rank)
            subject = f"[halluwatch] {len(alerts)} alerts (highest: {worst.severity})"
        context = {"alerts": list(alerts), "chart_cids": dict(chart_cids or {})}
        text = self._render("email.txt.j2", **context)
        html = self._render("email.html.j2", **context)
        return one_line(subject, 180), text, html

    def webhook_payload(self, alerts: Sequence[Alert]) -> dict[str, Any]:
        """The JSON body POSTed to webhooks, schema version 1 (see ``templates/README.md``)::

            {
              "type": "halluwatch.alerts",      # always this string
              "version": 1,                     # bumped on any incompatible change
              "id": "<24 hex>",                 # idempotency key, also the webhook-id header
              "count": <int>,                   # len(alerts); more than 1 is a digest
              "alerts": [Alert.to_dict(), ...]  # id, item_type, key, day (ISO date), severity,
                                                # title, summary, agent, agent_version, kind,
                                                # value, baseline, lift, p_value,
                                                # affected_sessions, recommended_fix, examples
                                                # [{session_id, agent_version, value,
                                                # explanation, events}], report_url, team
            }

        New optional keys may appear within a version; receivers should ignore unknown keys.
        """
        return {
            "type": "halluwatch.alerts",
            "version": WEBHOOK_PAYLOAD_VERSION,
            "id": message_id(alerts),
            "count": len(alerts),
            "alerts": [alert.to_dict() for alert in alerts],
        }

    def console(self, alerts: Sequence[Alert]) -> str:
        return self._render("console.txt.j2", alerts=list(alerts))


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
