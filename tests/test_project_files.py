"""The project's own contract: table of contents, dependencies, notebook hygiene, exercises, lint."""

from __future__ import annotations

import ast
import json
import re

import nbformat
import pytest
import tomllib
import yaml
from helpers import ROOT

from scripts.nbtools import COLAB_TAG, TOGGLE_TAG, chapter_paths, colab_cell_source, load_config

CHAPTER_NAMES = [
    "01_bptt", "02_gru", "03_lstm", "04_deep_rnn", "05_bidirectional_rnn", "06_encoder_decoder",
    "07_seq2seq", "08_attention", "09_beam_search", "10_bleu", "11_translator",
]
NOTEBOOKS = chapter_paths()


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part["chapters"]:
            files += [ch["file"], *(sec["file"] for sec in ch.get("sections", []))]
    return files


def api_pages_text() -> str:
    """The API reference's pages (api/*.md) as _toc.yml lists them, joined."""
    return "\n".join((ROOT / f"{f}.md").read_text(encoding="utf-8")
                     for f in toc_files() if f.startswith("api/"))


def test_the_chapters_are_exactly_the_planned_ones():
    assert [nb.stem for nb in NOTEBOOKS] == CHAPTER_NAMES


def test_toc_lists_every_notebook_and_only_existing_files():
    listed = toc_files()
    for nb in NOTEBOOKS:
        assert f"chapters/{nb.stem}" in listed, f"{nb.name} is not in _toc.yml"
    for entry in listed:
        candidates = [ROOT / f"{entry}{ext}" for ext in (".ipynb", ".md")]
        assert any(p.exists() for p in candidates), f"_toc.yml lists {entry}, which does not exist"


def test_chapters_are_in_course_order_in_the_toc():
    listed = [e.split("/")[-1] for e in toc_files() if e.startswith("chapters/")]
    assert listed == sorted(listed, key=CHAPTER_NAMES.index)


def requirement_specs() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return {_name(r): _spec(r) for r in reqs}


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower().replace("_", "-")


def _spec(req: str) -> str:
    return req[len(_name(req)):].replace(" ", "")


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    env_specs = {_name(r): _spec(r) for r in pip_section if not r.startswith("-e")}
    assert "-e ." in pip_section, "environment.yml should install the library itself"
    assert env_specs == requirement_specs()


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook(request):
    return request.param, nbformat.read(request.param, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_first_code_cell_is_the_colab_cell_from_config(notebook):
    path, nb = notebook
    first = code_cells(nb)[0]
    assert COLAB_TAG in first.metadata.get("tags", []), f"{path.name}: first code cell is not {COLAB_TAG}"
    assert first.source == colab_cell_source(load_config()), (
        f"{path.name}: Colab cell out of date; run python scripts/execute_notebooks.py {path}"
    )
    assert not first.outputs


def test_second_code_cell_is_the_gpu_toggle(notebook):
    path, nb = notebook
    toggle = code_cells(nb)[1]
    assert TOGGLE_TAG in toggle.metadata.get("tags", [])
    for needle in ('DEVICE = "auto"', 'PROFILE = "quick"', "setup(DEVICE, PROFILE)"):
        assert needle in toggle.source, f"{path.name}: toggle cell lacks {needle!r}"
    assert "".join(o.get("text", "") for o in toggle.outputs).startswith("device=cpu | profile=quick")


def test_notebook_hygiene(notebook):
    path, nb = notebook
    counts = [c.execution_count for c in code_cells(nb) if c.execution_count is not None]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not executed top to bottom once"
    machine_path = re.compile(r"(/work/|/tmp/|/root/|/home/[^/\s]+/|site-packages|\\Users\\)")
    for i, cell in enumerate(code_cells(nb)):
        src = cell.source.strip()
        tags = cell.metadata.get("tags", [])
        last = src.splitlines()[-1] if src else ""
        assert not last.rstrip().endswith(";"), f"{path.name} cell {i}: ends with ';' (use _ = ...)"
        assert "tqdm.auto" not in src and "tqdm.notebook" not in src, f"{path.name} cell {i}: tqdm.auto"
        assert "NBVAL_IGNORE_OUTPUT" not in src or "nbval-ignore-output" not in tags
        long_lines = [line for line in src.splitlines() if len(line) > 92]
        assert not long_lines, f"{path.name} cell {i}: lines over 92 characters scroll in the book"
        for out in cell.outputs:
            text = out.get("text", "") + json.dumps(out.get("data", {}).get("text/plain", ""))
            text += "\n".join(out.get("traceback", []))
            assert not machine_path.search(text), f"{path.name} cell {i}: machine path in output"
            assert "image/svg+xml" not in out.get("data", {}), f"{path.name} cell {i}: SVG output"
            # "Run all" must never stop, and the book must show no red error box
            assert out.output_type != "error", f"{path.name} cell {i}: stores an error output"
        assert "raises-exception" not in tags, f"{path.name} cell {i}: tagged raises-exception"


COLUMN_CHARS = 80
"""The widest column-aligned printout the book shows on one line (test_book_render checks
that 80 characters fit an output box at 1280 px)."""


def _shown_as_text(out) -> str | None:
    """The text the book shows for an output: a stream, or a result without an HTML form."""
    if out.output_type == "stream":
        return out.get("text", "")
    data = out.get("data", {})
    if "text/html" in data or "image/png" in data:
        return None
    return data.get("text/plain")


def test_column_aligned_printouts_fit_the_column(notebook):
    """A printed table (columns lined up with runs of spaces) longer than the column would
    wrap and lose its alignment: such lines are at most COLUMN_CHARS characters."""
    path, nb = notebook
    aligned = re.compile(r"\S {2,}\S")
    for i, cell in enumerate(code_cells(nb)):
        for out in cell.outputs:
            text = _shown_as_text(out)
            if not text:
                continue
            long = [line for line in text.splitlines()
                    if len(line) > COLUMN_CHARS and aligned.search(line)]
            assert not long, f"{path.name} code cell {i}: {len(long)} aligned lines over " \
                             f"{COLUMN_CHARS} characters, e.g. {long[0]!r}"


PLOT_PX = 680
"""The widest plot (in pixels at the notebooks' 100 dpi) that the 676-px text column shows
nearly unshrunk: its 10-point labels stay about 14 px tall."""


def test_plots_fit_the_column_without_shrinking(notebook):
    """A plot wider than the column is scaled down and its labels with it (a 12-inch figure
    showed 10-point labels at 7 px); plots are drawn at most 6.8 inches wide."""
    import base64
    import struct

    path, nb = notebook
    for i, cell in enumerate(code_cells(nb)):
        for out in cell.outputs:
            png = out.get("data", {}).get("image/png")
            if png:
                width = struct.unpack(">I", base64.b64decode(png)[16:20])[0]
                assert width <= PLOT_PX, f"{path.name} code cell {i}: a plot {width} px wide"


def test_exercises_have_stubs_checkers_and_hidden_solutions(notebook):
    path, nb = notebook
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert len(re.findall(r"```\{exercise-start\}", text)) >= 3, f"{path.name}: fewer than 3 exercises"
    labels = re.findall(r"```\{solution-start\}\s+(\S+)\n:class: dropdown", text)
    assert len(labels) >= 3, f"{path.name}: solutions must be folded (:class: dropdown)"
    cells = nb.cells
    stubs = [i for i, c in enumerate(cells)
             if c.cell_type == "code" and "raise NotImplementedError" in c.source
             and re.search(r"^check_\w+\(", c.source, re.M)]
    assert stubs, f"{path.name}: no auto-checked exercise stub"
    for i in stubs:
        checker = re.search(r"(check_\w+)\(", cells[i].source)
        assert checker and "seq2seq_lib.exercises" in cells[i].source, f"{path.name} cell {i}"
        # the unsolved stub says so in one line instead of raising
        shown = "".join(o.get("text", "") for o in cells[i].outputs)
        assert re.fullmatch(r"Exercise \d+\.\d+ is not solved yet: [^\n]*\n", shown), (
            f"{path.name} cell {i}: the stub's output is {shown!r}")
        after = cells[i + 1:]
        start = next(j for j, c in enumerate(after) if "{solution-start}" in c.source)
        solution = next(c for c in after[start:] if c.cell_type == "code")
        assert f"{checker.group(1)}(" in solution.source
        out = "".join(o.get("text", "") for o in solution.outputs)
        assert "all checks passed" in out, f"{path.name}: solution to {checker.group(1)} does not pass"


def test_nbval_ignore_output_is_only_for_progress_or_timing(notebook):
    path, nb = notebook
    for cell in code_cells(nb):
        if "nbval-ignore-output" in cell.metadata.get("tags", []) or "NBVAL_IGNORE_OUTPUT" in cell.source:
            assert re.search(r"train_or_load|train_(subword_)?translator|train_seq2seq|time|tqdm"
                             r"|benchmark|progress",
                             cell.source), (
                f"{path.name}: ignored output on a cell that is not about progress or timing"
            )


def test_config_names_repository_once_and_turns_execution_off():
    cfg = load_config()
    assert cfg["execute"]["execute_notebooks"] == "off"
    assert cfg["repository"]["url"].startswith("https://github.com/")
    assert "sphinx-mathjax-offline" in cfg["sphinx"]["extra_extensions"]
    assert cfg["launch_buttons"]["colab_url"] == "https://colab.research.google.com"


def test_bibliography_parses_and_has_the_required_papers():
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib"), bib_format="bibtex").entries
    required = {"hochreiter1997lstm", "bengio1994learning", "pascanu2013difficulty", "cho2014learning",
                "sutskever2014sequence", "bahdanau2015neural", "luong2015effective",
                "papineni2002bleu", "post2018call"}
    assert required <= set(entries)
    cited = set()
    pages = [ROOT / f"{f}.md" for f in toc_files() if (ROOT / f"{f}.md").exists()]
    for path in [*NOTEBOOKS, *pages]:
        cited |= set(re.findall(r"\{cite:[pt]\}`([^`]+)`", path.read_text(encoding="utf-8")))
    keys = {k.strip() for group in cited for k in group.split(",")}
    assert keys <= set(entries), f"cited but not in references.bib: {sorted(keys - set(entries))}"


def test_api_page_documents_every_module():
    documented = set(re.findall(r"automodule:: (seq2seq_lib[\w.]*)", api_pages_text()))
    package = ROOT / "seq2seq_lib"
    modules = {  # every module, and every subpackage (seq2seq_lib.exercises, .recipes)
        "seq2seq_lib." + ".".join(p.relative_to(package).with_suffix("").parts)
        for p in package.rglob("*.py") if p.name != "__init__.py"
    } | {"seq2seq_lib." + ".".join(p.parent.relative_to(package).parts)
         for p in package.rglob("__init__.py") if p.parent != package}
    assert modules - documented == set(), "add these modules (scripts/make_api_pages.py)"
    assert documented - modules == set(), "the API pages name modules that do not exist"


def test_api_pages_are_those_the_script_writes_one_per_chapter_in_order():
    """api/*.md are scripts/make_api_pages.py's output, each listed in _toc.yml under api,
    every module under its own heading, the modules in course order across the pages."""
    from scripts.make_api_pages import PAGES, page_text
    from seq2seq_lib import chapters

    assert [f for f in toc_files() if f.startswith("api/")] == [f"api/{p.name}" for p in PAGES]
    for page in PAGES:
        text = (ROOT / "api" / f"{page.name}.md").read_text(encoding="utf-8")
        assert text == page_text(page), f"api/{page.name}.md: run scripts/make_api_pages.py"
    listed = re.findall(r"automodule:: seq2seq_lib\.([\w.]+)", api_pages_text())
    headings = re.findall(r"^## `seq2seq_lib\.([\w.]+)`$", api_pages_text(), re.M)
    assert listed == headings == list(chapters.MODULE_CHAPTER)


def glossary_entries() -> list[tuple[list[str], int | None]]:
    """``(names, home chapter)`` of every glossary entry; the home chapter is the first one
    its text names ("Chapter 8.", "Chapters 2–3.")."""
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    body = text[text.index("```{glossary}") + len("```{glossary}"): text.rindex("```")]
    entries = []
    for block in body.strip().split("\n\n"):
        lines = block.splitlines()
        names = [line.strip() for line in lines if line and not line.startswith(" ")]
        home = re.search(r"Chapters? (\d+)", block)
        entries.append((names, int(home.group(1)) if home else None))
    return entries


def test_glossary_terms_are_linked_where_they_are_introduced():
    linked: dict[int, set[str]] = {}
    for path in chapter_paths():
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        targets = re.findall(r"\{term\}`(?:[^`<]*<)?([^`>]+)>?`", text)
        linked[int(path.name[:2])] = {t.strip().lower() for t in targets}
    entries = glossary_entries()
    assert len(entries) >= 35
    missing = [
        f"{names[0]} (chapter {home})" for names, home in entries
        if home in linked and not {n.lower() for n in names} & linked[home]
    ]
    assert not missing, f"glossary terms not linked in their chapter: {missing}"


def test_results_files_have_provenance():
    from seq2seq_lib import ablation
    from seq2seq_lib.recipes import ch11

    files = sorted((ROOT / "seq2seq_lib" / "results").glob("translator-*.json"))
    assert {p.name for p in files} >= {"translator-quick.json", "translator-controls-quick.json"}
    assert ablation.results_path("quick").parent == files[0].parent  # where chapter 11 reads
    for path in files:
        if path.name.startswith("translator-controls-"):
            rows, results = ablation.read_controls(path)
            assert path.name == f"translator-controls-{results['profile']}.json"
            # made from the controls the library defines now (rerun the script after a change)
            assert [r.label for r in rows] == list(ch11.control_jobs()), path.name
        else:
            rows, _, results = ablation.read_results(path)
            assert path.name == f"translator-{results['profile']}.json"
            # one row per variant the library defines now, and chapter 7's (chapter 11 reads
            # the rows it does not train from the quick file; rerun the script after a change)
            labels = [*ch11.VARIANTS, ablation.SEQ2SEQ_LABEL]
            assert sorted(r.label for r in rows) == sorted(labels), path.name
        provenance = results["provenance"]
        for key in ("command", "started_utc", "wall_seconds", "machine", "versions", "device"):
            assert provenance.get(key) not in (None, ""), f"{path.name}: no {key}"
        assert provenance["command"].startswith("python scripts/translator_results.py")


def test_readme_colab_badge_opens_a_chapter_of_the_notebook_edition():
    cfg = load_config()["repository"]
    owner_repo = cfg["url"].removeprefix("https://github.com/").rstrip("/")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"https://colab\.research\.google\.com/github/(\S+?)/blob/(\S+?)/(\S+?\.ipynb)",
                       text)
    assert links, "README has no Open-in-Colab badge"
    for repo, branch, notebook in links:
        assert (repo, branch) == (owner_repo, cfg.get("branch", "main"))
        assert notebook.startswith("notebooks/"), f"{notebook}: Colab should open the edition"
        assert (ROOT / notebook).is_file(), notebook


def test_no_library_module_reads_the_repository_checkout():
    """An installed copy (Colab: ``pip install git+...``) has no checkout around it: the
    library may read its own package folder (package data) but never a folder above it."""
    above = re.compile(r"__file__\)?(?:\.resolve\(\))?\.(?:parents\[\d+\]|parent\.parent)")
    for path in sorted((ROOT / "seq2seq_lib").rglob("*.py")):
        found = above.search(path.read_text(encoding="utf-8"))
        assert not found, f"{path.relative_to(ROOT)} reads outside the package: {found.group(0)}"


def _test_files_importing_conftest_or_changing_sys_path() -> list[str]:
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=name)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                modules = []
            if any(m.split(".")[0] == "conftest" for m in modules):
                found.append(f"{name}:{node.lineno}: imports from conftest (use tests/helpers.py)")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("insert", "append", "extend")
                    and ast.unparse(node.func.value) == "sys.path"):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node.func)}")
    return found


def test_tests_share_code_through_helpers_not_conftest_or_sys_path():
    """Plain helpers live in ``tests/helpers.py`` (fixtures in ``tests/conftest.py``: there are
    two conftest files, and importing one by name is fragile), and the scripts are imported
    as the package ``scripts``: no test file imports a conftest or changes ``sys.path``."""
    assert _test_files_importing_conftest_or_changing_sys_path() == []


def test_the_hangul_font_covers_every_korean_character_of_the_book():
    """The glossary's webfont (scripts/make_hangul_font.py) holds every Hangul character
    the pages use, under its own name, with its licence beside it."""
    from fontTools.ttLib import TTFont

    from scripts.make_hangul_font import FAMILY, OUTPUT, hangul_in_book

    font = TTFont(OUTPUT)
    assert font.flavor == "woff"
    covered = {chr(code) for code in font.getBestCmap()}
    used = hangul_in_book()
    assert len(used) >= 50, "the glossary's Korean terms are missing"
    missing = sorted(used - covered)
    assert not missing, f"not in the font (run scripts/make_hangul_font.py): {''.join(missing)}"
    assert font["name"].getDebugName(1) == FAMILY  # the OFL's reserved name is not used
    assert "SIL OPEN FONT LICENSE" in (OUTPUT.parent / "OFL.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(("text", "dropped"), [
    ("\r 10%|█         | 25/250 [00:03<00:30,  7.41it/s]", True),
    ("\r 10%|█         | 25/250 [01:03<09:30,  2.53s/it]", True),  # a slow machine
    ("\r\r", True),
    ("warning: the text's claim does not hold\n", False),
    ("50%|█████     | 5/10 no carriage return, it/s", False),
])
def test_progress_bars_are_dropped_from_stored_outputs_and_nothing_else(text, dropped):
    from scripts.execute_notebooks import is_progress_bar

    out = nbformat.v4.new_output("stream", name="stderr", text=text)
    assert is_progress_bar(out) is dropped
    assert not is_progress_bar(nbformat.v4.new_output("stream", name="stdout", text=text))


def test_a_printout_split_into_pieces_is_stored_as_one_output_per_stream():
    from scripts.execute_notebooks import join_streams

    def stream(name: str, text: str) -> nbformat.NotebookNode:
        return nbformat.v4.new_output("stream", name=name, text=text)

    shown = nbformat.v4.new_output("display_data", data={"text/plain": "x"})
    joined = join_streams([stream("stdout", "a\n"), stream("stdout", "b\n"),
                           stream("stderr", "w\n"), stream("stdout", "c\n"), shown,
                           stream("stdout", "d\n"), stream("stdout", "e")])
    assert [(o.output_type, o.get("name"), o.get("text")) for o in joined] == [
        ("stream", "stdout", "a\nb\n"), ("stream", "stderr", "w\n"),
        ("stream", "stdout", "c\n"), ("display_data", None, None),
        ("stream", "stdout", "d\ne")]
