"""Chapters 7-11: the French→English models that several chapters share.

Chapter 7 trains the Sutskever-style seq2seq (:func:`train_seq2seq`); chapter 8 trains the
GRU translators with and without attention (:func:`train_translator`); chapter 9 reuses
chapter 8's, and chapter 11 reuses all of them and adds the ablation variants. Every chapter
calls the recipes below, so the configuration *and* the training code — both part of the key
of :func:`seq2seq_lib.cache.train_or_load` — are the same wherever a model is asked for, and
a later chapter loads the cached weights instead of retraining.

The data: the Tatoeba corpus, French→English, sentences of at most 10 tokens, vocabularies
of the words seen at least 3 times in the training split.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

from seq2seq_lib import cache, training
from seq2seq_lib.attention_seq2seq import attention_model
from seq2seq_lib.batching import bucket_loader
from seq2seq_lib.data import TranslationData, TranslationDataset, load_translation_data
from seq2seq_lib.device import Run
from seq2seq_lib.encoder_decoder import EncoderDecoder
from seq2seq_lib.seq2seq import sutskever_model

DATA = {"direction": "fr-en", "max_len": 10, "min_freq": 3}
TEACHER_FORCING = ("always", "scheduled")
#: The defaults of :func:`train_translator`'s variant arguments: chapter 8's translator.
TRANSLATOR_DEFAULTS: dict[str, Any] = {
    "style": "luong", "score": "general", "reverse_source": False, "teacher_forcing": "always",
}


def translation_data() -> TranslationData:
    """The chapters' French→English data (:data:`DATA`)."""
    return load_translation_data(**DATA)


# --- chapter 7: Sutskever et al. (2014), a deep LSTM encoder-decoder without attention ---


def seq2seq_config(run: Run, data: TranslationData) -> dict[str, Any]:
    """Sizes and budget of chapter 7's seq2seq for the run's profile.

    ``quick``: 2 LSTM layers of 128 units, 1,200 updates of 64 pairs (about 0.7 epochs).
    ``full``: the paper's 4 layers of 1,024 units (512-dimensional embeddings), 12 epochs.
    """
    return {
        "embed": run.pick(quick=128, full=512), "hidden": run.pick(quick=128, full=1024),
        "layers": run.pick(quick=2, full=4), "dropout": run.pick(quick=0.0, full=0.2),
        "batch": run.pick(quick=64, full=128), "lr": run.pick(quick=5e-3, full=1e-3),
        "steps": run.pick(quick=1200, full=None), "epochs": run.pick(quick=1, full=12),
        "data": data.summary(),
    }


def build_seq2seq(config: Mapping[str, Any], data: TranslationData, *,
                  reverse_source: bool = True) -> EncoderDecoder:
    """A fresh :func:`~seq2seq_lib.seq2seq.sutskever_model` of ``config``'s sizes (seed 0)."""
    torch.manual_seed(0)
    return sutskever_model(
        len(data.src_vocab), len(data.tgt_vocab), embed_size=config["embed"],
        hidden_size=config["hidden"], num_layers=config["layers"], dropout=config["dropout"],
        reverse_source=reverse_source,
    )


def fit_seq2seq(run: Run, data: TranslationData, config: Mapping[str, Any],
                model: EncoderDecoder, *, teacher_forcing: float | training.Schedule = 1.0,
                epochs: int | None = None, steps: int | None = None,
                lr: float | None = None) -> dict[str, Any]:
    """Train ``model`` on the training split (validation loss on 1,000 validation pairs
    every 100 updates); ``epochs``, ``steps`` and ``lr`` default to ``config``'s."""
    rev = model.reverse_source
    loader = bucket_loader(data.dataset("train"), config["batch"], reverse_source=rev)
    valid_pairs = TranslationDataset(data.valid[:1000], data.src_vocab, data.tgt_vocab)
    valid = bucket_loader(valid_pairs, 250, shuffle=False, reverse_source=rev)
    return training.train(
        model, loader, epochs=config["epochs"] if epochs is None else epochs,
        max_steps=config["steps"] if steps is None else steps, lr=lr or config["lr"],
        clip=1.0, teacher_forcing=teacher_forcing, device=run.device, log_every=25,
        valid_loader=valid, valid_every=100,
    )


def train_seq2seq(run: Run, data: TranslationData) -> cache.Trained:
    """Train (or load) chapter 7's seq2seq: reversed source, teacher forcing."""
    config = seq2seq_config(run, data)

    def build() -> EncoderDecoder:
        return build_seq2seq(config, data)

    def fit(model: EncoderDecoder) -> dict[str, Any]:
        return fit_seq2seq(run, data, config, model)

    return cache.train_or_load("ch07-seq2seq", config, build, fit, device=run.device)


# --- chapters 8-11: GRU translators with or without attention ---


def translator_config(run: Run, style: str, score: str | None, *, reverse_source: bool = False,
                      teacher_forcing: str = "always") -> dict[str, Any]:
    """Sizes and budget of a translator for the run's profile.

    ``quick``: a 1-layer GRU encoder–decoder, 128 units, 1,000 updates of 128 sentence pairs
    (about 1.1 epochs; a few CPU minutes). ``full``: 2 layers of 512 units, 12 epochs.
    ``teacher_forcing``: ``"always"`` or ``"scheduled"`` (:func:`scheduled_translator`).
    """
    if teacher_forcing not in TEACHER_FORCING:
        raise ValueError(f"teacher_forcing must be one of {TEACHER_FORCING}, "
                         f"got {teacher_forcing!r}")
    return {
        "style": style, "score": score, **DATA,
        "embed": run.pick(quick=128, full=256), "hidden": run.pick(quick=128, full=512),
        "layers": run.pick(quick=1, full=2), "dropout": run.pick(quick=0.0, full=0.2),
        "batch": 128, "lr": run.pick(quick=5e-3, full=1e-3),
        "steps": run.pick(quick=1000, full=None), "epochs": run.pick(quick=2, full=12),
        "reverse_source": reverse_source, "teacher_forcing": teacher_forcing,
    }


def translator_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`~seq2seq_lib.attention_seq2seq.attention_model` (less
    the vocabulary sizes) that rebuild a translator of ``config``."""
    return {
        "style": config["style"], "score": config["score"], "embed_size": config["embed"],
        "hidden_size": config["hidden"], "num_layers": config["layers"],
        "dropout": config["dropout"], "reverse_source": config["reverse_source"],
    }


def scheduled_translator(planned_updates: int) -> training.Schedule:
    """The ``"scheduled"`` teacher-forcing ratio: Bengio et al.'s inverse sigmoid with
    :math:`k` = ``planned_updates`` / 6, so :math:`\\epsilon` falls from about 1 to about
    0.3 over the run (it crosses 0.5 after about 85% of it)."""
    k = max(1.0, planned_updates / 6)
    return lambda step: training.scheduled_sampling(step, "inverse_sigmoid", k=k)


def _translator_job(
    run: Run, data: TranslationData, style: str, score: str | None, reverse_source: bool,
    teacher_forcing: str, progress: bool,
) -> tuple[str, dict[str, Any], Callable[[], EncoderDecoder], Callable[..., Any]]:
    """``(name, config, build, fit)`` of one translator, as train_or_load takes them."""
    config = translator_config(run, style, score, reverse_source=reverse_source,
                               teacher_forcing=teacher_forcing)
    config["data"] = data.summary()

    def build() -> EncoderDecoder:
        torch.manual_seed(0)
        return attention_model(len(data.src_vocab), len(data.tgt_vocab),
                               **translator_kwargs(config))

    def fit(model: EncoderDecoder) -> dict[str, Any]:
        rev = config["reverse_source"]
        loader = bucket_loader(data.dataset("train"), config["batch"], reverse_source=rev)
        valid_pairs = TranslationDataset(data.valid[:2000], data.src_vocab, data.tgt_vocab)
        valid = bucket_loader(valid_pairs, 256, shuffle=False, reverse_source=rev)
        tf: float | training.Schedule = 1.0
        if config["teacher_forcing"] == "scheduled":
            planned = config["steps"] or config["epochs"] * len(loader)
            tf = scheduled_translator(planned)
        return training.train(
            model, loader, epochs=config["epochs"], max_steps=config["steps"],
            lr=config["lr"], clip=1.0, teacher_forcing=tf, device=run.device, log_every=25,
            valid_loader=valid, valid_every=250, progress=progress,
        )

    name = f"translator-{style}-{score or 'plain'}"
    name += "-reversed" * reverse_source + "-scheduled" * (teacher_forcing == "scheduled")
    return name, config, build, fit


def train_translator(run: Run, data: TranslationData, *, style: str = "luong",
                     score: str | None = "general", reverse_source: bool = False,
                     teacher_forcing: str = "always", progress: bool = True) -> cache.Trained:
    """Train (or load) a GRU translator with ``style`` ``"luong"``, ``"bahdanau"`` or
    ``"none"`` (no attention) and the given score function, on ``data``'s training split.

    ``reverse_source`` feeds the source reversed (chapter 7); ``teacher_forcing`` is
    ``"always"`` or ``"scheduled"``. Its history (from :func:`seq2seq_lib.training.train`)
    includes the validation loss. :func:`translator_config` and :func:`translator_kwargs`
    give what rebuilds the architecture (e.g. to export it for ``seq2seq-translate``).
    """
    name, config, build, fit = _translator_job(run, data, style, score, reverse_source,
                                               teacher_forcing, progress)
    return cache.train_or_load(name, config, build, fit, device=run.device)


def translator_path(run: Run, data: TranslationData, **variant: Any) -> Path:
    """The cache file of :func:`train_translator` ``(run, data, **variant)``; it exists
    when the model is cached."""
    name, config, _, fit = _translator_job(run, data, progress=False,
                                           **{**TRANSLATOR_DEFAULTS, **variant})
    return cache.cache_path(name, config, fit)


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _train_in_worker(job: tuple[Run, TranslationData, dict[str, Any]]) -> str:
    torch.set_num_threads(1)  # one core per model: repeatable bit for bit
    run, data, variant = job
    return str(train_translator(run, data, progress=False, **variant).path)


def train_translators(run: Run, data: TranslationData,
                      variants: Mapping[str, Mapping[str, Any]], *,
                      workers: int | None = None) -> dict[str, cache.Trained]:
    """Train (or load) several translators: ``{label: train_translator(run, data, **kw)}``.

    On the CPU, the models that are not cached yet are trained side by side, one per worker
    process with one thread each (``workers`` defaults to the number of usable cores); each
    result is the same, bit for bit, as training it alone with one thread. On a GPU they are
    trained one after the other. Returns the models in the order of ``variants``.
    """
    missing = [dict(kw) for kw in variants.values()
               if not translator_path(run, data, **kw).exists()]
    if workers is None:
        workers = _usable_cpus() if run.device.type == "cpu" else 1
    workers = min(workers, len(missing))
    if workers > 1:
        context = multiprocessing.get_context("spawn")  # fork + torch threads can deadlock
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            list(pool.map(_train_in_worker, [(run, data, kw) for kw in missing]))
    return {label: train_translator(run, data, **kw) for label, kw in variants.items()}

