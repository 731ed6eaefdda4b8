"""The translator (export, safe load, clear errors) and the seq2seq-translate command; the
checkpoint format itself (seq2seq_lib.checkpoint) as a translator uses it."""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import torch
from helpers import ROOT
from torch import nn

from seq2seq_lib import cache
from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
from seq2seq_lib.beam import beam_search
from seq2seq_lib.checkpoint import (
    FORMAT,
    CheckpointError,
    CheckpointNotFoundError,
    IncompatibleCheckpointError,
    NotACheckpointError,
    read_checkpoint,
)
from seq2seq_lib.decoding import greedy_search
from seq2seq_lib.encoder_decoder import ChoConfig, ChoModel
from seq2seq_lib.evaluation import translate as translate_tokens
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.translator import Translator, export_translator, load_translator, main
from seq2seq_lib.vocab import Vocab, detokenize, tokenize

SRC = Vocab.build([["je", "suis", "content", ".", "tu", "es", "triste", "!", "il", "a", "faim"]])
TGT = Vocab.build([["i", "am", "happy", ".", "you", "are", "sad", "!", "he", "is", "hungry"]])
SENTENCES = ["Je suis content.", "Tu es triste !", "il a faim", "Je suis inconnu ?"]

CONFIGS = {
    "TranslatorModel": TranslatorConfig(len(SRC), len(TGT), style="luong", embed_size=8,
                                        hidden_size=12),
    "Bahdanau": TranslatorConfig(len(SRC), len(TGT), style="bahdanau", embed_size=8,
                                 hidden_size=12),  # bidirectional encoder
    "Seq2SeqModel": Seq2SeqConfig(len(SRC), len(TGT), embed_size=8, hidden_size=12,
                                  num_layers=2),  # reversed source
    "ChoModel": ChoConfig(len(SRC), len(TGT), embed_size=8, hidden_size=12),
}
CLASSES = {TranslatorConfig: TranslatorModel, Seq2SeqConfig: Seq2SeqModel, ChoConfig: ChoModel}
KEYS = {"format", "model", "config", "state_dict", "history", "vocabs", "text", "metadata",
        "training", "versions"}


def make_model(kind: str = "TranslatorModel") -> nn.Module:
    """A tiny untrained model with large random weights, so outputs vary and some stop early."""
    torch.manual_seed({"ChoModel": 3, "Bahdanau": 2}.get(kind, 1))  # seeds whose outputs vary
    config = CONFIGS[kind]
    model = CLASSES[type(config)](config)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0)
    return model


def export(tmp_path: Path, kind: str = "TranslatorModel", name: str = "translator.pt") -> Path:
    return export_translator(
        tmp_path / name, make_model(kind), SRC, TGT,
        metadata={"bleu": 12.5, "config": {"epochs": 1}},
    )


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("kind", sorted(CONFIGS))
def test_round_trip_translates_exactly_like_the_original_model(tmp_path, kind):
    model = make_model(kind)
    path = export_translator(tmp_path / "t.pt", model, SRC, TGT, metadata={"bleu": 12.5})
    loaded = load_translator(path)
    assert isinstance(loaded, Translator) and not loaded.model.training
    assert type(loaded.model) is type(model) and loaded.model.config == model.config
    for (name, a), b in zip(model.state_dict().items(), loaded.model.state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name
    assert loaded.src_vocab == SRC and loaded.tgt_vocab == TGT
    assert loaded.checkpoint.text == {"src_lang": "fr", "tgt_lang": "en", "lowercase": True}
    assert loaded.checkpoint.metadata == {"bleu": 12.5}
    assert loaded.model.reverse_source == model.reverse_source
    tokens = [tokenize(s) for s in SENTENCES]
    for k, search in [(1, greedy_search), (3, partial(beam_search, beam_size=3, alpha=0.5))]:
        expected = [detokenize(t) for t in translate_tokens(model, tokens, SRC, TGT, search=search)]
        assert loaded.translate(SENTENCES, beam_size=k, alpha=0.5) == expected
        assert len(set(expected)) > 1  # the tiny model says different things


def test_checkpoint_is_plain_data_and_loads_with_weights_only(tmp_path):
    path = export(tmp_path)
    ckpt = torch.load(path, weights_only=True)
    assert set(ckpt) == KEYS
    assert ckpt["format"] == FORMAT == "seq2seq-course-checkpoint/3"
    assert ckpt["model"] == "seq2seq_lib.attention_seq2seq.TranslatorModel"
    assert ckpt["config"] == dataclasses.asdict(CONFIGS["TranslatorModel"])
    assert ckpt["config"]["score"] == "general"  # resolved, not None
    assert ckpt["vocabs"]["src"] == SRC.itos and all(type(t) is str for t in ckpt["vocabs"]["tgt"])
    assert ckpt["metadata"] == {"bleu": 12.5, "config": {"epochs": 1}}
    assert ckpt["history"] is None and ckpt["training"] is None
    assert all(v.device.type == "cpu" for v in ckpt["state_dict"].values())
    assert ckpt["versions"]["torch"] == torch.__version__
    assert not list(tmp_path.glob("*.tmp"))  # written atomically, no temporary left over


def test_languages_and_case_are_stored(tmp_path):
    model = make_model()  # both vocabularies have 15 tokens: swap them
    path = export_translator(tmp_path / "t.pt", model, TGT, SRC, src_lang="en", tgt_lang="fr",
                             lowercase=False)
    loaded = load_translator(path)
    assert loaded.checkpoint.text == {"src_lang": "en", "tgt_lang": "fr", "lowercase": False}
    assert loaded.src_vocab == TGT and loaded.checkpoint.metadata == {}
    with pytest.raises(ValueError, match="tgt_lang"):
        export_translator(tmp_path / "t.pt", model, TGT, SRC, tgt_lang="de")


def test_export_and_load_leave_the_global_random_state_alone(tmp_path):
    model = make_model()
    torch.manual_seed(123)
    export_translator(tmp_path / "t.pt", model, SRC, TGT)
    load_translator(tmp_path / "t.pt")
    read_checkpoint(tmp_path / "t.pt")
    after = torch.rand(3)
    torch.manual_seed(123)
    assert torch.equal(after, torch.rand(3))


def test_empty_input_gives_an_empty_translation(tmp_path):
    loaded = load_translator(export(tmp_path))
    out = loaded.translate(["", "Je suis content.", "   "])
    assert out[0] == "" and out[2] == "" and out[1] == loaded.translate(["je suis content ."])[0]
    assert loaded.translate([]) == []


def test_translate_validates_its_options(tmp_path):
    loaded = load_translator(export(tmp_path))
    for bad in ({"beam_size": 0}, {"alpha": -0.5}, {"max_len": 0}, {"alpha": float("nan")}):
        with pytest.raises(ValueError):
            loaded.translate(["je suis content ."], **bad)
    with pytest.raises(TypeError, match="list of sentences"):
        loaded.translate("je suis content .")


# --------------------------------------------------------------------------- export checks


def test_export_rejects_what_a_checkpoint_cannot_rebuild(tmp_path):
    model = make_model()
    bigger = Vocab.build([[*SRC.itos[4:], "encore"]])
    with pytest.raises(ValueError, match="src_vocab has 16 tokens.*src_vocab_size=15"):
        export_translator(tmp_path / "t.pt", model, bigger, TGT)
    with pytest.raises(ValueError, match="cannot export a Linear"):
        export_translator(tmp_path / "t.pt", nn.Linear(2, 2), SRC, TGT)

    class Custom(TranslatorModel):  # defined outside the library: no file could rebuild it
        pass

    with pytest.raises(ValueError, match="cannot export a Custom"):
        export_translator(tmp_path / "t.pt", Custom(CONFIGS["TranslatorModel"]), SRC, TGT)
    model.config = {"style": "luong"}
    with pytest.raises(ValueError, match="cannot export a TranslatorModel"):
        export_translator(tmp_path / "t.pt", model, SRC, TGT)
    with pytest.raises(ValueError, match="JSON-like"):
        export_translator(tmp_path / "t.pt", make_model(), SRC, TGT, metadata={"model": model})
    assert not (tmp_path / "t.pt").exists()


# --------------------------------------------------------------------------- command line


def test_main_translates_sentence_arguments(tmp_path, capsys):
    path = export(tmp_path)
    expected = load_translator(path).translate(SENTENCES[:2], beam_size=3, alpha=1.0)
    code, out, err = run_main([path, *SENTENCES[:2], "-k", "3", "--alpha", "1.0"], capsys)
    assert code == 0 and err == ""
    assert out.split("\n") == [*expected, ""]  # one line per sentence


def test_main_reads_one_sentence_per_line_from_stdin(tmp_path, capsys, monkeypatch):
    path = export(tmp_path, "Seq2SeqModel")
    monkeypatch.setattr(sys, "stdin", io.StringIO("Je suis content.\n\nil a faim\r\n"))
    code, out, err = run_main([path, "--max-len", "5", "--device", "cpu"], capsys)
    lines = out.split("\n")
    assert code == 0 and err == ""
    assert len(lines) == 4 and lines[-1] == "" and lines[1] == ""  # empty line in, empty line out
    assert lines[:3] == load_translator(path).translate(
        ["Je suis content.", "", "il a faim"], max_len=5)


class TerminalInput(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_main_translates_typed_lines_one_by_one(tmp_path, capsys, monkeypatch):
    path = export(tmp_path)
    monkeypatch.setattr(sys, "stdin", TerminalInput("il a faim\n\nTu es triste !\n"))
    code, out, _ = run_main([path], capsys)
    assert code == 0
    assert out.split("\n")[:3] == load_translator(path).translate(["il a faim", "", "Tu es triste !"])


def test_options_may_come_between_checkpoint_and_sentences(tmp_path, capsys):
    path = export(tmp_path)
    code, out, _ = run_main([path, "-k", "2", "je suis content ."], capsys)
    assert code == 0 and len(out.splitlines()) == 1


@pytest.mark.parametrize("option", [["-k", "0"], ["--alpha", "-1"], ["--max-len", "0"],
                                    ["--device", "tpu"]])
def test_bad_option_values_exit_2_with_a_message(tmp_path, capsys, option):
    code, out, err = run_main([export(tmp_path), "je suis content .", *option], capsys)
    assert code == 2 and out == ""
    assert err.startswith("seq2seq-translate: error: ") and "Traceback" not in err
    assert {"-k": "beam size", "--alpha": "alpha", "--max-len": "max_len",
            "--device": "device"}[option[0]] in err


def test_python_dash_m_help_works():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                     os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "seq2seq_lib.translator", "--help"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "seq2seq-translate" in proc.stdout and "--beam-size" in proc.stdout


# --------------------------------------------------------------------------- bad checkpoints


def _edit(tmp_path: Path, change) -> Path:
    """Export a good checkpoint, change its dict with ``change(ckpt)`` and save it again."""
    path = export(tmp_path)
    ckpt = torch.load(path, weights_only=True)
    change(ckpt)
    torch.save(ckpt, path)
    return path


def _cache_file(tmp_path: Path) -> Path:
    def train(model):
        return {"loss": [1.0]}

    trained = cache.train_or_load("tiny", {"h": 2}, lambda: nn.Linear(2, 2), train,
                                  directory=tmp_path / "cache")
    return trained.path


def _random_bytes(tmp_path: Path) -> Path:
    path = tmp_path / "random.pt"
    path.write_bytes(bytes(torch.randint(0, 256, (512,), generator=torch.Generator().manual_seed(0))
                           .to(torch.uint8).tolist()))
    return path


def _old_translator(tmp_path: Path) -> Path:
    """A translator checkpoint as an earlier seq2seq_lib wrote it (its own format, version 2)."""
    path = tmp_path / "old.pt"
    torch.save({"format": "seq2seq-course-translator/2", "model": "TranslatorModel",
                "config": {}, "state_dict": {}}, path)
    return path


def _wrong_shape(ckpt):
    ckpt["state_dict"]["decoder.W_s.weight"] = torch.zeros(3, 12)


BAD = {
    "missing": (lambda tmp: tmp / "nowhere.pt", CheckpointNotFoundError,
                ["does not exist", "nowhere.pt"]),
    "random bytes": (_random_bytes, NotACheckpointError,
                     ["is not a checkpoint", "corrupt"]),
    "cache file": (_cache_file, IncompatibleCheckpointError,
                   ["not a translator", "no a library model class, no vocabularies",
                    "export_translator"]),
    "no format tag": (lambda tmp: _edit(tmp, lambda c: c.pop("format")), NotACheckpointError,
                      ["without the 'format' tag"]),
    "old translator": (_old_translator, IncompatibleCheckpointError,
                       ["older seq2seq_lib", "'seq2seq-course-translator/2'",
                        "export_translator"]),
    "version 4": (lambda tmp: _edit(tmp, lambda c: c.update(
                  format="seq2seq-course-checkpoint/4")),
                  IncompatibleCheckpointError, ["format version '4'", "reads only version 3"]),
    "unknown model": (lambda tmp: _edit(tmp, lambda c: c.update(
                      model="seq2seq_lib.transformer.Transformer")),
                      IncompatibleCheckpointError, ["'seq2seq_lib.transformer.Transformer'",
                                                    "does not have"]),
    "outside class": (lambda tmp: _edit(tmp, lambda c: c.update(model="os.system")),
                      IncompatibleCheckpointError, ["'os.system'", "does not have"]),
    "unknown field": (lambda tmp: _edit(tmp, lambda c: c["config"].update(heads=8)),
                      IncompatibleCheckpointError, ["TranslatorModel", "heads"]),
    "rejected config": (lambda tmp: _edit(tmp, lambda c: c["config"].update(style="rnn")),
                        IncompatibleCheckpointError, ["TranslatorModel", "style", "'rnn'"]),
    "vocab size": (lambda tmp: _edit(tmp, lambda c: c["config"].update(tgt_vocab_size=99)),
                   IncompatibleCheckpointError, ["decoder", "99"]),
    "vocabularies": (lambda tmp: _edit(tmp, lambda c: c["vocabs"]["tgt"].pop()),
                     IncompatibleCheckpointError, ["15 and 14 tokens", "15 and 15"]),
    "wrong shape": (lambda tmp: _edit(tmp, _wrong_shape), IncompatibleCheckpointError,
                    ["decoder.W_s.weight", "[3, 12]", f"[{len(TGT)}, 12]"]),
    "missing key": (lambda tmp: _edit(tmp, lambda c: c["state_dict"].pop("decoder.W_s.bias")),
                    IncompatibleCheckpointError, ["decoder.W_s.bias", "Missing"]),
}


def test_a_cached_library_model_is_rebuilt_without_its_recipe(tmp_path):
    config = CONFIGS["TranslatorModel"]
    trained = cache.train_or_load("tiny-translator", {"c": 1}, lambda: TranslatorModel(config),
                                  lambda model: {"loss": [1.0]}, directory=tmp_path)
    again = read_checkpoint(trained.path)
    assert type(again.model) is TranslatorModel and again.model.config == config
    assert again.history == {"loss": [1.0]} and again.metadata["cache"]["name"] == "tiny-translator"
    for a, b in zip(trained.model.state_dict().values(), again.model.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_checkpoint_is_a_clear_error(tmp_path, capsys, case):
    make, error, words = BAD[case]
    path = make(tmp_path)
    with pytest.raises(error) as info:
        load_translator(path)
    assert isinstance(info.value, CheckpointError)
    for word in words:
        assert word in str(info.value)
    code, out, err = run_main([path, "je suis content ."], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("seq2seq-translate: error: ") and words[0] in err
    assert err.count("\n") == 1  # one line


def test_a_missing_file_is_also_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_translator(tmp_path / "nowhere.pt")


# --------------------------------------------------------------------------- defaults, warnings


def _export_with_search(tmp_path: Path, **metadata) -> Path:
    return export_translator(tmp_path / "chosen.pt", make_model(), SRC, TGT, train_max_len=3,
                             metadata=metadata)


def test_the_search_stored_at_export_is_the_default_and_flags_override_it(tmp_path, capsys):
    path = _export_with_search(tmp_path, beam_size=3, alpha=0.5)
    translator = load_translator(path)
    assert translator.default_search == (3, 0.5)
    beam = translator.translate(SENTENCES, beam_size=3, alpha=0.5)
    greedy = translator.translate(SENTENCES, beam_size=1)
    assert beam != greedy  # (the tiny model's beam and greedy outputs differ here)
    assert translator.translate(SENTENCES) == beam
    assert run_main([path, *SENTENCES], capsys)[1].splitlines() == beam
    assert run_main([path, *SENTENCES, "-k", "1"], capsys)[1].splitlines() == greedy
    plain = load_translator(export(tmp_path))  # nothing stored: greedy
    assert plain.default_search == (1, 0.0)
    assert plain.translate(SENTENCES) == plain.translate(SENTENCES, beam_size=1)


def test_export_rejects_a_stored_search_that_cannot_run(tmp_path):
    with pytest.raises(ValueError, match="beam size"):
        _export_with_search(tmp_path, beam_size=0)
    with pytest.raises(ValueError, match="alpha"):
        _export_with_search(tmp_path, alpha=-1.0)


def test_raw_input_of_any_casing_and_spacing_reads_like_the_training_text(tmp_path):
    translator = load_translator(_export_with_search(tmp_path))
    assert translator.tokenize("  JE   suis\u202fCONTENT!") == ["je", "suis", "content", "!"]
    assert (translator.translate(["  JE   suis\u202fCONTENT!"])
            == translator.translate(["je suis content !"]))


def test_the_command_warns_about_sentences_longer_than_the_training_ones(tmp_path, capsys,
                                                                          monkeypatch):
    path = _export_with_search(tmp_path)
    code, out, err = run_main([path, "il a faim", "Je suis content ."], capsys)
    assert code == 0 and len(out.splitlines()) == 2
    assert err.count("warning") == 1
    assert "sentence 2 has 4 tokens" in err and "at most 3" in err
    assert len(err.splitlines()) == 2 and all(len(line) <= 80 for line in err.splitlines())
    monkeypatch.setattr("sys.stdin", io.StringIO("Tu es triste !\nil a faim\n"))
    code, out, err = run_main([path], capsys)
    assert code == 0 and "sentence 1 has 4 tokens" in err and "sentence 2" not in err
    assert run_main([export(tmp_path), "Je suis content ."], capsys)[2] == ""  # no length stored


def test_a_subword_translator_round_trips_and_writes_cased_text_without_unk(tmp_path):
    from seq2seq_lib.subwords import SubwordVocab, learn_bpe, piece_counts
    from seq2seq_lib.vocab import UNK_ID

    src = SubwordVocab(learn_bpe(piece_counts(SENTENCES), vocab_size=40))
    tgt = SubwordVocab(learn_bpe(piece_counts(["I am happy.", "You are sad!", "He is hungry"]),
                                 vocab_size=30))
    torch.manual_seed(1)
    model = TranslatorModel(TranslatorConfig(len(src), len(tgt), embed_size=8, hidden_size=12))
    path = export_translator(tmp_path / "bpe.pt", model, src, tgt, lowercase=False)
    loaded = load_translator(path)
    assert isinstance(loaded.src_vocab, SubwordVocab) and loaded.src_vocab.bpe == src.bpe
    assert loaded.tgt_vocab.itos == tgt.itos
    assert loaded.tokenize("Je suis inconnu ?") == src.bpe.encode("Je suis inconnu ?")
    assert UNK_ID not in src.encode(loaded.tokenize("Tu es content !"))
    outputs = loaded.translate(SENTENCES, max_len=8)
    expected = [tgt.detokenize(t) for t in translate_tokens(
        model, [src.tokenize(s) for s in SENTENCES], src, tgt, max_len=8)]
    assert outputs == expected and "<unk>" not in " ".join(outputs)
    assert loaded.tgt_vocab.detokenize(tgt.tokenize("He is hungry")) == "He is hungry"  # cased


def test_saved_merges_that_do_not_give_the_saved_vocabulary_are_refused(tmp_path):
    from seq2seq_lib.subwords import SubwordVocab, learn_bpe, piece_counts

    src = SubwordVocab(learn_bpe(piece_counts(SENTENCES), vocab_size=40))
    tgt = SubwordVocab(learn_bpe(piece_counts(["I am happy.", "I am sad.", "I am here."]),
                                 vocab_size=20))
    assert tgt.bpe.merges
    model = TranslatorModel(TranslatorConfig(len(src), len(tgt), embed_size=8, hidden_size=12))
    path = export_translator(tmp_path / "bpe.pt", model, src, tgt, lowercase=False)
    ckpt = torch.load(path, weights_only=True)
    ckpt["text"]["bpe"]["tgt"]["merges"] = ckpt["text"]["bpe"]["tgt"]["merges"][:-1]
    torch.save(ckpt, path)
    with pytest.raises(CheckpointError, match="merges do not give"):
        load_translator(path)


def test_the_length_warning_counts_word_tokens_and_names_the_limit(tmp_path):
    translator = load_translator(_export_with_search(tmp_path))
    limit = translator.checkpoint.text["train_max_len"]
    assert limit == 3
    assert translator.length_warning("il a faim") is None
    # the marks , . ! ? count as tokens of their own, attached or not
    assert translator.length_warning("il a faim.") == (
        "4 tokens (words, and each , . ! ?);\n"
        "  the training sentences had at most 3, so expect a poorer translation")
    assert translator.length_warning("Je suis content .").startswith("4 tokens ")
    assert load_translator(export(tmp_path)).length_warning("Je suis content .") is None

