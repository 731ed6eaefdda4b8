"""Benchmark: our corpus BLEU vs sacrebleu's on the same real corpus.

References: 20,000 English sentences of ``shared/data/fra-eng/fra.txt`` (first column, every
8th line so that short and long sentences both occur). Hypotheses: a deterministic
perturbation of each reference (drop, swap or replace a word; change the case of the first
letter). Both implementations get identical inputs; tokenisation caches are emptied before
every run (sacrebleu makes a new tokenizer per call; ours is cleared explicitly).

Run: ``python benchmarks/bench_bleu.py``; writes ``benchmarks/results/bleu.json``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # use this checkout's seq2seq_lib
sys.path.insert(0, str(ROOT / "benchmarks"))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import sacrebleu  # noqa: E402
from _machine import machine  # noqa: E402

from seq2seq_lib import bleu  # noqa: E402

N_LINES, EVERY, REPEATS = 20_000, 8, 5
DATA_CANDIDATES = [ROOT / "shared/data/fra-eng/fra.txt", Path("/work/shared/data/fra-eng/fra.txt")]


def load_references() -> list[str]:
    path = next(p for p in DATA_CANDIDATES if p.exists())
    with open(path, encoding="utf-8") as f:
        english = [line.split("\t", 1)[0] for line in f]
    return english[::EVERY][:N_LINES]


def perturb(i: int, sentence: str) -> str:
    words = sentence.split()
    if len(words) > 1:
        j = i % len(words)
        if i % 3 == 0:
            del words[j]
        elif i % 3 == 1 and j + 1 < len(words):
            words[j], words[j + 1] = words[j + 1], words[j]
        else:
            words[j] = "the"
    out = " ".join(words)
    if i % 5 == 0 and out:
        out = out[0].swapcase() + out[1:]
    return out


def timed(fn) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(REPEATS):
        bleu.tokenize_13a.cache_clear()
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, out


def main() -> None:
    refs = load_references()
    hyps = [perturb(i, r) for i, r in enumerate(refs)]
    t_ours, all_ours, ours = timed(lambda: bleu.corpus_bleu(hyps, [refs]))
    t_sb, all_sb, theirs = timed(lambda: sacrebleu.corpus_bleu(hyps, [refs]))
    n_sent = 2000
    pairs = list(zip(hyps[:n_sent], refs[:n_sent], strict=True))
    t_sent_ours, _, s_ours = timed(lambda: [bleu.sentence_bleu(h, [r]).score for h, r in pairs])
    t_sent_sb, _, s_sb = timed(lambda: [sacrebleu.sentence_bleu(h, [r]).score for h, r in pairs])
    same = (abs(ours.score - theirs.score) < 1e-9 and ours.counts == theirs.counts
            and ours.totals == theirs.totals and ours.sys_len == theirs.sys_len
            and ours.ref_len == theirs.ref_len)
    same_sent = max(abs(a - b) for a, b in zip(s_ours, s_sb, strict=True)) < 1e-9
    result = {
        "corpus": {"source": "shared/data/fra-eng/fra.txt, English column, every 8th line",
                   "sentences": len(refs), "hypotheses": "deterministic perturbation"},
        "bleu": {"ours": ours.score, "sacrebleu": theirs.score, "identical_stats": same},
        "median_s": {"corpus_bleu_ours": t_ours, "corpus_bleu_sacrebleu": t_sb,
                     f"sentence_bleu_x{n_sent}_ours": t_sent_ours,
                     f"sentence_bleu_x{n_sent}_sacrebleu": t_sent_sb},
        "all_s": {"corpus_bleu_ours": all_ours, "corpus_bleu_sacrebleu": all_sb},
        "ours_over_sacrebleu_time": {"corpus": t_ours / t_sb, "sentence": t_sent_ours / t_sent_sb},
        "sentence_scores_identical": same_sent,
        "goal": "ours <= 2x sacrebleu's time",
        "sacrebleu_version": sacrebleu.__version__,
        "machine": machine(),
    }
    print(f"corpus: {len(refs)} English sentences of fra.txt, perturbed hypotheses")
    print(f"BLEU ours {ours.score:.4f} | sacrebleu {theirs.score:.4f} | identical stats: {same}")
    print(f"corpus_bleu   ours {t_ours:.3f} s | sacrebleu {t_sb:.3f} s | ratio "
          f"{t_ours / t_sb:.2f}x (goal <= 2x; medians of {REPEATS})")
    print(f"sentence_bleu x{n_sent} ours {t_sent_ours:.3f} s | sacrebleu {t_sent_sb:.3f} s | "
          f"ratio {t_sent_ours / t_sent_sb:.2f}x | identical scores: {same_sent}")
    out = ROOT / "benchmarks" / "results" / "bleu.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
