"""Chapter 7's recipes: the French→English data of chapters 7–11 and the LSTM seq2seq.

:data:`DATA` and :func:`translation_data` are the data every later chapter shares;
:func:`seq2seq_plan` sizes :class:`~seq2seq_lib.seq2seq.Seq2SeqModel` and its training run
for the profile; :func:`train_seq2seq` trains it once and loads it afterwards (chapter 11
reuses it).
"""

from __future__ import annotations

from typing import Any

from seq2seq_lib.batches import TranslationData
from seq2seq_lib.cache import Trained
from seq2seq_lib.corpus import load_translation_data
from seq2seq_lib.device import SMOKE_SPLIT, Run
from seq2seq_lib.recipes import Plan, train_plan
from seq2seq_lib.seq2seq import Seq2SeqConfig, Seq2SeqModel
from seq2seq_lib.training import TrainConfig

#: The data settings of the chapters' French→English task (sentences of at most 10 tokens,
#: vocabularies of the words seen at least 10 times in the training split). The threshold
#: was chosen with ``benchmarks/bench_vocab.py``: against 3, it halves the target vocabulary
#: (and with it the output layer, most of a training update's cost), and chapter 7's model
#: scored higher on the validation split after its quick budget.
DATA: dict[str, Any] = {"direction": "fr-en", "max_len": 10, "min_freq": 10}


def translation_data(run: Run) -> TranslationData:
    """The French→English data of chapters 7–11 (:data:`DATA`). In a smoke run
    (``run.smoke``) its validation and test splits keep a seeded random sample of
    :data:`~seq2seq_lib.device.SMOKE_SPLIT` pairs each, so every evaluation is short."""
    data = load_translation_data(**DATA)
    return data.with_eval_samples(SMOKE_SPLIT) if run.smoke else data


def seq2seq_plan(run: Run, data: TranslationData) -> Plan:
    """Chapter 7's model and training run for the run's profile.

    ``quick``: one LSTM layer of 256 units (128-dimensional embeddings), 1,800 updates of 64
    pairs (about one epoch), validation loss on a fixed random sample of 1,000 validation
    pairs every 100 updates. Chosen on validation BLEU: at the same cost per update, two
    layers of 128 units learn much more slowly (``benchmarks/bleu_vs_budget.py``).
    ``full``: the paper's 4 layers, of 1,024 units (512-dimensional embeddings), dropout 0.2,
    8 epochs (about 3.5 minutes on one H100 GPU). The initial weights are drawn after
    ``torch.manual_seed(0)``.
    """
    model = Seq2SeqConfig(
        len(data.src_vocab), len(data.tgt_vocab), embed_size=run.pick(quick=128, full=512),
        hidden_size=run.pick(quick=256, full=1024), num_layers=run.pick(quick=1, full=4),
        dropout=run.pick(quick=0.0, full=0.2),
    )
    train = TrainConfig(
        lr=run.pick(quick=5e-3, full=1e-3), batch_size=run.pick(quick=64, full=128),
        epochs=run.pick(quick=1, full=8), steps=run.pick(quick=1800, full=None),
        log_every=25, valid_every=100, valid_pairs=1000, valid_batch_size=250,
    )
    return Plan("ch07-seq2seq", Seq2SeqModel, model, train, {"summary": data.summary()})


def train_seq2seq(run: Run, data: TranslationData, *, pause_at: int | None = None) -> Trained:
    """Train (or load) chapter 7's seq2seq (:func:`seq2seq_plan`): reversed source, teacher
    forcing, :func:`~seq2seq_lib.training.fit` on ``data``. ``pause_at``: train only up to
    that update and save the run, to be continued by the next call."""
    return train_plan(seq2seq_plan(run, data), data, run, pause_at=pause_at)
