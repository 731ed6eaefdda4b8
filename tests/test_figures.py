"""The book's diagrams: one script draws them all (``figures/make_figures.py``), every chapter
shows at least one, every file is shown and every figure shown exists, each has a name, alt
text and a caption, and drawing them again gives the same bytes."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import ROOT

from scripts.nbtools import FIGURES, chapter_paths, figure_directives

SCRIPT = FIGURES / "make_figures.py"


def pages() -> list[Path]:
    """Every document of the book (``_toc.yml``): the chapters and the Markdown pages."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"], *(ch["file"] for part in toc["parts"] for ch in part["chapters"])]
    markdown = [ROOT / f"{f}.md" for f in files if (ROOT / f"{f}.md").exists()]
    return [*chapter_paths(), *markdown]


def shown() -> dict[Path, list[Path]]:
    return {page: [image for image, _ in figure_directives(page)] for page in pages()}


def drawn_by_script() -> set[str]:
    """The file names in the script's ``FIGURES`` table (read without running it)."""
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    table = next(node.value for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                 and getattr(node.target, "id", None) == "FIGURES")
    return {key.value for key in table.keys}


@pytest.mark.parametrize("chapter", chapter_paths(), ids=lambda p: p.stem)
def test_every_chapter_shows_a_figure(chapter):
    assert figure_directives(chapter), f"{chapter.name}: no {{figure}} directive"


def test_every_figure_file_is_shown_and_every_figure_shown_exists():
    references = {image for images in shown().values() for image in images}
    files = {p.resolve() for p in FIGURES.glob("*.svg")}
    assert files, "no figures in figures/"
    missing = sorted(str(p.relative_to(ROOT)) for p in references - files)
    unused = sorted(str(p.relative_to(ROOT)) for p in files - references)
    assert not missing, f"figures shown by a page but not in figures/: {missing}"
    assert not unused, f"figures/ files that no page shows: {unused}"


def test_the_script_draws_exactly_the_figure_files():
    assert drawn_by_script() == {p.name for p in FIGURES.glob("*.svg")}


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.stem)
def test_every_figure_has_a_name_alt_text_and_a_caption(page):
    for image, body in figure_directives(page):
        head, sep, caption = body.partition("\n---\n")
        assert head.startswith("---\n") and sep, f"{page.name}, {image.name}: no option block"
        options = yaml.safe_load(head.removeprefix("---\n"))
        assert str(options.get("name", "")).startswith("fig-"), f"{image.name}: no name fig-..."
        assert len(str(options.get("alt", ""))) >= 80, f"{image.name}: alt text too short"
        assert len(caption.split()) >= 15, f"{image.name}: the caption should say what to look at"
        assert max(map(len, body.splitlines())) <= 92, f"{image.name}: line over 92 characters"


def test_drawing_the_figures_again_gives_identical_files():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, (
        "figures/*.svg differ from a fresh drawing; run python figures/make_figures.py\n"
        + proc.stdout + proc.stderr)


COLUMN_PX = 676
"""The text column's width at 1280 px (tests/test_book_render.py measures the boxes)."""


def test_diagram_text_is_at_least_9_px_as_the_book_shows_it():
    """A diagram wider than the column is shrunk to fit it; its smallest label (points at
    96 px per inch, times that shrink) must still be 9 px or more."""
    import importlib.util

    from matplotlib.text import Text

    spec = importlib.util.spec_from_file_location("make_figures", SCRIPT)
    make_figures = importlib.util.module_from_spec(spec)
    sys.modules["make_figures"] = make_figures  # (its dataclasses look their module up)
    try:
        spec.loader.exec_module(make_figures)
    finally:
        del sys.modules["make_figures"]

    small = {}
    for name, draw in make_figures.FIGURES.items():
        card = draw()
        width_px = card.fig.get_figwidth() * 96
        shrink = min(1.0, COLUMN_PX / width_px)
        sizes = [t.get_fontsize() for t in card.fig.findobj(Text) if t.get_text().strip()]
        smallest_px = min(sizes) * 96 / 72 * shrink
        if smallest_px < 9:
            small[name] = round(smallest_px, 1)
        make_figures.plt.close(card.fig)
    assert small == {}, f"labels under 9 px in the book: {small}"
