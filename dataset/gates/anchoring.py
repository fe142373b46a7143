"""Gate 1, event anchoring: identity, name, window and hazard family agree between the task, the
event record and the package's locked event-anchor file."""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from dataset.gates.base import GateResult, TaskInputs, failed, passed

ANCHOR_NAME_MARK = "Locked_event_anchor"


def check(inputs: TaskInputs) -> GateResult:
    record = inputs.record
    event = record.event
    problems = _identity_problems(
        record.event_id, record.event_name, record.hazard_family, event, "event record"
    )
    problems += _package_record_problems(inputs)
    anchor_path = _anchor_path(record.event_files)
    if anchor_path is None:
        return failed([*problems, "the package has no locked event-anchor file"])
    try:
        anchor = json.loads((inputs.package_root / anchor_path).read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return failed([*problems, f"event-anchor file {anchor_path} is unreadable: {error}"])
    problems += _identity_problems(
        record.event_id, record.event_name, record.hazard_family, anchor, anchor_path
    )
    window, window_problem = _window(anchor)
    if window_problem:
        problems.append(f"{anchor_path}: {window_problem}")
    if problems:
        return failed(problems, anchor_file=anchor_path)
    return passed("task, event record and anchor agree", anchor_file=anchor_path, window=window)


def _package_record_problems(inputs: TaskInputs) -> list[str]:
    """Tasks of one event must carry the same event record the package publishes as metadata/event.json."""
    path = inputs.package_root / "metadata" / "event.json"
    try:
        published = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return [f"metadata/event.json is unreadable: {error}"]
    if published != inputs.record.event:
        return ["the task's event record differs from the package's metadata/event.json"]
    return []


def _anchor_path(manifest: list[dict[str, Any]]) -> str | None:
    for entry in manifest:
        path = entry.get("relative_path", "")
        if ANCHOR_NAME_MARK in path and path.endswith(".json"):
            return path
    return None


def _identity_problems(event_id: str, name: str, family: str, other: dict[str, Any], where: str) -> list[str]:
    problems = []
    if other.get("package_id") != event_id:
        problems.append(
            f"{where}: package_id {other.get('package_id')!r} is not the task's event {event_id!r}"
        )
    if _normal(other.get("event_name", "")) != _normal(name):
        problems.append(f"{where}: event_name {other.get('event_name')!r} differs from the task's {name!r}")
    if other.get("hazard_family") != family:
        problems.append(
            f"{where}: hazard_family {other.get('hazard_family')!r} differs from the task's {family!r}"
        )
    return problems


def _normal(name: str) -> str:
    """Names compare without case and punctuation: 'heatwave, wildfire' is 'heatwave wildfire'."""
    return " ".join(re.findall(r"[a-z0-9]+", str(name).casefold()))


def _window(anchor: dict[str, Any]) -> tuple[dict[str, str], str]:
    window = anchor.get("temporal_window") or {}
    start, end = window.get("start_date"), window.get("end_date")
    if not start or not end:
        return {}, "temporal_window lacks start_date or end_date"
    try:
        if date.fromisoformat(start) > date.fromisoformat(end):
            return {}, f"temporal_window starts {start} after it ends {end}"
    except ValueError as error:
        return {}, f"temporal_window has a malformed date: {error}"
    locked = anchor.get("locked_event_anchor") or {}
    if locked.get("event_start_date", start) != start or locked.get("event_end_date", end) != end:
        return {}, "temporal_window disagrees with locked_event_anchor dates"
    return {"start_date": start, "end_date": end}, ""
