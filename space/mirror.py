"""Mirroring the store to a private Hub dataset repo: a Space's disk does not survive a restart.

At start the store is restored from the repo: every record it lacks is downloaded (records are
immutable, so a download never conflicts with a local one); while running, a CommitScheduler
uploads new records every few minutes.
Without EARTHVERSE_RESULTS_REPO both are no-ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from huggingface_hub import CommitScheduler, HfApi

from space.config import Settings

TEMPORARY_FILES = [".*", "**/.*"]


@dataclass
class Mirror:
    settings: Settings
    scheduler: CommitScheduler | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Mirror:
        return cls(settings)

    @property
    def enabled(self) -> bool:
        return bool(self.settings.results_repo)

    def restore(self) -> None:
        """Download every record of the results repo that the store lacks (nothing when not configured)."""
        if not self.enabled:
            return
        store = self.settings.store
        store.mkdir(parents=True, exist_ok=True)
        api = HfApi(endpoint=self.settings.hub_endpoint, token=self.settings.hub_token)
        info = api.dataset_info(self.settings.results_repo)
        for sibling in info.siblings or []:
            if not (store / sibling.rfilename).is_file():
                api.hf_hub_download(
                    self.settings.results_repo, sibling.rfilename, repo_type="dataset", local_dir=store
                )

    def start(self) -> None:
        """Commit new records to the results repo on a schedule (created private if missing)."""
        if not self.enabled:
            return
        self.scheduler = CommitScheduler(
            repo_id=self.settings.results_repo,
            repo_type="dataset",
            folder_path=self.settings.store,
            every=self.settings.mirror_every_minutes,
            private=True,
            token=self.settings.hub_token,
            ignore_patterns=TEMPORARY_FILES,
            hf_api=HfApi(endpoint=self.settings.hub_endpoint, token=self.settings.hub_token),
        )
