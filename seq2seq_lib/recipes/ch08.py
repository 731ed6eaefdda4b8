"""Chapter 8's recipes: the French→English GRU translators, trained once and shared.

Chapter 8 trains translators with and without attention (:func:`train_translator`),
chapter 9 reuses one, and chapter 11 reuses them all and adds the variants of its ablation
(:mod:`seq2seq_lib.recipes.ch11`). A translator is chosen by a few keyword arguments, its
*variant*: the fields of :class:`~seq2seq_lib.attention_seq2seq.TranslatorConfig` that differ
from chapter 8's translator (``style``, ``score``, ``reverse_source``, ...) and
``teacher_forcing`` (``"always"`` or ``"scheduled"``). :func:`translator_plan` turns a
variant into a :class:`~seq2seq_lib.recipes.Plan` once (sizes and budget from the run's
profile); several translators are trained side by side, one per CPU core
(:func:`train_translators`). The data is chapter 7's
(:func:`seq2seq_lib.recipes.ch07.translation_data`).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import torch

from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
from seq2seq_lib.batches import TranslationData
from seq2seq_lib.buckets import bucket_batches
from seq2seq_lib.cache import Trained
from seq2seq_lib.device import Run
from seq2seq_lib.recipes import Plan, plan_path, train_plan
from seq2seq_lib.recipes.ch07 import DATA
from seq2seq_lib.training import Schedule, TrainConfig

TEACHER_FORCING = ("always", "scheduled")


def planned_updates(config: TrainConfig, pairs: int) -> int:
    """The updates a run of ``config`` makes on ``pairs`` training pairs: its ``epochs`` of
    length-bucketed batches, or ``steps`` if that comes first."""
    updates = config.epochs * bucket_batches(pairs, config.batch_size)
    return updates if config.steps is None else min(config.steps, updates)


def scheduled_translator(planned_updates: int) -> Schedule:
    """The ``"scheduled"`` teacher-forcing ratio: Bengio et al.'s inverse sigmoid with
    :math:`k` = ``planned_updates`` / 6, so :math:`\\epsilon` falls from about 1 to about
    0.3 over the run (it crosses 0.5 after about 85% of it)."""
    return Schedule("inverse_sigmoid", k=max(1.0, planned_updates / 6))


def translator_plan(run: Run, data: TranslationData, *, teacher_forcing: str = "always",
                    seed: int = 0, lr: float | None = None, **variant: Any) -> Plan:
    """A translator's model and training run for the run's profile.

    ``quick``: a 1-layer GRU encoder–decoder, 128 units, 1,000 updates of 128 sentence pairs
    (about 1.1 epochs; a few CPU minutes). ``full``: 2 layers of 512 units, dropout 0.2,
    2,200 updates (2.5 epochs of the training split; on one H100 GPU 41–51 s of updates,
    1.7–1.9 minutes for the slower Bahdanau decoder, scheduled sampling and the subword
    translator; sized with ``benchmarks/bench_full_profile.py`` so that the book's ``full``
    profile takes about 25 minutes there). ``steps`` or ``epochs``, whichever comes first,
    ends a run (on the course's corpus, ``steps`` in both profiles). Both:
    validation loss on a fixed random sample of 2,000 validation pairs
    (:func:`~seq2seq_lib.batches.sample_pairs`) every 250 updates.

    Args:
        variant: :class:`~seq2seq_lib.attention_seq2seq.TranslatorConfig` fields that differ
            from chapter 8's translator (a Luong decoder with the general score), e.g.
            ``style="bahdanau"``.
        teacher_forcing: ``"always"``, or ``"scheduled"`` (:func:`scheduled_translator` over
            the :func:`planned_updates`).
        seed: seeds the initial weights (``torch.manual_seed`` before the model is built)
            and the training run (``TrainConfig.seed``: the order of the batches, coins of
            scheduled sampling); the chapters use 0, other seeds measure how much a result
            owes to chance.
        lr: Adam's learning rate, if not the profile's (quick :math:`5 \\cdot 10^{-3}`, full
            :math:`10^{-3}`).
    """
    if teacher_forcing not in TEACHER_FORCING:
        raise ValueError(f"teacher_forcing must be one of {TEACHER_FORCING}, "
                         f"got {teacher_forcing!r}")
    model = TranslatorConfig(
        len(data.src_vocab), len(data.tgt_vocab), embed_size=run.pick(quick=128, full=256),
        hidden_size=run.pick(quick=128, full=512), num_layers=run.pick(quick=1, full=2),
        dropout=run.pick(quick=0.0, full=0.2), **variant,
    )
    train = TrainConfig(
        lr=run.pick(quick=5e-3, full=1e-3) if lr is None else lr, batch_size=128,
        epochs=run.pick(quick=2, full=3),
        steps=run.pick(quick=1000, full=2200), log_every=25, valid_every=250, valid_pairs=2000,
        valid_batch_size=256, seed=seed,
    )
    if teacher_forcing == "scheduled":
        planned = planned_updates(train, len(data.train))
        train = dataclasses.replace(train, teacher_forcing=scheduled_translator(planned))
    name = f"translator-{model.style}-{model.score or 'plain'}"
    name += "-reversed" * model.reverse_source
    name += "-scheduled" * (teacher_forcing == "scheduled")
    name += f"-lr{train.lr:g}" * (lr is not None)
    name += f"-seed{seed}" * (seed != 0)
    return Plan(name, TranslatorModel, model, train, {**DATA, "summary": data.summary()})


def train_translator(run: Run, data: TranslationData, *, progress: bool = True,
                     pause_at: int | None = None, **variant: Any) -> Trained:
    """Train (or load) the translator ``variant`` (the keyword arguments of
    :func:`translator_plan`) on ``data``'s training split. Its history
    (:func:`seq2seq_lib.training.train`) includes the validation loss;
    ``trained.model.config`` rebuilds the architecture (e.g. to export it for
    ``seq2seq-translate``). ``pause_at``: train only up to that update and save the run, to
    be continued by the next call (:func:`seq2seq_lib.cache.train_or_load`)."""
    return train_plan(translator_plan(run, data, **variant), data, run, progress=progress,
                      pause_at=pause_at)


def translator_path(run: Run, data: TranslationData, **variant: Any) -> Path:
    """The cache file of :func:`train_translator` ``(run, data, **variant)``; it exists
    when the model is cached."""
    return plan_path(translator_plan(run, data, **variant), data, run)


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _train_in_worker(job: tuple[Plan, TranslationData, Run, int | None]) -> str:
    torch.set_num_threads(1)  # one core per model: repeatable bit for bit
    plan, data, run, pause_at = job
    return str(train_plan(plan, data, run, progress=False, pause_at=pause_at).path)


def train_translators(run: Run, data: TranslationData,
                      variants: Mapping[str, Mapping[str, Any]], *,
                      workers: int | None = None,
                      pause_at: int | None = None) -> dict[str, Trained]:
    """Train (or load) several translators: ``{label: train_translator(run, data, **kw)}``.

    On the CPU, the models that are not cached yet are trained side by side, one per worker
    process with one thread each (``workers`` defaults to the number of usable cores); each
    result is the same, bit for bit, as training it alone with one thread. On a GPU they are
    trained one after the other. ``pause_at``: train each only up to that update, to be
    continued by the next call (:func:`train_translator`). Returns the models in the order
    of ``variants``; each variant is planned once.
    """
    plans = {label: translator_plan(run, data, **kw) for label, kw in variants.items()}
    missing = [plan for plan in plans.values() if not plan_path(plan, data, run).exists()]
    if workers is None:
        workers = _usable_cpus() if run.device.type == "cpu" else 1
    workers = min(workers, len(missing))
    if workers > 1:
        context = multiprocessing.get_context("spawn")  # fork + torch threads can deadlock
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            list(pool.map(_train_in_worker, [(plan, data, run, pause_at) for plan in missing]))
    return {label: train_plan(plan, data, run, pause_at=pause_at)
            for label, plan in plans.items()}
