"""A fingerprint of this machine's floating-point results, to compare across CPUs.

    python scripts/numerics_fingerprint.py                  # print the fingerprint (JSON)
    python scripts/numerics_fingerprint.py --check FILE     # exit 1 if it differs from FILE's

Each entry is a SHA-256 prefix of the exact bytes of some results the course depends on:

* ``matmul``: matrix products of several shapes (float32/64; matrix-vector, transposed);
* ``elementwise``: exp, log (float32), tanh, sigmoid, softmax, log-softmax, cross-entropy,
  small and large tensors (the large ones are split into chunks by ATen and MKL);
* ``log-f64``: ``torch.log`` of float64 tensors, which MKL's vector math computes (``vdLn``);
  it is the one entry known to depend on the CPU despite the pins (:data:`VENDOR_DEPENDENT`);
* ``reductions``: sums and norms of 10^5 elements;
* ``gru`` / ``lstm``: ``nn.GRU`` / ``nn.LSTM`` forward and backward, also on packed batches;
* ``bptt``: chapter 1's float64 hidden-state gradient norms at rho = 1 and rho = 3 over 200
  steps (an exploding, ill-conditioned quantity);
* ``task``: 100 Adam steps of chapter 2's GRU on the first-token task;
* ``seq2seq-*``: 200 updates of chapter 7's LSTM seq2seq and of chapter 8's Luong and
  Bahdanau translators on the dates task (loss and a hash of every weight), then their
  greedy and beam-search outputs;
* ``numpy``: NumPy's exp, log, tanh, power, sums and matrix products.

With the course's portable numerics (:mod:`seq2seq_lib.numerics`, on by default) the
fingerprint is meant to be the same on every x86-64 CPU with AVX2; with
``SEQ2SEQ_NUMERICS=native`` it depends on the CPU. ``scripts/cross_cpu_fingerprint.py`` runs
this script natively and under emulated CPUs and records the comparison.
"""

from __future__ import annotations

import seq2seq_lib  # noqa: F401  (first: pins the CPU kernels before torch and NumPy load)

# isort: split
import argparse
import ctypes
import hashlib
import json
import mmap
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from seq2seq_lib import bptt, numerics, sequence_model, synthetic, tasks, training
from seq2seq_lib.attention_seq2seq import TranslatorConfig, TranslatorModel
from seq2seq_lib.beam import beam_search
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel


def digest(*arrays: object) -> str:
    """SHA-256 prefix of the bytes of tensors / arrays / strings, in order."""
    h = hashlib.sha256()
    for a in arrays:
        if isinstance(a, torch.Tensor):
            h.update(a.detach().cpu().contiguous().numpy().tobytes())
        elif isinstance(a, np.ndarray):
            h.update(np.ascontiguousarray(a).tobytes())
        else:
            h.update(repr(a).encode())
    return h.hexdigest()[:16]


def matmul(g: torch.Generator) -> str:
    out = []
    for dtype in (torch.float32, torch.float64):
        for m, k, n in [(8, 16, 96), (37, 129, 513), (1, 128, 384), (640, 128, 3000)]:
            a = torch.randn(m, k, generator=g, dtype=dtype)
            b = torch.randn(k, n, generator=g, dtype=dtype)
            c = torch.randn(n, generator=g, dtype=dtype)
            out += [a @ b, torch.addmm(c, a, b), b.t() @ a.t(), torch.bmm(a[None], b[None])]
    return digest(*out)


#: Entries that the pins cannot make the same on every CPU, and why. ``log-f64``: with
#: ``MKL_CBWR=COMPATIBLE``, MKL's float64 logarithm over arrays (``vdLn``, which ``torch.log``
#: calls for float64 tensors) returns, for a few inputs near 1, a result one unit in the last
#: place away on an Intel Xeon with AVX-512 (e.g. log(1.040047729111886): ...588 there,
#: ...589 on an AMD EPYC and on emulated Haswell and EPYC CPUs). No setting removes it: every
#: MKL_CBWR branch up to AVX2 (with or without STRICT), MKL_ENABLE_INSTRUCTIONS and the
#: accuracy modes of MKL's vector math were tried. The book's printed outputs do not depend
#: on it (every chapter gives the same outputs on both CPUs); the tests accept exactly the
#: values recorded for it (``results/numerics-fingerprint.json``).
VENDOR_DEPENDENT: dict[str, str] = {
    "log-f64": "MKL's float64 log over arrays (vdLn) differs in the last bit for a few inputs "
               "between an Intel Xeon with AVX-512 and AMD or emulated CPUs; no MKL setting "
               "removes it",
}


def elementwise(g: torch.Generator) -> tuple[str, str]:
    """The ``elementwise`` and ``log-f64`` entries."""
    out, log64 = [], []
    for dtype in (torch.float32, torch.float64):
        for n in (50, 4_000, 100_000):
            x = torch.randn(n, generator=g, dtype=dtype) * 3
            rows = x.view(-1, 50)
            log = (x.abs() + 1e-3).log()
            (log64 if dtype == torch.float64 else out).append(log)
            out += [x.exp(), x.tanh(), x.sigmoid(), rows.softmax(-1), rows.log_softmax(-1),
                    nn.functional.cross_entropy(rows, torch.arange(len(rows)) % 50)]
    return digest(*out), digest(*log64)


def reductions(g: torch.Generator) -> str:
    x = torch.randn(100_000, generator=g)
    return digest(x.sum(), x.mean(), torch.linalg.vector_norm(x), x.double().sum(),
                  x.view(100, -1).sum(0), x.view(100, -1).sum(1))


def recurrent(cls: type[nn.Module], g: torch.Generator) -> str:
    torch.manual_seed(1)
    rnn = cls(16, 32, num_layers=2, batch_first=True)
    x = torch.randn(8, 20, 16, generator=g)
    lengths = torch.tensor([20, 18, 15, 11, 9, 6, 3, 1])
    out, _ = rnn(x)
    packed, _ = rnn(pack_padded_sequence(x, lengths, batch_first=True))
    (out.pow(2).sum() + packed.data.pow(2).sum()).backward()
    return digest(out, packed.data, *[p.grad for p in rnn.parameters()])


def bptt_norms(g: torch.Generator) -> str:
    out = []
    for rho in (1.0, 3.0):
        U = bptt.scaled_orthogonal(32, rho, g)
        W = torch.randn(32, 8, generator=g, dtype=torch.float64) / 8**0.5
        xs = torch.randn(200, 8, generator=g, dtype=torch.float64)
        top = torch.ones(32, dtype=torch.float64) / 32**0.5
        out.append(bptt.hidden_state_grad_norms(U, W, xs, torch.zeros(32, dtype=torch.float64),
                                                top))
    return digest(*out)


def task_training() -> str:
    task = tasks.make_task("first_token", 30)
    torch.manual_seed(0)
    model = sequence_model.SequenceModel(sequence_model.SequenceConfig(
        "gru", task.input_size, 32, task.output_size, keep_bias=3.0))
    history = sequence_model.train_sequence_model(model, task, steps=100, batch_size=64, seed=0)
    return digest(history["loss"], *model.parameters())


def seq2seq_training(build: Callable[[int, int], nn.Module]) -> str:
    data = synthetic.date_data(2_000, seed=0)
    torch.manual_seed(0)
    model = build(len(data.src_vocab), len(data.tgt_vocab))
    loader = data.loader("train", 32, seed=0)
    history = training.train(model, loader,
                             training.TrainConfig(epochs=10, steps=200, lr=5e-3, clip=1.0),
                             progress=False)
    batch = next(iter(data.loader("test", 64)))
    greedy = model.generate(batch.src, batch.src_lengths, max_len=12)
    beam = model.generate(batch.src, batch.src_lengths,
                          search=partial(beam_search, beam_size=4, alpha=0.6), max_len=12)
    return digest(history["step_loss"], *model.parameters(), greedy, beam)


def numpy_ops() -> str:
    rng = np.random.default_rng(0)
    out = []
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(10_007) * 3).astype(dtype)
        a = rng.standard_normal((64, 300)).astype(dtype)
        b = rng.standard_normal((300, 129)).astype(dtype)
        out += [np.exp(x), np.log(np.abs(x) + 1e-3), np.tanh(x), np.power(np.abs(x), 0.3),
                x.sum(), x.mean(), x.std(), a @ b]
    return digest(*out)


def fingerprint() -> dict[str, str]:
    """Every entry of the fingerprint (see the module docstring)."""
    g = torch.Generator().manual_seed(0)
    matrix_products = matmul(g)  # (in this order: the entries share the generator)
    unary, log64 = elementwise(g)
    return {
        "matmul": matrix_products,
        "elementwise": unary,
        "log-f64": log64,
        "reductions": reductions(g),
        "gru": recurrent(nn.GRU, g),
        "lstm": recurrent(nn.LSTM, g),
        "bptt": bptt_norms(g),
        "task": task_training(),
        "seq2seq-lstm": seq2seq_training(lambda s, t: Seq2SeqModel(Seq2SeqConfig(
            s, t, embed_size=32, hidden_size=64, num_layers=2))),
        "seq2seq-luong": seq2seq_training(lambda s, t: TranslatorModel(TranslatorConfig(
            s, t, style="luong", score="general", embed_size=32, hidden_size=64))),
        "seq2seq-bahdanau": seq2seq_training(lambda s, t: TranslatorModel(TranslatorConfig(
            s, t, style="bahdanau", embed_size=32, hidden_size=64))),
        "numpy": numpy_ops(),
    }


# x86-64 machine code of ``void cpuid(uint32 leaf, uint32 subleaf, uint32 out[4])``: saves rbx,
# runs CPUID and stores eax, ebx, ecx, edx. Executed through ctypes, so under qemu-user it
# reports the *emulated* CPU (/proc/cpuinfo would show the host's).
_CPUID_CODE = bytes.fromhex(
    "53" "4989d0" "89f8" "89f1" "0fa2" "418900" "41895804" "41894808" "4189500c" "5b" "c3")


def cpuid(leaf: int, subleaf: int = 0) -> tuple[int, int, int, int]:
    """``(eax, ebx, ecx, edx)`` of the CPUID instruction, as this process sees the CPU."""
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(_CPUID_CODE)
    out = (ctypes.c_uint32 * 4)()
    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p)(address)(
        leaf, subleaf, ctypes.addressof(out))
    return tuple(out)  # type: ignore[return-value]


def machine() -> dict[str, object]:
    """What ran it: the CPU as the process sees it through CPUID (vendor, brand string,
    AVX2/AVX-512F), the kernels ATen chose, and versions."""
    _, ebx, ecx, edx = cpuid(0)
    vendor = b"".join(r.to_bytes(4, "little") for r in (ebx, edx, ecx)).decode("ascii", "replace")
    brand = b"".join(r.to_bytes(4, "little") for leaf in (0x80000002, 0x80000003, 0x80000004)
                     for r in cpuid(leaf))
    features = cpuid(7)[1]
    return {
        "vendor": vendor, "cpu": brand.rstrip(b"\0").decode("ascii", "replace").strip(),
        "avx2": bool(features >> 5 & 1), "avx512f": bool(features >> 16 & 1),
        "aten_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__, "numpy": np.__version__, "numerics": numerics.mode(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--check", type=Path, help="a recorded fingerprint (JSON) to compare with")
    args = parser.parse_args()
    result = {"machine": machine(), "fingerprint": fingerprint()}
    print(json.dumps(result, indent=1))
    if args.check:
        expected = json.loads(args.check.read_text(encoding="utf-8"))["fingerprint"]
        differ = sorted(k for k in expected.keys() | result["fingerprint"].keys()
                        if expected.get(k) != result["fingerprint"].get(k))
        if differ:
            print(f"differs from {args.check}: {', '.join(differ)}", file=sys.stderr)
            sys.exit(1)
        print(f"same as {args.check}", file=sys.stderr)


if __name__ == "__main__":
    main()
