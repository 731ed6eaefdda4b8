"""The rendered book in a real headless browser (Debian's chromium + chromedriver).

Needs a built book (``jupyter-book build -W -n --keep-going .``). Without the book or the
browser the tests are skipped locally, but fail under CI (``CI=true``), where both must exist.
Pages are served from 127.0.0.1; the browser has no other network, so math can only render
if MathJax is served by the book itself.
"""

from __future__ import annotations

import re

import pytest
import yaml
from helpers import ROOT, missing, serve_and_browse, skip_or_fail
from helpers import wait_for as _wait

from scripts.nbtools import figure_directives

HTML = ROOT / "_build" / "html"


def _pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [f for part in toc.get("parts", []) for ch in part["chapters"]
                             for f in (ch["file"], *(s["file"] for s in ch.get("sections", [])))]
    return [f"{f}.html" for f in files]


# The page the browser shows and its window width, kept so that the checks of one page (run
# one after another, see tests/conftest.py) load it once. A check that changes the page or
# needs a fresh load (console messages, a phone's width, a click) loads it anew.
_shown: dict[str, tuple[str, int] | None] = {"page": None}


def _load(driver, url: str, width: int = 1280, *, fresh: bool = False) -> None:
    """Show ``url`` at ``width`` px, loaded and complete; reuse the page already shown
    unless ``fresh``."""
    if not fresh and _shown["page"] == (url, width):
        return
    _shown["page"] = None
    driver.set_window_size(width, 900)
    driver.get(url)
    _wait(driver, "return document.readyState === 'complete'")
    _shown["page"] = (url, width)


@pytest.fixture(scope="module")
def browser():
    if not (HTML / "index.html").exists():
        skip_or_fail("the book is not built (run: jupyter-book build -W -n --keep-going .)")
    reason = missing()
    if reason:
        skip_or_fail(reason)
    with serve_and_browse(HTML) as (driver, base):
        yield driver, base


def _typeset(driver) -> bool:
    """Wait until MathJax has typeset the page; ``False`` when the page has no math."""
    if not driver.execute_script("return document.querySelectorAll('.math').length > 0"):
        return False
    # MathJax 3 replaces every math element by <mjx-container>; wait for typesetting.
    _wait(driver, "return window.MathJax && MathJax.startup && MathJax.startup.promise"
                  " && document.querySelectorAll('mjx-container').length > 0",
          what="MathJax typesetting")
    driver.execute_script("return MathJax.startup.promise")
    return True


@pytest.mark.parametrize("page", _pages())
def test_page_loads_with_math_images_and_only_local_requests(browser, page):
    driver, base = browser
    _load(driver, f"{base}/{page}")
    assert driver.title and "404" not in driver.title, f"{page}: did not load ({driver.title!r})"
    if _typeset(driver):
        untypeset = driver.execute_script(
            "return [...document.querySelectorAll('.math')]"
            ".filter(e => !e.querySelector('mjx-container') && e.tagName !== 'MJX-CONTAINER').length")
        assert untypeset == 0, f"{page}: {untypeset} math elements were not typeset"
        errors = driver.execute_script("return document.querySelectorAll('mjx-merror').length")
        assert errors == 0, f"{page}: MathJax reported {errors} errors"
    broken = driver.execute_script(
        "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    assert broken == [], f"{page}: images that did not load: {broken}"
    external = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
        ".filter(u => !u.startsWith(location.origin) && !u.startsWith('data:'))")
    assert external == [], f"{page}: requests outside the book: {external}"


# The figures of a page: the <img> of every {figure} directive (the SVGs of figures/).
FIGURE_IMAGES = "[...document.querySelectorAll('figure img')].filter(i => i.src.endsWith('.svg'))"


@pytest.mark.parametrize("page", [p for p in _pages() if p.startswith("chapters/")])
def test_chapter_figures_load(browser, page):
    driver, base = browser
    expected = sorted(image.name for image, _ in figure_directives(ROOT / page.replace(".html", ".ipynb")))
    assert expected, f"{page}: the chapter shows no figure"
    _load(driver, f"{base}/{page}")
    driver.execute_script(f"{FIGURE_IMAGES}.forEach(i => {{ i.loading = 'eager'; }})")
    _wait(driver, f"return {FIGURE_IMAGES}.every(i => i.complete)", what="the figures")
    found = driver.execute_script(
        f"return {FIGURE_IMAGES}.map(i => [i.src.split('/').pop(), i.naturalWidth, i.alt])")
    assert sorted(name for name, _, _ in found) == expected, f"{page}: figures on the page"
    for name, width, alt in found:
        assert width > 0, f"{page}: {name} did not load"
        assert alt.strip(), f"{page}: {name} has no alt text"


# For every text node with Hangul: draw its Hangul on a canvas in the node's font, and draw as
# many characters that no font has (U+0378 is unassigned). Without a Hangul font the browser
# draws the same missing-glyph box for both, and the two images are equal.
HANGUL_PROBE = r"""
const walker = document.createTreeWalker(document.querySelector('main') || document.body,
                                         NodeFilter.SHOW_TEXT);
const draw = (text, font) => {
  const canvas = document.createElement('canvas');
  canvas.width = 40 * text.length; canvas.height = 80;
  const g = canvas.getContext('2d');
  g.font = font; g.fillText(text, 4, 56);
  return canvas.toDataURL();
};
const checked = [], boxes = [];
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const hangul = (node.textContent.match(/[가-힣]+/g) || []).join('').slice(0, 12);
  if (!hangul) continue;
  const font = getComputedStyle(node.parentElement).font;
  checked.push(hangul);
  if (draw(hangul, font) === draw('͸'.repeat(hangul.length), font)) boxes.push(hangul);
}
return [checked, boxes];
"""


def test_glossary_korean_terms_render_with_a_hangul_font(browser):
    driver, base = browser
    _load(driver, f"{base}/glossary.html")
    checked, boxes = driver.execute_script(HANGUL_PROBE)
    assert len(checked) >= 10, f"expected the glossary's Korean terms, found {checked}"
    assert not boxes, (f"{len(boxes)} of {len(checked)} Korean terms render as missing-glyph boxes "
                       f"(no Hangul font; Debian: fonts-nanum), e.g. {boxes[:3]}")
    loaded = driver.execute_script(
        "return document.fonts.ready.then(() => [...document.fonts]"
        ".filter(f => f.family.replace(/\"/g, '') === 'Course Hangul').map(f => f.status))")
    assert loaded == ["loaded"], f"the book's Hangul font (_static/fonts): {loaded}"


@pytest.mark.parametrize("page", [p for p in _pages() if p.startswith("chapters/")])
def test_chapter_buttons_open_the_notebook_edition(browser, page):
    """The Colab button opens notebooks/NN_topic.ipynb (the notebook edition), and so does the
    .ipynb download button: it serves the edition's bytes, not the MyST source."""
    driver, base = browser
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]["url"].removeprefix("https://github.com/").rstrip("/")
    name = page.removeprefix("chapters/").removesuffix(".html")
    expected = (f"https://colab.research.google.com/github/{repo}/blob/"
                f"{config['repository']['branch']}/notebooks/{name}.ipynb")
    _load(driver, f"{base}/{page}")
    hrefs = driver.execute_script("return [...document.querySelectorAll('a')].map(a => a.href)")
    assert expected in hrefs, f"{page}: no Colab launch link {expected}"
    assert not [h for h in hrefs if "colab.research.google.com" in h and h != expected]
    download = f"{base}/_sources/chapters/{name}.ipynb"
    assert download in hrefs, f"{page}: no .ipynb download link {download}"
    served = (HTML / "_sources" / "chapters" / f"{name}.ipynb").read_bytes()
    assert served == (ROOT / "notebooks" / f"{name}.ipynb").read_bytes()


@pytest.mark.parametrize("page", [p for p in _pages() if p.startswith("chapters/")])
def test_no_error_box_on_a_chapter_page(browser, page):
    driver, base = browser
    _load(driver, f"{base}/{page}")
    boxes = driver.execute_script(
        "return [...document.querySelectorAll('.output.traceback, .output.error')]"
        ".map(e => e.innerText.slice(0, 80))")
    assert boxes == [], f"{page}: error outputs shown: {boxes}"


def test_exercise_solutions_are_folded(browser):
    driver, base = browser
    chapters = [p for p in _pages() if p.startswith("chapters/")]
    _load(driver, f"{base}/{chapters[0]}")
    exercises = driver.execute_script("return document.querySelectorAll('.exercise').length")
    solutions = driver.execute_script(
        "return [...document.querySelectorAll('.solution')].map(s => s.classList.contains('dropdown'))")
    assert exercises >= 3
    assert solutions and all(solutions), "every solution should be a folded dropdown"


@pytest.mark.parametrize("page", _pages())
def test_no_console_error_on_a_page(browser, page):
    """No script on the page fails (sphinx-thebe's config script once declared its constant
    twice; the theme complained of an empty colour mode)."""
    driver, base = browser
    driver.get_log("browser")  # drop what earlier pages logged
    _load(driver, f"{base}/{page}", fresh=True)
    errors = [e["message"][:160] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], f"{page}: console errors {errors}"


@pytest.mark.parametrize("page", _pages())
def test_a_phone_does_not_scroll_the_page_sideways(browser, page):
    """At 390 px nothing widens the page itself (wide outputs scroll inside their own box)."""
    driver, base = browser
    try:
        _load(driver, f"{base}/{page}", width=390, fresh=True)
        wide, width = driver.execute_script(
            "return [document.scrollingElement.scrollWidth, "
            "document.documentElement.clientWidth]")
    finally:
        _shown["page"] = None  # laid out for a phone: the next check loads anew
        driver.set_window_size(1280, 900)
    assert wide <= width, f"{page}: the page is {wide} px wide in a {width} px window"


def test_one_search_entry_point_and_a_favicon(browser):
    driver, base = browser
    _load(driver, f"{base}/chapters/01_bptt.html")
    visible = driver.execute_script(
        "return [...document.querySelectorAll('.search-button-field, .search-button')]"
        ".filter(e => e.offsetParent !== null).length")
    assert visible == 1, f"{visible} visible search buttons at 1280 px"
    icon = driver.execute_script(
        "const l = document.querySelector('link[rel=icon]'); return l && l.href")
    assert icon, "no favicon link"
    status = driver.execute_script(
        "const r = new XMLHttpRequest(); r.open('GET', arguments[0], false); r.send();"
        "return [r.status, r.responseText.slice(0, 5)]", icon)
    assert status == [200, "<svg "], f"favicon {icon}: {status}"


def test_bibliography_labels_are_author_year_as_the_chapters_cite(browser):
    driver, base = browser
    _load(driver, f"{base}/bibliography.html")
    labels = driver.execute_script(
        "return [...document.querySelectorAll('.citation .label, dt.label')]"
        ".map(e => e.innerText.trim())")
    assert len(labels) >= 30, labels
    pattern = re.compile(r"^\[[^\[\],]+(?: & [^\[\],]+| et al\.)?, \d{4}[a-z]?\]$")
    odd = [label for label in labels if not pattern.match(label)]
    assert odd == [], f"labels not in author-year form: {odd[:5]}"
    assert len(set(labels)) == len(labels), "two entries share a label"


@pytest.mark.parametrize("page", _pages())
def test_display_equations_fit_the_text_column(browser, page):
    """At 1280 px no display equation of a page (chapters, API reference, ...) is wider than
    the column it sits in (a long one is broken over lines with ``aligned`` or ``split``)."""
    driver, base = browser
    _load(driver, f"{base}/{page}")
    if not _typeset(driver):
        return
    wide = driver.execute_script(
        "return [...document.querySelectorAll('mjx-container[display=\"true\"]')]"
        ".filter(m => m.firstElementChild && m.firstElementChild.getBoundingClientRect().width"
        " > m.parentElement.getBoundingClientRect().width + 1)"
        ".map(m => m.textContent.slice(0, 50))")
    assert wide == [], f"{page}: display equations wider than the column: {wide}"


@pytest.mark.parametrize("page", [p for p in _pages() if p.startswith("chapters/")])
def test_outputs_tables_and_images_fit_their_box(browser, page):
    """At 1280 px no printed output, table or image of a chapter is wider than its box: no
    result hides behind a sideways scroll bar (a long printed line wraps instead)."""
    driver, base = browser
    _load(driver, f"{base}/{page}")
    wide = driver.execute_script("""
        const column = document.querySelector('.bd-article').getBoundingClientRect();
        const out = [];
        for (const el of document.querySelectorAll(
            '.bd-article .cell_output pre, .bd-article table, .bd-article img')) {
          const box = el.getBoundingClientRect();
          if (el.scrollWidth > el.clientWidth + 1 || box.right > column.right + 1)
            out.push(el.tagName + ' ' + (el.innerText || el.getAttribute('src')).slice(0, 60));
        }
        return out;""")
    assert wide == [], f"{page}: wider than their box: {wide}"


def test_an_80_character_output_line_fits_the_column_without_wrapping(browser):
    """Column-aligned printouts are at most 80 characters wide (test_project_files checks the
    notebooks); here: such a line fits one line of an output box at 1280 px."""
    driver, base = browser
    _load(driver, f"{base}/chapters/07_seq2seq.html")
    fits = driver.execute_script("""
        const pre = document.querySelector('.bd-article .cell_output pre');
        const line = document.createElement('span');
        line.textContent = 'x'.repeat(80);
        line.style.whiteSpace = 'nowrap';
        pre.appendChild(line);
        const cs = getComputedStyle(pre);
        const room = pre.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        const width = line.getBoundingClientRect().width;
        line.remove();
        return [width, room];""")
    assert fits[0] <= fits[1], f"80 characters take {fits[0]:.0f} px of {fits[1]:.0f} px"


@pytest.mark.parametrize("page", [p for p in _pages() if p.startswith("chapters/")])
def test_plots_have_alt_text_that_describes_them(browser, page):
    """Every image of a chapter has alt text, and a plot's is a description, not a file."""
    driver, base = browser
    _load(driver, f"{base}/{page}")
    alts = driver.execute_script(
        "return [...document.querySelectorAll('.bd-article img')]"
        ".map(i => [i.getAttribute('src'), i.getAttribute('alt') || ''])")
    assert alts, f"{page}: no image"
    bad = [src for src, alt in alts
           if len(alt.split()) < 4 or re.search(r"\.(png|svg|jpe?g)\b|_images/", alt)]
    assert bad == [], f"{page}: images without a describing alt text: {bad}"


def test_a_click_enlarges_a_figure_and_escape_closes_it(browser):
    """Figures and plots open enlarged over the page (_static/enlarge.js)."""
    driver, base = browser
    _load(driver, f"{base}/chapters/08_attention.html", fresh=True)
    _shown["page"] = None  # clicked and scrolled: the next check loads anew
    from selenium.webdriver.common.keys import Keys

    images = [img for img in driver.find_elements("css selector", ".bd-article img.enlargeable")
              if img.is_displayed()]
    assert len(images) >= 2, "fewer than two visible enlargeable images on the page"
    for img in (images[0], images[-1]):  # a diagram (SVG) and a plot (PNG)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
        img.click()
        shown = driver.execute_script(
            "const o = document.querySelector('.enlarged-image img');"
            "if (!o) return null; const r = o.getBoundingClientRect();"
            "return [o.getAttribute('src') === arguments[0].getAttribute('src') ||"
            " o.src === arguments[0].src, r.width, arguments[0].getBoundingClientRect().width]",
            img)
        assert shown is not None, "no enlarged image after the click"
        assert shown[0], "the enlarged image is another image"
        assert shown[1] > shown[2], f"not larger: {shown[1]:.0f} px vs {shown[2]:.0f} px"
        driver.find_element("tag name", "body").send_keys(Keys.ESCAPE)
        assert driver.execute_script("return document.querySelector('.enlarged-image')") is None


RAW_TEX = re.compile(r"\\(?:operatorname|mathbf|mathcal|frac|partial|sum|prod|tilde|mathrm|begin"
                     r"|end|alpha|epsilon|log|cdot|odot|lVert|rVert|text)\b|\$\S[^$\n]*\\[A-Za-z]")


@pytest.mark.parametrize("page", _pages())
def test_no_raw_tex_in_the_text(browser, page):
    """Every formula is typeset: the page's text, outside code and typeset math, shows no
    TeX commands (a ``$`` that Markdown did not see as math leaves ``\\partial`` in view)."""
    driver, base = browser
    _load(driver, f"{base}/{page}")
    _typeset(driver)
    text = driver.execute_script("""
        const article = document.querySelector('.bd-article').cloneNode(true);
        for (const el of article.querySelectorAll(
            'pre, code, mjx-container, script, style, .highlight, .MathJax'))
          el.remove();
        return article.textContent;""")
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(text)})
    assert raw == [], f"{page}: raw TeX in the text: {raw[:5]}"
