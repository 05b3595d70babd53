"""Autocast around the pretrained encoders: ``encoder_dtype = "float32" | "bfloat16" | "auto"``.

bfloat16 autocast pays only where the hardware computes in bfloat16: GPUs, and CPUs with the
AVX512-BF16 or AMX-BF16 instructions. Elsewhere oneDNN emulates it, and the encoder runs two to three times
slower than in float32 (a CPU with AVX512-BF16 is faster in bfloat16). ``"auto"`` therefore picks bfloat16
where it is native and float32 elsewhere.
"""
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from ..errors import Errors

__all__ = ["ENCODER_DTYPES", "cpu_has_native_bf16", "cpuinfo_has_bf16", "encoder_autocast", "resolve_encoder_dtype"]

#: Valid values of every ``encoder_dtype`` setting.
ENCODER_DTYPES = ("float32", "bfloat16", "auto")
_BF16_CPU_FLAGS = {"avx512_bf16", "amx_bf16"}


def cpuinfo_has_bf16(cpuinfo: str) -> bool:
    """Whether the first ``flags`` line of a ``/proc/cpuinfo`` text names a bfloat16 instruction set."""
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return bool(_BF16_CPU_FLAGS & set(line.split(":", 1)[1].split()))
    return False


@lru_cache(maxsize=None)
def cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (``/proc/cpuinfo``; ``False`` where unreadable)."""
    try:
        return cpuinfo_has_bf16(Path("/proc/cpuinfo").read_text(encoding="utf8", errors="replace"))
    except OSError:
        return False


def resolve_encoder_dtype(dtype: str, device: torch.device) -> str:
    """``"float32"`` or ``"bfloat16"``: ``dtype`` itself, or for ``"auto"`` what ``device`` runs natively."""
    if dtype not in ENCODER_DTYPES:
        raise ValueError(Errors.E021.format(what="encoder_dtype", name=dtype, known=ENCODER_DTYPES))
    if dtype != "auto":
        return dtype
    if device.type == "cuda":
        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    if device.type == "cpu":
        return "bfloat16" if cpu_has_native_bf16() else "float32"
    return "float32"


def encoder_autocast(device: torch.device, dtype: str) -> Any:
    """torch autocast in the resolved ``dtype`` around an encoder call (a no-op for float32)."""
    resolved = resolve_encoder_dtype(dtype, device)
    return torch.autocast(device_type=device.type, dtype=getattr(torch, resolved), enabled=resolved != "float32")
