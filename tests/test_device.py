"""The GPU toggle, the budget profile and seeding."""

import random

import numpy as np
import pytest
import torch

from seq2seq_lib import device as dev


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv(dev.ENV_DEVICE, raising=False)
    monkeypatch.delenv(dev.ENV_PROFILE, raising=False)


def test_auto_is_cpu_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dev.setup("auto", "quick").device == torch.device("cpu")


def test_auto_is_cuda_when_present(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dev.resolve_device("auto") == torch.device("cuda")


def test_cuda_without_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="no CUDA GPU.*'auto' or 'cpu'"):
        dev.setup("cuda", "quick")


def test_cpu_and_profiles():
    run = dev.setup("cpu", "full", seed=3)
    assert (run.device.type, run.profile, run.seed, run.quick) == ("cpu", "full", 3, False)
    assert run.pick(quick=1, full=2) == 2
    assert dev.setup(" CPU ", "Quick").pick(quick=1, full=2) == 1
    assert str(dev.setup("cpu", "quick")) == (
        "device=cpu | profile=quick | seed=0\n"
        "numerics=portable (AVX2 kernels, MKL compatible branch, no oneDNN, 1 thread)")


@pytest.mark.parametrize("device, profile", [("gpu", "quick"), ("cpu", "fast"), ("", "quick")])
def test_unknown_names_are_rejected(device, profile):
    with pytest.raises(ValueError, match="must be one of"):
        dev.setup(device, profile)


def test_environment_overrides_the_notebook_values(monkeypatch):
    monkeypatch.setenv(dev.ENV_PROFILE, "full")
    monkeypatch.setenv(dev.ENV_DEVICE, "cpu")
    run = dev.setup("auto", "quick")
    assert (run.device.type, run.profile) == ("cpu", "full")


def test_environment_cuda_request_also_checked(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv(dev.ENV_DEVICE, "cuda")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        dev.setup("cpu", "quick")


def test_empty_environment_variable_is_ignored(monkeypatch):
    monkeypatch.setenv(dev.ENV_PROFILE, "")
    assert dev.setup("cpu", "quick").profile == "quick"


def test_seeding_makes_every_generator_repeat():
    def draw():
        return random.random(), np.random.rand(), torch.rand(3)

    dev.seed_everything(123)
    first = draw()
    dev.seed_everything(123)
    second = draw()
    dev.seed_everything(124)
    third = draw()
    assert first[:2] == second[:2] and torch.equal(first[2], second[2])
    assert first[0] != third[0] and not torch.equal(first[2], third[2])


def test_setup_seeds_model_initialisation():
    dev.setup("cpu", "quick", seed=5)
    a = torch.nn.GRU(3, 4).weight_hh_l0.clone()
    dev.setup("cpu", "quick", seed=5)
    b = torch.nn.GRU(3, 4).weight_hh_l0
    assert torch.equal(a, b)


def test_seeding_turns_tf32_off():
    """cuDNN's RNNs use TF32 by default on Ampere and later GPUs; the course computes in
    float32 everywhere (the flags exist, and are set, on a CPU-only build too)."""
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    dev.seed_everything(0)
    assert not torch.backends.cudnn.allow_tf32
    assert not torch.backends.cuda.matmul.allow_tf32


def test_synchronize_waits_for_cuda_only_on_a_cuda_device(monkeypatch):
    waited = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: waited.append(device))
    dev.setup("cpu", "quick").synchronize()
    assert waited == []  # nothing to wait for on the CPU (tests/test_gpu.py: on a GPU)
    run = dev.setup("cpu", "quick")
    object.__setattr__(run, "device", torch.device("cuda", 0))  # without a GPU: only the call
    run.synchronize()
    assert waited == [torch.device("cuda", 0)]


def test_only_this_module_reads_the_toggle_from_the_environment():
    """The device, profile and smoke switch reach the library as the Run that setup returns,
    passed down; no other library module reads their environment variables."""
    from pathlib import Path

    package = Path(dev.__file__).parent
    names = ("ENV_DEVICE", "ENV_PROFILE", "ENV_SMOKE", "SEQ2SEQ_DEVICE", "SEQ2SEQ_PROFILE",
             "SEQ2SEQ_SMOKE", "smoke()")
    readers = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                     if path.name != "device.py"
                     and any(name in path.read_text(encoding="utf-8") for name in names))
    assert readers == []


def test_setup_reads_the_smoke_switch(monkeypatch):
    monkeypatch.setenv(dev.ENV_SMOKE, "1")
    run = dev.setup("cpu", "full")
    assert run.smoke and "smoke run" in str(run)
    monkeypatch.setenv(dev.ENV_SMOKE, "0")
    assert not dev.setup("cpu", "full").smoke
