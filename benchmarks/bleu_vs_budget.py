"""How much CPU training does the chapter-7 quick model need? Validation BLEU vs updates.

    python benchmarks/bleu_vs_budget.py            # uses $SEQ2SEQ_DATA or ../shared/data
    python benchmarks/bleu_vs_budget.py --epochs 1 --every 600
    python benchmarks/bleu_vs_budget.py --layers 2 --hidden 128 --epochs 1 --every 600

Trains the chapter-7 ``quick`` recipe (by default one LSTM layer of 256, embeddings of 128;
``--layers``/``--hidden`` change the sizes; batch 64, Adam 5e-3, clipping 1, reversed source,
teacher forcing, one CPU thread) for ``--epochs`` epochs and every ``--every`` updates records
the BLEU of greedy translations of a fixed sample of 1,000 **validation** sources, the training
loss and the wall time. At the end it scores the whole validation split (and, with
``--test``, the test split). Results are written after every evaluation to
``benchmarks/results/bleu-vs-budget-L{layers}-h{hidden}.json`` (so an interrupted run keeps
its curve). This is how the recipe was chosen: on validation BLEU, never on test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402

from seq2seq_lib.buckets import bucket_loader  # noqa: E402
from seq2seq_lib.corpus import load_translation_data  # noqa: E402
from seq2seq_lib.evaluation import bleu  # noqa: E402
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel  # noqa: E402
from seq2seq_lib.training import TrainConfig, train  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--every", type=int, default=1200)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--test", action="store_true", help="also score the whole test split")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or str(ROOT / "benchmarks" / "results"
                          / f"bleu-vs-budget-L{args.layers}-h{args.hidden}.json")
    os.environ.setdefault("SEQ2SEQ_DATA", str(ROOT.parent / "shared" / "data"))
    data = load_translation_data(direction="fr-en", max_len=10, min_freq=3)
    torch.manual_seed(0)
    model = Seq2SeqModel(Seq2SeqConfig(len(data.src_vocab), len(data.tgt_vocab), embed_size=128,
                                       hidden_size=args.hidden, num_layers=args.layers))
    loader = bucket_loader(data.dataset("train"), 64, reverse_source=True)
    result: dict = {"command": " ".join(["python", *sys.argv]), "torch": torch.__version__,
                    "valid_curve": []}
    start = time.perf_counter()

    def save() -> None:
        Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")

    def evaluate(history: dict) -> None:
        if history["updates"] % args.every:
            return
        score = bleu(model, data.valid, data.src_vocab, data.tgt_vocab, max_len=15,
                     limit=1000, seed=1).score
        result["valid_curve"].append({
            "updates": history["updates"], "tokens": history["tokens"],
            "wall_s": time.perf_counter() - start, "valid_bleu_1000": score,
            "train_loss": history["step_loss"][-1],
        })
        print(result["valid_curve"][-1], flush=True)
        save()

    train(model, loader, TrainConfig(epochs=args.epochs, lr=5e-3, log_every=100),
          progress=False, callback=evaluate)
    result["valid_bleu_all"] = bleu(model, data.valid, data.src_vocab, data.tgt_vocab,
                                    max_len=15).score
    if args.test:
        result["test_bleu_all"] = bleu(model, data.test, data.src_vocab, data.tgt_vocab,
                                       max_len=15).score
    result["wall_s"] = time.perf_counter() - start
    print(result, flush=True)
    save()


if __name__ == "__main__":
    main()
