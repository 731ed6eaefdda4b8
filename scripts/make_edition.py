"""The notebook edition: every chapter as a notebook that reads and runs in Colab and Jupyter.

    python scripts/make_edition.py            # (re)write notebooks/NN_topic.ipynb
    python scripts/make_edition.py --check    # a fresh edition must equal the committed one

The chapters in ``chapters/`` are written for the book (MyST Markdown: glued numbers, glossary
terms, citations, figures, admonitions, exercise and solution blocks). Colab and Jupyter render
plain Markdown and math only, so a chapter opened there as it is would show ``{glue:text}``
placeholders, roles as literal text, no figures and every solution in plain view. The edition
is the same chapter translated into what those front ends understand:

* a glued value is pasted as the text it stores (the value the book shows);
* a glossary term is the term in bold, linked to its entry in the book's glossary; a citation
  is "Author et al. (year)", linked to the paper's entry in the book's bibliography;
* a figure is embedded as a PNG drawn by ``figures/make_figures.py`` (a data URL: Colab does
  not show cell attachments), with its caption below it;
* an admonition is a block quote with a bold title;
* an exercise is a heading "Exercise N.M (title)", numbered as in the book; its solution
  (prose, code and stored outputs) is folded into one ``<details>`` block that the reader
  opens by clicking, so "Run all" never runs it;
* an admonition of class ``dropdown`` (side detail the book folds) is folded the same way;
* every other code cell is the chapter's own, with its stored outputs, less what the book
  hides too (``_ext/hide_glue.py``): the ``glue(...)`` calls that paste numbers into the
  text (pasted here already) and the ``claim(...)`` calls that check its sentences. A cell
  that only computes the numbers quoted in the text stays (what follows may use it), with
  its code folded. One short note under the title links to the book's page.

Anything else in MyST syntax stops the script with an error, so the edition never shows raw
markup. The script is deterministic (``--check`` and the tests compare bytes).
"""

from __future__ import annotations

import argparse
import ast
import base64
import html
import importlib.util
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
from hide_glue import PROSE_ONLY, strip_glue  # noqa: E402  (the book's own rule)

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
EDITION = ROOT / "notebooks"
FIGURE_DPI = 150  # the figures are 7-10 inches wide: 1,000-1,500 pixels, sharp on a laptop

GLUE_PREFIX = "application/papermill.record/"
_ROLE = re.compile(r"\{([a-z][a-z:-]*)\}`([^`]*)`")
_DIRECTIVE = re.compile(r"^(```+)\{([a-z-]+)\}[ \t]*(.*?)[ \t]*$", re.M)
_TERM = re.compile(r"^(?P<text>.*?)(?:\s*<(?P<target>[^<>]+)>)?$", re.S)
# What Markdown would read as markup inside a pasted value (the book pastes plain text).
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]$|#])")


class EditionError(ValueError):
    """The chapter holds syntax the edition cannot translate (it would show up raw)."""


# --------------------------------------------------------------------------------------------
# The book's configuration: where its pages are, and the papers it cites
# --------------------------------------------------------------------------------------------

@cache
def book_url() -> str:
    """The published book's address, ending in ``/`` (``_config.yml``: ``html.baseurl``)."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config.get("html", {}).get("baseurl", "")
    if not url.startswith("https://"):
        raise EditionError("_config.yml needs html.baseurl, the address of the published book")
    return url.rstrip("/") + "/"


def page_url(page: str, anchor: str = "") -> str:
    """The URL of a book page (``"glossary"``, ``"chapters/02_gru"``) and optional anchor."""
    return f"{book_url()}{page}.html" + (f"#{anchor}" if anchor else "")


@dataclass(frozen=True)
class Paper:
    """What an author-year citation needs from a ``references.bib`` entry."""

    authors: tuple[str, ...]  # last names, in order
    year: str

    def names(self) -> str:
        """``"Cho et al."``, ``"Koehn and Knowles"`` or ``"Post"``."""
        if len(self.authors) >= 3:
            return f"{self.authors[0]} et al."
        return " and ".join(self.authors)


@cache
def papers() -> dict[str, Paper]:
    """Every entry of ``references.bib``, by key."""
    from pybtex.database import parse_file
    from pybtex.richtext import Text

    def plain(latex: str) -> str:
        return Text.from_latex(latex).render_as("text")

    entries = parse_file(str(ROOT / "references.bib"), bib_format="bibtex").entries
    found = {}
    for key, entry in entries.items():
        people = entry.persons.get("author", [])
        last = tuple(plain(" ".join(p.prelast_names + p.last_names)) for p in people)
        found[key] = Paper(last, entry.fields["year"])
    return found


def term_anchor(term: str) -> str:
    """The id Sphinx gives a glossary term's entry: ``term-`` and the term, every run of
    characters other than ASCII letters and digits made one ``-`` (case kept)."""
    return "term-" + re.sub(r"[^A-Za-z0-9]+", "-", term).strip("-")


def cite_anchor(key: str) -> str:
    """The id of a paper's entry in the bibliography (``_config.yml``: ``bibtex_cite_id``)."""
    return f"cite-{key}"


# --------------------------------------------------------------------------------------------
# Markdown: roles, then directives
# --------------------------------------------------------------------------------------------

def escape_markdown(text: str) -> str:
    """``text`` as literal Markdown: the characters Markdown would read as markup escaped,
    ``<`` and ``>`` as entities (a pasted ``<unk>`` must not become an HTML tag)."""
    text = _MARKDOWN_SPECIALS.sub(r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def glue_values(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Every value a chapter glues, as the book pastes it (``{glue:text}``)."""
    from ast import literal_eval

    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            text = out["data"][GLUE_PREFIX + "text/plain"]
            try:  # as MyST-NB does: a string's repr loses its quotes
                value = literal_eval(text)
            except (SyntaxError, ValueError):
                value = text
            values[name] = str(value)
    return values


def _citation(keys: str, textual: bool) -> str:
    parts = []
    for key in (k.strip() for k in keys.split(",")):
        paper = papers().get(key)
        if paper is None:
            raise EditionError(f"citation of {key!r}, which is not in references.bib")
        # the book's author-year style: "Cho et al. [2014]", "[Cho et al., 2014]" (square
        # brackets, so that a citation inside parentheses does not nest them)
        # (as HTML entities: a backslash-escaped bracket would read as TeX's \\[ to the front
        # ends, which cut math out of the text before they parse Markdown)
        label = (f"{paper.names()} &#91;{paper.year}&#93;" if textual
                 else f"{paper.names()}, {paper.year}")
        parts.append(f"[{label}]({page_url('bibliography', cite_anchor(key))})")
    return "; ".join(parts) if textual else f"&#91;{'; '.join(parts)}&#93;"


def replace_roles(text: str, glued: dict[str, str]) -> str:
    """Translate the inline roles of one piece of Markdown."""

    def role(match: re.Match[str]) -> str:
        name, content = match.group(1), match.group(2)
        if name == "glue:text":
            if content not in glued:
                raise EditionError(f"{{glue:text}} of {content!r}, which no cell glues")
            return escape_markdown(glued[content])
        if name == "term":
            parts = _TERM.match(content)
            shown, target = parts["text"], parts["target"] or parts["text"]
            return f"[**{shown}**]({page_url('glossary', term_anchor(target))})"
        if name in ("cite:t", "cite:p"):
            return _citation(content, textual=name == "cite:t")
        raise EditionError(f"the role {{{name}}} has no translation")

    return _ROLE.sub(role, text)


@dataclass
class Block:
    """One directive of a Markdown cell: ``name``, the text after it, options and body."""

    name: str
    argument: str
    options: dict[str, str]
    body: str


def _split_directives(text: str) -> Iterator[str | Block]:
    """``text`` as a sequence of plain Markdown and directive blocks (not nested)."""
    pos = 0
    for match in _DIRECTIVE.finditer(text):
        if match.start() < pos:
            continue
        fence, name, argument = match.groups()
        close = re.compile(rf"^{fence}[ \t]*$", re.M).search(text, match.end())
        if close is None:
            raise EditionError(f"the {{{name}}} directive is never closed")
        inner = text[match.end():close.start()].strip("\n").split("\n")
        options: dict[str, str] = {}
        if inner and inner[0] == "---":  # YAML front matter
            end = inner.index("---", 1)
            import yaml

            options = {k: str(v) for k, v in yaml.safe_load("\n".join(inner[1:end])).items()}
            inner = inner[end + 1:]
        while inner and re.match(r"^:[\w-]+:", inner[0]):
            key, _, value = inner.pop(0)[1:].partition(":")
            options[key] = value.strip()
        yield text[pos:match.start()]
        yield Block(name, argument, options, "\n".join(inner).strip("\n"))
        pos = close.end()
    yield text[pos:]


def quote(markdown: str) -> str:
    """``markdown`` as a block quote. Display math goes on one line first: the front ends
    cut math out of the text before they parse Markdown, so the quote's ``>`` would
    otherwise end up inside the formula."""
    markdown = re.sub(r"\$\$(.*?)\$\$", lambda m: "$$" + " ".join(m.group(1).split()) + "$$",
                      markdown, flags=re.S)
    return "\n".join(f"> {line}" if line else ">" for line in markdown.split("\n"))


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------

@cache
def _figure_script() -> Any:
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "figures" / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["make_figures"] = module  # (its dataclasses look themselves up there)
    spec.loader.exec_module(module)
    return module


@cache
def figure_png(name: str) -> bytes:
    """The figure ``figures/<name>.svg``, drawn again as a PNG by ``make_figures.py``."""
    script = _figure_script()
    svg = Path(name).with_suffix(".svg").name
    if svg not in script.FIGURES:
        raise EditionError(f"figures/make_figures.py does not draw {svg}")
    return script.png_bytes(svg, dpi=FIGURE_DPI)


def image(alt: str, png: bytes) -> str:
    """A Markdown image holding ``png`` as a data URL."""
    alt = " ".join(alt.split()).replace("[", "(").replace("]", ")")
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"


# --------------------------------------------------------------------------------------------
# A chapter
# --------------------------------------------------------------------------------------------

@dataclass
class Chapter:
    """The state of one chapter's translation."""

    number: int
    page: str  # "chapters/02_gru"
    glued: dict[str, str]
    exercises: dict[str, str]  # label -> "Exercise N.M (title)"

    def markdown(self, text: str) -> str:
        """Translate MyST Markdown that holds no exercise or solution fence."""
        out = []
        for piece in _split_directives(text):
            if isinstance(piece, str):
                out.append(replace_roles(piece, self.glued))
            elif piece.name == "figure":
                caption = replace_roles(" ".join(piece.body.split()), self.glued)
                out.append(image(piece.options.get("alt", ""), figure_png(piece.argument))
                           + f"\n\n*{caption}*")
            elif piece.name == "admonition":
                body = self.markdown(piece.body)
                title = replace_roles(piece.argument, self.glued)
                if "dropdown" in piece.options.get("class", "").split():
                    out.append(folded(title, body))
                else:
                    out.append(quote(f"**{title}**\n\n{body}"))
            else:
                raise EditionError(f"the {{{piece.name}}} directive has no translation")
        return "".join(out)


_INLINE_CODE = re.compile(r"`([^`]+)`")


def summary_html(title: str) -> str:
    """A folded box's title as HTML: Markdown is not read inside ``<summary>``, so the title
    is escaped (``<eos>`` would be taken for a tag) and its `code` spans become ``<code>``."""
    parts = _INLINE_CODE.split(title)  # text, code, text, code, ...
    return "".join(f"<code>{html.escape(p, quote=False)}</code>" if i % 2
                   else html.escape(p, quote=False)
                   for i, p in enumerate(parts))


def folded(title: str, body: str) -> str:
    """``body`` folded under ``title``: the reader clicks to open it (Markdown inside works
    in Jupyter and Colab when blank lines surround it)."""
    return (f"<details>\n<summary><b>{summary_html(title)}</b> (click to open)</summary>\n\n"
            f"{body}\n\n</details>")


def _outputs_as_markdown(cell: nbformat.NotebookNode) -> str:
    """A solution cell's stored outputs as Markdown: text as a block, images as images."""
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("display_data", "execute_result"):
            if _is_glue_output(out):
                continue
            data = out.get("data", {})
            if "image/png" in data:
                parts.append(image("a plot of the solution", base64.b64decode(data["image/png"])))
            elif "text/plain" in data:
                parts.append(data["text/plain"] + "\n")
        elif out.output_type == "error":
            raise EditionError("a solution cell stores an error")
    blocks, text = [], ""
    for part in parts:  # consecutive text parts form one block
        if part.startswith("!["):
            if text:
                blocks.append(_pre(text))
                text = ""
            blocks.append(part)
        else:
            text += part
    if text:
        blocks.append(_pre(text))
    return "\n\n".join(blocks)


def _fenced(text: str, language: str) -> str:
    """``text`` as a fenced code block, the fence longer than any run of backticks in it."""
    fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`+", text))])
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def _pre(text: str) -> str:
    """A solution's printed output, labelled (in Jupyter a fence has no background)."""
    return "*Output:*\n\n" + _fenced(text, "text")


def _code(source: str) -> str:
    """A solution's code."""
    return _fenced(source, "python")


_EXERCISE_START = re.compile(
    r"^```\{exercise-start\}[ \t]*(.*?)\n:label:[ \t]*(\S+)[ \t]*\n```[ \t]*\n?", re.M)
_EXERCISE_END = re.compile(r"^```\{exercise-end\}[ \t]*\n```[ \t]*\n?", re.M)
_SOLUTION_START = re.compile(
    r"^```\{solution-start\}[ \t]*(\S+)[ \t]*\n(?::class:[^\n]*\n)?```[ \t]*\n?", re.M)
_SOLUTION_END = re.compile(r"^```\{solution-end\}[ \t]*\n```[ \t]*\n?", re.M)


def number_exercises(chapter_number: int, cells: Sequence[nbformat.NotebookNode]) -> dict[str, str]:
    """``{label: "Exercise N.M (title)"}`` in the order the chapter states them (the book's
    numbers)."""
    found = {}
    for cell in cells:
        if cell.cell_type != "markdown":
            continue
        for title, label in _EXERCISE_START.findall(cell.source):
            found[label] = f"Exercise {chapter_number}.{len(found) + 1} ({title})"
    return found


def translate(path: Path) -> nbformat.NotebookNode:
    """The edition of chapter ``path``."""
    nb = nbformat.read(path, as_version=4)
    number = int(path.stem.split("_", 1)[0])
    chapter = Chapter(number, f"chapters/{path.stem}", glue_values(nb), number_exercises(number, nb.cells))
    cells: list[nbformat.NotebookNode] = []
    solution: list[str] | None = None  # the open solution's Markdown parts
    solution_label = ""

    def emit_markdown(text: str) -> None:
        text = text.strip("\n")
        if text:
            cells.append(nbformat.v4.new_markdown_cell(text))

    def exercise_headings(text: str) -> str:
        text = _EXERCISE_START.sub(lambda m: f"### {chapter.exercises[m.group(2)]}\n\n", text)
        return _EXERCISE_END.sub("", text)

    for cell in nb.cells:
        if cell.cell_type == "code":
            if solution is not None:
                shown_code = strip_glue(cell.source.rstrip("\n"))
                if shown_code:
                    solution.append(_code(shown_code))
                shown = _outputs_as_markdown(cell)
                if shown:
                    solution.append(shown)
            else:
                copied = _copy_code_cell(cell)
                if copied is not None:
                    cells.append(copied)
            continue
        text = cell.source
        while text:
            if solution is None:
                start = _SOLUTION_START.search(text)
                before = text if start is None else text[:start.start()]
                emit_markdown(chapter.markdown(exercise_headings(before)))
                if start is None:
                    break
                solution, solution_label = [], start.group(1)
                text = text[start.end():]
            else:
                end = _SOLUTION_END.search(text)
                inside = text if end is None else text[:end.start()]
                if inside.strip():
                    solution.append(chapter.markdown(inside.strip("\n")))
                if end is None:
                    break
                title = chapter.exercises[solution_label]
                summary = f"<summary><b>Solution to {html.escape(title)}</b> (click to open)</summary>"
                emit_markdown("<details>\n" + summary + "\n\n" + "\n\n".join(solution) + "\n\n</details>")
                solution = None
                text = text[end.end():]
    if solution is not None:
        raise EditionError(f"{path.name}: the solution to {solution_label} is never closed")
    _insert_book_link(cells, chapter)
    edition = nbformat.v4.new_notebook(cells=cells, metadata=_metadata(nb))
    for i, cell in enumerate(edition.cells):  # stable ids: the bytes depend on the chapter alone
        cell["id"] = f"{path.stem[:2]}-{i:03d}"
    return edition


#: The first line of a cell that only computes numbers quoted in the text: a Colab form
#: title (Colab shows the title and folds the code; JupyterLab folds it by the metadata).
PROSE_ONLY_TITLE = "# @title The numbers quoted in the text below"


def _is_glue_output(output: nbformat.NotebookNode) -> bool:
    data = output.get("data", {})
    return bool(data) and all(key.startswith(GLUE_PREFIX) for key in data)


def edition_code(source: str) -> tuple[str, bool]:
    """What the edition runs of a chapter's code cell, and whether it only feeds the prose:
    the source without its glue and claim calls (and their import)."""
    prose_only = source.startswith(PROSE_ONLY)
    code = strip_glue(source, keep_prose_only=True)
    if prose_only and code:
        if code.startswith(PROSE_ONLY):  # the title keeps the rest of that comment line
            first, _, body = code.partition("\n")
            code = PROSE_ONLY_TITLE + first[len(PROSE_ONLY):] + "\n" + body.lstrip("\n")
        else:  # the comment went with the glue call right below it
            code = PROSE_ONLY_TITLE + "\n" + code
    if code != source:
        try:
            ast.parse(code)
        except SyntaxError as error:
            raise EditionError(f"removing glue/claim calls breaks this cell:\n{source}") from error
    return code, prose_only


def _copy_code_cell(cell: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    """The edition's copy of a code cell (None when nothing but glue and claim calls is
    left: such a cell prints nothing)."""
    code, prose_only = edition_code(cell.source)
    outputs = [out for out in cell.outputs if not _is_glue_output(out)]
    if not code:
        if outputs:
            raise EditionError(f"a cell of glue and claim calls only prints:\n{cell.source}")
        return None
    metadata = dict(cell.metadata)
    if "hide-cell" in metadata.get("tags", []) or prose_only:  # folded in JupyterLab
        metadata["jupyter"] = {"source_hidden": True}
    if prose_only:
        metadata["cellView"] = "form"  # Colab: the title shown, the code folded
    copy = nbformat.v4.new_code_cell(code, metadata=metadata,
                                     execution_count=cell.execution_count)
    copy.outputs = outputs
    return copy


def _insert_book_link(cells: list[nbformat.NotebookNode], chapter: Chapter) -> None:
    note = (f"*Chapter {chapter.number} of the book [Modern RNNs & Seq2Seq]({book_url()}): "
            f"the same text, code and results as [its page in the book]({page_url(chapter.page)}), "
            "as a notebook you can run. Numbers in the text are those of the stored outputs (the "
            "`quick` profile, on a CPU); a run of yours prints its own. Solutions are folded: click "
            "to open one; their code is shown as text, to copy into a cell and run.*")
    cells.insert(1, nbformat.v4.new_markdown_cell(note))


def _metadata(nb: nbformat.NotebookNode) -> dict[str, Any]:
    keep = {k: nb.metadata[k] for k in ("kernelspec", "language_info") if k in nb.metadata}
    keep["colab"] = {"provenance": [], "toc_visible": True}
    return keep


def write(path: Path, nb: nbformat.NotebookNode) -> None:
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def edition_paths(chapters: Sequence[Path] | None = None) -> list[tuple[Path, Path]]:
    """``(chapter, edition file)`` for every chapter."""
    chapters = sorted(CHAPTERS.glob("*.ipynb")) if chapters is None else chapters
    return [(p, EDITION / p.name) for p in chapters]


def stale() -> list[str]:
    """The edition files that are missing, extra, or differ from a fresh translation."""
    pairs = edition_paths()
    expected = {target.name for _, target in pairs}
    differ = [p.name for p in EDITION.glob("*.ipynb") if p.name not in expected]
    for source, target in pairs:
        fresh = nbformat.writes(translate(source)) + "\n"
        if not target.exists() or target.read_text(encoding="utf-8") != fresh:
            differ.append(target.name)
    return sorted(differ)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare a fresh translation with notebooks/ instead of writing")
    args = parser.parse_args(argv)
    if args.check:
        differ = stale()
        print("notebook edition up to date" if not differ else "out of date: " + ", ".join(differ))
        return 1 if differ else 0
    EDITION.mkdir(exist_ok=True)
    for source, target in edition_paths():
        write(target, translate(source))
        print(target.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
