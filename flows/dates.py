"""Which day a run is about. A nightly job lives on dates, computed in the team's time zone."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sessions.errors import ConfigError


def resolve_date(value: str | date, timezone: str = "UTC") -> date:
    """``yesterday``, ``today`` or an ISO date; ``yesterday`` is computed in ``timezone``."""
    if isinstance(value, date):
        return value
    today = datetime.now(ZoneInfo(timezone)).date()
    if value == "yesterday":
        return today - timedelta(days=1)
    if value == "today":
        return today
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"--date {value!r} is not YYYY-MM-DD, 'yesterday' or 'today'") from None
