"""Session format adapters. Importing this package registers every adapter."""

from sessions.formats import (
    anthropic_messages,
    claude_code,
    langfuse,
    langsmith,
    openai_agents,
    openai_chat,
    openai_responses,
    openhands,
    openinference,
    otel_genai,
    swe_agent,
)
from sessions.formats.registry import Adapter, adapters, detect, format_names, get_adapter

__all__ = [
    "Adapter",
    "adapters",
    "anthropic_messages",
    "claude_code",
    "detect",
    "format_names",
    "get_adapter",
    "langfuse",
    "langsmith",
    "openai_agents",
    "openai_chat",
    "openai_responses",
    "openhands",
    "openinference",
    "otel_genai",
    "swe_agent",
]
