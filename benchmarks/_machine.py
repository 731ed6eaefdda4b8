"""The machine description stored with every benchmark result (from ``seq2seq_lib.device``)."""

from __future__ import annotations

from seq2seq_lib.device import cpu_model, describe_machine

__all__ = ["cpu_model", "machine"]


def machine() -> dict[str, object]:
    """CPU, Python, torch and torch's thread count (see ``describe_machine``)."""
    return {k: v for k, v in describe_machine().items() if k not in ("cpu_cores", "gpu")}
