"""Run chapters as plain Python, cell by cell, and time every cell (no Jupyter needed).

    python scripts/time_chapters.py --profile full --device cuda          # every chapter
    python scripts/time_chapters.py --profile full --device cuda chapters/02_gru.ipynb
    python scripts/time_chapters.py --profile quick --device cpu --timeout 900
    python scripts/time_chapters.py --profile full --device cuda --smoke   # code paths only

This is how the full profile's times in testing.md were measured: on a GPU machine, where
Jupyter need not be installed; IPython must be (chapter 11 imports ``IPython.display``, as
its tables are shown with ``display``; a GPU machine without it can install the ``ipython``
wheel and its dependencies). Each chapter runs in a fresh Python process (working directory
``chapters/``, ``SEQ2SEQ_PROFILE`` and ``SEQ2SEQ_DEVICE`` set, matplotlib drawing off-screen)
that executes the notebook's code cells in order in one namespace, as a kernel would. Any
exception stops the chapter (an unsolved exercise prints that it is not solved; it does not raise).
The chapters share one model cache (``--cache``, default a fresh temporary folder), in the
order given, so a later chapter loads an earlier chapter's models as a reader's would.
A chapter that runs past ``--timeout`` seconds is stopped, and its cells up to then are kept.
``--smoke`` makes it a smoke run (``SEQ2SEQ_SMOKE=1``, read by :func:`seq2seq_lib.device.setup`):
every training run cut to a few updates, to check quickly that a profile's code runs on a
device (its times then mean nothing).

Writes ``--out`` (default ``results/chapter-times-<profile>-<device>.json``): per chapter its
status, total seconds and every code cell's seconds, with the machine and versions.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CELL_MARK = "@@cell"


def code_cells(path: Path) -> list[tuple[int, str]]:
    """``(index, source)`` of every code cell of a notebook (read as JSON)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cells.append((index, source))
    return cells


def run_one(path: Path) -> int:
    """Execute one notebook's code cells here; report each cell's time on stdout."""
    sys.path.insert(0, str(ROOT))
    namespace: dict = {"__name__": "__main__"}
    for index, source in code_cells(path):
        start = time.perf_counter()
        raised = None
        try:
            exec(compile(source, f"{path.name}[{index}]", "exec"), namespace)  # noqa: S102
        except Exception as err:  # noqa: BLE001 - reported below
            raised = err
        seconds = time.perf_counter() - start
        first = source.strip().splitlines()[0][:70] if source.strip() else ""
        print(f"{CELL_MARK} {index} {seconds:.2f} {json.dumps(first)}", flush=True)
        if raised is not None:
            traceback.print_exception(raised)
            return 1
    return 0


def machine(device: str) -> dict:
    import torch

    info = {"python": platform.python_version(), "torch": torch.__version__,
            "cpu_cores": os.cpu_count(), "platform": platform.platform()}
    if device == "cuda" and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", type=Path)
    parser.add_argument("--profile", default="full", choices=["quick", "full"])
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per chapter")
    parser.add_argument("--cache", type=Path, help="model cache folder (default: a fresh one)")
    parser.add_argument("--smoke", action="store_true", help="a smoke run (SEQ2SEQ_SMOKE=1)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.one is not None:
        return run_one(args.one)

    if importlib.util.find_spec("IPython") is None:
        parser.error("IPython is not installed: chapter 11 imports IPython.display (pip install ipython)")
    chapters = args.chapters or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    smoke = "-smoke" if args.smoke else ""
    out = args.out or ROOT / "results" / f"chapter-times-{args.profile}-{args.device}{smoke}.json"
    cache = args.cache or Path(tempfile.mkdtemp(prefix="seq2seq-times-"))
    env = {**os.environ, "SEQ2SEQ_PROFILE": args.profile, "SEQ2SEQ_DEVICE": args.device,
           "SEQ2SEQ_CACHE": str(cache), "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("SEQ2SEQ_SMOKE", None)
    if args.smoke:
        env["SEQ2SEQ_SMOKE"] = "1"
    report = {"profile": args.profile, "device": args.device, "smoke": args.smoke,
              "machine": machine(args.device), "chapters": {}}
    for path in chapters:
        path = path.resolve()
        start = time.perf_counter()
        cells: list[list] = []
        status = "ok"
        with tempfile.TemporaryFile("w+") as log:
            child = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--one", str(path)],
                cwd=path.parent, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
            try:
                stdout, _ = child.communicate(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                stdout, _ = child.communicate()
                status = f"stopped after {args.timeout:.0f} s"
            if child.returncode not in (0, None) and status == "ok":
                log.seek(0)
                status = "error: " + log.read()[-2000:]
        for line in stdout.splitlines():
            if line.startswith(CELL_MARK):
                _, index, seconds, first = line.split(" ", 3)
                cells.append([int(index), float(seconds), json.loads(first)])
        total = time.perf_counter() - start
        report["chapters"][path.name] = {"status": status, "seconds": round(total, 1),
                                         "cells": cells}
        print(f"{path.name:32s} {total:8.1f} s  {status.splitlines()[0]}", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0 if all(c["status"] == "ok" for c in report["chapters"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
