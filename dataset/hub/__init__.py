"""The Hub folders of a release: `hub/public/` (dataset card, parquet configs, package archives,
checksums) and `hub/private/` (the ground truth), built from the canonical layout."""

from dataset.hub.build import HubError, HubSummary, build_hub

__all__ = ["HubError", "HubSummary", "build_hub"]
