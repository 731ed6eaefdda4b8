"""Tests of seq2seq_lib.data and seq2seq_lib.download.

The real corpus is read from ``$SEQ2SEQ_DATA`` (CI: ``../shared/data``) or the repository's
sibling ``shared/data``; those tests are skipped only where no copy exists. Nothing here
touches the network: downloads are served from ``file://`` URLs or fake openers.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import socket
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.utils.rnn import pack_padded_sequence

from seq2seq_lib import data as D
from seq2seq_lib.download import (
    ChecksumError,
    CorruptArchiveError,
    DownloadError,
    download_file,
    extract_zip,
    file_digest,
)

REPO = Path(__file__).resolve().parents[1]
TINY = "Go.\tVa !\nRun!\tCours\u202f!\nI'm OK, thanks.\tÇa va, merci.\n"


def _shared_data() -> Path | None:
    candidates = [os.environ.get(D.ENV_DATA), REPO.parent / "shared" / "data", "/work/shared/data"]
    for c in candidates:
        if c and (Path(c) / D.CORPUS_FILE).is_file():
            return Path(c)
    return None


SHARED = _shared_data()
needs_corpus = pytest.mark.skipif(SHARED is None, reason="no copy of fra-eng/fra.txt here")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the user's cache or $SEQ2SEQ_DATA unless it sets them itself."""
    monkeypatch.delenv(D.ENV_DATA, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture(scope="module")
def real() -> D.TranslationData:
    if SHARED is None:
        pytest.skip("no copy of fra-eng/fra.txt here")
    return D.load_translation_data(SHARED)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def _zip_bytes(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buf.getvalue()


@pytest.fixture()
def tiny_zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, bytes]:
    """A small fra-eng.zip (with macOS junk) served from a file:// URL; checksums patched."""
    payload = _zip_bytes({
        "fra-eng/fra.txt": TINY,
        "fra-eng/_about.txt": "about",
        "__MACOSX/fra-eng/._fra.txt": "junk",
    })
    served = tmp_path / "served" / "fra-eng.zip"
    served.parent.mkdir()
    served.write_bytes(payload)
    monkeypatch.setattr(D, "CORPUS_ZIP_SHA1", _sha1(payload))
    monkeypatch.setattr(D, "CORPUS_SHA256", _sha256(TINY.encode()))
    return served.as_uri(), payload


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


# --------------------------------------------------------------------------- finding the corpus


@needs_corpus
def test_env_var_locates_the_real_corpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(D.ENV_DATA, str(SHARED))
    found = D.find_corpus(cache_dir=tmp_path / "cache", download=False)
    assert found == SHARED / D.CORPUS_FILE
    assert file_digest(found) == D.CORPUS_SHA256
    assert not (tmp_path / "cache").exists()  # nothing was downloaded or copied


@needs_corpus
def test_real_corpus_reads_every_line() -> None:
    pairs = D.read_pairs(SHARED / D.CORPUS_FILE)
    assert len(pairs) == 167_130
    assert pairs[:2] == [("Go.", "Va !"), ("Hi.", "Salut !")]
    assert pairs[2] == ("Run!", "Cours\u202f!")
    assert D.tokenize(pairs[2][1]) == ["cours", "!"]


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
    pairs = D.read_pairs(SHARED / D.CORPUS_FILE)
    thin = [p for p in pairs if "\u2009" in p[1]]  # U+2009 THIN SPACE, French side only
    assert thin
    sample = pairs[:3000] + pairs[80_000:81_000] + pairs[-500:] + thin
    for en, fr in sample:
        assert D.tokenize(en) == _d2l_tokens(en)
        # d2l splits on " " only and keeps U+2009 glued to a word; we split on any whitespace
        assert D.tokenize(fr) == _d2l_tokens(fr.replace("\u2009", " "))
        if "\u2009" not in fr:
            assert D.tokenize(fr) == _d2l_tokens(fr)


@needs_corpus
def test_english_vocab_size_matches_d2l() -> None:
    # d2l: Vocab(source, min_freq=2, reserved_tokens=['<pad>', '<bos>', '<eos>']) + '<unk>'
    pairs = D.read_pairs(SHARED / D.CORPUS_FILE)
    vocab = D.Vocab.build((D.tokenize(en) for en, _ in pairs), min_freq=2)
    assert len(vocab) == 10_012


def test_lookup_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(D, "CORPUS_SHA256", _sha256(TINY.encode()))
    explicit, env, cache = (tmp_path / n for n in ("explicit", "env", "cache"))
    for folder in (explicit, env, cache):
        (folder / "fra-eng").mkdir(parents=True)
        (folder / D.CORPUS_FILE).write_text(TINY, encoding="utf-8")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was used although a copy exists")

    find = dict(cache_dir=cache, opener=no_network)
    monkeypatch.setenv(D.ENV_DATA, str(env))
    assert D.find_corpus(explicit, **find) == explicit / D.CORPUS_FILE
    assert D.find_corpus(explicit / D.CORPUS_FILE, **find) == explicit / D.CORPUS_FILE
    assert D.find_corpus(**find) == env / D.CORPUS_FILE
    monkeypatch.setenv(D.ENV_DATA, str(tmp_path / "nothing-here"))
    assert D.find_corpus(**find) == cache / D.CORPUS_FILE
    monkeypatch.delenv(D.ENV_DATA)
    assert D.find_corpus(**find) == cache / D.CORPUS_FILE
    # the default cache is ~/.cache/seq2seq-course/data
    assert D.data_cache_dir() == tmp_path / "home" / ".cache" / "seq2seq-course" / "data"


def test_relative_env_path_also_resolves_from_the_repo_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(D, "CORPUS_SHA256", _sha256(TINY.encode()))
    folder = tmp_path / "data"
    (folder / "fra-eng").mkdir(parents=True)
    (folder / D.CORPUS_FILE).write_text(TINY, encoding="utf-8")
    elsewhere = tmp_path / "chapters"  # like a notebook kernel's working directory
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv(D.ENV_DATA, os.path.relpath(folder, REPO))
    found = D.find_corpus(cache_dir=tmp_path / "cache", download=False)
    assert found.resolve() == (folder / D.CORPUS_FILE).resolve()


def test_explicit_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no corpus file"):
        D.find_corpus(tmp_path / "missing.txt")


def test_checksum_mismatch_of_a_found_file(tmp_path: Path) -> None:
    path = tmp_path / "fra.txt"
    path.write_text(TINY, encoding="utf-8")
    with pytest.raises(ChecksumError, match=D.CORPUS_SHA256):
        D.find_corpus(path)
    assert D.find_corpus(path, verify=False) == path


def test_missing_and_no_download_says_how_to_supply(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        D.find_corpus(cache_dir=tmp_path / "cache", download=False)
    assert D.ENV_DATA in str(info.value) and D.CORPUS_SHA256 in str(info.value)


# --------------------------------------------------------------------------- downloading


def test_download_from_a_local_zip(tiny_zip: tuple[str, bytes], tmp_path: Path) -> None:
    url, _ = tiny_zip
    cache = tmp_path / "cache"
    found = D.find_corpus(cache_dir=cache, url=url)
    assert found == cache / D.CORPUS_FILE
    assert found.read_text(encoding="utf-8") == TINY
    assert (cache / "fra-eng" / "_about.txt").read_text() == "about"
    assert not (cache / "__MACOSX").exists()
    assert sorted(p.name for p in cache.iterdir()) == ["fra-eng", "fra-eng.zip"]  # no temp dirs

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("downloaded again although the file is cached")

    assert D.find_corpus(cache_dir=cache, url=url, opener=no_network) == found
    data = D.load_translation_data(cache_dir=cache, opener=no_network, min_freq=1)
    assert data.stats["pairs"] == 3


def test_download_through_the_default_urlopen(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, payload = tiny_zip
    asked: list[str] = []

    def fake_urlopen(address: str, timeout: float) -> io.BytesIO:
        asked.append(address)
        return io.BytesIO(payload)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    D.find_corpus(cache_dir=tmp_path / "cache")
    assert asked == [D.CORPUS_URL]


@needs_corpus
def test_download_and_extract_the_real_repack_zip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The macOS re-pack of the same data (different sha1 from d2l's zip, __MACOSX entries).
    repack = SHARED / "fra-eng.repack-modelexlab.zip"
    if not repack.is_file():
        pytest.skip("no repack zip here")
    monkeypatch.setattr(D, "CORPUS_ZIP_SHA1", file_digest(repack, "sha1"))
    found = D.find_corpus(cache_dir=tmp_path, url=repack.as_uri())
    assert file_digest(found) == D.CORPUS_SHA256  # the real checksum, not patched
    assert not (tmp_path / "__MACOSX").exists()


def test_downloaded_checksum_mismatch_keeps_nothing(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tiny_zip
    monkeypatch.setattr(D, "CORPUS_ZIP_SHA1", "0" * 40)
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError, match="0" * 40):
        D.find_corpus(cache_dir=cache, url=url)
    assert _leftovers(cache) == []


def test_extracted_file_checksum_mismatch_keeps_nothing(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tiny_zip
    monkeypatch.setattr(D, "CORPUS_SHA256", "f" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError):
        D.find_corpus(cache_dir=cache, url=url)
    assert _leftovers(cache) == ["fra-eng.zip"]  # the verified zip stays; no fra.txt


def test_offline_error_says_how_to_supply_the_file(tmp_path: Path) -> None:
    def offline(url: str, timeout: float) -> None:
        raise urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    cache = tmp_path / "cache"
    with pytest.raises(DownloadError) as info:
        D.find_corpus(cache_dir=cache, opener=offline)
    message = str(info.value)
    assert "name resolution" in message
    assert D.ENV_DATA in message and D.CORPUS_SHA256 in message and "path" in message
    assert _leftovers(cache) == []


@pytest.mark.parametrize("error", [ConnectionResetError("reset"), TimeoutError("timed out")])
def test_interrupted_download_leaves_no_file(tmp_path: Path, error: Exception) -> None:
    dest = tmp_path / "big.bin"
    seen_final_name: list[bool] = []

    class Dying(io.BytesIO):
        def read(self, size: int = -1) -> bytes:
            seen_final_name.append(dest.exists())  # e.g. the process killed right now
            if self.tell() >= 100_000:
                raise error
            return super().read(size)

    with pytest.raises(DownloadError):
        download_file(
            "http://example.invalid/big.bin", dest, expected="0" * 40,
            opener=lambda url, timeout: Dying(os.urandom(300_000)),
        )
    assert _leftovers(tmp_path) == []
    assert len(seen_final_name) > 1 and not any(seen_final_name)


def test_interrupt_by_keyboard_leaves_no_file(tmp_path: Path) -> None:
    class Interrupted(io.BytesIO):
        def read(self, size: int = -1) -> bytes:
            if self.tell() > 0:
                raise KeyboardInterrupt
            return super().read(size)

    with pytest.raises(KeyboardInterrupt):
        download_file(
            "http://example.invalid/x", tmp_path / "x", expected="0" * 40,
            opener=lambda url, timeout: Interrupted(b"x" * 200_000),
        )
    assert _leftovers(tmp_path) == []


def test_download_file_success_is_verified(tmp_path: Path) -> None:
    payload = b"hello" * 50_000
    dest = download_file(
        "http://example.invalid/h", tmp_path / "sub" / "h.bin",
        expected=_sha256(payload), algorithm="sha256",
        opener=lambda url, timeout: io.BytesIO(payload),
    )
    assert dest.read_bytes() == payload
    assert _leftovers(tmp_path / "sub") == ["h.bin"]


# --------------------------------------------------------------------------- archives


def test_truncated_archive_is_a_clear_error(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, payload = tiny_zip
    cut = payload[: len(payload) // 2]
    served = tmp_path / "cut.zip"
    served.write_bytes(cut)
    monkeypatch.setattr(D, "CORPUS_ZIP_SHA1", _sha1(cut))  # the download itself "succeeds"
    cache = tmp_path / "cache"
    with pytest.raises(CorruptArchiveError, match="truncated or corrupt"):
        D.find_corpus(cache_dir=cache, url=served.as_uri())
    assert not (cache / D.CORPUS_FILE).exists()
    assert _leftovers(cache) == ["cut.zip"]


def test_corrupt_member_data_is_a_clear_error(tmp_path: Path) -> None:
    payload = bytearray(_zip_bytes({"a.txt": "x" * 10_000, "b.txt": "y" * 10_000}))
    first_data = payload.index(b"a.txt") + len("a.txt")  # compressed bytes of a.txt follow
    payload[first_data + 3] ^= 0xFF
    archive = tmp_path / "bad.zip"
    archive.write_bytes(bytes(payload))
    target = tmp_path / "out"
    with pytest.raises(CorruptArchiveError):
        extract_zip(archive, target)
    assert _leftovers(target) == []  # neither a.txt nor b.txt under a final name


@pytest.mark.parametrize("evil", ["../evil.txt", "ok/../../evil.txt", "/tmp/evil-abs.txt"])
def test_escaping_member_is_refused(tmp_path: Path, evil: str) -> None:
    archive = tmp_path / "evil.zip"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("fine.txt", "fine")
        zf.writestr(zipfile.ZipInfo(evil), "pwned")
    archive.write_bytes(buf.getvalue())
    target = tmp_path / "deep" / "target"
    with pytest.raises(CorruptArchiveError, match="outside"):
        extract_zip(archive, target)
    assert _leftovers(target) == []  # refused before anything was written
    assert not (tmp_path / "deep" / "evil.txt").exists()
    assert not Path("/tmp/evil-abs.txt").exists()


def test_extract_skips_macos_junk(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip_bytes({
        "d/x.txt": "x", "__MACOSX/d/._x.txt": "junk", "d/.DS_Store": "junk"
    }))
    out = extract_zip(archive, tmp_path / "out")
    assert out == [(tmp_path / "out" / "d" / "x.txt").resolve()]
    assert _leftovers(tmp_path / "out") == ["d", "x.txt"]


# --------------------------------------------------------------------------- reading lines


def test_read_pairs_handles_final_newline_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_bytes("\ufeffGo.\tVa !\r\nHi.\tSalut !".encode())
    assert D.read_pairs(path) == [("Go.", "Va !"), ("Hi.", "Salut !")]


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        ("Hi.\tSalut !\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123", 3),
        ("no tab at all", 1),
        ("", 1),
    ],
)
def test_malformed_line_names_the_line(tmp_path: Path, line: str, fields: int) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(f"Go.\tVa !\nRun!\tCours !\n{line}\nWow!\tÇa alors !\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"line 3: .*got {fields}") as info:
        D.read_pairs(path)
    assert repr(line) in str(info.value)


# --------------------------------------------------------------------------- tokens


def test_tokenize_examples() -> None:
    assert D.tokenize("Ça alors\u202f!") == ["ça", "alors", "!"]
    assert D.tokenize("Va\xa0!") == ["va", "!"]
    assert D.tokenize("I'm OK, thanks.") == ["i'm", "ok", ",", "thanks", "."]
    assert D.tokenize("Hi!", lowercase=False) == ["Hi", "!"]
    assert D.tokenize("Wait...") == ["wait", ".", ".", "."]
    assert D.tokenize("") == [] and D.tokenize(" \u202f\t ") == []
    with pytest.raises(TypeError, match="str"):
        D.tokenize(["not", "a", "string"])  # type: ignore[arg-type]


def test_detokenize_examples() -> None:
    assert D.detokenize(["run", "!"]) == "run!"
    assert D.detokenize(["i'm", "ok", ",", "thanks", "."]) == "i'm ok, thanks."
    assert D.detokenize(["wait", ".", ".", "."]) == "wait..."
    assert D.detokenize(["cours", "!"], lang="fr") == "cours !"
    assert D.detokenize(["ça", "va", ",", "merci", "."], lang="fr") == "ça va, merci."
    assert D.detokenize([]) == ""
    with pytest.raises(ValueError, match="lang"):
        D.detokenize(["a"], lang="de")


_word = st.text(
    alphabet=st.characters(blacklist_categories=("Z", "C"), blacklist_characters=",.!?"),
    min_size=1, max_size=6,
)
_glued = st.tuples(_word, st.text(alphabet=",.!?", max_size=3)).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(_glued, min_size=0, max_size=8))
def test_detokenize_inverts_tokenize_for_english(words: list[str]) -> None:
    text = " ".join(words)
    assert D.detokenize(D.tokenize(text, lowercase=False)) == text


# --------------------------------------------------------------------------- vocabulary


def test_vocab_build_order_and_specials() -> None:
    sentences = [["b", "a", "c"], ["a", "b"], ["a", "d", "<unk>"], ["e"]]
    vocab = D.Vocab.build(sentences, min_freq=1)
    assert vocab.itos == ["<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "c", "d", "e"]
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert vocab.pad_id != vocab.bos_id
    assert D.Vocab.build(sentences, min_freq=2).itos[4:] == ["a", "b"]
    assert D.Vocab.build(sentences, max_size=6).itos[4:] == ["a", "b"]
    assert D.Vocab.build(reversed(sentences)) == vocab  # order of input does not matter
    with pytest.raises(ValueError, match="min_freq"):
        D.Vocab.build(sentences, min_freq=0)


def test_vocab_encode_decode() -> None:
    vocab = D.Vocab.build([["hello", "world", "!"]])
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
        D.Vocab(["a", "b"])
    with pytest.raises(ValueError, match="twice"):
        D.Vocab([*D.SPECIALS, "a", "a"])


def test_vocab_save_load_roundtrip(tmp_path: Path) -> None:
    vocab = D.Vocab.build([["ça", "va", "?"], ["ça", "marche", "."]])
    path = vocab.save(tmp_path / "v" / "vocab.json")
    loaded = D.Vocab.load(path)
    assert loaded == vocab and loaded.stoi == vocab.stoi
    assert _leftovers(tmp_path / "v") == ["vocab.json"]
    assert json.loads(path.read_text(encoding="utf-8"))["tokens"][4] == "ça"
    (tmp_path / "bad.json").write_text('{"tokens": []}')
    with pytest.raises(ValueError, match="not a saved Vocab"):
        D.Vocab.load(tmp_path / "bad.json")
    (tmp_path / "worse.json").write_text("{")
    with pytest.raises(ValueError, match="invalid JSON"):
        D.Vocab.load(tmp_path / "worse.json")


# --------------------------------------------------------------------------- splits and filters


def test_split_by_source_is_disjoint_deterministic_and_stable() -> None:
    pairs = [([f"s{i % 300}"], [f"t{i}"]) for i in range(3000)]  # each source 10 times
    train, valid, test = D.split_by_source(pairs, seed=1)
    sources = [{p[0][0] for p in split} for split in (train, valid, test)]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])
    assert len(train) + len(valid) + len(test) == len(pairs)
    assert 0.7 < len(train) / len(pairs) < 0.9
    assert D.split_by_source(pairs, seed=1) == (train, valid, test)
    assert D.split_by_source(pairs, seed=2) != (train, valid, test)
    # a sentence's split does not depend on the other pairs
    sub_train, _, _ = D.split_by_source(pairs[::7], seed=1)
    assert set(map(str, sub_train)) <= set(map(str, train))
    with pytest.raises(ValueError, match="fractions"):
        D.split_by_source(pairs, (0.8, 0.1, 0.2))


def test_filter_pairs_drops_empty_and_long() -> None:
    pairs = [(["a"], ["b"]), ([], ["b"]), (["a"], []), (["a"] * 4, ["b"]), (["a"] * 3, ["b"] * 3)]
    kept, dropped = D.filter_pairs(pairs, max_len=3)
    assert kept == [pairs[0], pairs[4]]
    assert dropped == {"empty": 2, "too_long": 1}
    assert D.filter_pairs(pairs, None)[1] == {"empty": 2, "too_long": 0}
    with pytest.raises(ValueError, match="max_len"):
        D.filter_pairs(pairs, 0)


@needs_corpus
def test_real_splits_are_disjoint_and_filtered(real: D.TranslationData) -> None:
    s = real.stats
    assert s["pairs"] == 167_130
    assert s["kept"] + s["empty"] + s["too_long"] == s["pairs"]
    assert s["train"] + s["valid"] + s["test"] == s["kept"]
    keys = [{" ".join(src) for src, _ in real.split(n)} for n in D.SPLITS]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    for name in D.SPLITS:
        assert all(1 <= len(a) <= 10 and 1 <= len(b) <= 10 for a, b in real.split(name))
        assert abs(len(real.split(name)) / s["kept"] - {"train": .8}.get(name, .1)) < 0.01
    assert real.train[0] == (["va", "!"], ["go", "."])  # direction fr-en


@needs_corpus
def test_real_vocab_comes_from_train_only(real: D.TranslationData) -> None:
    counts = Counter(t for src, _ in real.train for t in src)
    assert set(real.src_vocab.itos[4:]) == {t for t, n in counts.items() if n >= 2}
    unseen = {t for src, _ in real.test for t in src} - set(counts)
    assert unseen and not any(t in real.src_vocab for t in unseen)


@needs_corpus
def test_real_direction_and_subsample() -> None:
    en_fr = D.load_translation_data(SHARED, direction="en-fr", num_pairs=2000, seed=3)
    assert en_fr.stats["subsampled"] == 2000
    assert len(en_fr.train) + len(en_fr.valid) + len(en_fr.test) == 2000
    assert en_fr.name == "en-fr"
    again = D.load_translation_data(SHARED, direction="en-fr", num_pairs=2000, seed=3)
    assert again.train == en_fr.train and again.src_vocab == en_fr.src_vocab
    english = {" ".join(D.tokenize(en)) for en, _ in D.read_pairs(SHARED / D.CORPUS_FILE)}
    assert all(" ".join(src) in english for src, _ in en_fr.train[:200])
    with pytest.raises(ValueError, match="direction"):
        D.load_translation_data(SHARED, direction="fr-de")


@needs_corpus
def test_real_loader_batches(real: D.TranslationData) -> None:
    batch = next(iter(real.loader("valid", 32)))
    assert batch.src.shape[0] == 32 and batch.src.max() < len(real.src_vocab)
    assert batch.tgt_out.max() < len(real.tgt_vocab)
    assert batch.src.shape[1] <= 11 and batch.tgt_in.shape[1] <= 11


# --------------------------------------------------------------------------- batches

VOCAB = D.Vocab.build([["a", "b", "c", "d", "e"]])


def _examples() -> list[tuple[list[int], list[int]]]:
    ds = D.TranslationDataset(
        [(["a", "b", "c"], ["d"]), (["e"], ["a", "b", "c"]), (["b", "a"], ["e", "e"])],
        VOCAB, VOCAB,
    )
    return [ds[i] for i in range(len(ds))]


def test_collate_pads_and_shifts() -> None:
    a, b, c, d, e = (VOCAB[t] for t in "abcde")
    batch = D.collate(_examples())
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
    plain, rev = D.collate(_examples()), D.collate(_examples(), reverse_source=True)
    assert rev.src.tolist() == [[c, b, a, 2], [e, 2, 0, 0], [a, b, 2, 0]]
    assert torch.equal(rev.src_lengths, plain.src_lengths)
    assert torch.equal(rev.src_mask, plain.src_mask)
    assert torch.equal(rev.tgt_in, plain.tgt_in) and torch.equal(rev.tgt_out, plain.tgt_out)


def test_collate_rejects_bad_examples() -> None:
    with pytest.raises(ValueError, match="at least one"):
        D.collate([])
    with pytest.raises(ValueError, match="<eos>"):
        D.collate([([5, 6], [7])])


def test_lengths_work_with_pack_padded_sequence() -> None:
    batch = D.collate(_examples())
    emb = torch.nn.Embedding(len(VOCAB), 3)(batch.src)
    packed = pack_padded_sequence(emb, batch.src_lengths, batch_first=True, enforce_sorted=False)
    assert packed.data.shape[0] == int(batch.src_lengths.sum())


def test_loader_is_deterministic_and_complete() -> None:
    pairs = [([t] * (1 + i % 4), [t]) for i, t in enumerate("abcde" * 5)]
    ds = D.TranslationDataset(pairs, VOCAB, VOCAB)

    def order(seed: int) -> list[list[list[int]]]:
        torch.manual_seed(123 + seed)  # the global RNG must not matter
        loader = D.make_loader(ds, 4, shuffle=True, seed=seed)
        return [b.src.tolist() for b in loader]

    assert order(0) == order(0)
    assert order(0) != order(1)
    rows = sorted(tuple(t for t in r if t != D.PAD_ID) for b in order(0) for r in b)
    assert rows == sorted(tuple(src) for src, _ in ds)  # every example exactly once
    assert len(D.make_loader(ds, 4, drop_last=True)) == len(ds) // 4
    with pytest.raises(ValueError, match="batch_size"):
        D.make_loader(ds, 0)


# --------------------------------------------------------------------------- bad input


def test_empty_sentence_has_a_defined_encoding() -> None:
    assert D.encode_source(D.tokenize("  "), VOCAB) == [VOCAB.eos_id]
    ds = D.TranslationDataset([([], []), (["a"], ["b"])], VOCAB, VOCAB)
    batch = D.collate([ds[0], ds[1]])
    assert batch.src_lengths.tolist() == [1, 2]  # never 0: pack_padded_sequence accepts it
    assert batch.tgt_in[0].tolist() == [1, 0] and batch.tgt_out[0].tolist() == [2, 0]


def test_only_unknown_words_map_to_unk() -> None:
    ids = D.encode_source(D.tokenize("Zorglub xyzzy"), VOCAB)
    assert ids == [VOCAB.unk_id, VOCAB.unk_id, VOCAB.eos_id]
    assert VOCAB.decode(ids) == ["<unk>", "<unk>"]


def test_long_sentences_are_truncated_when_encoded_and_filtered_by_the_pipeline() -> None:
    long = list("abcdeabcde")
    assert D.encode_source(long, VOCAB, max_len=3) == [*VOCAB.encode(long[:3]), VOCAB.eos_id]
    ds = D.TranslationDataset([(long, long)], VOCAB, VOCAB, max_len=4)
    assert len(ds[0][0]) == 5 and len(ds[0][1]) == 4
    data = D.TranslationData.from_pairs(
        [(long, ["a"]), (["a"], ["b"]), ([], ["c"])] * 10, max_len=5
    )
    assert data.stats["too_long"] == 10 and data.stats["empty"] == 10 and data.stats["kept"] == 10


def test_from_pairs_checks_arguments() -> None:
    with pytest.raises(ValueError, match="num_pairs"):
        D.TranslationData.from_pairs([(["a"], ["b"])], num_pairs=0)
    data = D.TranslationData.from_pairs([(["a"], ["b"])] * 5)
    with pytest.raises(ValueError, match="split"):
        data.split("dev")
    assert "pairs; vocab" in data.summary()


def test_attribution_is_exported() -> None:
    assert D.ATTRIBUTION == "Attribution: www.manythings.org/anki and tatoeba.org"
    assert "CC-BY 2.0 FR" in D.LICENSE


def test_doctests() -> None:
    import doctest

    assert doctest.testmod(D).failed == 0


def test_extract_cleans_its_staging_folder_on_failure(tmp_path: Path) -> None:
    # extract_zip into a target whose final file is a directory: os.replace fails, no debris
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip_bytes({"x.txt": "x"}))
    target = tmp_path / "out"
    (target / "x.txt").mkdir(parents=True)
    with pytest.raises(OSError):
        extract_zip(archive, target)
    assert sorted(p.name for p in target.iterdir()) == ["x.txt"]
    shutil.rmtree(target)
