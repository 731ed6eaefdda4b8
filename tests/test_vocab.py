"""Tests of seq2seq_lib.vocab: tokens, detokenisation, vocabularies (and d2l equality)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import TINY_CORPUS, leftovers, needs_corpus, shared_data_folder
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_lib import corpus as C
from seq2seq_lib import vocab as V

TINY = TINY_CORPUS
SHARED = shared_data_folder()


pytestmark = pytest.mark.usefixtures("isolated_data_env")


@needs_corpus
def test_real_corpus_reads_every_line() -> None:
    pairs = C.read_pairs(SHARED / C.CORPUS_FILE)
    assert len(pairs) == 167_130
    assert pairs[:2] == [("Go.", "Va !"), ("Hi.", "Salut !")]
    assert pairs[2] == ("Run!", "Cours\u202f!")
    assert V.tokenize(pairs[2][1]) == ["cours", "!"]


def _d2l_tokens(line: str) -> list[str]:
    """d2l's preprocess_nmt + tokenize_nmt, character by character (an independent reference)."""
    text = line.replace("\u202f", " ").replace("\xa0", " ").lower()
    out = [
        " " + c if i > 0 and c in set(",.!?") and text[i - 1] != " " else c
        for i, c in enumerate(text)
    ]
    return [t for t in "".join(out).split(" ") if t]


@needs_corpus
def test_tokenize_equals_d2l_preprocessing_on_the_corpus() -> None:
    pairs = C.read_pairs(SHARED / C.CORPUS_FILE)
    thin = [p for p in pairs if "\u2009" in p[1]]  # U+2009 THIN SPACE, French side only
    assert thin
    sample = pairs[:3000] + pairs[80_000:81_000] + pairs[-500:] + thin
    for en, fr in sample:
        assert V.tokenize(en) == _d2l_tokens(en)
        # d2l splits on " " only and keeps U+2009 glued to a word; we split on any whitespace
        assert V.tokenize(fr) == _d2l_tokens(fr.replace("\u2009", " "))
        if "\u2009" not in fr:
            assert V.tokenize(fr) == _d2l_tokens(fr)


@needs_corpus
def test_english_vocab_size_matches_d2l() -> None:
    # d2l: Vocab(source, min_freq=2, reserved_tokens=['<pad>', '<bos>', '<eos>']) + '<unk>'
    pairs = C.read_pairs(SHARED / C.CORPUS_FILE)
    vocab = V.Vocab.build((V.tokenize(en) for en, _ in pairs), min_freq=2)
    assert len(vocab) == 10_012



# --------------------------------------------------------------------------- tokens


def test_tokenize_examples() -> None:
    assert V.tokenize("Ça alors\u202f!") == ["ça", "alors", "!"]
    assert V.tokenize("Va\xa0!") == ["va", "!"]
    assert V.tokenize("I'm OK, thanks.") == ["i'm", "ok", ",", "thanks", "."]
    assert V.tokenize("Hi!", lowercase=False) == ["Hi", "!"]
    assert V.tokenize("Wait...") == ["wait", ".", ".", "."]
    assert V.tokenize("") == [] and V.tokenize(" \u202f\t ") == []
    with pytest.raises(TypeError, match="str"):
        V.tokenize(["not", "a", "string"])  # type: ignore[arg-type]


def test_detokenize_examples() -> None:
    assert V.detokenize(["run", "!"]) == "run!"
    assert V.detokenize(["i'm", "ok", ",", "thanks", "."]) == "i'm ok, thanks."
    assert V.detokenize(["wait", ".", ".", "."]) == "wait..."
    assert V.detokenize(["cours", "!"], lang="fr") == "cours !"
    assert V.detokenize(["ça", "va", ",", "merci", "."], lang="fr") == "ça va, merci."
    assert V.detokenize([]) == ""
    with pytest.raises(ValueError, match="lang"):
        V.detokenize(["a"], lang="de")


_word = st.text(
    alphabet=st.characters(blacklist_categories=("Z", "C"), blacklist_characters=",.!?"),
    min_size=1, max_size=6,
)
_glued = st.tuples(_word, st.text(alphabet=",.!?", max_size=3)).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(_glued, min_size=0, max_size=8))
def test_detokenize_inverts_tokenize_for_english(words: list[str]) -> None:
    text = " ".join(words)
    assert V.detokenize(V.tokenize(text, lowercase=False)) == text


# --------------------------------------------------------------------------- vocabulary


def test_vocab_build_order_and_specials() -> None:
    sentences = [["b", "a", "c"], ["a", "b"], ["a", "d", "<unk>"], ["e"]]
    vocab = V.Vocab.build(sentences, min_freq=1)
    assert vocab.itos == ["<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "c", "d", "e"]
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert vocab.pad_id != vocab.bos_id
    assert V.Vocab.build(sentences, min_freq=2).itos[4:] == ["a", "b"]
    assert V.Vocab.build(sentences, max_size=6).itos[4:] == ["a", "b"]
    assert V.Vocab.build(reversed(sentences)) == vocab  # order of input does not matter
    with pytest.raises(ValueError, match="min_freq"):
        V.Vocab.build(sentences, min_freq=0)


def test_vocab_encode_decode() -> None:
    vocab = V.Vocab.build([["hello", "world", "!"]])
    ids = vocab.encode(["hello", "mars", "!"], bos=True, eos=True)
    assert ids == [1, vocab["hello"], 3, vocab["!"], 2]
    assert vocab.decode(ids) == ["hello", "<unk>", "!"]
    assert vocab.decode(ids + [0, 0]) == ["hello", "<unk>", "!"]
    assert vocab.decode([vocab["hello"], 2, vocab["world"]]) == ["hello"]  # stops at <eos>
    assert vocab.decode(torch.tensor(ids), strip=False)[0] == "<bos>"
    assert "world" in vocab and "mars" not in vocab
    with pytest.raises(IndexError, match="outside"):
        vocab.decode([len(vocab)])


def test_vocab_rejects_bad_tables() -> None:
    with pytest.raises(ValueError, match="start with"):
        V.Vocab(["a", "b"])
    with pytest.raises(ValueError, match="twice"):
        V.Vocab([*V.SPECIALS, "a", "a"])


def test_vocab_save_load_roundtrip(tmp_path: Path) -> None:
    vocab = V.Vocab.build([["ça", "va", "?"], ["ça", "marche", "."]])
    path = vocab.save(tmp_path / "v" / "vocab.json")
    loaded = V.Vocab.load(path)
    assert loaded == vocab and loaded.stoi == vocab.stoi
    assert leftovers(tmp_path / "v") == ["vocab.json"]
    assert json.loads(path.read_text(encoding="utf-8"))["tokens"][4] == "ça"
    (tmp_path / "bad.json").write_text('{"tokens": []}')
    with pytest.raises(ValueError, match="not a saved Vocab"):
        V.Vocab.load(tmp_path / "bad.json")
    (tmp_path / "worse.json").write_text("{")
    with pytest.raises(ValueError, match="invalid JSON"):
        V.Vocab.load(tmp_path / "worse.json")



def test_doctests() -> None:
    import doctest

    assert doctest.testmod(V).failed == 0

