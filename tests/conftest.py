"""Shared pytest setup: make `scripts/` importable (notebook tooling used by the project tests)."""

import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

# nbval compares against outputs stored from a CPU run under the quick profile, so the
# notebook kernels it starts (which inherit this environment) must run the same way, even on
# a machine with a GPU or with other values set by hand.
os.environ["SEQ2SEQ_DEVICE"] = "cpu"
os.environ["SEQ2SEQ_PROFILE"] = "quick"
os.environ["CUDA_VISIBLE_DEVICES"] = ""
# ... and import this checkout's seq2seq_lib, whatever copy pip installed.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


@pytest.fixture(scope="module")
def one_thread():
    """Small models train fastest on one thread (two threads spin against other jobs)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
