"""Portable numerics (seq2seq_lib.numerics): the pins hold, and this CPU computes the recorded
fingerprint — so every test run on a new machine is also a cross-CPU check."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import ROOT

from seq2seq_lib import numerics

RECORDED = ROOT / "results" / "numerics-fingerprint.json"
portable_only = pytest.mark.skipif(numerics.mode() != "portable",
                                   reason="SEQ2SEQ_NUMERICS=native: nothing is pinned")


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in numerics.ENVIRONMENT}
    environ.pop(numerics.ENV_MODE, None)
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", code], env={**environ, **env},
                          capture_output=True, text=True, check=False, timeout=300)


@portable_only
def test_the_pins_hold_in_this_process():
    assert numerics.problems() == []
    assert torch.get_num_threads() == numerics.THREADS
    assert not torch.backends.mkldnn.enabled
    assert numerics.describe().startswith("numerics=portable (")


def _vendor_dependent() -> dict[str, str]:
    from scripts.numerics_fingerprint import VENDOR_DEPENDENT

    return VENDOR_DEPENDENT


def accepted_values(recorded: dict, entry: str) -> set[str]:
    """What ``entry`` may be on this CPU: the reference's value, and for an entry known to
    depend on the CPU, any value a portable run has recorded for it."""
    values = {recorded["fingerprint"][entry]}
    if entry in _vendor_dependent():
        values |= set(recorded["summary"]["portable"]["vendor_dependent"].get(entry, {}))
    return values


@portable_only
def test_this_cpu_computes_the_recorded_fingerprint():
    """The recorded fingerprint was computed on other CPUs (see the file's ``runs`` and
    ``earlier_runs``); a difference names the entries that differ and this machine's CPU.
    An entry that depends on the CPU despite the pins (``VENDOR_DEPENDENT``) must take one
    of the values recorded for it: a new value fails too."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "numerics_fingerprint.py")],
                          capture_output=True, text=True, check=True, timeout=600)
    here = json.loads(done.stdout)
    assert recorded["fingerprint"].keys() == here["fingerprint"].keys()
    differ = {k: (sorted(accepted_values(recorded, k)), v)
              for k, v in here["fingerprint"].items() if v not in accepted_values(recorded, k)}
    assert not differ, f"on {here['machine']}: {differ}"


def test_the_recorded_cross_cpu_runs_agree_only_when_pinned():
    """The evidence file: with the pins, identical fingerprints on every CPU but for the
    entries known to depend on the CPU; without them, differences."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    summary, runs = recorded["summary"], recorded["runs"]
    assert summary["portable"]["identical"] and not summary["native"]["identical"]
    portable = [r for r in runs if r["mode"] == "portable"]
    assert not summary["portable"]["failed"] and all("fingerprint" in r for r in portable)
    assert {r["machine"]["vendor"] for r in portable} == {"GenuineIntel", "AuthenticAMD"}
    assert any(r["machine"]["avx512f"] for r in portable)
    assert any(not r["machine"]["avx512f"] for r in portable)
    steady = set(recorded["fingerprint"]) - set(_vendor_dependent())
    assert steady and all(r["fingerprint"][k] == recorded["fingerprint"][k]
                          for r in portable for k in steady)
    assert set(summary["portable"]["entries_that_differ"]) <= set(_vendor_dependent())
    for entry in summary["portable"]["entries_that_differ"]:  # each difference is explained
        assert len(summary["portable"]["vendor_dependent"][entry]) > 1


def test_earlier_real_cpus_agree_on_every_entry_they_share():
    """Native runs of other real CPUs recorded before (with an older set of entries) agree
    with the reference on every entry both have, but the CPU-dependent ones."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    earlier = [r for r in recorded.get("earlier_runs", []) if r["mode"] == "portable"]
    for run in earlier:
        shared = set(run["fingerprint"]) & set(recorded["fingerprint"]) - set(_vendor_dependent())
        assert shared, run["label"]
        assert all(run["fingerprint"][k] == recorded["fingerprint"][k] for k in shared), (
            run["machine"])


def test_importing_the_library_pins_the_environment_before_torch_loads():
    done = python("import os, seq2seq_lib, torch; from seq2seq_lib import numerics;"
                  "print(os.environ['MKL_CBWR'], torch.backends.cpu.get_cpu_capability(),"
                  "torch.get_num_threads(), torch.backends.mkldnn.enabled, numerics.problems())")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:4] == ["COMPATIBLE", "AVX2", "1", "False"]
    assert done.stdout.strip().endswith("[]")


def test_native_mode_pins_nothing():
    done = python("import os, seq2seq_lib, torch; from seq2seq_lib import numerics;"
                  "print('MKL_CBWR' in os.environ, torch.backends.mkldnn.enabled);"
                  "print(numerics.describe())", SEQ2SEQ_NUMERICS="native")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "False True", "numerics=native (nothing pinned: SEQ2SEQ_NUMERICS=native)"]


def test_torch_imported_first_is_reported():
    done = python("import torch; torch.zeros(3).exp();"
                  "from seq2seq_lib.device import setup; print(setup('cpu', 'quick'))")
    assert done.returncode == 0, done.stderr
    assert "torch was imported before seq2seq_lib" in done.stderr  # the warning
    assert "numerics=portable, NOT in effect: torch was imported before" in done.stdout


def test_pin_environment_overwrites_stray_values_and_checks_the_mode():
    environ = {"MKL_CBWR": "AVX2", "OMP_NUM_THREADS": "8"}
    assert numerics.pin_environment(environ)
    assert environ == numerics.ENVIRONMENT
    native = {"SEQ2SEQ_NUMERICS": "native", "MKL_CBWR": "AVX2"}
    assert not numerics.pin_environment(native)
    assert native == {"SEQ2SEQ_NUMERICS": "native", "MKL_CBWR": "AVX2"}
    with pytest.raises(ValueError, match="SEQ2SEQ_NUMERICS must be one of"):
        numerics.mode({"SEQ2SEQ_NUMERICS": "fast"})


def _imports(path: Path) -> list[str]:
    """Top-level imported module names of a file, in order."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


ENTRY_POINTS = sorted([*ROOT.glob("scripts/*.py"), *ROOT.glob("benchmarks/*.py"),
                       ROOT / "tests" / "conftest.py"])


@pytest.mark.parametrize("path", ENTRY_POINTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_entry_points_import_the_library_before_torch_and_numpy(path):
    """Every script, benchmark and the test session import seq2seq_lib (which pins the
    kernels) before torch or NumPy, at the top of the file."""
    names = [n for n in _imports(path) if n != "__future__"]
    heavy = [i for i, n in enumerate(names) if n.split(".")[0] in ("torch", "numpy", "sacrebleu")]
    if heavy:
        first_lib = next((i for i, n in enumerate(names) if n.split(".")[0] == "seq2seq_lib"),
                         len(names))
        assert first_lib < heavy[0], f"{path.name} imports {names[heavy[0]]} before seq2seq_lib"
