"""The book's own Sphinx extensions (``_ext/``), as functions, without building the book."""

from __future__ import annotations

import importlib.util
import re

import pytest
from helpers import ROOT, skip_or_fail


def _extension(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hide_glue = _extension("hide_glue")


def test_strip_glue_removes_calls_their_comments_and_emptied_blocks():
    source = '''x = 1
# the value the text quotes
glue("a", x)
for k in range(3):
    glue(f"k{k}", k,
         )
if x:
    y = 2
    glue("c", y)
else:
    glue("d", 1)
# the sentence the text states
claim(x > 0, "x is positive",
      run)
print(x)  # glue( in a comment stays
glue.claim(x, "a method of another name stays", run)'''
    assert hide_glue.strip_glue(source) == '''x = 1
if x:
    y = 2
print(x)  # glue( in a comment stays
glue.claim(x, "a method of another name stays", run)'''


def test_strip_glue_keeps_code_without_glue_and_hides_prose_only_cells():
    plain = "def f():\n    return 1\n\n\nprint(f())"
    assert hide_glue.strip_glue(plain) == plain
    assert hide_glue.strip_glue("# only a comment\nglue('a', 1)") == ""
    assert hide_glue.strip_glue(hide_glue.PROSE_ONLY + "\nx = 1\nprint(x)") == ""
    assert hide_glue.strip_glue("glue(") == "glue("  # does not parse: shown as it is


def test_strip_glue_removes_the_import_and_can_keep_a_prose_only_cells_code():
    imports = ("import torch\n\nfrom seq2seq_lib import beam\n"
               "from seq2seq_lib.glue import claim, glue  # claim: checks a sentence\n"
               "from seq2seq_lib.glued import other")
    assert hide_glue.strip_glue(imports) == ("import torch\n\nfrom seq2seq_lib import beam\n"
                                             "from seq2seq_lib.glued import other")
    prose = hide_glue.PROSE_ONLY + "\nx = 1\nglue('x', x)\nprint(x)"
    assert hide_glue.strip_glue(prose, keep_prose_only=True) == (
        hide_glue.PROSE_ONLY + "\nx = 1\nprint(x)")
    assert hide_glue.strip_glue(hide_glue.PROSE_ONLY + "\nglue('x', 1)",
                                keep_prose_only=True) == ""


def test_author_year_labels():
    labels = _extension("bibliography_labels")
    from pybtex.database import parse_string

    bib = parse_string(r"""
@article{a, author = {Cho, K. and van Merri{\"e}nboer, B. and Bengio, Y.}, year = {2014a},
  title = {T}}
@article{b, author = {Sutskever, I. and Vinyals, O.}, year = {2014}, title = {T}}
@article{c, author = {Post, M.}, year = {2018}, title = {T}}
""", "bibtex")
    got = list(labels.AuthorYearLabels().format_labels(bib.entries.values()))
    assert got == ["Cho et al., 2014a", "Sutskever & Vinyals, 2014", "Post, 2018"]


def test_no_glue_or_claim_call_or_their_import_is_visible_in_the_built_book():
    html = ROOT / "_build" / "html" / "chapters"
    if not html.is_dir():
        skip_or_fail("the book is not built (run: jupyter-book build -W -n --keep-going .)")
    shown = []
    for page in sorted(html.glob("*.html")):
        for cell in re.findall(r'<div class="cell_input.*?</pre>', page.read_text("utf-8"), re.S):
            text = re.sub(r"<[^>]+>", "", cell)
            if re.search(r"^\s*((glue|claim)\(|from seq2seq_lib\.glue import)", text, re.M):
                shown.append(page.name)
    assert shown == [], f"glue or claim calls shown on {sorted(set(shown))}"


@pytest.mark.parametrize("name", ["hide_glue", "bibliography_labels", "page_scripts",
                                  "notebook_edition"])
def test_every_extension_is_in_the_config(name):
    assert f"{name}: _ext" in (ROOT / "_config.yml").read_text(encoding="utf-8")
