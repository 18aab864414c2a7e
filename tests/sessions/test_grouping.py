from __future__ import annotations

from sessions.grouping import Unit, batches, select
from sessions.storage import ObjectInfo

INCLUDE = ["*.json", "*.jsonl", "*.jsonl.gz"]
SID = "4d5611e5-241a-462a-8d15-5122611a9569"


def _objects(*keys: str, size: int = 10) -> list[ObjectInfo]:
    return [ObjectInfo(k, size) for k in keys]


def _keys(units: list[Unit]) -> list[list[str]]:
    return [[o.key for o in u.objects] for u in units]


def test_subagent_files_join_their_parent_in_both_layouts() -> None:
    selection = select(
        _objects(
            f"d/{SID}.jsonl",
            f"d/{SID}/subagents/agent-a1.jsonl",
            f"d/{SID}/subagents/agent-a1.meta.json",
            f"d/{SID}__subagents__agent-acompact-9.jsonl",
            "d/other.jsonl",
        ),
        INCLUDE,
    )
    assert _keys(selection.units) == [
        [
            f"d/{SID}.jsonl",
            f"d/{SID}/subagents/agent-a1.jsonl",
            f"d/{SID}__subagents__agent-acompact-9.jsonl",
        ],
        ["d/other.jsonl"],
    ]
    assert selection.skipped == {"sidecar": [f"d/{SID}/subagents/agent-a1.meta.json"]}


def test_orphan_subagents_join_a_non_session_named_file_beside_them() -> None:
    selection = select(
        _objects(
            "x/parent_lines.jsonl",
            f"x/{SID}/subagents/agent-a1.jsonl",
            "y/11111111-2222-4333-8444-555555555555.jsonl",
            f"y/{SID}__subagents__agent-a2.jsonl",
        ),
        INCLUDE,
    )
    assert sorted(_keys(selection.units)) == [
        ["x/parent_lines.jsonl", f"x/{SID}/subagents/agent-a1.jsonl"],
        ["y/11111111-2222-4333-8444-555555555555.jsonl"],
        [f"y/{SID}__subagents__agent-a2.jsonl"],
    ]


def test_include_patterns_skip_other_files_but_named_files_are_kept() -> None:
    selection = select(
        _objects("a/LICENSE", "a/story.md", "a/s.json", "a/t.jsonl.gz"),
        INCLUDE,
        frozenset({"a/story.md"}),
    )
    assert _keys(selection.units) == [["a/s.json"], ["a/story.md"], ["a/t.jsonl.gz"]]
    assert selection.skipped == {"not_included": ["a/LICENSE"]}


def test_same_stem_files_are_both_kept() -> None:
    selection = select(_objects("a/s.json", "a/s.jsonl.gz"), INCLUDE)
    assert sorted(_keys(selection.units)) == [["a/s.json"], ["a/s.jsonl.gz"]]


def test_batches_pack_by_bytes_and_never_split_a_unit() -> None:
    units = [Unit(_objects(f"k{i}a", f"k{i}b", size=40)) for i in range(5)]
    packed = list(batches(units, max_bytes=200))
    assert [len(b) for b in packed] == [2, 2, 1]
    big = [Unit(_objects("huge", size=10_000)), Unit(_objects("small", size=1))]
    assert [len(b) for b in batches(big, max_bytes=100)] == [1, 1]
    assert [len(b) for b in batches(units, max_bytes=10**9, max_objects=4)] == [2, 2, 1]
