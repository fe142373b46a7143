"""The hidden-material scanner: does a public folder hold any hidden file or hidden text?

Hidden text is matched as normalized word n-grams (lower-cased `[a-z0-9]+` tokens, 8 in a row,
or a whole short label of 3-7 tokens) drawn from each task's solution, ground-truth program,
rubric, ground truth and primary_gt labels. N-grams that are legitimately public are not needles:
those occurring in any public task or event record of the layout are removed up front, and a match
is dismissed when the n-gram occurs in the package evidence of the task it belongs to, or in the
layout file that a scanned archive entry copies. Archive entries byte-identical to their layout
file are legitimate copies and are not searched again.

Every file of the folder is examined: names (hidden file names anywhere, also inside archives),
the public allow-list, every archive entry, every parquet cell and the parquet metadata.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from dataset import layout
from loaders.download import (
    CARD_FILE,
    CHECKSUMS_FILE,
    EVENT_ID,
    EVENTS_FILE,
    GROUND_TRUTH_FILE,
    PACKAGES_DIR,
    TASKS_FILE,
    check_entry_name,
)
from loaders.models import HIDDEN_TASK_FIELDS
from loaders.package import EventPackage
from loaders.release import (
    GROUND_TRUTH_COLUMNS,
    HiddenRecord,
    open_release,
    read_hidden_records,
    to_json_cell,
)

LeakKind = Literal[
    "hidden_file_name",
    "not_allowed",
    "unsafe_entry",
    "hidden_column",
    "unreadable",
    "primary_gt",
    "rubric",
    "solution",
    "compute_gt",
    "rationale",
    "ground_truth",
]
TEXT_KINDS: tuple[LeakKind, ...] = (
    "primary_gt",
    "rubric",
    "solution",
    "compute_gt",
    "rationale",
    "ground_truth",
)
"""Kinds of hidden text, most specific first: an n-gram shared by several is reported as the first."""

HIDDEN_FILE_NAMES = frozenset({*layout.HIDDEN_TASK_FILES, GROUND_TRUTH_FILE})
HIDDEN_COLUMNS = frozenset({*HIDDEN_TASK_FIELDS, *GROUND_TRUTH_COLUMNS} - {"task_id", "event_id"})
PUBLIC_FILES = frozenset({CARD_FILE, TASKS_FILE, EVENTS_FILE, CHECKSUMS_FILE})
ARCHIVE_PATH = re.compile(rf"{PACKAGES_DIR}/({EVENT_ID.pattern})\.zip")

SHINGLE = 8
SHORT_MIN_TOKENS = 3
SHORT_MIN_CHARS = 20
EXCERPT_CHARS = 80
MAX_ARCHIVE_DEPTH = 3
_TOKEN = re.compile(rb"[a-z0-9]+")
_MULTIPLIER = np.uint64(0x100000001B3)


class LeakFinding(BaseModel):
    """One piece of hidden material (or a forbidden file) found in a public folder."""

    file: str
    """Path relative to the scanned folder."""
    entry: str = ""
    """Where inside the file: an archive entry, or `row N / column` of a parquet file."""
    task_id: str = ""
    kind: LeakKind
    excerpt: str = ""
    """At most 80 characters of the matched text (never the whole hidden passage)."""
    matches: int = 0
    """How many hidden n-grams of this task and kind matched there."""


def tokens(data: bytes) -> np.ndarray:
    """Hashes of the normalized tokens of `data` (stable within one process)."""
    words = _TOKEN.findall(data.lower())
    return np.fromiter(map(hash, words), dtype=np.int64, count=len(words)).view(np.uint64)


def ngrams(token_hashes: np.ndarray, n: int) -> np.ndarray:
    """Rolling hashes of every run of `n` consecutive tokens (empty when there are fewer)."""
    count = len(token_hashes) - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    grams = np.zeros(count, dtype=np.uint64)
    for offset in range(n):
        grams = grams * _MULTIPLIER + token_hashes[offset : offset + count]
    return grams


@dataclass
class _Needles:
    """Sorted n-gram hashes of one length and, aligned, the index of the (task, kind) owning each."""

    keys: np.ndarray
    owners: np.ndarray

    def hits(self, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions in `grams` that are needles, the owner of each)."""
        if not len(self.keys) or not len(grams):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32)
        positions = np.flatnonzero(np.isin(grams, self.keys))
        return positions, self.owners[np.searchsorted(self.keys, grams[positions])]

    def without(self, public: np.ndarray) -> _Needles:
        keep = ~np.isin(self.keys, public)
        return _Needles(self.keys[keep], self.owners[keep])


@dataclass
class _Unit:
    """A piece of scanned content: where it is, its bytes, and (for archive entries) its layout source."""

    file: str
    entry: str
    data: bytes
    source: Path | None = None


@dataclass
class HiddenIndex:
    """Needles of every task's hidden material, minus what the layout legitimately makes public."""

    out: Path
    needles: dict[int, _Needles]
    owners: list[tuple[str, LeakKind]]
    task_events: dict[str, str]
    _evidence: dict[tuple[str, int], np.ndarray] = field(default_factory=dict, repr=False)
    _sources: dict[tuple[Path, int], np.ndarray] = field(default_factory=dict, repr=False)
    _digests: dict[Path, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_layout(cls, out: Path, rationales: Mapping[str, Mapping[str, str]] | None = None) -> HiddenIndex:
        """Collect the hidden needles of the built release at `out`.

        `rationales` ({task_id: {"difficulty_rationale": ..., "dimension_rationale": ...}}) adds the
        reviewer notes, which the layout does not hold.
        """
        out = Path(out)
        records = read_hidden_records(out)
        owners: list[tuple[str, LeakKind]] = []
        grams: dict[int, list[tuple[np.ndarray, int]]] = {}
        for record in records.values():
            texts = _hidden_texts(record, (rationales or {}).get(record.task_id, {}))
            for kind in TEXT_KINDS:
                owners.append((record.task_id, kind))
                for n, hashes in _needle_grams(texts.get(kind, ([], []))):
                    grams.setdefault(n, []).append((hashes, len(owners) - 1))
        public = _public_grams(out, set(grams))
        needles = {n: _merge(parts).without(public[n]) for n, parts in grams.items()}
        return cls(out, needles, owners, {r.task_id: r.event_id for r in records.values()})

    @property
    def needle_count(self) -> int:
        return sum(len(needles.keys) for needles in self.needles.values())

    def scan_public(self, folder: Path) -> list[LeakFinding]:
        """Every hidden file name, non-allowed file and hidden text found in the public folder `folder`."""
        folder = Path(folder)
        if not folder.is_dir():
            raise NotADirectoryError(f"not a public Hub folder: {folder}")
        findings: list[LeakFinding] = []
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            findings.extend(_name_findings(relative, path))
            if path.is_file() and not path.is_symlink():
                findings.extend(self._scan_file(relative, path))
        return findings

    def _scan_file(self, relative: str, path: Path) -> list[LeakFinding]:
        try:
            if path.suffix == ".parquet":
                return self._scan_parquet(relative, path)
            archive = ARCHIVE_PATH.fullmatch(relative)
            if path.suffix == ".zip" or zipfile.is_zipfile(path):
                event_id = archive.group(1) if archive else ""
                return self._scan_archive(relative, "", path.read_bytes(), event_id, 0)
            return self._scan_unit(_Unit(relative, "", path.read_bytes()))
        except (OSError, ValueError, zipfile.BadZipFile) as error:
            return [LeakFinding(file=relative, kind="unreadable", excerpt=_clip(str(error)))]

    def _scan_parquet(self, relative: str, path: Path) -> list[LeakFinding]:
        table = pq.read_table(path)
        findings = [
            LeakFinding(file=relative, entry=f"column {name}", kind="hidden_column", excerpt=name)
            for name in table.column_names
            if name in HIDDEN_COLUMNS
        ]
        for unit in _parquet_units(relative, table):
            findings.extend(self._scan_unit(unit))
        return findings

    def _scan_archive(
        self, relative: str, prefix: str, data: bytes, event_id: str, depth: int
    ) -> list[LeakFinding]:
        findings: list[LeakFinding] = []
        with zipfile.ZipFile(io.BytesIO(data)) as bundle:
            for info in bundle.infolist():
                entry = prefix + info.filename
                findings.extend(_entry_findings(relative, entry, info, top_level=depth == 0))
                if info.is_dir():
                    continue
                content = bundle.read(info)
                source = self._layout_source(event_id, info.filename) if depth == 0 else None
                if depth == 0 and source is None:
                    findings.append(
                        LeakFinding(
                            file=relative,
                            entry=entry,
                            kind="not_allowed",
                            excerpt="not a file of the layout package",
                        )
                    )
                if source is not None and _sha256(content) == self._file_sha256(source):
                    continue  # a verbatim copy of the layout's public file
                if depth < MAX_ARCHIVE_DEPTH and content[:4] == b"PK\x03\x04":
                    findings.extend(self._scan_archive(relative, entry + "!", content, "", depth + 1))
                    continue
                findings.extend(self._scan_unit(_Unit(relative, entry, content, source)))
        return findings

    def _layout_source(self, event_id: str, name: str) -> Path | None:
        """The layout file an archive entry should copy (None for unsafe names and unknown files)."""
        if not event_id or check_entry_name(name) is not None:
            return None
        package = EventPackage(layout.package_dir(self.out, event_id), event_id)
        path = package.resolve(name)
        return path if path.is_file() else None

    def _file_sha256(self, path: Path) -> str:
        if path not in self._digests:
            self._digests[path] = _sha256(path.read_bytes())
        return self._digests[path]

    def _scan_unit(self, unit: _Unit) -> list[LeakFinding]:
        token_hashes = tokens(unit.data)
        matched: dict[int, list[int]] = {}
        for n, needles in self.needles.items():
            grams = ngrams(token_hashes, n)
            positions, owners = needles.hits(grams)
            if not len(positions):
                continue
            hidden = ~self._legitimate(unit, n, grams[positions], owners)
            for position, owner in zip(positions[hidden].tolist(), owners[hidden].tolist(), strict=True):
                matched.setdefault(owner, []).append(position)
        return [self._finding(unit, owner, positions) for owner, positions in sorted(matched.items())]

    def _legitimate(self, unit: _Unit, n: int, grams: np.ndarray, owners: np.ndarray) -> np.ndarray:
        """Which matched n-grams also occur in the unit's layout source or in their task's package evidence."""
        legit = np.zeros(len(grams), dtype=bool)
        if unit.source is not None:
            legit |= np.isin(grams, self._source_grams(unit.source, n))
        events = np.array([self.task_events[self.owners[owner][0]] for owner in owners.tolist()])
        for event_id in set(events.tolist()):
            mine = events == event_id
            legit[mine] |= np.isin(grams[mine], self._evidence_grams(event_id, n))
        return legit

    def _source_grams(self, source: Path, n: int) -> np.ndarray:
        key = (source, n)
        if key not in self._sources:
            self._sources[key] = ngrams(tokens(source.read_bytes()), n)
        return self._sources[key]

    def _evidence_grams(self, event_id: str, n: int) -> np.ndarray:
        key = (event_id, n)
        if key not in self._evidence:
            package = EventPackage(layout.package_dir(self.out, event_id), event_id)
            parts = [ngrams(tokens(package.read_bytes(path)), n) for path in package.list_files("data")]
            self._evidence[key] = np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.uint64)
        return self._evidence[key]

    def _finding(self, unit: _Unit, owner: int, positions: list[int]) -> LeakFinding:
        task_id, kind = self.owners[owner]
        return LeakFinding(
            file=unit.file,
            entry=unit.entry,
            task_id=task_id,
            kind=kind,
            excerpt=_excerpt(unit.data, min(positions)),
            matches=len(positions),
        )


def scan_release(out: Path) -> list[LeakFinding]:
    """Scan `out/hub/public` against the hidden material of the built release at `out`."""
    return HiddenIndex.from_layout(out).scan_public(Path(out) / "hub" / "public")


def _hidden_texts(
    record: HiddenRecord, rationale: Mapping[str, str]
) -> dict[LeakKind, tuple[list[str], list[str]]]:
    """Per kind: (long texts to shingle, short label strings matched whole)."""
    truth = record.ground_truth
    primary = truth.get("primary_gt")
    labels = list(_strings(primary))
    rubric = list(_strings(truth.get("rubric")))
    notes = [text for text in rationale.values() if text]
    return {
        "primary_gt": ([to_json_cell(primary), *labels], labels),
        "rubric": (rubric, rubric),
        "solution": ([record.solution], []),
        "compute_gt": ([record.compute_gt_py], []),
        "rationale": (notes, notes),
        "ground_truth": ([to_json_cell(truth)], []),
    }


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (dict keys excluded: they are schema, not answers)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _needle_grams(texts: tuple[list[str], list[str]]) -> Iterator[tuple[int, np.ndarray]]:
    long_texts, labels = texts
    for text in long_texts:
        yield SHINGLE, ngrams(tokens(text.encode("utf-8")), SHINGLE)
    for label in labels:
        hashes = tokens(label.encode("utf-8"))
        if SHORT_MIN_TOKENS <= len(hashes) < SHINGLE and len(label.strip()) >= SHORT_MIN_CHARS:
            yield len(hashes), ngrams(hashes, len(hashes))


def _merge(parts: list[tuple[np.ndarray, int]]) -> _Needles:
    """Sorted unique needles; a needle shared by several owners keeps the first (most specific) one."""
    keys = np.concatenate([hashes for hashes, _ in parts])
    owners = np.concatenate([np.full(len(hashes), owner, dtype=np.int32) for hashes, owner in parts])
    unique, first = np.unique(keys, return_index=True)
    return _Needles(unique, owners[first])


def _public_grams(out: Path, lengths: set[int]) -> dict[int, np.ndarray]:
    """N-grams of every public task and event record of the layout, as files and as the Hub renders them."""
    token_runs = [tokens(text) for text in _public_texts(out)]
    return {
        n: np.unique(np.concatenate([ngrams(run, n) for run in token_runs] or [np.empty(0, np.uint64)]))
        for n in lengths
    }


def _public_texts(out: Path) -> Iterator[bytes]:
    for pattern in ("tasks/*/*/question_en.md", "tasks/*/*/task.json", "packages/*/metadata/*"):
        for path in sorted(out.glob(pattern)):
            yield path.read_bytes()
    release = open_release(out)
    for task in release.tasks:
        yield to_json_cell(task.model_dump(mode="json")).encode("utf-8")
    for event_id, event in release.events.items():
        yield to_json_cell(event.model_dump(mode="json")).encode("utf-8")
        yield to_json_cell([entry.model_dump(mode="json") for entry in release.manifest(event_id)]).encode(
            "utf-8"
        )


def _name_findings(relative: str, path: Path) -> list[LeakFinding]:
    findings: list[LeakFinding] = []
    if PurePosixPath(relative).name in HIDDEN_FILE_NAMES:
        findings.append(
            LeakFinding(file=relative, kind="hidden_file_name", excerpt=PurePosixPath(relative).name)
        )
    if path.is_symlink():
        findings.append(LeakFinding(file=relative, kind="not_allowed", excerpt="symbolic link"))
    elif path.is_file() and relative not in PUBLIC_FILES and not ARCHIVE_PATH.fullmatch(relative):
        findings.append(
            LeakFinding(file=relative, kind="not_allowed", excerpt="not on the public allow-list")
        )
    return findings


def _entry_findings(relative: str, entry: str, info: zipfile.ZipInfo, top_level: bool) -> list[LeakFinding]:
    findings: list[LeakFinding] = []
    if PurePosixPath(info.filename).name in HIDDEN_FILE_NAMES:
        findings.append(
            LeakFinding(file=relative, entry=entry, kind="hidden_file_name", excerpt=info.filename)
        )
    problem = check_entry_name(info.filename) if top_level and not info.is_dir() else None
    if (info.external_attr >> 16) & 0o170000 == 0o120000:
        problem = "symbolic link"
    if problem:
        findings.append(LeakFinding(file=relative, entry=entry, kind="unsafe_entry", excerpt=problem))
    return findings


def _parquet_units(relative: str, table: pa.Table) -> Iterator[_Unit]:
    for key, value in (table.schema.metadata or {}).items():
        yield _Unit(relative, f"metadata {key.decode('utf-8', 'replace')}", value)
    for name in table.column_names:
        for row, value in enumerate(table.column(name).to_pylist()):
            text = _cell_text(value)
            if text:
                yield _Unit(relative, f"row {row} / {name}", text.encode("utf-8"))


def _cell_text(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float):
        return ""
    return value if isinstance(value, str) else to_json_cell(value)


def _excerpt(data: bytes, token_position: int) -> str:
    for index, match in enumerate(_TOKEN.finditer(data.lower())):
        if index == token_position:
            text = data[match.start() : match.start() + 4 * EXCERPT_CHARS].decode("utf-8", "replace")
            return _clip(text)
    return ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
