"""benchmarks/bench_full_profile.py: the full profile's time, estimated from measured costs.

The measuring itself needs the full profile's models on a GPU; what is tested here is the
arithmetic that turns costs into a chapter's minutes, and that it counts what chapter 11 does.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys

import pytest
from helpers import ROOT

from seq2seq_lib import ablation
from seq2seq_lib.recipes import ch11

_spec = importlib.util.spec_from_file_location(
    "bench_full_profile", ROOT / "benchmarks" / "bench_full_profile.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # (its dataclass looks its module up)
_spec.loader.exec_module(bench)

COUNTS = bench.Counts(test_sources=300, strict_sources=170, design="Bahdanau, additive",
                      word_beam=5)
MODELS = (*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL, bench.SUBWORDS)


def costs(*, update=0.0, valid=0.0, greedy=0.0, beam=0.0, updates=100, valid_every=50):
    return {label: {"planned_updates": updates, "valid_every": valid_every,
                    "s_per_update": update, "s_per_valid_pass": valid,
                    "s_per_greedy_sentence": greedy, "s_per_beam_sentence": beam}
            for label in MODELS}


def code_of(notebook: str) -> str:
    cells = json.loads((ROOT / "chapters" / notebook).read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def chapter_11(minutes: dict[str, float]) -> float:
    (name,) = [n for n in minutes if n.startswith("11 ")]
    return minutes[name]


def test_chapter_11_counts_every_translation_it_makes():
    """One second per greedy sentence, nothing else: the minutes are the greedy sentences
    of the chapter's cells — the variant table (8 rows), the <unk> count, words against
    subwords on three splits, the greedy row of the beam table and the word-level greedy
    search again, the copy of <unk>."""
    valid, sample = ablation.VALID_LIMIT, ablation.BEAM_TEST_LIMIT
    test, strict = COUNTS.test_sources, COUNTS.strict_sources
    greedy = (8 * (valid + test) + test + 2 * (valid + test + strict) + (valid + sample)
              + sample + sample)
    assert chapter_11(bench.estimate_minutes(costs(greedy=1.0), COUNTS)) * 60 == greedy
    beam_sizes = len([k for k in ablation.BEAM_SIZES if k > 1])
    beam = beam_sizes * (valid + sample) + sample + sample  # + word-level beam, default
    assert chapter_11(bench.estimate_minutes(costs(beam=1.0), COUNTS)) * 60 == beam
    greedy_word_beam = bench.Counts(**{**COUNTS.__dict__, "word_beam": 1})
    assert chapter_11(bench.estimate_minutes(costs(beam=1.0), greedy_word_beam)) * 60 == (
        beam - sample)


def test_chapter_11_trains_five_word_level_translators_and_the_subword_one():
    """Training: the variants but chapter 8's two, and the subword translator; the
    validation passes every ``valid_every`` updates; the subword data's own time."""
    one = bench.estimate_minutes(costs(update=1.0, updates=100, valid_every=50), COUNTS)
    assert chapter_11(one) * 60 == 6 * 100
    assert one["08 (its two translators)"] * 60 == 2 * 100
    passes = bench.estimate_minutes(costs(valid=1.0, updates=100, valid_every=50), COUNTS,
                                    subword_data_seconds=30.0)
    assert chapter_11(passes) * 60 == 6 * 2 + 30.0


def test_an_unmeasured_model_leaves_its_chapter_out():
    """The stored GPU results measure every model; without the subword translator's costs
    (as before it was measured) chapters 7 and 8 are estimated, chapter 11 is not."""
    stored = json.loads((ROOT / "benchmarks" / "results" / "full-profile-cuda.json")
                        .read_text(encoding="utf-8"))["measured"]
    side = {name: 1000 for name in ("FREE_STEPS", "TUNE_STEPS", "FORWARD_STEPS")}
    assert [name[:2] for name in bench.estimate_minutes(stored, COUNTS, side)] == ["07", "08", "11"]
    without_subwords = {label: m for label, m in stored.items() if label != bench.SUBWORDS}
    minutes = bench.estimate_minutes(without_subwords, COUNTS, side)
    assert [name[:2] for name in minutes] == ["07", "08"]


def test_the_side_runs_are_read_from_chapter_7():
    side = bench.side_run_updates()
    assert set(side) == {"FREE_STEPS", "TUNE_STEPS", "FORWARD_STEPS"}
    source = code_of("07_seq2seq.ipynb")
    for name, full in side.items():
        assert re.search(rf"{name} = run\.pick\(quick=\d+, full={full}\)", source)


@pytest.mark.parametrize("needle", [
    "ablation.beam_rows(sub_model, sub_data",  # the beam table is on subwords
    '"strict test": (sub_data.strict_test, None)',  # words and subwords on the strict split
    "measure_rows(trained, data, plan",  # the variant table: greedy on valid and test
])
def test_what_the_estimate_assumes_is_what_chapter_11_does(needle):
    assert needle in code_of("11_translator.ipynb")
