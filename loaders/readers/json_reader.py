"""JSON files: the parsed value, with the source text as the rendering."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from loaders.readers.encoding import decode_text
from loaders.readers.registry import Reading, Sample, register

# An object opening on a key or closing at once, or an array opening on a JSON value.
_JSON_START = re.compile(r'\{\s*["}]|\[\s*[-\[{"\]0-9tfn]')
_LISTED_KEYS = 50


def looks_like_json(sample: Sample) -> bool:
    return _JSON_START.match(sample.lead) is not None


@register("json", extensions=(".json", ".geojson"), sniff=looks_like_json)
def read_json(path: Path) -> Reading:
    """Parse a JSON file (BOM tolerated); `structure` is the value, `text` the source text."""
    decoded = decode_text(path.read_bytes())
    value = json.loads(decoded.text)
    return Reading(
        format="json",
        text=decoded.text,
        structure=value,
        metadata={**decoded.metadata(), **_shape(value)},
    )


def _shape(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"top_level": "object", "key_count": len(value), "keys": list(value)[:_LISTED_KEYS]}
    if isinstance(value, list):
        return {"top_level": "array", "length": len(value)}
    return {"top_level": type(value).__name__}
