"""Time loading + preprocessing the full English–French corpus, and record its statistics.

    python benchmarks/bench_data.py            # uses $SEQ2SEQ_DATA or ../shared/data

Prints the median of ``--repeats`` runs for: reading the lines, tokenising both sides, and the
whole :func:`seq2seq_lib.corpus.load_translation_data` pipeline (filter ≤ 10 tokens, split,
vocabularies with min_freq=2); and, for comparison in the same run, d2l's character-by-
character ``preprocess_nmt`` + ``tokenize_nmt``. Writes ``benchmarks/results/data.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402
from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)

from seq2seq_lib import corpus, vocab  # noqa: E402


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def d2l_preprocess_and_tokenize(path: Path) -> list[tuple[list[str], list[str]]]:
    """d2l's preprocess_nmt + tokenize_nmt (the book's code, for comparison)."""
    text = path.read_text(encoding="utf-8")
    text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
    punct = set(",.!?")
    out = [" " + c if i > 0 and c in punct and text[i - 1] != " " else c
           for i, c in enumerate(text)]
    pairs = []
    for line in "".join(out).split("\n"):
        parts = line.split("\t")
        if len(parts) == 2:
            pairs.append((parts[0].split(" "), parts[1].split(" ")))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    default = ROOT.parent / "shared" / "data"
    folder = Path(os.environ.get(corpus.ENV_DATA) or default)
    path = corpus.find_corpus(folder, download=False)

    def tokenize_all() -> None:
        with corpus._gc_paused():
            [(vocab.tokenize(en), vocab.tokenize(fr)) for en, fr in corpus.read_pairs(path)]

    timings = {
        "find_and_verify_sha256_s": median_time(lambda: corpus.find_corpus(folder), args.repeats),
        "read_pairs_s": median_time(lambda: corpus.read_pairs(path), args.repeats),
        "read_and_tokenize_s": median_time(tokenize_all, args.repeats),
        "load_translation_data_s": median_time(lambda: corpus.load_translation_data(folder),
                                               args.repeats),
        "d2l_preprocess_and_tokenize_s": median_time(
            lambda: d2l_preprocess_and_tokenize(path), args.repeats),
    }
    timings["ratio_d2l_over_ours_tokenize"] = (
        timings["d2l_preprocess_and_tokenize_s"] / timings["read_and_tokenize_s"]
    )

    stats = {}
    for direction in corpus.DIRECTIONS:
        for max_len in (10, None):
            d = corpus.load_translation_data(folder, direction=direction, max_len=max_len)
            stats[f"{direction} max_len={max_len}"] = {
                **d.stats, "src_vocab": len(d.src_vocab), "tgt_vocab": len(d.tgt_vocab)
            }
    quick = corpus.load_translation_data(folder, num_pairs=20_000)
    stats["fr-en max_len=10 num_pairs=20000"] = {
        **quick.stats, "src_vocab": len(quick.src_vocab), "tgt_vocab": len(quick.tgt_vocab)
    }

    result = {
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
        },
        "repeats": args.repeats,
        "timings": timings,
        "corpus_stats_min_freq_2_seed_0": stats,
    }
    for key, value in timings.items():
        print(f"{key:34s} {value:8.3f}")
    for key, value in stats.items():
        print(key, value)
    out = ROOT / "benchmarks" / "results" / "data.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
