"""The judge's prompt: Jinja templates in ``templates/judge/``, rendered into chat messages.

``TEMPLATE_VERSION`` names what the templates say. It is stored with every judgement and is part
of every cache key; bump it whenever a template's wording changes.

Session content is untrusted (a tool output may say "ignore previous instructions"). Each
evidence item and the reply sit inside their own tags, tag look-alikes inside content are
escaped so content cannot close its item and forge another, and the system prompt says that
tagged text is data, never instructions.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import jinja2
from openai.lib import type_to_response_format_param

import templates
from detectors.judge.answer import Answer
from detectors.judge.evidence import JudgeItem
from sessions.errors import ConfigError

TEMPLATE_VERSION = "claims-v1"
TEMPLATE_NUMBER = int(TEMPLATE_VERSION.rsplit("-v", 1)[1])  # the signals' detector_version
TEMPLATE_DIR = Path(templates.__file__).parent / "judge"
TEMPLATE_NAMES = ("claims.system.j2", "claims.user.j2", "claims.repair.j2")


def _response_format() -> dict[str, Any]:
    """The answer's strict JSON schema, exactly as ``chat.completions.parse`` would send it."""
    param = type_to_response_format_param(Answer)
    assert isinstance(param, dict)  # a model class always gives a json_schema format
    return dict(param)


RESPONSE_FORMAT = _response_format()

Message = dict[str, str]

_TAG = re.compile(r"<(\s*/?\s*)(evidence|reply)", re.IGNORECASE)
_UNSAFE_ATTR = re.compile(r"[^\w.:@/-]")


def escape_data(text: str) -> str:
    """Make ``<evidence``, ``</evidence``, ``<reply`` and ``</reply`` inside content inert."""
    return _TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def escape_attr(text: str) -> str:
    return _UNSAFE_ATTR.sub("_", text)


class PromptTemplates:
    """The three judge templates, loaded at once so a missing one stops the run before work."""

    def __init__(self, folder: Path = TEMPLATE_DIR) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(folder),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )
        self.env.filters.update(data=escape_data, attr=escape_attr)
        self.templates: dict[str, jinja2.Template] = {}
        for name in TEMPLATE_NAMES:
            try:
                self.templates[name] = self.env.get_template(name)
            except jinja2.TemplateNotFound:
                raise ConfigError(f"judge template {name} not found in {folder}") from None
            except jinja2.TemplateSyntaxError as exc:
                raise ConfigError(
                    f"judge template {name}, line {exc.lineno}: {exc.message}"
                ) from None

    def _render(self, name: str, **context: Any) -> str:
        try:
            return self.templates[name].render(**context).strip()
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"judge template {name}: {exc.message}") from None

    def messages(self, item: JudgeItem) -> list[Message]:
        user = self._render(
            "claims.user.j2",
            evidence=item.evidence,
            reply=item.reply,
            truncated=item.truncated,
            dropped_items=item.dropped_items,
        )
        return [
            {"role": "system", "content": self._render("claims.system.j2")},
            {"role": "user", "content": user},
        ]

    def repair(
        self, messages: list[Message], raw: str | None, error: str, *, cut: bool
    ) -> list[Message]:
        """The conversation once more, with the failed answer and a request for valid JSON."""
        ask = self._render("claims.repair.j2", error=error, cut=cut)
        return [
            *messages,
            {"role": "assistant", "content": raw or ""},
            {"role": "user", "content": ask},
        ]


def request_body(model: str, messages: list[Message]) -> dict[str, Any]:
    """The chat completion request, the same online and in a batch file."""
    return {
        "model": model,
        "messages": messages,
        "temperature": 0,
        "response_format": RESPONSE_FORMAT,
    }


def cache_key(model: str, item: JudgeItem) -> str:
    """sha256 of the model, the template version, the evidence as sent and the reply."""
    evidence = [[e.id, e.source, e.name, e.text] for e in item.evidence]
    payload = [model, TEMPLATE_VERSION, evidence, item.reply]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()
