"""scripts/upload.py: the plan for the real build, refusal on a leak, and a dry run without network."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import scripts.upload as upload
from dataset.hub import build_hub
from dataset.repository_leaks import HiddenValues
from loaders import layout
from scripts.upload import UploadRefused, plan_upload, render_plan
from tests.test_dataset_hub import copy_layout

PUBLIC, PRIVATE, SPACE = "earthverse/core", "earthverse/core-private", "earthverse/leaderboard"
REPOS = ["--public-repo", PUBLIC, "--private-repo", PRIVATE]


@pytest.fixture(scope="module")
def space_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("space")
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "app.py").write_text("import gradio\n", encoding="utf-8")
    (folder / "README.md").write_text("---\nsdk: gradio\n---\n", encoding="utf-8")
    (folder / "board.py").write_text("ROWS = []\n", encoding="utf-8")
    (folder / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0")
    return folder


@pytest.fixture(scope="module")
def plan(built_release: Path, space_dir: Path) -> upload.UploadPlan:
    return plan_upload(built_release, PUBLIC, PRIVATE, SPACE, space_dir=space_dir)


@pytest.fixture
def small_release(built_release: Path, tmp_path: Path) -> Path:
    out = copy_layout(built_release, tmp_path / "out", ("CSX-001", "CSX-003"))
    build_hub(out)
    return out


@pytest.fixture
def leaky_release(small_release: Path) -> Path:
    out = small_release
    solution = (layout.task_dir(out, "CSX-001", "CSX-001_Q1") / "solution_en.md").read_text(encoding="utf-8")
    card = out / "hub" / "public" / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\n" + solution, encoding="utf-8")
    return out


def test_the_plan_for_the_real_build_publishes_every_public_file_and_hides_the_ground_truth(
    built_release: Path, plan: upload.UploadPlan
) -> None:
    public, private, space = plan.repos
    assert (public.repo_id, public.repo_type, public.private) == (PUBLIC, "dataset", False)
    assert (private.repo_id, private.repo_type, private.private) == (PRIVATE, "dataset", True)
    assert (space.repo_id, space.repo_type, space.space_sdk) == (SPACE, "space", "gradio")
    folder = built_release / "hub" / "public"
    on_disk = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    assert {op.path_in_repo: op.size for op in public.operations} == on_disk
    assert len(public.operations) == 199 + 5  # archives; card, two tables, paper figures, checksums
    hidden = {*layout.HIDDEN_TASK_FILES, "ground_truth.parquet"}
    assert not {Path(op.path_in_repo).name for op in public.operations} & hidden
    assert [op.path_in_repo for op in private.operations] == ["README.md", "ground_truth.parquet"]
    space_files = [op.path_in_repo for op in space.operations]
    assert space_files[:3] == ["README.md", "app.py", "space/board.py"]
    assert "space/__pycache__/app.cpython-311.pyc" not in space_files and "space/app.py" not in space_files
    # The Space carries the project code it imports, and no data or hidden file.
    for module in ("loaders/release.py", "evaluator/scoring/pipeline.py", "dataset/leaks.py"):
        assert module in space_files
    assert all(Path(name).suffix in {".py", ".md"} for name in space_files)
    assert not {Path(name).name for name in space_files} & hidden  # not even the demo's own task files
    assert plan.version.startswith("ev-")


def test_the_rendered_plan_lists_repos_visibility_and_each_file_with_its_size(
    plan: upload.UploadPlan,
) -> None:
    text = render_plan(plan)
    assert f"dataset {PUBLIC} (public): 204 files" in text
    assert f"dataset {PRIVATE} (PRIVATE): 2 files" in text
    assert f"space {SPACE} (public, sdk gradio): {len(plan.repos[2].operations)} files" in text
    assert "packages/CSX-330.zip" in text and " ground_truth.parquet" in text


def test_a_planted_leak_refuses_the_plan(leaky_release: Path) -> None:
    with pytest.raises(UploadRefused, match="hidden file") as refusal:
        plan_upload(leaky_release, PUBLIC, PRIVATE)
    assert {(f.kind, f.task_id, f.file) for f in refusal.value.findings} >= {
        ("solution", "CSX-001_Q1", "README.md")
    }


def test_the_cli_refuses_a_leak_with_a_non_zero_exit_and_names_it(
    leaky_release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = upload.main([*REPOS, "--release", str(leaky_release), "--dry-run"])
    assert code == 2
    err = capsys.readouterr().err
    assert "REFUSED" in err and "solution" in err and "CSX-001_Q1" in err


def test_the_cli_names_a_leak_without_printing_the_hidden_text(
    leaky_release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UploadRefused) as refusal:
        plan_upload(leaky_release, PUBLIC, PRIVATE)
    quoted = [f.excerpt for f in refusal.value.findings if f.kind == "solution"]

    upload.main([*REPOS, "--release", str(leaky_release), "--dry-run"])

    err = capsys.readouterr().err
    assert quoted and all(excerpt not in err for excerpt in quoted)
    assert "hidden n-gram(s) of the task's solution" in err


def _append_line(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:300])


def _keep_one_task(path: Path) -> None:
    table = pq.read_table(path)
    pq.write_table(table.slice(0, 1), path)


@pytest.mark.parametrize(
    ("damage", "complaint"),
    [
        (
            lambda out: _append_line(out / "hub/public/README.md"),
            r"README\.md: sha256 .* does not match",
        ),
        (lambda out: (out / "hub/public/paper_leaderboard.json").unlink(), r"listed but absent: \['paper_"),
        (lambda out: _truncate(out / "hub/private/ground_truth.parquet"), "not a readable parquet file"),
        (lambda out: _keep_one_task(out / "hub/private/ground_truth.parquet"), "ground truth for 1 tasks"),
    ],
)
def test_a_hub_folder_that_readers_would_reject_is_not_uploaded(
    small_release: Path, damage: Callable[[Path], object], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    damage(small_release)

    with pytest.raises(UploadRefused, match=complaint):
        plan_upload(small_release, PUBLIC, PRIVATE)
    assert upload.main([*REPOS, "--release", str(small_release), "--dry-run"]) == 2
    assert "nothing uploaded" in capsys.readouterr().err


def test_same_public_and_private_repo_is_refused(built_release: Path) -> None:
    with pytest.raises(UploadRefused, match="same"):
        plan_upload(built_release, PUBLIC, PUBLIC)


def test_a_space_folder_without_files_is_refused(built_release: Path, tmp_path: Path) -> None:
    with pytest.raises(UploadRefused, match="no files for the Space"):
        plan_upload(built_release, PUBLIC, PRIVATE, SPACE, space_dir=tmp_path / "empty")


def _refusal_with_board_line(release: Path, space_dir: Path, tmp_path: Path, line: str) -> str:
    """Why the upload refuses the Space whose `board.py` has `line` as its second line."""
    leaky = tmp_path / "space"
    shutil.copytree(space_dir, leaky)
    (leaky / "board.py").write_text(f"ROWS = []\n{line}\n", encoding="utf-8")
    with pytest.raises(UploadRefused) as refusal:
        plan_upload(release, PUBLIC, PRIVATE, SPACE, space_dir=leaky)
    return str(refusal.value)


def test_space_code_writing_a_hidden_answer_is_refused_without_showing_it(
    small_release: Path, space_dir: Path, tmp_path: Path
) -> None:
    answer, task_id = next(iter(HiddenValues.of_release(small_release).numbers.items()))
    message = _refusal_with_board_line(small_release, space_dir, tmp_path, f"EXAMPLE = {answer!r}")
    assert f"space/board.py:2 ({task_id})" in message and "nothing uploaded" in message
    assert repr(answer) not in message


def test_space_code_copying_a_hidden_passage_is_refused_without_showing_it(
    small_release: Path, space_dir: Path, tmp_path: Path
) -> None:
    solution = (layout.task_dir(small_release, "CSX-001", "CSX-001_Q1") / "solution_en.md").read_text(
        encoding="utf-8"
    )
    paragraph = max(solution.split("\n\n"), key=len)
    message = _refusal_with_board_line(small_release, space_dir, tmp_path, f"HELP = {paragraph!r}")
    assert "space/board.py (CSX-001_Q1: " in message and "of the task's solution" in message
    assert paragraph[:40] not in message and "nothing uploaded" in message
    assert plan_upload(small_release, PUBLIC, PRIVATE, SPACE, space_dir=space_dir).repos[-1].repo_id == SPACE


def test_a_dry_run_prints_the_plan_and_touches_no_network(
    small_release: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run must not reach the Hub")

    monkeypatch.setattr(upload, "HfApi", no_network)
    code = upload.main([*REPOS, "--release", str(small_release), "--dry-run"])
    assert code == 0
    out = capsys.readouterr().out
    assert "Upload plan" in out and "nothing uploaded" in out


def test_a_real_run_without_a_token_is_refused(
    built_release: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EARTHVERSE_TEST_TOKEN", raising=False)
    code = upload.main([*REPOS, "--release", str(built_release), "--token-env", "EARTHVERSE_TEST_TOKEN"])
    assert code == 2
    assert "$EARTHVERSE_TEST_TOKEN is not set" in capsys.readouterr().err


class RecordingApi:
    """Records what `execute` asks of the Hub; `public_private_repo`: the private repo comes back public."""

    calls: list[tuple[str, str, object]]

    def __init__(
        self, token: str, public_private_repo: bool = False, remote: list[str] | None = None
    ) -> None:
        self.calls = []
        self.public_private_repo = public_private_repo
        self.remote = remote or [".gitattributes"]

    def list_repo_files(self, repo_id: str, repo_type: str) -> list[str]:
        return self.remote

    def create_repo(self, repo_id: str, **kwargs: object) -> None:
        self.calls.append(("create_repo", repo_id, kwargs))

    def repo_info(self, repo_id: str, repo_type: str) -> object:
        return type("Info", (), {"private": not self.public_private_repo})()

    def create_commit(self, repo_id: str, operations: list, **kwargs: object) -> object:
        self.calls.append(
            ("create_commit", repo_id, [(type(op).__name__, op.path_in_repo) for op in operations])
        )
        return type("Commit", (), {"commit_url": f"https://hub/{repo_id}/commit/1"})()


def test_execute_creates_each_repo_and_commits_exactly_the_planned_files(
    plan: upload.UploadPlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = RecordingApi("token")
    monkeypatch.setattr(upload, "HfApi", lambda token: api)
    urls = upload.execute(plan, "token")
    assert urls == [f"https://hub/{repo}/commit/1" for repo in (PUBLIC, PRIVATE, SPACE)]
    creates = [(repo, kwargs) for call, repo, kwargs in api.calls if call == "create_repo"]
    assert creates[1] == (
        PRIVATE,
        {"repo_type": "dataset", "private": True, "space_sdk": None, "exist_ok": True},
    )
    assert creates[2][1]["space_sdk"] == "gradio"
    commits = {repo: files for call, repo, files in api.calls if call == "create_commit"}
    assert commits[PUBLIC] == [("CommitOperationAdd", op.path_in_repo) for op in plan.repos[0].operations]
    assert commits[PRIVATE] == [
        ("CommitOperationAdd", "README.md"),
        ("CommitOperationAdd", "ground_truth.parquet"),
    ]


def test_execute_deletes_what_an_earlier_upload_left_and_this_plan_lacks(
    plan: upload.UploadPlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = RecordingApi("token", remote=[".gitattributes", "README.md", "packages/CSX-999.zip"])
    monkeypatch.setattr(upload, "HfApi", lambda token: api)

    upload.execute(plan, "token")

    commits = {repo: files for call, repo, files in api.calls if call == "create_commit"}
    assert [op for op in commits[PUBLIC] if op[0] == "CommitOperationDelete"] == [
        ("CommitOperationDelete", "packages/CSX-999.zip")
    ]
    assert [op for op in commits[PRIVATE] if op[0] == "CommitOperationDelete"] == [
        ("CommitOperationDelete", "packages/CSX-999.zip")
    ]


def test_execute_refuses_a_private_repo_that_exists_as_public(
    plan: upload.UploadPlan, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = RecordingApi("token", public_private_repo=True)
    monkeypatch.setattr(upload, "HfApi", lambda token: api)
    with pytest.raises(UploadRefused, match="exists and is public"):
        upload.execute(plan, "token")
    assert [call for call, _, _ in api.calls if call == "create_commit"] == []
