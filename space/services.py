"""Everything the app serves from, built once at start: release, scorer, store, queue, intake, board."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.scoring.cost import price_table
from evaluator.scoring.judge import AnswerJudge, judge_from_option
from evaluator.scoring.pipeline import Scorer
from loaders.cache import default_cache_dir
from loaders.release import HiddenRecord, Release, ReleaseError, open_release, read_hidden_records
from space.board import BoardRow, board_rows
from space.config import Settings
from space.identity import IdentityResolver
from space.intake import Intake
from space.records import ResultRecord
from space.redaction import Redactor
from space.rescoring import Rescorer
from space.store import Store
from space.validation import UploadLimits


@dataclass
class Services:
    settings: Settings
    release: Release
    store: Store
    rescorer: Rescorer
    intake: Intake
    identity: IdentityResolver
    redactor: Redactor
    _board: tuple[int, list[BoardRow], list[ResultRecord]] | None = field(default=None, repr=False)
    _board_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def close(self) -> None:
        """Stop the rescoring workers and the redaction warm-up (tests and benchmarks end with this)."""
        self.rescorer.stop()
        self.redactor.close()

    def board(self) -> tuple[list[BoardRow], list[ResultRecord]]:
        """The leaderboard rows and the latest results of submissions run on this release version,
        rebuilt only when a result was added."""
        version = self.store.result_count()
        with self._board_lock:
            if self._board is None or self._board[0] != version:
                results = [result for result in self.store.latest_results() if self._on_this_release(result)]
                rows = board_rows(self.release.paper_leaderboard, results, self.rescorer.judged)
                self._board = (version, rows, results)
            return self._board[1], self._board[2]

    def _on_this_release(self, result: ResultRecord) -> bool:
        record = self.store.submission_record(result.receipt)
        return record is not None and record.on_release(self.release.version)


def open_sources(settings: Settings) -> tuple[Release, dict[str, HiddenRecord]]:
    """The public release and its hidden records (a repo id needs EARTHVERSE_PRIVATE_RELEASE)."""
    local = Path(settings.release).exists()
    if not local and settings.private_release is None:
        raise ReleaseError(
            f"EARTHVERSE_RELEASE={settings.release!r} is a Hub repo id: set EARTHVERSE_PRIVATE_RELEASE to "
            "the private ground-truth repo"
        )
    token = settings.hub_token or None
    release = open_release(settings.release, token=None if local else token)
    return release, read_hidden_records(settings.ground_truth_source, token=token)


def build_services(
    settings: Settings, judge: AnswerJudge | None = None, identity: IdentityResolver | None = None
) -> Services:
    """Open the release, build ONE scorer, open the store and start the rescoring queue."""
    release, records = open_sources(settings)
    hidden = {task_id: record.to_hidden() for task_id, record in records.items()}
    judge = judge or judge_from_option(
        settings.judge,
        cache_dir=settings.judge_cache or default_cache_dir() / "judge",
        api_base=settings.judge_api_base,
        api_key_env=settings.judge_api_key_env,
    )
    store = Store(settings.store)
    rescorer = Rescorer(store, Scorer(release, hidden), judge)
    limits = UploadLimits(
        max_bytes=settings.max_upload_bytes,
        max_files=settings.max_files,
        max_unpacked_bytes=settings.max_unpacked_bytes,
    )
    intake = Intake(
        store,
        release.version,
        {task.task_id for task in release.tasks},
        limits,
        settings.daily_limit,
        rescorer.enqueue,
        rescorer.judged,
    )
    price_table()  # seconds to load: at start, not in the first submission's rescoring
    rescorer.start()
    redactor = Redactor(release, records)
    redactor.warm_up()
    return Services(
        settings,
        release,
        store,
        rescorer,
        intake,
        identity or IdentityResolver(settings.local_user),
        redactor,
    )
