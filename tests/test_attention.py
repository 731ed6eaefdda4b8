"""Chapter 8's attention: masking, normalisation, shapes, and each score by hand."""

import math

import pytest
import torch

from seq2seq_lib import attention as att


def test_masked_softmax_zero_on_pads_and_sums_to_one():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(3, 4, 5, generator=g) * 10
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    w = att.masked_softmax(scores, mask)
    assert w.shape == scores.shape
    assert torch.all(w[1, :, 2:] == 0) and torch.all(w[2, :, 1:] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 4))
    torch.testing.assert_close(w[2, :, 0], torch.ones(4))
    # the real positions get the softmax of the real scores alone
    torch.testing.assert_close(w[1, :, :2], torch.softmax(scores[1, :, :2], -1))


def test_masked_softmax_ignores_huge_scores_on_pads_and_2d_input():
    scores = torch.tensor([[1.0, 2.0, 1e9]])
    w = att.masked_softmax(scores, torch.tensor([[True, True, False]]))
    torch.testing.assert_close(w, torch.tensor([[1 / (1 + math.e), math.e / (1 + math.e), 0.0]]))
    torch.testing.assert_close(att.masked_softmax(scores[:, :2], None), w[:, :2])


def test_masked_softmax_bad_masks():
    with pytest.raises(ValueError, match="no real token"):
        att.masked_softmax(torch.zeros(2, 3), torch.tensor([[True, False, False], [False] * 3]))
    with pytest.raises(TypeError):
        att.masked_softmax(torch.zeros(1, 3), torch.ones(1, 3))
    with pytest.raises(ValueError, match="mask must be"):
        att.masked_softmax(torch.zeros(1, 3), torch.ones(1, 4, dtype=torch.bool))


def test_no_gradient_reaches_padded_scores():
    scores = torch.randn(2, 4, requires_grad=True)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    (att.masked_softmax(scores, mask) * torch.arange(4.0)).sum().backward()
    assert torch.all(scores.grad[0, 2:] == 0)


# Hand-computed examples: h_t = (1, 2), keys h̄_1 = (3, 0), h̄_2 = (1, -1)
Q = torch.tensor([[1.0, 2.0]])
K = torch.tensor([[[3.0, 0.0], [1.0, -1.0]]])


def test_dot_score_by_hand():
    torch.testing.assert_close(att.DotScore()(Q, K), torch.tensor([[3.0, -1.0]]))


def test_general_score_by_hand():
    s = att.GeneralScore(2, 2)
    with torch.no_grad():
        s.W_a.copy_(torch.tensor([[1.0, 0.0], [2.0, 1.0]]))
    # h_tᵀ W_a = (1*1 + 2*2, 1*0 + 2*1) = (5, 2); · (3, 0) = 15; · (1, -1) = 3
    torch.testing.assert_close(s(Q, K), torch.tensor([[15.0, 3.0]]))


def test_concat_score_by_hand():
    s = att.ConcatScore(2, 2, attention_size=1)
    with torch.no_grad():
        s.W_a.weight.copy_(torch.tensor([[1.0, 0.0, 0.0, 1.0]]))  # picks h_t[0] + h̄_s[1]
        s.v_a.weight.copy_(torch.tensor([[2.0]]))
    expected = torch.tensor([[2 * math.tanh(1.0 + 0.0), 2 * math.tanh(1.0 - 1.0)]])
    torch.testing.assert_close(s(Q, K), expected)


def test_concat_equals_literal_concatenation_and_additive():
    g = torch.Generator().manual_seed(1)
    torch.manual_seed(0)
    s = att.ConcatScore(3, 4, attention_size=5)
    q, k = torch.randn(2, 6, 3, generator=g), torch.randn(2, 7, 4, generator=g)
    pairs = torch.cat([q.unsqueeze(2).expand(-1, -1, 7, -1), k.unsqueeze(1).expand(-1, 6, -1, -1)], -1)
    literal = s.v_a(torch.tanh(s.W_a(pairs))).squeeze(-1)  # v_aᵀ tanh(W_a [h_t; h̄_s])
    torch.testing.assert_close(s(q, k), literal)
    torch.testing.assert_close(att.concat_as_additive(s)(q, k), literal)


def test_additive_reuses_projected_keys():
    torch.manual_seed(0)
    s = att.AdditiveScore(3, 4, 5)
    q, k = torch.randn(2, 3), torch.randn(2, 7, 4)
    torch.testing.assert_close(s(q, k, projected_keys=s.project_keys(k)), s(q, k))


@pytest.mark.parametrize("kind", att.SCORES)
def test_shapes_single_and_batched_queries_agree(kind):
    torch.manual_seed(0)
    score = att.make_score(kind, 4, 4, attention_size=6)
    module = att.Attention(score)
    q, k = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    ctx, w = module(q, k, mask)
    assert ctx.shape == (2, 3, 4) and w.shape == (2, 3, 5)
    for t in range(3):
        ctx_t, w_t = module(q[:, t], k, mask)
        assert ctx_t.shape == (2, 4) and w_t.shape == (2, 5)
        torch.testing.assert_close(ctx_t, ctx[:, t])
        torch.testing.assert_close(w_t, w[:, t])
    torch.testing.assert_close(ctx[1], w[1] @ k[1])  # the context is the weighted sum
    assert torch.all(w[1, :, 3:] == 0)


def test_make_score_errors():
    with pytest.raises(ValueError, match="unknown score"):
        att.make_score("cosine", 2, 2)
    with pytest.raises(ValueError, match="query_size == key_size"):
        att.make_score("dot", 2, 3)
    with pytest.raises(ValueError, match="equal sizes"):
        att.DotScore()(torch.zeros(1, 2), torch.zeros(1, 3, 4))


def test_attention_checkers_both_ways(capsys):
    from seq2seq_lib.exercises.ch08 import check_general_score, check_masked_softmax

    def own_masked_softmax(scores, mask):
        if mask is None:
            return torch.softmax(scores, -1)
        mask = mask if scores.dim() == 2 else mask[:, None, :]
        return torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)

    check_masked_softmax(own_masked_softmax)
    check_general_score(lambda q, k, W: q @ W @ k.transpose(1, 2))
    assert capsys.readouterr().out.count("all checks passed") == 2
    with pytest.raises(AssertionError, match="itself"):  # the reference is the answer key
        check_masked_softmax(att.masked_softmax)

    def leaky(scores, mask):  # forgets the mask: pads get weight
        return torch.softmax(scores, -1)

    with pytest.raises(AssertionError, match="exactly 0"):
        check_masked_softmax(leaky)

    def after_softmax(scores, mask):  # masks after the softmax: real weights no longer sum to 1
        return torch.softmax(scores, -1) * mask.unsqueeze(1)

    with pytest.raises(AssertionError, match="weights differs"):
        check_masked_softmax(after_softmax)
    with pytest.raises(AssertionError, match="has shape"):
        check_general_score(lambda q, k, W: (q @ W @ k.transpose(1, 2)).transpose(1, 2))


@pytest.mark.parametrize("kind", ["dot", "general"])
def test_scaled_scores_divide_by_the_root_of_the_key_size(kind):
    torch.manual_seed(0)
    scaled = att.make_score(f"scaled_{kind}", 9, 9)
    assert isinstance(scaled, att.ScaledScore) and scaled.key_size == 9
    q, k = torch.randn(2, 3, 9), torch.randn(2, 5, 9)
    torch.testing.assert_close(scaled(q, k) * 3, scaled.score(q, k))  # sqrt(9) = 3
    plain = att.make_score(kind, 9, 9)
    if kind == "general":  # same W_a: the same scores, divided by 3
        plain.load_state_dict({"W_a": scaled.score.W_a.detach()})
    torch.testing.assert_close(scaled(q, k), plain(q, k) / 3)
    with pytest.raises(ValueError, match="query_size == key_size"):
        att.make_score("scaled_dot", 2, 3)
