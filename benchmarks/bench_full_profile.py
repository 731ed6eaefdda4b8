"""How long the full profile's big training runs take on this machine: measured costs × counts.

    python benchmarks/bench_full_profile.py --device cuda      # on a GPU machine
    python benchmarks/bench_full_profile.py --device cuda --only translators

Chapters 7, 8 and 11 train the course's large models under the ``full`` profile: chapter 7's
4-layer LSTM (and, in its own cells, a free-running, three fine-tuned and a not-reversed
copy), and chapter 11's seven translators (two of them chapter 8's). Running all of that to
time it would take longer than it is worth; instead this script measures, for each model,

* the seconds per training update: the library's own training loop over the real data and
  length-bucketed batches, timed for ``WARMUP`` and for ``WARMUP + UPDATES`` updates, the
  difference divided by ``UPDATES`` (so set-up and warm-up cancel out), median of ``--rounds``;
* one validation pass (the teacher-forced loss on the recipe's validation sample);
* decoding: greedy translations of ``--sentences`` (1,000) validation sources, and beam
  search (k = 5, standing in for every k > 1) of a fifth as many, BLEU scoring included;

and multiplies them by the counts the recipes plan: updates (``TrainConfig.steps``, or
epochs × batches per epoch), validation passes, and for chapter 11 the evaluations of
``seq2seq_lib.ablation`` (the variant table, the beam table). Chapter 7's side runs take their
update counts from the notebook's ``run.pick(quick=..., full=...)`` lines. Evaluations other
than these (a few hundred sentences here and there) are left out, so the estimates are lower
bounds of a chapter's time; the other chapters are quick enough to time whole
(``scripts/time_chapters.py``). Writes ``benchmarks/results/full-profile-<device>.json``.
After a change of the recipes' budgets, ``--measured FILE`` estimates again from the costs
measured earlier, without a GPU (the costs per update do not depend on the budget).
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
from seq2seq_lib.buckets import bucket_batches, bucket_loader  # noqa: E402
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


def planned_updates(config: TrainConfig, train_set: TranslationDataset) -> int:
    """The updates a recipe's run plans: ``steps``, or its epochs of length-bucketed batches."""
    return config.steps or config.epochs * bucket_batches(len(train_set), config.batch_size)


def measure(name: str, build, train_config: TrainConfig, data, train_set, run: Run,
            rounds: int, sentences: int) -> dict:
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
        (updates(WARMUP + UPDATES) - updates(WARMUP)) / UPDATES for _ in range(rounds))
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
    planned = planned_updates(train_config, train_set)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=["seq2seq", "translators"])
    parser.add_argument("--sentences", type=int, default=1000,
                        help="greedy translations timed per model (beam search: a fifth)")
    parser.add_argument("--measured", type=Path,
                        help="no measuring: take the costs from this earlier result file and "
                             "estimate again with the recipes' current update counts")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    run = setup("cpu" if args.measured else args.device, "full")
    data = ch07.translation_data(run)
    train_set = data.dataset("train")
    plans = {ablation.SEQ2SEQ_LABEL: ch07.seq2seq_plan(run, data)}
    plans.update({label: ch08.translator_plan(run, data, **variant)
                  for label, variant in ch11.VARIANTS.items()})
    if args.only is not None:  # "seq2seq": chapter 7's LSTM; "translators": the others
        plans = {label: plan for label, plan in plans.items()
                 if (label == ablation.SEQ2SEQ_LABEL) == (args.only == "seq2seq")}
    earlier: dict = {}
    if args.measured:  # the costs measured before, the update counts of the recipes now
        earlier = json.loads(args.measured.read_text(encoding="utf-8"))
        measured: dict[str, dict] = earlier["measured"]
        for label, m in measured.items():
            m["planned_updates"] = planned_updates(plans[label].train, train_set)
    else:
        measured = {}
        for label, plan in plans.items():
            build = partial(build_model, plan.model_class, plan.model, plan.train.seed)
            measured[label] = measure(label, build, plan.train, data, train_set, run,
                                      args.rounds, args.sentences)

    estimates: dict[str, float] = {}
    test_sources = len({tuple(src) for src, _ in data.test})
    if ablation.SEQ2SEQ_LABEL in measured:
        m = measured[ablation.SEQ2SEQ_LABEL]
        side = side_run_updates()
        estimates["07 (LSTM + side runs + test BLEU)"] = (
            training_seconds(m) + sum(training_seconds(m, n) for n in (
                side["FREE_STEPS"], side["TUNE_STEPS"], side["TUNE_STEPS"], side["TUNE_STEPS"],
                side["FORWARD_STEPS"]))
            + test_sources * m["s_per_greedy_sentence"])
    chapter8 = ("Luong, general", "no attention")
    if all(label in measured for label in chapter8):
        estimates["08 (its two translators)"] = sum(training_seconds(measured[label])
                                                    for label in chapter8)
    if all(label in measured for label in ch11.VARIANTS):
        rest = [label for label in ch11.VARIANTS if label not in chapter8]
        table = sum(ablation.VALID_LIMIT * m["s_per_greedy_sentence"]
                    + test_sources * m["s_per_greedy_sentence"] for m in measured.values())
        best = measured["Bahdanau, additive"]
        beams = (ablation.VALID_LIMIT + ablation.BEAM_TEST_LIMIT) * best["s_per_greedy_sentence"]
        beams += sum(len(ablation.ALPHAS) * ablation.VALID_LIMIT + ablation.BEAM_TEST_LIMIT
                     for k in ablation.BEAM_SIZES if k > 1) * best["s_per_beam_sentence"]
        estimates["11 (five more translators + variant and beam tables)"] = (
            sum(training_seconds(measured[label]) for label in rest) + table + beams)
    for name, seconds in estimates.items():
        print(f"chapter {name}: about {seconds / 60:.1f} min")
    out = args.out or ROOT / "benchmarks" / "results" / f"full-profile-{args.device}.json"
    out.write_text(json.dumps({
        "about": __doc__.splitlines()[0],
        "machine": earlier.get("machine") or describe_machine(),
        "warmup": earlier.get("warmup", WARMUP), "updates": earlier.get("updates", UPDATES),
        "rounds": earlier.get("rounds", args.rounds),
        "measured": measured, "estimated_minutes": {k: round(v / 60, 1)
                                                     for k, v in estimates.items()},
    }, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
