"""The train-or-load cache: trains once, loads afterwards, keyed by config and code."""

import pickle
import shutil
from dataclasses import dataclass

import pytest
import torch
from torch import nn

from seq2seq_lib import cache, chapters, training
from seq2seq_lib.checkpoint import NotACheckpointError, read_checkpoint, save_checkpoint
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.training import TrainConfig


def build():
    torch.manual_seed(0)
    return nn.Linear(3, 2)


def make_train(calls):
    def train(model):
        calls.append(1)
        with torch.no_grad():
            model.weight.add_(1.0)
        return {"loss": [0.5, 0.25], "epochs": 2, "note": "ok"}

    return train


def test_trains_once_then_loads(tmp_path):
    calls = []
    train = make_train(calls)
    first = cache.train_or_load("m", {"h": 2}, build, train, directory=tmp_path)
    second = cache.train_or_load("m", {"h": 2}, build, train, directory=tmp_path)
    assert len(calls) == 1
    assert (first.loaded, second.loaded) == (False, True)
    assert second.history == first.history == {"loss": [0.5, 0.25], "epochs": 2, "note": "ok"}
    assert torch.equal(first.model.weight, second.model.weight)
    assert not torch.equal(second.model.weight, build().weight)  # trained weights, not fresh ones


def test_key_depends_on_config_and_training_code(tmp_path):
    calls = []
    train = make_train(calls)
    cache.train_or_load("m", {"h": 2}, build, train, directory=tmp_path)
    cache.train_or_load("m", {"h": 3}, build, train, directory=tmp_path)
    assert len(calls) == 2

    def other_train(model):  # a different recipe must not load the old weights
        calls.append(1)
        return {"loss": [1.0]}

    out = cache.train_or_load("m", {"h": 2}, build, other_train, directory=tmp_path)
    assert len(calls) == 3 and out.history == {"loss": [1.0]}


def test_a_smoke_runs_models_are_kept_apart_from_real_ones(tmp_path):
    """A model trained in a smoke run (a few updates) is never loaded by a real run."""
    from seq2seq_lib.device import CPU, Run

    calls = []
    train = make_train(calls)
    smoke = Run(torch.device("cpu"), "full", smoke=True)
    real = cache.train_or_load("m", {"h": 2}, build, train, run=CPU, directory=tmp_path)
    fake = cache.train_or_load("m", {"h": 2}, build, train, run=smoke, directory=tmp_path)
    assert len(calls) == 2 and real.path != fake.path
    assert cache.train_or_load("m", {"h": 2}, build, train, run=smoke, directory=tmp_path).loaded


def test_key_depends_on_library_code(monkeypatch):
    train = make_train([])
    k1 = cache.cache_key("m", {"h": 2}, build, train)
    monkeypatch.setattr(cache, "library_fingerprint", lambda modules=None: "changed")
    assert cache.cache_key("m", {"h": 2}, build, train) != k1


def build_seq2seq():
    torch.manual_seed(0)
    return Seq2SeqModel(Seq2SeqConfig(10, 10, embed_size=4, hidden_size=4, num_layers=1))


def fit_seq2seq(model):
    return training.train(model, [], TrainConfig(epochs=0))


def test_the_library_code_of_a_model_is_what_builds_and_trains_it():
    modules = cache.model_modules(build_seq2seq, fit_seq2seq)
    assert {"seq2seq", "encoder_decoder", "training", "batches", "vocab", "numerics"} <= modules
    assert not modules & {"bleu", "beam", "attention", "translator", "tasks", "ablation",
                          "recipes"}
    assert modules == chapters.import_closure(modules)
    # a notebook's code: found through the functions, classes and modules it names
    assert cache.model_modules(lambda: nn.Linear(2, 2), lambda m: {}) == (
        chapters.import_closure({"numerics"}))
    assert "sequence_model" in cache.model_modules(lambda: None, lambda m: training_task(m))
    assert "bleu" in cache.model_modules(Helper, lambda m: {})


def training_task(model):
    from seq2seq_lib import sequence_model

    return sequence_model.train_sequence_model


class Helper(nn.Module):
    def forward(self, x):
        return _uses_bleu(x)


def _uses_bleu(x):
    from seq2seq_lib import bleu

    return bleu


def test_key_changes_with_the_sources_inside_its_closure_only(tmp_path, monkeypatch):
    copy = tmp_path / "seq2seq_lib"
    shutil.copytree(chapters.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "LIBRARY_ROOT", copy)
    config = {"model": Seq2SeqConfig(10, 10), "train": TrainConfig()}
    key = cache.cache_key("m", config, build_seq2seq, fit_seq2seq)
    with open(copy / "bleu.py", "a", encoding="utf-8") as f:  # outside the closure
        f.write("\n# a comment\n")
    assert cache.cache_key("m", config, build_seq2seq, fit_seq2seq) == key
    with open(copy / "encoder_decoder.py", "a", encoding="utf-8") as f:  # inside it
        f.write("\n# a comment\n")
    assert cache.cache_key("m", config, build_seq2seq, fit_seq2seq) != key


@dataclass(frozen=True)
class Sizes:
    hidden: int = 3


def test_config_is_canonical_json_and_dataclasses_are_part_of_it(tmp_path):
    train = make_train([])
    key = cache.cache_key("m", {"a": 1, "b": [Sizes()]}, build, train)
    assert cache.cache_key("m", {"b": (Sizes(),), "a": 1}, build, train) == key  # order, tuples
    assert cache.cache_key("m", {"a": 1, "b": [Sizes(4)]}, build, train) != key
    assert cache.cache_key("m", {"a": 1, "b": [{"hidden": 3}]}, build, train) != key  # the class
    trained = cache.train_or_load("m", {"s": Sizes()}, build, train, directory=tmp_path)
    saved = read_checkpoint(trained.path).metadata["cache"]
    assert saved == {"name": "m", "config": {"s": {"dataclass": "Sizes", "hidden": 3}}}


def test_config_must_be_json(tmp_path):
    with pytest.raises(TypeError, match="JSON"):
        cache.train_or_load("m", {"f": object()}, build, make_train([]), directory=tmp_path)
    with pytest.raises(TypeError, match="JSON"):
        cache.cache_key("m", TrainConfig(teacher_forcing=lambda i: 1.0), build, make_train([]))


def test_env_variable_sets_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "c"))
    out = cache.train_or_load("m", {}, build, make_train([]))
    assert out.path.parent == tmp_path / "c" and out.path.exists()


def test_a_failed_save_leaves_the_old_file(tmp_path):
    target = tmp_path / "x.pt"
    save_checkpoint(target, nn.Linear(2, 2), metadata={"n": 1})

    class Boom:
        def __reduce__(self):
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        save_checkpoint(target, nn.Linear(2, 2), history={"x": Boom()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.pt"]  # old file kept, no temp left
    assert read_checkpoint(target).metadata == {"n": 1}


def test_checkpoints_are_loaded_weights_only(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("code ran",))

    path = tmp_path / "evil.pt"
    with open(path, "wb") as fh:
        pickle.dump({"format": "seq2seq-course-checkpoint/3", "state_dict": Evil()}, fh,
                    protocol=2)
    with pytest.raises(NotACheckpointError, match="weights_only"):
        read_checkpoint(path)


def test_corrupt_cache_file_is_kept_aside_and_retrained(tmp_path):
    calls = []
    train = make_train(calls)
    out = cache.train_or_load("m", {}, build, train, directory=tmp_path)
    out.path.write_bytes(b"not a checkpoint")
    with pytest.warns(UserWarning, match="could not be loaded"):
        again = cache.train_or_load("m", {}, build, train, directory=tmp_path)
    assert len(calls) == 2 and not again.loaded
    assert out.path.with_suffix(".corrupt").read_bytes() == b"not a checkpoint"


def test_cache_path_is_the_file_train_or_load_writes(tmp_path):
    def build():
        return torch.nn.Linear(2, 2)

    def train(model):
        return {"loss": [1.0]}

    expected = cache.cache_path("m", {"h": 2}, build, train, directory=tmp_path)
    assert not expected.exists()
    trained = cache.train_or_load("m", {"h": 2}, build, train, directory=tmp_path)
    assert trained.path == expected and expected.exists()
    assert cache.cache_path("m", {"h": 3}, build, train, directory=tmp_path) != expected


def test_a_paused_run_is_continued_by_the_next_call_and_then_cached(tmp_path):
    """train_or_load(pause_at=n) caches nothing and keeps the run's state; the next call
    continues it, caches the finished model (equal to one trained in one call) and removes
    the state."""
    from seq2seq_lib.batches import TranslationData
    from seq2seq_lib.encoder_decoder import ChoConfig, ChoModel

    pairs = [(list(w), list(w[::-1])) for w in ["ab", "abc", "ba", "cab", "bca", "cc", "a", "b"] * 4]
    data = TranslationData.from_pairs(pairs, name="toy", seed=0)
    config = TrainConfig(lr=1e-2, batch_size=4, epochs=2, log_every=1, valid_every=2)

    def build_model():
        torch.manual_seed(0)
        return ChoModel(ChoConfig(len(data.src_vocab), len(data.tgt_vocab), embed_size=4,
                                  hidden_size=8))

    def train(model, **resume):
        return training.fit(model, data, config, progress=False, **resume)

    once = cache.train_or_load("one-call", {}, build_model, train, directory=tmp_path)
    paused = cache.train_or_load("split", {}, build_model, train, directory=tmp_path, pause_at=5)
    assert not paused.finished and paused.history["updates"] == 5
    assert not paused.path.exists() and cache.resume_path(paused.path).exists()
    done = cache.train_or_load("split", {}, build_model, train, directory=tmp_path)
    assert done.finished and not done.loaded and done.path.exists()
    assert not cache.resume_path(done.path).exists()
    assert done.history == once.history and done.history["updates"] > 5
    for a, b in zip(once.model.state_dict().values(), done.model.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)
    again = cache.train_or_load("split", {}, build_model, train, directory=tmp_path, pause_at=5)
    assert again.loaded and again.finished  # cached now: nothing to pause
    # a run that ends before pause_at is cached at once (the next call only loads it)
    short = cache.train_or_load("short", {}, build_model, train, directory=tmp_path,
                                pause_at=10_000)
    assert short.finished and not short.loaded and short.path.exists()
    assert not cache.resume_path(short.path).exists() and short.history == once.history
    for a, b in zip(once.model.state_dict().values(), short.model.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)
    assert cache.train_or_load("short", {}, build_model, train, directory=tmp_path,
                               pause_at=10_000).loaded


def _slow_train(model, log=None):  # module level: a spawned process must import it
    with open(log, "a") as handle:
        handle.write("start\n")
    import time

    time.sleep(1.0)
    with torch.no_grad():
        model.weight.add_(1.0)
    with open(log, "a") as handle:
        handle.write("end\n")
    return {"loss": [0.5]}


def _ask_for_slow_model(directory, log):
    import functools

    out = cache.train_or_load("slow", {"h": 1}, build, functools.partial(_slow_train, log=log),
                              directory=directory)
    return out.loaded


def test_processes_asking_for_one_model_at_once_train_it_once(tmp_path):
    import multiprocessing

    log = tmp_path / "log.txt"
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        loaded = pool.starmap(_ask_for_slow_model, [(tmp_path / "cache", log)] * 3)
    assert sorted(loaded) == [False, True, True]  # one trained, the other two waited and loaded
    assert log.read_text() == "start\nend\n"  # no second training began, not even overlapping


def test_the_lock_makes_a_second_holder_wait(tmp_path):
    import threading

    target = tmp_path / "m.pt"
    order = []
    with cache.locked(target):
        def other():
            with cache.locked(target):
                order.append("other")

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.5)
        order.append("first")  # the other thread is still waiting for the lock
    thread.join(5)
    assert order == ["first", "other"]
