"""Push a built release to the Hub: the public dataset, the private ground truth and, optionally, the Space.

    python scripts/upload.py --public-repo earthverse/core --private-repo earthverse/core-private \\
        [--space earthverse/leaderboard] [--release build] [--dry-run] [--token-env HF_TOKEN]

The public folder is scanned for hidden material first; any finding refuses the whole upload.
`plan_upload` decides exactly what each commit holds (pure: it reads local files, never the
network); `--dry-run` prints that plan and stops. Each repo gets one `create_commit` with an
explicit list of `CommitOperationAdd`, and a `CommitOperationDelete` for every file an earlier upload
left there that the plan no longer has.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Literal

from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from pydantic import BaseModel

from dataset.hub.build import HUB_DIR, PRIVATE_DIR, PUBLIC_DIR
from dataset.leaks import HiddenIndex, LeakFinding
from dataset.repository_leaks import HiddenValues, copied_passages
from loaders.download import CHECKSUMS_FILE, GROUND_TRUTH_FILE, ChecksumError, parse_checksums, verify_file
from loaders.release import ReleaseError, open_ground_truth, open_release

PROJECT = Path(__file__).resolve().parents[1]
SPACE_DIR = PROJECT / "space"
SPACE_SDK = "gradio"
ROOT_FILES = frozenset({"app.py", "README.md", "requirements.txt"})
"""Space files that the Hub reads at the repo root; the rest of the Space is the `space` package."""
SPACE_CODE_PACKAGES = ("space", "loaders", "evaluator", "dataset")
"""Packages the app imports (its redaction uses the release leak scan in dataset/); code files only."""
CODE_SUFFIXES = frozenset({".py", ".md"})
SPACE_CODE_EXCLUDED = frozenset({"evaluator/demo"})
"""Code folders the app does not import (the offline demo carries its own demo task files)."""
KEPT_REMOTE_FILES = frozenset({".gitattributes"})
"""Files the Hub itself keeps in every repo; an upload never deletes them."""
DEFAULT_RELEASE = Path("build")
MAX_FINDINGS_SHOWN = 20


class UploadRefused(RuntimeError):
    """The upload would publish something it must not; the message says what."""

    def __init__(self, message: str, findings: list[LeakFinding] | None = None) -> None:
        super().__init__(message)
        self.findings = findings or []


class FileOperation(BaseModel):
    """One file to add in a commit."""

    path_in_repo: str
    local_path: Path
    size: int


class RepoPlan(BaseModel):
    repo_id: str
    repo_type: Literal["dataset", "space"]
    private: bool
    space_sdk: str | None = None
    commit_message: str
    operations: list[FileOperation]

    @property
    def total_bytes(self) -> int:
        return sum(operation.size for operation in self.operations)


class UploadPlan(BaseModel):
    """Everything an upload would do: which repos, their visibility, and every file of each commit."""

    release: Path
    version: str
    repos: list[RepoPlan]


def plan_upload(
    release: Path,
    public_repo: str,
    private_repo: str,
    space_repo: str | None = None,
    space_dir: Path = SPACE_DIR,
) -> UploadPlan:
    """The upload plan for the built release at `release`; raises UploadRefused on any leak.

    Reads local files only. The public folder must pass the hidden-material scan and match its
    checksums; the private ground truth must load and cover exactly the public tasks; the public and
    private repos must differ; the private repo gets only the private folder; the Space's code must
    write no task's hidden answer nor copy a passage of its hidden text.
    """
    release = Path(release)
    public, private = release / HUB_DIR / PUBLIC_DIR, release / HUB_DIR / PRIVATE_DIR
    for folder in (public, private):
        if not folder.is_dir():
            raise UploadRefused(f"{folder}: missing; build the release (earthverse build) first")
    if public_repo == private_repo:
        raise UploadRefused(f"the public and the private repo are the same ({public_repo})")
    if not (private / GROUND_TRUTH_FILE).is_file():
        raise UploadRefused(f"{private}: no {GROUND_TRUTH_FILE}")
    try:
        version = open_release(release).version
    except ReleaseError as error:
        raise UploadRefused(f"{release}: {error}; nothing uploaded") from error
    # cheapest checks first: the Space's answer values, then its passages once the n-gram index exists
    space = _space_plan(space_repo, space_dir, version) if space_repo else None
    if space is not None:
        _check_space_values(release, space)
    hidden = HiddenIndex.from_layout(release)
    if space is not None:
        _check_space_passages(hidden, space)
    findings = hidden.scan_public(public)
    if findings:
        raise UploadRefused(
            f"{public}: {len(findings)} hidden file(s) or text found; nothing uploaded", findings
        )
    try:
        _check_hub_folders(public, private)
    except (ReleaseError, ChecksumError) as error:
        raise UploadRefused(f"{release}: {error}; nothing uploaded") from error
    repos = [
        _repo_plan(public_repo, "dataset", False, public, f"EarthVerse release {version}"),
        _repo_plan(private_repo, "dataset", True, private, f"EarthVerse ground truth {version}"),
    ]
    if space is not None:
        repos.append(space)
    return UploadPlan(release=release, version=version, repos=repos)


def _check_hub_folders(public: Path, private: Path) -> None:
    """Publish only what readers will accept: every public file as its checksums list it (no more, no
    fewer), and a private ground truth that loads and covers exactly the public tasks."""
    if not (public / CHECKSUMS_FILE).is_file():
        raise ChecksumError(f"{public}: no {CHECKSUMS_FILE}")
    digests = parse_checksums((public / CHECKSUMS_FILE).read_text(encoding="utf-8"), str(public))
    present = {path.relative_to(public).as_posix() for path in _files(public)} - {CHECKSUMS_FILE}
    unlisted, missing = sorted(present - set(digests)), sorted(set(digests) - present)
    if unlisted or missing:
        raise ChecksumError(
            f"{public}: files not in {CHECKSUMS_FILE}: {unlisted}; listed but absent: {missing}"
        )
    for name in sorted(digests):
        verify_file(public / name, name, digests)
    public_tasks = {task.task_id for task in open_release(public).tasks}
    hidden_tasks = set(open_ground_truth(private / GROUND_TRUTH_FILE))
    if hidden_tasks != public_tasks:
        raise ReleaseError(
            f"{private / GROUND_TRUTH_FILE}: ground truth for {len(hidden_tasks)} tasks, the public tables "
            f"hold {len(public_tasks)}; without ground truth: {sorted(public_tasks - hidden_tasks)[:5]}, "
            f"not public: {sorted(hidden_tasks - public_tasks)[:5]}"
        )


def _repo_plan(
    repo_id: str, repo_type: Literal["dataset", "space"], private: bool, folder: Path, message: str
) -> RepoPlan:
    return RepoPlan(
        repo_id=repo_id,
        repo_type=repo_type,
        private=private,
        space_sdk=SPACE_SDK if repo_type == "space" else None,
        commit_message=message,
        operations=[_operation(folder, path) for path in _files(folder)],
    )


def _space_plan(space_repo: str, space_dir: Path, version: str, code_root: Path = PROJECT) -> RepoPlan:
    """The Space repo: app.py, README.md and requirements.txt at the root, then the code it imports."""
    root_files = [path for path in _files(space_dir) if path.relative_to(space_dir).as_posix() in ROOT_FILES]
    if not root_files:
        raise UploadRefused(f"{space_dir}: holds no files for the Space")
    operations = [_operation(space_dir, path) for path in root_files]
    for package in SPACE_CODE_PACKAGES:
        folder = space_dir if package == "space" else code_root / package
        operations += [
            FileOperation(
                path_in_repo=f"{package}/{path.relative_to(folder).as_posix()}",
                local_path=path,
                size=path.stat().st_size,
            )
            for path in _files(folder)
            if path.suffix in CODE_SUFFIXES
            and path not in root_files
            and not _excluded(f"{package}/{path.relative_to(folder).as_posix()}")
        ]
    plan = RepoPlan(
        repo_id=space_repo,
        repo_type="space",
        private=False,
        space_sdk=SPACE_SDK,
        commit_message=f"EarthVerse leaderboard for {version}",
        operations=operations,
    )
    hidden = [op.path_in_repo for op in plan.operations if Path(op.path_in_repo).name == GROUND_TRUTH_FILE]
    if hidden:
        raise UploadRefused(
            f"{space_dir}: holds ground truth ({', '.join(hidden)}); the Space reads it from the private repo"
        )
    return plan


def _check_space_values(release: Path, plan: RepoPlan) -> None:
    """The Space's code is public: refuse it when a file writes a task's hidden answer (named by file,
    line and task, never by value)."""
    values = HiddenValues.of_release(release)
    leaks = values.find({op.path_in_repo: op.local_path for op in plan.operations})
    if leaks:
        places = ", ".join(f"{leak.file}:{leak.line} ({leak.task_id})" for leak in leaks[:MAX_FINDINGS_SHOWN])
        raise UploadRefused(
            f"the Space's code writes {len(leaks)} hidden answer(s): {places}; nothing uploaded"
        )


def _check_space_passages(hidden: HiddenIndex, plan: RepoPlan) -> None:
    """Refuse the Space's code when a file copies a passage of a task's hidden text (named by file, task
    and kind, never by text)."""
    passages = copied_passages(hidden, {op.path_in_repo: op.local_path for op in plan.operations})
    if passages:
        places = ", ".join(
            f"{finding.file} ({finding.task_id}: {finding.printable})"
            for finding in passages[:MAX_FINDINGS_SHOWN]
        )
        raise UploadRefused(
            f"the Space's code copies {len(passages)} hidden passage(s): {places}; nothing uploaded"
        )


def _excluded(path_in_repo: str) -> bool:
    return any(path_in_repo.startswith(f"{folder}/") for folder in SPACE_CODE_EXCLUDED)


def _files(folder: Path) -> list[Path]:
    """The files to commit: hidden files, `__pycache__` and `.pyc` are local artefacts, never uploaded."""
    if not folder.is_dir():
        return []
    return [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.suffix != ".pyc"
        and not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(folder).parts)
    ]


def _operation(folder: Path, path: Path) -> FileOperation:
    return FileOperation(
        path_in_repo=path.relative_to(folder).as_posix(), local_path=path, size=path.stat().st_size
    )


def render_plan(plan: UploadPlan) -> str:
    """The plan as text: each repo with its type and visibility, then each file with its size."""
    lines = [f"Upload plan for {plan.release} (version {plan.version})"]
    for repo in plan.repos:
        visibility = "PRIVATE" if repo.private else "public"
        sdk = f", sdk {repo.space_sdk}" if repo.space_sdk else ""
        lines.append(
            f"\n{repo.repo_type} {repo.repo_id} ({visibility}{sdk}): "
            f"{len(repo.operations)} files, {_size(repo.total_bytes)}; commit {repo.commit_message!r}"
        )
        lines.extend(f"  {_size(op.size):>10}  {op.path_in_repo}" for op in repo.operations)
    return "\n".join(lines)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024**2:
        return f"{count / 1024:.1f} KB"
    return f"{count / 1024**2:.1f} MB"


def execute(plan: UploadPlan, token: str) -> list[str]:
    """Create the repos (exist_ok), then make one commit per repo; return the commit URLs.

    Each commit makes its repo hold exactly the planned files: what an earlier upload left there and
    this release no longer has is deleted in the same commit.

    Every repo is created and checked before the first commit: a private repo that already
    exists as public refuses the whole upload, with nothing committed anywhere.
    """
    api = HfApi(token=token)
    for repo in plan.repos:
        api.create_repo(
            repo.repo_id,
            repo_type=repo.repo_type,
            private=repo.private,
            space_sdk=repo.space_sdk,
            exist_ok=True,
        )
        if repo.private and not api.repo_info(repo.repo_id, repo_type=repo.repo_type).private:
            raise UploadRefused(f"{repo.repo_id} exists and is public; refusing to put ground truth there")
    urls = []
    for repo in plan.repos:
        operations: list[CommitOperationAdd | CommitOperationDelete] = [
            CommitOperationAdd(path_in_repo=op.path_in_repo, path_or_fileobj=str(op.local_path))
            for op in repo.operations
        ]
        planned = {op.path_in_repo for op in repo.operations} | KEPT_REMOTE_FILES
        operations += [
            CommitOperationDelete(path_in_repo=name)
            for name in api.list_repo_files(repo.repo_id, repo_type=repo.repo_type)
            if name not in planned
        ]
        commit = api.create_commit(
            repo.repo_id, operations, commit_message=repo.commit_message, repo_type=repo.repo_type
        )
        urls.append(commit.commit_url)
    return urls


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    token = os.environ.get(args.token_env)
    if not args.dry_run and not token:
        print(f"REFUSED: ${args.token_env} is not set (a Hub token with write access)", file=sys.stderr)
        return 2
    try:
        plan = plan_upload(args.release, args.public_repo, args.private_repo, args.space)
    except UploadRefused as refusal:
        _print_refusal(refusal)
        return 2
    print(render_plan(plan))
    if args.dry_run or not token:
        print("\n--dry-run: nothing uploaded.")
        return 0
    for url in execute(plan, token):
        print(f"committed: {url}")
    return 0


def _print_refusal(refusal: UploadRefused) -> None:
    print(f"REFUSED: {refusal}", file=sys.stderr)
    for finding in refusal.findings[:MAX_FINDINGS_SHOWN]:
        where = f"{finding.file} :: {finding.entry}" if finding.entry else finding.file
        print(
            f"  {finding.kind:<16} {finding.task_id or '-':<12} {where}: {finding.printable}", file=sys.stderr
        )
    if len(refusal.findings) > MAX_FINDINGS_SHOWN:
        print(f"  ... and {len(refusal.findings) - MAX_FINDINGS_SHOWN} more", file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--public-repo", required=True, help="public dataset repo, e.g. earthverse/core")
    parser.add_argument(
        "--private-repo", required=True, help="private ground-truth repo, e.g. earthverse/core-private"
    )
    parser.add_argument("--space", help="Space repo for the leaderboard, e.g. earthverse/leaderboard")
    parser.add_argument(
        "--release", type=Path, default=DEFAULT_RELEASE, help="built release folder (default: build)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan; touch no network")
    parser.add_argument("--token-env", default="HF_TOKEN", help="environment variable holding the Hub token")
    return parser


if __name__ == "__main__":
    sys.exit(main())
