"""The resource limits of one `PythonSandbox` (validated once, at the API boundary)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SandboxLimits(BaseModel):
    """Limits applied to every `python_exec` call; each is enforced by the kernel or by the worker."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    wall_seconds: float = Field(
        60.0, gt=0, description="wall time of one call; then the whole call is killed"
    )
    cpu_seconds: int = Field(60, gt=0, description="CPU seconds per process (RLIMIT_CPU)")
    memory_mb: int = Field(
        2048, gt=0, description="address space a call may add to the warm worker's own (RLIMIT_AS)"
    )
    max_processes: int = Field(
        64, gt=0, description="processes and threads of the sandbox uid (RLIMIT_NPROC)"
    )
    max_open_files: int = Field(256, ge=16, description="open file descriptors per process (RLIMIT_NOFILE)")
    max_output_bytes: int = Field(1_000_000, gt=0, description="bytes kept per stream; more kills the call")
    max_file_mb: int = Field(256, gt=0, description="largest file a call may write (RLIMIT_FSIZE)")
    scratch_mb: int = Field(512, gt=0, description="size of the per-sandbox scratch tmpfs")
    startup_seconds: float = Field(60.0, gt=0, description="time allowed for the warm worker to get ready")
