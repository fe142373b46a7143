"""The dataset cards: the public README.md (YAML configs + documentation) and the private README.md."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pydantic import BaseModel

from dataset.hub.tables import FLATTENED_SEPARATOR
from loaders.download import CHECKSUMS_FILE, DEFAULT_REPO_ID, EVENTS_FILE, GROUND_TRUTH_FILE, TASKS_FILE
from loaders.models import Event, FileEntry, Task
from loaders.release import EVENT_RECORD_COLUMN, MANIFEST_COLUMN

SPLIT = "test"
LICENSE = "cc-by-4.0"
PRETTY_NAME = "EarthVerse"
TASK_CATEGORIES = ("question-answering", "text-generation")
TAGS = (
    "earth-science",
    "natural-hazards",
    "climate",
    "geospatial",
    "remote-sensing",
    "scientific-agents",
    "benchmark",
)
ARXIV_ID = "2608.23525"
PAPER_TITLE = "EarthVerse: Benchmarking Scientific Agents Across Dynamic Earth Systems and Natural Hazards"

TASK_FIELD_NOTES = {
    "task_id": "Task id, `CSX-NNN_QK`.",
    "event_id": "The event package the task is about, `CSX-NNN`.",
    "title": "Short task title.",
    "event_name": "Name of the natural-hazard event.",
    "hazard_family": "Hazard family (19 families).",
    "hazard_label": "Readable hazard label.",
    "region": "World region of the event.",
    "scale": "Spatial scale of the event.",
    "primary_dimension": "The task's main capability tag.",
    "task_type": "Answer format of the task.",
    "target_family": "Kind of target the answer is scored against.",
    "file_count": "Number of files in the event package manifest.",
    "category_counts": "Package files per evidence category, as a JSON object string.",
}
"""Descriptions for Task fields that carry no pydantic description."""

EVENT_COLUMN_NOTES = {
    "event_id": "Event package id, `CSX-NNN`.",
    "task_count": "Number of tasks on this event.",
    "file_count": "Number of manifest entries.",
    "task_ids": "The tasks on this event.",
    "package_files": "Files actually present in the package archive under data/.",
    "package_bytes": "Total bytes of those files.",
    "archive": "Repo path of the event's package archive.",
    "archive_bytes": "Size of the archive.",
    "archive_sha256": "sha256 of the archive (also in checksums.sha256).",
    MANIFEST_COLUMN: "The package manifest (`metadata/files.csv`), one struct per file; fields below.",
    EVENT_RECORD_COLUMN: "The full event record (`metadata/event.json`) as a JSON string.",
}

MANIFEST_FIELD_NOTES = {
    "file_id": "File id within the package, `F0001`...",
    "category": "Evidence category (the folder under data/).",
    "layer_name": "What the file is, as a layer name.",
    "source_id": "Id of the source within the package.",
    "source_name": "Name of the upstream source.",
    "source_type": "Kind of upstream source.",
    "source_url": "Where the upstream source is.",
    "status": "Acquisition status recorded by the original release.",
    "preview_type": "How the original site previewed the file.",
    "mime_type": "MIME type recorded by the original release.",
}
"""Descriptions for FileEntry fields that carry no pydantic description."""


class CardFacts(BaseModel):
    """Everything the public card states about one build."""

    version: str
    tasks: list[Task]
    events: dict[str, Event]
    archives: int
    tasks_schema: list[tuple[str, str]]
    events_schema: list[tuple[str, str]]
    report_totals: dict[str, Any] | None = None


def schema_rows(schema: pa.Schema) -> list[tuple[str, str]]:
    """(column, type) pairs, with list types written `list<string>` / `list<struct>` for the field tables."""
    return [(field.name, _short_type(field.type)) for field in schema]


def _short_type(arrow_type: pa.DataType) -> str:
    if not pa.types.is_list(arrow_type):
        return str(arrow_type)
    inner = arrow_type.value_type
    return f"list<{'struct' if pa.types.is_struct(inner) else _short_type(inner)}>"


def render_card(facts: CardFacts) -> str:
    """The public README.md: YAML front matter for the Hub and `datasets`, then the documentation."""
    return "\n".join([_front_matter(), _body(facts)])


def _front_matter() -> str:
    lines = [
        "---",
        f"pretty_name: {PRETTY_NAME}",
        f"license: {LICENSE}",
        "language:",
        "- en",
        "task_categories:",
        *[f"- {category}" for category in TASK_CATEGORIES],
        "tags:",
        *[f"- {tag}" for tag in TAGS],
        "size_categories:",
        "- n<1K",
        "configs:",
        *_config_lines("tasks", TASKS_FILE, default=True),
        *_config_lines("events", EVENTS_FILE, default=False),
        "---",
    ]
    return "\n".join(lines) + "\n"


def _config_lines(name: str, path: str, default: bool) -> list[str]:
    lines = [f"- config_name: {name}", "  data_files:", f"  - split: {SPLIT}", f"    path: {path}"]
    return [*lines, "  default: true"] if default else lines


def _body(facts: CardFacts) -> str:
    sections = [
        _introduction(facts),
        _loading(),
        _counts(facts),
        _report(facts.report_totals),
        _fields("tasks", facts.tasks_schema, _task_description),
        _fields("events", facts.events_schema, _event_describer(facts.events)),
        _manifest_fields(),
        _ground_truth_note(),
        _license(),
        _citation(),
    ]
    return "\n".join(section for section in sections if section)


def _introduction(facts: CardFacts) -> str:
    return f"""# EarthVerse

EarthVerse is a benchmark for scientific AI agents working on dynamic Earth systems and natural
hazards: {len(facts.tasks)} investigations over {len(facts.events)} real natural-hazard event packages
(event reports, reanalysis and satellite summaries, exposure layers, catalogs). An agent gets a
question and one event package, works with package-scoped tools, and submits a structured answer
with provenance, which is scored against hidden ground truth and a process rubric.

Release version: `{facts.version}` (a content hash of the tasks, event records and manifests; the
`earthverse` loaders report the same value as `Release.version`).

This repository holds two configurations and one archive per event package:

| path | what |
| --- | --- |
| `{TASKS_FILE}` | config `tasks`: one row per task (the public prompt and metadata) |
| `{EVENTS_FILE}` | config `events`: one row per event (record, counts, manifest) |
| `packages/CSX-NNN.zip` | one event package: `data/<category>/<file>`, `metadata/{{event.json,files.csv}}` |
| `paper_leaderboard.json` | the paper's reported leaderboard figures (25 systems), with the citation |
| `{CHECKSUMS_FILE}` | sha256 of every other file, `sha256sum -c` format |
"""


def _loading() -> str:
    return f"""## Loading

```python
from datasets import load_dataset

tasks = load_dataset("{DEFAULT_REPO_ID}", "tasks", split="{SPLIT}")
events = load_dataset("{DEFAULT_REPO_ID}", "events", split="{SPLIT}")
```

`category_counts` (tasks) and the event record columns holding nested values are JSON strings:
`json.loads(row["category_counts"])`.

One event package (one archive, not the whole dataset), verified against `{CHECKSUMS_FILE}` and
extracted:

```python
from loaders import download_event_package   # from the EarthVerse code repository

package_dir = download_event_package("CSX-001")   # -> .../CSX-001/{{data,metadata}}
```

or with `huggingface_hub` alone:

```python
from huggingface_hub import hf_hub_download

path = hf_hub_download("{DEFAULT_REPO_ID}", filename="packages/CSX-001.zip", repo_type="dataset")
```

The whole release (tasks, events, packages on demand): `loaders.release.open_release("{DEFAULT_REPO_ID}")`.
"""


def _counts(facts: CardFacts) -> str:
    levels = Counter(task.difficulty_level for task in facts.tasks)
    families = Counter(task.hazard_family for task in facts.tasks)
    tags = Counter(tag for task in facts.tasks for tag in task.dimensions)
    return "\n".join(
        [
            "## Counts",
            "",
            f"{len(facts.tasks)} tasks, {len(facts.events)} events, {facts.archives} package archives.",
            "",
            _count_table("difficulty", levels),
            _count_table("capability tag (a task has several)", tags),
            _count_table("hazard family", families),
        ]
    )


def _count_table(title: str, counts: Counter[str]) -> str:
    rows = [
        f"| {key} | {value} |" for key, value in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return "\n".join([f"| {title} | tasks |", "| --- | ---: |", *rows, ""])


def _report(totals: dict[str, Any] | None) -> str:
    if not totals:
        return ""
    rows = [f"| {key} | {_cell(value)} |" for key, value in totals.items()]
    return "\n".join(
        [
            "## Release gates",
            "",
            "Totals of the build's release report:",
            "",
            "| total | value |",
            "| --- | --- |",
            *rows,
            "",
        ]
    )


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key}: {inner}" for key, inner in value.items())
    return json.dumps(value) if not isinstance(value, str | int | float) else str(value)


def _fields(config: str, schema: list[tuple[str, str]], describe: Callable[[str], str]) -> str:
    rows = [f"| `{name}` | {arrow_type} | {describe(name)} |" for name, arrow_type in schema]
    return "\n".join(
        [f"## Fields of `{config}`", "", "| column | type | description |", "| --- | --- | --- |", *rows, ""]
    )


def _task_description(name: str) -> str:
    field = Task.model_fields.get(name)
    return (field.description if field else None) or TASK_FIELD_NOTES.get(name, "")


def _event_describer(events: dict[str, Event]) -> Callable[[str], str]:
    """Describe events columns; a flattened record column names the event.json key it comes from."""
    paths = {
        flattened: path
        for event in events.values()
        for flattened, path in _record_paths(event.model_dump(mode="json")).items()
    }

    def describe(name: str) -> str:
        if name in EVENT_COLUMN_NOTES:
            return EVENT_COLUMN_NOTES[name]
        field = Event.model_fields.get(name)
        if field is not None and field.description:
            return field.description
        return f"Event record field `{paths.get(name, name)}`."

    return describe


def _record_paths(record: dict[str, Any]) -> dict[str, str]:
    paths = {}
    for key, value in record.items():
        children = value if isinstance(value, dict) else {}
        paths[key] = key
        paths.update({f"{key}{FLATTENED_SEPARATOR}{child}": f"{key}.{child}" for child in children})
    return paths


def _manifest_fields() -> str:
    rows = [f"| `{name}` | {field.description or ''} |" for name, field in FileEntry.model_fields.items()]
    return "\n".join(
        [
            "### Fields of a manifest entry",
            "",
            "| field | description |",
            "| --- | --- |",
            *rows,
            "",
            "Entries also carry `repository_path`, the file's path in the original EarthVerse repository.",
            "",
        ]
    )


def _ground_truth_note() -> str:
    return """## Ground truth is private

The solutions, ground-truth values, tolerances, rubrics and ground-truth programs are not in this
repository. They live in a separate private dataset used by the leaderboard's server-side scoring,
so that published scores stay comparable. Submit traces to the leaderboard to be scored.
"""


def _license() -> str:
    return f"""## License

The task texts, tables and this card are released under CC BY 4.0 (`{LICENSE}`). The evidence files inside the
package archives are copies of public sources (listed per file in the manifest, `source_name` and
`source_url`) and keep their upstream licenses and terms of use.
"""


def _citation() -> str:
    return f"""## Citation

```bibtex
@misc{{earthverse2026,
  title         = {{{PAPER_TITLE}}},
  year          = {{2026}},
  eprint        = {{{ARXIV_ID}}},
  archivePrefix = {{arXiv}},
  url           = {{https://arxiv.org/abs/{ARXIV_ID}}}
}}
```
"""


def render_private_readme(task_count: int, columns: list[str]) -> str:
    """The private folder's README.md: says it is private and what the table holds."""
    listed = "\n".join(f"- `{column}`" for column in columns)
    return f"""---
license: other
viewer: false
---

# EarthVerse ground truth (PRIVATE)

This dataset is PRIVATE. It holds the hidden scoring material of the EarthVerse benchmark and
must never be made public, copied into the public dataset, shown to an agent or logged.

`{GROUND_TRUTH_FILE}`: {task_count} rows, one per task, columns:

{listed}

JSON-valued columns hold compact JSON strings; `ground_truth` is the full ground-truth record.
Read it with `loaders.release.open_ground_truth`.
"""
