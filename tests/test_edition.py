"""The notebook edition (``notebooks/``, written by ``scripts/make_edition.py``): what a reader
opens in Colab or Jupyter.

It must equal a fresh translation of the chapters (it never lags them), show no MyST syntax,
paste every glued value, embed every figure, fold every solution, keep the chapters' code
cells and stored outputs, link only to pages and anchors the built book has, and render in a
browser the way Jupyter renders Markdown (``nbconvert``: no raw markup, images load, math
typeset).
"""

from __future__ import annotations

import base64
import re
import shutil
import warnings
from pathlib import Path

import nbformat
import pytest
from helpers import ROOT, missing, serve_and_browse, skip_or_fail, wait_for

from scripts import make_edition
from scripts.make_edition import EditionError, strip_glue, translate
from scripts.nbtools import chapter_paths, figure_directives

HTML = ROOT / "_build" / "html"
CHAPTERS = chapter_paths()
IDS = [p.stem for p in CHAPTERS]
IMAGE = re.compile(r"!\[[^\]]*\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)")
# MyST that Colab and Jupyter would show as raw text
MYST = [
    (re.compile(r"\{[a-z][a-z:-]*\}`"), "a role ({name}`...`)"),
    (re.compile(r"^\s*(```+|:::+)\s*\{", re.M), "a directive (```{name})"),
    (re.compile(r"^\(\S+\)=\s*$", re.M), "a target ((label)=)"),
    (re.compile(r"\{glue"), "a glue placeholder"),
]


def edition(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(make_edition.EDITION / path.name, as_version=4)


def markdown(nb: nbformat.NotebookNode) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


def solution_sources(chapter: nbformat.NotebookNode) -> list[str]:
    """The code cells of the chapter that sit inside a solution block."""
    inside, found = False, []
    for cell in chapter.cells:
        if cell.cell_type == "code":
            if inside:
                found.append(cell.source)
            continue
        for fence in re.findall(r"\{solution-(start|end)\}", cell.source):
            inside = fence == "start"
    return found


def test_the_edition_equals_a_fresh_translation_of_the_chapters():
    assert make_edition.stale() == [], "run: python scripts/make_edition.py"
    assert sorted(p.name for p in make_edition.EDITION.glob("*.ipynb")) == [p.name for p in CHAPTERS]


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_no_myst_syntax_is_left(path):
    for i, text in enumerate(markdown(edition(path))):
        for pattern, what in MYST:
            found = pattern.search(text)
            assert not found, f"{path.name} edition cell {i}: {what}: {found.group(0)!r}"


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_glued_value_is_pasted(path):
    chapter = nbformat.read(path, as_version=4)
    glued = make_edition.glue_values(chapter)
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", "\n".join(markdown(chapter))))
    assert used and used <= set(glued), f"{path.name}: glue keys without a value: {used - set(glued)}"
    text = "\n".join(markdown(edition(path)))
    for key in used:
        assert make_edition.escape_markdown(glued[key]) in text, f"{path.name}: {key} not pasted"


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_figure_is_embedded_as_a_png(path):
    figures = figure_directives(path)
    outside_solutions = [c for c in markdown(edition(path)) if not c.startswith("<details>")]
    images = IMAGE.findall("\n".join(outside_solutions))
    assert len(images) == len(figures) > 0, f"{path.name}: {len(images)} images, {len(figures)} figures"
    for encoded in images:
        assert base64.b64decode(encoded).startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_solution_is_folded_and_code_cells_are_the_chapters(path):
    chapter, ed = nbformat.read(path, as_version=4), edition(path)
    solutions = solution_sources(chapter)
    folded = [c for c in markdown(ed) if c.startswith("<details>\n<summary><b>Solution to ")]
    starts = len(re.findall(r"\{solution-start\}", "\n".join(markdown(chapter))))
    assert len(folded) == starts >= 3, f"{path.name}: {len(folded)} folded of {starts} solutions"
    for cell in folded:
        assert cell.startswith("<details>\n<summary><b>Solution to Exercise ")
        assert cell.endswith("\n</details>") and cell.count("<details>") == 1
    for source in solutions:  # a solution's code is shown folded (as the book shows it)
        shown = strip_glue(source.rstrip("\n"))
        assert not shown or any(shown in cell for cell in folded)
    # every other code cell is the chapter's, less the glue and claim calls the book hides too
    kept = []
    for cell in chapter.cells:
        if cell.cell_type == "code" and cell.source not in solutions:
            code, _ = make_edition.edition_code(cell.source)
            outputs = [o for o in cell.outputs if not make_edition._is_glue_output(o)]
            if code:
                kept.append((code, outputs))
            else:
                assert outputs == [], f"{path.name}: a dropped cell printed"
    code = [c for c in ed.cells if c.cell_type == "code"]
    assert [(c.source, c.outputs) for c in code] == kept
    for cell in code:  # what only pastes numbers or checks sentences is gone
        assert not re.search(r"^\s*(glue|claim)\(|seq2seq_lib\.glue", cell.source, re.M), cell.source


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_exercises_are_numbered_as_in_the_book(path):
    number = int(path.stem[:2])
    headings = re.findall(r"^### Exercise (\d+)\.(\d+) \(", "\n".join(markdown(edition(path))), re.M)
    assert headings == [(str(number), str(i)) for i in range(1, len(headings) + 1)]
    assert len(headings) >= 3


def test_links_point_at_pages_and_anchors_of_the_built_book():
    if not (HTML / "index.html").exists():
        skip_or_fail("the book is not built (run: jupyter-book build -W -n --keep-going .)")
    base = make_edition.book_url()
    links = set()
    for path in CHAPTERS:
        links |= set(re.findall(rf"\]\(({re.escape(base)}[^)\s]*)\)", "\n".join(markdown(edition(path)))))
    assert len(links) > 50
    for link in sorted(links):
        page, _, anchor = link.removeprefix(base).partition("#")
        html = HTML / (page or "index.html")
        assert html.is_file(), f"{link}: no such page in the book"
        if anchor:
            assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), f"{link}: no such anchor"


# -- the translator on small inputs --------------------------------------------------------

def _chapter(tmp_path: Path, *cells: nbformat.NotebookNode) -> Path:
    path = tmp_path / "03_demo.ipynb"
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=list(cells))), encoding="utf-8")
    return path


def _glued(name: str, value: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(f"glue({name!r}, {value!r})")
    cell.outputs = [nbformat.v4.new_output(
        "display_data", data={make_edition.GLUE_PREFIX + "text/plain": repr(value)},
        metadata={"scrapbook": {"name": name, "mime_prefix": make_edition.GLUE_PREFIX}})]
    return cell


def test_a_pasted_value_is_literal_text(tmp_path):
    md = nbformat.v4.new_markdown_cell
    path = _chapter(tmp_path, md("# Demo"), _glued("k", "the <unk> *was* $5_a"),
                    md("Output: {glue:text}`k`."))
    text = translate(path).cells[-1].source
    assert text == r"Output: the &lt;unk&gt; \*was\* \$5\_a."


def test_unknown_myst_stops_the_translation(tmp_path):
    md = nbformat.v4.new_markdown_cell
    with pytest.raises(EditionError, match="numref"):
        translate(_chapter(tmp_path, md("# Demo"), md("See {numref}`fig-x`.")))
    with pytest.raises(EditionError, match="note"):
        translate(_chapter(tmp_path, md("# Demo"), md("```{note}\nBody\n```")))
    with pytest.raises(EditionError, match="no cell glues"):
        translate(_chapter(tmp_path, md("# Demo"), md("{glue:text}`missing`")))


def test_a_solution_over_several_cells_becomes_one_folded_block(tmp_path):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    answer = code("print(42)")
    answer.outputs = [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    path = _chapter(
        tmp_path, md("# Demo"),
        md("## Exercises\n\n```{exercise-start} First\n:label: ex-a\n```\nAsk.\n```{exercise-end}\n```"),
        code("stub()"),
        md("```{solution-start} ex-a\n:class: dropdown\n```\nBecause."), answer,
        md("```{solution-end}\n```\n\nAfter the solution."))
    cells = translate(path).cells
    assert [c.cell_type for c in cells] == ["markdown", "markdown", "markdown", "code", "markdown",
                                            "markdown"]
    assert cells[2].source == "## Exercises\n\n### Exercise 3.1 (First)\n\nAsk."
    assert cells[4].source == ("<details>\n<summary><b>Solution to Exercise 3.1 (First)</b> (click "
                               "to open)</summary>\n\nBecause.\n\n```python\nprint(42)\n```\n\n"
                               "*Output:*\n\n```text\n42\n```\n\n</details>")
    assert cells[5].source == "After the solution."


def test_citations_use_the_books_brackets_without_tex_escapes(tmp_path):
    md = nbformat.v4.new_markdown_cell
    path = _chapter(tmp_path, md("# Demo"),
                    md("As {cite:t}`post2018call` says (see {cite:p}`papineni2002bleu`)."))
    text = translate(path).cells[-1].source
    assert text.startswith("As [Post &#91;2018&#93;](") and "(see &#91;[Papineni et al., 2002](" in text
    assert "\\[" not in text  # the front ends would take \[ for display math


def test_display_math_in_an_admonition_stays_one_formula(tmp_path):
    md = nbformat.v4.new_markdown_cell
    path = _chapter(tmp_path, md("# Demo"),
                    md("```{admonition} Careful\n:class: warning\nA formula:\n$$\na\n= b\n$$\nEnd.\n```"))
    assert translate(path).cells[-1].source == "> **Careful**\n>\n> A formula:\n> $$a = b$$\n> End."


def test_glue_and_claim_calls_go_and_a_cell_that_feeds_the_prose_is_folded(tmp_path):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    imports = code("import math\n\nfrom seq2seq_lib.glue import claim, glue  # claim: checks")
    shown = code("x = 2\n# the value the text quotes\nglue('x', f'{x}')\nprint(x)")
    shown.outputs = [_glued("x", "2").outputs[0],
                     nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    prose = code("# the numbers quoted in the text below (rounded)\ny = x + 1\n"
                 "glue('y', f'{y}')\nclaim(y > x, 'y is larger', run)")
    path = _chapter(tmp_path, md("# Demo"), imports, shown, _glued("z", "3"), prose,
                    md("{glue:text}`x`, {glue:text}`z`"))
    cells = translate(path).cells
    assert [c.cell_type for c in cells] == ["markdown", "markdown", "code", "code", "code",
                                            "markdown"]  # the glue-only cell is gone
    assert cells[2].source == "import math"
    assert cells[3].source == "x = 2\nprint(x)"
    assert [o.output_type for o in cells[3].outputs] == ["stream"]
    assert cells[4].source == ("# @title The numbers quoted in the text below (rounded)\n"
                               "y = x + 1")
    assert cells[4].metadata["cellView"] == "form"
    assert cells[4].metadata["jupyter"] == {"source_hidden": True}
    assert cells[5].source == "2, 3"  # the values the book pastes
    # the comment line right above a glue call goes with it; the title stays
    assert make_edition.edition_code("# the numbers quoted in the text below\nglue('a', 1)\n"
                                     "x = 2") == (make_edition.PROSE_ONLY_TITLE + "\nx = 2", True)


def test_a_dropdown_admonition_is_folded(tmp_path):
    md = nbformat.v4.new_markdown_cell
    path = _chapter(tmp_path, md("# Demo"),
                    md("Before.\n```{admonition} More detail\n:class: dropdown\nHidden *text*.\n```"))
    assert translate(path).cells[-1].source == (
        "Before.\n<details>\n<summary><b>More detail</b> (click to open)</summary>\n\n"
        "Hidden *text*.\n\n</details>")
    path = _chapter(tmp_path, md("# Demo"),
                    md("```{admonition} Counting `<eos>` & more\n:class: dropdown\nBody.\n```"))
    assert translate(path).cells[-1].source.startswith(
        "<details>\n<summary><b>Counting <code>&lt;eos&gt;</code> &amp; more</b>")


# -- rendered as Jupyter renders it ----------------------------------------------------------

MATHJAX_CONFIG = ('<script>window.MathJax = {tex: {inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]], '
                  'processEscapes: true, processEnvironments: true}};</script>'
                  '<script src="mathjax/tex-chtml.js"></script>')


def _mathjax_folder() -> Path | None:
    """MathJax 3 as installed by sphinx-mathjax-offline (the book's own copy)."""
    import importlib.metadata

    try:
        files = importlib.metadata.files("sphinx-mathjax-offline") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if str(file).endswith("mathjax/tex-chtml.js"):
            return Path(file.locate()).parent
    return None


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """Every edition notebook as nbconvert's HTML (Jupyter's Markdown and MathJax), served."""
    reason = missing()
    if reason:
        skip_or_fail(reason)
    from nbconvert import HTMLExporter

    folder = tmp_path_factory.mktemp("edition-html")
    mathjax = _mathjax_folder()
    assert mathjax is not None, "sphinx-mathjax-offline (MathJax) is not installed"
    shutil.copytree(mathjax, folder / "mathjax")
    exporter = HTMLExporter(template_name="lab")
    for path in CHAPTERS:
        with warnings.catch_warnings():  # glued values have no visible form (by design)
            warnings.filterwarnings("ignore", message="Your element with mimetype")
            body, _ = exporter.from_notebook_node(edition(path))
        # nbconvert loads MathJax 2 from a CDN; the browser has no network: serve MathJax 3
        body, n = re.subn(r'<script src="https://[^"]*mathjax[^"]*">\s*</script>',
                          lambda _: MATHJAX_CONFIG, body)
        assert n == 1
        (folder / f"{path.stem}.html").write_text(body, encoding="utf-8")
    with serve_and_browse(folder) as (driver, base):
        yield driver, base


# Text a reader sees outside code: raw MyST or raw TeX would show up here.
VISIBLE_PROSE = """
const skip = e => e.closest('pre, code, .jp-CodeCell .jp-InputArea, .jp-OutputArea, mjx-container');
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
let text = '';
for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!skip(n.parentElement)) text += n.textContent;
return text;
"""


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_the_edition_renders_like_a_notebook(rendered, path):
    driver, base = rendered
    driver.get(f"{base}/{path.stem}.html")
    wait_for(driver, "return document.readyState === 'complete'")
    wait_for(driver, "return !!(window.MathJax && MathJax.startup && MathJax.startup.promise)",
             what="MathJax")
    driver.execute_async_script("MathJax.startup.promise.then(arguments[0])")
    assert driver.execute_script("return document.querySelectorAll('mjx-container').length") > 10
    assert driver.execute_script("return document.querySelectorAll('mjx-merror').length") == 0
    driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    broken = driver.execute_script(
        "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).length")
    assert broken == 0, f"{path.name}: {broken} images did not load"
    prose = driver.execute_script(VISIBLE_PROSE)
    for needle in ("{glue", "{term}", "{cite", "```{", "$$", "\\mathbf", "\\frac", ":label:",
                   ":class:"):
        assert needle not in prose, f"{path.name}: {needle!r} is visible as text"
    assert not re.search(r"(?<![\\\w])\$[^$\s][^$]*\$", prose), f"{path.name}: raw $...$ math visible"
