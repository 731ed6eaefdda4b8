"""Training an encoder–decoder: masked cross-entropy, teacher forcing, scheduled sampling.

One update on a batch of pairs :math:`(x, y)`:

.. math::

    L &= \\frac{1}{\\sum_{b,t} m_{b,t}} \\sum_{b,t} m_{b,t}\\,
        \\bigl(-\\log p(y_{b,t} \\mid \\tilde y_{b,<t}, x_b)\\bigr), \\\\
    \\theta &\\leftarrow
    \\operatorname{Adam}\\bigl(\\theta, \\operatorname{clip}(\\nabla_\\theta L, \\tau)\\bigr),

with :math:`m` the padding mask (:func:`seq2seq_lib.losses.masked_cross_entropy`) and
:math:`\\tilde y_{<t}` the decoder's inputs: the true previous tokens under **teacher forcing**
(ratio :math:`\\epsilon = 1`), the model's own greedy predictions under **free running**
(:math:`\\epsilon = 0`), or a per-token coin flip between the two. **Scheduled sampling**
(Bengio et al., 2015) lowers :math:`\\epsilon_i` with the update count :math:`i`
(:func:`scheduled_sampling`): the model starts with the easy, teacher-forced task and ends
close to the conditions of inference, where it reads its own outputs.

A :class:`TrainConfig` holds every choice of a training run (learning rate, batch size,
budget, clipping, teacher forcing, seed, logging); its defaults are written there only.
:func:`train` runs the loop over a given loader; :func:`fit` is the recipe the chapters share:
length-bucketed batches of a :class:`~seq2seq_lib.batches.TranslationData`'s training split
and the validation loss on a fixed random sample of its validation pairs.

:func:`train` keeps everything a chapter plots (loss per logged step and per epoch, the
teacher-forcing ratio) as plain Python numbers, so :func:`seq2seq_lib.cache.train_or_load`
can store it. With ``resume=`` it writes model, optimiser and history after every epoch
(a checkpoint of :mod:`seq2seq_lib.checkpoint`, written atomically) and resumes from that
file; every random draw of epoch :math:`k` (shuffling, dropout, coin flips) is seeded from
``(seed, k)``, so a resumed run continues exactly as an uninterrupted one would.
``pause_at=`` stops a run after that many updates, also in the middle of an epoch: the file
then also holds the position in the epoch, the states of the random generators and the
running sums, and the next call carries on bit for bit.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm import tqdm

from seq2seq_lib.batches import Batch, TranslationData, TranslationDataset, sample_pairs
from seq2seq_lib.buckets import bucket_loader
from seq2seq_lib.checkpoint import read_checkpoint, save_checkpoint
from seq2seq_lib.device import CPU, SMOKE_BATCH, SMOKE_UPDATES, Run
from seq2seq_lib.encoder_decoder import EncoderDecoder, eval_mode
from seq2seq_lib.losses import masked_cross_entropy
from seq2seq_lib.numerics import make_optimizer
from seq2seq_lib.vocab import PAD_ID

SCHEDULES = ("constant", "linear", "exponential", "inverse_sigmoid")
History = dict[str, Any]


def scheduled_sampling(
    step: int,
    kind: str = "inverse_sigmoid",
    *,
    k: float = 1000.0,
    c: float = 1e-3,
    eps_min: float = 0.0,
) -> float:
    """The teacher-forcing ratio :math:`\\epsilon_i` after ``step`` = :math:`i` updates.

    The three decays of Bengio et al. (2015), plus a constant:

    * ``"linear"``: :math:`\\epsilon_i = \\max(\\epsilon_{min}, k - c\\,i)` (use ``k <= 1``);
    * ``"exponential"``: :math:`\\epsilon_i = k^i` with :math:`k < 1`;
    * ``"inverse_sigmoid"``: :math:`\\epsilon_i = k / (k + \\exp(i / k))` with :math:`k \\ge 1`;
    * ``"constant"``: :math:`\\epsilon_i = k` (a fixed ratio in :math:`[0, 1]`).

    The result is clipped to :math:`[\\epsilon_{min}, 1]`.
    """
    if step < 0:
        raise ValueError(f"step must be >= 0, got {step}")
    if kind == "linear":
        eps = k - c * step
    elif kind == "exponential":
        if not 0 < k < 1:
            raise ValueError(f"exponential decay needs 0 < k < 1, got {k}")
        eps = k**step
    elif kind == "inverse_sigmoid":
        if k < 1:
            raise ValueError(f"inverse sigmoid decay needs k >= 1, got {k}")
        z = step / k
        eps = 0.0 if z > 700 else k / (k + math.exp(z))
    elif kind == "constant":
        eps = k
    else:
        raise ValueError(f"kind must be one of {SCHEDULES}, got {kind!r}")
    return float(min(1.0, max(eps_min, eps)))


@dataclass(frozen=True)
class Schedule:
    """A teacher-forcing schedule :math:`i \\mapsto \\epsilon_i`: :func:`scheduled_sampling`
    with these arguments, as data (so that a :class:`TrainConfig` holding it can be written
    as JSON, e.g. into a cache key). Call it with the update count."""

    kind: str
    k: float
    c: float = 1e-3
    eps_min: float = 0.0

    def __post_init__(self) -> None:
        scheduled_sampling(0, self.kind, k=self.k, c=self.c, eps_min=self.eps_min)  # validates

    def __call__(self, step: int) -> float:
        return scheduled_sampling(step, self.kind, k=self.k, c=self.c, eps_min=self.eps_min)


@dataclass(frozen=True)
class TrainConfig:
    """Every choice of a training run (:func:`train`, :func:`fit`).

    Attributes:
        lr: Adam's learning rate.
        batch_size: sentence pairs per update (:func:`fit` makes the batches).
        epochs: passes over the training data.
        steps: stop after this many updates in total (``None``: run all ``epochs``).
        clip: maximum global gradient norm :math:`\\tau` (``None``: no clipping).
        teacher_forcing: a ratio :math:`\\epsilon \\in [0, 1]`, or a schedule
            ``update -> ratio``: a :class:`Schedule` (what a cached recipe must use: it is
            data), or any function.
        seed: seeds the shuffling, dropout and teacher-forcing coins of every epoch.
        log_every: record the mean training loss of every ``log_every`` updates.
        valid_every: also record the validation loss every ``valid_every`` updates.
        valid_pairs: :func:`fit` validates on a fixed random sample of ``valid_pairs``
            validation pairs (:func:`~seq2seq_lib.batches.sample_pairs`, seed 0, the same
            sample whatever ``seed``; ``None``: all of them) ...
        valid_batch_size: ... in batches of this size.
    """

    lr: float = 1e-3
    batch_size: int = 64
    epochs: int = 1
    steps: int | None = None
    clip: float | None = 1.0
    teacher_forcing: float | Schedule | Callable[[int], float] = 1.0
    seed: int = 0
    log_every: int = 50
    valid_every: int | None = None
    valid_pairs: int | None = None
    valid_batch_size: int = 256

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"epochs must be >= 0, got {self.epochs}")
        if self.batch_size < 1 or self.valid_batch_size < 1:
            raise ValueError(f"batch sizes must be >= 1, got {self.batch_size}, "
                             f"{self.valid_batch_size}")
        if self.log_every < 1:
            raise ValueError(f"log_every must be >= 1, got {self.log_every}")
        if self.valid_every is not None and self.valid_every < 1:
            raise ValueError(f"valid_every must be >= 1, got {self.valid_every}")
        _as_schedule(self.teacher_forcing)  # a ratio in [0, 1] or a schedule


def _as_schedule(teacher_forcing: float | Callable[[int], float]) -> Callable[[int], float]:
    if callable(teacher_forcing):
        return teacher_forcing
    ratio = float(teacher_forcing)
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"teacher_forcing must be in [0, 1] or a schedule, got {ratio}")
    return lambda step: ratio


def _reseed_loader(loader: Iterable[Any], seed: int) -> None:
    """Seed the shuffling of a DataLoader (its sampler's or batch sampler's generator)."""
    for name in ("sampler", "batch_sampler"):
        generator = getattr(getattr(loader, name, None), "generator", None)
        if isinstance(generator, torch.Generator):
            generator.manual_seed(seed)


@torch.no_grad()
def evaluate_loss(
    model: EncoderDecoder,
    loader: Iterable[Batch],
    *,
    device: torch.device | str = "cpu",
    teacher_forcing: float = 1.0,
) -> float:
    """Mean per-token masked cross-entropy over ``loader`` in eval mode.

    ``teacher_forcing=0`` scores the gold tokens after the model's *own* greedy prefixes
    (free running), which shows the exposure bias of a teacher-forced model.
    """
    total, tokens = 0.0, 0
    with eval_mode(model):
        for batch in loader:
            batch = batch.to(device)
            logits = model(
                batch.src, batch.src_lengths, batch.tgt_in, teacher_forcing=teacher_forcing
            )
            total += float(masked_cross_entropy(logits, batch.tgt_out, PAD_ID, reduction="sum"))
            tokens += batch.num_tokens
    return total / max(tokens, 1)


def train(
    model: EncoderDecoder,
    loader: Iterable[Batch],
    config: TrainConfig,
    *,
    valid_loader: Iterable[Batch] | None = None,
    run: Run = CPU,
    resume: str | os.PathLike[str] | None = None,
    progress: bool = True,
    fused: bool | None = None,
    callback: Callable[[History], None] | None = None,
    pause_at: int | None = None,
) -> History:
    """Train ``model`` in place with Adam on the masked cross-entropy; return its history.

    Args:
        model: an :class:`~seq2seq_lib.encoder_decoder.EncoderDecoder` (on ``run.device``).
        loader: yields :class:`~seq2seq_lib.batches.Batch` es (``make_loader`` or
            ``bucket_loader``; its shuffle generator is reseeded from ``(seed, epoch)`` at
            each epoch).
        config: the learning rate, budget (``epochs``, ``steps``), ``clip``,
            ``teacher_forcing``, ``seed`` and logging (``batch_size`` and the ``valid_*``
            sizes are :func:`fit`'s: here the loaders are given).
        valid_loader: if given, the teacher-forced validation loss after each epoch, and
            every ``config.valid_every`` updates (``history["valid_step"]``,
            ``history["valid_step_loss"]``).
        run: the :class:`~seq2seq_lib.device.Run` of :func:`~seq2seq_lib.device.setup`:
            batches go to ``run.device``; in a smoke run (``run.smoke``) training stops after
            ``SMOKE_UPDATES`` updates, logging and validating after each.
        resume: a file to save the run to after every epoch and to resume from if it exists.
        progress: show a progress bar. ``fused``: see :func:`~seq2seq_lib.numerics.make_optimizer`.
        callback: called with the history after every logged step (e.g. to evaluate).
        pause_at: stop once ``history["updates"]`` reaches this count and save everything
            needed to continue to ``resume`` (required); a later call with the same
            ``resume`` (and no ``pause_at``, or a later one) continues exactly where
            this one stopped. A run that ends before ``pause_at`` simply ends.

    Returns:
        ``{"step": [...], "step_loss": [...], "tf_ratio": [...], "epoch_loss": [...],
        "valid_loss": [...], "valid_step": [...], "valid_step_loss": [...], "updates": int,
        "tokens": int, "epochs_done": int}`` — plain Python numbers.
    """
    epochs, max_steps, log_every = config.epochs, config.steps, config.log_every
    valid_every, clip, seed = config.valid_every, config.clip, config.seed
    if run.smoke:  # a smoke run: the code path, not the result; log and validate every update
        max_steps = min(max_steps or SMOKE_UPDATES, SMOKE_UPDATES)
        log_every, valid_every = 1, (1 if valid_every is not None else None)
    if valid_every is not None and valid_loader is None:
        raise ValueError("valid_every needs a valid_loader")
    if pause_at is not None and resume is None:
        raise ValueError("pause_at needs a resume file to save the paused run to")
    schedule = _as_schedule(config.teacher_forcing)
    optimizer = make_optimizer(model.parameters(), config.lr, fused=fused)
    history: dict[str, Any] = {
        "step": [], "step_loss": [], "tf_ratio": [], "epoch_loss": [], "valid_loss": [],
        "valid_step": [], "valid_step_loss": [], "updates": 0, "tokens": 0, "epochs_done": 0,
    }
    paused: dict[str, Any] | None = None  # where a paused run stopped inside its epoch
    if resume is not None and Path(resume).exists():
        ckpt = read_checkpoint(resume, rebuild_model=False)
        model.load_state_dict(ckpt.state_dict)
        optimizer.load_state_dict(ckpt.training["optimizer"])
        history = ckpt.history
        paused = ckpt.training.get("paused")
    if pause_at is not None and history["updates"] >= pause_at:
        return history
    device = run.device
    rng_devices = [device] if device.type == "cuda" else []

    def save(paused_state: dict[str, Any] | None = None) -> None:
        training = {"optimizer": optimizer.state_dict(), "paused": paused_state}
        save_checkpoint(resume, model, history=history, training=training)  # type: ignore[arg-type]

    for epoch in range(history["epochs_done"], epochs):
        if max_steps is not None and history["updates"] >= max_steps:
            break
        epoch_seed = seed * 100_003 + epoch
        _reseed_loader(loader, epoch_seed)
        coins = torch.Generator().manual_seed(epoch_seed)
        model.train()
        with torch.random.fork_rng(devices=rng_devices):
            torch.manual_seed(epoch_seed)
            epoch_total, epoch_tokens, window, window_n, done = 0.0, 0, 0.0, 0, 0
            batches = iter(loader)  # (a DataLoader draws a seed from the global generator)
            if paused is not None:  # continue the epoch where the paused run stopped
                epoch_total, epoch_tokens = paused["epoch_total"], paused["epoch_tokens"]
                window, window_n, done = paused["window"], paused["window_n"], paused["batches"]
                for _ in range(done):  # the same shuffle: skip the batches already trained on
                    next(batches)
                coins.set_state(paused["coins"])
                torch.set_rng_state(paused["rng"])
                if rng_devices:
                    torch.cuda.set_rng_state(paused["cuda_rng"], device)
                paused = None
            bar = tqdm(
                batches, desc=f"epoch {epoch + 1}/{epochs}", file=sys.stderr, initial=done,
                total=_length(loader), disable=not progress, leave=False, mininterval=1.0,
            )
            for batch in bar:
                batch = batch.to(device)
                ratio = schedule(history["updates"])
                logits = model(
                    batch.src, batch.src_lengths, batch.tgt_in,
                    teacher_forcing=ratio, generator=coins,
                )
                loss = masked_cross_entropy(logits, batch.tgt_out, PAD_ID)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if clip is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), clip)
                optimizer.step()

                value, n_tok = loss.detach().item(), batch.num_tokens
                epoch_total += value * n_tok
                epoch_tokens += n_tok
                window += value
                window_n += 1
                done += 1
                history["updates"] += 1
                history["tokens"] += n_tok
                if history["updates"] % log_every == 0:
                    history["step"].append(history["updates"])
                    history["step_loss"].append(window / window_n)
                    history["tf_ratio"].append(ratio)
                    window, window_n = 0.0, 0
                    bar.set_postfix(loss=f"{history['step_loss'][-1]:.3f}", tf=f"{ratio:.2f}")
                    if callback is not None:
                        callback(history)
                if valid_every is not None and history["updates"] % valid_every == 0:
                    history["valid_step"].append(history["updates"])
                    history["valid_step_loss"].append(
                        evaluate_loss(model, valid_loader, device=device)  # type: ignore[arg-type]
                    )
                if max_steps is not None and history["updates"] >= max_steps:
                    break
                if pause_at is not None and history["updates"] >= pause_at:
                    bar.close()
                    save({"batches": done, "epoch_total": epoch_total,
                          "epoch_tokens": epoch_tokens, "window": window, "window_n": window_n,
                          "coins": coins.get_state(), "rng": torch.get_rng_state(),
                          "cuda_rng": torch.cuda.get_rng_state(device) if rng_devices else None})
                    return history
            bar.close()
        history["epoch_loss"].append(epoch_total / max(epoch_tokens, 1))
        if valid_loader is not None:
            history["valid_loss"].append(evaluate_loss(model, valid_loader, device=device))
        history["epochs_done"] = epoch + 1
        if resume is not None:
            save()
        if pause_at is not None and history["updates"] >= pause_at:
            return history
    return history


def _length(loader: Iterable[Any]) -> int | None:
    """The number of batches per epoch, where the loader knows it."""
    try:
        return len(loader)  # type: ignore[arg-type]
    except TypeError:
        return None


def fit(
    model: EncoderDecoder,
    data: TranslationData,
    config: TrainConfig,
    *,
    run: Run = CPU,
    progress: bool = True,
    resume: str | os.PathLike[str] | None = None,
    pause_at: int | None = None,
) -> History:
    """Train ``model`` on ``data``'s training split: :func:`train` over length-bucketed
    batches of ``config.batch_size`` pairs (:func:`~seq2seq_lib.buckets.bucket_loader`),
    validated on a fixed random sample of ``config.valid_pairs`` validation pairs
    (:func:`~seq2seq_lib.batches.sample_pairs`, seed 0: not the first rows, which are the
    shortest sentences). Sources are reversed when ``model.reverse_source``. ``run``: the
    device and the smoke switch (see :func:`train`; a smoke run also uses batches of at most
    ``SMOKE_BATCH`` pairs). ``resume`` and ``pause_at``: save, pause and resume (see
    :func:`train`)."""
    rev = model.reverse_source
    batch_size = min(config.batch_size, SMOKE_BATCH) if run.smoke else config.batch_size
    loader = bucket_loader(data.dataset("train"), batch_size, reverse_source=rev)
    valid_set = TranslationDataset(sample_pairs(data.valid, config.valid_pairs),
                                   data.src_vocab, data.tgt_vocab)
    valid = bucket_loader(valid_set, config.valid_batch_size, shuffle=False, reverse_source=rev)
    return train(model, loader, config, valid_loader=valid, run=run, progress=progress,
                 resume=resume, pause_at=pause_at)
