"""Traces (one agent run on one task) and submissions (one system's traces), on disk and in memory.

`schema` defines and documents the format, `io` reads and writes it, `recorded` converts the paper's
recorded runs to traces and back.
"""

from evaluator.traces.io import (
    TraceFormatError,
    export_json_schema,
    read_submission,
    read_trace,
    write_submission,
    write_trace,
)
from evaluator.traces.schema import (
    SCHEMA_VERSION,
    CapturedText,
    Evidence,
    FinalAnswer,
    JudgeRationale,
    RecordedScores,
    Step,
    StepTokens,
    Submission,
    SubmissionMetadata,
    SystemIdentity,
    Totals,
    Trace,
)

__all__ = [
    "SCHEMA_VERSION",
    "CapturedText",
    "Evidence",
    "FinalAnswer",
    "JudgeRationale",
    "RecordedScores",
    "Step",
    "StepTokens",
    "Submission",
    "SubmissionMetadata",
    "SystemIdentity",
    "Totals",
    "Trace",
    "TraceFormatError",
    "export_json_schema",
    "read_submission",
    "read_trace",
    "write_submission",
    "write_trace",
]
