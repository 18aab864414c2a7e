"""Turn raw files into ``Session``s: detect the format, parse, link, fill in identity and tools.

Every failure here is data: a file that cannot be read comes back as a ``FileFailure`` with a
stable reason code and a message naming the file, and the other files of the batch go on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sessions.config import AgentConfig, SessionsConfig, agent_registries
from sessions.documents import parse_bytes
from sessions.errors import SessionError
from sessions.formats import detect, get_adapter
from sessions.formats.registry import Adapter
from sessions.models import Session, ToolRegistry
from sessions.tools import resolve_tools


@dataclass(slots=True, frozen=True)
class FileFailure:
    source: str
    reason: str
    message: str


@dataclass(slots=True)
class ReadResult:
    sessions: list[Session] = field(default_factory=list)
    failures: list[FileFailure] = field(default_factory=list)
    files_parsed: int = 0


class SessionReader:
    """Parses files with the configured (or detected) format and completes each session."""

    def __init__(
        self,
        config: SessionsConfig | None = None,
        agents: dict[str, AgentConfig] | None = None,
        *,
        base: Path | None = None,
    ) -> None:
        self.config = config or SessionsConfig()
        self.agents = agents or {}
        self.registries: dict[str, ToolRegistry] = agent_registries(self.agents, base or Path.cwd())
        self.forced: Adapter | None = (
            None if self.config.format == "auto" else get_adapter(self.config.format)
        )
        self.path_pattern = (
            re.compile(self.config.agent_from_path) if self.config.agent_from_path else None
        )

    def parse_file(self, source: str, raw: bytes) -> tuple[Adapter, list[Session]]:
        """Parse one file; raises ``SessionError`` with the reason when it cannot."""
        doc = parse_bytes(source, raw)
        adapter = self.forced or detect(doc)
        try:
            sessions = list(adapter.parse(doc))
        except SessionError:
            raise
        except Exception as exc:  # an adapter bug on odd input must not stop the night
            raise SessionError(
                f"{source}: the {adapter.name} adapter failed: {type(exc).__name__}: {exc}",
                reason="adapter_error",
            ) from exc
        if not sessions:
            raise SessionError(
                f"{source}: recognised as {adapter.name} but holds no session", reason="empty"
            )
        return adapter, sessions

    def read_unit(self, files: Iterable[tuple[str, bytes | Exception]]) -> ReadResult:
        """Parse files that belong together (a session and its sub-agent files)."""
        result = ReadResult()
        used: dict[str, Adapter] = {}
        for source, raw in files:
            if isinstance(raw, Exception):
                reason = getattr(raw, "reason", "read_error")
                result.failures.append(FileFailure(source, reason, str(raw)))
                continue
            try:
                adapter, sessions = self.parse_file(source, raw)
            except SessionError as exc:
                result.failures.append(FileFailure(source, exc.reason, str(exc)))
                continue
            result.files_parsed += 1
            used[adapter.name] = adapter
            result.sessions.extend(sessions)
        for adapter in used.values():
            if adapter.link is not None:
                mine = [s for s in result.sessions if s.format == adapter.name]
                others = [s for s in result.sessions if s.format != adapter.name]
                result.sessions = others + adapter.link(mine)
        for session in result.sessions:
            self.complete(session)
        return result

    def complete(self, session: Session) -> None:
        """Fill in identity the format lacks (path pattern, config defaults) and resolve tools."""
        if self.path_pattern is not None:
            match = self.path_pattern.search(session.source)
            if match:
                groups = match.groupdict()
                session.agent = session.agent or groups.get("agent")
                session.agent_version = session.agent_version or groups.get("agent_version")
        session.agent = session.agent or self.config.default_agent
        agent_config = self.agents.get(session.agent or "")
        if agent_config is not None and agent_config.version and not session.agent_version:
            session.agent_version = agent_config.version
        if not session.sources:
            session.sources = [session.source]
        session.registered_tools = resolve_tools(session, self.registries.get(session.agent or ""))
