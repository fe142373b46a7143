"""The package-scoped tools an agent uses, their typed results and the registry that holds them."""

from evaluator.tools.base import OBSERVATION_CAP, Tool, ToolArguments, ToolError, ToolResult
from evaluator.tools.final_answer import EvidenceItem, FinalAnswerArguments
from evaluator.tools.registry import ToolRegistry, default_registry

__all__ = [
    "OBSERVATION_CAP",
    "EvidenceItem",
    "FinalAnswerArguments",
    "Tool",
    "ToolArguments",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "default_registry",
]
