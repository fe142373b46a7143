"""Scoring: answer units (units, tolerances, prompt, submission, alignment, matching, answer), their
agreement with the paper's judge (agreement), the LLM judge, diagnostics, metrics and the pipeline.

The deterministic answer-unit score of one answer is `evaluator.scoring.answer.score_answer`.
"""
