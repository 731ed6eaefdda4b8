r"""Translating sentences and scoring the translations: BLEU on held-out pairs, exposure bias.

* :func:`translate` — token lists in, token lists out, in batches, with the model's
  :meth:`~seq2seq_lib.encoder_decoder.EncoderDecoder.search` and a search passed in (greedy
  by default, chapter 9's beam search later); :func:`search_sources` keeps every hypothesis
  the search returns.
* :func:`score_pairs` — :math:`\log p(y \mid x)` of given (source, target) token lists, to
  rank candidate translations (Cho et al., 2014).
* :func:`bleu` — corpus BLEU (Papineni et al., 2002) with ``sacrebleu`` on **detokenised**
  text, the standard that makes numbers comparable (Post, 2018). Pairs that share a source
  sentence are grouped: the sentence is translated once and scored against all of its
  reference translations (the corpus often has several). Its two halves,
  :func:`group_references` and :func:`corpus_bleu`, score translations made another way.
* :func:`position_accuracy` — how often the model's most probable next token is the true one,
  per target position, after a true prefix (teacher forcing) or after its own prefix (free
  running). The gap between the two is the *exposure bias*.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sacrebleu
import torch

from seq2seq_lib.batches import Batch, collate, collate_sources, encode_source, sample_pairs
from seq2seq_lib.decoding import Hypothesis, Search, greedy_search
from seq2seq_lib.encoder_decoder import EncoderDecoder, eval_mode
from seq2seq_lib.vocab import EOS_ID, PAD_ID, TokenPair, Vocab, detokenize


def search_sources(
    model: EncoderDecoder,
    sentences: Sequence[Sequence[str]],
    src_vocab: Vocab,
    *,
    search: Search = greedy_search,
    max_len: int = 20,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
    src_max_len: int | None = None,
) -> list[list[Hypothesis]]:
    """The hypotheses ``search`` returns for each sentence (best first), run through
    :meth:`~seq2seq_lib.encoder_decoder.EncoderDecoder.search` on ``batch_size`` sentences at
    a time.

    Sources are encoded like the training data (unknown words → ``<unk>``, an empty sentence
    → just ``<eos>``, longer than ``src_max_len`` → truncated) and reversed when
    ``model.reverse_source``.
    """
    out: list[list[Hypothesis]] = []
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start : start + batch_size]
        batch = collate_sources(chunk, src_vocab, reverse_source=model.reverse_source,
                                max_len=src_max_len).to(device)
        out.extend(model.search(batch.src, batch.src_lengths, search=search,
                                max_len=max_len).hypotheses)
    return out


def translate(
    model: EncoderDecoder,
    sentences: Sequence[Sequence[str]],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    search: Search = greedy_search,
    max_len: int = 20,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
    src_max_len: int | None = None,
) -> list[list[str]]:
    """Translate tokenised sentences; returns the target tokens of each (``<eos>`` removed):
    the best hypothesis of ``search`` (:func:`search_sources`), at most ``max_len`` tokens."""
    found = search_sources(model, sentences, src_vocab, search=search, max_len=max_len,
                           batch_size=batch_size, device=device, src_max_len=src_max_len)
    return [tgt_vocab.decode(hyps[0].output) for hyps in found]


@torch.no_grad()
def score_pairs(
    model: EncoderDecoder,
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """``(N,)`` log-probabilities :math:`\\log p(y \\mid x)` of the pairs, ``<eos>`` included
    (:meth:`~seq2seq_lib.encoder_decoder.EncoderDecoder.score`, in eval mode). An empty
    target is allowed: its score is :math:`\\log p(\\texttt{<eos>} \\mid x)`."""
    if len(sources) != len(targets) or not sources:
        raise ValueError(
            f"need as many sources as targets (at least one), got {len(sources)} and "
            f"{len(targets)}"
        )
    examples = [(encode_source(s, src_vocab), tgt_vocab.encode(t)) for s, t in zip(
        sources, targets, strict=True)]
    batch = collate(examples, reverse_source=model.reverse_source).to(device)
    tgt = batch.tgt_out.masked_fill(batch.tgt_out == EOS_ID, PAD_ID)  # words only
    with eval_mode(model):
        return model.score(batch.src, batch.src_lengths, tgt).cpu()


@dataclass
class BleuResult:
    """Corpus BLEU, sacrebleu's signature of how it was computed (Post, 2018: number of
    references, casing, tokeniser, smoothing, version — print it beside the score), and what
    it was computed from."""

    score: float
    bleu: sacrebleu.metrics.bleu.BLEUScore
    sources: list[list[str]]
    hypotheses: list[str]
    references: list[list[str]]
    signature: str = ""

    def __str__(self) -> str:
        return f"BLEU {self.score:.1f} on {len(self.hypotheses):,} sentences ({self.signature})"


def writes_lower_case(vocab: Vocab) -> bool:
    """Whether every token of ``vocab`` is lower case: a model with this target vocabulary
    can only write lower-cased text (chapters 7–9's word vocabularies), so its BLEU is
    scored lower-cased (``case:lc`` in the signature); a vocabulary of cased text (chapter
    11's subwords) is scored as written."""
    return all(token == token.lower() for token in vocab.itos)


def bleu(
    model: EncoderDecoder,
    pairs: Sequence[TokenPair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
    lang: str = "en",
    max_len: int = 20,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
    search: Search = greedy_search,
    limit: int | None = None,
    seed: int = 0,
    lowercase: bool | None = None,
) -> BleuResult:
    """Corpus BLEU of the model's translations of ``pairs`` (sacrebleu, :func:`corpus_bleu`).

    ``lowercase``: score lower-cased text; by default only when the model cannot write
    upper case (:func:`writes_lower_case` of ``tgt_vocab``), so the signature says how the
    score was computed.

    Pairs with the same source are one test sentence with several references
    (:func:`group_references`, which also draws the sample of ``limit`` sources: a quicker,
    noisier estimate). Hypotheses and references are detokenised by the target vocabulary
    (:meth:`Vocab.detokenize <seq2seq_lib.vocab.Vocab.detokenize>`: words, or subwords)
    before scoring (:func:`corpus_bleu`).
    """
    sources, refs = group_references(pairs, vocab=tgt_vocab, lang=lang, limit=limit, seed=seed)
    hyps = [
        tgt_vocab.detokenize(t, lang=lang)
        for t in translate(
            model, sources, src_vocab, tgt_vocab, max_len=max_len, batch_size=batch_size,
            device=device, search=search,
        )
    ]
    if lowercase is None:
        lowercase = writes_lower_case(tgt_vocab)
    return corpus_bleu(sources, hyps, refs, lowercase=lowercase)


def group_references(
    pairs: Sequence[TokenPair], *, vocab: Vocab | None = None, lang: str = "en",
    limit: int | None = None, seed: int = 0,
) -> tuple[list[list[str]], list[list[str]]]:
    """The distinct sources of ``pairs`` in corpus order and the detokenised references of
    each (every target of that source), detokenised by the target ``vocab`` (default: words,
    :func:`~seq2seq_lib.vocab.detokenize`). ``limit`` keeps a random sample of ``limit``
    sources (:func:`~seq2seq_lib.batches.sample_pairs` with ``seed``, kept in corpus order).
    """
    text = vocab.detokenize if vocab is not None else detokenize
    refs_of: dict[tuple[str, ...], list[str]] = {}
    for src, tgt in pairs:
        refs_of.setdefault(tuple(src), []).append(text(tgt, lang=lang))
    sources = sample_pairs([list(s) for s in refs_of], limit, seed=seed)
    if not sources:
        raise ValueError("bleu needs at least one pair")
    return sources, [refs_of[tuple(s)] for s in sources]


def corpus_bleu(sources: list[list[str]], hypotheses: list[str], references: list[list[str]],
                *, lowercase: bool = False) -> BleuResult:
    """sacrebleu's corpus BLEU (its defaults: the 13a tokeniser, exponential smoothing) of
    detokenised hypotheses, each against all of its references (a sentence may have fewer
    references than another), and its signature. ``lowercase``: compare lower-cased text
    (a second, labelled number; the standard score is cased)."""
    if not hypotheses or len(hypotheses) != len(references):
        raise ValueError(f"need one list of references per hypothesis (at least one), got "
                         f"{len(hypotheses)} hypotheses and {len(references)} lists")
    most = max(map(len, references))
    streams = [[r[i] if i < len(r) else None for r in references] for i in range(most)]
    metric = sacrebleu.metrics.BLEU(lowercase=lowercase)
    result = metric.corpus_score(hypotheses, streams)
    return BleuResult(float(result.score), result, sources, hypotheses, references,
                      str(metric.get_signature()))


@torch.no_grad()
def position_accuracy(
    model: EncoderDecoder,
    loader: Sequence[Batch] | torch.utils.data.DataLoader,
    *,
    teacher_forcing: float,
    max_positions: int = 12,
    device: torch.device | str = "cpu",
) -> list[float]:
    """Next-token accuracy at target positions ``1 .. max_positions`` (eval mode).

    With ``teacher_forcing=1`` the decoder reads the true prefix :math:`y_{<t}`; with ``0`` it
    reads its own greedy prefix :math:`\\hat y_{<t}` and we still ask whether
    :math:`\\arg\\max_y p(y \\mid \\hat y_{<t}, x) = y_t`. Positions no sentence reaches are
    left out of the list.
    """
    correct = torch.zeros(max_positions)
    count = torch.zeros(max_positions)
    with eval_mode(model):
        for batch in loader:
            batch = batch.to(device)
            logits = model(
                batch.src, batch.src_lengths, batch.tgt_in, teacher_forcing=teacher_forcing
            )
            hit = (logits.argmax(-1) == batch.tgt_out) & (batch.tgt_out != PAD_ID)
            n = min(max_positions, hit.shape[1])
            correct[:n] += hit[:, :n].sum(0).cpu().float()
            count[:n] += batch.tgt_mask[:, :n].sum(0).cpu().float()
    return [float(c / k) for c, k in zip(correct, count, strict=True) if k > 0]


class Table(str):
    """A table that prints as fixed-width text and shows as an HTML table.

    It *is* the text (a ``str``: ``print`` it, compare it, write it to a file); in Jupyter,
    Colab and the book, ``display(table)`` renders ``header`` and ``rows`` as an HTML table
    that wraps its headers to fit the page instead of scrolling sideways. Number columns
    (every cell a number or a parenthesised range) are right-aligned.
    """

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def __new__(cls, text: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
        table = super().__new__(cls, text)
        table.header = tuple(header)
        table.rows = tuple(tuple(row) for row in rows)
        return table

    @classmethod
    def from_rows(cls, header: Sequence[str], rows: Sequence[Sequence[str]], *,
                  gap: int = 2) -> Table:
        """The table of ``header`` and ``rows`` (strings), its text laid out in columns
        ``gap`` spaces apart: number columns right-aligned, the others left-aligned."""
        header = tuple(header)
        rows = tuple(tuple(row) for row in rows)
        if any(len(row) != len(header) for row in rows):
            raise ValueError(f"every row needs {len(header)} cells (one per header)")
        numeric = [bool(rows) and all(_looks_numeric(row[j]) for row in rows)
                   for j in range(len(header))]
        widths = [max(len(v) for v in (header[j], *(row[j] for row in rows)))
                  for j in range(len(header))]

        def line(values: Sequence[str]) -> str:
            cells = [v.rjust(w) if num else v.ljust(w)
                     for v, w, num in zip(values, widths, numeric, strict=True)]
            return (" " * gap).join(cells).rstrip()

        return cls("\n".join([line(header), *(line(row) for row in rows)]), header, rows)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's text/plain
        printer.text(str(self))

    def _repr_html_(self) -> str:
        numeric = [all(_looks_numeric(row[j]) for row in self.rows)
                   for j in range(len(self.header))]

        def cells(tag: str, values: Sequence[str]) -> str:
            return "".join(f'<{tag} style="text-align: {"right" if num else "left"}">'
                           f"{html.escape(value)}</{tag}>"
                           for value, num in zip(values, numeric, strict=True))

        body = "".join(f"<tr>{cells('td', row)}</tr>" for row in self.rows)
        return (f'<table class="seq2seq-table"><thead><tr>{cells("th", self.header)}</tr>'
                f"</thead><tbody>{body}</tbody></table>")


def _looks_numeric(value: str) -> bool:
    return bool(re.fullmatch(r"\(?[-+]?[\d,.]+(-[\d,.]+)?\)?", value.strip()))
