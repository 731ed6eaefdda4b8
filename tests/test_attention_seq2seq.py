"""Chapter 8's attention decoders: step == teacher-forced, padding-invariant, weights well formed."""

import pytest
import torch

from seq2seq_lib.attention_seq2seq import (
    BahdanauDecoder,
    TranslatorConfig,
    TranslatorModel,
    source_mask,
)
from seq2seq_lib.decoding import index_state
from seq2seq_lib.vocab import PAD_ID

CONFIGS = [("luong", "general", False, None), ("luong", "dot", True, None),
           ("luong", "concat", False, None), ("bahdanau", "additive", False, None),
           ("bahdanau", "general", False, None), ("bahdanau", "additive", False, False),
           ("none", None, False, None)]


def make(style, score, feeding, bidirectional=None, seed=0, **more):
    torch.manual_seed(seed)
    return TranslatorModel(TranslatorConfig(30, 25, style=style, score=score, embed_size=8,
                                            hidden_size=12, input_feeding=feeding,
                                            bidirectional_encoder=bidirectional, **more)).eval()


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 30, (3, 6), generator=g)
    lengths = torch.tensor([6, 2, 4])
    src[1, 2:] = PAD_ID
    src[2, 4:] = PAD_ID
    tgt_in = torch.randint(4, 25, (3, 5), generator=g)
    return src, lengths, tgt_in


@pytest.mark.parametrize("style, score, feeding, bidirectional", CONFIGS)
def test_step_by_step_equals_teacher_forced(style, score, feeding, bidirectional):
    model = make(style, score, feeding, bidirectional)
    src, lengths, tgt_in = batch()
    full = model(src, lengths, tgt_in)
    state = model.init_state(src, lengths)
    steps = []
    for t in range(tgt_in.shape[1]):
        logits, state = model.decoder(tgt_in[:, t:t + 1], state)
        steps.append(logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("style, score, feeding, bidirectional", CONFIGS)
def test_padding_changes_nothing(style, score, feeding, bidirectional):
    model = make(style, score, feeding, bidirectional)
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


def test_bahdanau_output_is_the_papers_maxout_deep_output():
    """p(y_t) = softmax(W_o t_t), t_t,j = max(t~_2j-1, t~_2j), t~ = U_o s_{t-1} + V_o e + C_o c_t
    (Bahdanau et al., 2015, appendix A.2.2), written out unit by unit for two steps."""
    model = make("bahdanau", "additive", False)
    dec = model.decoder
    src, lengths, tgt_in = batch()
    state = model.init_state(src, lengths)
    logits, _ = dec(tgt_in[:, :2], state)
    s_prev, enc, mask = state["h"][:, -1], state["enc"], state["mask"]
    for t in range(2):
        scores = dec.score(s_prev, enc).masked_fill(~mask, float("-inf"))
        c = (torch.softmax(scores, -1)[:, :, None] * enc).sum(1)  # c_t = sum_s a_t(s) h̄_s
        e = dec.embedding(tgt_in[:, t])
        t_tilde = dec.U_o(s_prev) + dec.V_o(e) + dec.C_o(c)  # (B, 2l)
        maxout = torch.stack([torch.maximum(t_tilde[:, 2 * j], t_tilde[:, 2 * j + 1])
                              for j in range(t_tilde.shape[1] // 2)], 1)  # (B, l)
        torch.testing.assert_close(logits[:, t], dec.W_o(maxout))
        _, s_new = dec.rnn(torch.cat([e, c], -1)[:, None], s_prev[None].contiguous())
        s_prev = s_new[0]  # s_t: the query and the output's state of step t + 1
    size = model.config.maxout_size
    assert size == 12 and (dec.U_o.out_features, dec.W_o.in_features) == (2 * size, size)
    assert dec.C_o.in_features == 24 and dec.V_o.in_features == 8  # c_t: 2h; e(y): e
    assert TranslatorModel(TranslatorConfig(30, 25, style="bahdanau", embed_size=8,
                                            hidden_size=12, maxout_size=5)).decoder.W_o.in_features == 5


def test_states_are_batch_first_and_reorderable():
    model = make("bahdanau", "additive", False)
    src, lengths, tgt_in = batch()
    state = model.init_state(src, lengths)
    index = torch.tensor([2, 2, 0])
    picked = index_state(state, index)
    log_probs, _ = model.step(tgt_in[index][:, :1], picked)
    direct, _ = model.step(tgt_in[:, :1], state)
    torch.testing.assert_close(log_probs, direct[index])


def test_source_mask_and_errors():
    assert source_mask(torch.tensor([1, 3]), 3).tolist() == [[True, False, False], [True] * 3]
    with pytest.raises(ValueError, match="style"):
        TranslatorConfig(5, 5, style="transformer")
    with pytest.raises(ValueError, match="score"):
        TranslatorConfig(5, 5, score="cosine")
    with pytest.raises(ValueError, match="no score"):
        TranslatorConfig(5, 5, style="none", score="dot")
    with pytest.raises(ValueError, match="bidirectional"):
        TranslatorConfig(5, 5, style="luong", bidirectional_encoder=True)
    with pytest.raises(ValueError, match="input feeding"):
        TranslatorConfig(5, 5, style="bahdanau", input_feeding=True)
    with pytest.raises(ValueError, match="maxout"):
        TranslatorConfig(5, 5, style="luong", maxout_size=4)
    with pytest.raises(ValueError, match="maxout_size"):
        TranslatorConfig(5, 5, style="bahdanau", maxout_size=0)


def test_config_resolves_the_styles_own_choices():
    luong, bahdanau = TranslatorConfig(5, 5), TranslatorConfig(5, 5, style="bahdanau")
    assert (luong.score, luong.bidirectional_encoder) == ("general", False)
    assert (bahdanau.score, bahdanau.bidirectional_encoder) == ("additive", True)
    assert TranslatorConfig(5, 5, style="none").score is None
    assert (luong.maxout_size, bahdanau.maxout_size) == (None, bahdanau.hidden_size)
    assert bahdanau == TranslatorConfig(5, 5, style="bahdanau", maxout_size=bahdanau.hidden_size)
    assert luong == TranslatorConfig(5, 5, style="luong", score="general",
                                     bidirectional_encoder=False)
    model = TranslatorModel(bahdanau)
    assert model.config is bahdanau and model.encoder.rnn.bidirectional


def test_bahdanau_reads_a_bidirectional_encoder_as_in_the_paper():
    model = make("bahdanau", "additive", False)
    assert model.config.bidirectional_encoder and model.encoder.bidirectional
    src, lengths, tgt_in = batch()
    enc_out, h = model.encoder(src, lengths)
    assert enc_out.shape == (3, 6, 24)  # annotations [->h_s; <-h_s]
    state = model.init_state(src, lengths)
    torch.testing.assert_close(state["enc"], enc_out)
    dec = model.decoder
    # s_0 = tanh(W_init <-h_1): the backward RNN's final state, i.e. its output at position 1
    torch.testing.assert_close(state["h"][:, 0], torch.tanh(dec.W_init(enc_out[:, 0, 12:])))
    torch.testing.assert_close(state["h"][:, 0], torch.tanh(dec.W_init(h[1])))
    # the first context is the attention-weighted sum of the annotations (size 2h)
    _, new = dec(tgt_in[:, :1], state)
    weights = new["attention"][:, 0]
    scores = dec.score(state["h"][:, 0], enc_out)
    torch.testing.assert_close(weights, torch.softmax(
        scores.masked_fill(~state["mask"], float("-inf")), -1))
    unidirectional = make("bahdanau", "additive", False, bidirectional=False)
    assert not unidirectional.encoder.bidirectional and not hasattr(unidirectional.decoder, "W_init")
    assert isinstance(unidirectional.decoder, BahdanauDecoder)


def test_two_layer_bahdanau_starts_each_layer_from_its_backward_state():
    model = make("bahdanau", "additive", False, num_layers=2)
    src, lengths, _ = batch()
    _, h = model.encoder(src, lengths)  # (2 layers x 2 directions, N, h)
    state = model.init_state(src, lengths)
    expected = torch.tanh(model.decoder.W_init(h.view(2, 2, 3, 12)[:, 1])).transpose(0, 1)
    torch.testing.assert_close(state["h"], expected)


def test_a_tiny_attention_model_learns_to_copy():
    torch.manual_seed(0)
    model = TranslatorModel(TranslatorConfig(12, 12, style="luong", score="dot", embed_size=16,
                                             hidden_size=32))
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
    assert outputs == model.generate(src, lengths, max_len=4)
    for ids, w, n in zip(outputs, maps, lengths.tolist(), strict=True):
        assert w.shape == (min(len(ids) + 1, 4), n)  # one row per token, <eos> included
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[0]))
