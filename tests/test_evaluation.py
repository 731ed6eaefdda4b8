"""Translation, pair scoring and BLEU on detokenised text."""

from __future__ import annotations

import pytest
import sacrebleu
import torch

from seq2seq_lib.encoder_decoder import ChoConfig, ChoModel, EncoderDecoder
from seq2seq_lib.evaluation import (
    bleu,
    corpus_bleu,
    group_references,
    score_pairs,
    search_sources,
    translate,
)
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.vocab import EOS_ID, Vocab

SRC = Vocab.build([["a", "b", "c", "d"]])
TGT = Vocab.build([["w", "x", "y", "z", ",", "."]])


class Echo(EncoderDecoder):
    """Translates source word i to target word i (a→w, b→x, ...), then <eos>; records sources."""

    def __init__(self, reverse_source: bool = False):
        torch.manual_seed(0)
        base = ChoModel(ChoConfig(len(SRC), len(TGT), embed_size=2, hidden_size=2))
        super().__init__(base.encoder, base.decoder, reverse_source=reverse_source)
        self.seen: list[list[int]] = []

    def init_state(self, src, src_lengths):
        self.seen += [row[: int(n)] for row, n in zip(src.tolist(), src_lengths, strict=True)]
        return {"src": src, "len": src_lengths}

    def step(self, prefix, state):
        t = prefix.shape[1] - 1
        out = torch.full((prefix.shape[0], len(TGT)), -1e4)
        for row in range(prefix.shape[0]):
            n = int(state["len"][row]) - 1  # words before <eos>
            if t < n:
                word = SRC.itos[int(state["src"][row, t])]
                out[row, TGT["wxyz"["abcd".index(word)]] if word in "abcd" else 3] = 0.0
            else:
                out[row, EOS_ID] = 0.0
        return out, state


def test_translate_handles_empty_unknown_and_long_input():
    model = Echo()
    out = translate(model, [["a", "b"], [], ["q", "q"], ["a"] * 30], SRC, TGT, max_len=5,
                    src_max_len=10)
    assert out[0] == ["w", "x"]
    assert out[1] == []  # empty source: just <eos> in, nothing out
    assert out[2] == ["<unk>", "<unk>"]  # unknown words come through as <unk>
    assert out[3] == ["w"] * 5  # truncated source, capped output
    assert len(model.seen[3]) == 11  # 10 words + <eos>


def test_translate_reverses_the_source_when_the_model_expects_it():
    model = Echo(reverse_source=True)
    out = translate(model, [["a", "b", "c"]], SRC, TGT)
    assert model.seen[0][:3] == [SRC["c"], SRC["b"], SRC["a"]]
    assert out == [["y", "x", "w"]]


def test_bleu_detokenises_and_uses_all_references():
    model = Echo()
    pairs = [(["a", "b", "c", "d"], ["w", "x", "y", "z"]),
             (["a", "b", "c", "d"], ["z", "z", "z", "z"]),  # a second reference, same source
             (["b", "c", "d", "a"], ["x", "y", "z", "w", "."])]
    res = bleu(model, pairs, SRC, TGT)
    assert len(res.hypotheses) == 2 and res.references[0] == ["w x y z", "z z z z"]
    assert res.references[1] == ["x y z w."]  # detokenised: no space before "."
    expected = sacrebleu.corpus_bleu(["w x y z", "x y z w"], [["w x y z", "x y z w."],
                                                               ["z z z z", None]])
    assert res.score == pytest.approx(expected.score)
    assert 0 < res.score < 100
    perfect = bleu(model, pairs[:1], SRC, TGT)
    assert perfect.score == pytest.approx(100.0)
    assert str(perfect).startswith("BLEU 100.0 on 1 sentences")
    with pytest.raises(ValueError):
        bleu(model, [], SRC, TGT)


def test_bleu_limit_is_a_seeded_sample():
    model = Echo()
    pairs = [([w], ["w"]) for w in "abcd"] + [(["a", "b"], ["w", "x"])]
    a = bleu(model, pairs, SRC, TGT, limit=3, seed=1)
    b = bleu(model, pairs, SRC, TGT, limit=3, seed=1)
    assert a.sources == b.sources and len(a.sources) == 3


def test_bleu_is_group_references_then_translate_then_corpus_bleu():
    """The two halves of bleu score translations made another way the same as bleu does."""
    model = Echo()
    pairs = [(["b", "c"], ["x", "y"]), (["a"], ["w", "."]), (["b", "c"], ["y", "y"])]
    sources, refs = group_references(pairs)
    assert sources == [["b", "c"], ["a"]] and refs == [["x y", "y y"], ["w."]]
    hyps = [" ".join(t) for t in translate(model, sources, SRC, TGT)]
    whole = bleu(model, pairs, SRC, TGT)
    parts = corpus_bleu(sources, hyps, refs)
    assert (parts.score, parts.hypotheses, parts.references) == (
        whole.score, whole.hypotheses, whole.references)
    found = search_sources(model, sources, SRC, batch_size=1)  # the search's hypotheses, unmapped
    assert [[h.tokens[-1] for h in hyps] for hyps in found] == [[EOS_ID], [EOS_ID]]  # <eos> kept
    assert [TGT.decode(hyps[0].output) for hyps in found] == translate(model, sources, SRC, TGT)
    with pytest.raises(ValueError, match="one list of references per hypothesis"):
        corpus_bleu(sources, hyps[:1], refs)
    with pytest.raises(ValueError, match="at least one pair"):
        group_references([])


def test_score_pairs_matches_model_score_and_ranks():
    torch.manual_seed(0)
    model = Seq2SeqModel(Seq2SeqConfig(len(SRC), len(TGT), embed_size=4, hidden_size=8,
                                       num_layers=1))
    model.train()
    scores = score_pairs(model, [["a", "b"], ["a", "b"], ["c"]], [["w", "x"], [], ["y"]],
                         SRC, TGT)
    assert scores.shape == (3,) and torch.all(scores < 0) and model.training
    empty_alone = score_pairs(model, [["a", "b"]], [[]], SRC, TGT)
    torch.testing.assert_close(scores[1:2], empty_alone)
    with pytest.raises(ValueError, match="as many"):
        score_pairs(model, [["a"]], [], SRC, TGT)


def test_corpus_bleu_reports_sacrebleus_signature_and_a_labelled_lower_cased_score():
    import sacrebleu

    from seq2seq_lib.evaluation import corpus_bleu

    hyps = ["The cat sat on the mat.", "It is raining"]
    refs = [["the cat sat on the mat ."], ["It is raining.", "It rains."]]
    cased = corpus_bleu([["a"], ["b"]], hyps, refs)
    lower = corpus_bleu([["a"], ["b"]], hyps, refs, lowercase=True)
    streams = [[refs[0][0], refs[1][0]], [None, refs[1][1]]]
    assert cased.score == sacrebleu.corpus_bleu(hyps, streams).score
    assert lower.score == sacrebleu.corpus_bleu(hyps, streams, lowercase=True).score
    assert lower.score > cased.score
    assert cased.signature.startswith("nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    assert "case:lc" in lower.signature


def test_bleu_scores_a_lower_case_vocabulary_lower_cased_and_says_so():
    """A model whose target vocabulary has no upper case is scored lower-cased by default
    (``case:lc`` in the signature and in ``str``); a cased one as written; a flag overrides."""
    from seq2seq_lib.evaluation import writes_lower_case

    model = Echo()
    pairs = [(["a", "b"], ["w", "x"])]
    assert writes_lower_case(TGT)
    lower = bleu(model, pairs, SRC, TGT)
    assert "case:lc" in lower.signature and lower.signature in str(lower)
    assert "case:mixed" in bleu(model, pairs, SRC, TGT, lowercase=False).signature
    cased_tgt = Vocab.build([["W", "x", "y", "z", ",", "."]])
    assert not writes_lower_case(cased_tgt)
    cased = bleu(model, [(["a", "b", "c", "d"], ["W", "x", "y", "z"])], SRC, cased_tgt)
    assert "case:mixed" in cased.signature
    assert cased.hypotheses == ["W x y z"] and cased.score == pytest.approx(100.0)
    wrong_case = bleu(model, [(["a", "b", "c", "d"], ["w", "x", "y", "z"])], SRC, cased_tgt)
    assert wrong_case.score < 100.0  # "W" against "w": cased scoring counts the case


def test_table_from_rows_aligns_columns_and_shows_the_same_cells_as_html():
    from seq2seq_lib.evaluation import Table

    table = Table.from_rows(("French", "ours", "BLEU"),
                            [("Je suis là.", "i am here.", "1.5"), ("Oui", "yes", "12.25")])
    assert str(table).splitlines() == ["French       ours         BLEU",
                                       "Je suis là.  i am here.    1.5",
                                       "Oui          yes         12.25"]
    html_table = table._repr_html_()
    assert html_table.count("<tr>") == 3 and "Je suis là." in html_table
    assert '<td style="text-align: right">12.25</td>' in html_table  # a number column
    assert repr(table) == str(table)
    with pytest.raises(ValueError, match="3 cells"):
        Table.from_rows(("a", "b", "c"), [("1", "2")])
