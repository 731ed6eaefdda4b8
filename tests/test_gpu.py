"""The library on a GPU: every model forward and backward, training (with a pause and a
bit-identical resume), greedy and beam decoding, the translate command with ``--device
cuda``, and no silent fall-back to the CPU.

Skipped without CUDA. On a GPU machine run them with CUDA left visible to the tests:

    SEQ2SEQ_GPU_TESTS=1 python -m pytest tests/test_gpu.py

(the normal test session hides CUDA, so that the notebooks re-run exactly as on a CPU).
"""

from __future__ import annotations

import random
from functools import partial

import pytest
import torch
from torch import nn

from seq2seq_lib import cache, training
from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
from seq2seq_lib.batches import TranslationData, TranslationDataset, make_loader
from seq2seq_lib.beam import beam_search
from seq2seq_lib.decoding import greedy_search
from seq2seq_lib.device import Run, seed_everything
from seq2seq_lib.encoder_decoder import ChoConfig, ChoModel
from seq2seq_lib.evaluation import bleu, translate
from seq2seq_lib.rnn import scratch_like
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.translator import export_translator, load_translator, main

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA device visible (on a GPU machine: SEQ2SEQ_GPU_TESTS=1 python -m pytest "
           "tests/test_gpu.py)",
)
CUDA = torch.device("cuda")
GPU = Run(CUDA)


@pytest.fixture(scope="module", autouse=True)
def seeded() -> None:
    """What a chapter's ``setup`` does first: deterministic algorithms (and cuBLAS's
    workspace setting for them), TF32 off."""
    seed_everything(0)


@pytest.fixture(scope="module")
def data() -> TranslationData:
    rng = random.Random(0)
    sources = [[rng.choice("abcdefgh") for _ in range(rng.randint(1, 6))] for _ in range(160)]
    return TranslationData.from_pairs([(s, s[::-1]) for s in sources], name="reversal", seed=0)


def _models(data: TranslationData) -> dict[str, nn.Module]:
    s, t = len(data.src_vocab), len(data.tgt_vocab)
    configs = {
        "cho": ChoConfig(s, t, embed_size=16, hidden_size=32),
        "seq2seq": Seq2SeqConfig(s, t, embed_size=16, hidden_size=32, num_layers=2, dropout=0.1),
        "none": TranslatorConfig(s, t, style="none", embed_size=16, hidden_size=32),
        **{f"luong-{score}": TranslatorConfig(s, t, style="luong", score=score, embed_size=16,
                                              hidden_size=32)
           for score in ("dot", "general", "concat")},
        "luong-feeding": TranslatorConfig(s, t, style="luong", input_feeding=True, embed_size=16,
                                          hidden_size=32),
        "bahdanau": TranslatorConfig(s, t, style="bahdanau", embed_size=16, hidden_size=32),
    }
    classes = {ChoConfig: ChoModel, Seq2SeqConfig: Seq2SeqModel, TranslatorConfig: TranslatorModel}
    torch.manual_seed(0)
    return {name: classes[type(c)](c) for name, c in configs.items()}


def _batch(data: TranslationData, reverse: bool):
    loader = make_loader(TranslationDataset(data.train, data.src_vocab, data.tgt_vocab), 32,
                         shuffle=False, reverse_source=reverse)
    return next(iter(loader))


@pytest.mark.parametrize("name", ["cho", "seq2seq", "none", "luong-dot", "luong-general",
                                  "luong-concat", "luong-feeding", "bahdanau"])
def test_every_model_runs_forward_and_backward_on_the_gpu(data, name):
    model = _models(data)[name].to(CUDA)
    batch = _batch(data, model.reverse_source).to(CUDA)
    for ratio in (1.0, 0.5):  # teacher forcing, and the coin flips of scheduled sampling
        logits = model(batch.src, batch.src_lengths, batch.tgt_in, teacher_forcing=ratio,
                       generator=torch.Generator().manual_seed(0))
        assert logits.device.type == "cuda"
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten())
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            assert p.grad is None or (p.grad.device.type == "cuda" and p.grad.isfinite().all())


def test_cpu_inputs_to_a_gpu_model_raise(data):
    """Nothing falls back to the CPU silently: mixing devices is an error."""
    model = _models(data)["luong-general"].to(CUDA)
    batch = _batch(data, False)  # on the CPU
    with pytest.raises(RuntimeError):
        model(batch.src, batch.src_lengths, batch.tgt_in)


@pytest.mark.parametrize("kind", [nn.GRU, nn.LSTM, nn.RNN])
def test_scratch_layers_match_pytorch_on_the_gpu(kind):
    torch.manual_seed(0)
    module = kind(8, 16, num_layers=2, bidirectional=True, batch_first=True).to(CUDA)
    scratch = scratch_like(module)
    X = torch.randn(4, 7, 8, device=CUDA)
    ours, theirs = scratch(X)[0], module(X)[0]
    assert ours.device.type == "cuda"
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)


def test_training_on_the_gpu_pauses_and_resumes_bit_for_bit(data, tmp_path):
    """Without dropout *inside* a cuDNN RNN: cuDNN draws those masks from a generator of its
    own, seeded once per process and never reset, which no checkpoint can save: a run
    resumed in another process, or after other training in this one, gets other masks. (On
    the CPU, PyTorch's generator draws them, and the checkpoint keeps its state.)"""
    config = training.TrainConfig(lr=3e-3, batch_size=16, epochs=2, log_every=2, valid_every=4,
                                  teacher_forcing=0.7)

    def fresh() -> nn.Module:
        torch.manual_seed(0)
        return Seq2SeqModel(Seq2SeqConfig(len(data.src_vocab), len(data.tgt_vocab),
                                          embed_size=16, hidden_size=32, num_layers=2,
                                          dropout=0.0)).to(CUDA)

    straight = fresh()
    h_straight = training.fit(straight, data, config, run=GPU, progress=False)
    assert h_straight["step_loss"][-1] < h_straight["step_loss"][0]
    ckpt = tmp_path / "run.pt"
    paused = fresh()
    training.fit(paused, data, config, run=GPU, progress=False, resume=ckpt, pause_at=5)
    resumed = fresh()
    h_resumed = training.fit(resumed, data, config, run=GPU, progress=False, resume=ckpt)
    assert h_resumed == h_straight
    for a, b in zip(straight.state_dict().values(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_run_waits_for_the_gpu():
    x = torch.randn(4000, 4000, device=CUDA)
    for _ in range(5):
        x = x @ x / 4000
    Run(CUDA, "quick", 0).synchronize()
    assert torch.cuda.current_stream().query()  # everything queued is done


def test_train_or_load_returns_the_model_on_the_gpu(data, tmp_path):
    config = training.TrainConfig(batch_size=16, steps=3, log_every=1)

    def build() -> nn.Module:
        torch.manual_seed(0)
        return ChoModel(ChoConfig(len(data.src_vocab), len(data.tgt_vocab), embed_size=8,
                                  hidden_size=16))

    def train(model: nn.Module) -> dict:
        return training.fit(model, data, config, run=GPU, progress=False)

    for _ in range(2):  # trained, then loaded
        trained = cache.train_or_load("gpu", {}, build, train, run=GPU, directory=tmp_path)
        assert next(trained.model.parameters()).device.type == "cuda"


@pytest.mark.parametrize("name", ["seq2seq", "luong-general", "bahdanau"])
def test_greedy_and_beam_decoding_on_the_gpu_agree_with_the_cpu(data, name):
    model = _models(data)[name].eval()
    sources = [s for s, _ in data.test[:20]]
    for search in (greedy_search, partial(beam_search, beam_size=3, alpha=0.6)):
        on_cpu = translate(model, sources, data.src_vocab, data.tgt_vocab, search=search)
        on_gpu = translate(model.to(CUDA), sources, data.src_vocab, data.tgt_vocab,
                           device=CUDA, search=search)
        model.cpu()
        assert len(on_gpu) == len(sources)
        # float kernels differ between devices: translations may differ where two words tie
        assert sum(a == b for a, b in zip(on_cpu, on_gpu, strict=True)) >= len(sources) - 2
    assert bleu(model.to(CUDA), data.test, data.src_vocab, data.tgt_vocab, device=CUDA).score >= 0


def test_translate_command_runs_on_cuda(data, tmp_path, capsys):
    model = _models(data)["bahdanau"]
    path = export_translator(tmp_path / "t.pt", model, data.src_vocab, data.tgt_vocab,
                             src_lang="en", tgt_lang="en", lowercase=False)
    translator = load_translator(path, device="cuda")
    assert translator.device.type == "cuda"
    assert main([str(path), "a b c", "d e", "-k", "3", "--device", "cuda"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
