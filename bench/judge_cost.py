"""What the LLM judge costs per thousand sessions, measured from the prompts it would send.

    python bench/judge_cost.py [PATH...] [--sample-rate 0.05] [--output-tokens 300] [--json]

Reads real sessions (default: the corpus beside the repository and the bundled example), builds
the judge's items with the default `judge:` config (the last 3 replies with text, evidence within
6,000 tokens) and renders the exact prompts. No model is called: input tokens are the prompt's
characters / 4 (OpenAI's rule of thumb for English and JSON; a real tokenizer differs by about
10%), output tokens per reply an assumption you can change (a claims list of 3-6 claims with
quotes and a reason is 150-400 tokens). Prices are per million tokens as published when this was
written: check your provider's current price list.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]

from detectors.judge import JudgeConfig, judge_items  # noqa: E402
from detectors.judge.prompt import PromptTemplates  # noqa: E402
from flows.scan import discover  # noqa: E402
from sessions.reader import SessionReader  # noqa: E402

SHARED = REPO.parent / "shared"
DEFAULT_PATHS = [
    SHARED / "corpus" / "openai_chat" / "tau_airline" / "gpt-4o-airline.dev.json",
    SHARED / "corpus" / "claude_code",
    REPO / "examples" / "bucket",
]
PRICES = {  # USD per million tokens: (input, output)
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4o": (2.50, 10.00),
}


def measure(paths: list[Path]) -> tuple[int, list[int]]:
    """Sessions read, and the input tokens of every judge request they would make."""
    reader, config, templates = SessionReader(), JudgeConfig(), PromptTemplates()
    sessions, tokens = 0, []
    for unit in discover([str(p) for p in paths if p.exists()], reader.config.include):
        files: list[tuple[str, bytes | Exception]] = [
            (o.key, Path(o.key).read_bytes()) for o in unit
        ]
        for session in reader.read_unit(files).sessions:
            sessions += 1
            for item in judge_items(session, config):
                messages = templates.messages(item)
                tokens.append(sum(len(m["content"]) for m in messages) // 4)
    return sessions, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=DEFAULT_PATHS)
    parser.add_argument("--sample-rate", type=float, default=0.05)
    parser.add_argument("--output-tokens", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sessions, tokens = measure(args.paths)
    if not tokens:
        sys.exit("no replies to judge under the given paths")
    per_session = len(tokens) / sessions
    mean_in = statistics.fmean(tokens)
    quantiles = statistics.quantiles(tokens, n=20)
    result: dict[str, Any] = {
        "sessions": sessions,
        "judged_replies": len(tokens),
        "replies_per_session": round(per_session, 2),
        "input_tokens_per_reply": {
            "mean": round(mean_in),
            "p50": round(statistics.median(tokens)),
            "p95": round(quantiles[-1]),
            "max": max(tokens),
        },
        "output_tokens_per_reply": args.output_tokens,
        "per_1000_sessions": {},
    }
    for rate in sorted({args.sample_rate, 1.0}):
        replies = 1000 * rate * per_session
        tin, tout = replies * mean_in, replies * args.output_tokens
        result["per_1000_sessions"][f"sample_rate={rate:g}"] = {
            "requests": round(replies),
            "tokens": round(tin + tout),
            **{
                model: round((tin * pin + tout * pout) / 1e6, 3)
                for model, (pin, pout) in PRICES.items()
            },
        }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    q = result["input_tokens_per_reply"]
    print(
        f"{sessions} sessions, {len(tokens)} replies to judge ({per_session:.2f} per session); "
        f"input tokens per reply: mean {mean_in:,.0f}, p50 {q['p50']:,}, p95 {q['p95']:,}, "
        f"max {max(tokens):,}; output assumed {args.output_tokens} per reply"
    )
    print(
        f"{'per 1,000 sessions':22} {'requests':>9} {'tokens':>11} "
        + "".join(f"{m:>14}" for m in PRICES)
    )
    for name, row in result["per_1000_sessions"].items():
        print(
            f"{name:22} {row['requests']:>9,} {row['tokens']:>11,} "
            + "".join(f"{'$' + format(row[m], ',.2f'):>14}" for m in PRICES)
        )


if __name__ == "__main__":
    main()
