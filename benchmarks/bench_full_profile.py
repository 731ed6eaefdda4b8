"""How long the full profile's big training runs take on this machine: measured costs × counts.

    python benchmarks/bench_full_profile.py --device cuda      # on a GPU machine
    python benchmarks/bench_full_profile.py --device cuda --only translators

Chapters 7, 8 and 11 train the course's large models under the ``full`` profile: chapter 7's
4-layer LSTM (and, in its own cells, a free-running, three fine-tuned and a not-reversed
copy), and chapter 11's seven word-level translators (two of them chapter 8's) and its
translator on subwords. Running all of that to time it would take longer than it is worth;
instead this script measures, for each model,

* the seconds per training update: the library's own training loop over the real data and
  length-bucketed batches, timed for ``WARMUP`` and for ``WARMUP + UPDATES`` updates
  (``--warmup``, ``--updates``), the difference divided by ``UPDATES`` (so set-up and
  warm-up cancel out), median of ``--rounds``;
* one validation pass (the teacher-forced loss on the recipe's validation sample);
* decoding: greedy translations of ``--sentences`` (1,000) validation sources, and beam
  search (k = 5, standing in for every k > 1) of a fifth as many, BLEU scoring included;

and multiplies them by the counts the recipes plan: updates (``TrainConfig.steps``, or
epochs × batches per epoch) and validation passes; for chapter 11 also the time to build the
subword data (learning the BPE merges) and every translation the chapter makes
(:func:`chapter_11_work`: the variant table, the words-against-subwords table, the beam
table, the default search). Chapter 7's side runs take their update counts from the
notebook's ``run.pick(quick=..., full=...)`` lines. Smaller evaluations (a few hundred
sentences here and there) are left out, so the estimates are lower bounds of a chapter's
time; the other chapters are quick enough to time whole (``scripts/time_chapters.py``).
Writes ``benchmarks/results/full-profile-<device>.json``. After a change of the recipes'
budgets, ``--measured FILE`` estimates again from the costs measured earlier, without a GPU
(the costs per update do not depend on the budget).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import seq2seq_lib  # noqa: E402,F401  (before torch: importing it pins the CPU kernels)
from seq2seq_lib import ablation  # noqa: E402
from seq2seq_lib.batches import TranslationDataset, sample_pairs  # noqa: E402
from seq2seq_lib.beam import beam_search  # noqa: E402
from seq2seq_lib.buckets import bucket_loader  # noqa: E402
from seq2seq_lib.device import Run, describe_machine, setup  # noqa: E402
from seq2seq_lib.evaluation import bleu  # noqa: E402
from seq2seq_lib.recipes import build_model, ch07, ch08, ch11  # noqa: E402
from seq2seq_lib.training import TrainConfig, evaluate_loss, train  # noqa: E402

WARMUP, UPDATES = 10, 200
BEAM_K = 5
CH07 = ROOT / "chapters" / "07_seq2seq.ipynb"


def side_run_updates() -> dict[str, int]:
    """Chapter 7's side runs, ``{NAME: full-profile updates}``, read from its cells
    (``NAME = run.pick(quick=..., full=N)``)."""
    nb = json.loads(CH07.read_text(encoding="utf-8"))
    source = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    found = dict(re.findall(r"^(\w+_STEPS) = run\.pick\(quick=\d+, full=(\d+)\)", source, re.M))
    return {name: int(n) for name, n in found.items()}


def timed(fn, run: Run) -> float:
    run.synchronize()  # a GPU runs asynchronously: wait for it before reading the clock
    start = time.perf_counter()
    fn()
    run.synchronize()
    return time.perf_counter() - start


def measure(name: str, build, train_config: TrainConfig, data, train_set, run: Run,
            rounds: int, sentences: int, timed_updates: int = UPDATES,
            warmup: int = WARMUP) -> dict:
    """Seconds per update, per validation pass, per greedy and beam sentence of one model."""
    device = run.device
    model = build().to(device)
    loader = bucket_loader(train_set, train_config.batch_size,
                           reverse_source=model.reverse_source)

    def updates(n: int) -> float:
        config = dataclasses.replace(train_config, steps=n, epochs=1, valid_every=None,
                                     log_every=n)
        return timed(lambda: train(model, loader, config, run=run, progress=False), run)

    per_update = statistics.median(
        (updates(warmup + timed_updates) - updates(warmup)) / timed_updates
        for _ in range(rounds))
    valid_set = TranslationDataset(sample_pairs(data.valid, train_config.valid_pairs),
                                   data.src_vocab, data.tgt_vocab)
    valid = bucket_loader(valid_set, train_config.valid_batch_size, shuffle=False,
                          reverse_source=model.reverse_source)
    per_valid = timed(lambda: evaluate_loss(model, valid, device=device), run)
    greedy = timed(lambda: bleu(model, data.valid, data.src_vocab, data.tgt_vocab,
                                limit=sentences, seed=1, device=device), run)
    beam = timed(lambda: bleu(model, data.valid, data.src_vocab, data.tgt_vocab,
                              search=partial(beam_search, beam_size=BEAM_K, alpha=0.6),
                              limit=sentences // 5, seed=1, device=device), run)
    planned = ch08.planned_updates(train_config, len(train_set))
    result = {"planned_updates": planned, "valid_every": train_config.valid_every,
              "s_per_update": per_update, "s_per_valid_pass": per_valid,
              "s_per_greedy_sentence": greedy / sentences,
              "s_per_beam_sentence": beam / (sentences // 5)}
    print(f"{name:32s} {1000 * per_update:7.1f} ms/update x {planned:6,} planned | "
          f"valid pass {per_valid:5.2f} s | greedy {1000 * result['s_per_greedy_sentence']:.2f}"
          f" ms, beam k={BEAM_K} {1000 * result['s_per_beam_sentence']:.2f} ms per sentence",
          flush=True)
    return result


def training_seconds(m: dict, updates: int | None = None) -> float:
    updates = m["planned_updates"] if updates is None else updates
    passes = updates // m["valid_every"] if m["valid_every"] else 0
    return updates * m["s_per_update"] + passes * m["s_per_valid_pass"]


#: The label of the subword translator in the measurements.
SUBWORDS = "subwords (chosen design)"


@dataclasses.dataclass(frozen=True)
class Counts:
    """What chapter 11 translates besides training, counted on the full profile's data.

    ``test_sources``, ``strict_sources``: distinct sources of the test split and of the
    strict test split; ``design``: the word-level variant the chapter builds on (chosen on
    validation BLEU; the quick profile's choice stands in for the full profile's, which is
    known only once its table is measured); ``word_beam``: the beam size of the word-level
    beam table's chosen row (the chapter reads that table from the quick profile's results).
    """

    test_sources: int
    strict_sources: int
    design: str
    word_beam: int


def chapter_11_work(counts: Counts) -> list[tuple[str, str, int]]:
    """Chapter 11's translations under the full profile, as ``(model, "greedy" | "beam",
    sentences)``, cell by cell (the same searches and samples as the chapter)."""
    valid, sample = ablation.VALID_LIMIT, ablation.BEAM_TEST_LIMIT
    design, test, strict = counts.design, counts.test_sources, counts.strict_sources
    work = [(label, "greedy", valid + test)  # the variant table: every row
            for label in (*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL)]
    work.append((design, "greedy", test))  # the <unk> count of the chosen word-level model
    for model in (design, SUBWORDS):  # words against subwords: valid, test, strict test
        work.append((model, "greedy", valid + test + strict))
    for k in ablation.BEAM_SIZES:  # the beam table, on subwords: one search per k and split
        work.append((SUBWORDS, "greedy" if k == 1 else "beam", valid + sample))
    work.append((design, "greedy", sample))  # the word-level beam table's two searches again
    work.append((design, "greedy" if counts.word_beam == 1 else "beam", sample))
    work.append((SUBWORDS, "beam", sample))  # the default search on the strict test sample
    attending = [label for label, v in ch11.VARIANTS.items() if v["style"] != "none"]
    work.append((design if design in attending else attending[0], "greedy", sample))  # copy
    return work


def estimate_minutes(measured: dict[str, dict], counts: Counts | None,
                     side_runs: dict[str, int] | None = None,
                     subword_data_seconds: float = 0.0) -> dict[str, float]:
    """Minutes per chapter: each model's measured costs times the counts its recipe plans
    (a chapter whose models were not all measured is left out)."""
    seconds: dict[str, float] = {}
    if ablation.SEQ2SEQ_LABEL in measured and side_runs is not None and counts is not None:
        m = measured[ablation.SEQ2SEQ_LABEL]
        seconds["07 (LSTM + side runs + test BLEU)"] = (
            training_seconds(m) + sum(training_seconds(m, side_runs[name]) for name in (
                "FREE_STEPS", "TUNE_STEPS", "TUNE_STEPS", "TUNE_STEPS", "FORWARD_STEPS"))
            + counts.test_sources * m["s_per_greedy_sentence"])
    if all(label in measured for label in ablation.FROM_CHAPTER_8):
        seconds["08 (its two translators)"] = sum(training_seconds(measured[label])
                                                  for label in ablation.FROM_CHAPTER_8)
    needed = {*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL, SUBWORDS}
    if counts is not None and needed <= set(measured):
        rest = [label for label in (*ch11.VARIANTS, SUBWORDS)
                if label not in ablation.FROM_CHAPTER_8]
        per_sentence = {"greedy": "s_per_greedy_sentence", "beam": "s_per_beam_sentence"}
        translating = sum(n * measured[model][per_sentence[kind]]
                          for model, kind, n in chapter_11_work(counts))
        training = sum(training_seconds(measured[label]) for label in rest)
        seconds["11 (six more translators, five of them word-level, the subword data, "
                "every evaluation)"] = training + subword_data_seconds + translating
    return {name: s / 60 for name, s in seconds.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=["seq2seq", "translators"])
    parser.add_argument("--sentences", type=int, default=1000,
                        help="greedy translations timed per model (beam search: a fifth)")
    parser.add_argument("--updates", type=int, default=UPDATES,
                        help="updates timed per round, after the warm-up ones")
    parser.add_argument("--warmup", type=int, default=WARMUP,
                        help="warm-up updates (timed too, and subtracted)")
    parser.add_argument("--measured", type=Path,
                        help="no measuring: take the costs from this earlier result file and "
                             "estimate again with the recipes' current update counts")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    run = setup("cpu" if args.measured else args.device, "full")
    data = ch07.translation_data(run)
    started = time.perf_counter()
    sub_data = ch11.subword_translation_data(run) if args.only != "seq2seq" else None
    sub_seconds = time.perf_counter() - started  # learning the BPE merges, segmenting
    stored = ablation.stored_results("quick")
    design = ablation.best_variant([r for r in stored[0] if r.label in ch11.VARIANTS]).label
    counts = Counts(
        test_sources=len({tuple(src) for src, _ in data.test}),
        strict_sources=len({tuple(src) for src, _ in sub_data.strict_test}) if sub_data else 0,
        design=design, word_beam=ablation.chosen_beam(stored[1]).k)
    plans = {ablation.SEQ2SEQ_LABEL: ch07.seq2seq_plan(run, data)}
    plans.update({label: ch08.translator_plan(run, data, **variant)
                  for label, variant in ch11.VARIANTS.items()})
    if sub_data is not None:
        plans[SUBWORDS] = ch11.subword_translator_plan(run, sub_data, **ch11.VARIANTS[design])
    if args.only is not None:  # "seq2seq": chapter 7's LSTM; "translators": the others
        plans = {label: plan for label, plan in plans.items()
                 if (label == ablation.SEQ2SEQ_LABEL) == (args.only == "seq2seq")}
    earlier: dict = {}
    if args.measured:  # the costs measured before, the update counts of the recipes now
        earlier = json.loads(args.measured.read_text(encoding="utf-8"))
        measured: dict[str, dict] = earlier["measured"]
        sub_seconds = earlier.get("subword_data_seconds", sub_seconds)
        for label, m in measured.items():
            if label in plans:
                splits = sub_data if label == SUBWORDS else data
                m["planned_updates"] = ch08.planned_updates(plans[label].train, len(splits.train))
    else:
        measured = {}
        for label, plan in plans.items():
            build = partial(build_model, plan.model_class, plan.model, plan.train.seed)
            splits = sub_data if label == SUBWORDS else data
            measured[label] = measure(label, build, plan.train, splits,
                                      splits.dataset("train"), run, args.rounds,
                                      args.sentences, args.updates, args.warmup)

    estimates = estimate_minutes(measured, counts, side_run_updates(), sub_seconds)
    for name, minutes in estimates.items():
        print(f"chapter {name}: about {minutes:.1f} min")
    out = args.out or ROOT / "benchmarks" / "results" / f"full-profile-{args.device}.json"
    out.write_text(json.dumps({
        "about": __doc__.splitlines()[0],
        "machine": earlier.get("machine") or describe_machine(),
        "warmup": earlier.get("warmup", args.warmup),
        "updates": earlier.get("updates", args.updates),
        "rounds": earlier.get("rounds", args.rounds),
        "subword_data_seconds": round(sub_seconds, 1), "counts": dataclasses.asdict(counts),
        "measured": measured, "estimated_minutes": {k: round(v, 1)
                                                     for k, v in estimates.items()},
    }, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
