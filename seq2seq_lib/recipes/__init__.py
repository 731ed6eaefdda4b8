"""Recipes: the models the chapters train, each planned, trained once and cached.

A recipe turns a run's profile (:class:`~seq2seq_lib.device.Run`) and the data into a
:class:`Plan` — the cache name, the model's class and configuration, the training run and
the data settings — and trains it with :func:`train_plan` through
:func:`seq2seq_lib.cache.train_or_load`: the first call trains, every later call (in the
same chapter or a later one) loads. A chapter's recipes are in the module named after it:
:mod:`seq2seq_lib.recipes.ch07` (the LSTM seq2seq and the French→English data),
:mod:`seq2seq_lib.recipes.ch08` (the GRU translators), :mod:`seq2seq_lib.recipes.ch11` (the
variants of the ablation). The model files hold models only.

Everything a training run uses is passed to it, not captured: the functions that build and
train a model are module-level functions bound with ``functools.partial`` to the plan's
class, configuration and data, so the cache key sees exactly the library code they use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch import nn

from seq2seq_lib import cache
from seq2seq_lib.batches import TranslationData
from seq2seq_lib.device import Run
from seq2seq_lib.training import TrainConfig, fit


@dataclass(frozen=True)
class Plan:
    """One model a chapter trains: the cache ``name``, the model's class and configuration,
    the training run and the data settings (``data``: part of the cache key)."""

    name: str
    model_class: type[nn.Module]
    model: Any
    train: TrainConfig
    data: dict[str, Any]

    def key(self) -> dict[str, Any]:
        """The hyper-parameters that identify the trained model (the cache key's config)."""
        return {"model": self.model, "train": self.train, "data": self.data}


def build_model(model_class: type[nn.Module], config: Any, seed: int) -> nn.Module:
    """A fresh ``model_class(config)``, its weights drawn after ``torch.manual_seed(seed)``."""
    torch.manual_seed(seed)
    return model_class(config)


def fit_model(model: nn.Module, *, config: TrainConfig, data: TranslationData, run: Run,
              progress: bool = True, **resume: Any) -> dict[str, Any]:
    """:func:`seq2seq_lib.training.fit` of ``model`` on ``data``; ``resume`` holds the
    keywords :func:`seq2seq_lib.cache.train_or_load` passes to continue a paused run."""
    return fit(model, data, config, run=run, progress=progress, **resume)


def _job(plan: Plan, data: TranslationData, run: Run,
         progress: bool) -> tuple[str, dict[str, Any], Any, Any]:
    """``(name, key, build, train)`` as :func:`~seq2seq_lib.cache.train_or_load` takes them."""
    build = partial(build_model, plan.model_class, plan.model, plan.train.seed)
    train = partial(fit_model, config=plan.train, data=data, run=run, progress=progress)
    return plan.name, plan.key(), build, train


def train_plan(plan: Plan, data: TranslationData, run: Run, *, progress: bool = True,
               pause_at: int | None = None) -> cache.Trained:
    """Train (or load) the model of ``plan`` on ``data``'s training split, on ``run.device``
    (a smoke run, ``run.smoke``: a few updates).
    ``pause_at``: train only up to that update and save the run, to be continued by the next
    call (:func:`seq2seq_lib.cache.train_or_load`)."""
    name, key, build, train = _job(plan, data, run, progress)
    return cache.train_or_load(name, key, build, train, run=run, pause_at=pause_at)


def plan_path(plan: Plan, data: TranslationData, run: Run) -> Path:
    """The cache file of :func:`train_plan`; it exists when the model is cached."""
    return cache.cache_path(*_job(plan, data, run, False), run=run)
