"""Benchmark: our byte-pair encoding (``seq2seq_lib.subwords``) against Hugging Face
``tokenizers`` (Rust) on the course's corpus.

Both learn merges from the same pieces (our ``pre_tokenize``; Hugging Face's pre-tokenizer
only splits them on the spaces between them), with the same vocabulary size and
``min_frequency=2``, then segment every sentence. Reported: median seconds of each step over
``--repeats`` runs, our time over theirs, and whether merges and segmentations are identical.
Our times exclude the piece counting, which both need (reported apart); Hugging Face's
include its own counting, done in Rust on the joined pieces.

Run: ``python benchmarks/bench_subwords.py``; writes ``benchmarks/results/subwords.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # use this checkout's seq2seq_lib
sys.path.insert(0, str(ROOT / "benchmarks"))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import tokenizers  # noqa: E402
from _machine import machine  # noqa: E402
from _timing import timed  # noqa: E402

from seq2seq_lib.corpus import find_corpus, read_pairs  # noqa: E402
from seq2seq_lib.subwords import BPE, learn_bpe, piece_counts, pre_tokenize  # noqa: E402


def hugging_face(lines: list[str], vocab_size: int) -> tuple[tokenizers.Tokenizer, tuple]:
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2,
                                             show_progress=False, special_tokens=[])
    tok.train_from_iterator(lines, trainer)
    model = json.loads(tok.to_str())["model"]
    return tok, tuple(tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
                      for m in model["merges"])


def measure(name: str, texts: list[str], vocab_size: int, repeats: int) -> dict[str, object]:
    """Learn and segment one side of the corpus with both; print and return the row."""
    t_count, _, counts = timed(lambda: piece_counts(texts), repeats)
    t_ours, _, ours = timed(lambda: learn_bpe(counts, vocab_size), repeats)
    lines = [" ".join(pre_tokenize(t)) for t in texts]
    t_hf, _, (tok, theirs) = timed(lambda: hugging_face(lines, vocab_size), repeats)

    def ours_segment() -> list[list[str]]:
        fresh = BPE(ours.alphabet, ours.merges)  # an empty segmentation cache every run
        return [fresh.encode(t) for t in texts]

    t_seg_ours, _, seg_ours = timed(ours_segment, repeats)
    t_seg_hf, _, seg_hf = timed(lambda: [e.tokens for e in tok.encode_batch(lines)], repeats)
    row = {
        "pieces": len(counts), "vocab_size": vocab_size, "merges": len(ours.merges),
        "identical_merges": ours.merges == theirs,
        "identical_segmentations": seg_ours == seg_hf,
        "median_s": {"count_pieces": t_count, "learn_ours": t_ours, "learn_hugging_face": t_hf,
                     "segment_ours": t_seg_ours, "segment_hugging_face": t_seg_hf},
        "ours_over_hugging_face": {"learn": t_ours / t_hf, "segment": t_seg_ours / t_seg_hf},
    }
    print(f"{name}: {len(counts):,} distinct pieces, {len(ours.merges):,} merges; identical "
          f"merges {row['identical_merges']}, segmentations {row['identical_segmentations']}")
    print(f"  learn   ours {t_ours:.2f} s | Hugging Face {t_hf:.2f} s | {t_ours / t_hf:.1f}x"
          f"   (counting the pieces: {t_count:.2f} s)")
    print(f"  segment ours {t_seg_ours:.2f} s | Hugging Face {t_seg_hf:.2f} s | "
          f"{t_seg_ours / t_seg_hf:.1f}x   ({len(texts):,} sentences)")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    raw = read_pairs(find_corpus())
    result: dict[str, object] = {"corpus": f"fra-eng/fra.txt, {len(raw):,} pairs, each side",
                                 "repeats": args.repeats, "sides": {}}
    for name, side, vocab_size in (("English", 0, 8000), ("French", 1, 8000)):
        texts = [pair[side] for pair in raw]
        result["sides"][name] = measure(name, texts, vocab_size, args.repeats)  # type: ignore[index]
    result["tokenizers_version"] = tokenizers.__version__
    result["machine"] = machine()
    out = ROOT / "benchmarks" / "results" / "subwords.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
