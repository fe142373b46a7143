"""The one import of litellm: offline-safe settings applied before litellm loads."""

from __future__ import annotations

import os

# litellm fetches its price table and other catalogs from the internet at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import litellm

litellm.suppress_debug_info = True

__all__ = ["litellm"]
