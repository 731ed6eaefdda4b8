"""Write the API reference: one page per chapter's modules, in course order.

``seq2seq_lib.chapters.MODULE_CHAPTER`` says which chapter introduces each module. This
script groups the modules into the pages of :data:`PAGES`, writes ``api/<name>.md`` for each
(a title, a short introduction, then every module under its own heading, documented from its
docstrings by ``automodule``) and lists the pages in ``api.md``'s table of contents block.
Run it after adding a module; a test checks that the pages are up to date.

    python scripts/make_api_pages.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from seq2seq_lib.chapters import MODULE_CHAPTER  # noqa: E402


@dataclass(frozen=True)
class Page:
    name: str  #: the file ``api/<name>.md``
    title: str
    chapters: tuple[int, ...]
    intro: str


PAGES = (
    Page("infrastructure", "Infrastructure", (0,),
         "What every chapter uses: the pinned CPU numerics that make the printed numbers "
         "the same on any x86-64 machine, atomic files and checkpoints, the device and "
         "profile switch, the model cache, the map of modules to chapters, glue for numbers "
         "in the prose, and the exercise checkers' shared helpers."),
    Page("ch01_bptt", "Chapter 1: backpropagation through time", (1,),
         "A vanilla RNN written out step by step in the lecture's notation, backpropagation "
         "through time by hand, gradient norms through time, and the checkers of the "
         "chapter's exercises."),
    Page("ch02_05_cells_and_layers", "Chapters 2–5: gated cells, deep and bidirectional RNNs",
         (2, 3, 4, 5),
         "The GRU and LSTM cells written from their equations, recurrent layers built from "
         "them (stacked and bidirectional), the synthetic tasks the chapters train on and the "
         "sequence models that solve them, and the exercise checkers of chapters 2 to 5."),
    Page("ch06_encoder_decoder", "Chapter 6: the encoder–decoder", (6,),
         "Vocabularies and padded batches, the small dates task, the masked loss, the "
         "encoder–decoder interfaces and Cho et al.'s model, training with teacher forcing "
         "and scheduled sampling, greedy decoding, and scoring translations with BLEU."),
    Page("ch07_seq2seq", "Chapter 7: sequence to sequence learning", (7,),
         "The English–French corpus (download, cleaning, splits), Sutskever et al.'s LSTM "
         "seq2seq model, and the training recipe that chapters 7 and 11 share."),
    Page("ch08_attention", "Chapter 8: attention", (8,),
         "Score functions and the attention layer, Luong's and Bahdanau's attentional "
         "decoders, and the recipe that trains chapter 8's translators."),
    Page("ch09_beam_search", "Chapter 9: beam search", (9,),
         "Beam search with length normalisation (two rules for finished hypotheses), "
         "exhaustive search for small examples, and the chapter's worked examples."),
    Page("ch10_bleu", "Chapter 10: BLEU", (10,),
         "BLEU written from Papineni et al.'s definitions (clipped n-gram precision, brevity "
         "penalty), checked against sacrebleu."),
    Page("ch11_translator", "Chapter 11: the translator", (11,),
         "Byte-pair encoding, the subword translator's recipe, the ablation's measurements "
         "and tables, and the exported translator with its command line."),
)


def modules_of(page: Page) -> list[str]:
    """The modules of ``page``'s chapters, in course order."""
    return [m for m, chapter in MODULE_CHAPTER.items() if chapter in page.chapters]


def page_text(page: Page) -> str:
    lines = [f"# {page.title}", "", page.intro, ""]
    for module in modules_of(page):
        lines += [f"## `seq2seq_lib.{module}`", "", "```{eval-rst}",
                  f".. automodule:: seq2seq_lib.{module}", "   :members:", "```", ""]
    return "\n".join(lines)


def main() -> int:
    covered = [c for page in PAGES for c in page.chapters]
    if sorted(set(MODULE_CHAPTER.values())) != sorted(covered):
        raise SystemExit(f"PAGES covers chapters {covered}, the modules {set(MODULE_CHAPTER.values())}")
    (ROOT / "api").mkdir(exist_ok=True)
    for page in PAGES:
        path = ROOT / "api" / f"{page.name}.md"
        path.write_text(page_text(page), encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(modules_of(page))} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
