"""Tests of seq2seq_lib.batches: splits, filters, datasets, padded batches and loaders."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from helpers import TINY_CORPUS, needs_corpus, shared_data_folder
from torch.nn.utils.rnn import pack_padded_sequence

from seq2seq_lib import batches as B
from seq2seq_lib import corpus as C
from seq2seq_lib import vocab as V

TINY = TINY_CORPUS
SHARED = shared_data_folder()


pytestmark = pytest.mark.usefixtures("isolated_data_env")


@pytest.fixture(scope="module")
def real() -> B.TranslationData:
    if SHARED is None:
        pytest.skip("no copy of fra-eng/fra.txt here")
    return C.load_translation_data(SHARED)



# --------------------------------------------------------------------------- splits and filters


def test_split_by_source_is_disjoint_deterministic_and_stable() -> None:
    pairs = [([f"s{i % 300}"], [f"t{i}"]) for i in range(3000)]  # each source 10 times
    train, valid, test = B.split_by_source(pairs, seed=1)
    sources = [{p[0][0] for p in split} for split in (train, valid, test)]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])
    assert len(train) + len(valid) + len(test) == len(pairs)
    assert 0.7 < len(train) / len(pairs) < 0.9
    assert B.split_by_source(pairs, seed=1) == (train, valid, test)
    assert B.split_by_source(pairs, seed=2) != (train, valid, test)
    # a sentence's split does not depend on the other pairs
    sub_train, _, _ = B.split_by_source(pairs[::7], seed=1)
    assert set(map(str, sub_train)) <= set(map(str, train))
    with pytest.raises(ValueError, match="fractions"):
        B.split_by_source(pairs, (0.8, 0.1, 0.2))


def test_filter_pairs_drops_empty_and_long() -> None:
    pairs = [(["a"], ["b"]), ([], ["b"]), (["a"], []), (["a"] * 4, ["b"]), (["a"] * 3, ["b"] * 3)]
    kept, dropped = B.filter_pairs(pairs, max_len=3)
    assert kept == [pairs[0], pairs[4]]
    assert dropped == {"empty": 2, "too_long": 1}
    assert B.filter_pairs(pairs, None)[1] == {"empty": 2, "too_long": 0}
    with pytest.raises(ValueError, match="max_len"):
        B.filter_pairs(pairs, 0)


@needs_corpus
def test_real_splits_are_disjoint_and_filtered(real: B.TranslationData) -> None:
    s = real.stats
    assert s["pairs"] == 167_130
    assert s["kept"] + s["empty"] + s["too_long"] == s["pairs"]
    assert s["train"] + s["valid"] + s["test"] == s["kept"]
    keys = [{" ".join(src) for src, _ in real.split(n)} for n in B.SPLITS]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    for name in B.SPLITS:
        assert all(1 <= len(a) <= 10 and 1 <= len(b) <= 10 for a, b in real.split(name))
        assert abs(len(real.split(name)) / s["kept"] - {"train": .8}.get(name, .1)) < 0.01
    assert real.train[0] == (["va", "!"], ["go", "."])  # direction fr-en


def test_sample_pairs_is_seeded_ordered_and_without_repeats() -> None:
    pairs = [(f"s{i}", f"t{i}") for i in range(50)]
    sample = B.sample_pairs(pairs, 10, seed=3)
    assert len(sample) == 10 == len(set(sample)) and set(sample) <= set(pairs)
    assert sample == sorted(sample, key=pairs.index)  # corpus order kept
    assert sample == B.sample_pairs(pairs, 10, seed=3) != B.sample_pairs(pairs, 10, seed=4)
    assert sample != pairs[:10]
    assert B.sample_pairs(pairs, None) == pairs == B.sample_pairs(pairs, 80)
    assert B.sample_pairs(pairs, None) is not pairs
    assert B.sample_pairs(pairs, 0) == []
    with pytest.raises(ValueError, match="n must be"):
        B.sample_pairs(pairs, -1)


@needs_corpus
def test_real_validation_sample_is_like_the_whole_split(real: B.TranslationData) -> None:
    """The corpus is sorted by length, so the first rows of a split are its shortest
    sentences; a sample must have about the split's mean target length."""

    def mean_target_length(pairs: list[V.TokenPair]) -> float:
        return sum(len(t) for _, t in pairs) / len(pairs)

    whole = mean_target_length(real.valid)
    sample = mean_target_length(B.sample_pairs(real.valid, 1000))
    assert abs(sample - whole) < 0.05 * whole
    assert mean_target_length(real.valid[:1000]) < 0.6 * whole  # what a prefix would give


@needs_corpus
def test_real_vocab_comes_from_train_only(real: B.TranslationData) -> None:
    counts = Counter(t for src, _ in real.train for t in src)
    assert set(real.src_vocab.itos[4:]) == {t for t, n in counts.items() if n >= 2}
    unseen = {t for src, _ in real.test for t in src} - set(counts)
    assert unseen and not any(t in real.src_vocab for t in unseen)


@needs_corpus
def test_real_direction_and_subsample() -> None:
    en_fr = C.load_translation_data(SHARED, direction="en-fr", num_pairs=2000, seed=3)
    assert en_fr.stats["subsampled"] == 2000
    assert len(en_fr.train) + len(en_fr.valid) + len(en_fr.test) == 2000
    assert en_fr.name == "en-fr"
    again = C.load_translation_data(SHARED, direction="en-fr", num_pairs=2000, seed=3)
    assert again.train == en_fr.train and again.src_vocab == en_fr.src_vocab
    english = {" ".join(V.tokenize(en)) for en, _ in C.read_pairs(SHARED / C.CORPUS_FILE)}
    assert all(" ".join(src) in english for src, _ in en_fr.train[:200])
    with pytest.raises(ValueError, match="direction"):
        C.load_translation_data(SHARED, direction="fr-de")


@needs_corpus
def test_real_loader_batches(real: B.TranslationData) -> None:
    batch = next(iter(real.loader("valid", 32)))
    assert batch.src.shape[0] == 32 and batch.src.max() < len(real.src_vocab)
    assert batch.tgt_out.max() < len(real.tgt_vocab)
    assert batch.src.shape[1] <= 11 and batch.tgt_in.shape[1] <= 11


# --------------------------------------------------------------------------- batches

VOCAB = V.Vocab.build([["a", "b", "c", "d", "e"]])


def _examples() -> list[tuple[list[int], list[int]]]:
    ds = B.TranslationDataset(
        [(["a", "b", "c"], ["d"]), (["e"], ["a", "b", "c"]), (["b", "a"], ["e", "e"])],
        VOCAB, VOCAB,
    )
    return [ds[i] for i in range(len(ds))]


def test_collate_pads_and_shifts() -> None:
    a, b, c, d, e = (VOCAB[t] for t in "abcde")
    batch = B.collate(_examples())
    assert batch.src.tolist() == [[a, b, c, 2], [e, 2, 0, 0], [b, a, 2, 0]]
    assert batch.src_lengths.tolist() == [4, 2, 3]
    assert batch.tgt_in.tolist() == [[1, d, 0, 0], [1, a, b, c], [1, e, e, 0]]
    assert batch.tgt_out.tolist() == [[d, 2, 0, 0], [a, b, c, 2], [e, e, 2, 0]]
    assert batch.tgt_lengths.tolist() == [2, 4, 3]
    assert torch.equal(batch.src_mask, batch.src != 0)
    assert torch.equal(batch.tgt_mask, batch.tgt_out != 0)
    assert batch.src_mask.sum(1).tolist() == batch.src_lengths.tolist()
    assert batch.num_tokens == 9
    assert batch.src.dtype == torch.long and batch.src_mask.dtype == torch.bool
    moved = batch.to("cpu")
    assert torch.equal(moved.tgt_out, batch.tgt_out)


def test_reverse_source_reverses_words_only() -> None:
    a, b, c, e = (VOCAB[t] for t in "abce")
    plain, rev = B.collate(_examples()), B.collate(_examples(), reverse_source=True)
    assert rev.src.tolist() == [[c, b, a, 2], [e, 2, 0, 0], [a, b, 2, 0]]
    assert torch.equal(rev.src_lengths, plain.src_lengths)
    assert torch.equal(rev.src_mask, plain.src_mask)
    assert torch.equal(rev.tgt_in, plain.tgt_in) and torch.equal(rev.tgt_out, plain.tgt_out)


def test_collate_rejects_bad_examples() -> None:
    with pytest.raises(ValueError, match="at least one"):
        B.collate([])
    with pytest.raises(ValueError, match="<eos>"):
        B.collate([([5, 6], [7])])


def test_lengths_work_with_pack_padded_sequence() -> None:
    batch = B.collate(_examples())
    emb = torch.nn.Embedding(len(VOCAB), 3)(batch.src)
    packed = pack_padded_sequence(emb, batch.src_lengths, batch_first=True, enforce_sorted=False)
    assert packed.data.shape[0] == int(batch.src_lengths.sum())


def test_loader_is_deterministic_and_complete() -> None:
    pairs = [([t] * (1 + i % 4), [t]) for i, t in enumerate("abcde" * 5)]
    ds = B.TranslationDataset(pairs, VOCAB, VOCAB)

    def order(seed: int) -> list[list[list[int]]]:
        torch.manual_seed(123 + seed)  # the global RNG must not matter
        loader = B.make_loader(ds, 4, shuffle=True, seed=seed)
        return [b.src.tolist() for b in loader]

    assert order(0) == order(0)
    assert order(0) != order(1)
    rows = sorted(tuple(t for t in r if t != V.PAD_ID) for b in order(0) for r in b)
    assert rows == sorted(tuple(src) for src, _ in ds)  # every example exactly once
    assert len(B.make_loader(ds, 4, drop_last=True)) == len(ds) // 4
    with pytest.raises(ValueError, match="batch_size"):
        B.make_loader(ds, 0)


# --------------------------------------------------------------------------- bad input


def test_empty_sentence_has_a_defined_encoding() -> None:
    assert B.encode_source(V.tokenize("  "), VOCAB) == [VOCAB.eos_id]
    ds = B.TranslationDataset([([], []), (["a"], ["b"])], VOCAB, VOCAB)
    batch = B.collate([ds[0], ds[1]])
    assert batch.src_lengths.tolist() == [1, 2]  # never 0: pack_padded_sequence accepts it
    assert batch.tgt_in[0].tolist() == [1, 0] and batch.tgt_out[0].tolist() == [2, 0]


def test_only_unknown_words_map_to_unk() -> None:
    ids = B.encode_source(V.tokenize("Zorglub xyzzy"), VOCAB)
    assert ids == [VOCAB.unk_id, VOCAB.unk_id, VOCAB.eos_id]
    assert VOCAB.decode(ids) == ["<unk>", "<unk>"]


def test_long_sentences_are_truncated_when_encoded_and_filtered_by_the_pipeline() -> None:
    long = list("abcdeabcde")
    assert B.encode_source(long, VOCAB, max_len=3) == [*VOCAB.encode(long[:3]), VOCAB.eos_id]
    ds = B.TranslationDataset([(long, long)], VOCAB, VOCAB, max_len=4)
    assert len(ds[0][0]) == 5 and len(ds[0][1]) == 4
    data = B.TranslationData.from_pairs(
        [(long, ["a"]), (["a"], ["b"]), ([], ["c"])] * 10, max_len=5
    )
    assert data.stats["too_long"] == 10 and data.stats["empty"] == 10 and data.stats["kept"] == 10


def test_from_pairs_checks_arguments() -> None:
    with pytest.raises(ValueError, match="num_pairs"):
        B.TranslationData.from_pairs([(["a"], ["b"])], num_pairs=0)
    data = B.TranslationData.from_pairs([(["a"], ["b"])] * 5)
    with pytest.raises(ValueError, match="split"):
        data.split("dev")
    assert "pairs; vocab" in data.summary()




def test_collate_sources_batches_sources_alone() -> None:
    sentences = [["a", "b", "c"], [], ["zorglub", "a"]]
    expected = B.collate([(B.encode_source(s, VOCAB, max_len=2), []) for s in sentences],
                         reverse_source=True)
    got = B.collate_sources(sentences, VOCAB, reverse_source=True, max_len=2)
    for name, tensor in vars(expected).items():
        assert torch.equal(getattr(got, name), tensor), name
    assert got.src.tolist()[0] == [VOCAB["b"], VOCAB["a"], VOCAB.eos_id]
    ids = [B.encode_source(s, VOCAB) for s in sentences]  # ids ending with <eos>: as they are
    assert torch.equal(B.collate_sources(ids).src, B.collate([(i, []) for i in ids]).src)
    with pytest.raises(ValueError, match="vocabulary"):
        B.collate_sources([["a"]])
    with pytest.raises(ValueError, match="<eos>"):
        B.collate_sources([[5, 6]])


def test_the_strict_split_keeps_pairs_new_on_both_sides():
    from seq2seq_lib.batches import sentence_key, strict_split

    assert sentence_key("Go!") == sentence_key(["go", "."]) == "go"
    assert sentence_key("I'm OK, thanks.") == "i m ok thanks"
    train = [(["va", "!"], ["go", "!"]), (["je", "cours", "."], ["i", "run", "."])]
    test = [
        (["allez", "!"], ["go", "."]),  # target seen in training (punctuation aside): out
        (["va", "."], ["leave", "."]),  # source seen in training: out
        (["il", "court", "."], ["he", "runs", "."]),  # new on both sides: kept
    ]
    assert strict_split(test, train) == [test[2]]


@needs_corpus
def test_the_strict_test_split_of_the_corpus_shares_no_sentence_with_training(monkeypatch):
    from seq2seq_lib.batches import sentence_key
    from seq2seq_lib.corpus import ENV_DATA
    from seq2seq_lib.device import CPU
    from seq2seq_lib.recipes import ch07

    monkeypatch.setenv(ENV_DATA, str(shared_data_folder()))
    data = ch07.translation_data(CPU)
    sources = {sentence_key(s) for s, _ in data.train}
    targets = {sentence_key(t) for _, t in data.train}
    strict = data.strict_test
    assert 0.4 * len(data.test) < len(strict) < 0.7 * len(data.test)
    assert not any(sentence_key(s) in sources or sentence_key(t) in targets for s, t in strict)
    assert set(map(str, strict)) <= set(map(str, data.test))
