"""The Space's configuration, read from the environment once at start (see `Settings`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_RELEASE = "earthverse/core"
DEFAULT_STORE = Path("space-store")


class Settings(BaseSettings):
    """Every EARTHVERSE_* variable the Space reads; a bad value stops the start with its name."""

    model_config = SettingsConfigDict(env_prefix="EARTHVERSE_", extra="ignore", frozen=True)

    release: str = Field(
        default=DEFAULT_RELEASE,
        description="A built release folder (public tasks and hidden ground truth) or a Hub repo id.",
    )
    private_release: str | None = Field(
        default=None,
        description="Where the hidden ground truth is when `release` is a Hub repo id (a private repo id).",
    )
    store: Path = Field(default=DEFAULT_STORE, description="The results store folder (private).")
    judge: str = Field(default="none", description='litellm model id of the LLM judge, or "none".')
    judge_api_base: str | None = Field(
        default=None, description="The judge's API base URL, if not the default."
    )
    judge_api_key_env: str | None = Field(default=None, description="Variable holding the judge's API key.")
    judge_cache: Path | None = Field(
        default=None, description="Verdict cache folder (default: in the cache)."
    )
    max_upload_mb: float = Field(default=50.0, gt=0, description="Largest accepted upload.")
    max_files: int = Field(default=1000, gt=0, description="Most entries a .zip upload may hold.")
    max_unpacked_mb: float = Field(default=200.0, gt=0, description="Most bytes a .zip may unpack to.")
    daily_limit: int = Field(default=5, ge=1, description="Accepted submissions per user per UTC day.")
    local_user: str | None = Field(
        default=None, description="Development identity used when nobody is logged in; never set on the Hub."
    )
    results_repo: str | None = Field(
        default=None, description="Private Hub dataset repo mirroring the store (a Space's disk is not kept)."
    )
    hub_endpoint: str | None = Field(default=None, description="The Hub's URL, when not huggingface.co.")
    mirror_every_minutes: float = Field(default=2.0, gt=0, description="How often the mirror commits.")
    hub_token: str | None = Field(
        default=None, alias="HF_TOKEN", description="Token for the private repos and the mirror."
    )

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @property
    def max_unpacked_bytes(self) -> int:
        return int(self.max_unpacked_mb * 1024 * 1024)

    @property
    def ground_truth_source(self) -> str:
        """Where the hidden ground truth is read from: the private release, else the release itself."""
        return self.private_release or self.release
