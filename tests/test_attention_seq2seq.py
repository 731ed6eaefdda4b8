"""Chapter 8's attention decoders: step == teacher-forced, padding-invariant, weights well formed."""

import pytest
import torch

from seq2seq_lib.attention_seq2seq import attention_model, source_mask
from seq2seq_lib.data import PAD_ID
from seq2seq_lib.encoder_decoder import select_state

CONFIGS = [("luong", "general", False), ("luong", "dot", True), ("luong", "concat", False),
           ("bahdanau", "additive", False), ("bahdanau", "general", False), ("none", None, False)]


def make(style, score, feeding, seed=0):
    torch.manual_seed(seed)
    return attention_model(30, 25, style=style, score=score, embed_size=8, hidden_size=12,
                           input_feeding=feeding).eval()


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 30, (3, 6), generator=g)
    lengths = torch.tensor([6, 2, 4])
    src[1, 2:] = PAD_ID
    src[2, 4:] = PAD_ID
    tgt_in = torch.randint(4, 25, (3, 5), generator=g)
    return src, lengths, tgt_in


@pytest.mark.parametrize("style, score, feeding", CONFIGS)
def test_step_by_step_equals_teacher_forced(style, score, feeding):
    model = make(style, score, feeding)
    src, lengths, tgt_in = batch()
    full = model(src, lengths, tgt_in)
    state = model.init_state(src, lengths)
    steps = []
    for t in range(tgt_in.shape[1]):
        logits, state = model.decoder(tgt_in[:, t:t + 1], state)
        steps.append(logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("style, score, feeding", CONFIGS)
def test_padding_changes_nothing(style, score, feeding):
    model = make(style, score, feeding)
    src, lengths, tgt_in = batch()
    full = model(src, lengths, tgt_in)
    alone = model(src[1:2, :2], lengths[1:2], tgt_in[1:2])  # sentence 1 without its padding
    torch.testing.assert_close(full[1:2], alone, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("style, score", [("luong", "general"), ("bahdanau", "additive")])
def test_attention_weights_are_a_distribution_over_real_tokens(style, score):
    model = make(style, score, False)
    src, lengths, tgt_in = batch()
    state = model.init_state(src, lengths)
    _, state = model.decoder(tgt_in, state)
    w = state["attention"]
    assert w.shape == (3, 5, 6)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 5))
    assert torch.all(w[1, :, 2:] == 0) and torch.all(w[2, :, 4:] == 0)


def test_luong_output_follows_the_equations():
    model = make("luong", "dot", False)
    src, lengths, tgt_in = batch()
    dec = model.decoder
    state = model.init_state(src, lengths)
    logits, new = dec(tgt_in[:, :1], state)
    h_t, _ = dec.rnn(dec.embedding(tgt_in[:, :1]), state["h"].transpose(0, 1).contiguous())
    scores = h_t @ state["enc"].transpose(1, 2)  # dot: h_t^T h̄_s
    scores = scores.masked_fill(~state["mask"][:, None, :], float("-inf"))
    a = torch.softmax(scores, -1)
    c = a @ state["enc"]
    h_tilde = torch.tanh(dec.W_c(torch.cat([c, h_t], -1)))
    torch.testing.assert_close(logits, dec.W_s(h_tilde))
    torch.testing.assert_close(new["attention"], a)


def test_states_are_batch_first_and_reorderable():
    model = make("bahdanau", "additive", False)
    src, lengths, tgt_in = batch()
    state = model.init_state(src, lengths)
    index = torch.tensor([2, 2, 0])
    picked = select_state(state, index)
    log_probs, _ = model.step(tgt_in[index][:, :1], picked)
    direct, _ = model.step(tgt_in[:, :1], state)
    torch.testing.assert_close(log_probs, direct[index])


def test_source_mask_and_errors():
    assert source_mask(torch.tensor([1, 3]), 3).tolist() == [[True, False, False], [True] * 3]
    with pytest.raises(ValueError, match="style"):
        attention_model(5, 5, style="transformer")


def test_a_tiny_attention_model_learns_to_copy():
    torch.manual_seed(0)
    model = attention_model(12, 12, style="luong", score="dot", embed_size=16, hidden_size=32)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    for _ in range(150):
        src = torch.randint(4, 12, (32, 6), generator=g)
        tgt_in = torch.cat([torch.ones(32, 1, dtype=torch.long), src[:, :-1]], 1)
        logits = model(src, torch.full((32,), 6), tgt_in)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 12), src.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.2


def test_greedy_with_attention_matches_greedy_and_returns_one_row_per_output():
    from seq2seq_lib.attention_seq2seq import greedy_with_attention

    model = make("luong", "general", False)
    src, lengths, _ = batch()
    outputs, maps = greedy_with_attention(model, src, lengths, max_len=4)
    assert outputs == model.greedy(src, lengths, max_len=4)
    for ids, w, n in zip(outputs, maps, lengths.tolist(), strict=True):
        assert w.shape == (min(len(ids) + 1, 4), n)  # one row per token, <eos> included
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[0]))
