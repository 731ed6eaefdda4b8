"""The model of the synthetic tasks, its trainer, gradient norms through time, cached sweeps."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lib.cells import LSTMCell
from seq2seq_lib.rnn import scratch_like
from seq2seq_lib.sequence_model import (
    SequenceConfig,
    SequenceModel,
    cached_length_sweep,
    evaluate,
    hidden_grad_norms,
    train_sequence_model,
    trained_sequence_model,
)
from seq2seq_lib.tasks import make_task


# -- model and training -------------------------------------------------------------------------
def test_bad_model_arguments():
    with pytest.raises(ValueError, match="cell_type"):
        SequenceModel(SequenceConfig("transformer", 2, 3, 1))


def test_keep_bias_opens_the_keep_gate():
    torch.manual_seed(0)
    h = 6
    base = SequenceModel(SequenceConfig("lstm", 3, h, 2))
    torch.manual_seed(0)
    kept = SequenceModel(SequenceConfig("lstm", 3, h, 2, keep_bias=1.0))
    diff = kept.rnn.bias_ih_l0 - base.rnn.bias_ih_l0
    torch.testing.assert_close(diff[h : 2 * h], torch.ones(h))  # forget gate (i, f, g, o)
    torch.testing.assert_close(diff[:h], -torch.ones(h))  # input gate, chrono-style
    assert diff[2 * h :].abs().max() == 0
    torch.manual_seed(0)
    gru = SequenceModel(SequenceConfig("gru", 3, h, 2, keep_bias=2.0))
    torch.manual_seed(0)
    diff = gru.rnn.bias_ih_l0 - SequenceModel(SequenceConfig("gru", 3, h, 2)).rnn.bias_ih_l0
    torch.testing.assert_close(diff[h : 2 * h], torch.full((h,), 2.0))  # update gate (r, z, n)


def test_training_learns_a_short_task_and_is_deterministic():
    task = make_task("first_token", 3)
    histories = []
    for _ in range(2):
        torch.manual_seed(0)
        model = SequenceModel(SequenceConfig("gru", task.input_size, 16, task.output_size))
        histories.append(train_sequence_model(model, task, steps=60, lr=0.02, log_every=20))
    assert histories[0]["loss"] == histories[1]["loss"]
    assert histories[0]["step"] == [20, 40, 60]
    acc = evaluate(model, task, batch_size=500)
    assert acc > 0.95, acc  # chance is 0.25


def test_adding_task_training_beats_chance_for_short_sequences():
    task = make_task("adding", 4)
    torch.manual_seed(0)
    model = SequenceModel(SequenceConfig("lstm", 2, 16, 1))
    train_sequence_model(model, task, steps=150, batch_size=64, lr=0.01)
    assert evaluate(model, task, batch_size=500) < 0.5 * task.chance


# -- gradient norms through time ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_hidden_grad_norms_are_the_total_derivatives(kind):
    """Restart the recurrence from a leaf copy of H_t: its gradient is dL/dH_t."""
    task = make_task("first_token", 7)
    torch.manual_seed(0)
    model = SequenceModel(SequenceConfig(kind, task.input_size, 5, task.output_size))
    X, y = task.sample(4, seed=1)
    norms = hidden_grad_norms(model, X, y, task)
    assert norms.shape == (7,) and (norms > 0).all()
    cell = scratch_like(model.rnn).cells[0]
    is_lstm = isinstance(cell, LSTMCell)
    for t in (0, 3, 6):
        state = cell.init_state(4, like=X)
        with torch.no_grad():
            for s in range(t + 1):
                state = cell.step(cell.project_input(X[:, s]), state)
        H_t = (state[0] if is_lstm else state).clone().requires_grad_(True)
        state = (H_t, state[1]) if is_lstm else H_t
        for s in range(t + 1, 7):
            state = cell.step(cell.project_input(X[:, s]), state)
        H_T = state[0] if is_lstm else state
        (grad,) = torch.autograd.grad(task.loss_fn(model.head(H_T), y), H_t)
        torch.testing.assert_close(norms[t], grad.norm(), atol=1e-6, rtol=1e-5)


def test_vanilla_rnn_gradient_vanishes_through_time():
    task = make_task("first_token", 40)
    torch.manual_seed(0)
    model = SequenceModel(SequenceConfig("rnn", task.input_size, 16, task.output_size))
    X, y = task.sample(32, seed=0)
    norms = hidden_grad_norms(model, X, y, task)
    assert norms[0] < 1e-3 * norms[-1]


# -- the cached models of the length sweep --------------------------------------------------------
def test_trained_sequence_model_is_the_plain_recipe_and_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    kwargs = dict(hidden_size=8, steps=20, batch_size=16, lr=0.02, seed=3)
    first = trained_sequence_model("gru", "first_token", 5, **kwargs)
    second = trained_sequence_model("gru", "first_token", 5, **kwargs)
    assert (first.loaded, second.loaded) == (False, True)
    assert second.history == first.history
    task = make_task("first_token", 5)  # the recipe by hand: seed, build, train, evaluate
    torch.manual_seed(3)
    model = SequenceModel(SequenceConfig("gru", task.input_size, 8, task.output_size, keep_bias=3.0))
    history = train_sequence_model(model, task, steps=20, batch_size=16, lr=0.02, seed=3)
    assert first.history["metric"] == evaluate(model, task)
    assert first.history["loss"] == history["loss"]
    rnn = trained_sequence_model("rnn", "first_token", 5, keep_bias=3.0, **kwargs)
    again = trained_sequence_model("rnn", "first_token", 5, keep_bias=0.0, **kwargs)
    assert again.loaded and again.path == rnn.path  # an RNN has no gate to bias


def test_cached_length_sweep_collects_the_cached_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    kwargs = dict(hidden_size=6, steps=10, batch_size=8)
    sweep = cached_length_sweep("lstm", [3, 4], seeds=[0, 1], **kwargs)
    assert list(sweep) == [3, 4] and all(len(v) == 2 for v in sweep.values())
    for T in (3, 4):
        for i, s in enumerate((0, 1)):
            one = trained_sequence_model("lstm", "first_token", T, seed=s, **kwargs)
            assert one.loaded and one.history["metric"] == sweep[T][i]
    assert len(list(tmp_path.glob("*.pt"))) == 4
