"""Compare the numerics fingerprint across CPUs: this one, and emulated Intel and AMD CPUs.

    python scripts/cross_cpu_fingerprint.py            # -> results/numerics-fingerprint.json

Runs ``scripts/numerics_fingerprint.py`` natively and under Debian's ``qemu-user``
(``apt-get install qemu-user``) emulating CPUs of the other vendor and instruction set
(default ``-cpu Haswell``: GenuineIntel, AVX2, no AVX-512; ``-cpu EPYC``: AuthenticAMD,
AVX2, no AVX-512), once with the course's portable numerics and once with
``SEQ2SEQ_NUMERICS=native`` as the control that shows the comparison can fail. The emulator
runs the same program, sees the emulated CPU's vendor string and instruction set (so MKL,
ATen and NumPy pick their code paths for it), and computes approximate instructions such as
``rsqrtps`` differently from any real CPU, so code that depends on them shows up too.

It writes the portable fingerprint of this machine as the reference (``"fingerprint"``, which
``tests/test_numerics.py`` compares every test run against) together with every run. The
emulated runs take about 8 minutes each (two at a time). Entries of
``numerics_fingerprint.VENDOR_DEPENDENT`` are compared apart: the summary lists the values
each took (``"vendor_dependent"``), and the tests accept those values only. The native runs
of *other* machines recorded in the file before (``"earlier_runs"``, with the date and commit
that recorded them) are kept: a file accumulates the real CPUs it has seen.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "numerics_fingerprint.py"


def _vendor_dependent() -> dict[str, str]:
    """``VENDOR_DEPENDENT`` of the fingerprint script, read without importing it (importing
    it would import seq2seq_lib, whose pins would leak into the native runs' environment)."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                and getattr(n.target, "id", None) == "VENDOR_DEPENDENT")
    return ast.literal_eval(node.value)


VENDOR_DEPENDENT = _vendor_dependent()
MODES = ("portable", "native")


def run_one(cpu: str | None, mode: str) -> dict[str, object]:
    """One fingerprint run: natively (``cpu=None``) or under ``qemu-x86_64 -cpu CPU``."""
    python = os.path.realpath(sys.executable)  # qemu-user needs the binary, not a wrapper
    command = [python, str(SCRIPT)] if cpu is None else ["qemu-x86_64", "-cpu", cpu, python,
                                                         str(SCRIPT)]
    env = {**os.environ, "SEQ2SEQ_NUMERICS": mode,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    label = "this machine" if cpu is None else f"qemu-x86_64 -cpu {cpu}"
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = round(time.perf_counter() - start)
    print(f"{label:28} {mode:8} {seconds:5d} s{'  FAILED' * bool(done.returncode)}", flush=True)
    if done.returncode:  # recorded, not fatal: a crash under emulation is a result too
        last = [line for line in done.stderr.splitlines() if "warning: TCG" not in line][-3:]
        return {"label": label, "mode": mode, "seconds": seconds,
                "error": f"exit status {done.returncode}: " + " | ".join(last)}
    return {"label": label, "mode": mode, "seconds": seconds, **json.loads(done.stdout)}


def compare(runs: list[dict], mode: str) -> dict[str, object]:
    """Which fingerprint entries differ between the (successful) runs of one mode; the entries
    known to depend on the CPU (``VENDOR_DEPENDENT``) are listed apart with their values."""
    ok = [r for r in runs if r["mode"] == mode and "fingerprint" in r]
    prints = [r["fingerprint"] for r in ok]
    differ = sorted(k for k in prints[0] if len({p[k] for p in prints}) > 1)
    apart = {k: {v: [r["label"] for r in ok if r["fingerprint"][k] == v]
                 for v in sorted({p[k] for p in prints})}
             for k in VENDOR_DEPENDENT if k in prints[0]}
    return {"runs": len(ok), "failed": [r["label"] for r in runs
                                        if r["mode"] == mode and "error" in r],
            "identical": not [k for k in differ if k not in VENDOR_DEPENDENT],
            "entries_that_differ": differ, "vendor_dependent": apart}


def earlier_native_runs(path: Path, machine: dict[str, object]) -> list[dict]:
    """The native runs of other CPUs in the file ``path`` recorded before (kept)."""
    if not path.exists():
        return []
    before = json.loads(path.read_text(encoding="utf-8"))
    kept = []
    for run in before.get("earlier_runs", []) + before.get("runs", []):
        if run["label"] != "this machine" or run.get("machine", {}).get("cpu") == machine["cpu"]:
            continue
        kept.append({"recorded": before.get("recorded"), "commit": before.get("commit"), **run})
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cpus", nargs="*", default=["Haswell", "EPYC"],
                        help="qemu CPU models to emulate (qemu-x86_64 -cpu help)")
    parser.add_argument("--jobs", type=int, default=2, help="emulated runs at a time")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "numerics-fingerprint.json")
    args = parser.parse_args()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    jobs = [(cpu, mode) for mode in MODES for cpu in [None, *args.cpus]]
    with ThreadPoolExecutor(args.jobs) as pool:
        runs = list(pool.map(lambda job: run_one(*job), jobs))
    reference = next(r for r in runs if r["label"] == "this machine" and r["mode"] == "portable")
    commit = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=ROOT,
                            capture_output=True, text=True, check=False).stdout.strip()
    report = {
        "about": "scripts/cross_cpu_fingerprint.py: the numerics fingerprint "
                 "(scripts/numerics_fingerprint.py) natively and under qemu-user",
        "recorded": started,
        "commit": commit or "unknown",
        "fingerprint": reference["fingerprint"],
        "machine": reference["machine"],
        "summary": {mode: compare(runs, mode) for mode in MODES},
        "runs": runs,
        "earlier_runs": earlier_native_runs(args.out, reference["machine"]),
    }
    # written atomically by hand: importing seq2seq_lib (for seq2seq_lib.atomic) would pin
    # this process's environment, which the native runs must not inherit
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, args.out)
    for mode, summary in report["summary"].items():
        print(f"{mode}: {summary}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
