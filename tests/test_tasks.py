"""The synthetic long-dependency tasks: layouts, determinism, chance levels, bad arguments."""

from __future__ import annotations

import pytest
import torch

from seq2seq_lib.tasks import (
    IGNORE_INDEX,
    adding_problem,
    first_token_task,
    lookahead_task,
    make_task,
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
