"""The recipes (seq2seq_lib.recipes): chapter 8's translators (one decision per variant,
profiles, the cache file) and every model of chapter 11's ablation."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from seq2seq_lib import ablation
from seq2seq_lib.attention_seq2seq import TranslatorModel
from seq2seq_lib.buckets import bucket_batches
from seq2seq_lib.device import Run
from seq2seq_lib.recipes import Plan, build_model, ch08
from seq2seq_lib.recipes.ch07 import seq2seq_plan
from seq2seq_lib.recipes.ch11 import VARIANTS
from seq2seq_lib.translator import export_translator, load_translator

QUICK = Run(torch.device("cpu"), "quick", 0)
FULL = Run(torch.device("cpu"), "full", 0)
# One decision: the kind of attention (Bahdanau's decoder brings its bidirectional encoder
# and its maxout output layer).
ATTENTION = {"style", "score", "bidirectional_encoder", "maxout_size"}


def _build(plan: Plan) -> torch.nn.Module:
    """The plan's model with its initial weights, as training starts from them."""
    return build_model(plan.model_class, plan.model, plan.train.seed)


def _changes(data, variant):
    """The fields of the model and training configurations that ``variant`` changes."""
    base = ch08.translator_plan(QUICK, data)
    mine = ch08.translator_plan(QUICK, data, **variant)
    return {f.name for a, b in [(base.model, mine.model), (base.train, mine.train)]
            for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)}


def test_variants_change_one_decision_each(tiny_translation_data):
    for label, variant in VARIANTS.items():
        changed = _changes(tiny_translation_data, variant)
        assert changed <= ATTENTION or len(changed) == 1, (label, changed)
    assert _changes(tiny_translation_data, VARIANTS["Bahdanau, additive"]) == ATTENTION


def test_recipe_profiles_and_variants(tiny_translation_data):
    data = tiny_translation_data
    plan = ch08.translator_plan(QUICK, data, style="luong", score="dot", reverse_source=True,
                                teacher_forcing="scheduled")
    model, train = plan.model, plan.train
    assert model.reverse_source and model.score == "dot"
    assert model.src_vocab_size == len(data.src_vocab)
    planned = min(1000, 2 * bucket_batches(len(data.train), 128))  # this tiny corpus: epochs
    assert train.teacher_forcing == ch08.scheduled_translator(planned)
    full_plan = ch08.translator_plan(FULL, data)
    full, full_train = full_plan.model, full_plan.train
    assert (full.num_layers, full.hidden_size, full_train.steps) == (2, 512, 2200)
    assert ch08.translator_plan(QUICK, data).train.teacher_forcing == 1.0
    with pytest.raises(ValueError, match="teacher_forcing"):
        ch08.translator_plan(QUICK, data, teacher_forcing="sometimes")
    with pytest.raises(TypeError, match="colour"):
        ch08.translator_plan(QUICK, data, colour="red")


def test_scheduled_translator_falls_from_one_to_about_a_third():
    schedule = ch08.scheduled_translator(1000)
    assert schedule(0) > 0.99
    assert 0.45 < schedule(850) < 0.55
    assert 0.25 < schedule(1000) < 0.35
    assert all(schedule(i) >= schedule(i + 1) for i in range(0, 1000, 50))


def test_translator_path_names_the_variant_and_differs_between_variants(tiny_translation_data):
    data = tiny_translation_data
    paths = {label: ch08.translator_path(QUICK, data, **kw)
             for label, kw in VARIANTS.items()}
    assert len(set(paths.values())) == len(paths)
    assert paths["Bahdanau, additive"].name.startswith("translator-bahdanau-additive-")
    assert paths["general + scheduled sampling"].name.startswith(
        "translator-luong-general-scheduled-")
    assert ch08.translator_path(QUICK, data) == paths["Luong, general"]


def test_every_ablation_model_exports_and_loads(tiny_translation_data, tmp_path):
    data = tiny_translation_data
    for label in [*VARIANTS, ablation.SEQ2SEQ_LABEL]:
        if label == ablation.SEQ2SEQ_LABEL:
            model = _build(seq2seq_plan(QUICK, data))
        else:
            model = _build(ch08.translator_plan(QUICK, data, **VARIANTS[label]))
            assert isinstance(model, TranslatorModel)
        path = export_translator(tmp_path / "t.pt", model, data.src_vocab, data.tgt_vocab)
        loaded = load_translator(path).model
        assert loaded.config == model.config and loaded.reverse_source == model.reverse_source


def test_seed_and_learning_rate_change_only_what_they_name(tiny_translation_data):
    data = tiny_translation_data
    base = ch08.translator_plan(QUICK, data)
    plan = ch08.translator_plan(QUICK, data, seed=2, lr=1e-3)
    base_model, base_train, model, train = base.model, base.train, plan.model, plan.train
    assert model == base_model
    assert dataclasses.replace(train, seed=0, lr=base_train.lr) == base_train
    assert (train.seed, train.lr, base_train.seed, base_train.lr) == (2, 1e-3, 0, 5e-3)
    variants = ({}, {"seed": 0}, {"seed": 1}, {"lr": 1e-3}, {"lr": 1e-3, "seed": 1})
    paths = {ch08.translator_path(QUICK, data, **kw).name.rsplit("-", 1)[0] for kw in variants}
    assert paths == {ch08.translator_plan(QUICK, data, **kw).name for kw in variants}
    assert paths == {"translator-luong-general", "translator-luong-general-seed1",
                     "translator-luong-general-lr0.001", "translator-luong-general-lr0.001-seed1"}
    assert (ch08.translator_path(QUICK, data, seed=0)
            == ch08.translator_path(QUICK, data))  # seed 0 is the chapters' model


def test_the_seed_sets_the_initial_weights(tiny_translation_data):
    data = tiny_translation_data
    weights = {}
    for seed in (0, 0, 1):
        model = _build(ch08.translator_plan(QUICK, data, seed=seed))
        weights.setdefault(seed, []).append(model.decoder.W_s.weight.detach().clone())
    torch.testing.assert_close(weights[0][0], weights[0][1], rtol=0, atol=0)
    assert not torch.equal(weights[0][0], weights[1][0])


def test_the_subword_translator_is_chapter_8s_recipe_on_subwords_keyed_apart(monkeypatch):
    from seq2seq_lib.device import SMOKE_SPLIT
    from seq2seq_lib.recipes import ch11, plan_path

    rng = __import__("random").Random(0)
    words = ["le", "chat", "Chien", "noir", "dort", "mange", "un", "petit"]
    raw = [(f"Sentence {i % 300}.", " ".join(rng.choice(words) for _ in range(rng.randint(1, 6))))
           for i in range(2000)]  # (English, French), as read_pairs gives them
    monkeypatch.setattr(ch11, "read_pairs", lambda path: raw)
    monkeypatch.setattr(ch11, "find_corpus", lambda: "corpus")
    data = ch11.subword_translation_data(QUICK)
    assert data.src_vocab.tokenize("Le chat") == data.src_vocab.bpe.encode("Le chat")
    smoke = ch11.subword_translation_data(dataclasses.replace(QUICK, smoke=True))
    assert len(smoke.test) == SMOKE_SPLIT < len(data.test) and smoke.train == data.train
    words_plan = ch08.translator_plan(QUICK, data, style="bahdanau")
    plan = ch11.subword_translator_plan(QUICK, data, style="bahdanau")
    assert (plan.model, plan.train) == (words_plan.model, words_plan.train)
    assert plan.name == f"{words_plan.name}-subwords{ch11.SUBWORD_SYMBOLS}"
    assert plan.data["units"] == "subwords" and plan_path(plan, data, QUICK).name.startswith(
        plan.name + "-")
