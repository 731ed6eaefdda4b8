"""The GPU toggle, the budget profile and seeding — the first cell of every chapter.

Every notebook starts with::

    DEVICE = "auto"    # "auto" (CUDA when present), "cpu" or "cuda"
    PROFILE = "quick"  # "quick": minutes on 2 CPU cores; "full": long training for a GPU
    run = setup(DEVICE, PROFILE)

``setup`` returns a :class:`Run` whose ``device`` every tensor and model uses and whose
:meth:`Run.pick` chooses a budget (epochs, corpus size, ...) for the profile.

The environment variables ``SEQ2SEQ_DEVICE`` and ``SEQ2SEQ_PROFILE``, when set, win over
the values written in the notebook, so one switch re-runs the whole book in another
setting without editing notebooks (``SEQ2SEQ_PROFILE=full jupyter nbconvert ...``).
The stored outputs of the book are made with ``cpu`` and ``quick``, with the CPU kernels
pinned by :mod:`seq2seq_lib.numerics`; ``print(run)`` shows both.

``SEQ2SEQ_SMOKE=1`` makes a *smoke run* (``run.smoke``): every training run of the library
that is given the run stops after :data:`SMOKE_UPDATES` updates (logging and validating
after each) of at most :data:`SMOKE_BATCH` translation pairs, and the French→English data
of chapters 7–11 (:func:`seq2seq_lib.recipes.ch07.translation_data`) keeps
:data:`SMOKE_SPLIT` pairs in its validation and test splits, so every evaluation on them is
short. With ``SEQ2SEQ_PROFILE=full`` it runs the full profile's code — its large models,
its recipes, its evaluation paths — end to end on a CPU in minutes, so that a crash in code
only the full profile reaches shows up before a reader meets it. Its numbers mean nothing;
the model cache keeps smoke models apart from real ones.

This module is the only one that reads these environment variables: everything else gets
the :class:`Run` that :func:`setup` returns, passed down as an argument (``run=run``).
"""

from __future__ import annotations

import os
import platform
import random
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
import torch

from seq2seq_lib import numerics

DeviceName = Literal["auto", "cpu", "cuda"]
ProfileName = Literal["quick", "full"]

DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
PROFILES: tuple[str, ...] = ("quick", "full")
ENV_DEVICE = "SEQ2SEQ_DEVICE"
ENV_PROFILE = "SEQ2SEQ_PROFILE"
ENV_SMOKE = "SEQ2SEQ_SMOKE"
SMOKE_UPDATES = 4
"""Updates per training run in a smoke run."""
SMOKE_BATCH = 4
"""Training pairs per batch in a smoke run (:func:`seq2seq_lib.training.fit`)."""
SMOKE_SPLIT = 24
"""Pairs kept in the validation and test splits of the chapters' French→English data in a
smoke run (:func:`seq2seq_lib.recipes.ch07.translation_data`)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Run:
    """What :func:`setup` decided: the device, the budget profile, the seed and whether this
    is a smoke run (module docstring). The library's training functions take it as ``run``."""

    device: torch.device
    profile: str = "quick"
    seed: int = 0
    smoke: bool = False

    @property
    def quick(self) -> bool:
        """True under the ``quick`` profile (CI and the stored outputs)."""
        return self.profile == "quick"

    def pick(self, quick: T, full: T) -> T:
        """Return ``quick`` or ``full`` according to the profile.

        >>> Run(torch.device("cpu"), "quick", 0).pick(quick=2, full=40)
        2
        """
        return quick if self.profile == "quick" else full

    def synchronize(self) -> None:
        """Wait until the device has done all the work queued so far. A GPU runs
        asynchronously: a call returns once its kernels are queued, so a timing must wait.
        Nothing to wait for on the CPU."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def __str__(self) -> str:
        """Two lines: the device, profile and seed; then what :mod:`seq2seq_lib.numerics`
        pinned."""
        smoke_run = " | smoke run: meaningless numbers" if self.smoke else ""
        return (f"device={self.device.type} | profile={self.profile} | seed={self.seed}"
                f"{smoke_run}\n{numerics.describe()}")


def resolve_device(name: str) -> torch.device:
    """Turn ``"auto"``, ``"cpu"`` or ``"cuda"`` into a :class:`torch.device`.

    ``"auto"`` is CUDA when ``torch.cuda.is_available()`` and the CPU otherwise.
    Asking for ``"cuda"`` on a machine without CUDA raises :class:`RuntimeError`
    instead of failing later inside a kernel.
    """
    name = name.strip().lower()
    if name not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {name!r}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            "device 'cuda' was asked for, but PyTorch sees no CUDA GPU on this machine "
            f"(torch {torch.__version__}, torch.cuda.is_available() is False). "
            "Use DEVICE = 'auto' or 'cpu', or on Colab choose Runtime > Change runtime type > GPU."
        )
    return torch.device(name)


def resolve_profile(name: str) -> str:
    """Check a profile name (``"quick"`` or ``"full"``) and return it in lower case."""
    name = name.strip().lower()
    if name not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {name!r}")
    return name


def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, NumPy and PyTorch (CPU and every CUDA device).

    Also asks PyTorch for deterministic algorithms where it has them (``warn_only``:
    ops without a deterministic version still run). That makes a run repeatable on one
    machine; :mod:`seq2seq_lib.numerics` (applied when the package is imported) makes it
    the same on every x86-64 CPU with AVX2. On a GPU it turns TF32 off: cuDNN uses it by
    default on Ampere and later GPUs (A100, H100), where its RNNs then differ from the
    same computation in float32 (our scratch layers) in the fourth digit.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    if torch.backends.cudnn.is_available():
        torch.backends.cudnn.benchmark = False


def setup(device: str = "auto", profile: str = "quick", seed: int = 0) -> Run:
    """Pick the device and budget profile, seed every generator, and return a :class:`Run`.

    Args:
        device: ``"auto"`` (CUDA when present), ``"cpu"`` or ``"cuda"``;
            the environment variable ``SEQ2SEQ_DEVICE`` wins when set.
        profile: ``"quick"`` (minutes on 2 CPU cores; CI and the stored outputs) or
            ``"full"`` (long training for a GPU); ``SEQ2SEQ_PROFILE`` wins when set.
        seed: the seed passed to :func:`seed_everything`.

    ``SEQ2SEQ_SMOKE=1`` in the environment makes it a smoke run (module docstring).

    Raises:
        ValueError: an unknown device or profile name.
        RuntimeError: ``"cuda"`` asked for where PyTorch sees no CUDA device.
    """
    dev = resolve_device(os.environ.get(ENV_DEVICE) or device)
    prof = resolve_profile(os.environ.get(ENV_PROFILE) or profile)
    seed_everything(seed)
    return Run(device=dev, profile=prof, seed=seed, smoke=os.environ.get(ENV_SMOKE) == "1")


CPU = Run(torch.device("cpu"))
"""What the library's functions use when they are given no run (the CPU, the ``quick``
profile, seed 0, not a smoke run)."""


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def describe_machine() -> dict[str, object]:
    """What a measurement was made on: CPU model and cores, GPU (or ``None``), Python, torch,
    torch's thread count and the numerics mode — stored with benchmark and results files."""
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {
        "cpu": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "gpu": gpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "numerics": numerics.mode(),
    }
