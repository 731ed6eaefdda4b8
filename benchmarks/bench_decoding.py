"""Benchmark: batched beam search vs one sentence at a time, and beam (k=5) vs greedy.

The model is a stand-in until the course's trained translator exists: a *randomly
initialised* GRU decoder step (|Y| = 5000, embedding 64, hidden 256), decoding 1,000
"sentences" (random initial hidden states) for up to 20 tokens on the CPU. With random
weights <eos> is almost never chosen, so every search runs all 20 steps — the worst case.

Run: ``python benchmarks/bench_decoding.py``; writes ``benchmarks/results/decoding.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # use this checkout's seq2seq_lib
sys.path.insert(0, str(ROOT / "benchmarks"))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402
from _machine import machine  # noqa: E402
from _timing import timed  # noqa: E402

from seq2seq_lib.beam import beam_search  # noqa: E402
from seq2seq_lib.decoding import greedy_search  # noqa: E402

V, EMB, HIDDEN, MAX_LEN, N_SENT, K = 5000, 64, 256, 20, 1000, 5
BOS, EOS = 1, 2


class GRUDecoderStep(torch.nn.Module):
    """``(prefix (N, t), h (N, HIDDEN)) -> (log_probs (N, V), h)``: a GRU step on the last token."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(V, EMB)
        self.cell = torch.nn.GRUCell(EMB, HIDDEN)
        self.out = torch.nn.Linear(HIDDEN, V)

    def forward(self, prefix: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.cell(self.emb(prefix[:, -1]), h)
        return torch.log_softmax(self.out(h), dim=-1), h


def main() -> None:
    torch.manual_seed(0)
    step = GRUDecoderStep().eval()
    h0 = torch.randn(N_SENT, HIDDEN)

    def greedy():
        return greedy_search(step, h0, N_SENT, bos=BOS, eos=EOS, max_len=MAX_LEN)

    def beam_batched():
        return beam_search(step, h0, N_SENT, bos=BOS, eos=EOS, beam_size=K, max_len=MAX_LEN,
                           alpha=0.75)

    def beam_one_at_a_time():
        return [beam_search(step, h0[i : i + 1], 1, bos=BOS, eos=EOS, beam_size=K, max_len=MAX_LEN,
                            alpha=0.75)
                for i in range(N_SENT)]

    with torch.inference_mode():
        greedy()  # warm-up
        t_greedy, all_greedy, g = timed(greedy, 5)
        t_beam, all_beam, b = timed(beam_batched, 5)
        t_single, all_single, singles = timed(beam_one_at_a_time, 1)

    # the batched search returns what the one-at-a-time search returns
    same = all(
        [h.tokens for h in one.hypotheses[0]] == [h.tokens for h in b.hypotheses[i]]
        for i, one in enumerate(singles)
    )
    steps = b.stats.step_calls
    result = {
        "note": "stand-in model: randomly initialised GRU decoder step (no trained translator yet)",
        "setting": {"vocab": V, "emb": EMB, "hidden": HIDDEN, "max_len": MAX_LEN,
                    "sentences": N_SENT, "beam_size": K, "alpha": 0.75, "device": "cpu"},
        "steps_run": {"greedy": g.stats.step_calls, "beam": steps},
        "candidates_scored": {"greedy": g.stats.scored, "beam": b.stats.scored},
        "median_s": {"greedy_batched": t_greedy, "beam_batched": t_beam,
                     "beam_one_sentence_at_a_time": t_single},
        "all_s": {"greedy_batched": all_greedy, "beam_batched": all_beam,
                  "beam_one_sentence_at_a_time": all_single},
        "speedup_batched_vs_one_at_a_time": t_single / t_beam,
        "beam_over_greedy_time": t_beam / t_greedy,
        "goals": {"speedup_batched_vs_one_at_a_time": ">= 10", "beam_over_greedy_time": "<= 3"},
        "batched_equals_one_at_a_time": same,
        "machine": machine(),
    }
    print(f"stand-in model: random GRU decoder step, |Y|={V}, emb {EMB}, hidden {HIDDEN}, "
          f"{N_SENT} sentences, max_len {MAX_LEN}, k={K} (CPU, {torch.get_num_threads()} threads)")
    print(f"greedy, batched                : {t_greedy:8.3f} s (median of 5)")
    print(f"beam k={K}, batched (B*k rows)  : {t_beam:8.3f} s (median of 5)")
    print(f"beam k={K}, one sentence a time : {t_single:8.3f} s (1 run)")
    print(f"batched vs one-at-a-time speed-up: {t_single / t_beam:6.2f}x   (goal >= 10x)")
    print(f"beam k={K} time / greedy time     : {t_beam / t_greedy:6.2f}x   (goal <= 3x; "
          f"candidates scored ratio {b.stats.scored / g.stats.scored:.1f})")
    print(f"batched results == one-at-a-time results: {same}")
    out = ROOT / "benchmarks" / "results" / "decoding.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
