"""Gate 2, package assembly: every manifest entry present and readable, or withheld with its reason;
bytes and hash agreement recorded per file, and empty files named (they pass: an empty feed or page
is what the source release holds, and it reads as an empty text)."""

from __future__ import annotations

from dataset.gates.base import GateResult, TaskInputs, failed, passed


def check(inputs: TaskInputs) -> GateResult:
    audit = inputs.package
    problems = [
        f"{file.relative_path}: {file.status} ({file.reason})"
        for file in audit.files
        if file.status not in ("present", "withheld")
    ]
    problems += [f"{path}: on disk but not in the manifest" for path in audit.unlisted]
    present = [file for file in audit.files if file.status == "present"]
    details = {
        "listed": len(audit.files),
        "present": len(present),
        "withheld": {file.relative_path: file.reason for file in audit.files if file.status == "withheld"},
        "bytes_match": sum(1 for file in present if file.bytes_match),
        "hash_match": sum(1 for file in present if file.hash_match),
        "hash_differs": [file.relative_path for file in present if not file.hash_match],
        "empty": [file.relative_path for file in present if file.size == 0],
    }
    if problems:
        return failed(problems, **details)
    empty = f" ({len(details['empty'])} empty)" if details["empty"] else ""
    return passed(
        f"{len(present)} present and readable{empty}, {len(details['withheld'])} withheld", **details
    )
