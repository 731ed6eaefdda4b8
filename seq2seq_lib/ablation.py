"""Chapter 11: the translator ablation — which design decisions matter, on held-out data.

Every variant is chapter 8's GRU translator with one decision changed
(:data:`seq2seq_lib.recipes.ch11.VARIANTS`); chapter 7's LSTM seq2seq is a further baseline.
The rules of the measurement:

* every choice — the best variant, the beam size :math:`k`, the length penalty :math:`\\alpha`
  — is made on the **validation** split;
* the **test** split is only used to report the numbers of choices already made;
* BLEU is sacrebleu's corpus BLEU on detokenised text, all references of a source together
  (:func:`seq2seq_lib.evaluation.bleu`).

The notebook (quick profile) and ``scripts/translator_results.py`` (any profile, writes a
results file with provenance) both call the functions below, so they measure the same thing.

Which models one run of the chapter trains and which rows it reads from a results file is
decided by :func:`plan_ablation`; :func:`measure_rows` measures the trained ones and makes the
table, :func:`stored_control_groups` reads the controls; both report on stderr, and only
then, a row measured here that differs from its stored copy. :func:`read_subword_sizes` reads
the measurement that chose the number of BPE symbols of the subword translator
(``benchmarks/bench_subword_sizes.py`` writes it; :func:`choose_subword_size` is its rule).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from seq2seq_lib.atomic import atomic_file
from seq2seq_lib.batches import TranslationData
from seq2seq_lib.beam import beam_bleu
from seq2seq_lib.cache import Trained
from seq2seq_lib.device import Run
from seq2seq_lib.encoder_decoder import EncoderDecoder
from seq2seq_lib.evaluation import BleuResult, Table, bleu, corpus_bleu, writes_lower_case
from seq2seq_lib.recipes.ch11 import CONTROLS, VARIANTS

BEAM_SIZES = (1, 2, 5, 10)
ALPHAS = (0.0, 0.6, 1.0)
VALID_LIMIT = 1000  # validation sources scored when choosing (a fixed random sample)
BEAM_TEST_LIMIT = 2000  # test sources scored for each beam size (a fixed random sample)
SAMPLE_SEED = 1
SEQ2SEQ_LABEL = "ch. 7 seq2seq (LSTM)"
ENV_RESULTS = "SEQ2SEQ_RESULTS"
#: The variants that chapter 8 trains with the same recipe
#: (:func:`seq2seq_lib.recipes.ch08.train_translators`): chapter 11 loads them.
FROM_CHAPTER_8 = ("no attention", "Luong, general")


@dataclass
class VariantRow:
    """One model of the ablation: size, budget, validation loss and BLEU."""

    label: str
    parameters: int
    updates: int
    pairs_seen: int
    valid_loss: float
    valid_bleu: float
    test_bleu: float


@dataclass
class BeamRow:
    """Beam size ``k`` with the α chosen on validation, and its BLEU on both splits."""

    k: int
    alpha: float
    valid_bleu: float
    test_bleu: float
    words_per_sentence: float  # 13a tokens per output sentence (the table: tokens/sentence)


def _pairs_seen(trained: Trained, data: TranslationData) -> int:
    """Training pairs read: updates × batch size, from the history's target-token count."""
    per_pair = sum(len(t) + 1 for _, t in data.train) / len(data.train)
    return round(trained.history["tokens"] / per_pair)


def variant_row(label: str, trained: Trained, data: TranslationData, *,
                device: Any = "cpu", lowercase: bool | None = None) -> VariantRow:
    """Measure one trained model: validation BLEU on a fixed sample of
    :data:`VALID_LIMIT` sources, test BLEU on the whole test split (greedy decoding).
    ``lowercase`` as for :func:`~seq2seq_lib.evaluation.bleu` (by default lower-cased for a
    model that writes lower case only: :func:`signature` says which)."""
    model = trained.model
    history = trained.history
    valid = bleu(model, data.valid, data.src_vocab, data.tgt_vocab, limit=VALID_LIMIT,
                 seed=SAMPLE_SEED, device=device, lowercase=lowercase)
    test = bleu(model, data.test, data.src_vocab, data.tgt_vocab, device=device,
                lowercase=lowercase)
    losses = history["valid_step_loss"] or history["valid_loss"]
    return VariantRow(
        label=label, parameters=sum(p.numel() for p in model.parameters()),
        updates=history["updates"], pairs_seen=_pairs_seen(trained, data),
        valid_loss=float(losses[-1]), valid_bleu=valid.score, test_bleu=test.score,
    )


@dataclass
class ControlGroup:
    """One group of :data:`~seq2seq_lib.recipes.ch11.CONTROLS`: its runs' validation and test
    BLEU, one per seed."""

    group: str
    seeds: list[int]
    valid_bleu: list[float]
    test_bleu: list[float]

    @property
    def valid_mean(self) -> float:
        return statistics.fmean(self.valid_bleu)

    @property
    def test_mean(self) -> float:
        return statistics.fmean(self.test_bleu)


def control_groups(rows: Sequence[VariantRow]) -> list[ControlGroup]:
    """Gather the rows of :func:`~seq2seq_lib.recipes.ch11.control_jobs` (labels
    ``"<group> | seed <n>"``) by group, in the order of
    :data:`~seq2seq_lib.recipes.ch11.CONTROLS`."""
    found: dict[str, ControlGroup] = {}
    for r in rows:
        group, _, seed = r.label.rpartition(" | seed ")
        if not group:
            raise ValueError(f"not a control row: {r.label!r}")
        g = found.setdefault(group, ControlGroup(group, [], [], []))
        g.seeds.append(int(seed))
        g.valid_bleu.append(r.valid_bleu)
        g.test_bleu.append(r.test_bleu)
    order = [group for group, _, _ in CONTROLS]
    return sorted(found.values(), key=lambda g: order.index(g.group) if g.group in order
                  else len(order))


def control_table(groups: Sequence[ControlGroup]) -> Table:
    """One line per group: runs, then validation and test BLEU as mean and range over seeds."""
    lines = [f"{'group':26}{'seeds':>7}{'valid BLEU: mean':>18}{'(min-max)':>13}"
             f"{'test BLEU: mean':>17}{'(min-max)':>13}"]
    rows = []
    for g in groups:
        lines.append(
            f"{g.group:26}{len(g.seeds):>7}{g.valid_mean:>18.1f}"
            f"{f'({min(g.valid_bleu):.1f}-{max(g.valid_bleu):.1f})':>13}"
            f"{g.test_mean:>17.1f}{f'({min(g.test_bleu):.1f}-{max(g.test_bleu):.1f})':>13}")
        rows.append((g.group, f"{len(g.seeds)}", f"{g.valid_mean:.1f}",
                     f"{min(g.valid_bleu):.1f}-{max(g.valid_bleu):.1f}",
                     f"{g.test_mean:.1f}", f"{min(g.test_bleu):.1f}-{max(g.test_bleu):.1f}"))
    header = ("group", "seeds", "valid BLEU: mean", "(min-max)", "test BLEU: mean",
              "(min-max)")
    return Table("\n".join(lines), header, rows)


def best_variant(rows: Sequence[VariantRow]) -> VariantRow:
    """The row with the highest **validation** BLEU (the first one on a tie)."""
    if not rows:
        raise ValueError("best_variant needs at least one row")
    return max(rows, key=lambda r: r.valid_bleu)


def beam_rows(model: EncoderDecoder, data: TranslationData, *,
              beam_sizes: Sequence[int] = BEAM_SIZES, alphas: Sequence[float] = ALPHAS,
              device: Any = "cpu", lowercase: bool | None = None,
              test_results: dict[tuple[int, float], BleuResult] | None = None,
              ) -> list[BeamRow]:
    """For each beam size, choose α on the validation sample, then score the test sample.

    ``k = 1`` is greedy search (α changes nothing there). The test sample is a fixed random
    set of :data:`BEAM_TEST_LIMIT` sources, the same for every ``k``. One search per ``k``
    and split scores every α (:func:`~seq2seq_lib.beam.beam_bleu`). ``test_results``, if
    given, receives the test result (translations and references) of every ``(k, α)`` tried,
    all from the same searches: two settings can then be compared sentence by sentence, or
    what choosing on the test split would pick can be seen, without searching again. The
    rows still choose α on the validation sample only.
    """
    rows = []
    for k in beam_sizes:
        tried = alphas if k > 1 else (0.0,)
        on_valid = beam_bleu(model, data.valid, data.src_vocab, data.tgt_vocab, beam_size=k,
                             alphas=tried, limit=VALID_LIMIT, seed=SAMPLE_SEED, device=device,
                             lowercase=lowercase)
        alpha = max(tried, key=lambda a: on_valid[a].score)  # the first one on a tie
        on_test = beam_bleu(model, data.test, data.src_vocab, data.tgt_vocab, beam_size=k,
                            alphas=tried if test_results is not None else (alpha,),
                            limit=BEAM_TEST_LIMIT, seed=SAMPLE_SEED, device=device,
                            lowercase=lowercase)
        test = on_test[alpha]
        words = test.bleu.sys_len / len(test.hypotheses)
        rows.append(BeamRow(k, alpha, on_valid[alpha].score, test.score, words))
        if test_results is not None:
            test_results.update({(k, a): result for a, result in on_test.items()})
    return rows


def signature(data: TranslationData, *, lowercase: bool | None = None) -> str:
    """sacrebleu's signature of the BLEU that :func:`variant_row` and :func:`beam_rows`
    compute on ``data`` (the number of references varies, ``nrefs:var``)."""
    if lowercase is None:
        lowercase = writes_lower_case(data.tgt_vocab)
    # sacrebleu writes the signature when it scores: a two-sentence corpus with one and two
    # references gives the same settings and nrefs:var
    return corpus_bleu([["a"], ["b"]], ["a", "b"], [["a"], ["b", "c"]],
                       lowercase=lowercase).signature


def chosen_beam(rows: Sequence[BeamRow]) -> BeamRow:
    """The (k, α) with the highest validation BLEU (the smaller k on a tie)."""
    if not rows:
        raise ValueError("chosen_beam needs at least one row")
    return max(rows, key=lambda r: (r.valid_bleu, -r.k))


def variant_table(rows: Sequence[VariantRow]) -> Table:
    """The variant rows as a :class:`Table` (BLEU to 0.1, loss to 0.01)."""
    lines = [f"{'variant':30}{'params':>11}{'updates':>9}{'pairs':>10}"
             f"{'valid loss':>12}{'valid BLEU':>12}{'test BLEU':>11}"]
    for r in rows:
        lines.append(f"{r.label:30}{r.parameters:>11,}{r.updates:>9,}{r.pairs_seen:>10,}"
                     f"{r.valid_loss:>12.2f}{r.valid_bleu:>12.1f}{r.test_bleu:>11.1f}")
    cells = [(r.label, f"{r.parameters:,}", f"{r.updates:,}", f"{r.pairs_seen:,}",
              f"{r.valid_loss:.2f}", f"{r.valid_bleu:.1f}", f"{r.test_bleu:.1f}") for r in rows]
    header = ("variant", "params", "updates", "pairs", "valid loss", "valid BLEU", "test BLEU")
    return Table("\n".join(lines), header, cells)


def beam_table(rows: Sequence[BeamRow]) -> Table:
    """The beam rows as a :class:`Table`."""
    lines = [f"{'k':>3}{'alpha (valid)':>15}{'valid BLEU':>12}{'test BLEU':>11}"
             f"{'tokens/sentence':>16}"]
    for r in rows:
        lines.append(f"{r.k:>3}{r.alpha:>15.1f}{r.valid_bleu:>12.1f}{r.test_bleu:>11.1f}"
                     f"{r.words_per_sentence:>16.2f}")
    cells = [(f"{r.k}", f"{r.alpha:.1f}", f"{r.valid_bleu:.1f}", f"{r.test_bleu:.1f}",
              f"{r.words_per_sentence:.2f}") for r in rows]
    header = ("k", "alpha (valid)", "valid BLEU", "test BLEU", "tokens/sentence")
    return Table("\n".join(lines), header, cells)


def results_dict(run: Run, variants: Sequence[VariantRow], beams: Sequence[BeamRow],
                 best: str) -> dict[str, Any]:
    """The measurements as plain JSON data (what the results file stores)."""
    return {
        "profile": run.profile,
        "variants": [asdict(r) for r in variants],
        "best_variant": best,
        "beam": [asdict(r) for r in beams],
        "chosen_beam": asdict(chosen_beam(beams)),
    }


def write_results(results: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``results`` as indented JSON, atomically (:func:`~seq2seq_lib.atomic.atomic_file`)."""
    path = Path(path)
    with atomic_file(path, "w") as handle:
        handle.write(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return path


def read_results(path: str | os.PathLike[str]) -> tuple[list[VariantRow], list[BeamRow],
                                                         dict[str, Any]]:
    """Read a results file: its variant rows, beam rows and the whole dict (provenance)."""
    results = json.loads(Path(path).read_text(encoding="utf-8"))
    try:
        variants = [VariantRow(**r) for r in results["variants"]]
        beams = [BeamRow(**r) for r in results["beam"]]
    except (KeyError, TypeError) as err:
        raise ValueError(f"{Path(path).name} is not a translator results file: {err}") from None
    return variants, beams, results


def read_controls(path: str | os.PathLike[str]) -> tuple[list[VariantRow], dict[str, Any]]:
    """Read a controls results file (``scripts/translator_results.py --controls``): its rows,
    one per trained model (labels ``"<group> | seed <n>"``), and the whole dict."""
    results = json.loads(Path(path).read_text(encoding="utf-8"))
    try:
        rows = [VariantRow(**r) for r in results["controls"]]
    except (KeyError, TypeError) as err:
        raise ValueError(f"{Path(path).name} is not a controls results file: {err}") from None
    return rows, results


def results_path(profile: str, *, controls: bool = False) -> Path:
    """The results file ``translator-<profile>.json`` (``controls``: ``translator-controls-
    <profile>.json``) that ships with the library (package data, ``seq2seq_lib/results/``, so
    an installed copy has it too), or the one in the folder ``$SEQ2SEQ_RESULTS``; it may not
    exist."""
    env = os.environ.get(ENV_RESULTS)
    folder = Path(env) if env else Path(str(resources.files(__package__).joinpath("results")))
    return folder / f"translator-{'controls-' * controls}{profile}.json"


#: BLEU within which two vocabulary sizes count as equally good (:func:`choose_subword_size`):
#: the validation BLEU of one variant over three seeds spans 0.7 to 5.6 points in chapter
#: 11's controls, so a smaller gap between two single runs is no evidence.
SIZE_TOLERANCE = 1.0


@dataclass
class SizeRow:
    """The subword translator trained with ``symbols`` BPE symbols per language (one run)."""

    symbols: int
    parameters: int  # the embeddings and the output layer grow with the symbols
    target_tokens_per_sentence: float  # subwords per English training sentence (no <eos>)
    valid_bleu: float
    signature: str  # sacrebleu's signature of ``valid_bleu``


def choose_subword_size(rows: Sequence[SizeRow]) -> int:
    """The cheapest size (fewest symbols) whose validation BLEU is within
    :data:`SIZE_TOLERANCE` of the best: more symbols cost more per update (larger embeddings
    and output layer)."""
    best = max(row.valid_bleu for row in rows)
    return min(row.symbols for row in rows if row.valid_bleu >= best - SIZE_TOLERANCE)


def subword_sizes_path(profile: str = "quick") -> Path:
    """The file ``subword-sizes-<profile>.json`` beside the translator results
    (:func:`results_path`); it may not exist."""
    return results_path(profile).with_name(f"subword-sizes-{profile}.json")


def read_subword_sizes(path: str | os.PathLike[str]) -> tuple[list[SizeRow], dict[str, Any]]:
    """Read a subword-sizes file: its rows, smallest size first, and the whole dict
    (recipe, machine, how the rule was fixed)."""
    results = json.loads(Path(path).read_text(encoding="utf-8"))
    try:
        rows = size_rows(results["rows"])
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{Path(path).name} is not a subword-sizes file: {err}") from None
    return rows, results


def size_rows(rows: Mapping[Any, Mapping[str, Any]]) -> list[SizeRow]:
    """The ``{size: measurements}`` of a subword-sizes file as rows (:class:`SizeRow`), smallest
    size first."""
    return sorted((SizeRow(symbols=int(size), parameters=r["parameters"],
                           target_tokens_per_sentence=r["target_tokens_per_sentence"],
                           valid_bleu=r["valid_bleu"], signature=r["signature"])
                   for size, r in rows.items()), key=lambda r: r.symbols)


def subword_size_table(rows: Sequence[SizeRow]) -> Table:
    """Symbols per language, parameters, subwords per English sentence, validation BLEU."""
    return Table.from_rows(
        ("symbols", "parameters", "subwords/sentence", "valid BLEU"),
        [(f"{r.symbols:,}", f"{r.parameters:,}", f"{r.target_tokens_per_sentence:.2f}",
          f"{r.valid_bleu:.1f}") for r in rows])


def provenance_summary(results: Mapping[str, Any]) -> str:
    """Where a results file's numbers were measured, for a reader: device, machine and
    training time, e.g. ``"measured on cpu (AMD EPYC, 2 cores): 17 models trained in 65
    min"`` (:func:`provenance_lines` has the full record: command, versions)."""
    p = results.get("provenance", {})
    machine = p.get("machine", {})
    gpu = machine.get("gpu")
    where = (f"{p.get('device', '?')} ({gpu})" if gpu else
             f"{p.get('device', '?')} ({machine.get('cpu', '?')}, "
             f"{machine.get('cpu_cores', '?')} cores)")
    trained, loaded = len(p.get("models_trained", [])), len(p.get("models_loaded_from_cache", []))
    earlier = f", {loaded} from an earlier run" if loaded else ""
    return (f"measured on {where}: {trained} models trained in "
            f"{p.get('training_seconds', 0) / 60:.0f} min{earlier}")


def provenance_lines(results: Mapping[str, Any]) -> list[str]:
    """A results file's provenance, one ``key: value`` line each, for printing."""
    p = results.get("provenance", {})
    machine, versions = p.get("machine", {}), p.get("versions", {})
    minutes = p.get("wall_seconds", 0) / 60
    return [
        f"command:  {p.get('command', '?')}",
        f"run:      {p.get('started_utc', '?')}, {minutes:.0f} min wall time "
        f"({p.get('training_seconds', 0) / 60:.0f} min training), device {p.get('device', '?')}",
        f"machine:  {machine.get('cpu', '?')}, {machine.get('cpu_cores', '?')} cores, "
        f"GPU {machine.get('gpu') or 'none'}",
        f"versions: torch {versions.get('torch', '?')}, sacrebleu {versions.get('sacrebleu', '?')}"
        f", Python {versions.get('python', '?')}, seq2seq_lib {versions.get('seq2seq_lib_commit', '?')}",
        f"trained:  {len(p.get('models_trained', []))} models, "
        f"loaded from a cache: {len(p.get('models_loaded_from_cache', []))}",
    ]


# --------------------------------------------------------------------------- one run's plan


@dataclass
class AblationPlan:
    """Where each row of chapter 11's table comes from in one run (:func:`plan_ablation`).

    ``train``: the variants this run trains, ``{label: variant}`` (keyword arguments of
    :func:`seq2seq_lib.recipes.ch08.train_translator`); ``chapter_8``: the variants of
    :data:`FROM_CHAPTER_8`, chapter 8's models (loaded, or trained if chapter 8 has not been
    run); ``stored``: the rows of the profile's results file, measured once with the same
    recipes and the same functions, ``{label: row}`` (empty when this run trains every
    variant). Chapter 7's LSTM (:data:`SEQ2SEQ_LABEL`) is always chapter 7's model.
    """

    train: dict[str, dict[str, Any]]
    chapter_8: dict[str, dict[str, Any]]
    stored: dict[str, VariantRow]

    @property
    def labels(self) -> list[str]:
        """The table's rows in order — the variants, then chapter 7's LSTM."""
        return [*VARIANTS, SEQ2SEQ_LABEL]

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """The variants whose models this run needs (trained or chapter 8's), in
        :data:`~seq2seq_lib.recipes.ch11.VARIANTS`' order."""
        return {label: variant for label, variant in VARIANTS.items()
                if label in self.train or label in self.chapter_8}

    @property
    def read(self) -> list[str]:
        """The rows taken from the stored results — the variants without a model here."""
        return [label for label in VARIANTS if label not in self.models]

    def source(self, label: str) -> str:
        """Where the row ``label`` comes from, in words."""
        if label == SEQ2SEQ_LABEL:
            return "chapter 7's model"
        if label in self.train:
            return "trained here"
        if label in self.chapter_8:
            return "chapter 8's model"
        if label in self.stored:
            return "measured earlier (stored row)"
        return "missing"

    def __str__(self) -> str:
        """One line per row of the table: the variant and where its row comes from."""
        lines = [f"{'variant':30}where its row comes from"]
        lines += [f"{label:30}{self.source(label)}" for label in self.labels]
        return "\n".join(lines)


def plan_ablation(run: Run, *, train_all: bool | None = None) -> AblationPlan:
    """Which variants one run trains and which rows it reads from the stored results.

    Chapter 8's two models (:data:`FROM_CHAPTER_8`) are always used. With ``train_all``
    (default: every profile but ``quick``), or when no results file exists for the profile
    (:func:`results_path`), every other variant is trained too. Otherwise only the variant
    with the best validation BLEU in the stored rows is trained — the rest of the chapter
    builds on it — and the other rows are read from the file.
    """
    if train_all is None:
        train_all = not run.quick
    path = results_path(run.profile)
    stored = {} if train_all or not path.exists() else {
        r.label: r for r in read_results(path)[0]}
    if stored:
        chosen = best_variant(list(stored.values())).label  # (may be chapter 7's LSTM)
        trained = [label for label in VARIANTS if label == chosen]
    else:
        trained = list(VARIANTS)
    return AblationPlan(
        train={label: VARIANTS[label] for label in trained if label not in FROM_CHAPTER_8},
        chapter_8={label: VARIANTS[label] for label in FROM_CHAPTER_8},
        stored=stored,
    )


def warn_if_different(measured: Mapping[str, Any], stored: Mapping[str, Any], *,
                      what: str = "the rows", hint: str = "") -> list[str]:
    """Compare what this run measured with the stored copies of the same models.

    The labels present in both are compared (``==``); if any differ, one warning naming them
    (and ``hint``, what to do) is printed on stderr. Returns the differing labels (``[]``:
    nothing printed). The same code on the same data gives the same models on a CPU, so a
    difference means another machine (a GPU, other CPU kernels) or a changed library.
    """
    differ = [label for label, value in measured.items()
              if label in stored and value != stored[label]]
    if differ:
        lines = [f"warning: {what} of {'; '.join(differ)}",
                 "  differ between this run and the stored results (the same recipes,",
                 "  measured once): this machine computes differently, or the library",
                 "  changed" + (f"; {hint}" if hint else "")]
        print("\n".join(lines), file=sys.stderr)
    return differ


def measure_rows(trained: Mapping[str, Trained], data: TranslationData, plan: AblationPlan,
                 *, device: Any = "cpu", lowercase: bool | None = None) -> list[VariantRow]:
    """The rows of the ablation table, in :attr:`AblationPlan.labels`' order: each trained
    model measured by :func:`variant_row`, the other rows taken from ``plan.stored``.

    A model measured here whose row is also stored must give the stored row: otherwise
    :func:`warn_if_different` says so on stderr (the measured row is used).

    Raises:
        KeyError: a row with neither a model in ``trained`` nor a stored row.
    """
    measured = {label: variant_row(label, t, data, device=device, lowercase=lowercase)
                for label, t in trained.items()}
    warn_if_different(measured, plan.stored,
                      hint="plan_ablation(run, train_all=True)\n  trains every variant here")
    rows = []
    for label in plan.labels:
        row = measured.get(label) or plan.stored.get(label)
        if row is None:
            raise KeyError(f"no model and no stored row for {label!r}")
        rows.append(row)
    return rows


def stored_control_groups(run: Run, rows: Sequence[VariantRow]) -> dict[str, ControlGroup]:
    """The controls of the score comparison (:data:`~seq2seq_lib.recipes.ch11.CONTROLS`),
    trained and measured once in the ``quick`` profile, ``{group: ControlGroup}``.

    Under the quick profile the seed-0 runs of the groups that are rows of the table
    (``rows``: dot, general, concat) are the table's models: if their validation or test
    BLEU differ, :func:`warn_if_different` says so on stderr. Under another profile the
    controls do not describe the table, and nothing is compared.
    """
    control_rows, _ = read_controls(results_path("quick", controls=True))
    groups = {g.group: g for g in control_groups(control_rows)}
    if run.quick:
        seed_0 = {name: (g.valid_bleu[g.seeds.index(0)], g.test_bleu[g.seeds.index(0)])
                  for name, g in groups.items() if 0 in g.seeds}
        table = {r.label: (r.valid_bleu, r.test_bleu) for r in rows}
        warn_if_different(seed_0, table, what="the seed-0 BLEU")
    return groups


def stored_results(profile: str) -> tuple[list[VariantRow], list[BeamRow]] | None:
    """The variant and beam rows stored for ``profile`` (:func:`results_path`), or ``None``
    when that profile has not been run."""
    path = results_path(profile)
    if not path.exists():
        return None
    variants, beams, _ = read_results(path)
    return variants, beams
