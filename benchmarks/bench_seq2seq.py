"""Training throughput (target tokens per second) of our seq2seq against a d2l-style baseline.

    python benchmarks/bench_seq2seq.py                  # uses $SEQ2SEQ_DATA or ../shared/data
    python benchmarks/bench_seq2seq.py --threads 2 --rounds 7

Both sides train the same deep-LSTM encoder–decoder (same embedding, hidden size, layers and
vocabularies) on the same French→English pairs (≤ 10 tokens), with the same batch size,
learning rate and gradient clipping. They differ only in the engineering:

* **ours** — :func:`seq2seq_lib.buckets.bucket_loader` (batches of similar lengths, padded
  to the longest in the batch), the packed :class:`~seq2seq_lib.encoder_decoder.RNNEncoder`,
  :func:`~seq2seq_lib.losses.masked_cross_entropy` and fused Adam
  (:func:`seq2seq_lib.numerics.make_optimizer`);
* **d2l-style** — what *Dive into Deep Learning* (§9.5–9.7) does: every sentence truncated or
  padded to a fixed ``num_steps`` (here 12 = the longest sentence + ``<eos>``), shuffled
  batches, the encoder run over the padding (no packing), the loss of every position
  computed and multiplied by the mask (``MaskedSoftmaxCELoss``), plain ``torch.optim.Adam``.

Throughput counts only real target tokens (``<eos>`` included), so both sides are credited
for the same work. Rounds alternate between the two (A, B, A, B, ...) so that a change in
machine load hits both; the script prints the median tokens/s of each and their ratio, and
writes ``benchmarks/results/seq2seq.json`` with the machine description.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)

# isort: split
import torch  # noqa: E402
from _machine import cpu_model  # noqa: E402  (benchmarks/ is on sys.path)
from torch import nn  # noqa: E402

from seq2seq_lib.batches import TranslationDataset  # noqa: E402
from seq2seq_lib.buckets import bucket_loader  # noqa: E402
from seq2seq_lib.corpus import load_translation_data  # noqa: E402
from seq2seq_lib.losses import masked_cross_entropy  # noqa: E402
from seq2seq_lib.numerics import make_optimizer  # noqa: E402
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel  # noqa: E402
from seq2seq_lib.vocab import BOS_ID, EOS_ID, PAD_ID  # noqa: E402

# --------------------------------------------------------------------------- d2l-style baseline


class D2LEncoder(nn.Module):
    """d2l's Seq2SeqEncoder (with LSTM cells): embedding, RNN over the padded batch, no packing."""

    def __init__(self, vocab: int, embed: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, layers)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        emb = self.embedding(x).permute(1, 0, 2)  # (T, B, e), time-major as in d2l
        _, state = self.rnn(emb)
        return state


class D2LDecoder(nn.Module):
    def __init__(self, vocab: int, embed: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, layers)
        self.dense = nn.Linear(hidden, vocab)

    def forward(self, y: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        emb = self.embedding(y).permute(1, 0, 2)
        out, _ = self.rnn(emb, state)
        return self.dense(out).permute(1, 0, 2)  # (B, T, V)


class D2LModel(nn.Module):
    def __init__(self, src_vocab: int, tgt_vocab: int, embed: int, hidden: int, layers: int):
        super().__init__()
        self.encoder = D2LEncoder(src_vocab, embed, hidden, layers)
        self.decoder = D2LDecoder(tgt_vocab, embed, hidden, layers)

    def forward(self, src: torch.Tensor, dec_in: torch.Tensor) -> torch.Tensor:
        return self.decoder(dec_in, self.encoder(src))


def d2l_masked_loss(logits: torch.Tensor, label: torch.Tensor, valid_len: torch.Tensor):
    """d2l's MaskedSoftmaxCELoss: unreduced CE at every position, times the mask, mean."""
    weights = (torch.arange(label.shape[1])[None, :] < valid_len[:, None]).float()
    unweighted = nn.functional.cross_entropy(logits.permute(0, 2, 1), label, reduction="none")
    return (unweighted * weights).mean(dim=1)


def truncate_pad(ids: list[int], num_steps: int) -> list[int]:
    return ids[:num_steps] + [PAD_ID] * max(0, num_steps - len(ids))


def d2l_batches(dataset: TranslationDataset, batch_size: int, num_steps: int, seed: int):
    """d2l's load_data_nmt arrays: every sentence (+ <eos>) padded to num_steps; shuffled."""
    src = torch.tensor([truncate_pad(s, num_steps) for s, _ in dataset.examples])
    tgt = torch.tensor([truncate_pad([*t, EOS_ID], num_steps) for _, t in dataset.examples])
    valid = (tgt != PAD_ID).sum(1)
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(src), generator=g)
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        yield src[idx], tgt[idx], valid[idx]


# --------------------------------------------------------------------------- the two loops


def run_ours(model, loader, optimizer, steps: int) -> tuple[int, float]:
    tokens, it = 0, iter(loader)
    start = time.perf_counter()
    for _ in range(steps):
        batch = next(it)
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = masked_cross_entropy(logits, batch.tgt_out, PAD_ID)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        tokens += batch.num_tokens
    return tokens, time.perf_counter() - start


def run_d2l(model, batches, optimizer, steps: int) -> tuple[int, float]:
    tokens = 0
    start = time.perf_counter()
    for _ in range(steps):
        src, tgt, valid = next(batches)
        bos = torch.full((tgt.shape[0], 1), BOS_ID)
        dec_in = torch.cat([bos, tgt[:, :-1]], 1)  # teacher forcing, as d2l
        loss = d2l_masked_loss(model(src, dec_in), tgt, valid)
        optimizer.zero_grad()
        loss.sum().backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        tokens += int(valid.sum())
    return tokens, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embed", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20, help="updates per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "seq2seq.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("SEQ2SEQ_DATA", str(ROOT.parent / "shared" / "data"))

    data = load_translation_data(min_freq=3)
    train = data.dataset("train")
    num_steps = 1 + max(len(t) for _, t in train.examples)
    sizes = dict(embed_size=args.embed, hidden_size=args.hidden, num_layers=args.layers)
    torch.manual_seed(0)
    ours = Seq2SeqModel(Seq2SeqConfig(len(data.src_vocab), len(data.tgt_vocab), **sizes))
    base = D2LModel(len(data.src_vocab), len(data.tgt_vocab), args.embed, args.hidden,
                    args.layers)
    n_ours = sum(p.numel() for p in ours.parameters())
    n_base = sum(p.numel() for p in base.parameters())
    assert n_ours == n_base, (n_ours, n_base)  # the same network, only the engineering differs
    opt_ours = make_optimizer(ours.parameters(), 1e-3)
    opt_base = torch.optim.Adam(base.parameters(), lr=1e-3)
    loader = bucket_loader(train, args.batch, reverse_source=True, seed=0)
    batches = d2l_batches(train, args.batch, num_steps, seed=0)

    run_ours(ours, loader, opt_ours, 2)  # warm-up
    run_d2l(base, batches, opt_base, 2)
    rates: dict[str, list[float]] = {"ours": [], "d2l": []}
    for r in range(args.rounds):
        for name in ("ours", "d2l") if r % 2 == 0 else ("d2l", "ours"):
            if name == "ours":
                tok, sec = run_ours(ours, loader, opt_ours, args.steps)
            else:
                tok, sec = run_d2l(base, batches, opt_base, args.steps)
            rates[name].append(tok / sec)
            print(f"round {r + 1} {name:4s}: {tok / sec:8.0f} target tokens/s", flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    ratio = med["ours"] / med["d2l"]
    print(f"median tokens/s: ours {med['ours']:.0f} | d2l-style {med['d2l']:.0f} | "
          f"ratio {ratio:.2f}x (goal >= 1.2x)")
    result = {
        "machine": {
            "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "load_average_at_end": os.getloadavg(),
        },
        "config": {**vars(args), "num_steps_d2l": num_steps, "parameters": n_ours,
                   "src_vocab": len(data.src_vocab), "tgt_vocab": len(data.tgt_vocab)},
        "tokens_per_s": rates,
        "median_tokens_per_s": med,
        "ratio_ours_over_d2l": ratio,
        "fused_adam": bool(opt_ours.defaults.get("fused")),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {Path(args.out).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
