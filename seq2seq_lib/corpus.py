"""The English–French corpus: where it is, how it is fetched, how its lines are read.

The corpus is the Tatoeba / manythings.org ``fra.txt`` that *Dive into Deep Learning* uses
(167,130 pairs, one ``English<TAB>French`` pair per line).

* :func:`find_corpus` locates ``fra-eng/fra.txt`` — an explicit path, then the folder named by
  ``$SEQ2SEQ_DATA``, then the user cache ``~/.cache/seq2seq-course/data``, and finally a
  download of d2l's ``fra-eng.zip`` (checked by SHA-1, extracted safely, the text file checked
  by SHA-256; see :mod:`seq2seq_lib.download`).
* :func:`read_pairs` reads the lines as ``(english, french)`` strings; a line that is not
  exactly two tab-separated fields is a :class:`ValueError` naming the line.

Tokens and vocabularies are :mod:`seq2seq_lib.vocab`'s job, splits and batches
:mod:`seq2seq_lib.batches`'; :func:`load_translation_data` does it all, from finding the
file to the vocabularies.

The data is from the Tatoeba Project, licensed CC-BY 2.0 France; the pairs were selected by
manythings.org. Anything that shows it must keep :data:`ATTRIBUTION`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import tempfile
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from seq2seq_lib.batches import TranslationData
from seq2seq_lib.download import (
    ChecksumError,
    Opener,
    download_file,
    extract_zip,
    file_digest,
    verify_file,
)
from seq2seq_lib.vocab import tokenize

CORPUS_URL = "http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip"
CORPUS_ZIP_SHA1 = "94646ad1522d915e7b0f9296181140edcf86a4f5"
CORPUS_FILE = "fra-eng/fra.txt"
CORPUS_SHA256 = "0bb85dbaa1c896844649094d7eaf2e34bee34e84fe362b26ce7e8f2e12aae104"
ATTRIBUTION = "Attribution: www.manythings.org/anki and tatoeba.org"
LICENSE = "CC-BY 2.0 FR (https://creativecommons.org/licenses/by/2.0/fr/)"
ENV_DATA = "SEQ2SEQ_DATA"

def data_cache_dir() -> Path:
    """The user cache for downloaded data: ``~/.cache/seq2seq-course/data``."""
    return Path.home() / ".cache" / "seq2seq-course" / "data"


def _how_to_supply() -> str:
    return (
        f"To work offline, put the corpus at <folder>/{CORPUS_FILE} (sha256 {CORPUS_SHA256}) "
        f"and set the environment variable {ENV_DATA}=<folder>, or pass the file's path "
        f"(load_translation_data(path=...)). It is the file {CORPUS_FILE} inside {CORPUS_URL} "
        f"(sha1 {CORPUS_ZIP_SHA1}), from www.manythings.org/anki."
    )


def _corpus_in(location: Path) -> Path | None:
    """``location`` itself if it is a file, else ``location/fra-eng/fra.txt`` or ``/fra.txt``."""
    if location.is_file():
        return location
    for candidate in (location / CORPUS_FILE, location / Path(CORPUS_FILE).name):
        if candidate.is_file():
            return candidate
    return None


def _env_folders(env: str | None) -> list[Path]:
    """Where ``$SEQ2SEQ_DATA`` points (a relative path is read from the current folder)."""
    return [Path(env).expanduser()] if env else []


def _fetch_into(cache: Path, url: str, opener: Opener | None) -> Path:
    """Download the zip into ``cache``, extract it, check ``fra.txt`` and move it into place."""
    archive = cache / (Path(urlsplit(url).path).name or "fra-eng.zip")
    if not (archive.is_file() and file_digest(archive, "sha1") == CORPUS_ZIP_SHA1):
        download_file(
            url, archive, expected=CORPUS_ZIP_SHA1, algorithm="sha1",
            opener=opener, hint=_how_to_supply(),
        )
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache))
    try:
        extract_zip(archive, staging)
        text = staging / CORPUS_FILE
        if not text.is_file():
            raise FileNotFoundError(f"{archive} holds no {CORPUS_FILE}")
        verify_file(text, CORPUS_SHA256, "sha256")
        final = cache / CORPUS_FILE
        final.parent.mkdir(parents=True, exist_ok=True)
        for member in text.parent.iterdir():  # fra.txt and _about.txt
            if member.is_file():
                os.replace(member, final.parent / member.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def find_corpus(
    path: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    url: str | None = None,
    opener: Opener | None = None,
    download: bool = True,
    verify: bool = True,
) -> Path:
    """Return the path of ``fra-eng/fra.txt``, downloading it only when it is nowhere else.

    Lookup order:

    1. ``path`` — the file itself, or a folder holding ``fra-eng/fra.txt`` (or ``fra.txt``);
       it must exist.
    2. ``$SEQ2SEQ_DATA`` — a folder holding ``fra-eng/fra.txt`` (skipped when it has none).
       A relative path is read from the working directory (give an absolute one to
       notebook kernels, which run in the notebook's folder; the test session does).
    3. ``cache_dir`` (default :func:`data_cache_dir`) — a copy downloaded earlier.
    4. download ``url`` (default :data:`CORPUS_URL`) into ``cache_dir``, check the zip's SHA-1,
       extract it safely and check ``fra.txt``'s SHA-256 before it gets its final name.

    Args:
        verify: check the file's SHA-256 against :data:`CORPUS_SHA256` (turn off only for
            your own corpus in the same format).
        opener: replaces :func:`urllib.request.urlopen` (tests serve a local zip with it).
        download: when False, a missing corpus raises :class:`FileNotFoundError` instead.

    Raises:
        FileNotFoundError: ``path`` does not exist, or no copy anywhere and ``download=False``.
        ChecksumError: a file found or downloaded has the wrong digest.
        DownloadError: offline; the message says how to supply the file by hand.
        CorruptArchiveError: the downloaded zip is truncated, corrupt or unsafe.
    """
    if path is not None:
        found = _corpus_in(Path(path).expanduser())
        if found is None:
            raise FileNotFoundError(f"no corpus file at {path} (nor {CORPUS_FILE} inside it)")
    else:
        env = os.environ.get(ENV_DATA)
        found = None
        for folder in _env_folders(env):
            found = found or _corpus_in(folder)
        cache = Path(cache_dir).expanduser() if cache_dir is not None else data_cache_dir()
        if found is None and (cache / CORPUS_FILE).is_file():
            found = cache / CORPUS_FILE
        if found is None:
            if not download:
                where = f"${ENV_DATA}={env!r}, " if env else ""
                raise FileNotFoundError(
                    f"the corpus is not in {where}{cache} and download=False. {_how_to_supply()}"
                )
            cache.mkdir(parents=True, exist_ok=True)
            return _fetch_into(cache, url or CORPUS_URL, opener)
    if verify:
        try:
            verify_file(found, CORPUS_SHA256, "sha256")
        except ChecksumError as err:
            raise ChecksumError(
                f"{err}. Pass verify=False to use a different version of the corpus on purpose."
            ) from None
    return found


def read_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """Read ``English<TAB>French`` lines into ``(english, french)`` string pairs.

    A final newline is allowed and a trailing ``\\r`` is dropped; a UTF-8 BOM is ignored.

    Raises:
        ValueError: a line that does not hold exactly two tab-separated fields (an attribution
            column, a blank line); the message names the file, the 1-based line number and
            shows the line.
    """
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        fields = line.removesuffix("\r").split("\t")
        if len(fields) != 2:
            shown = line if len(line) <= 200 else line[:200] + "..."
            raise ValueError(
                f"{path}, line {number}: expected 2 tab-separated fields (English<TAB>French), "
                f"got {len(fields)}: {shown!r}"
            )
        pairs.append((fields[0], fields[1]))
    return pairs


DIRECTIONS = ("fr-en", "en-fr")


@contextlib.contextmanager
def _gc_paused() -> Any:
    """Pause the cyclic garbage collector: building ~10^6 small token lists (which hold no
    reference cycles) otherwise triggers many full collections — about half the loading time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_translation_data(
    path: str | os.PathLike[str] | None = None,
    *,
    direction: str = "fr-en",
    max_len: int | None = 10,
    min_freq: int = 2,
    lowercase: bool = True,
    num_pairs: int | None = None,
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
    seed: int = 0,
    **find: Any,
) -> TranslationData:
    """Find, read, tokenise, filter, split the corpus and build its vocabularies.

    Args:
        path: the corpus file or a folder holding it (see :func:`find_corpus`).
        direction: ``"fr-en"`` (French source, English target; the course's main task) or
            ``"en-fr"``.
        max_len: pairs with more than ``max_len`` tokens on either side are dropped
            (``None``: keep all); empty sides are always dropped.
        min_freq: tokens seen fewer times in the training split map to ``<unk>``.
        lowercase: lower-case both sides (as d2l).
        num_pairs: keep a seeded random ``num_pairs`` of the filtered pairs (quick profile).
        fractions, seed: see :func:`~seq2seq_lib.batches.split_by_source`.
        **find: passed to :func:`find_corpus` (``cache_dir``, ``url``, ``opener``,
            ``download``, ``verify``).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    raw = read_pairs(find_corpus(path, **find))
    tok = partial(tokenize, lowercase=lowercase)
    with _gc_paused():
        if direction == "fr-en":
            pairs = [(tok(fr), tok(en)) for en, fr in raw]
        else:
            pairs = [(tok(en), tok(fr)) for en, fr in raw]
        data = TranslationData.from_pairs(
            pairs, name=direction, max_len=max_len, min_freq=min_freq, num_pairs=num_pairs,
            fractions=fractions, seed=seed,
        )
    return data
