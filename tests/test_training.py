"""Trainer: schedules, teacher forcing, checkpoint resume, overfitting a tiny dataset."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
import torch
from helpers import make_cho

from seq2seq_lib import training
from seq2seq_lib.batches import TranslationData, TranslationDataset, make_loader, sample_pairs
from seq2seq_lib.buckets import bucket_loader
from seq2seq_lib.checkpoint import read_checkpoint
from seq2seq_lib.evaluation import bleu, position_accuracy, translate
from seq2seq_lib.numerics import make_optimizer
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.training import (
    Schedule,
    TrainConfig,
    evaluate_loss,
    fit,
    scheduled_sampling,
    train,
)


def test_scheduled_sampling_values():
    assert scheduled_sampling(0, "linear", k=1.0, c=0.01) == 1.0
    assert scheduled_sampling(50, "linear", k=1.0, c=0.01) == pytest.approx(0.5)
    assert scheduled_sampling(500, "linear", k=1.0, c=0.01, eps_min=0.1) == pytest.approx(0.1)
    assert scheduled_sampling(3, "exponential", k=0.5) == pytest.approx(0.125)
    assert scheduled_sampling(0, "inverse_sigmoid", k=10) == pytest.approx(10 / 11)
    assert scheduled_sampling(100, "inverse_sigmoid", k=10) == pytest.approx(10 / (10 + math.e**10))
    assert scheduled_sampling(10**9, "inverse_sigmoid", k=10) == 0.0
    assert scheduled_sampling(7, "constant", k=0.3) == pytest.approx(0.3)
    values = [scheduled_sampling(i, "inverse_sigmoid", k=50) for i in range(0, 2000, 100)]
    assert values == sorted(values, reverse=True), "the ratio must decrease"
    for bad in [dict(kind="nope"), dict(kind="exponential", k=2.0), dict(kind="inverse_sigmoid",
                                                                         k=0.5)]:
        with pytest.raises(ValueError):
            scheduled_sampling(1, **bad)
    with pytest.raises(ValueError, match="step"):
        scheduled_sampling(-1)


def test_schedule_is_scheduled_sampling_as_data():
    schedule = Schedule("inverse_sigmoid", k=50)
    assert [schedule(i) for i in (0, 100, 900)] == [
        scheduled_sampling(i, "inverse_sigmoid", k=50) for i in (0, 100, 900)]
    assert Schedule("linear", k=1.0, c=0.01, eps_min=0.1)(500) == pytest.approx(0.1)
    with pytest.raises(ValueError):
        Schedule("exponential", k=2.0)


def test_train_config_checks_its_values():
    assert TrainConfig() == TrainConfig(lr=1e-3, batch_size=64, epochs=1, steps=None, clip=1.0)
    for bad in (dict(epochs=-1), dict(log_every=0), dict(valid_every=0), dict(batch_size=0),
                dict(teacher_forcing=1.5)):
        with pytest.raises(ValueError):
            TrainConfig(**bad)


def test_optimizer_is_adam():
    p = [torch.nn.Parameter(torch.zeros(2))]
    assert isinstance(make_optimizer(p, 1e-3), torch.optim.Adam)
    assert make_optimizer(p, 1e-3, fused=False).defaults["fused"] in (None, False)


@pytest.fixture(scope="module")
def tiny():
    """64 random strings of 1-5 letters a-f and their reverses, split like a corpus."""
    rng = random.Random(1)
    sources = [[rng.choice("abcdef") for _ in range(rng.randint(1, 5))] for _ in range(64)]
    return TranslationData.from_pairs([(s, s[::-1]) for s in sources], name="reversal", seed=1)


def _loader(data, which="train"):
    ds = TranslationDataset(data.split(which), data.src_vocab, data.tgt_vocab)
    return make_loader(ds, 16, shuffle=which == "train", seed=0)


def test_tiny_model_overfits_tiny_dataset(tiny):
    torch.manual_seed(0)
    model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=16, hidden_size=64)
    hist = train(model, _loader(tiny), TrainConfig(epochs=150, lr=1e-2, log_every=4),
                 progress=False)
    assert hist["epoch_loss"][-1] < 0.05 < hist["epoch_loss"][0]
    assert all(isinstance(x, float) for x in hist["step_loss"] + hist["epoch_loss"])
    out = translate(model, [s for s, _ in tiny.train], tiny.src_vocab, tiny.tgt_vocab)
    exact = sum(o == t for o, (_, t) in zip(out, tiny.train, strict=True)) / len(tiny.train)
    assert exact > 0.9
    assert bleu(model, tiny.train, tiny.src_vocab, tiny.tgt_vocab).score > 90


def _small_seq2seq(data):
    """A two-layer LSTM seq2seq with dropout, the same initial weights every call."""
    torch.manual_seed(0)
    return Seq2SeqModel(Seq2SeqConfig(len(data.src_vocab), len(data.tgt_vocab), embed_size=8,
                                      hidden_size=16, num_layers=2, dropout=0.2))


@pytest.mark.parametrize("bucketed", [False, True])
def test_checkpoint_resume_gives_identical_training(tiny, tmp_path, bucketed):
    def fresh():
        return _small_seq2seq(tiny)

    def loader():
        if bucketed:
            ds = TranslationDataset(tiny.train, tiny.src_vocab, tiny.tgt_vocab)
            return bucket_loader(ds, 16, pool=2, seed=5)
        return _loader(tiny)

    config = TrainConfig(lr=3e-3, log_every=2, teacher_forcing=0.5, epochs=4)
    straight = fresh()
    h_straight = train(straight, loader(), config, progress=False)

    ckpt = tmp_path / "run.pt"
    part = fresh()
    train(part, loader(), replace(config, epochs=2), resume=ckpt, progress=False)
    resumed = fresh()  # a new process: fresh weights, loaded from the checkpoint
    torch.manual_seed(123)  # the global RNG state must not matter
    h_resumed = train(resumed, loader(), config, resume=ckpt, progress=False)
    assert h_resumed == h_straight
    for a, b in zip(straight.state_dict().values(), resumed.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    saved = torch.load(ckpt, weights_only=True)
    assert saved["history"]["epochs_done"] == 4


@pytest.mark.parametrize("bucketed", [False, True])
def test_paused_run_continues_bit_for_bit(tiny, tmp_path, bucketed):
    """A run paused in the middle of an epoch (twice) ends with the same weights and history
    as one uninterrupted run: shuffling, dropout and teacher-forcing coins continue."""
    def fresh():
        return _small_seq2seq(tiny)

    def loader():
        if bucketed:
            ds = TranslationDataset(tiny.train, tiny.src_vocab, tiny.tgt_vocab)
            return bucket_loader(ds, 8, pool=2, seed=5)
        return make_loader(TranslationDataset(tiny.train, tiny.src_vocab, tiny.tgt_vocab), 8,
                           shuffle=True, seed=0)

    per_epoch = len(loader())
    assert per_epoch >= 4
    config = TrainConfig(lr=3e-3, log_every=3, teacher_forcing=0.5, epochs=3, valid_every=2)
    straight = fresh()
    h_straight = train(straight, loader(), config, valid_loader=_loader(tiny, "valid"),
                       progress=False)

    ckpt = tmp_path / "run.pt"
    pauses = [per_epoch // 2 + 1, per_epoch + per_epoch // 2, None]  # two mid-epoch pauses
    for i, pause_at in enumerate(pauses):
        model = fresh()  # a new process each time: fresh weights, loaded from the checkpoint
        torch.manual_seed(100 + i)  # the global RNG state must not matter
        history = train(model, loader(), config, valid_loader=_loader(tiny, "valid"),
                        progress=False, resume=ckpt, pause_at=pause_at)
        if pause_at is not None:
            assert history["updates"] == pause_at
            assert read_checkpoint(ckpt).training["paused"]["batches"] == pause_at % per_epoch
    assert history == h_straight
    for a, b in zip(straight.state_dict().values(), model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="resume file"):
        train(fresh(), loader(), replace(config, valid_every=None), progress=False, pause_at=2)


def test_pausing_again_at_the_same_update_trains_nothing(tiny, tmp_path):
    torch.manual_seed(0)
    model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=8, hidden_size=16)
    ckpt = tmp_path / "run.pt"
    config = TrainConfig(epochs=2, lr=1e-2)
    first = train(model, _loader(tiny), config, resume=ckpt, pause_at=3, progress=False)
    saved = ckpt.read_bytes()
    again = train(model, _loader(tiny), config, resume=ckpt, pause_at=3, progress=False)
    assert again == first and again["updates"] == 3 and ckpt.read_bytes() == saved


def test_teacher_forcing_changes_training_and_free_running_is_harder(tiny):
    def run(ratio):
        torch.manual_seed(0)
        model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=8, hidden_size=16)
        h = train(model, _loader(tiny),
                  TrainConfig(epochs=3, lr=1e-2, teacher_forcing=ratio, log_every=1),
                  progress=False)
        return model, h

    m1, h1 = run(1.0)
    m0, h0 = run(0.0)
    assert h1["tf_ratio"] == [1.0] * len(h1["tf_ratio"]) and h0["tf_ratio"][0] == 0.0
    assert h1["step_loss"][0] == pytest.approx(h0["step_loss"][0], rel=0.3)
    assert h1["step_loss"] != h0["step_loss"]
    # the same model scored with its own prefixes (free running) does worse than teacher-forced
    loader = _loader(tiny, "train")
    assert evaluate_loss(m1, loader, teacher_forcing=0.0) > evaluate_loss(m1, loader)
    acc_tf = position_accuracy(m1, loader, teacher_forcing=1.0)
    acc_free = position_accuracy(m1, loader, teacher_forcing=0.0)
    assert acc_tf[0] == pytest.approx(acc_free[0])  # position 1 reads <bos> either way
    assert sum(acc_tf) > sum(acc_free)


def test_schedule_is_called_with_the_update_count(tiny):
    seen = []

    def schedule(step):
        seen.append(step)
        return 1.0

    torch.manual_seed(0)
    model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=4, hidden_size=8)
    h = train(model, _loader(tiny), TrainConfig(epochs=2, teacher_forcing=schedule, steps=5),
              progress=False)
    assert seen == [0, 1, 2, 3, 4] and h["updates"] == 5
    with pytest.raises(ValueError, match="teacher_forcing"):
        TrainConfig(teacher_forcing=2.0)


def test_valid_every_records_a_validation_curve(tiny):
    torch.manual_seed(0)
    model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=4, hidden_size=8)
    valid = _loader(tiny, "valid")
    h = train(model, _loader(tiny), TrainConfig(epochs=3, valid_every=2), valid_loader=valid,
              progress=False)
    assert h["valid_step"] == [2, 4, 6, 8, 10, 12]
    assert h["valid_step_loss"][-1] == pytest.approx(h["valid_loss"][-1])
    assert h["valid_step_loss"][-1] == pytest.approx(evaluate_loss(model, valid))
    with pytest.raises(ValueError, match="valid_every"):
        train(model, _loader(tiny), TrainConfig(valid_every=2), progress=False)


def test_fit_is_train_over_bucketed_batches_with_a_validation_sample(tiny):
    config = TrainConfig(batch_size=8, epochs=2, lr=1e-2, log_every=1, valid_every=3,
                         valid_pairs=4, valid_batch_size=3)

    def fresh(reverse):
        torch.manual_seed(0)
        return make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=4, hidden_size=8,
                         reverse_source=reverse)

    for reverse in (False, True):
        model = fresh(reverse)
        history = fit(model, tiny, config, progress=False)
        by_hand = fresh(reverse)
        loader = bucket_loader(tiny.dataset("train"), 8, reverse_source=reverse)
        valid_set = TranslationDataset(sample_pairs(tiny.valid, 4), tiny.src_vocab,
                                       tiny.tgt_vocab)
        valid = bucket_loader(valid_set, 3, shuffle=False, reverse_source=reverse)
        assert history == train(by_hand, loader, config, valid_loader=valid, progress=False)
        assert history["valid_step"] and history["updates"] == 2 * len(loader)


def test_fit_validates_on_a_random_sample_not_the_first_rows(tiny, monkeypatch):
    """Splits keep the corpus order (sorted by length): the first rows are the shortest."""
    by_length = replace(tiny, valid=sorted(tiny.valid, key=lambda p: len(p[1])))
    seen = []

    class Recording(TranslationDataset):
        def __init__(self, pairs, *args, **kw):
            seen.append(list(pairs))
            super().__init__(pairs, *args, **kw)

    monkeypatch.setattr(training, "TranslationDataset", Recording)
    torch.manual_seed(0)
    model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=4, hidden_size=8)
    fit(model, by_length, TrainConfig(batch_size=8, steps=1, valid_pairs=4), progress=False)
    assert seen == [sample_pairs(by_length.valid, 4)]
    assert seen[0] != by_length.valid[:4]


def test_a_smoke_run_makes_a_few_small_updates_and_validates_after_each(tiny):
    """``run.smoke`` (the full profile's code on a CPU, tests/test_colab.py): a few small
    updates, each logged and validated; evaluation samples are not capped by it."""
    from seq2seq_lib import device

    big = replace(tiny, train=tiny.train * 8)  # 50 updates: a few epochs
    config = TrainConfig(batch_size=32, epochs=10, steps=50, lr=1e-2, log_every=25, valid_every=25,
                         valid_pairs=40, valid_batch_size=40)

    def train_it(run):
        torch.manual_seed(0)
        model = make_cho(len(tiny.src_vocab), len(tiny.tgt_vocab), embed_size=4, hidden_size=8)
        return fit(model, big, config, run=run, progress=False)

    normal = train_it(device.CPU)
    assert normal["updates"] == 50 and normal["valid_step"] == [25, 50]
    smoke = train_it(device.Run(torch.device("cpu"), "full", smoke=True))
    updates = device.SMOKE_UPDATES
    assert smoke["updates"] == updates and smoke["step"] == list(range(1, updates + 1))
    assert smoke["valid_step"] == list(range(1, updates + 1))
    assert smoke["tokens"] <= updates * device.SMOKE_BATCH * 6  # targets: <= 5 letters + <eos>
    assert len(sample_pairs(big.train, None)) == len(big.train)


def test_the_smoke_switch_comes_from_the_environment_through_setup_only(monkeypatch):
    """``SEQ2SEQ_SMOKE=1`` reaches the library only as ``setup(...).smoke``: with the variable
    set, a function given the default run trains its whole budget."""
    from seq2seq_lib import device
    from seq2seq_lib.sequence_model import SequenceConfig, SequenceModel, train_sequence_model
    from seq2seq_lib.tasks import make_task

    monkeypatch.setenv(device.ENV_SMOKE, "1")
    assert device.setup("cpu", "full").smoke
    task = make_task("first_token", 5)
    model = SequenceModel(SequenceConfig("gru", task.input_size, 4, task.output_size))
    assert train_sequence_model(model, task, steps=6, log_every=1)["step"] == list(range(1, 7))
    smoke = device.setup("cpu", "full")
    assert train_sequence_model(model, task, steps=6, log_every=1, run=smoke)["step"] == list(
        range(1, device.SMOKE_UPDATES + 1))
    monkeypatch.delenv(device.ENV_SMOKE)
    assert not device.setup("cpu", "full").smoke


def test_a_smoke_run_keeps_small_validation_and_test_splits(tmp_path, monkeypatch):
    from seq2seq_lib import device
    from seq2seq_lib.corpus import load_translation_data
    from seq2seq_lib.recipes import ch07

    rng = random.Random(0)
    lines = [f"{' '.join(rng.choice('abcdefgh') for _ in range(rng.randint(1, 6)))}\tx {i}"
             for i in range(3000)]
    corpus = tmp_path / "fra.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    normal = load_translation_data(corpus, min_freq=1, verify=False)
    monkeypatch.setattr(ch07, "load_translation_data", lambda **_: normal)
    assert ch07.translation_data(device.CPU) is normal
    smoke = ch07.translation_data(device.Run(torch.device("cpu"), "full", smoke=True))
    assert len(normal.valid) > device.SMOKE_SPLIT
    assert len(smoke.valid) == len(smoke.test) == device.SMOKE_SPLIT
    assert smoke.stats["test"] == device.SMOKE_SPLIT

    def keys(split):
        return {(tuple(s), tuple(t)) for s, t in split}

    assert smoke.train == normal.train
    assert keys(smoke.valid) <= keys(normal.valid) and keys(smoke.test) <= keys(normal.test)
