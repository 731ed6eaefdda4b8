"""scripts/translator_results.py writes a readable results file with its provenance.

The models are replaced by tiny untrained ones (the real run trains for minutes to hours);
what is tested is the script's own work: measuring, choosing, and the file it writes.
"""

from __future__ import annotations

import pytest
import torch

from scripts import translator_results
from seq2seq_lib import ablation
from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
from seq2seq_lib.cache import Trained
from seq2seq_lib.recipes import ch07, ch08, ch11


@pytest.fixture
def tiny(monkeypatch, tmp_path, tiny_translation_data):
    data = tiny_translation_data

    def fake_model(*_args, **_kwargs):
        torch.manual_seed(0)
        model = TranslatorModel(TranslatorConfig(len(data.src_vocab), len(data.tgt_vocab),
                                                 embed_size=4, hidden_size=4))
        history = {"updates": 1, "tokens": 10, "valid_step_loss": [4.0], "valid_loss": []}
        return Trained(model, history, tmp_path / "m.pt", loaded=False)

    monkeypatch.setattr(ch07, "translation_data", lambda run: data)
    monkeypatch.setattr(ch08, "translator_path", lambda *a, **k: tmp_path / "absent.pt")
    monkeypatch.setattr(ch08, "train_translators",
                        lambda run, data, variants, workers=None: {
                            label: fake_model() for label in variants})
    monkeypatch.setattr(ch07, "train_seq2seq", fake_model)
    for name in ("SEQ2SEQ_CACHE", "SEQ2SEQ_PROFILE", "SEQ2SEQ_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_script_writes_results_with_provenance(tiny, capsys):
    out = tiny / "results" / "translator-quick.json"
    args = ["--profile", "quick", "--device", "cpu", "--out", str(out),
            "--cache", str(tiny / "cache")]
    assert translator_results.main(args) == 0
    rows, beams, results = ablation.read_results(out)
    assert [r.label for r in rows] == [*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL]
    assert [b.k for b in beams] == list(ablation.BEAM_SIZES)
    p = results["provenance"]
    assert p["command"] == "python scripts/translator_results.py " + " ".join(args[:-1] + ["CACHE"])
    assert str(tiny / "cache") not in p["command"]  # no folder of this machine
    assert p["machine"]["cpu"] and p["versions"]["torch"] == torch.__version__
    assert p["models_trained"] == sorted([*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL])
    assert p["models_loaded_from_cache"] == [] and p["wall_seconds"] >= 0
    assert results["profile"] == "quick" and results["best_variant"] in ch11.VARIANTS
    assert any(line.startswith("command:") for line in ablation.provenance_lines(results))
    assert "wrote" in capsys.readouterr().out


def test_script_controls_writes_every_seed_of_every_group(tiny, capsys):
    out = tiny / "results" / "translator-controls-quick.json"
    args = ["--profile", "quick", "--device", "cpu", "--controls", "--out", str(out)]
    assert translator_results.main(args) == 0
    rows, results = ablation.read_controls(out)
    assert [r.label for r in rows] == list(ch11.control_jobs())
    assert results["provenance"]["models_trained"] == sorted(ch11.control_jobs())
    printed = capsys.readouterr().out
    assert "valid BLEU: mean" in printed and "Luong, scaled general" in printed
