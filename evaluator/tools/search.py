"""`search_package_files(query, glob, max_matches)`: which text files of the package hold every query term."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field

from evaluator.tools.base import Tool, ToolArguments, ToolError, cut, decode_text, dump_json, repository_path
from evaluator.tools.read import TEXT_SUFFIXES
from loaders.package import EventPackage, PackagePathError

DEFAULT_GLOB = "**/*"
DEFAULT_MAX_MATCHES = 20
SNIPPET_LIMIT = 500
"""Snippets longer than this are cut to SNIPPET_KEEP characters plus the marker."""
SNIPPET_KEEP = 420


class SearchArguments(ToolArguments):
    query: str = Field(default="", description="Words to find; a file matches when it holds every word.")
    glob: str = Field(
        default=DEFAULT_GLOB, description="Which files to search, relative to the package root."
    )
    max_matches: int = Field(default=DEFAULT_MAX_MATCHES, ge=0, description="Most matching files to return.")


class SearchPackageFiles(Tool):
    name = "search_package_files"
    description = (
        "Find the text files of the package that contain every word of the query (case-insensitive); "
        "each match gives the file and the first line holding one of the words."
    )
    Arguments = SearchArguments

    def execute(self, package: EventPackage, arguments: SearchArguments) -> str:
        terms = arguments.query.lower().split()
        if not terms:
            raise ToolError("query is required", "pass one or more words to look for")
        matches = []
        for relative, real in _searched(package, arguments.glob):
            if len(matches) >= arguments.max_matches:
                break
            snippet = _snippet(real, terms)
            if snippet is not None:
                matches.append({"path": repository_path(package, relative), "snippet": snippet})
        return dump_json({"query": arguments.query.strip(), "match_count": len(matches), "matches": matches})


def searched_files(package: EventPackage, pattern: str) -> list[str]:
    """Sorted package-relative paths of the text files `pattern` selects (ValueError for a bad pattern)."""
    return [relative for relative, _ in _searched(package, pattern)]


def _searched(package: EventPackage, pattern: str) -> list[tuple[str, Path]]:
    try:
        candidates = sorted(package.root.glob(_case_insensitive(pattern)))
    except NotImplementedError as error:  # absolute patterns
        raise ValueError(f"unsupported glob pattern {pattern!r}: {error}") from error
    found = [_visible(package, candidate) for candidate in candidates]
    return [item for item in found if item is not None]


def _case_insensitive(pattern: str) -> str:
    """`pattern` matching names in any letter case, as the recorded harness's globs did."""
    if "[" in pattern:
        return pattern
    return "".join(f"[{char.lower()}{char.upper()}]" if char.isalpha() else char for char in pattern)


def _visible(package: EventPackage, candidate: Path) -> tuple[str, Path] | None:
    if candidate.suffix.lower() not in TEXT_SUFFIXES or not candidate.is_file():
        return None
    relative = candidate.relative_to(package.root).as_posix()
    try:
        # Only a link can leave the package; a plain file needs just the lexical check (fast).
        real = package.resolve(relative) if candidate.is_symlink() else candidate
        package.lexical(relative)
    except PackagePathError:
        return None
    return relative, real


@lru_cache(maxsize=64)
def _texts(path: str, mtime_ns: int, size: int) -> tuple[str, str]:
    # Keyed by modification time and size too, so an edited file is read again.
    text = decode_text(Path(path).read_bytes())
    return text, text.lower()


def _snippet(path: Path, terms: list[str]) -> str | None:
    """The first line holding a term (cut beyond SNIPPET_LIMIT) when the file holds every term, else None."""
    status = path.stat()
    text, lowered = _texts(str(path), status.st_mtime_ns, status.st_size)
    if not all(term in lowered for term in terms):
        return None
    for line in text.splitlines():
        if any(term in line.lower() for term in terms):
            snippet = line.strip()
            return snippet if len(snippet) <= SNIPPET_LIMIT else cut(snippet, SNIPPET_KEEP)
    return None
