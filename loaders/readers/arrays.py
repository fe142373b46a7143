"""Array helpers shared by the gridded-data readers: NaN-aware statistics and JSON-safe values."""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_LISTED_VALUES = 20
"""Array-valued attributes longer than this are summarised by their length."""


def numeric_stats(values: np.ndarray) -> dict[str, Any]:
    """min/max/mean over the finite values of a numeric or datetime array, and how many there were."""
    data = np.asarray(values)
    if np.issubdtype(data.dtype, np.datetime64):
        valid = data[~np.isnat(data)]
        if valid.size == 0:
            return {"valid_count": 0}
        return {"min": str(valid.min()), "max": str(valid.max()), "valid_count": int(valid.size)}
    if not np.issubdtype(data.dtype, np.number) or np.issubdtype(data.dtype, np.complexfloating):
        return {}
    floats = data.astype("float64", copy=False)
    valid = floats[np.isfinite(floats)]
    if valid.size == 0:
        return {"valid_count": 0}
    return {
        "min": float(valid.min()),
        "max": float(valid.max()),
        "mean": float(valid.mean()),
        "valid_count": int(valid.size),
    }


def plain(value: Any) -> Any:
    """An attribute value as plain Python (numpy scalars and short arrays unpacked, bytes decoded)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.size > MAX_LISTED_VALUES:
            return f"<array of {value.size} values>"
        return [plain(item) for item in value.tolist()]
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value
