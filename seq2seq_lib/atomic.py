"""Writing a file so that a crash never leaves half of it: the one helper every writer uses.

:func:`atomic_file` opens a temporary file beside the target; when the ``with`` block ends
normally it flushes it to disk and renames it into place (``os.replace``, atomic on POSIX
and Windows); when the block raises, the temporary file is deleted and the target is left
as it was. Model caches, checkpoints, vocabularies, results files and downloads are written
through it, so an interrupted run leaves either the old file or the new one, never a
truncated one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], mode: str = "wb", *,
                suffix: str = ".tmp") -> Iterator[IO[Any]]:
    """Open a temporary file for writing (``mode``: ``"wb"`` or ``"w"``, UTF-8) that replaces
    ``path`` when the block ends without an exception; the parent folder is created.

    A check inside the block that raises (a wrong checksum, say) leaves nothing behind.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
