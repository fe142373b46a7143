"""The release report: per task a verdict per gate with its reason, and the totals
(`release_report.json` for machines, `release_report.md` for people)."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from dataset.gates import FINAL_GATE, GATE_NAMES, GateResult


class TaskReport(BaseModel):
    event_id: str
    release_ready: bool
    gates: dict[str, GateResult]


class Totals(BaseModel):
    tasks: int
    events: int
    regenerated: int
    mismatch: int
    failed: int
    release_ready: int
    gates_passed: dict[str, int] = Field(description="Tasks passing each gate.")
    files_listed: int
    files_present: int
    files_withheld: int
    files_hash_differs: int
    files_empty: int = Field(description="Present files of zero bytes (they pass package assembly).")


class ReleaseReport(BaseModel):
    """Everything the release gates found; `totals` carries the headline integers."""

    source_sha256: str
    builder: str = Field(description="Fingerprint of the code that built the release.")
    network_isolated: bool = Field(description="Whether GT programs ran without network (unshare -n).")
    totals: Totals
    tasks: dict[str, TaskReport]


def make_report(
    task_gates: dict[str, tuple[str, dict[str, GateResult]]],
    source_sha256: str,
    builder: str,
    network_isolated: bool,
) -> ReleaseReport:
    """Assemble the report from each task's (event id, gate results)."""
    tasks = {
        task_id: TaskReport(event_id=event_id, release_ready=gates[FINAL_GATE].passed, gates=gates)
        for task_id, (event_id, gates) in sorted(task_gates.items())
    }
    return ReleaseReport(
        source_sha256=source_sha256,
        builder=builder,
        network_isolated=network_isolated,
        totals=_totals(tasks),
        tasks=tasks,
    )


def _totals(tasks: dict[str, TaskReport]) -> Totals:
    grounding = Counter(task.gates["executable_grounding"].details.get("status") for task in tasks.values())
    assembly_by_event = {task.event_id: task.gates["package_assembly"].details for task in tasks.values()}
    return Totals(
        tasks=len(tasks),
        events=len(assembly_by_event),
        regenerated=grounding["regenerated"],
        mismatch=grounding["mismatch"],
        failed=grounding["failed"],
        release_ready=sum(task.release_ready for task in tasks.values()),
        gates_passed={name: sum(task.gates[name].passed for task in tasks.values()) for name in GATE_NAMES},
        files_listed=sum(details.get("listed", 0) for details in assembly_by_event.values()),
        files_present=sum(details.get("present", 0) for details in assembly_by_event.values()),
        files_withheld=sum(len(details.get("withheld", {})) for details in assembly_by_event.values()),
        files_hash_differs=sum(
            len(details.get("hash_differs", [])) for details in assembly_by_event.values()
        ),
        files_empty=sum(len(details.get("empty", [])) for details in assembly_by_event.values()),
    )


def render_markdown(report: ReleaseReport) -> str:
    """The report for people: headline figures, gate pass counts, and every failing task with its reasons."""
    totals = report.totals
    lines = [
        "# EarthVerse release report",
        "",
        f"Source sha256 `{report.source_sha256}`; builder `{report.builder[:16]}`; "
        f"GT programs ran {'without' if report.network_isolated else 'WITH'} network access.",
        "",
        "| figure | value |",
        "| --- | ---: |",
        *(
            f"| {name} | {getattr(totals, name)} |"
            for name in (
                "tasks",
                "events",
                "regenerated",
                "mismatch",
                "failed",
                "release_ready",
                "files_listed",
                "files_present",
                "files_withheld",
                "files_hash_differs",
                "files_empty",
            )
        ),
        "",
        "## Gates",
        "",
        "| gate | tasks passing | tasks failing |",
        "| --- | ---: | ---: |",
        *(f"| {name} | {count} | {totals.tasks - count} |" for name, count in totals.gates_passed.items()),
        "",
        "## Tasks not release-ready",
        "",
    ]
    for task_id, task in report.tasks.items():
        if task.release_ready:
            continue
        lines.append(f"### {task_id}")
        lines.extend(
            f"- **{name}**: {_one_line(result.reason)}"
            for name, result in task.gates.items()
            if not result.passed and name != FINAL_GATE
        )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _one_line(text: str, limit: int = 600) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
