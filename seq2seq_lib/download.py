"""Fetching data files safely: checksums, atomic downloads and safe zip extraction.

Nothing here knows about a particular corpus; :mod:`seq2seq_lib.corpus` uses it to fetch the
English–French corpus. The three rules:

* **Atomic.** A download streams into a temporary file in the destination folder and is
  renamed (``os.replace``) to its final name only after its checksum matched. An interrupted
  download, a wrong checksum or a crash therefore never leaves a file under the final name.
* **Verified.** Every file is checked against a SHA-1 or SHA-256 digest; a mismatch raises
  :class:`ChecksumError` and the bad bytes are deleted.
* **Contained.** :func:`extract_zip` refuses an archive with a member whose resolved path
  escapes the target folder (``../evil.txt``, ``/etc/passwd``) before writing anything, skips
  macOS ``__MACOSX/`` resource forks, and turns a truncated or corrupt archive into a
  :class:`CorruptArchiveError` that names the file.

Only :mod:`urllib` is used. Every function that reaches the network takes an ``opener``
(default :func:`urllib.request.urlopen`), so tests can pass a fake one or a ``file://`` URL
and never touch the network.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import socket
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from seq2seq_lib.atomic import atomic_file

Opener = Callable[..., Any]
"""``opener(url, timeout=...)`` returns a binary file-like response (like ``urlopen``)."""

CHUNK = 1 << 16


class ChecksumError(ValueError):
    """A file's digest is not the expected one."""


class CorruptArchiveError(ValueError):
    """A zip archive is truncated, corrupt, or holds a member that escapes the target folder."""


class DownloadError(OSError):
    """A download failed (offline, DNS, refused connection, timeout, HTTP error)."""


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes (``algorithm`` is any :func:`hashlib.new` name)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_file(path: str | os.PathLike[str], expected: str, algorithm: str = "sha256") -> None:
    """Raise :class:`ChecksumError` unless ``path`` has the ``expected`` hex digest."""
    got = file_digest(path, algorithm)
    if got != expected.lower():
        raise ChecksumError(
            f"{path} has {algorithm} {got}, expected {expected.lower()}: "
            "the file is corrupt, truncated or a different version"
        )


def _copy_stream(response: BinaryIO, handle: BinaryIO, digest: Any) -> int:
    size = 0
    while chunk := response.read(CHUNK):
        handle.write(chunk)
        digest.update(chunk)
        size += len(chunk)
    return size


def download_file(
    url: str,
    dest: str | os.PathLike[str],
    *,
    expected: str,
    algorithm: str = "sha1",
    opener: Opener | None = None,
    timeout: float = 60.0,
    hint: str = "",
) -> Path:
    """Download ``url`` to ``dest`` atomically, checking its ``algorithm`` digest.

    The bytes stream into ``<dest>.<random>.part`` beside ``dest``; only when the digest
    equals ``expected`` is that file renamed to ``dest``. On any failure the partial file is
    removed, so ``dest`` either does not exist or is complete and verified.

    Args:
        url: ``http(s)://`` or ``file://`` URL.
        dest: final path of the file.
        expected: hex digest the downloaded bytes must have.
        algorithm: ``"sha1"`` or ``"sha256"`` (any :func:`hashlib.new` name).
        opener: replaces :func:`urllib.request.urlopen` (tests pass a fake one).
        timeout: seconds before a stalled connection is abandoned.
        hint: appended to the :class:`DownloadError` message — how to supply the file by hand.

    Raises:
        DownloadError: offline, timeout, refused connection or an HTTP error.
        ChecksumError: the bytes do not have the expected digest (nothing is kept).
    """
    dest = Path(dest)
    opener = opener or urllib.request.urlopen
    digest = hashlib.new(algorithm)
    with atomic_file(dest, suffix=".part") as handle:  # kept only if the checksum matches
        try:
            with opener(url, timeout=timeout) as response:
                _copy_stream(response, handle, digest)
        except (
            urllib.error.URLError,
            http.client.HTTPException,
            socket.gaierror,
            ConnectionError,
            TimeoutError,
        ) as err:
            reason = getattr(err, "reason", err)
            raise DownloadError(f"could not download {url}: {reason}. {hint}".strip()) from err
        got = digest.hexdigest()
        if got != expected.lower():
            raise ChecksumError(
                f"the file downloaded from {url} has {algorithm} {got}, expected "
                f"{expected.lower()}; it was deleted. {hint}".strip()
            )
    return dest


def _member_target(root: Path, name: str) -> Path:
    """Where ``name`` would be written under ``root``; refuses paths that leave ``root``."""
    pure = PurePosixPath(name.replace("\\", "/"))
    target = (root / pure).resolve()
    if pure.is_absolute() or not target.is_relative_to(root):
        raise CorruptArchiveError(
            f"refusing archive member {name!r}: it would be written outside {root}"
        )
    return target


def _is_junk(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and (parts[0] == "__MACOSX" or parts[-1] == ".DS_Store")


def extract_zip(archive: str | os.PathLike[str], target: str | os.PathLike[str]) -> list[Path]:
    """Extract ``archive`` into ``target`` safely and return the extracted file paths.

    Every member name is checked first: one that resolves outside ``target`` makes the whole
    archive refused before anything is written. ``__MACOSX/`` entries and ``.DS_Store`` are
    skipped. Members are extracted into a temporary folder inside ``target`` and each file is
    then renamed into place, so an archive that turns out corrupt half-way leaves no
    half-written file under a final name.

    Raises:
        CorruptArchiveError: not a zip, truncated, a CRC mismatch, or an escaping member.
    """
    archive = Path(archive)
    root = Path(target)
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    staging = Path(tempfile.mkdtemp(prefix=".extract-", dir=root))
    moved: list[Path] = []
    try:
        try:
            with zipfile.ZipFile(archive) as zf:
                members = [m for m in zf.infolist() if not _is_junk(m.filename)]
                plan = [(m, _member_target(root, m.filename)) for m in members]
                for member, final in plan:
                    if member.is_dir():
                        continue
                    staged = staging / final.relative_to(root)
                    staged.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(member) as src, open(staged, "wb") as dst:
                        shutil.copyfileobj(src, dst, CHUNK)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error) as err:
            raise CorruptArchiveError(
                f"{archive} is not a readable zip archive (truncated or corrupt?): {err}. "
                "Delete it and download it again."
            ) from err
        for member, final in plan:
            if member.is_dir():
                final.mkdir(parents=True, exist_ok=True)
                continue
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / final.relative_to(root), final)
            moved.append(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return moved
