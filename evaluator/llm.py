"""The one import of litellm: offline-safe settings applied before litellm loads."""

from __future__ import annotations

import importlib.metadata
import os

# litellm fetches its price table and other catalogs from the internet at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import litellm

litellm.suppress_debug_info = True

LITELLM_VERSION = importlib.metadata.version("litellm")
PRICE_TABLE = f"litellm {LITELLM_VERSION} bundled model cost map"
"""Which dated price table costs are recomputed with (the bundled map of this litellm release)."""

__all__ = ["LITELLM_VERSION", "PRICE_TABLE", "litellm"]
