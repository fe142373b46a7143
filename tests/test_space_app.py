"""The Space's pieces on real data: leaderboard rows, views, upload validation, intake, rescoring, restart."""

from __future__ import annotations

import io
import json
import re
import threading
import time
import zipfile
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest

from evaluator.scoring.cost import price_table
from evaluator.scoring.judge import Judge
from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import Scorer
from evaluator.scoring.scores import Interval
from evaluator.traces.io import read_submission
from evaluator.traces.schema import Submission, Trace
from loaders.release import open_ground_truth, open_release
from space import capability_view, cost_view, leaderboard_view
from space.board import BoardRow, board_rows, tied_ranks
from space.identity import IdentityResolver
from space.records import SubmissionRecord
from space.rescoring import Rescorer, result_record
from space.services import build_services
from space.store import RecordExists, Store, create_once
from space.validation import MetadataForm, UploadLimits, UploadRejected, parse_upload
from tests.openai_standin import OpenAIStandin, Reply
from tests.space_browser import local_settings, renamed, write_jsonl

TASK_ID = re.compile(r"CSX-\d{3}_Q\d+")
LIMITS = UploadLimits(max_bytes=50 * 1024**2, max_files=1000, max_unpacked_bytes=200 * 1024**2)


@pytest.fixture(scope="module")
def release(built_release: Path):
    return open_release(built_release)


@pytest.fixture(scope="module")
def gpt4o(imported_runs: Path) -> Submission:
    return read_submission(imported_runs / "gpt-4o" / "submission.jsonl")


@pytest.fixture(scope="module")
def luna(imported_runs: Path) -> Submission:
    return read_submission(imported_runs / "gpt-5-6-luna" / "submission.jsonl")


@pytest.fixture(scope="module")
def scored_space(built_release: Path, tmp_path_factory, gpt4o: Submission, luna: Submission):
    """A store holding two rescored submissions (queue drained), and the services over it."""
    store = tmp_path_factory.mktemp("store")
    folder = tmp_path_factory.mktemp("uploads")
    services = build_services(local_settings(built_release, store))
    for submission in (gpt4o, luna):
        path = write_jsonl(folder / f"{submission.metadata.system_id}.jsonl", submission)
        assert services.intake.submit(path, path.name, "tester").status == "queued"
    services.rescorer.wait_idle()
    yield services
    services.close()


def test_the_leaderboard_has_the_25_paper_rows_and_the_rescored_ones(scored_space) -> None:
    rows, results = scored_space.board()
    paper = [row for row in rows if row.source == "paper-reported"]
    rescored = [row for row in rows if row.source == "rescored"]
    assert len(paper) == 25 and [row.rank for row in paper] == [str(rank) for rank in range(1, 26)]
    assert paper[0].system == "Claude Fable 5" and paper[0].core == 84.97 and paper[0].interval is None
    assert {row.system for row in rescored} == {"GPT-4o", "GPT-5.6 Luna"} and len(results) == 2
    assert all(row.judge == "judge-free (U only)" and row.interval is not None for row in rescored)
    frame = leaderboard_view.leaderboard_frame(leaderboard_view.filtered(rows))
    assert list(frame.columns)[:5] == ["rank", "source", "system", "harness", "family"]
    assert frame.iloc[0]["system"] == "Claude Fable 5"


def test_rescored_figures_equal_scorer_and_summarize_on_the_same_traces(
    scored_space, built_release: Path, gpt4o: Submission
) -> None:
    release = open_release(built_release)
    expected = summarize(
        Scorer(release, open_ground_truth(built_release)).score(gpt4o).scores, release.tasks, "GPT-4o"
    )
    _, results = scored_space.board()
    stored = next(result for result in results if result.system.system_name == "GPT-4o")
    assert stored.system == expected
    assert stored.system.cost_source == "recomputed" and stored.system.cost_usd == expected.cost_usd


def test_filters_and_search_narrow_the_rows(scored_space) -> None:
    rows, _ = scored_space.board()
    assert {row.source for row in leaderboard_view.filtered(rows, source="rescored")} == {"rescored"}
    gpt = leaderboard_view.filtered(rows, family="GPT")
    assert gpt and {row.family for row in gpt} == {"GPT"}
    assert [row.system for row in leaderboard_view.filtered(rows, query="fable")] == ["Claude Fable 5"]
    assert "paper harness" in leaderboard_view.choices(rows, "harness")


def test_overlapping_intervals_share_a_rank(scored_space) -> None:
    _, results = scored_space.board()
    base = board_rows(None, results[:1], judged=False)[0]

    def row(name: str, score: float, low: float, high: float) -> BoardRow:
        interval = Interval(low=low, high=high)
        return base.model_copy(update={"system": name, "unit_accuracy": score, "interval": interval})

    ranked = tied_ranks([row("A", 55, 50, 60), row("B", 60, 55, 65), row("C", 15, 10, 20)])
    assert [(r.system, r.rank) for r in ranked] == [("B", "=1"), ("A", "=1"), ("C", "3")]
    gpt4o, luna = (
        next(r for r in board_rows(None, results, False) if r.system == n) for n in ("GPT-4o", "GPT-5.6 Luna")
    )
    overlap = gpt4o.interval.low <= luna.interval.high and luna.interval.low <= gpt4o.interval.high
    assert (gpt4o.rank == luna.rank) == overlap


def test_capability_views_and_heatmaps(scored_space) -> None:
    rows, _ = scored_space.board()
    frame = capability_view.breakdown_frame(rows, "by_capability")
    assert len(frame) == 27 and "remote_sensing_geospatial" in frame.columns
    hazard = capability_view.breakdown_frame(rows, "by_hazard_family")
    assert set(hazard["source"]) == {"rescored"}  # the paper reports no hazard breakdown
    figure = capability_view.heatmap(frame, "Core by capability")
    assert len(figure.data[0].y) == 27 and figure.data[0].zmax == 100


def test_cost_view_never_plots_unpriced_systems_and_draws_the_frontier(scored_space) -> None:
    rows, _ = scored_space.board()
    priced = cost_view.plotted(rows, "cost")
    assert [row.system for row in priced] == ["GPT-4o"]  # the only model the price table knows
    unpriced = cost_view.unpriced_frame(rows)
    listed = set(zip(unpriced["system"], unpriced["source"], strict=True))
    assert ("GPT-5.6 Luna", "rescored") in listed and ("GPT-4o", "rescored") not in listed
    assert ("GPT-4o", "paper-reported") in listed  # the paper reports no cost
    tokens = cost_view.plotted(rows, "tokens")
    frontier = cost_view.pareto_frontier(rows, "tokens")
    assert len(tokens) == 27 and frontier
    assert all(later.score > earlier.score for earlier, later in pairwise(frontier))
    figure = cost_view.cost_figure(rows, "cost")
    assert all(x > 0 for trace in figure.data for x in (trace.x or ()))


def test_names_are_escaped_in_figures(scored_space) -> None:
    rows, _ = scored_space.board()
    hostile = rows[0].model_copy(update={"system": "<img src=x onerror=alert(1)>"})
    frame = capability_view.breakdown_frame([hostile], "by_capability")
    labels = capability_view.heatmap(frame, "t").data[0].y
    assert labels[0].startswith("&lt;img") and "<img" not in labels[0]


def _zip(entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_of_trace_files_reads_like_the_jsonl(gpt4o: Submission) -> None:
    traces = {f"run/{t.task_id}.json": t.model_dump_json().encode() for t in gpt4o.traces[:3]}
    data = _zip({"run/metadata.json": gpt4o.metadata.model_dump_json().encode(), **traces})
    submission = parse_upload(data, "runs.zip", LIMITS, MetadataForm())
    assert [trace.task_id for trace in submission.traces] == sorted(t.task_id for t in gpt4o.traces[:3])
    assert all(trace.recorded is None for trace in submission.traces)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"../evil.json": b"{}"}, "'..' component"),
        ({"/abs/metadata.json": b"{}"}, "absolute path"),
        ({"bomb.jsonl": b"0" * 5_000_000}, "zip bomb"),
        ({f"CSX-001_Q{i}.json": b"{}" for i in range(12)}, "more than the limit of 10"),
        ({"a.txt": b"x"}, "one metadata.json"),
    ],
)
def test_unsafe_or_unusable_archives_are_refused(entries: dict[str, bytes], message: str) -> None:
    limits = LIMITS.model_copy(update={"max_files": 10})
    with pytest.raises(UploadRejected, match=message):
        parse_upload(_zip(entries), "upload.zip", limits, MetadataForm())


def test_malformed_jsonl_names_the_file_and_line(gpt4o: Submission) -> None:
    header = json.dumps({"metadata": gpt4o.metadata.model_dump(mode="json")})
    data = f'{header}\n{gpt4o.traces[0].model_dump_json()}\n{{"task_id": "CSX-001_Q1"}}\n'.encode()
    with pytest.raises(UploadRejected, match=r"upload\.jsonl:3: not a valid Trace"):
        parse_upload(data, "upload.jsonl", LIMITS, MetadataForm())
    duplicated = f"{header}\n{gpt4o.traces[0].model_dump_json()}\n{gpt4o.traces[0].model_dump_json()}\n"
    with pytest.raises(UploadRejected, match="duplicated task ids"):
        parse_upload(duplicated.encode(), "upload.jsonl", LIMITS, MetadataForm())


def test_the_form_overrides_the_header_metadata(gpt4o: Submission) -> None:
    data = write_bytes(gpt4o)
    submission = parse_upload(data, "s.jsonl", LIMITS, MetadataForm(system_name="Renamed", harness="h1"))
    assert (submission.metadata.system_name, submission.metadata.harness) == ("Renamed", "h1")


def write_bytes(submission: Submission) -> bytes:
    lines = [json.dumps({"metadata": submission.metadata.model_dump(mode="json")})]
    lines += [trace.model_dump_json() for trace in submission.traces]
    return ("\n".join(lines) + "\n").encode()


def test_intake_rejects_with_reasons_and_logs_every_decision(
    built_release: Path, tmp_path: Path, gpt4o: Submission
) -> None:
    services = build_services(local_settings(built_release, tmp_path / "store", daily_limit=2))
    try:
        intake = services.intake
        first = write_jsonl(tmp_path / "a.jsonl", gpt4o)
        assert intake.submit(first, "a.jsonl", None).message.startswith("Sign in")
        accepted = intake.submit(first, "a.jsonl", "alice")
        assert accepted.status == "queued" and len(accepted.receipt) == 64
        again = intake.submit(first, "a.jsonl", "alice")
        assert again.receipt == accepted.receipt and again.message.startswith("Already received")
        same_name = write_jsonl(tmp_path / "b.jsonl", renamed(gpt4o, "other-id", "GPT-4o"))
        assert (
            "already submitted a system named 'GPT-4o'"
            in intake.submit(same_name, "b.jsonl", "alice").message
        )
        assert "taken by another submitter" in intake.submit(same_name, "b.jsonl", "bob").message
        second = write_jsonl(tmp_path / "c.jsonl", renamed(gpt4o, "c", "System C"))
        assert intake.submit(second, "c.jsonl", "alice").status == "queued"
        third = write_jsonl(tmp_path / "d.jsonl", renamed(gpt4o, "d", "System D"))
        limited = intake.submit(third, "d.jsonl", "alice")
        assert limited.status == "rejected" and "Daily limit" in limited.message
        unknown = gpt4o.model_copy(
            update={
                "traces": [
                    gpt4o.traces[0].model_copy(update={"task_id": "CSX-999_Q1", "event_id": "CSX-999"})
                ]
            }
        )
        refused = intake.submit(write_jsonl(tmp_path / "e.jsonl", unknown), "e.jsonl", "carol")
        assert refused.message == "e.jsonl: 1 task id(s) not in this release: CSX-999_Q1"
        services.rescorer.wait_idle()
        decisions = [(entry.decision, entry.user) for entry in services.store.log_entries()]
        assert decisions.count(("rejected", "alice")) == 2 and ("duplicate", "alice") in decisions
        assert {("rejected", "anonymous"), ("rejected", "bob"), ("rejected", "carol")} <= set(decisions)
        assert decisions.count(("accepted", "alice")) == 2 and decisions.count(("scored", "alice")) == 2
        status = services.intake.submit(first, "a.jsonl", "alice")
        assert status.status == "published"
    finally:
        services.close()


def _jsonl(metadata: dict, traces: list[Trace]) -> bytes:
    """Submission lines written as a submitter might, without the checks of `Submission`."""
    lines = [json.dumps({"metadata": metadata}), *(trace.model_dump_json() for trace in traces)]
    return ("\n".join(lines) + "\n").encode()


def test_a_submission_of_another_release_version_is_refused_and_nothing_of_it_is_stored(
    built_release: Path, tmp_path: Path, gpt4o: Submission, release
) -> None:
    old = "ev-0123456789abcdef"
    metadata = gpt4o.metadata.model_dump(mode="json")
    traces = gpt4o.traces[:3]
    uploads = {
        "old.jsonl": _jsonl(
            {**metadata, "dataset_version": old},
            [trace.model_copy(update={"dataset_version": old}) for trace in traces],
        ),
        "mixed.jsonl": _jsonl(metadata, [traces[0].model_copy(update={"dataset_version": old}), *traces[1:]]),
        "unversioned.jsonl": _jsonl(
            {key: value for key, value in metadata.items() if key != "dataset_version"}, traces
        ),
    }
    expected = {
        "old.jsonl": f"old.jsonl: 'gpt-4o' ran on dataset version {old!r}, not on this release's "
        f"{release.version!r}; run it on this release and submit that run",
        "mixed.jsonl": "mixed.jsonl: not a valid submission: (top level): traces of another dataset version "
        f"than the metadata's {release.version!r}: {traces[0].task_id} ({old!r})",
        "unversioned.jsonl": "unversioned.jsonl:1: not a valid SubmissionHeader: "
        "metadata.dataset_version: Field required",
    }
    services = build_services(local_settings(built_release, tmp_path / "store"))
    try:
        for name, data in uploads.items():
            (tmp_path / name).write_bytes(data)
            status = services.intake.submit(tmp_path / name, name, "alice")
            assert (status.status, status.message) == ("rejected", expected[name])
        services.rescorer.wait_idle()
        assert services.store.submissions() == [] and services.store.latest_results() == []
        assert not any((tmp_path / "store" / "submissions").iterdir())
    finally:
        services.close()


def test_a_store_kept_from_another_release_ranks_none_of_its_runs_and_frees_their_names(
    built_release: Path, tmp_path: Path, luna: Submission, release
) -> None:
    old = "ev-0123456789abcdef"
    settings = local_settings(built_release, tmp_path / "store")
    store = Store(settings.store)
    earlier = luna.model_copy(
        update={
            "metadata": luna.metadata.model_copy(update={"dataset_version": old}),
            "traces": [trace.model_copy(update={"dataset_version": old}) for trace in luna.traces],
        }
    )
    scorer = Scorer(release, open_ground_truth(built_release))
    ranked_before, never_scored = "a" * 64, "b" * 64
    for receipt in (ranked_before, never_scored):
        record = SubmissionRecord(
            receipt=receipt,
            user="tester",
            received_at=datetime.now(UTC),
            filename="luna.jsonl",
            size_bytes=1,
            metadata=earlier.metadata,
            traces=len(earlier.traces),
        )
        store.accept(record, earlier)
    store.add_result(
        result_record(ranked_before, "deterministic", scorer.score(earlier), scorer, earlier.metadata)
    )

    services = build_services(settings)
    try:
        services.rescorer.wait_idle()
        assert services.store.result(never_scored, "deterministic") is None
        assert [row for row in services.board()[0] if row.source == "rescored"] == []
        for receipt in (ranked_before, never_scored):
            status = services.intake.status(receipt)
            assert status.status == "rejected"
            assert status.message == (
                f"'gpt-5-6-luna' ran on dataset version {old!r}, not on this release's {release.version!r}: "
                "it is not ranked on this leaderboard."
            )
        path = write_jsonl(tmp_path / "luna.jsonl", luna)
        assert services.intake.submit(path, path.name, "tester").status == "queued"
        services.rescorer.wait_idle()
        assert [row.system for row in services.board()[0] if row.source == "rescored"] == ["GPT-5.6 Luna"]
    finally:
        services.close()


def test_records_are_written_once(tmp_path: Path) -> None:
    create_once(tmp_path / "r.json", "{}")
    with pytest.raises(RecordExists):
        create_once(tmp_path / "r.json", "{}")
    assert [path.name for path in tmp_path.iterdir()] == ["r.json"]


def test_a_restart_on_the_same_store_loses_nothing(
    built_release: Path, tmp_path: Path, luna: Submission
) -> None:
    settings = local_settings(built_release, tmp_path / "store")
    first = build_services(settings)
    path = write_jsonl(tmp_path / "luna.jsonl", luna)
    receipt = first.intake.submit(path, path.name, "tester").receipt
    first.close()  # stopped before (or while) scoring: the restart must finish the job
    second = build_services(settings)
    try:
        second.rescorer.wait_idle()
        rows, _ = second.board()
        assert [row.system for row in rows if row.source == "rescored"] == ["GPT-5.6 Luna"]
        assert len(Store(settings.store).submissions()) == 1 and receipt
    finally:
        second.close()


def test_the_price_table_loads_at_start_not_in_the_first_rescoring(
    built_release: Path, tmp_path: Path
) -> None:
    price_table.cache_clear()
    services = build_services(local_settings(built_release, tmp_path / "store"))
    try:
        assert price_table.cache_info().currsize == 1
    finally:
        services.close()


class WarmUpScorer:
    """A scorer stand-in whose warm-up waits to be stopped, or fails at once when `fails`."""

    def __init__(self, release, fails: bool = False) -> None:
        self.release = release
        self.fails = fails
        self.started = threading.Event()
        self.stopped_by: list[bool] = []

    def warm_up(self, stopping) -> None:
        self.started.set()
        if self.fails:
            raise RuntimeError("warm-up failed")
        while not stopping():
            time.sleep(0.01)
        self.stopped_by.append(stopping())


def test_the_rescorer_warms_its_scorer_up_at_start_and_stop_cuts_the_warm_up_short(
    release, tmp_path: Path
) -> None:
    scorer = WarmUpScorer(release)
    rescorer = Rescorer(Store(tmp_path / "store"), scorer)
    rescorer.start()
    assert scorer.started.wait(timeout=30)
    rescorer.stop()
    assert scorer.stopped_by == [True]


def test_a_failed_warm_up_leaves_the_queue_running(release, tmp_path: Path) -> None:
    rescorer = Rescorer(Store(tmp_path / "store"), WarmUpScorer(release, fails=True))
    rescorer.start()
    rescorer.enqueue("0" * 64)  # no such submission: taken off the queue and dropped
    drained = threading.Thread(target=rescorer.wait_idle, daemon=True)
    drained.start()
    drained.join(timeout=30)
    rescorer.stop()
    assert not drained.is_alive()


def test_api_callers_are_identified_by_their_hub_token() -> None:
    class Request:
        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    known = {"hf_good": {"name": "alice"}}

    def whoami(token: str) -> dict[str, str]:
        if token not in known:
            raise PermissionError("invalid token")
        return known[token]

    resolver = IdentityResolver(None, whoami)
    assert resolver.user(None, Request({"authorization": "Bearer hf_good"})) == "alice"
    assert resolver.user(None, Request({"authorization": "Bearer hf_bad"})) is None
    assert resolver.user(None, Request({})) is None
    assert IdentityResolver("dev", whoami).user(None, Request({})) == "dev"


def test_the_judge_runs_after_the_deterministic_rescoring_and_rows_show_it_pending(
    built_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imported_runs: Path
) -> None:
    hidden = open_ground_truth(built_release)
    release_gate = threading.Event()

    def responder(request: dict) -> Reply:
        release_gate.wait(timeout=60)
        prompt = json.dumps(request["messages"])
        rubric = hidden[TASK_ID.search(prompt).group(0)].ground_truth.rubric
        criteria = [{"name": c.name, "points": c.points, "rationale": "ok"} for c in rubric.criteria]
        return Reply(json.dumps({"answer_score": 80.0, "criteria": criteria, "critical_errors": []}))

    monkeypatch.setenv("EARTHVERSE_TEST_JUDGE_KEY", "test-key")
    # Every task needs a verdict for Core (a task not run has none), so the runs cover all 405 tasks.
    runs = read_submission(imported_runs / "geommagent" / "submission.jsonl")
    tasks = open_release(built_release).tasks
    small = Submission(
        metadata=runs.metadata,
        traces=[
            runs.traces[index % len(runs.traces)].model_copy(
                update={"task_id": task.task_id, "event_id": task.event_id}
            )
            for index, task in enumerate(tasks)
        ],
    )
    with OpenAIStandin(responder=responder) as api:
        judge = Judge(
            "openai/standin-judge",
            cache_dir=tmp_path / "verdicts",
            api_base=api.url,
            api_key_env="EARTHVERSE_TEST_JUDGE_KEY",
            timeout_s=90,
        )
        services = build_services(local_settings(built_release, tmp_path / "store"), judge=judge)
        try:
            path = write_jsonl(tmp_path / "small.jsonl", small)
            receipt = services.intake.submit(path, path.name, "tester").receipt
            deadline = time.monotonic() + 60
            while services.store.result(receipt, "deterministic") is None and time.monotonic() < deadline:
                time.sleep(0.1)
            row = next(row for row in services.board()[0] if row.source == "rescored")
            assert row.judge == "judge pending" and row.core is None
            assert services.intake.status(receipt).status == "scored"
            release_gate.set()
            services.rescorer.wait_idle()
            row = next(row for row in services.board()[0] if row.source == "rescored")
            assert row.judge == "openai/standin-judge" and row.core is not None and row.process is not None
            assert services.intake.status(receipt).status == "published"
        finally:
            release_gate.set()
            services.close()
