"""`list_package_files(subdir, max_files)`: the files of a package folder, with sizes and suffixes."""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import Field

from evaluator.tools.base import (
    Tool,
    ToolArguments,
    ToolError,
    dump_json,
    names_package_place,
    repository_path,
)
from loaders.package import EventPackage, PackagePathError

DEFAULT_MAX_FILES = 200


class ListArguments(ToolArguments):
    subdir: str = Field(
        default=".", description="Folder to list: '.', 'data', 'data/<category>' or 'metadata'."
    )
    max_files: int = Field(default=DEFAULT_MAX_FILES, ge=0, description="Most files to return.")


class ListPackageFiles(Tool):
    name = "list_package_files"
    description = (
        "List the files of the event package (or of one folder of it) with their byte sizes and suffixes. "
        "Start here to see which evidence exists."
    )
    Arguments = ListArguments

    def execute(self, package: EventPackage, arguments: ListArguments) -> str:
        files = _files(package, arguments.subdir)
        shown = files[: arguments.max_files]
        return dump_json(
            {
                "file_count_returned": len(shown),
                "file_count_total": len(files),
                "truncated_extra_files": len(files) - len(shown),
                "files": [_entry(package, path) for path in shown],
            }
        )


def _files(package: EventPackage, subdir: str) -> list[str]:
    if is_whole_package(package, subdir):
        return package.list_files("")
    try:
        real = package.resolve(subdir)
    except PackagePathError as error:
        if not names_package_place(package, subdir, error):
            raise
        raise ToolError(f"subdir not found: {subdir}", "list '.' to see the package's folders") from error
    if not real.is_dir():
        raise ToolError(f"subdir not found: {subdir}", "list '.' to see the package's folders")
    return package.list_files(subdir)


def _entry(package: EventPackage, relative: str) -> dict[str, object]:
    return {
        "path": repository_path(package, relative),
        "package_relative_path": relative,
        "bytes": package.resolve(relative).stat().st_size,
        "suffix": PurePosixPath(relative).suffix,
    }


def is_whole_package(package: EventPackage, subdir: str) -> bool:
    """Whether `subdir` names the package itself ('.', '' or its repository-form root)."""
    text = subdir.strip().rstrip("/")
    return text in ("", ".") or text == repository_path(package, "").rstrip("/")
