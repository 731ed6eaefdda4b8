"""Chapter 11's ablation helpers: choices on validation, tables, results files."""

from __future__ import annotations

import json

import pytest
import torch

from seq2seq_lib import ablation
from seq2seq_lib.beam import beam_bleu
from seq2seq_lib.device import Run
from seq2seq_lib.recipes import ch11

QUICK = Run(torch.device("cpu"), "quick", 0)


def row(label, valid, test):
    return ablation.VariantRow(label, 10, 5, 640, 2.0, valid, test)


def test_best_variant_is_chosen_on_validation_not_test():
    rows = [row("a", 10.0, 30.0), row("b", 12.0, 11.0), row("c", 12.0, 40.0)]
    assert ablation.best_variant(rows).label == "b"  # highest valid; first on a tie
    with pytest.raises(ValueError):
        ablation.best_variant([])


def test_chosen_beam_prefers_validation_then_the_smaller_beam():
    beams = [ablation.BeamRow(1, 0.0, 13.0, 20.0, 6.5), ablation.BeamRow(5, 1.0, 15.0, 14.0, 6.1),
             ablation.BeamRow(10, 1.0, 15.0, 25.0, 6.0)]
    assert ablation.chosen_beam(beams).k == 5


def test_tables_round_as_documented():
    text = ablation.variant_table([row("Luong, general", 14.449, 9.25)])
    assert "14.4" in text and "9.2" in text and "2.00" in text and "640" in text
    beam = ablation.beam_table([ablation.BeamRow(10, 1.0, 15.96, 16.04, 6.256)])
    assert "16.0" in beam and "6.26" in beam


def test_results_file_round_trip(tmp_path):
    rows = [row("x", 1.0, 2.0)]
    beams = [ablation.BeamRow(1, 0.0, 1.0, 2.0, 3.0)]
    results = ablation.results_dict(QUICK, rows, beams, "x")
    results["provenance"] = {"command": "python scripts/translator_results.py"}
    path = ablation.write_results(results, tmp_path / "sub" / "r.json")
    got_rows, got_beams, whole = ablation.read_results(path)
    assert got_rows == rows and got_beams == beams
    assert whole["profile"] == "quick" and whole["chosen_beam"]["k"] == 1
    assert not list(path.parent.glob("*.tmp"))


def test_read_results_rejects_other_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"variants": [{"label": "x"}], "beam": []}))
    with pytest.raises(ValueError, match="not a translator results file"):
        ablation.read_results(bad)


def size_row(symbols, valid_bleu):
    return ablation.SizeRow(symbols, 1000 * symbols, 8.0, valid_bleu, "nrefs:var|case:mixed")


def test_the_subword_size_is_the_cheapest_within_the_tolerance_of_the_best():
    tol = ablation.SIZE_TOLERANCE
    rows = [size_row(2000, 30.0), size_row(4000, 33.0), size_row(8000, 33.0 + tol / 2)]
    assert ablation.choose_subword_size(rows) == 4000
    rows[1] = size_row(4000, 33.0 - tol)  # just outside: the best size wins
    assert ablation.choose_subword_size(rows[::-1]) == 8000
    rows[0] = size_row(2000, 33.5)  # the smallest size is best: taken
    assert ablation.choose_subword_size(rows) == 2000


def test_the_stored_subword_sizes_give_the_chapters_size():
    rows, whole = ablation.read_subword_sizes(ablation.subword_sizes_path("quick"))
    assert [r.symbols for r in rows] == sorted(r.symbols for r in rows) and len(rows) >= 2
    assert ablation.choose_subword_size(rows) == ch11.SUBWORD_SYMBOLS
    assert whole["chosen_on_validation"] == ch11.SUBWORD_SYMBOLS
    assert all(r.signature.startswith("nrefs:") and "case:mixed" in r.signature for r in rows)
    table = ablation.subword_size_table(rows)
    assert table.header[0] == "symbols" and f"{ch11.SUBWORD_SYMBOLS:,}" in table


def test_read_subword_sizes_rejects_other_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": {"2000": {"valid_bleu": 1.0}}}))
    with pytest.raises(ValueError, match="not a subword-sizes file"):
        ablation.read_subword_sizes(bad)


def test_rows_of_an_untrained_model_are_measured_on_the_right_splits(tiny_translation_data):
    from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
    from seq2seq_lib.cache import Trained

    data = tiny_translation_data
    torch.manual_seed(0)
    model = TranslatorModel(TranslatorConfig(len(data.src_vocab), len(data.tgt_vocab),
                                             embed_size=8, hidden_size=8))
    tokens = sum(len(t) + 1 for _, t in data.train)
    history = {"updates": 3, "tokens": 2 * tokens, "valid_step_loss": [], "valid_loss": [3.5]}
    row_ = ablation.variant_row("tiny", Trained(model, history, None, False), data)
    assert row_.pairs_seen == 2 * len(data.train) and row_.valid_loss == 3.5
    assert 0 <= row_.valid_bleu <= 100 and 0 <= row_.test_bleu <= 100
    kept = {}
    beams = ablation.beam_rows(model, data, beam_sizes=(1, 2), alphas=(0.0, 1.0),
                               test_results=kept)
    assert [b.k for b in beams] == [1, 2] and beams[0].alpha == 0.0
    assert sorted(kept) == [(1, 0.0), (2, 0.0), (2, 1.0)]
    assert all(kept[b.k, b.alpha].score == b.test_bleu for b in beams)
    for (k, alpha), result in kept.items():  # each is the search of that (k, alpha)
        alone = beam_bleu(model, data.test, data.src_vocab, data.tgt_vocab, beam_size=k,
                          alphas=(alpha,), limit=ablation.BEAM_TEST_LIMIT,
                          seed=ablation.SAMPLE_SEED)[alpha]
        assert result.hypotheses == alone.hypotheses and result.score == alone.score
    assert all(b.words_per_sentence >= 0 for b in beams)


def test_control_jobs_train_every_group_with_each_of_its_seeds():
    jobs = ch11.control_jobs()
    expected = {f"{group} | seed {s}" for group, _, seeds in ch11.CONTROLS for s in seeds}
    assert set(jobs) == expected and len(jobs) == len(expected)
    firsts = list(jobs)[: len(ch11.CONTROLS)]  # every seed-0 model first
    assert all(label.endswith("| seed 0") for label in firsts)
    assert jobs["Luong, concat | seed 2"] == {**ch11.VARIANTS["Luong, concat"], "seed": 2}
    assert jobs["Luong, scaled dot | seed 1"]["score"] == "scaled_dot"
    assert jobs["Luong, dot, lr 1e-3 | seed 0"]["lr"] == 1e-3
    groups = {group for group, _, _ in ch11.CONTROLS}
    assert {"Luong, dot", "Luong, general", "Luong, concat"} <= groups


def test_control_groups_gather_seeds_and_summarise(tmp_path):
    rows = [row("Luong, concat | seed 0", 28.0, 27.0), row("Luong, dot | seed 0", 16.0, 17.0),
            row("Luong, dot | seed 1", 20.0, 19.0), row("Luong, dot | seed 2", 12.0, 15.0)]
    groups = ablation.control_groups(rows)
    assert [g.group for g in groups] == ["Luong, dot", "Luong, concat"]  # CONTROLS' order
    dot = groups[0]
    assert dot.seeds == [0, 1, 2] and dot.valid_mean == 16.0 and dot.test_mean == 17.0
    table = ablation.control_table(groups)
    assert "(12.0-20.0)" in table and "(15.0-19.0)" in table and "16.0" in table
    with pytest.raises(ValueError, match="not a control row"):
        ablation.control_groups([row("Luong, dot", 1.0, 1.0)])
    path = ablation.write_results({"profile": "quick", "controls": [vars(r) for r in rows]},
                                  tmp_path / "c.json")
    assert ablation.read_controls(path)[0] == rows
    with pytest.raises(ValueError, match="not a controls results file"):
        ablation.read_controls(ablation.write_results({"variants": []}, tmp_path / "v.json"))


def test_controls_results_path(monkeypatch, tmp_path):
    monkeypatch.setenv(ablation.ENV_RESULTS, str(tmp_path))
    assert ablation.results_path("quick", controls=True) == (
        tmp_path / "translator-controls-quick.json")
    assert ablation.results_path("full") == tmp_path / "translator-full.json"


def test_provenance_summary_says_where_and_how_long_without_commands_or_versions():
    results = {"provenance": {
        "device": "cpu", "machine": {"cpu": "AMD EPYC", "cpu_cores": 2, "gpu": None},
        "training_seconds": 900, "models_trained": ["a", "b", "c"],
        "models_loaded_from_cache": ["d", "e"], "command": "python scripts/x.py --cache CACHE",
        "versions": {"seq2seq_lib_commit": "abc123-dirty"}}}
    line = ablation.provenance_summary(results)
    assert line == ("measured on cpu (AMD EPYC, 2 cores): 3 models trained in 15 min, "
                    "2 from an earlier run")
    results["provenance"].update(device="cuda", models_loaded_from_cache=[],
                                 machine={"gpu": "NVIDIA H100"})
    assert ablation.provenance_summary(results) == (
        "measured on cuda (NVIDIA H100): 3 models trained in 15 min")


def test_tables_are_their_text_and_render_as_html():
    rows = [ablation.VariantRow("a <b>", 1234, 10, 1280, 2.345, 12.34, 11.96)]
    table = ablation.variant_table(rows)
    assert isinstance(table, str) and repr(table) == str(table) == table
    assert table.splitlines()[1].startswith("a <b>")  # the text is unchanged
    html = table._repr_html_()
    assert html.count("<tr>") == 2 and "a &lt;b&gt;" in html
    assert '<td style="text-align: right">1,234</td>' in html
    assert '<td style="text-align: left">a &lt;b&gt;</td>' in html
    assert '<th style="text-align: right">test BLEU</th>' in html

    shown = []

    class Printer:  # what IPython passes to _repr_pretty_ for the text/plain form
        text = staticmethod(shown.append)

    table._repr_pretty_(Printer(), False)
    assert shown == [str(table)]
    beams = ablation.beam_table([ablation.BeamRow(5, 1.0, 30.04, 29.96, 7.123)])
    assert beams.rows == (("5", "1.0", "30.0", "30.0", "7.12"),)


def stored_file(tmp_path, monkeypatch, rows):
    """A quick results file with ``rows`` in a folder that ``results_path`` reads."""
    monkeypatch.setenv(ablation.ENV_RESULTS, str(tmp_path))
    beams = [ablation.BeamRow(1, 0.0, 1.0, 2.0, 3.0)]
    ablation.write_results(ablation.results_dict(QUICK, rows, beams, rows[0].label),
                           ablation.results_path("quick"))


def all_rows(best="Luong, concat"):
    labels = [*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL]
    return [row(label, 20.0 if label == best else 10.0 + i, 15.0)
            for i, label in enumerate(labels)]


def test_the_quick_plan_trains_the_best_stored_variant_and_reads_the_others(
        tmp_path, monkeypatch):
    stored_file(tmp_path, monkeypatch, all_rows(best="Luong, concat"))
    plan = ablation.plan_ablation(QUICK)
    assert list(plan.train) == ["Luong, concat"]
    assert plan.train["Luong, concat"] == ch11.VARIANTS["Luong, concat"]
    assert set(plan.chapter_8) == set(ablation.FROM_CHAPTER_8)
    assert list(plan.models) == ["no attention", "Luong, general", "Luong, concat"]
    assert plan.read == [label for label in ch11.VARIANTS if label not in plan.models]
    lines = str(plan).splitlines()
    assert len(lines) == 1 + len(plan.labels) and max(map(len, lines)) <= 80
    assert "Luong, concat                 trained here" in lines
    assert "Luong, dot                    measured earlier (stored row)" in lines
    assert lines[-1].endswith("chapter 7's model")


def test_the_plan_trains_every_variant_when_asked_or_without_stored_results(
        tmp_path, monkeypatch):
    monkeypatch.setenv(ablation.ENV_RESULTS, str(tmp_path))  # no file there
    others = [label for label in ch11.VARIANTS if label not in ablation.FROM_CHAPTER_8]
    for plan in (ablation.plan_ablation(QUICK),
                 ablation.plan_ablation(Run(torch.device("cpu"), "full", 0))):
        assert list(plan.train) == others and plan.stored == {} and plan.read == []
    stored_file(tmp_path, monkeypatch, all_rows())
    plan = ablation.plan_ablation(QUICK, train_all=True)
    assert list(plan.train) == others and plan.stored == {}
    # the best stored row may be chapter 7's LSTM: no variant is trained then
    stored_file(tmp_path, monkeypatch, all_rows(best=ablation.SEQ2SEQ_LABEL))
    assert ablation.plan_ablation(QUICK).train == {}


def test_a_differing_row_is_reported_on_stderr_and_equal_rows_print_nothing(capsys):
    stored = {"a": row("a", 10.0, 11.0), "b": row("b", 12.0, 13.0)}
    assert ablation.warn_if_different({"a": row("a", 10.0, 11.0)}, stored) == []
    assert ablation.warn_if_different({"c": row("c", 1.0, 1.0)}, stored) == []  # not stored
    assert capsys.readouterr() == ("", "")
    measured = {"a": row("a", 10.0, 11.0), "b": row("b", 12.0, 13.05)}
    assert ablation.warn_if_different(measured, stored, hint="do this") == ["b"]
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("warning: the rows of b\n") and "do this" in err
    assert all(len(line) <= 80 for line in err.splitlines())


def fake_trained(monkeypatch, measured):
    """``variant_row`` replaced: the model of ``label`` measures as ``measured[label]``."""
    monkeypatch.setattr(ablation, "variant_row",
                        lambda label, trained, data, **kw: measured[label])
    return dict.fromkeys(measured)


def test_measure_rows_fills_the_table_from_the_models_and_the_stored_rows(
        monkeypatch, capsys):
    stored = {r.label: r for r in all_rows()}
    labels = [*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL]
    here = {label: stored[label] for label in ("no attention", ablation.SEQ2SEQ_LABEL)}
    plan = ablation.AblationPlan({}, {"no attention": {}}, stored)
    rows = ablation.measure_rows(fake_trained(monkeypatch, here), None, plan)
    assert [r.label for r in rows] == labels and rows == list(stored.values())
    assert capsys.readouterr() == ("", "")  # the same rows: nothing said

    changed = {**here, "no attention": row("no attention", 99.0, 99.0)}
    rows = ablation.measure_rows(fake_trained(monkeypatch, changed), None, plan)
    assert rows[0] == changed["no attention"]  # the row measured here is used
    out, err = capsys.readouterr()
    assert out == "" and "no attention" in err and "train_all=True" in err

    with pytest.raises(KeyError, match="Luong, dot"):
        ablation.measure_rows(fake_trained(monkeypatch, here), None,
                              ablation.AblationPlan({}, {}, {}))


def test_stored_controls_compare_their_seed_0_runs_with_the_table(capsys):
    groups = ablation.stored_control_groups(QUICK, [])
    assert list(groups) == [group for group, _, _ in ch11.CONTROLS]
    assert capsys.readouterr() == ("", "")  # no table rows: nothing to compare
    dot = groups["Luong, dot"]
    seed_0 = dot.seeds.index(0)
    same = row("Luong, dot", dot.valid_bleu[seed_0], dot.test_bleu[seed_0])
    ablation.stored_control_groups(QUICK, [same])
    assert capsys.readouterr() == ("", "")
    other = row("Luong, dot", dot.valid_bleu[seed_0], dot.test_bleu[seed_0] + 0.1)
    ablation.stored_control_groups(QUICK, [other])
    err = capsys.readouterr().err
    assert err.startswith("warning: the seed-0 BLEU of Luong, dot\n")
    ablation.stored_control_groups(Run(torch.device("cpu"), "full", 0), [other])
    assert capsys.readouterr() == ("", "")  # the full table is not the controls' models


def test_stored_results_of_a_profile_that_has_not_been_run_are_none(tmp_path, monkeypatch):
    stored_file(tmp_path, monkeypatch, all_rows())
    variants, beams = ablation.stored_results("quick")
    assert variants == all_rows() and [b.k for b in beams] == [1]
    assert ablation.stored_results("full") is None
