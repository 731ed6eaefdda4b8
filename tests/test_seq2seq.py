"""The deep-LSTM seq2seq model of Sutskever et al. (2014)."""

from __future__ import annotations

import pytest
import torch
from helpers import make_seq2seq

from seq2seq_lib.batches import collate
from seq2seq_lib.device import Run
from seq2seq_lib.recipes import build_model
from seq2seq_lib.recipes.ch07 import seq2seq_plan
from seq2seq_lib.seq2seq import LSTMDecoder, Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.vocab import EOS_ID


def _batch(reverse: bool):
    examples = [([5, 6, 7, 8, EOS_ID], [4, 5]), ([9, 10, EOS_ID], [6, 7, 8])]
    return collate(examples, reverse_source=reverse)


@pytest.mark.parametrize("layers", [1, 3])
def test_shapes_state_layout_and_step(layers):
    torch.manual_seed(0)
    model = make_seq2seq(12, 9, embed_size=4, hidden_size=6, num_layers=layers).eval()
    assert model.reverse_source
    assert model.encoder.rnn.num_layers == layers == model.decoder.rnn.num_layers
    b = _batch(True)
    logits = model(b.src, b.src_lengths, b.tgt_in)
    assert logits.shape == (2, b.tgt_in.shape[1], 9)
    state = model.init_state(b.src, b.src_lengths)
    assert state["h"].shape == (2, layers, 6) and state["c"].shape == (2, layers, 6)
    # the decoder starts from the encoder's final (h, c), batch first
    _, (h, c) = model.encoder(b.src, b.src_lengths)
    torch.testing.assert_close(state["h"], h.transpose(0, 1))
    torch.testing.assert_close(state["c"], c.transpose(0, 1))
    full = torch.log_softmax(logits, -1)
    for t in range(b.tgt_in.shape[1]):
        logp, state = model.step(b.tgt_in[:, : t + 1], state)
        torch.testing.assert_close(logp, full[:, t], atol=1e-5, rtol=1e-5)


def test_reversal_changes_what_the_encoder_reads():
    torch.manual_seed(0)
    model = make_seq2seq(12, 9, embed_size=4, hidden_size=6, num_layers=2).eval()
    fwd, rev = _batch(False), _batch(True)
    assert rev.src[0].tolist() == [8, 7, 6, 5, EOS_ID]
    a = model.init_state(fwd.src, fwd.src_lengths)["h"]
    b = model.init_state(rev.src, rev.src_lengths)["h"]
    assert not torch.allclose(a, b)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_layers"):
        Seq2SeqConfig(12, 9, num_layers=0)
    dec = LSTMDecoder(9, 4, 6)
    with pytest.raises(TypeError, match="LSTM"):
        dec.init_state(torch.zeros(1, 2, 6), torch.zeros(1, 1, 6), torch.tensor([2]))


def test_the_recipe_sizes_and_budgets_of_both_profiles(tiny_translation_data):
    data = tiny_translation_data
    plan = seq2seq_plan(Run(torch.device("cpu"), "quick", 0), data)
    quick, quick_train = plan.model, plan.train
    full_plan = seq2seq_plan(Run(torch.device("cpu"), "full", 0), data)
    full, full_train = full_plan.model, full_plan.train
    assert (quick.num_layers, quick.hidden_size, quick_train.steps) == (1, 256, 1800)
    assert (full.num_layers, full.hidden_size, full_train.steps) == (4, 1024, None)
    assert quick.reverse_source and quick.src_vocab_size == len(data.src_vocab)
    assert quick_train.valid_pairs == 1000 and quick_train.valid_every == 100
    assert plan.name == full_plan.name == "ch07-seq2seq" and plan.model_class is Seq2SeqModel
    assert quick_train.seed == 0  # the initial weights are drawn after torch.manual_seed(0)


def test_build_is_seeded_and_keeps_the_config():
    config = Seq2SeqConfig(12, 9, embed_size=4, hidden_size=6, num_layers=2)
    a, b = build_model(Seq2SeqModel, config, 0), build_model(Seq2SeqModel, config, 0)
    assert a.config is config
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y), name
