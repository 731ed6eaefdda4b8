"""The synthetic long-dependency tasks, the trainer and the gradient norms through time."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lib.cells import LSTMCell
from seq2seq_lib.rnn import scratch_like
from seq2seq_lib.tasks import (
    IGNORE_INDEX,
    SequenceModel,
    adding_problem,
    cached_length_sweep,
    evaluate,
    first_token_task,
    hidden_grad_norms,
    lookahead_task,
    make_task,
    run_length_sweep,
    train_sequence_model,
    trained_sequence_model,
)


# -- adding problem -------------------------------------------------------------------------
@pytest.mark.parametrize("T", [2, 3, 10, 51])
def test_adding_problem_markers_and_targets(T):
    X, y = adding_problem(64, T, seed=1)
    assert X.shape == (64, T, 2) and y.shape == (64, 1) and X.dtype == torch.float32
    values, markers = X[..., 0], X[..., 1]
    assert ((values >= 0) & (values < 1)).all()
    assert set(markers.unique().tolist()) <= {0.0, 1.0}
    assert (markers.sum(1) == 2).all()  # exactly two markers
    half = T // 2
    assert (markers[:, :half].sum(1) == 1).all()  # one in the first half
    assert (markers[:, half:].sum(1) == 1).all()  # one in the second half
    torch.testing.assert_close(y[:, 0], (values * markers).sum(1))


def test_adding_problem_is_deterministic_and_seed_dependent():
    a, b = adding_problem(8, 20, seed=3), adding_problem(8, 20, seed=3)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], adding_problem(8, 20, seed=4)[0])
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    first = adding_problem(8, 20, g1)[0]
    assert torch.equal(first, adding_problem(8, 20, g2)[0])
    assert torch.equal(first, a[0])  # an int seed s means a fresh generator seeded with s
    assert not torch.equal(adding_problem(8, 20, g1)[0], first)  # a generator advances


def test_adding_problem_chance_level_is_one_sixth():
    _, y = adding_problem(200_000, 10, seed=0)
    mse_of_one = ((y - 1.0) ** 2).mean().item()
    assert abs(mse_of_one - 2 / 12) < 0.003
    assert make_task("adding", 10).chance == pytest.approx(2 / 12)


# -- first-token task ---------------------------------------------------------------------------
def test_first_token_task_layout():
    K, M, T = 3, 5, 12
    X, y = first_token_task(500, T, num_classes=K, num_distractors=M, seed=2)
    assert X.shape == (500, T, K + M) and y.shape == (500,) and y.dtype == torch.int64
    assert torch.equal(X.sum(-1), torch.ones(500, T))  # one-hot
    tokens = X.argmax(-1)
    assert torch.equal(tokens[:, 0], y)
    assert ((y >= 0) & (y < K)).all() and set(y.tolist()) == set(range(K))
    assert ((tokens[:, 1:] >= K) & (tokens[:, 1:] < K + M)).all()  # distractors only after
    assert torch.equal(X, first_token_task(500, T, K, M, seed=2)[0])
    assert not torch.equal(X, first_token_task(500, T, K, M, seed=3)[0])


def test_first_token_task_same_vocabulary_distractors():
    X, y = first_token_task(400, 9, num_classes=4, num_distractors=0, seed=0)
    assert X.shape == (400, 9, 4)
    tokens = X.argmax(-1)
    assert torch.equal(tokens[:, 0], y)
    assert set(tokens[:, 1:].unique().tolist()) == {0, 1, 2, 3}
    assert make_task("first_token", 9, 4, 0).chance == pytest.approx(0.25)


def test_bad_task_arguments():
    with pytest.raises(ValueError, match="seq_len"):
        adding_problem(4, 1)
    with pytest.raises(ValueError, match="batch_size"):
        first_token_task(0, 5)
    with pytest.raises(ValueError, match="num_classes"):
        first_token_task(4, 5, num_classes=1)
    with pytest.raises(TypeError, match="seed"):
        adding_problem(4, 5, seed=1.5)
    with pytest.raises(ValueError, match="task"):
        make_task("copy", 5)
    with pytest.raises(ValueError, match="cell_type"):
        SequenceModel("transformer", 2, 3, 1)


# -- model and training -------------------------------------------------------------------------
def test_keep_bias_opens_the_keep_gate():
    torch.manual_seed(0)
    h = 6
    base = SequenceModel("lstm", 3, h, 2)
    torch.manual_seed(0)
    kept = SequenceModel("lstm", 3, h, 2, keep_bias=1.0)
    diff = kept.rnn.bias_ih_l0 - base.rnn.bias_ih_l0
    torch.testing.assert_close(diff[h : 2 * h], torch.ones(h))  # forget gate (i, f, g, o)
    torch.testing.assert_close(diff[:h], -torch.ones(h))  # input gate, chrono-style
    assert diff[2 * h :].abs().max() == 0
    torch.manual_seed(0)
    gru = SequenceModel("gru", 3, h, 2, keep_bias=2.0)
    torch.manual_seed(0)
    diff = gru.rnn.bias_ih_l0 - SequenceModel("gru", 3, h, 2).rnn.bias_ih_l0
    torch.testing.assert_close(diff[h : 2 * h], torch.full((h,), 2.0))  # update gate (r, z, n)


def test_training_learns_a_short_task_and_is_deterministic():
    task = make_task("first_token", 3)
    histories = []
    for _ in range(2):
        torch.manual_seed(0)
        model = SequenceModel("gru", task.input_size, 16, task.output_size)
        histories.append(train_sequence_model(model, task, steps=60, lr=0.02, log_every=20))
    assert histories[0]["loss"] == histories[1]["loss"]
    assert histories[0]["step"] == [20, 40, 60]
    acc = evaluate(model, task, batch_size=500)
    assert acc > 0.95, acc  # chance is 0.25


def test_adding_task_training_beats_chance_for_short_sequences():
    task = make_task("adding", 4)
    torch.manual_seed(0)
    model = SequenceModel("lstm", 2, 16, 1)
    train_sequence_model(model, task, steps=150, batch_size=64, lr=0.01)
    assert evaluate(model, task, batch_size=500) < 0.5 * task.chance


# -- gradient norms through time ---------------------------------------------------------------
@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_hidden_grad_norms_are_the_total_derivatives(kind):
    """Restart the recurrence from a leaf copy of H_t: its gradient is dL/dH_t."""
    task = make_task("first_token", 7)
    torch.manual_seed(0)
    model = SequenceModel(kind, task.input_size, 5, task.output_size)
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
    model = SequenceModel("rnn", task.input_size, 16, task.output_size)
    X, y = task.sample(32, seed=0)
    norms = hidden_grad_norms(model, X, y, task)
    assert norms[0] < 1e-3 * norms[-1]


# -- look-ahead tagging ---------------------------------------------------------------------------
@pytest.mark.parametrize(("T", "V", "lag"), [(2, 2, 1), (9, 5, 3), (20, 8, 2)])
def test_lookahead_task_tags_are_later_tokens(T, V, lag):
    X, y = lookahead_task(64, T, vocab_size=V, lag=lag, seed=4)
    assert X.shape == (64, T, V) and X.dtype == torch.float32
    assert y.shape == (64, T) and y.dtype == torch.int64
    assert torch.equal(X.sum(-1), torch.ones(64, T))
    tokens = X.argmax(-1)
    assert torch.equal(y[:, : T - lag], tokens[:, lag:])
    assert (y[:, T - lag :] == IGNORE_INDEX).all()
    assert torch.equal(X, lookahead_task(64, T, V, lag, seed=4)[0])
    assert not torch.equal(X, lookahead_task(64, T, V, lag, seed=5)[0])


def test_lookahead_task_tags_are_independent_of_the_past():
    """A causal tagger cannot beat 1/V: the tag x_{t+lag} is independent of x_1..x_t."""
    X, y = lookahead_task(20_000, 6, vocab_size=4, lag=2, seed=0)
    tokens = X.argmax(-1)
    for t in range(4):
        joint = torch.zeros(4, 4)
        joint.index_put_((tokens[:, t], y[:, t]), torch.ones(20_000), accumulate=True)
        cond = joint / joint.sum(1, keepdim=True)  # P(tag | current token)
        assert (cond - 0.25).abs().max() < 0.03


def test_bad_lookahead_arguments():
    with pytest.raises(ValueError, match="lag"):
        lookahead_task(4, 5, lag=0)
    with pytest.raises(ValueError, match="seq_len"):
        lookahead_task(4, 2, lag=2)
    with pytest.raises(ValueError, match="vocab_size"):
        lookahead_task(4, 5, vocab_size=1)


# -- the cached models of the length sweep --------------------------------------------------------
def test_trained_sequence_model_is_the_sweep_recipe_and_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    kwargs = dict(hidden_size=8, steps=20, batch_size=16, lr=0.02, seed=3)
    first = trained_sequence_model("gru", "first_token", 5, **kwargs)
    second = trained_sequence_model("gru", "first_token", 5, **kwargs)
    assert (first.loaded, second.loaded) == (False, True)
    assert second.history == first.history
    sweep = run_length_sweep(("gru",), (5,), hidden_size=8, steps=20, batch_size=16, lr=0.02,
                             seed=3)  # fmt: skip
    assert first.history["metric"] == sweep[0]["accuracy"]
    assert first.history["loss"][-1] == sweep[0]["final_loss"]
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
