"""`summarize_table_or_json(path, max_depth)`: the shape of a JSON file or the columns of a CSV table."""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import PurePosixPath
from typing import Any

from pydantic import Field

from evaluator.tools.base import (
    Tool,
    ToolArguments,
    ToolError,
    cut,
    decode_text,
    dump_json,
    repository_path,
    resolve_file,
)
from loaders.package import EventPackage
from loaders.tolerances import is_number

DEFAULT_MAX_DEPTH = 3
PREVIEW_CHARS = 2000
SAMPLE_ROWS = 5
MAX_LIST_SUMMARIES = 20
MAX_SHAPE_KEYS = 30
JSON_SUFFIXES = frozenset({".json"})
TABLE_SUFFIXES = frozenset({".csv"})


class SummarizeArguments(ToolArguments):
    path: str = Field(
        description="Package-relative (data/...) or repository-form path of a .json or .csv file."
    )
    max_depth: int = Field(default=DEFAULT_MAX_DEPTH, ge=0, description="How deep to describe nested JSON.")


class SummarizeTableOrJson(Tool):
    name = "summarize_table_or_json"
    description = (
        "Summarize a JSON file (its nested shape, statistics of its numeric lists and a text preview) or a "
        "CSV table (row count, columns and sample rows)."
    )
    Arguments = SummarizeArguments

    def execute(self, package: EventPackage, arguments: SummarizeArguments) -> str:
        suffix = PurePosixPath(arguments.path).suffix.lower()
        relative, content = resolve_file(package, arguments.path)
        text = decode_text(content)
        header = {"path": repository_path(package, relative)}
        if suffix in TABLE_SUFFIXES:
            return dump_json(header | _table_summary(text))
        if suffix in JSON_SUFFIXES:
            return dump_json(header | _json_summary(text, arguments.max_depth))
        raise ToolError(
            f"unsupported table/json suffix: {suffix}",
            "read other text with read_text_file or use python_exec",
        )


def _table_summary(text: str) -> dict[str, Any]:
    rows = list(csv.DictReader(io.StringIO(text)))
    columns = list(rows[0]) if rows else next(csv.reader(io.StringIO(text)), [])
    return {"type": "csv", "rows": len(rows), "columns": columns, "sample_rows": rows[:SAMPLE_ROWS]}


def _json_summary(text: str, max_depth: int) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ToolError(f"invalid JSON: {error}", "read it with read_text_file instead") from error
    summaries: dict[str, dict[str, float]] = {}
    _collect_numeric_lists(value, "", summaries)
    return {
        "type": "json",
        "shape": shape(value, max_depth),
        "numeric_list_summaries": summaries,
        "text_preview": cut(json.dumps(value, indent=2, ensure_ascii=False), PREVIEW_CHARS),
    }


def shape(value: Any, max_depth: int, depth: int = 0) -> Any:
    """The type skeleton of a JSON value: dict keys kept, lists as length and first-element sample."""
    if depth > max_depth:
        return type(value).__name__
    if isinstance(value, dict):
        keys = list(value)[:MAX_SHAPE_KEYS]
        return {key: shape(value[key], max_depth, depth + 1) for key in keys}
    if isinstance(value, list):
        sample = shape(value[0], max_depth, depth + 1) if value else None
        return {"type": "list", "length": len(value), "sample": sample}
    return type(value).__name__


def _collect_numeric_lists(value: Any, where: str, found: dict[str, dict[str, float]]) -> None:
    if len(found) >= MAX_LIST_SUMMARIES:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _collect_numeric_lists(item, f"{where}.{key}" if where else str(key), found)
        return
    if not isinstance(value, list):
        return
    numbers = [float(item) for item in value if is_number(item)]
    if numbers and len(numbers) == len(value):
        found[where] = _statistics(numbers)
        return
    for index, item in enumerate(value):
        _collect_numeric_lists(item, f"{where}[{index}]", found)


def _statistics(numbers: list[float]) -> dict[str, float]:
    # Floats throughout and fsum for the mean, as the recorded summaries show.
    ordered = sorted(numbers)
    return {
        "count": len(numbers),
        "min": ordered[0],
        "max": ordered[-1],
        "mean": statistics.fmean(numbers),
        "p95": ordered[int(0.95 * (len(ordered) - 1))],
    }
