r"""Chapter 9: the worked examples of greedy and beam search, as probability tables.

The lecture notes (d2l §9.8) explain greedy and beam search with small hand-drawn examples.
Each function here returns one of them as a :class:`TableExample`: a
:class:`~seq2seq_lib.decoding.TableStep` (a step function that reads the next-token
distribution of each prefix from a table) and the maximum length to search to. Any search
of :mod:`seq2seq_lib.decoding` and :mod:`seq2seq_lib.beam` runs on them as on a real model.

* :func:`seed_greedy_example`: greedy search misses the more probable path;
* :func:`seed_beam_example`: beam search with :math:`k = 2` and its six candidates;
* :func:`rule_examples`: two tables on which the two rules for finished hypotheses
  (:func:`~seq2seq_lib.beam.beam_search`, :func:`~seq2seq_lib.beam.completed_beam_search`)
  disagree, one won by each.
"""

from __future__ import annotations

from dataclasses import dataclass

from seq2seq_lib.decoding import TableStep


@dataclass(frozen=True)
class TableExample:
    """A worked example: the table step function and the search settings that go with it."""

    step: TableStep
    max_len: int

    @property
    def bos(self) -> int:
        return self.step.bos

    @property
    def eos(self) -> int:
        return self.step.eos


def seed_greedy_example() -> TableExample:
    """The greedy-search example of d2l §9.8 (the lecture notes on decoding): tokens A, B, C, ``<eos>``.

    Greedy search picks A → B → C → ``<eos>`` with probability
    :math:`0.5 \\cdot 0.4 \\cdot 0.4 \\cdot 0.6 = 0.048`; taking the second-best C at step 2
    leads to A → C → B → ``<eos>`` with :math:`0.5 \\cdot 0.3 \\cdot 0.6 \\cdot 0.6 = 0.054`.
    The rows on those two paths follow the book's figures; every other prefix gets the
    uniform distribution (our fill-in; the book does not say). Note that in this table the
    one-token sentence ``<eos>`` (0.1) and A ``<eos>`` (:math:`0.5 \\cdot 0.2 = 0.1`) are more
    likely than either path — the example is about greedy missing the better *path*, and is
    a good case for length normalisation.
    """
    vocab = ["A", "B", "C", "<eos>"]
    table = {
        (): {"A": 0.5, "B": 0.2, "C": 0.2, "<eos>": 0.1},
        ("A",): {"A": 0.1, "B": 0.4, "C": 0.3, "<eos>": 0.2},
        ("A", "B"): {"A": 0.2, "B": 0.2, "C": 0.4, "<eos>": 0.2},
        ("A", "B", "C"): {"A": 0.1, "B": 0.1, "C": 0.2, "<eos>": 0.6},
        ("A", "C"): {"A": 0.1, "B": 0.6, "C": 0.2, "<eos>": 0.1},
        ("A", "C", "B"): {"A": 0.1, "B": 0.1, "C": 0.2, "<eos>": 0.6},
    }
    return TableExample(TableStep(vocab, table, default=[0.25] * 4), max_len=4)


def seed_beam_example() -> TableExample:
    """The beam-search example of d2l §9.8.3 (the lecture notes on decoding):
    :math:`\\mathcal Y = \\{A, B, C, D, E\\}`,
    beam size 2, maximum length 3.

    ``<eos>`` is in the vocabulary but has probability 0 everywhere (the book leaves it out),
    so every hypothesis runs to length 3. With beam size 2 the beams are {A, C} after step 1,
    {A B, C E} after step 2 and {A B D, C E D} after step 3 — the book's six candidates
    (i) A, (ii) C, (iii) A B, (iv) C E, (v) A B D, (vi) C E D, which ``keep_history=True``
    exposes. The book gives no numbers; the probabilities are ours, chosen so that the
    search takes exactly those steps (no ties among the candidates that matter). Other
    prefixes get the uniform distribution over A–E.
    """
    vocab = ["A", "B", "C", "D", "E", "<eos>"]
    table = {
        (): {"A": 0.4, "B": 0.1, "C": 0.3, "D": 0.1, "E": 0.1},
        ("A",): {"A": 0.1, "B": 0.5, "C": 0.1, "D": 0.2, "E": 0.1},
        ("C",): {"A": 0.1, "B": 0.1, "C": 0.1, "D": 0.2, "E": 0.5},
        ("A", "B"): {"A": 0.15, "B": 0.15, "C": 0.15, "D": 0.4, "E": 0.15},
        ("C", "E"): {"A": 0.2, "B": 0.1, "C": 0.1, "D": 0.5, "E": 0.1},
    }
    uniform = {tok: 0.2 for tok in "ABCDE"}
    return TableExample(TableStep(vocab, table, default=uniform), max_len=3)


def rule_examples() -> dict[str, TableExample]:
    """Two tables on which :func:`~seq2seq_lib.beam.beam_search` and
    :func:`~seq2seq_lib.beam.completed_beam_search` (``k = 2``, ``alpha = 0``,
    ``max_len = 4``) return different sentences, one won by each rule.

    Both start alike: after step 1 the beam is {A 0.8, B 0.2}; at step 2 it keeps A B (0.48)
    and the finished B ``<eos>`` (0.18). At step 3 the two extensions A B C (0.24) and
    A B D (0.216) both beat B ``<eos>``: the slot-keeping beam drops it and follows both,
    while the completed list keeps it and follows only A B C. Then

    * ``"completed list wins"``: A B C ``<eos>`` (0.144) and A B D ``<eos>`` (0.1296) are
      both below B ``<eos>``, the most probable sentence, which only the completed list
      still holds;
    * ``"slots win"``: A B D ``<eos>`` (0.1944), the most probable sentence, is found only
      by the slot-keeping beam, which still follows A B D.

    Our numbers, not the lecture notes'. Other prefixes get the uniform distribution.
    """
    vocab = ["A", "B", "C", "D", "<eos>"]
    common = {
        (): {"A": 0.8, "B": 0.2},
        ("A",): {"B": 0.6, "C": 0.2, "D": 0.2},
        ("B",): {"<eos>": 0.9, "A": 0.1},
        ("A", "B"): {"C": 0.5, "D": 0.45, "<eos>": 0.05},
    }
    last = {
        "completed list wins": {("A", "B", "C"): {"<eos>": 0.6, "A": 0.4},
                                ("A", "B", "D"): {"<eos>": 0.6, "A": 0.4}},
        "slots win": {("A", "B", "C"): {"A": 0.4, "B": 0.3, "C": 0.2, "<eos>": 0.1},
                      ("A", "B", "D"): {"<eos>": 0.9, "A": 0.1}},
    }
    uniform = [0.2] * 5
    return {name: TableExample(TableStep(vocab, {**common, **rows}, default=uniform),
                               max_len=4)
            for name, rows in last.items()}
