"""What the portable numerics cost (seq2seq_lib.numerics): each pin alone, all together.

Times the course's typical CPU workloads under several settings, each in a fresh process
(the pins must be set before torch loads), the settings interleaved round by round so that a
slow phase of the machine hits all of them:

* ``native, all cores``: no pin (``SEQ2SEQ_NUMERICS=native``), torch's default thread count;
* ``native, 1 thread``: no kernel pin, one thread — what the chapters ran before the pins;
* ``+ ATen AVX2`` / ``+ MKL compatible`` / ``+ no oneDNN``: one pin alone, one thread;
* ``portable``: every pin (the default).

Workloads: one training update of chapter 8's translator (GRU, 128 units, attention, batch of
128 pairs, 10,107/6,182-word vocabularies) and of chapter 7's 2-layer LSTM seq2seq (batch of
64); one update of chapter 2's 32-unit GRU on sequences of 60 steps; greedy decoding of 256
sentences and beam search (k = 5) of 64 sentences with the translator. Reports the median
time of each and its ratio to ``native, 1 thread`` measured in the same run.

    python benchmarks/bench_numerics.py [--rounds 3] [--repeats 10]

Writes benchmarks/results/numerics.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "numerics.json"
WORKLOADS = ("translator update", "LSTM seq2seq update", "GRU-32 task update",
             "greedy, 256 sentences", "beam k=5, 64 sentences")
BASELINE = "native, 1 thread"
#: setting -> (environment, torch threads (None: default), oneDNN enabled)
SETTINGS: dict[str, tuple[dict[str, str], int | None, bool]] = {
    "native, all cores": ({"SEQ2SEQ_NUMERICS": "native"}, None, True),
    BASELINE: ({"SEQ2SEQ_NUMERICS": "native"}, 1, True),
    "+ ATen AVX2": ({"SEQ2SEQ_NUMERICS": "native", "ATEN_CPU_CAPABILITY": "avx2"}, 1, True),
    "+ MKL compatible": ({"SEQ2SEQ_NUMERICS": "native", "MKL_CBWR": "COMPATIBLE"}, 1, True),
    "+ no oneDNN": ({"SEQ2SEQ_NUMERICS": "native"}, 1, False),
    "portable": ({"SEQ2SEQ_NUMERICS": "portable"}, None, False),
}


def child(setting: str, repeats: int) -> dict[str, float]:
    """Run in a fresh process: time every workload under ``setting``; medians in ms."""
    sys.path.insert(0, str(ROOT))
    import seq2seq_lib  # noqa: F401  (first: applies the setting's pins, if any)

    # isort: split
    import torch

    from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
    from seq2seq_lib.beam import beam_search
    from seq2seq_lib.losses import masked_cross_entropy
    from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
    from seq2seq_lib.sequence_model import SequenceConfig, SequenceModel, train_sequence_model
    from seq2seq_lib.tasks import make_task

    _, threads, onednn = SETTINGS[setting]
    if threads is not None:
        torch.set_num_threads(threads)
    torch.backends.mkldnn.enabled = onednn
    g = torch.Generator().manual_seed(0)
    src_vocab, tgt_vocab = 10_107, 6_182

    def tokens(batch: int, length: int, vocab: int) -> torch.Tensor:
        return torch.randint(4, vocab, (batch, length), generator=g)

    def median_ms(fn, warmup: int = 2) -> float:
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return 1e3 * statistics.median(times)

    def update(model: torch.nn.Module, batch: int):
        src, tgt = tokens(batch, 9, src_vocab), tokens(batch, 11, tgt_vocab)
        lengths = torch.full((batch,), 9)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)

        def step() -> None:
            loss = masked_cross_entropy(model(src, lengths, tgt[:, :-1]), tgt[:, 1:], 0)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()

        return step

    torch.manual_seed(0)
    translator = TranslatorModel(TranslatorConfig(src_vocab, tgt_vocab, style="luong",
                                                  score="general", embed_size=128,
                                                  hidden_size=128))
    lstm = Seq2SeqModel(Seq2SeqConfig(src_vocab, tgt_vocab, embed_size=128, hidden_size=128,
                                      num_layers=2))
    task = make_task("first_token", 60)
    gru = SequenceModel(SequenceConfig("gru", task.input_size, 32, task.output_size))
    src, lengths = tokens(256, 9, src_vocab), torch.full((256,), 9)
    beam = partial(beam_search, beam_size=5, alpha=0.6)
    result = {
        "translator update": median_ms(update(translator, 128)),
        "LSTM seq2seq update": median_ms(update(lstm, 64)),
        "GRU-32 task update": median_ms(
            lambda: train_sequence_model(gru, task, steps=1, batch_size=64)),
        "greedy, 256 sentences": median_ms(
            lambda: translator.generate(src, lengths, max_len=12)),
        "beam k=5, 64 sentences": median_ms(
            lambda: translator.generate(src[:64], lengths[:64], search=beam, max_len=12)),
    }
    result["threads"] = torch.get_num_threads()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--child", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeats)))
        return
    runs: dict[str, list[dict[str, float]]] = {s: [] for s in SETTINGS}
    for r in range(args.rounds):
        for setting, (env, _, _) in SETTINGS.items():
            clean = {k: v for k, v in os.environ.items()
                     if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")
                     and not k.endswith("_NUM_THREADS")}
            done = subprocess.run(
                [sys.executable, __file__, "--child", setting, "--repeats", str(args.repeats)],
                env={**clean, **env}, capture_output=True, text=True, check=True)
            runs[setting].append(json.loads(done.stdout))
            print(f"round {r + 1}/{args.rounds}: {setting}", file=sys.stderr, flush=True)
    medians = {s: {w: round(statistics.median(x[w] for x in rs), 1) for w in WORKLOADS}
               for s, rs in runs.items()}
    ratios = {s: {w: round(m[w] / medians[BASELINE][w], 2) for w in WORKLOADS}
              for s, m in medians.items()}
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _machine import machine

    report = {
        "about": "median ms per workload (median over rounds of the median over repeats); "
                 f"ratio = setting / '{BASELINE}', measured in the same run",
        "machine": {**{k: v for k, v in machine().items() if k not in ("torch_threads", "numerics")},
                    "cpu_cores": os.cpu_count()},
        "threads": {s: rs[0]["threads"] for s, rs in runs.items()},
        "rounds": args.rounds, "repeats": args.repeats,
        "median_ms": medians, "ratio": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    width = max(map(len, SETTINGS))
    print(f"{'':{width}}  " + "  ".join(f"{w:>22}" for w in WORKLOADS))
    for s in SETTINGS:
        cells = [f"{medians[s][w]:8.1f} ms ({ratios[s][w]:4.2f}x)" for w in WORKLOADS]
        print(f"{s:{width}}  " + "  ".join(f"{c:>22}" for c in cells))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
