"""Chapter 11's ablation in any profile; writes a results file with its provenance.

    python scripts/translator_results.py --profile full           # on a GPU: a few hours
    python scripts/translator_results.py --profile quick --device cpu
    python scripts/translator_results.py --profile quick --device cpu --controls

``--controls`` trains and measures ``seq2seq_lib.recipes.ch11.CONTROLS`` instead (the score
functions with several seeds, scaled scores, a lower learning rate) and writes
``seq2seq_lib/results/translator-controls-<profile>.json``.

It trains (or, with ``--cache``, loads) every variant of ``seq2seq_lib.recipes.ch11.VARIANTS``
and chapter 7's seq2seq, measures them exactly as chapter 11 does — choices on the
validation split, numbers reported on the test split — and writes
``seq2seq_lib/results/translator-<profile>.json``: the tables plus the command, the hardware,
the wall time, the versions and which models were trained. Chapter 11 reads and shows that
file; it ships with the library (package data), so an installed copy has it too.

By default the models go to a new, empty cache folder, so every model is trained and the
wall time is the real cost; ``--cache DIR`` reuses (and fills) ``DIR`` instead.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _git_commit() -> str:
    """The checkout's commit, ``-dirty`` if a tracked file outside the results folders has changed
    (the results files are this script's own output: writing one must not mark the next
    run's code as modified)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                              text=True, check=True).stdout.strip()

    try:
        commit = git("describe", "--always", "--abbrev=12")
        changed = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                      ":(exclude)results", ":(exclude)seq2seq_lib/results")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit}-dirty" if changed else commit


def _versions() -> dict[str, str]:
    import numpy
    import sacrebleu
    import torch

    from seq2seq_lib import cache

    return {
        "python": sys.version.split()[0], "torch": torch.__version__,
        "numpy": numpy.__version__, "sacrebleu": sacrebleu.__version__,
        "seq2seq_lib_commit": _git_commit(),
        "seq2seq_lib_fingerprint": cache.library_fingerprint()[:16],
    }



def _without_paths(args: list[str]) -> list[str]:
    """The arguments with the ``--cache`` folder replaced by ``CACHE``: a results file (and the
    chapter that prints it) names no folder of the machine that made it."""
    out, hide = [], False
    for arg in args:
        if hide:
            out, hide = [*out, "CACHE"], False
        elif arg.startswith("--cache="):
            out.append("--cache=CACHE")
        else:
            out.append(arg)
            hide = arg == "--cache"
    return out

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=("quick", "full"), default="full")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (default: seq2seq_lib/results/translator-<profile>.json)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="model cache folder to reuse (default: a new empty folder)")
    parser.add_argument("--workers", type=int, default=None,
                        help="models trained side by side, one process each (default: one per "
                             "core on a CPU, 1 on a GPU; several may share one GPU)")
    parser.add_argument("--controls", action="store_true",
                        help="train and measure recipes.ch11.CONTROLS (several seeds and the "
                             "controls of the score comparison) instead of the ablation")
    args = parser.parse_args(argv)
    name = f"translator-{'controls-' * args.controls}{args.profile}.json"
    out = args.out or ROOT / "seq2seq_lib" / "results" / name
    if args.cache is None:
        args.cache = Path(tempfile.mkdtemp(prefix="seq2seq-results-"))
    os.environ["SEQ2SEQ_CACHE"] = str(args.cache)  # before the library reads it
    os.environ.pop("SEQ2SEQ_PROFILE", None)  # the command line decides
    os.environ.pop("SEQ2SEQ_DEVICE", None)

    from seq2seq_lib import ablation  # first import: pins the kernels
    from seq2seq_lib.device import describe_machine, setup
    from seq2seq_lib.recipes import ch07, ch08, ch11

    run = setup(args.device, args.profile)
    print(f"{run}; cache {args.cache}; results -> {out}", flush=True)
    started, start = datetime.now(timezone.utc), time.perf_counter()

    data = ch07.translation_data(run)
    jobs = ch11.control_jobs() if args.controls else ch11.VARIANTS
    cached = {label for label, kw in jobs.items()
              if ch08.translator_path(run, data, **kw).exists()}
    trained = ch08.train_translators(run, data, jobs, workers=args.workers)
    if not args.controls:
        trained[ablation.SEQ2SEQ_LABEL] = ch07.train_seq2seq(run, data)
        if trained[ablation.SEQ2SEQ_LABEL].loaded:
            cached.add(ablation.SEQ2SEQ_LABEL)
    train_seconds = time.perf_counter() - start
    rows = [ablation.variant_row(label, t, data, device=run.device)
            for label, t in trained.items()]
    print(ablation.variant_table(rows), flush=True)
    if args.controls:
        print(ablation.control_table(ablation.control_groups(rows)), flush=True)
        results = {"profile": run.profile, "controls": [asdict(r) for r in rows]}
    else:
        best = ablation.best_variant(rows)
        beams = ablation.beam_rows(trained[best.label].model, data, device=run.device)
        print(ablation.beam_table(beams), flush=True)
        results = ablation.results_dict(run, rows, beams, best.label)
    results["provenance"] = {
        "command": shlex.join(["python", "scripts/translator_results.py",
                               *_without_paths(argv if argv is not None else sys.argv[1:])]),
        "started_utc": started.isoformat(timespec="seconds"),
        "wall_seconds": round(time.perf_counter() - start),
        "training_seconds": round(train_seconds),
        "models_trained": sorted(set(trained) - cached),
        "models_loaded_from_cache": sorted(cached),
        "device": str(run.device),
        "machine": describe_machine(),
        "versions": _versions(),
        "data": data.summary(),
    }
    ablation.write_results(results, out)
    print(f"wrote {out} ({results['provenance']['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
