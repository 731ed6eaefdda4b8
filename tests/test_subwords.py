"""Byte-pair encoding from scratch (seq2seq_lib.subwords), checked by hand on a small example
and against Hugging Face ``tokenizers`` on the course's corpus."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers import needs_corpus, shared_data_folder
from hypothesis import given
from hypothesis import strategies as st

from seq2seq_lib.subwords import (
    BPE,
    SPACE,
    detokenize,
    learn_bpe,
    normalize,
    piece_counts,
    pre_tokenize,
)

#: Sennrich et al.'s example words, each a piece that follows a space.
SENNRICH = {f"{SPACE}low": 5, f"{SPACE}lower": 2, f"{SPACE}newest": 6, f"{SPACE}widest": 3}


def test_pre_tokenize_splits_words_and_punctuation_and_marks_spaces():
    assert pre_tokenize("Je suis là.") == [f"{SPACE}Je", f"{SPACE}suis", f"{SPACE}là", "."]
    assert pre_tokenize("  Ça va\u202f?  ") == [f"{SPACE}Ça", f"{SPACE}va", f"{SPACE}?"]
    assert pre_tokenize("I'm 42!") == [f"{SPACE}I", "'", "m", f"{SPACE}42", "!"]
    assert pre_tokenize("") == [] and pre_tokenize(" \t") == []


@given(st.text(max_size=60))
def test_detokenize_gives_back_the_normalised_text(text):
    assert detokenize(pre_tokenize(text)) == normalize(text)


def test_the_first_merges_of_sennrichs_example_worked_by_hand():
    """Counts: e-s and s-t 9 each (tie: e was made before s, so e-s), then es-t 9; l-o, lo-w
    and ▁-l 7 each (l-o: l before o and ▁); then ▁-lo 7 (▁ before lo), then ▁lo-w 7."""
    bpe = learn_bpe(SENNRICH, vocab_size=11 + 5)  # 11 characters, 5 merges
    assert bpe.alphabet == (*"deilnorstw", SPACE)  # code-point order: ▁ (U+2581) last
    assert bpe.merges == (("e", "s"), ("es", "t"), ("l", "o"), (SPACE, "lo"), (f"{SPACE}lo", "w"))
    assert bpe.segment(f"{SPACE}lowest") == [f"{SPACE}low", "est"]
    assert bpe.segment(f"{SPACE}newer") == [SPACE, "n", "e", "w", "e", "r"]


def test_learning_stops_at_the_vocabulary_size_or_at_rare_pairs():
    bpe = learn_bpe(SENNRICH, vocab_size=1000)
    assert len(bpe.symbols) < 1000
    assert f"{SPACE}lower" in bpe.symbols  # "lower" occurs twice: enough for min_frequency=2
    rare = learn_bpe(SENNRICH, vocab_size=1000, min_frequency=3)
    assert f"{SPACE}lower" not in rare.symbols and f"{SPACE}low" in rare.symbols
    with pytest.raises(ValueError, match="smaller than the alphabet"):
        learn_bpe(SENNRICH, vocab_size=5)


def test_every_piece_is_segmented_into_known_symbols_and_joins_back():
    texts = ["The cat sleeps.", "The dog doesn't sleep!", "Cats and dogs, 12 of them."] * 3
    bpe = learn_bpe(piece_counts(texts), vocab_size=60)
    known = set(bpe.symbols)
    for text in texts:
        subwords = bpe.encode(text)
        assert set(subwords) <= known
        assert detokenize(subwords) == text
    assert "Z" in bpe.encode("Zebra ?") and "Z" not in known  # unseen: kept, a symbol alone
    assert detokenize(bpe.encode("Zebra ?")) == "Zebra ?"


def test_merges_survive_a_round_trip_through_plain_data():
    bpe = learn_bpe(SENNRICH, vocab_size=20)
    again = BPE.from_dict(json.loads(json.dumps(bpe.to_dict())))
    assert again == bpe and again.segment(f"{SPACE}widest") == bpe.segment(f"{SPACE}widest")


def _hugging_face_bpe(counts: Counter[str], texts: list[str], vocab_size: int):
    """Hugging Face's trainer on the same pieces: its pre-tokenizer splits on whitespace only,
    so it sees exactly our pieces."""
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2,
                                             show_progress=False, special_tokens=[])
    tok.train_from_iterator((" ".join(pre_tokenize(text)) for text in texts), trainer)
    model = json.loads(tok.to_str())["model"]
    merges = tuple(tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
                   for m in model["merges"])
    return tok, merges


@needs_corpus
@pytest.mark.parametrize(("side", "vocab_size"), [(0, 4000), (1, 8000)], ids=["en", "fr"])
def test_the_same_merges_and_segmentations_as_hugging_face_on_the_corpus(side, vocab_size):
    from seq2seq_lib.corpus import find_corpus, read_pairs

    texts = [pair[side] for pair in read_pairs(find_corpus(shared_data_folder()))]
    counts = piece_counts(texts)
    ours = learn_bpe(counts, vocab_size)
    tok, theirs = _hugging_face_bpe(counts, texts, vocab_size)
    assert len(ours.merges) > vocab_size // 2
    assert ours.merges == theirs
    sample = texts[::25]
    assert [ours.encode(t) for t in sample] == [
        tok.encode(" ".join(pre_tokenize(t))).tokens for t in sample]


def test_a_subword_vocabulary_holds_every_symbol_and_writes_text_back_exactly():
    from seq2seq_lib.subwords import SubwordVocab
    from seq2seq_lib.vocab import SPECIALS, UNK_ID

    texts = ["The cat sleeps.", "The dog doesn't sleep!", "Cats and dogs, 12 of them."]
    vocab = SubwordVocab(learn_bpe(piece_counts(texts), vocab_size=50))
    assert vocab.itos[:4] == list(SPECIALS) and vocab.itos[4:] == vocab.bpe.symbols
    for text in [*texts, "The dogs sleep, the cat doesn't."]:  # new words, known characters
        tokens = vocab.tokenize(text, lowercase=True)  # (subwords keep the case)
        assert UNK_ID not in vocab.encode(tokens)
        assert vocab.detokenize(tokens, lang="fr") == text


def test_subword_data_keeps_the_word_level_sentences_and_splits():
    from seq2seq_lib.batches import TranslationData
    from seq2seq_lib.subwords import SubwordVocab, subword_data
    from seq2seq_lib.vocab import tokenize

    rng = __import__("random").Random(0)
    words = ["le", "chat", "Chien", "noir", "dort", "mange", "un", "petit"]
    pairs = [(" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))) + " !",
              f"Sentence number {i % 150}.") for i in range(400)]
    pairs.append(("", "empty source"))
    data = subword_data(pairs, src_size=40, tgt_size=40, max_len=6, name="toy")
    by_words = TranslationData.from_pairs([(tokenize(s), tokenize(t)) for s, t in pairs],
                                          max_len=6)
    for split in ("train", "valid", "test"):
        mine, theirs = data.split(split), by_words.split(split)
        assert [data.tgt_vocab.detokenize(t).lower() for _, t in mine] == [
            " ".join(t).replace(" .", ".") for _, t in theirs]
        assert [tokenize(data.src_vocab.detokenize(s)) for s, _ in mine] == [s for s, _ in theirs]
    assert [tokenize(data.tgt_vocab.detokenize(t)) for _, t in data.strict_test] == [
        t for _, t in by_words.strict_test]  # the same strict test sentences
    assert 0 < len(data.strict_test) < len(data.test)
    assert isinstance(data.src_vocab, SubwordVocab) and len(data.tgt_vocab) <= 4 + 40
    assert data.stats["train"] == len(data.train) and data.name == "toy"
