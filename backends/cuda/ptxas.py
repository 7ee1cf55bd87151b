"""NVIDIA's PTX assembler, `ptxas`, as a check of the PTX the CUDA backend emits.

The PTX comes from LLVM on any machine; `ptxas` (the nvidia-cuda-nvcc-cu12 wheel, which the
`test` extra installs, or a CUDA toolkit on PATH) is what turns it into a cubin on NVIDIA's
side, so a kernel it accepts is one the driver can load. Found in this order: the wheel's
`nvidia/cuda_nvcc/bin/ptxas`, then `ptxas` on PATH.

    >>> from ember.backends.cuda import ptxas                       # doctest: +SKIP
    >>> cubin = ptxas.assemble(ptx_text, "sm_90")                   # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ember.backends.cpu.backend import BackendError
from ember.backends.cuda.backend import CHIPS


def find() -> str | None:
    """The path of ptxas: the nvidia-cuda-nvcc wheel's, else PATH's; None if neither."""
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(root) / "cuda_nvcc" / "bin" / "ptxas"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("ptxas")


def available() -> bool:
    """Whether a ptxas is installed (see `find`)."""
    return find() is not None


def kernel_names(ptx: str) -> list[str]:
    """The `.entry` (kernel) names in `ptx`, in order."""
    return re.findall(r"\.entry\s+([\w$.]+)", ptx)


def assemble(ptx: str, chip: str, timeout: float = 120.0) -> bytes:
    """The cubin ptxas assembles from `ptx` for `chip` (sm_80, sm_90, ... see
    backend.CHIPS); BackendError naming the kernels and quoting ptxas when it rejects it
    (or when no ptxas is installed)."""
    if chip not in CHIPS:
        raise ValueError(f"unknown CUDA target {chip!r}; targets: {', '.join(CHIPS)}")
    tool = find()
    if tool is None:
        raise BackendError("ptxas not found: install the test extra (pip install -e '.[test]', "
                         "which brings nvidia-cuda-nvcc-cu12) or put a CUDA toolkit's bin "
                         "directory on PATH")
    names = ", ".join(kernel_names(ptx)) or "(no .entry)"
    with tempfile.TemporaryDirectory(prefix="ember-ptxas-") as tmp:
        source, output = Path(tmp) / "kernels.ptx", Path(tmp) / "kernels.cubin"
        source.write_text(ptx)
        try:
            done = subprocess.run([tool, f"-arch={chip}", "-o", str(output), str(source)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BackendError(f"ptxas took over {timeout:.0f} s on kernels {names}") from None
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().replace(str(source), "<ptx>")
            raise BackendError(f"ptxas ({chip}) rejected the PTX of kernels {names}:\n"
                             f"{message}")
        return output.read_bytes()
