"""Chapter 11's recipes: the variants of the translator ablation and the controls of the
score comparison, as keyword arguments of :func:`seq2seq_lib.recipes.ch08.train_translator`.
:mod:`seq2seq_lib.ablation` measures them.
"""

from __future__ import annotations

from typing import Any

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
