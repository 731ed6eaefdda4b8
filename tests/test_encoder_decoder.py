"""Encoders with packing, the Cho et al. (2014) decoder, scoring and greedy decoding
(EncoderDecoder.generate and EncoderDecoder.search)."""

from __future__ import annotations

import pytest
import torch
from helpers import make_cho, make_seq2seq

from seq2seq_lib.batches import collate
from seq2seq_lib.encoder_decoder import (
    ChoConfig,
    ChoDecoder,
    ChoModel,
    EncoderDecoder,
    GRUEncoder,
    LSTMEncoder,
    RNNEncoder,
)
from seq2seq_lib.vocab import BOS_ID, EOS_ID, PAD_ID


def _sentence(seed: int, n: int, vocab: int = 20) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return [*(torch.randint(4, vocab, (n,), generator=g).tolist()), EOS_ID]


@pytest.mark.parametrize("cell", ["gru", "lstm"])
@pytest.mark.parametrize("layers", [1, 2])
def test_padding_never_changes_the_final_state(cell, layers):
    torch.manual_seed(0)
    enc = RNNEncoder(20, 8, 16, num_layers=layers, cell=cell).eval()
    s = _sentence(1, 4)
    alone = torch.tensor([s])
    _, state_alone = enc(alone, torch.tensor([len(s)]))
    # the same sentence padded to 9 and to 13 positions, next to longer sentences
    for extra in (5, 9):
        padded = torch.tensor([s + [PAD_ID] * extra, _sentence(2, len(s) + extra - 1)])
        outputs, state = enc(padded, torch.tensor([len(s), len(s) + extra]))
        if cell == "lstm":
            for a, b in zip(state, state_alone, strict=True):
                torch.testing.assert_close(a[:, :1], b, rtol=1e-6, atol=1e-6)
        else:
            torch.testing.assert_close(state[:, :1], state_alone, rtol=1e-6, atol=1e-6)
        assert torch.all(outputs[0, len(s):] == 0), "outputs at padding must be zero"


def test_unpacked_rnn_would_change_the_state():
    """The test above can fail: running nn.GRU over the padding does change the state."""
    torch.manual_seed(0)
    enc = GRUEncoder(20, 8, 16).eval()
    s = _sentence(1, 4)
    _, packed = enc(torch.tensor([s + [PAD_ID] * 5]), torch.tensor([len(s)]))
    _, unpacked = enc.rnn(enc.embedding(torch.tensor([s + [PAD_ID] * 5])))
    assert not torch.allclose(packed, unpacked, atol=1e-4)


def test_encoder_rejects_bad_lengths():
    enc = LSTMEncoder(20, 8, 16)
    with pytest.raises(ValueError, match="src_lengths"):
        enc(torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 4]))
    with pytest.raises(ValueError, match="src must be"):
        enc(torch.ones(3, dtype=torch.long), torch.tensor([3]))
    with pytest.raises(ValueError, match="cell"):
        RNNEncoder(20, 8, 16, cell="rnn")


def _batch():
    examples = [(_sentence(3, 5), [5, 6, 7]), (_sentence(4, 2), [8, 9, 10, 11, 12]),
                (_sentence(5, 7), [4])]
    return collate(examples)


def test_cho_decoder_shapes_and_context():
    torch.manual_seed(0)
    model = make_cho(20, 15, embed_size=6, hidden_size=10).eval()
    b = _batch()
    logits = model(b.src, b.src_lengths, b.tgt_in)
    assert logits.shape == (3, b.tgt_in.shape[1], 15)
    state = model.init_state(b.src, b.src_lengths)
    assert state["h"].shape == (3, 1, 10) and state["c"].shape == (3, 10)
    # c = tanh(V h_S), h'_0 = tanh(V' c)
    _, h_enc = model.encoder(b.src, b.src_lengths)
    dec = model.decoder
    c = torch.tanh(dec.V(h_enc[-1]))
    torch.testing.assert_close(state["c"], c)
    torch.testing.assert_close(state["h"][:, 0], torch.tanh(dec.V_prime(c)))
    # c reaches the output directly: changing c with h fixed changes the logits
    other = dict(state, c=state["c"] + 1.0)
    a, _ = dec(b.tgt_in[:, :1], state)
    z, _ = dec(b.tgt_in[:, :1], other)
    assert not torch.allclose(a, z)


def test_step_by_step_equals_teacher_forced_forward():
    torch.manual_seed(0)
    model = make_cho(20, 15, embed_size=6, hidden_size=10).eval()
    b = _batch()
    full = torch.log_softmax(model(b.src, b.src_lengths, b.tgt_in), -1)
    state = model.init_state(b.src, b.src_lengths)
    for t in range(b.tgt_in.shape[1]):
        logp, state = model.step(b.tgt_in[:, : t + 1], state)
        torch.testing.assert_close(logp, full[:, t], rtol=1e-5, atol=1e-5)


def test_score_is_the_sum_of_token_log_probs():
    torch.manual_seed(0)
    model = make_cho(20, 15, embed_size=6, hidden_size=10).eval()
    b = _batch()
    tgt = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [4, 0, 0, 0, 0]])
    scores = model.score(b.src, b.src_lengths, tgt).detach()
    assert scores.shape == (3,)
    for i, words in enumerate([[5, 6, 7], [8, 9, 10, 11, 12], [4]]):
        state = model.init_state(b.src[i : i + 1], b.src_lengths[i : i + 1])
        prefix, total = torch.tensor([[BOS_ID]]), 0.0
        for w in [*words, EOS_ID]:
            logp, state = model.step(prefix, state)
            total += logp[0, w].item()
            prefix = torch.cat([prefix, torch.tensor([[w]])], 1)
        assert abs(float(scores[i]) - total) < 1e-4
    # log-probabilities are <= 0, and probabilities of all 1-word targets sum to <= 1
    assert torch.all(scores < 0)
    one = torch.arange(4, 15)[:, None]
    src = b.src[:1].expand(len(one), -1)
    total_p = model.score(src, b.src_lengths[:1].expand(len(one)), one).detach().exp().sum()
    assert total_p.item() < 1.0


def test_the_model_keeps_its_config_and_builds_the_documented_parts():
    config = ChoConfig(20, 15, embed_size=6, hidden_size=10, reverse_source=True)
    model = ChoModel(config)
    assert model.config is config and ChoModel.config_class is ChoConfig
    assert model.reverse_source and isinstance(model.decoder, ChoDecoder)
    assert model.encoder.rnn.hidden_size == 10 and model.decoder.embedding.embedding_dim == 6
    assert ChoConfig(20, 15) == ChoConfig(20, 15, embed_size=64, hidden_size=128)
    with pytest.raises(AttributeError):
        config.hidden_size = 3  # frozen


def test_bidirectional_encoder_concatenates_both_directions():
    torch.manual_seed(0)
    enc = RNNEncoder(20, 8, 16, num_layers=2, bidirectional=True).eval()
    s = _sentence(1, 4)
    src = torch.tensor([s + [PAD_ID] * 2, _sentence(2, 6)])
    outputs, h = enc(src, torch.tensor([len(s), 7]))
    assert outputs.shape == (2, 7, 32) and h.shape == (4, 2, 16)
    assert torch.all(outputs[0, len(s):] == 0)
    forward, backward = outputs[..., :16], outputs[..., 16:]
    torch.testing.assert_close(forward[0, len(s) - 1], h[2, 0])  # top layer, forward: ->h_S
    torch.testing.assert_close(backward[0, 0], h[3, 0])  # top layer, backward: <-h_1
    _, alone = enc(torch.tensor([s]), torch.tensor([len(s)]))
    torch.testing.assert_close(h[:, :1], alone, rtol=1e-6, atol=1e-6)  # padding changes nothing


class _Scripted(EncoderDecoder):
    """A model whose step emits a fixed script of tokens per sentence."""

    def __init__(self, scripts: list[list[int]], vocab: int = 10):
        super().__init__(GRUEncoder(10, 2, 2), ChoDecoder(vocab, 2, 2, 2))
        self.scripts, self.vocab, self.calls = scripts, vocab, 0

    def init_state(self, src, src_lengths):
        return {"i": torch.arange(src.shape[0])}

    def step(self, prefix, state):
        self.calls += 1
        assert not self.training, "greedy decoding must run in eval mode"
        t = prefix.shape[1] - 1
        out = torch.full((prefix.shape[0], self.vocab), -10.0)
        for row, i in enumerate(state["i"].tolist()):
            script = self.scripts[i]
            out[row, script[t] if t < len(script) else 4] = 0.0
        return out, state


def test_greedy_stops_each_sentence_at_eos_and_respects_max_len():
    model = _Scripted([[5, EOS_ID], [6, 7, 8, EOS_ID, 9], [4, 4, 4, 4, 4, 4, 4, 4]])
    model.train()
    src = torch.ones(3, 2, dtype=torch.long)
    out = model.generate(src, torch.tensor([2, 2, 2]), max_len=6)
    assert out == [[5], [6, 7, 8], [4] * 6]
    assert model.calls == 6 and model.training, "train mode must be restored"
    result = model.search(src, torch.tensor([2, 2, 2]), max_len=6)  # the full result: <eos> kept
    assert [h.tokens for h in result.best] == [[5, EOS_ID], [6, 7, 8, EOS_ID], [4] * 6]
    assert [h.output for h in result.best] == out and model.training
    model = _Scripted([[5, EOS_ID], [6, EOS_ID]])
    assert model.generate(src[:2], torch.tensor([2, 2]), max_len=6) == [[5], [6]]
    assert model.calls == 2, "decoding must stop once every sentence has ended"
    with pytest.raises(ValueError, match="max_len"):
        model.generate(src, torch.tensor([2, 2, 2]), max_len=0)


def test_teacher_forcing_ratio_one_and_zero():
    torch.manual_seed(0)
    model = make_cho(20, 15, embed_size=6, hidden_size=10).eval()
    b = _batch()
    tf = model(b.src, b.src_lengths, b.tgt_in, teacher_forcing=1.0)
    # ratio 0: the decoder reads its own greedy outputs, i.e. what greedy decoding produces
    free = model(b.src, b.src_lengths, b.tgt_in, teacher_forcing=0.0)
    assert torch.allclose(free[:, 0], tf[:, 0], atol=1e-6)  # step 1 reads <bos> in both
    state = model.init_state(b.src, b.src_lengths)
    prefix = b.tgt_in[:, :1]
    for t in range(b.tgt_in.shape[1]):
        logp, state = model.step(prefix, state)
        torch.testing.assert_close(logp, torch.log_softmax(free[:, t], -1), atol=1e-5, rtol=1e-5)
        prefix = torch.cat([prefix, logp.argmax(-1, keepdim=True)], 1)
    # ratio 1/2 with a seeded generator: reproducible, and between the two extremes
    g = torch.Generator
    half = model(b.src, b.src_lengths, b.tgt_in, teacher_forcing=0.5, generator=g().manual_seed(0))
    again = model(b.src, b.src_lengths, b.tgt_in, teacher_forcing=0.5, generator=g().manual_seed(0))
    torch.testing.assert_close(half, again)
    assert half.shape == tf.shape
    with pytest.raises(ValueError, match="teacher_forcing"):
        model(b.src, b.src_lengths, b.tgt_in, teacher_forcing=1.5)


def _reference_greedy(model, src, lengths, max_len):
    """Greedy decoding written out (the loop the library had before it used greedy_search):
    argmax at every step, finished sentences fed <pad>, stop when all have ended."""
    model.eval()
    with torch.no_grad():
        state = model.init_state(src, lengths)
        prefix = torch.full((src.shape[0], 1), BOS_ID, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            log_probs, state = model.step(prefix, state)
            token = log_probs.argmax(-1).masked_fill(done, PAD_ID)
            prefix = torch.cat([prefix, token[:, None]], 1)
            done |= token == EOS_ID
            if bool(done.all()):
                break
    rows = prefix[:, 1:].tolist()
    return [row[: row.index(EOS_ID)] if EOS_ID in row else row for row in rows]


def _translator(style, **more):
    from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel

    return TranslatorModel(TranslatorConfig(30, 25, style=style, embed_size=8, hidden_size=12,
                                            **more))


GREEDY_MODELS = {  # a model, and the bias on <eos> that makes its sentences end at varied steps
    "cho": (lambda: make_cho(30, 25, embed_size=8, hidden_size=12), "out", 0.0),
    "seq2seq": (lambda: make_seq2seq(30, 25, embed_size=8, hidden_size=12, num_layers=2),
                "out", 1.0),
    "luong": (lambda: _translator("luong"), "W_s", 2.0),
    "luong-feeding": (lambda: _translator("luong", score="dot", input_feeding=True), "W_s", 2.0),
    "bahdanau": (lambda: _translator("bahdanau"), "W_o", 2.0),
    "bahdanau-unidirectional": (lambda: _translator("bahdanau", bidirectional_encoder=False),
                                "W_o", 2.0),
    "none": (lambda: _translator("none"), "W_s", 1.0),
}


@pytest.mark.parametrize("kind", list(GREEDY_MODELS))
def test_greedy_search_gives_the_tokens_of_a_plain_argmax_loop(kind):
    """The one greedy path (decoding.greedy_search, through EncoderDecoder.search and
    EncoderDecoder.generate) decodes every model exactly like the plain loop."""
    build, output_layer, eos_bias = GREEDY_MODELS[kind]
    torch.manual_seed(3)
    model = build()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3.0)  # large weights: varied outputs
        getattr(model.decoder, output_layer).bias[EOS_ID] += eos_bias
    g = torch.Generator().manual_seed(5)
    src = torch.randint(4, 30, (16, 6), generator=g)
    lengths = torch.randint(1, 7, (16,), generator=g)
    for i, n in enumerate(lengths.tolist()):
        src[i, n:] = PAD_ID
    expected = _reference_greedy(model, src, lengths, 9)
    assert model.generate(src, lengths, max_len=9) == expected
    assert [h.output for h in model.search(src, lengths, max_len=9).best] == expected
    # some sentences end while others go on (their rows keep being computed, then ignored)
    assert len({len(e) for e in expected}) > 1, "the test needs sentences of several lengths"


def test_eval_mode_restores_the_mode_even_when_the_block_raises():
    from torch import nn

    from seq2seq_lib.encoder_decoder import eval_mode

    model = nn.Dropout(0.5)
    with eval_mode(model):
        assert not model.training
    assert model.training
    model.eval()
    with pytest.raises(RuntimeError, match="boom"), eval_mode(model):
        raise RuntimeError("boom")
    assert not model.training
    model.train()
    with pytest.raises(RuntimeError, match="boom"), eval_mode(model):
        raise RuntimeError("boom")
    assert model.training
