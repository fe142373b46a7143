"""Agreement of our deterministic answer-unit score U with the paper's judged `unit_accuracy`.

`agreement(records, runs)` scores every recorded run (tasks decomposed once), then reports n,
Pearson, Spearman and mean absolute error overall and per task type, and the runs where the two
disagree most, with their unit reports for inspection. Runs whose U is undefined (no scorable unit:
the judge alone decides them) are counted, not compared.

Where the paper's judge is clearly wrong we do not imitate it. The cases found while building the
scorer (task, system: what the judge did; what is right; paper U vs ours at the time of writing). They
name no ground-truth value: this file is public, and each case can be checked with `earthverse
agreement --worst` against the hidden ground truth.

- CSX-317_Q1, tencent-hy3: its rationale says the priority class was wrong, the priority index missing
  and three key metrics missing; the final answer states all five, each equal to the ground truth, and
  only the precipitation and one chain step are off (14.3 vs 80).
- CSX-075_Q2, qwen-3-7-plus: full marks (7/7), but `answer` is a prose paragraph that never states the
  ground truth's label, and none of the requested ledger rows nor `final_process_alignment_label` is
  there (100 vs 20).
- CSX-038_Q1, qwen-3-7-plus: the final answer is an unexecuted Python program whose "values" are
  expressions (`round(snow_cm_total, 4)`): nothing was answered (90 vs 0).
- CSX-006_Q1, minimax-m2-7: the final answer is a code cell (`{"code": "final_answer = {...}"}`)
  that never ran; the judge scores other code-cell answers 0 (CSX-013_Q2 glm-5-2, CSX-102_Q2
  claude-fable-5) (92.9 vs 0).
- CSX-101_Q2, gpt-5-6-sol: 27/30, though six of the nine requested surge-proof values (inverse
  barometer height and fraction, deepening, gradient and two ratios) differ from the ground truth
  beyond tolerance (90 vs 33).
- CSX-021_Q2, gemini-3-1-flash-lite: five of six requested numbers (duration ratio, minimum months,
  peak anomaly, coverage, days ratio) are wrong beyond tolerance (66.7 vs 9).
- CSX-263_Q1, claude-fable-5 and deepseek-v4-flash: indices defined on 0-100 given on 0-1
  (`rainfall_structure_index`, `heat_transport_index`, ...), a percent/fraction scale error, accepted
  (97.8 and 97.2 vs 78).
- CSX-219_Q2, kimi-k2-5: `moved_mass_mtons` and `mass_density_mtons_per_sqmi` given in tonnes where the
  task asks for megatonnes (a million times the value) accepted (95.8 vs 86).
- CSX-078_Q2, gpt-5-6-luna, geommagent and four more: both computed units (`evidence_score`,
  `max_evidence_score`) are off by one or more; the judge gives 27 to 77 for the prose (0 each).
- CSX-240_Q2, gpt-4o: nighttime minimum, wind and shelter index all off beyond tolerance, and a
  prose diagnosis sharing one word with the label (60 vs 0).
- CSX-140_Q2, qwen-3-7-plus: the six variable scores on a 0-10 scale where the task's are on 0-1,
  a scale error like percent for fraction (91 vs 53).
- CSX-129_Q1, qwen-3-7-plus: three of the five row outcomes reversed (85.7 vs 33.3).
- CSX-249_Q1, kimi-k2-5: all five component scores and the priority index off beyond tolerance, and
  none of the three impact-chain steps; only the label is right (71.4 vs 10).
- CSX-096_Q1, claude-fable-5: `core_metrics` are the task's value lists; the answer gives one flag or
  number for each, and none of the six rejected frames (90 vs 0).
- The other way, CSX-114_Q2, gpt-4o: peak hourly rain, gust and minimum pressure are right
  (found by value in its ledger), the labels wrong; the judge gives 18.75 (ours 60).

Beyond single runs the judge is lenient where U is strict by design: on the deep mechanism tasks
(`task_mode: deep_mechanism_diagnosis`) it scores the prose fields and passes computed ledgers whose
values differ from the ground truth, and it credits open-vocabulary labels that share little more than
a word with the ground truth or its acceptable variants (a free phrase naming the hazard for an authored
three- or four-word concept tag), which a deterministic scorer cannot decide.

What the paper calls unit accuracy is not a separate count of units: over the 1,591 runs it agrees with
the same judge's holistic answer score at Pearson 0.998 (MAE 0.9) and with its 20-point process rubric
at 0.982 (MAE 3.5), so the target asks a unit-by-unit scorer to reproduce one holistic judgement. The
report carries that reference (`paper_holistic`) beside our figures so it can be checked on any set of
runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, Field

from evaluator.scoring.answer import AnswerUnitReport, score_units, task_units
from evaluator.scoring.submission import submitted_answer
from evaluator.scoring.units import Unit
from evaluator.traces.recorded import read_recorded_trace

WORST_RUNS = 20


class TaskRecord(Protocol):
    """What agreement needs of a task: its id, type, prompt and hidden ground truth (a source record)."""

    task_id: str
    task_type: str
    question: str
    ground_truth: dict[str, Any]


class RecordedRun(BaseModel):
    """One recorded run: which task and system, the submitted final answer, and the paper's U."""

    task_id: str
    system_id: str
    final_answer: Any = None
    paper_unit_accuracy: float = Field(ge=0, le=100)
    paper_answer_score: float | None = Field(
        default=None, ge=0, le=100, description="The same judge's holistic answer score H of the run."
    )


class Figures(BaseModel):
    """Agreement figures over a set of runs (None where undefined: fewer than two runs, or no spread)."""

    n: int
    pearson: float | None = None
    spearman: float | None = None
    mae: float | None = None
    mean_ours: float | None = None
    mean_paper: float | None = None


class RunComparison(BaseModel):
    """Our U and the paper's for one run (and the paper's holistic H, where recorded), with our units."""

    task_id: str
    system_id: str
    ours: float | None
    paper: float
    paper_holistic: float | None = None
    difference: float | None
    report: AnswerUnitReport


class AgreementReport(BaseModel):
    """Agreement overall and per task type, the runs U leaves to the judge, and the worst disagreements."""

    overall: Figures
    by_task_type: dict[str, Figures]
    paper_holistic: Figures = Field(
        description="Reference, not ours: the paper's unit accuracy (second) against its own holistic "
        "answer score (first), over the compared runs that carry one."
    )
    judge_only: int = Field(ge=0, description="Runs without a scorable unit (U undefined), not compared.")
    unknown_tasks: list[str] = Field(default_factory=list, description="Run task ids with no task record.")
    worst: list[RunComparison]


def agreement(
    records: Sequence[TaskRecord],
    runs: Iterable[RecordedRun | tuple[str, str, Any, float]],
    worst: int = WORST_RUNS,
) -> AgreementReport:
    """Score every run and compare our U with the paper's `unit_accuracy`, run by run.

    `runs` are RecordedRun models or (task_id, system_id, final_answer, paper_unit_accuracy) tuples;
    a run of a task not in `records` is listed in `unknown_tasks` and skipped."""
    tasks = {record.task_id: record for record in records}
    units: dict[str, list[Unit]] = {}
    compared: list[tuple[str, RunComparison]] = []
    unknown: set[str] = set()
    for run in map(_recorded, runs):
        record = tasks.get(run.task_id)
        if record is None:
            unknown.add(run.task_id)
            continue
        if run.task_id not in units:
            units[run.task_id] = task_units(record.ground_truth, record.question)
        report = score_units(units[run.task_id], run.final_answer, record.question)
        compared.append((record.task_type, _comparison(run, report)))
    return _report(compared, sorted(unknown), worst)


def read_recorded_runs(trajectories: Path) -> list[RecordedRun]:
    """The paper's recorded runs under `trajectories/<model_id>/<task_id>.json`, in path order, read
    through the trace converter: each run's submitted answer and the paper's unit accuracy."""
    runs = []
    for path in sorted(Path(trajectories).glob("*/CSX-*.json")):
        trace = read_recorded_trace(path)
        if trace.recorded is None or trace.recorded.unit_accuracy is None:
            raise ValueError(f"{path}: has no recorded unit_accuracy to compare with")
        runs.append(
            RecordedRun(
                task_id=trace.task_id,
                system_id=trace.system.system_id,
                final_answer=submitted_answer(trace.final_answer),
                paper_unit_accuracy=trace.recorded.unit_accuracy,
                paper_answer_score=trace.recorded.answer,
            )
        )
    return runs


def figures(pairs: Sequence[tuple[float, float]]) -> Figures:
    """n, Pearson, Spearman, MAE and means of (ours, paper) pairs."""
    from scipy import stats  # a second to import: only here, not for every command of the CLI

    if not pairs:
        return Figures(n=0)
    ours = np.array([pair[0] for pair in pairs], dtype=float)
    paper = np.array([pair[1] for pair in pairs], dtype=float)
    spread = len(pairs) >= 2 and ours.std() > 0 and paper.std() > 0
    return Figures(
        n=len(pairs),
        pearson=_finite(stats.pearsonr(ours, paper)[0]) if spread else None,
        spearman=_finite(stats.spearmanr(ours, paper)[0]) if spread else None,
        mae=float(np.abs(ours - paper).mean()),
        mean_ours=float(ours.mean()),
        mean_paper=float(paper.mean()),
    )


def _recorded(run: RecordedRun | tuple[str, str, Any, float]) -> RecordedRun:
    if isinstance(run, RecordedRun):
        return run
    task_id, system_id, final_answer, paper = run
    return RecordedRun(
        task_id=task_id, system_id=system_id, final_answer=final_answer, paper_unit_accuracy=paper
    )


def _comparison(run: RecordedRun, report: AnswerUnitReport) -> RunComparison:
    difference = None if report.u is None else report.u - run.paper_unit_accuracy
    return RunComparison(
        task_id=run.task_id,
        system_id=run.system_id,
        ours=report.u,
        paper=run.paper_unit_accuracy,
        paper_holistic=run.paper_answer_score,
        difference=difference,
        report=report,
    )


def _report(compared: list[tuple[str, RunComparison]], unknown: list[str], worst: int) -> AgreementReport:
    scored = [(task_type, run) for task_type, run in compared if run.ours is not None]
    by_type: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for task_type, run in scored:
        by_type[task_type].append((float(run.ours or 0.0), run.paper))
    ranked = sorted((run for _, run in scored), key=lambda run: -abs(run.difference or 0.0))
    return AgreementReport(
        overall=figures([(float(run.ours or 0.0), run.paper) for _, run in scored]),
        by_task_type={task_type: figures(pairs) for task_type, pairs in sorted(by_type.items())},
        paper_holistic=figures(
            [(run.paper_holistic, run.paper) for _, run in scored if run.paper_holistic is not None]
        ),
        judge_only=len(compared) - len(scored),
        unknown_tasks=unknown,
        worst=ranked[:worst],
    )


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
