"""What the vocabulary threshold costs and buys: chapter 7's and chapter 8's quick recipes at
several ``min_freq`` (a word is in a vocabulary if it occurs at least that often in the
training split).

Most of a quick-profile update is the output layer, a ``(hidden, |V_target|)`` matrix product
for every target token, so the target vocabulary sets the price of every chapter that trains
a translator. This measures, for each threshold:

* the vocabulary sizes and the share of validation target tokens that become ``<unk>``;
* the median time of one training update (real batches of the training split, Adam, the
  portable numerics of ``seq2seq_lib.numerics``) of chapter 8's translator recipe
  (``recipes.ch08.translator_plan``) and of chapter 7's LSTM recipe
  (``recipes.ch07.seq2seq_plan``), thresholds interleaved round by round, with the ratio to
  the baseline threshold 3 (what the chapters used before this benchmark chose 10, now
  ``recipes.ch07.DATA``) measured in the same run;
* with ``--train``: each recipe trained for its full quick budget at each threshold, then
  greedy BLEU on a fixed random sample of 1,000 **validation** sources (what a choice may
  use) and, for reporting only, on a fixed sample of 2,000 test sources.

    python benchmarks/bench_vocab.py [--min-freq 3 10] [--rounds 3] [--repeats 8] [--train]

Writes benchmarks/results/vocab.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402
from _machine import machine  # noqa: E402  (benchmarks/ is on sys.path)

from seq2seq_lib.batches import TranslationData  # noqa: E402
from seq2seq_lib.buckets import bucket_loader  # noqa: E402
from seq2seq_lib.corpus import load_translation_data  # noqa: E402
from seq2seq_lib.device import setup  # noqa: E402
from seq2seq_lib.evaluation import bleu  # noqa: E402
from seq2seq_lib.losses import masked_cross_entropy  # noqa: E402
from seq2seq_lib.numerics import make_optimizer  # noqa: E402
from seq2seq_lib.recipes import build_model, ch07, ch08  # noqa: E402
from seq2seq_lib.training import fit  # noqa: E402
from seq2seq_lib.vocab import PAD_ID, UNK_ID  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "vocab.json"
RECIPES = ("ch. 8 translator", "ch. 7 LSTM")
BASELINE: int = 3  # the chapters' threshold before this benchmark chose recipes.ch07.DATA's


def build(recipe: str, data: TranslationData):
    """(model, train config) of ``recipe`` under the quick profile, weights seeded as in the
    chapters."""
    run = setup("cpu", "quick")
    if recipe == "ch. 7 LSTM":
        plan = ch07.seq2seq_plan(run, data)
    else:
        plan = ch08.translator_plan(run, data)
    return build_model(plan.model_class, plan.model, plan.train.seed), plan.train


def unk_share(data: TranslationData) -> float:
    ids = [data.tgt_vocab.encode(t) for _, t in data.valid]
    return sum(i == UNK_ID for seq in ids for i in seq) / sum(len(seq) for seq in ids)


def update_timer(recipe: str, data: TranslationData, n_batches: int):
    """A function that runs one update on the next of ``n_batches`` fixed training batches
    and returns its wall time in seconds."""
    model, config = build(recipe, data)
    optimizer = make_optimizer(model.parameters(), config.lr)
    loader = bucket_loader(data.dataset("train"), config.batch_size,
                           reverse_source=model.reverse_source, seed=0)
    batches = [b for _, b in zip(range(n_batches), loader, strict=False)]
    state = {"i": 0}

    def one() -> float:
        batch = batches[state["i"] % len(batches)]
        state["i"] += 1
        start = time.perf_counter()
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = masked_cross_entropy(logits, batch.tgt_out, PAD_ID)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimizer.step()
        return time.perf_counter() - start

    return one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-freq", type=int, nargs="+",
                        default=sorted({BASELINE, ch07.DATA["min_freq"]}))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--train", action="store_true",
                        help="also train each recipe for its quick budget and score BLEU")
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args()
    if BASELINE not in args.min_freq:
        parser.error(f"--min-freq must include the baseline {BASELINE}")
    os.environ.setdefault("SEQ2SEQ_DATA", str(ROOT.parent / "shared" / "data"))
    datasets = {m: load_translation_data(**{**ch07.DATA, "min_freq": m})
                for m in args.min_freq}
    result: dict = {
        "about": "median ms per training update (median over rounds of the median over "
                 f"repeats); ratio = the threshold's time / min_freq {BASELINE}'s, measured "
                 "in the same run; BLEU: greedy, fixed samples (valid 1,000 sources, seed 1; "
                 "test 2,000 sources, seed 0)",
        "command": " ".join(["python", *sys.argv]), "machine": machine(),
        "rounds": args.rounds, "repeats": args.repeats,
        "vocab": {str(m): {"src": len(d.src_vocab), "tgt": len(d.tgt_vocab),
                           "valid_target_unk": round(unk_share(d), 4)}
                  for m, d in datasets.items()},
    }
    timers = {(r, m): update_timer(r, d, args.repeats + 2)
              for r in RECIPES for m, d in datasets.items()}
    medians: dict[tuple[str, int], list[float]] = {key: [] for key in timers}
    for _ in range(args.rounds):
        for key, one in timers.items():  # interleaved: a slow phase hits every setting
            one(), one()  # warm-up
            medians[key].append(statistics.median(one() for _ in range(args.repeats)))
    result["median_ms"] = {r: {str(m): round(1000 * statistics.median(medians[r, m]), 1)
                               for m in datasets} for r in RECIPES}
    result["ratio"] = {r: {str(m): round(statistics.median(medians[r, m])
                                         / statistics.median(medians[r, BASELINE]), 3)
                           for m in datasets} for r in RECIPES}
    print(json.dumps({k: result[k] for k in ("vocab", "median_ms", "ratio")}, indent=1),
          flush=True)
    if args.train:
        result["trained"] = {}
        for r in RECIPES:
            for m, d in datasets.items():
                model, config = build(r, d)
                start = time.perf_counter()
                history = fit(model, d, config, progress=False)
                seconds = time.perf_counter() - start
                valid = bleu(model, d.valid, d.src_vocab, d.tgt_vocab, limit=1000, seed=1)
                test = bleu(model, d.test, d.src_vocab, d.tgt_vocab, limit=2000, seed=0)
                row = {"updates": history["updates"], "train_s": round(seconds),
                       "valid_bleu": round(valid.score, 2), "test_bleu": round(test.score, 2)}
                result["trained"].setdefault(r, {})[str(m)] = row
                print(r, f"min_freq {m}:", row, flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
