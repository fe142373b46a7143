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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, get_args

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from dataset.hub.build import HUB_DIR, PUBLIC_DIR
from loaders import layout
from loaders.download import (
    CARD_FILE,
    CHECKSUMS_FILE,
    EVENTS_FILE,
    GROUND_TRUTH_FILE,
    PACKAGES_DIR,
    TASKS_FILE,
    check_entry_name,
)
from loaders.json_leaves import leaves
from loaders.models import EVENT_ID, HIDDEN_TASK_FIELDS
from loaders.package import EventPackage
from loaders.paper_results import PAPER_LEADERBOARD_FILE
from loaders.release import (
    GROUND_TRUTH_COLUMNS,
    HiddenRecord,
    Release,
    open_release,
    read_hidden_records,
    to_json_cell,
)

TextKind = Literal["primary_gt", "rubric", "solution", "compute_gt", "rationale", "ground_truth"]
LeakKind = Literal["hidden_file_name", "not_allowed", "unsafe_entry", "hidden_column", "unreadable", TextKind]
TEXT_KINDS: tuple[TextKind, ...] = get_args(TextKind)
"""Kinds of hidden text, most specific first: an n-gram hidden in several is reported as the first."""

HIDDEN_FILE_NAMES = frozenset({*layout.HIDDEN_TASK_FILES, GROUND_TRUTH_FILE})
HIDDEN_COLUMNS = frozenset({*HIDDEN_TASK_FIELDS, *GROUND_TRUTH_COLUMNS} - {"task_id", "event_id"})
PUBLIC_FILES = frozenset({CARD_FILE, TASKS_FILE, EVENTS_FILE, PAPER_LEADERBOARD_FILE, CHECKSUMS_FILE})
ARCHIVE_PATH = re.compile(rf"{PACKAGES_DIR}/({EVENT_ID.pattern})\.zip")

SHINGLE = 8
SHORT_MIN_TOKENS = 3
SHORT_MIN_CHARS = 20
EXCERPT_CHARS = 80
MAX_ARCHIVE_DEPTH = 3
ZIP_MAGIC = b"PK\x03\x04"
NOT_IN_PACKAGE = "not a file of the layout package"
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

    @property
    def printable(self) -> str:
        """What may be printed or logged of the finding: never the hidden text itself."""
        if self.kind in TEXT_KINDS:
            return f"{self.matches} hidden n-gram(s) of the task's {self.kind}"
        return self.excerpt


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


def contains(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Which `values` occur in the sorted array `sorted_keys` (a binary search, no re-sorting)."""
    if not len(sorted_keys):
        return np.zeros(len(values), dtype=bool)
    slots = np.minimum(np.searchsorted(sorted_keys, values), len(sorted_keys) - 1)
    return sorted_keys[slots] == values


@dataclass
class _Needles:
    """Sorted n-gram hashes of one length and, aligned, the index of the (task, kind) owning each."""

    keys: np.ndarray
    owners: np.ndarray

    def hits(self, grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions in `grams` that are needles, the owner of each)."""
        if not len(self.keys) or not len(grams):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32)
        positions = np.flatnonzero(contains(self.keys, grams))
        return positions, self.owners[np.searchsorted(self.keys, grams[positions])]

    def without(self, public: np.ndarray) -> _Needles:
        keep = ~contains(public, self.keys)
        return _Needles(self.keys[keep], self.owners[keep])


@dataclass
class _Unit:
    """A piece of scanned content: where it is, its bytes, and (for archive entries) its layout source."""

    file: str
    entry: str
    data: bytes
    source: Path | None = None


@dataclass
class _Match:
    """Needle matches in one unit for one n-gram length: positions, owners and the n-grams themselves."""

    unit: _Unit
    n: int
    positions: np.ndarray
    owners: np.ndarray
    grams: np.ndarray


@dataclass
class _Scan:
    findings: list[LeakFinding] = field(default_factory=list)
    matches: list[_Match] = field(default_factory=list)


@dataclass
class HiddenIndex:
    """Needles of every task's hidden material, minus what the layout legitimately makes public."""

    out: Path | None
    """The layout whose packages `scan_public` compares archives with (None: an index for text checks)."""
    needles: dict[int, _Needles]
    owners: list[tuple[str, LeakKind]]
    task_events: dict[str, str]
    _digests: dict[Path, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_layout(cls, out: Path) -> HiddenIndex:
        """Collect the hidden needles of the built release at `out` (its tasks' hidden files)."""
        out = Path(out)
        return cls.from_records(read_hidden_records(out), _public_texts(out), out)

    @classmethod
    def from_records(
        cls, records: dict[str, HiddenRecord], public_texts: Iterable[bytes], out: Path | None = None
    ) -> HiddenIndex:
        """The needles of `records`' hidden material minus every n-gram of `public_texts` (what the
        release legitimately shows); `out` is the layout that `scan_public` checks archives against."""
        texts = {task_id: _hidden_texts(record) for task_id, record in records.items()}
        owners: list[tuple[str, LeakKind]] = []
        grams: dict[int, list[tuple[np.ndarray, int]]] = {}
        # Kind-major order: an n-gram shared by several tasks is reported under its most specific kind.
        for kind in TEXT_KINDS:
            for task_id, by_kind in texts.items():
                owners.append((task_id, kind))
                for n, hashes in _needle_grams(by_kind[kind]):
                    grams.setdefault(n, []).append((hashes, len(owners) - 1))
        public = _public_grams(public_texts, set(grams))
        needles = {n: _merge(parts).without(public[n]) for n, parts in grams.items()}
        return cls(out, needles, owners, {r.task_id: r.event_id for r in records.values()})

    def holds_hidden(self, text: str) -> bool:
        """Whether `text` contains any hidden needle of any task."""
        hashes = tokens(text.encode("utf-8"))
        return any(contains(needles.keys, ngrams(hashes, n)).any() for n, needles in self.needles.items())

    @property
    def needle_count(self) -> int:
        return sum(len(needles.keys) for needles in self.needles.values())

    def scan_public(self, folder: Path) -> list[LeakFinding]:
        """Every hidden file name, non-allowed file and hidden text found in the public folder `folder`."""
        self._require_layout()
        folder = Path(folder)
        if not folder.is_dir():
            raise NotADirectoryError(f"not a public Hub folder: {folder}")
        scan = _Scan()
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            scan.findings.extend(_name_findings(relative, path))
            if path.is_file() and not path.is_symlink():
                self._scan_file(relative, path, scan)
        return sorted(
            scan.findings + self._text_findings(scan.matches),
            key=lambda finding: (finding.file, finding.entry, finding.task_id, finding.kind),
        )

    def scan_files(
        self, files: Mapping[str, Path], min_matches: Mapping[LeakKind, int] | None = None
    ) -> list[LeakFinding]:
        """Hidden text in `files` (the name to report -> the file), each read whole as text (no archive
        or parquet is opened), with the same dismissals as `scan_public`. A finding needs at least
        `min_matches[kind]` hidden n-grams of one task's text of that kind in one file (default 1)."""
        self._require_layout()
        least = dict(min_matches or {})
        scan = _Scan()
        for name in sorted(files):
            self._match(_Unit(name, "", Path(files[name]).read_bytes()), scan)
        # dismissals only lower a count, so owners already short of their minimum are dropped up front
        matches = [self._enough(match, least) for match in scan.matches]
        findings = self._text_findings([match for match in matches if len(match.positions)])
        return sorted(
            (finding for finding in findings if finding.matches >= least.get(finding.kind, 1)),
            key=lambda finding: (finding.file, finding.task_id, finding.kind),
        )

    def _require_layout(self) -> None:
        if self.out is None:
            raise ValueError("this hidden index has no layout (packages to compare with); use from_layout")

    def _enough(self, match: _Match, least: dict[LeakKind, int]) -> _Match:
        """`match` without the owners that have fewer positions in it than their kind's minimum."""
        owners, counts = np.unique(match.owners, return_counts=True)
        short = owners[counts < np.array([least.get(self.owners[owner][1], 1) for owner in owners.tolist()])]
        keep = ~np.isin(match.owners, short)
        return _Match(match.unit, match.n, match.positions[keep], match.owners[keep], match.grams[keep])

    def _scan_file(self, relative: str, path: Path, scan: _Scan) -> None:
        try:
            if path.suffix == ".parquet":
                self._scan_parquet(relative, path, scan)
            elif path.suffix == ".zip" or zipfile.is_zipfile(path):
                archive = ARCHIVE_PATH.fullmatch(relative)
                self._scan_archive(relative, "", path.read_bytes(), archive.group(1) if archive else "", scan)
            else:
                self._match(_Unit(relative, "", path.read_bytes()), scan)
        except (OSError, ValueError, zipfile.BadZipFile) as error:
            scan.findings.append(LeakFinding(file=relative, kind="unreadable", excerpt=_clip(str(error))))

    def _scan_parquet(self, relative: str, path: Path, scan: _Scan) -> None:
        table = pq.read_table(path)
        scan.findings.extend(
            LeakFinding(file=relative, entry=f"column {name}", kind="hidden_column", excerpt=name)
            for name in table.column_names
            if name in HIDDEN_COLUMNS
        )
        for unit in _parquet_units(relative, table):
            self._match(unit, scan)

    def _scan_archive(self, relative: str, prefix: str, data: bytes, event_id: str, scan: _Scan) -> None:
        """Scan every entry; `event_id` names the layout package a top-level archive copies ("" if none)."""
        top_level = not prefix
        with zipfile.ZipFile(io.BytesIO(data)) as bundle:
            for info in bundle.infolist():
                entry = prefix + info.filename
                scan.findings.extend(_entry_findings(relative, entry, info, top_level))
                if info.is_dir():
                    continue
                content = bundle.read(info)
                source = self._layout_source(event_id, info.filename) if top_level else None
                if top_level and source is None:
                    scan.findings.append(
                        LeakFinding(file=relative, entry=entry, kind="not_allowed", excerpt=NOT_IN_PACKAGE)
                    )
                if source is not None and _sha256(content) == self._file_sha256(source):
                    continue  # a verbatim copy of the layout's public file
                if content[:4] == ZIP_MAGIC and entry.count("!") < MAX_ARCHIVE_DEPTH:
                    self._scan_archive(relative, entry + "!", content, "", scan)
                else:
                    self._match(_Unit(relative, entry, content, source), scan)

    def _layout_source(self, event_id: str, name: str) -> Path | None:
        """The layout file an archive entry should copy (None for unsafe names and unknown files)."""
        if not event_id or check_entry_name(name) is not None:
            return None
        path = EventPackage(layout.package_dir(self.out, event_id), event_id).resolve(name)
        return path if path.is_file() else None

    def _file_sha256(self, path: Path) -> str:
        if path not in self._digests:
            self._digests[path] = _sha256(path.read_bytes())
        return self._digests[path]

    def _match(self, unit: _Unit, scan: _Scan) -> None:
        """Record the unit's needle matches that its own layout source does not explain."""
        token_hashes = tokens(unit.data)
        for n, needles in self.needles.items():
            grams = ngrams(token_hashes, n)
            positions, owners = needles.hits(grams)
            if unit.source is not None and len(positions):
                keep = ~contains(np.unique(ngrams(tokens(unit.source.read_bytes()), n)), grams[positions])
                positions, owners = positions[keep], owners[keep]
            if len(positions):
                scan.matches.append(_Match(unit, n, positions, owners, grams[positions]))

    def _text_findings(self, matches: list[_Match]) -> list[LeakFinding]:
        """Findings from the matches left after dismissing n-grams found in their task's package evidence."""
        owner_events = np.array([self.task_events[task_id] for task_id, _ in self.owners])
        in_evidence = self._evidence_grams(matches, owner_events)
        grouped: dict[tuple[int, int], tuple[_Unit, list[int]]] = {}
        for match in matches:
            events = owner_events[match.owners]
            hidden = np.ones(len(match.grams), dtype=bool)
            for event_id in np.unique(events).tolist():
                mine = events == event_id
                hidden[mine] = ~contains(in_evidence[(event_id, match.n)], match.grams[mine])
            for position, owner in zip(
                match.positions[hidden].tolist(), match.owners[hidden].tolist(), strict=True
            ):
                grouped.setdefault((id(match.unit), owner), (match.unit, []))[1].append(position)
        return [self._finding(unit, owner, positions) for (_, owner), (unit, positions) in grouped.items()]

    def _evidence_grams(
        self, matches: list[_Match], owner_events: np.ndarray
    ) -> dict[tuple[str, int], np.ndarray]:
        """For each (event, n): the matched n-grams that occur in that event's evidence files, sorted.

        Each involved package is tokenized once, however many matches point at it.
        """
        wanted: dict[str, dict[int, list[np.ndarray]]] = {}
        for match in matches:
            events = owner_events[match.owners]
            for event_id in np.unique(events).tolist():
                wanted.setdefault(event_id, {}).setdefault(match.n, []).append(
                    match.grams[events == event_id]
                )
        found: dict[tuple[str, int], np.ndarray] = {}
        for event_id, by_length in wanted.items():
            candidates = {n: np.unique(np.concatenate(parts)) for n, parts in by_length.items()}
            hits: dict[int, list[np.ndarray]] = {n: [] for n in candidates}
            package = EventPackage(layout.package_dir(self.out, event_id), event_id)
            for path in package.list_files("data"):
                token_hashes = tokens(package.read_bytes(path))
                for n, keys in candidates.items():
                    grams = ngrams(token_hashes, n)
                    hits[n].append(grams[contains(keys, grams)])
            for n, parts in hits.items():
                found[(event_id, n)] = np.unique(np.concatenate(parts)) if parts else np.empty(0, np.uint64)
        return found

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
    return HiddenIndex.from_layout(out).scan_public(Path(out) / HUB_DIR / PUBLIC_DIR)


def _hidden_texts(record: HiddenRecord) -> dict[LeakKind, tuple[list[str], list[str]]]:
    """Per kind: (long texts to shingle, short label strings matched whole)."""
    truth = record.ground_truth
    primary = truth.get("primary_gt")
    labels = list(_strings(primary))
    rubric = list(_strings(truth.get("rubric")))
    notes = [text for text in (record.difficulty_rationale, record.dimension_rationale) if text]
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
    return (leaf for _, leaf in leaves(value) if isinstance(leaf, str))


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


def _public_grams(public_texts: Iterable[bytes], lengths: set[int]) -> dict[int, np.ndarray]:
    """N-grams of every public text, for each needle length."""
    token_runs = [tokens(text) for text in public_texts]
    return {
        n: np.unique(np.concatenate([ngrams(run, n) for run in token_runs] or [np.empty(0, np.uint64)]))
        for n in lengths
    }


def _public_texts(out: Path) -> Iterator[bytes]:
    """Every public task and event record of the layout, as files and as the Hub renders them (the
    prompts come with the release's records)."""
    for pattern in ("tasks/*/*/task.json", "packages/*/metadata/*"):
        for path in sorted(out.glob(pattern)):
            yield path.read_bytes()
    yield from release_public_texts(open_release(out))


def release_public_texts(release: Release) -> Iterator[bytes]:
    """The public records of a release (tasks with their prompts, events, manifests) as published."""
    for task in release.tasks:
        yield task.question.encode("utf-8")
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
