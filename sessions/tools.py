"""Which tools an agent had registered: from the session, else the run config, else the harness.

The order matters: a session that declares its tools is the truth; the run config is the team's
word for agents whose logs drop the request body; for Claude Code, whose transcripts never store
tool definitions, its built-in tools plus any MCP tool are the best we can say. Otherwise the list
is unknown and detectors that need it stay silent for the session.
"""

from __future__ import annotations

from sessions.models import Session, ToolRegistry

# Claude Code's built-in tools up to CLI 2.1.144 (FORMATS.md 1.6). `Task` was renamed `Agent` in
# 2.1.63; both stay valid because old and new transcripts meet in the same night. Lowercase
# `bash` has been seen from Haiku and the harness accepts it.
CLAUDE_CODE_BUILTINS = frozenset(
    [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "MultiEdit",
        "Glob",
        "Grep",
        "LS",
        "WebSearch",
        "WebFetch",
        "Task",
        "TaskOutput",
        "TaskStop",
        "TaskCreate",
        "TaskUpdate",
        "TaskList",
        "TaskGet",
        "TodoWrite",
        "TodoRead",
        "AskUserQuestion",
        "NotebookEdit",
        "NotebookRead",
        "EnterPlanMode",
        "ExitPlanMode",
        "EnterWorktree",
        "ExitWorktree",
        "Skill",
        "KillShell",
        "BashOutput",
        "KillBash",
        "ToolSearch",
        "SendMessage",
        "TeamCreate",
        "TeamDelete",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "Agent",
        "CronCreate",
        "CronDelete",
        "CronList",
        "Monitor",
        "PushNotification",
        "ScheduleWakeup",
        "ShareOnboardingGuide",
        "WaitForMcpServers",
        "RemoteTrigger",
        "PowerShell",
        "SendUserFile",
        "bash",
    ]
)

CLAUDE_CODE_FORMAT = "claude_code"


def resolve_tools(session: Session, configured: ToolRegistry | None) -> ToolRegistry | None:
    """The registry to check ``session`` against (see the module docstring for the order)."""
    if session.registered_tools is not None:
        return session.registered_tools
    if configured is not None:
        return configured
    if session.format == CLAUDE_CODE_FORMAT:
        return ToolRegistry(CLAUDE_CODE_BUILTINS, "claude_code_builtin", allow_mcp=True)
    return None
