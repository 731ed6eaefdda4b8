"""Chapter 11's recipes: the variants of the translator ablation and the controls of the
score comparison, as keyword arguments of :func:`seq2seq_lib.recipes.ch08.train_translator`,
and the translator on subwords. :mod:`seq2seq_lib.ablation` measures them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from seq2seq_lib.batches import TranslationData
from seq2seq_lib.cache import Trained
from seq2seq_lib.corpus import find_corpus, read_pairs
from seq2seq_lib.device import SMOKE_SPLIT, Run
from seq2seq_lib.recipes import Plan, train_plan
from seq2seq_lib.recipes.ch07 import DATA
from seq2seq_lib.recipes.ch08 import translator_plan
from seq2seq_lib.subwords import subword_data

#: BPE symbols per language of the subword data (:func:`subword_translation_data`), chosen
#: on validation BLEU by ``benchmarks/bench_subword_sizes.py``.
SUBWORD_SYMBOLS = 4000

#: ``{label: variant of seq2seq_lib.recipes.ch08.train_translator}``; one decision changed
#: each.
VARIANTS: dict[str, dict[str, Any]] = {
    "no attention": {"style": "none", "score": None},
    "Luong, dot": {"style": "luong", "score": "dot"},
    "Luong, general": {"style": "luong", "score": "general"},
    "Luong, concat": {"style": "luong", "score": "concat"},
    "Bahdanau, additive": {"style": "bahdanau", "score": "additive"},
    "general + reversed source": {"style": "luong", "score": "general",
                                  "reverse_source": True},
    "general + scheduled sampling": {"style": "luong", "score": "general",
                                     "teacher_forcing": "scheduled"},
}
#: The controls of the score comparison, as ``(group, variant, seeds)``. Each group is trained
#: once per seed (:func:`seq2seq_lib.recipes.ch08.translator_plan`'s ``seed``: initial
#: weights and batch order); seed 0 is the model of :data:`VARIANTS`. The scaled scores
#: divide dot and general by :math:`\sqrt{d_k}`; the ``lr`` rows use a 5x lower learning
#: rate than the quick profile's.
CONTROLS: tuple[tuple[str, dict[str, Any], tuple[int, ...]], ...] = (
    ("Luong, dot", VARIANTS["Luong, dot"], (0, 1, 2)),
    ("Luong, general", VARIANTS["Luong, general"], (0, 1, 2)),
    ("Luong, concat", VARIANTS["Luong, concat"], (0, 1, 2)),
    ("Luong, scaled dot", {"style": "luong", "score": "scaled_dot"}, (0, 1, 2)),
    ("Luong, scaled general", {"style": "luong", "score": "scaled_general"}, (0, 1, 2)),
    ("Luong, dot, lr 1e-3", {**VARIANTS["Luong, dot"], "lr": 1e-3}, (0,)),
    ("Luong, general, lr 1e-3", {**VARIANTS["Luong, general"], "lr": 1e-3}, (0,)),
)


def control_jobs() -> dict[str, dict[str, Any]]:
    """Every model of :data:`CONTROLS`, ``{"<group> | seed <n>": variant with its seed}``,
    all seed-0 models first (the ones a reader has seen in the table), then seed 1, then 2."""
    most = max(len(seeds) for _, _, seeds in CONTROLS)
    jobs = {}
    for i in range(most):
        for group, variant, seeds in CONTROLS:
            if i < len(seeds):
                jobs[f"{group} | seed {seeds[i]}"] = {**variant, "seed": seeds[i]}
    return jobs


def subword_translation_data(run: Run) -> TranslationData:
    """The sentences and splits of chapters 7–11 (:data:`seq2seq_lib.recipes.ch07.DATA`) as
    cased subwords of :data:`SUBWORD_SYMBOLS` symbols per language
    (:func:`seq2seq_lib.subwords.subword_data`). In a smoke run the validation and test splits
    keep :data:`~seq2seq_lib.device.SMOKE_SPLIT` pairs each."""
    if DATA["direction"] != "fr-en":
        raise ValueError(f"subword data is French to English, not {DATA['direction']}")
    raw = read_pairs(find_corpus())
    data = subword_data([(fr, en) for en, fr in raw], src_size=SUBWORD_SYMBOLS,
                        tgt_size=SUBWORD_SYMBOLS, max_len=DATA["max_len"], name="fr-en subwords")
    return data.with_eval_samples(SMOKE_SPLIT) if run.smoke else data


def subword_translator_plan(run: Run, data: TranslationData, **variant: Any) -> Plan:
    """Chapter 8's translator recipe (:func:`~seq2seq_lib.recipes.ch08.translator_plan`,
    same sizes and budget) on subword data: the same plan but for the vocabulary sizes, named
    and keyed apart from the word-level model."""
    plan = translator_plan(run, data, **variant)
    settings = {"direction": DATA["direction"], "max_len": DATA["max_len"],
                "units": "subwords", "symbols": SUBWORD_SYMBOLS, "summary": data.summary()}
    return dataclasses.replace(plan, name=f"{plan.name}-subwords{SUBWORD_SYMBOLS}",
                               data=settings)


def train_subword_translator(run: Run, data: TranslationData, *, progress: bool = True,
                             pause_at: int | None = None, **variant: Any) -> Trained:
    """Train (or load) :func:`subword_translator_plan` on ``data``
    (:func:`subword_translation_data`); ``pause_at`` as for
    :func:`~seq2seq_lib.recipes.ch08.train_translator`."""
    return train_plan(subword_translator_plan(run, data, **variant), data, run,
                      progress=progress, pause_at=pause_at)
