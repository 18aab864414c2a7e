"""Which listed objects must be read together, and how they are packed into batches.

A Claude Code session is several files: the main transcript and its sub-agent and compaction
files (`<session>/subagents/agent-*.jsonl`, or `<session>__subagents__agent-*.jsonl` when a
tool flattened the tree). They are read as one *unit* so the sub-agent's steps join the
parent's session. A unit is never split across batches; batches are packed by bytes so that one
task handles many small sessions or a few big ones, never one task per session.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from sessions.storage import ObjectInfo

_NESTED_SUBAGENT = re.compile(r"^(?P<dir>(?:.*/)?)(?P<sid>[^/]+)/subagents/agent-[^/]+$")
_FLAT_SUBAGENT = re.compile(r"^(?P<dir>(?:.*/)?)(?P<sid>[^/]+?)__subagents__agent-[^/]+$")
_SIDECAR = re.compile(r"/subagents/agent-[^/]+\.meta\.json$|__subagents__agent-[^/]+\.meta\.json$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_EXTENSIONS = (".gz", ".jsonl", ".ndjson", ".json", ".traj")


def _stem(name: str) -> str:
    for ext in _EXTENSIONS:
        if name.endswith(ext):
            name = name[: -len(ext)]
    return name


@dataclass(slots=True)
class Unit:
    """Objects read together; ``size`` is their total in bytes."""

    objects: list[ObjectInfo] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(o.size for o in self.objects)


@dataclass(slots=True)
class Selection:
    units: list[Unit]
    skipped: dict[str, list[str]]  # reason -> keys


def select(
    objects: Iterable[ObjectInfo], include: Sequence[str], always: frozenset[str] = frozenset()
) -> Selection:
    """Filter listed objects by ``include`` patterns and group them into units.

    Keys in ``always`` (files a user named one by one) are read whatever their name.
    """
    skipped: dict[str, list[str]] = defaultdict(list)
    mains: dict[str, Unit] = {}
    subs: list[tuple[str, str, ObjectInfo]] = []  # (dir, anchor, object)
    for obj in objects:
        name = posixpath.basename(obj.key)
        if _SIDECAR.search("/" + obj.key):
            skipped["sidecar"].append(obj.key)
            continue
        if obj.key not in always and not any(fnmatch.fnmatchcase(name, p) for p in include):
            skipped["not_included"].append(obj.key)
            continue
        match = _NESTED_SUBAGENT.match(obj.key) or _FLAT_SUBAGENT.match(obj.key)
        if match:
            subs.append((match["dir"], match["dir"] + match["sid"], obj))
        else:
            anchor = posixpath.join(posixpath.dirname(obj.key), _stem(name))
            # Two files with one stem (`a.json`, `a.jsonl.gz`) are two units; neither is lost.
            mains[obj.key if anchor in mains else anchor] = Unit([obj])
    orphans: dict[str, list[ObjectInfo]] = defaultdict(list)
    for directory, anchor, obj in subs:
        if anchor in mains:
            mains[anchor].objects.append(obj)
        else:
            orphans[directory].append(obj)
    by_dir: dict[str, list[str]] = defaultdict(list)
    if orphans:
        for anchor in mains:
            by_dir[anchor.rpartition("/")[0] + "/" if "/" in anchor else ""].append(anchor)
    orphan_units: list[Unit] = []
    for directory, objs in orphans.items():
        # A sub-agent file whose parent is not named after the session (a hand-made export, a
        # renamed file) may still belong to a main file beside it: read those together and let
        # the adapter link by the session id inside. Files named by another session id cannot be
        # its parent, so they stay on their own.
        unit = Unit(list(objs))
        for anchor in by_dir.get(directory, []):
            main = mains[anchor]
            if len(main.objects) == 1 and not _UUID.match(posixpath.basename(anchor)):
                unit.objects.insert(0, main.objects[0])
                del mains[anchor]
        orphan_units.append(unit)
    units = list(mains.values()) + orphan_units
    units.sort(key=lambda u: u.objects[0].key)
    return Selection(units, dict(skipped))


def batches(units: Iterable[Unit], max_bytes: int, max_objects: int = 5000) -> Iterator[list[Unit]]:
    """Pack whole units into batches of about ``max_bytes`` (a big unit gets a batch alone)."""
    batch: list[Unit] = []
    size = count = 0
    for unit in units:
        if batch and (size + unit.size > max_bytes or count + len(unit.objects) > max_objects):
            yield batch
            batch, size, count = [], 0, 0
        batch.append(unit)
        size += unit.size
        count += len(unit.objects)
    if batch:
        yield batch
