"""seq2seq_lib.atomic: a file is replaced whole or not at all."""

import pytest

from seq2seq_lib.atomic import atomic_file


def test_a_finished_block_replaces_the_file(tmp_path):
    path = tmp_path / "sub" / "f.json"
    with atomic_file(path, "w") as handle:
        handle.write("new")
    assert path.read_text(encoding="utf-8") == "new"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]


def test_a_block_that_raises_leaves_the_old_file_and_no_temporary_one(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="checksum"), atomic_file(path) as handle:
        handle.write(b"half of the new")
        raise RuntimeError("bad checksum")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_only_write_modes(tmp_path):
    with pytest.raises(ValueError, match="mode"), atomic_file(tmp_path / "f", "a"):
        pass
