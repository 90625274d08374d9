"""What one sandbox run may use: time, CPU, memory, disk, and whether weaker confinement is acceptable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SandboxLimits"]


class SandboxLimits(BaseModel):
    """Resource limits for one sandbox run. The defaults suit unit-test-sized code tasks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_seconds: float = Field(default=10.0, gt=0, le=3600)
    """Whole run, interpreter start included; on expiry the whole process group is killed."""
    test_seconds: float = Field(default=3.0, gt=0, le=3600)
    """Per step (loading the code, each test); a step over it is a timeout and the next test still runs."""
    cpu_seconds: int = Field(default=5, ge=1, le=3600)
    """CPU time for the whole run (RLIMIT_CPU); catches busy loops the per-step alarm cannot interrupt."""
    memory_mb: int = Field(default=512, ge=64, le=65536)
    """Address space (RLIMIT_AS); the interpreter itself needs ~30 MB of it."""
    file_size_mb: int = Field(default=16, ge=1, le=65536)
    """Largest file the code may write (RLIMIT_FSIZE), its own stdout included."""
    disk_mb: int = Field(default=64, ge=1, le=65536)
    """Everything the code writes, together (a memory-backed file system over its work directory, where the
    kernel allows one: see ``isolation``)."""
    weak_isolation: bool = False
    """Run even where the kernel cannot confine the code (no Landlock or no seccomp: not Linux, or a kernel
    older than 5.13). Off by default: there only resource limits and an audit hook, which code written to
    defeat it can switch off, stand between the code and your files."""
    output_chars: int = Field(default=2000, ge=0, le=1_000_000)
    """How much of the end of the code's stdout/stderr the result keeps."""
