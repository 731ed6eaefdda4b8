"""Benchmark: BLEU of one beam size for several α — one search (``beam.beam_bleu``) against one
search per α (``evaluation.bleu`` with ``search=partial(beam.beam_search, beam_size=k, alpha=α)``),
on the trained translator.

The search prunes by log P whatever α; α only ranks the final beam, so one search that keeps
the whole final beam serves every α. This measures what that saves where the course uses it
(chapter 9's validation grid, chapter 11's beam table and its k × α exercise), and checks that
both give the same translations. The model is chapter 8's reference translator (Luong,
general score) of the ``quick`` profile, from the model cache (trained first if missing: a
few minutes), on a fixed random sample of validation sources.

Run: ``python benchmarks/bench_beam_alphas.py [--sources 500] [--repeats 3]``;
writes ``benchmarks/results/beam-alphas.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # use this checkout's seq2seq_lib
sys.path.insert(0, str(ROOT / "benchmarks"))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402
from _machine import machine  # noqa: E402
from _timing import timed  # noqa: E402

from seq2seq_lib.beam import beam_bleu, beam_search  # noqa: E402
from seq2seq_lib.device import setup  # noqa: E402
from seq2seq_lib.evaluation import bleu  # noqa: E402
from seq2seq_lib.recipes import ch07, ch08  # noqa: E402

BEAM_SIZES, ALPHAS, SEED = (2, 5, 10), (0.0, 0.6, 1.0), 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=500, help="validation sources scored")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    run = setup("cpu", "quick")
    data = ch07.translation_data(run)
    model = ch08.train_translator(run, data, style="luong", score="general",
                                  progress=False).model
    common = {"limit": args.sources, "seed": SEED, "device": run.device}
    rows, same = {}, True
    for k in BEAM_SIZES:
        def one_search(k=k):
            return beam_bleu(model, data.valid, data.src_vocab, data.tgt_vocab, beam_size=k,
                             alphas=ALPHAS, **common)

        def one_per_alpha(k=k):
            return {a: bleu(model, data.valid, data.src_vocab, data.tgt_vocab,
                            search=partial(beam_search, beam_size=k, alpha=a), **common)
                    for a in ALPHAS}

        t_one, all_one, together = timed(one_search, args.repeats)
        t_each, all_each, apart = timed(one_per_alpha, args.repeats)
        same &= all(together[a].hypotheses == apart[a].hypotheses for a in ALPHAS)
        rows[k] = {"one_search_s": t_one, "one_search_per_alpha_s": t_each,
                   "speedup": t_each / t_one, "all_one_search_s": all_one,
                   "all_one_search_per_alpha_s": all_each,
                   "bleu": {str(a): together[a].score for a in ALPHAS}}
        print(f"k = {k:2}: one search {t_one:6.2f} s, one per alpha {t_each:6.2f} s "
              f"(median of {args.repeats}): {t_each / t_one:4.2f}x")
    print(f"same translations for every alpha: {same}")
    result = {
        "setting": {"model": "chapter 8 translator (luong, general), quick profile",
                    "sources": args.sources, "split": "valid", "seed": SEED,
                    "alphas": list(ALPHAS), "device": "cpu",
                    "threads": torch.get_num_threads()},
        "by_beam_size": rows,
        "goal": f"speedup close to {len(ALPHAS)} (the number of alphas): the search is "
                "the cost, the ranking of the final beam is not",
        "same_translations": same,
        "machine": machine(),
    }
    out = ROOT / "benchmarks" / "results" / "beam-alphas.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
