"""Tests of seq2seq_lib.corpus and seq2seq_lib.download: finding, fetching, reading the corpus.

The real corpus is read from ``$SEQ2SEQ_DATA`` (CI: ``../shared/data``) or the repository's
sibling ``shared/data``; those tests are skipped only where no copy exists. Nothing here
touches the network: downloads are served from ``file://`` URLs or fake openers.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import socket
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest
from helpers import TINY_CORPUS, leftovers, needs_corpus, shared_data_folder

from seq2seq_lib import corpus as C
from seq2seq_lib.download import (
    ChecksumError,
    CorruptArchiveError,
    DownloadError,
    download_file,
    extract_zip,
    file_digest,
)

TINY = TINY_CORPUS
SHARED = shared_data_folder()


pytestmark = pytest.mark.usefixtures("isolated_data_env")



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
    monkeypatch.setattr(C, "CORPUS_ZIP_SHA1", _sha1(payload))
    monkeypatch.setattr(C, "CORPUS_SHA256", _sha256(TINY.encode()))
    return served.as_uri(), payload


# --------------------------------------------------------------------------- finding the corpus


@needs_corpus
def test_env_var_locates_the_real_corpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(C.ENV_DATA, str(SHARED))
    found = C.find_corpus(cache_dir=tmp_path / "cache", download=False)
    assert found == SHARED / C.CORPUS_FILE
    assert file_digest(found) == C.CORPUS_SHA256
    assert not (tmp_path / "cache").exists()  # nothing was downloaded or copied




def test_lookup_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(C, "CORPUS_SHA256", _sha256(TINY.encode()))
    explicit, env, cache = (tmp_path / n for n in ("explicit", "env", "cache"))
    for folder in (explicit, env, cache):
        (folder / "fra-eng").mkdir(parents=True)
        (folder / C.CORPUS_FILE).write_text(TINY, encoding="utf-8")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was used although a copy exists")

    find = dict(cache_dir=cache, opener=no_network)
    monkeypatch.setenv(C.ENV_DATA, str(env))
    assert C.find_corpus(explicit, **find) == explicit / C.CORPUS_FILE
    assert C.find_corpus(explicit / C.CORPUS_FILE, **find) == explicit / C.CORPUS_FILE
    assert C.find_corpus(**find) == env / C.CORPUS_FILE
    monkeypatch.setenv(C.ENV_DATA, str(tmp_path / "nothing-here"))
    assert C.find_corpus(**find) == cache / C.CORPUS_FILE
    monkeypatch.delenv(C.ENV_DATA)
    assert C.find_corpus(**find) == cache / C.CORPUS_FILE
    # the default cache is ~/.cache/seq2seq-course/data
    assert C.data_cache_dir() == tmp_path / "home" / ".cache" / "seq2seq-course" / "data"


def test_a_relative_env_path_is_read_from_the_working_directory_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The library reads nothing relative to its own files (an installed copy has no
    checkout around it): a relative ``$SEQ2SEQ_DATA`` means the working directory's."""
    monkeypatch.setattr(C, "CORPUS_SHA256", _sha256(TINY.encode()))
    folder = tmp_path / "data"
    (folder / "fra-eng").mkdir(parents=True)
    (folder / C.CORPUS_FILE).write_text(TINY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(C.ENV_DATA, "data")
    found = C.find_corpus(cache_dir=tmp_path / "cache", download=False)
    assert found.resolve() == (folder / C.CORPUS_FILE).resolve()
    elsewhere = tmp_path / "chapters"  # a notebook kernel's working directory
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(FileNotFoundError):
        C.find_corpus(cache_dir=tmp_path / "cache", download=False)


def test_explicit_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no corpus file"):
        C.find_corpus(tmp_path / "missing.txt")


def test_checksum_mismatch_of_a_found_file(tmp_path: Path) -> None:
    path = tmp_path / "fra.txt"
    path.write_text(TINY, encoding="utf-8")
    with pytest.raises(ChecksumError, match=C.CORPUS_SHA256):
        C.find_corpus(path)
    assert C.find_corpus(path, verify=False) == path


def test_missing_and_no_download_says_how_to_supply(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        C.find_corpus(cache_dir=tmp_path / "cache", download=False)
    assert C.ENV_DATA in str(info.value) and C.CORPUS_SHA256 in str(info.value)


# --------------------------------------------------------------------------- downloading


def test_download_from_a_local_zip(tiny_zip: tuple[str, bytes], tmp_path: Path) -> None:
    url, _ = tiny_zip
    cache = tmp_path / "cache"
    found = C.find_corpus(cache_dir=cache, url=url)
    assert found == cache / C.CORPUS_FILE
    assert found.read_text(encoding="utf-8") == TINY
    assert (cache / "fra-eng" / "_about.txt").read_text() == "about"
    assert not (cache / "__MACOSX").exists()
    assert sorted(p.name for p in cache.iterdir()) == ["fra-eng", "fra-eng.zip"]  # no temp dirs

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("downloaded again although the file is cached")

    assert C.find_corpus(cache_dir=cache, url=url, opener=no_network) == found
    data = C.load_translation_data(cache_dir=cache, opener=no_network, min_freq=1)
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
    C.find_corpus(cache_dir=tmp_path / "cache")
    assert asked == [C.CORPUS_URL]


@needs_corpus
def test_download_and_extract_the_real_repack_zip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The macOS re-pack of the same data (different sha1 from d2l's zip, __MACOSX entries).
    repack = SHARED / "fra-eng.repack-modelexlab.zip"
    if not repack.is_file():
        pytest.skip("no repack zip here")
    monkeypatch.setattr(C, "CORPUS_ZIP_SHA1", file_digest(repack, "sha1"))
    found = C.find_corpus(cache_dir=tmp_path, url=repack.as_uri())
    assert file_digest(found) == C.CORPUS_SHA256  # the real checksum, not patched
    assert not (tmp_path / "__MACOSX").exists()


def test_downloaded_checksum_mismatch_keeps_nothing(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tiny_zip
    monkeypatch.setattr(C, "CORPUS_ZIP_SHA1", "0" * 40)
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError, match="0" * 40):
        C.find_corpus(cache_dir=cache, url=url)
    assert leftovers(cache) == []


def test_extracted_file_checksum_mismatch_keeps_nothing(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tiny_zip
    monkeypatch.setattr(C, "CORPUS_SHA256", "f" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError):
        C.find_corpus(cache_dir=cache, url=url)
    assert leftovers(cache) == ["fra-eng.zip"]  # the verified zip stays; no fra.txt


def test_offline_error_says_how_to_supply_the_file(tmp_path: Path) -> None:
    def offline(url: str, timeout: float) -> None:
        raise urllib.error.URLError(socket.gaierror(-3, "Temporary failure in name resolution"))

    cache = tmp_path / "cache"
    with pytest.raises(DownloadError) as info:
        C.find_corpus(cache_dir=cache, opener=offline)
    message = str(info.value)
    assert "name resolution" in message
    assert C.ENV_DATA in message and C.CORPUS_SHA256 in message and "path" in message
    assert leftovers(cache) == []


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
    assert leftovers(tmp_path) == []
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
    assert leftovers(tmp_path) == []


def test_download_file_success_is_verified(tmp_path: Path) -> None:
    payload = b"hello" * 50_000
    dest = download_file(
        "http://example.invalid/h", tmp_path / "sub" / "h.bin",
        expected=_sha256(payload), algorithm="sha256",
        opener=lambda url, timeout: io.BytesIO(payload),
    )
    assert dest.read_bytes() == payload
    assert leftovers(tmp_path / "sub") == ["h.bin"]


# --------------------------------------------------------------------------- archives


def test_truncated_archive_is_a_clear_error(
    tiny_zip: tuple[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, payload = tiny_zip
    cut = payload[: len(payload) // 2]
    served = tmp_path / "cut.zip"
    served.write_bytes(cut)
    monkeypatch.setattr(C, "CORPUS_ZIP_SHA1", _sha1(cut))  # the download itself "succeeds"
    cache = tmp_path / "cache"
    with pytest.raises(CorruptArchiveError, match="truncated or corrupt"):
        C.find_corpus(cache_dir=cache, url=served.as_uri())
    assert not (cache / C.CORPUS_FILE).exists()
    assert leftovers(cache) == ["cut.zip"]


def test_corrupt_member_data_is_a_clear_error(tmp_path: Path) -> None:
    payload = bytearray(_zip_bytes({"a.txt": "x" * 10_000, "b.txt": "y" * 10_000}))
    first_data = payload.index(b"a.txt") + len("a.txt")  # compressed bytes of a.txt follow
    payload[first_data + 3] ^= 0xFF
    archive = tmp_path / "bad.zip"
    archive.write_bytes(bytes(payload))
    target = tmp_path / "out"
    with pytest.raises(CorruptArchiveError):
        extract_zip(archive, target)
    assert leftovers(target) == []  # neither a.txt nor b.txt under a final name


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
    assert leftovers(target) == []  # refused before anything was written
    assert not (tmp_path / "deep" / "evil.txt").exists()
    assert not Path("/tmp/evil-abs.txt").exists()


def test_extract_skips_macos_junk(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    archive.write_bytes(_zip_bytes({
        "d/x.txt": "x", "__MACOSX/d/._x.txt": "junk", "d/.DS_Store": "junk"
    }))
    out = extract_zip(archive, tmp_path / "out")
    assert out == [(tmp_path / "out" / "d" / "x.txt").resolve()]
    assert leftovers(tmp_path / "out") == ["d", "x.txt"]


# --------------------------------------------------------------------------- reading lines


def test_read_pairs_handles_final_newline_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_bytes("\ufeffGo.\tVa !\r\nHi.\tSalut !".encode())
    assert C.read_pairs(path) == [("Go.", "Va !"), ("Hi.", "Salut !")]


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
        C.read_pairs(path)
    assert repr(line) in str(info.value)



def test_attribution_is_exported() -> None:
    assert C.ATTRIBUTION == "Attribution: www.manythings.org/anki and tatoeba.org"
    assert "CC-BY 2.0 FR" in C.LICENSE




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
