"""Portable numerics: the same bits on every x86-64 CPU with AVX2, Intel or AMD.

A float computation gives bit-identical results only if it runs the same instructions in the
same order. PyTorch and NumPy do not promise that across machines: each of their kernel
libraries looks at the CPU when it starts and picks a code path for it.

* **ATen's vectorised kernels** (softmax, tanh, sums, ...) use the widest instruction set
  present, AVX-512 or AVX2. Pin: ``ATEN_CPU_CAPABILITY=avx2``.
* **MKL** (matrix products; exp, log and sqrt over arrays) picks its kernels by instruction
  set *and* vendor: an Intel and an AMD CPU run different code even with ``MKL_CBWR=AVX2``.
  Pin: ``MKL_CBWR=COMPATIBLE``, the one branch that is the same on both.
* **oneDNN** (PyTorch's CPU LSTM) picks by instruction set and cache sizes. Pin: switched
  off (``torch.backends.mkldnn.enabled = False``; ``ONEDNN_MAX_CPU_ISA=AVX2`` as well).
* **Parallel reductions** depend on the number of threads: a sum split in 2 or in 8 parts is
  added up in another order. Pin: one thread (``torch.set_num_threads(1)``,
  ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS`` = 1).
* **NumPy's SIMD loops and its OpenBLAS** use AVX-512 where present and kernels tuned per
  CPU model. Pin: ``NPY_DISABLE_CPU_FEATURES`` (the AVX-512 groups) and
  ``OPENBLAS_CORETYPE=Haswell``.

Two rules complete it, in the library's own code. Adam runs its fused kernel
(``torch.optim.Adam(..., fused=True)``), whose square root is the exact instruction; the
default loop calls MKL's vectorised ``sqrt``, which is not correctly rounded and gives other
last bits on an emulated CPU than on the real one: it relies on an approximate hardware
instruction, whose bits Intel and AMD do not share. Norms use
:func:`torch.linalg.vector_norm` rather than ``torch.sqrt`` of a sum, for the same reason.

Importing ``seq2seq_lib`` applies everything (:func:`pin`), so every chapter, test, script
and benchmark that imports the library before torch runs the same kernels. The environment
variables must be set **before** torch and NumPy load (MKL and ATen read them once, at their
first use), which is why the package pins them on import; :func:`problems` says when that
came too late. What it costs is measured in ``benchmarks/bench_numerics.py`` (mostly MKL's
compatible branch: matrix products run SSE2 code instead of AVX2/AVX-512, and one thread
instead of all cores). Readers who do not need the book's exact digits can opt out with
``SEQ2SEQ_NUMERICS=native`` in the environment before Python starts.

On a GPU the pins change nothing on the device: CUDA kernels are not bit-identical across GPU
models, so full-profile numbers are reproducible on the same GPU only.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable, MutableMapping
from typing import Any

ENV_MODE = "SEQ2SEQ_NUMERICS"
MODES: tuple[str, ...] = ("portable", "native")

#: The environment variables of the ``portable`` mode (set before torch and NumPy load).
ENVIRONMENT: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OPENBLAS_CORETYPE": "Haswell",
    # NumPy >= 2 names its AVX-512 dispatch targets so (older NumPy ignores unknown names)
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
}
THREADS = 1

_state: dict[str, object] = {"mode": None, "late": ()}


def mode(environ: MutableMapping[str, str] | None = None) -> str:
    """``"portable"`` (the default) or ``"native"``, from ``$SEQ2SEQ_NUMERICS``."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENV_MODE, "portable").strip().lower() or "portable"
    if value not in MODES:
        raise ValueError(f"{ENV_MODE} must be one of {MODES}, got {value!r}")
    return value


def pin_environment(environ: MutableMapping[str, str] | None = None) -> bool:
    """Set :data:`ENVIRONMENT` in ``environ`` (default ``os.environ``) unless the mode is
    ``native``; return whether it did. Values already there are overwritten: a stray
    ``MKL_CBWR=AVX2`` would silently undo the pin."""
    environ = os.environ if environ is None else environ
    if mode(environ) != "portable":
        return False
    environ.update(ENVIRONMENT)
    return True


def pin() -> str:
    """Pin the kernels for this process (what ``import seq2seq_lib`` does); return the mode.

    Sets :data:`ENVIRONMENT`, then loads torch and makes it use one thread and no oneDNN.
    Warns when torch was imported before the library, since then its kernels may already be
    chosen (:func:`problems` also names NumPy loaded too early).
    """
    current = mode()
    if current == "portable":
        late = tuple(name for name in ("torch", "numpy") if name in sys.modules)
        pin_environment()
        import torch

        torch.set_num_threads(THREADS)
        torch.backends.mkldnn.enabled = False
        _state["late"] = late
        if "torch" in late:  # (NumPy loaded early only shows in problems() and describe())
            warnings.warn(
                "torch was imported before seq2seq_lib, so its CPU kernels may already be "
                "chosen and results may differ in the last bits from the book's. Restart and "
                "import seq2seq_lib (e.g. `from seq2seq_lib.device import setup`) first.",
                RuntimeWarning,
                stacklevel=3,
            )
    _state["mode"] = current
    return current


def problems() -> list[str]:
    """What keeps this process from the portable numerics (empty when all pins hold)."""
    if _state["mode"] != "portable":
        return [f"{ENV_MODE}=native: nothing is pinned"]
    import torch

    found = [f"{name} was imported before seq2seq_lib" for name in _state["late"]]  # type: ignore[union-attr]
    found += [f"{key}={os.environ.get(key)!r}, not {value!r}"
              for key, value in ENVIRONMENT.items() if os.environ.get(key) != value]
    capability = torch.backends.cpu.get_cpu_capability()
    if capability not in ("AVX2", "DEFAULT"):  # DEFAULT: the CPU has no AVX2 at all
        found.append(f"ATen uses {capability} kernels, not AVX2")
    if torch.get_num_threads() != THREADS:
        found.append(f"torch uses {torch.get_num_threads()} threads, not {THREADS}")
    if torch.backends.mkldnn.enabled:
        found.append("oneDNN is enabled")
    return found


def describe() -> str:
    """One line for the notebooks' toggle cell: what is pinned, or why not."""
    if _state["mode"] == "native":
        return f"numerics=native (nothing pinned: {ENV_MODE}=native)"
    issues = problems()
    if issues:
        return "numerics=portable, NOT in effect: " + "; ".join(issues)
    return (f"numerics=portable (AVX2 kernels, MKL compatible branch, no oneDNN, "
            f"{THREADS} thread)")


def make_optimizer(params: Iterable[Any], lr: float, *, fused: bool | None = None) -> Any:
    """Adam with the fused (single-kernel) implementation, the one the pins rely on: its
    square root is the exact instruction, where the default loop calls MKL's vectorised
    ``sqrt`` (not correctly rounded; its last bits differ between CPUs, see the module
    docstring). ``fused=None`` falls back to the default implementation on a device without
    the fused kernel; ``fused=False`` asks for it.
    """
    import torch

    params = list(params)
    if fused is False:
        return torch.optim.Adam(params, lr=lr)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):
        if fused:
            raise
        return torch.optim.Adam(params, lr=lr)
