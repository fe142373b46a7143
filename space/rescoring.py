"""The rescoring queue: deterministic rescoring first (answer units, diagnostics, cost), then the LLM judge.

Two worker threads, one per stage, so that a slow judge never delays the deterministic figures of
the next submission. At start every stored submission without its results is queued again: a
restart loses nothing. The deterministic worker first warms the scorer up (every task's units and
package file list), so that the first submission after a start does not wait for that work.
"""

from __future__ import annotations

import logging
import queue
import threading
from datetime import UTC, datetime

from evaluator.scoring.judge import AnswerJudge, NoJudge
from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import ScoredSubmission, Scorer
from space.records import PublicTaskScore, ResultRecord, ResultStage
from space.store import RecordExists, Store

log = logging.getLogger("earthverse.space.rescoring")
STOP = ""


class Rescorer:
    """Scores queued submissions against the hidden ground truth and stores the results."""

    def __init__(self, store: Store, scorer: Scorer, judge: AnswerJudge | None = None) -> None:
        self.store = store
        self.scorer = scorer
        self.judge = None if judge is None or isinstance(judge, NoJudge) else judge
        self._stages: dict[ResultStage, queue.Queue[str]] = {
            "deterministic": queue.Queue(),
            "judged": queue.Queue(),
        }
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()

    @property
    def judged(self) -> bool:
        return self.judge is not None

    def start(self) -> None:
        """Start the workers and queue every stored submission of this release version whose results are
        missing (one stored while the Space served another release is not scored against this one)."""
        for stage in self._stages:
            thread = threading.Thread(
                target=self._work, args=(stage,), name=f"rescoring-{stage}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        version = self.scorer.release.version
        for record in self.store.submissions():
            if not record.on_release(version):
                continue
            if self.store.result(record.receipt, "deterministic") is None:
                self.enqueue(record.receipt)
            elif self.judged and self.store.result(record.receipt, "judged") is None:
                self._stages["judged"].put(record.receipt)

    def enqueue(self, receipt: str) -> None:
        self._stages["deterministic"].put(receipt)

    def stop(self) -> None:
        self._stopping.set()
        for stage in self._stages.values():
            stage.put(STOP)
        for thread in self._threads:
            thread.join(timeout=30)

    def wait_idle(self) -> None:
        """Block until both queues are drained (benchmarks and shutdown)."""
        for stage in self._stages.values():
            stage.join()

    def _work(self, stage: ResultStage) -> None:
        pending = self._stages[stage]
        if stage == "deterministic":
            self._warm_up()
        while (receipt := pending.get()) != STOP:
            try:
                self._score(receipt, stage)
            except Exception as error:  # one bad submission must not stop the queue
                log.exception("rescoring %s (%s) failed", receipt[:12], stage)
                self.store.log(
                    "scoring_failed" if stage == "deterministic" else "judge_failed",
                    receipt,
                    "space",
                    type(error).__name__,
                )
            finally:
                pending.task_done()
        pending.task_done()

    def _warm_up(self) -> None:
        """The scorer's per-task work, done before the first submission; a failure leaves it to scoring."""
        try:
            self.scorer.warm_up(self._stopping.is_set)
        except Exception:  # the queue must run whatever the warm-up meets
            log.exception("warming the scorer up failed; the first submission will do that work")

    def _score(self, receipt: str, stage: ResultStage) -> None:
        if self.store.result(receipt, stage) is not None:
            return
        record = self.store.submission_record(receipt)
        if record is None:
            return
        submission = self.store.submission(receipt)
        judge = self.judge if stage == "judged" else None
        scored = self.scorer.score(submission, judge)
        try:
            self.store.add_result(result_record(receipt, stage, scored, self.scorer, submission.metadata))
        except RecordExists:
            return
        detail = f"{record.metadata.system_name!r}: {len(scored.problems)} problem(s)"
        self.store.log("scored" if stage == "deterministic" else "judged", receipt, record.user, detail)
        if stage == "deterministic" and self.judged:
            self._stages["judged"].put(receipt)


def result_record(
    receipt: str, stage: ResultStage, scored: ScoredSubmission, scorer: Scorer, metadata
) -> ResultRecord:
    """The stored result: the system's summary and each task's public score (no units, no criteria)."""
    system = summarize(scored.scores, scorer.release.tasks, scored.system_name)
    return ResultRecord(
        receipt=receipt,
        stage=stage,
        scored_at=datetime.now(UTC),
        judge_model=system.judge_model,
        system=system,
        harness=metadata.harness,
        model=metadata.model,
        organisation=metadata.organisation,
        tasks=[PublicTaskScore.of(score) for score in scored.scores],
        problems=scored.problems,
    )
