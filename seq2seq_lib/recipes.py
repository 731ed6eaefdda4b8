"""Chapters 8-9: the French→English translators that several chapters share.

Chapter 8 trains them; chapter 9 (beam search) reuses them. Both call the recipe below,
so the configuration *and* the training code — both part of the key of
:func:`seq2seq_lib.cache.train_or_load` — are the same wherever a model is asked for, and a
later chapter loads the cached weights instead of retraining.

The data: the Tatoeba corpus, French→English, sentences of at most 10 tokens, vocabularies
of the words seen at least 3 times in the training split (as in chapter 7).
"""

from __future__ import annotations

from typing import Any

from seq2seq_lib import cache, training
from seq2seq_lib.attention_seq2seq import attention_model
from seq2seq_lib.batching import bucket_loader
from seq2seq_lib.data import TranslationData, TranslationDataset, load_translation_data
from seq2seq_lib.device import Run

DATA = {"direction": "fr-en", "max_len": 10, "min_freq": 3}


def translation_data() -> TranslationData:
    """The chapters' French→English data (:data:`DATA`)."""
    return load_translation_data(**DATA)


def translator_config(run: Run, style: str, score: str | None) -> dict[str, Any]:
    """Sizes and budget of a translator for the run's profile.

    ``quick``: a 1-layer GRU encoder–decoder, 128 units, 1,000 updates of 128 sentence pairs
    (about 1.1 epochs; a few CPU minutes). ``full``: 2 layers of 512 units, 12 epochs.
    """
    return {
        "style": style, "score": score, **DATA,
        "embed": run.pick(quick=128, full=256), "hidden": run.pick(quick=128, full=512),
        "layers": run.pick(quick=1, full=2), "dropout": run.pick(quick=0.0, full=0.2),
        "batch": 128, "lr": run.pick(quick=5e-3, full=1e-3),
        "steps": run.pick(quick=1000, full=None), "epochs": run.pick(quick=2, full=12),
    }


def train_translator(run: Run, data: TranslationData, *, style: str = "luong",
                     score: str | None = "general") -> cache.Trained:
    """Train (or load) a GRU translator with ``style`` ``"luong"``, ``"bahdanau"`` or
    ``"none"`` (no attention) and the given score function, on ``data``'s training split.

    Its history (from :func:`seq2seq_lib.training.train`) includes the validation loss.
    """
    config = translator_config(run, style, score)
    config["data"] = data.summary()

    def build() -> Any:
        import torch

        torch.manual_seed(0)
        return attention_model(
            len(data.src_vocab), len(data.tgt_vocab), style=style, score=score,
            embed_size=config["embed"], hidden_size=config["hidden"],
            num_layers=config["layers"], dropout=config["dropout"],
        )

    def fit(model: Any) -> dict[str, Any]:
        loader = bucket_loader(data.dataset("train"), config["batch"])
        valid_pairs = TranslationDataset(data.valid[:2000], data.src_vocab, data.tgt_vocab)
        valid = bucket_loader(valid_pairs, 256, shuffle=False)
        return training.train(
            model, loader, epochs=config["epochs"], max_steps=config["steps"],
            lr=config["lr"], clip=1.0, device=run.device, log_every=25,
            valid_loader=valid, valid_every=250,
        )

    name = f"translator-{style}-{score or 'plain'}"
    return cache.train_or_load(name, config, build, fit, device=run.device)
