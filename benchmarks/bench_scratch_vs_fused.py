"""Scratch RNN/GRU/LSTM layers (seq2seq_lib.rnn) against PyTorch's fused nn.RNN/GRU/LSTM.

Times one forward + backward pass (sum of the outputs) of a one-layer model with
H = 256 hidden units on a batch of B = 32 sequences of T = 35 steps on the CPU, and reports
the median over repeats and the ratio scratch / fused measured in the same run (the two are
timed alternately, so a slow phase of the machine hits both). Goal: ratio <= 1.5.

    python benchmarks/bench_scratch_vs_fused.py [--repeats 30] [--threads 2]

Writes benchmarks/results/scratch-vs-fused.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402
from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)
from torch import nn  # noqa: E402

from seq2seq_lib.rnn import scratch_like  # noqa: E402

B, T, H = 32, 35, 256
RESULTS = Path(__file__).resolve().parent / "results" / "scratch-vs-fused.json"


def forward_backward(model: nn.Module, X: torch.Tensor) -> None:
    model.zero_grad(set_to_none=True)
    outputs, _ = model(X)
    outputs.sum().backward()


def time_once(model: nn.Module, X: torch.Tensor) -> float:
    start = time.perf_counter()
    forward_backward(model, X)
    return time.perf_counter() - start


def bench(kind: str, repeats: int, warmup: int) -> dict[str, float]:
    torch.manual_seed(0)
    fused = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}[kind](H, H, batch_first=True)
    scratch = scratch_like(fused)
    X = torch.randn(B, T, H)
    for _ in range(warmup):
        forward_backward(fused, X)
        forward_backward(scratch, X)
    t_fused, t_scratch = [], []
    for _ in range(repeats):  # alternate, so that both see the same machine state
        t_fused.append(time_once(fused, X))
        t_scratch.append(time_once(scratch, X))
    fused_ms = 1e3 * statistics.median(t_fused)
    scratch_ms = 1e3 * statistics.median(t_scratch)
    ratios = [s / f for s, f in zip(t_scratch, t_fused, strict=True)]
    return {
        "fused_ms": round(fused_ms, 3),
        "scratch_ms": round(scratch_ms, 3),
        "ratio": round(scratch_ms / fused_ms, 3),
        "ratio_of_pairs_median": round(statistics.median(ratios), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = {}
    print(f"B={B} T={T} H={H}, forward+backward, {args.repeats} repeats, "
          f"{torch.get_num_threads()} threads")  # fmt: skip
    for kind in ("rnn", "gru", "lstm"):
        r = bench(kind, args.repeats, args.warmup)
        results[kind] = r
        verdict = "ok" if r["ratio"] <= 1.5 else "MISSED (goal <= 1.5)"
        print(
            f"{kind:>4}: fused {r['fused_ms']:8.2f} ms   scratch {r['scratch_ms']:8.2f} ms   "
            f"ratio {r['ratio']:.2f}  {verdict}"
        )
    record = {
        "benchmark": "scratch vs fused forward+backward",
        "shape": {"B": B, "T": T, "H": H, "input_size": H, "num_layers": 1},
        "repeats": args.repeats,
        "statistic": "median seconds per forward+backward, in ms; ratio = scratch / fused",
        "machine": {
            "cpu": cpu_model(),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "python": platform.python_version(),
            "mkldnn": torch.backends.mkldnn.is_available(),
            # other jobs on the machine distort timings: the 1-minute load average at the end
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
        "results": results,
    }
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
