"""The rendered book in a real headless browser (Debian's chromium + chromedriver).

Needs a built book (``jupyter-book build -W -n --keep-going .``). Without the book or the
browser the tests are skipped locally, but fail under CI (``CI=true``), where both must exist.
Pages are served from 127.0.0.1; the browser has no other network, so math can only render
if MathJax is served by the book itself.
"""

from __future__ import annotations

import pytest
import yaml
from helpers import ROOT, missing, serve_and_browse, skip_or_fail
from helpers import wait_for as _wait

from scripts.nbtools import figure_directives

HTML = ROOT / "_build" / "html"


def _pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [ch["file"] for part in toc.get("parts", []) for ch in part["chapters"]]
    return [f"{f}.html" for f in files]


@pytest.fixture(scope="module")
def browser():
    if not (HTML / "index.html").exists():
        skip_or_fail("the book is not built (run: jupyter-book build -W -n --keep-going .)")
    reason = missing()
    if reason:
        skip_or_fail(reason)
    with serve_and_browse(HTML) as (driver, base):
        yield driver, base


@pytest.mark.parametrize("page", _pages())
def test_page_loads_with_math_images_and_only_local_requests(browser, page):
    driver, base = browser
    driver.get(f"{base}/{page}")
    _wait(driver, "return document.readyState === 'complete'")
    assert driver.title and "404" not in driver.title, f"{page}: did not load ({driver.title!r})"
    has_math = driver.execute_script("return document.querySelectorAll('.math').length > 0")
    if has_math:
        # MathJax 3 replaces every math element by <mjx-container>; wait for typesetting.
        _wait(driver, "return window.MathJax && MathJax.startup && MathJax.startup.promise"
                      " && document.querySelectorAll('mjx-container').length > 0",
              what="MathJax typesetting")
        driver.execute_script("return MathJax.startup.promise")
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
    driver.get(f"{base}/{page}")
    _wait(driver, "return document.readyState === 'complete'")
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
    driver.get(f"{base}/glossary.html")
    _wait(driver, "return document.readyState === 'complete'")
    checked, boxes = driver.execute_script(HANGUL_PROBE)
    assert len(checked) >= 10, f"expected the glossary's Korean terms, found {checked}"
    assert not boxes, (f"{len(boxes)} of {len(checked)} Korean terms render as missing-glyph boxes "
                       f"(no Hangul font; Debian: fonts-nanum), e.g. {boxes[:3]}")


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
    driver.get(f"{base}/{page}")
    _wait(driver, "return document.readyState === 'complete'")
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
    driver.get(f"{base}/{page}")
    _wait(driver, "return document.readyState === 'complete'")
    boxes = driver.execute_script(
        "return [...document.querySelectorAll('.output.traceback, .output.error')]"
        ".map(e => e.innerText.slice(0, 80))")
    assert boxes == [], f"{page}: error outputs shown: {boxes}"


def test_exercise_solutions_are_folded(browser):
    driver, base = browser
    chapters = [p for p in _pages() if p.startswith("chapters/")]
    driver.get(f"{base}/{chapters[0]}")
    _wait(driver, "return document.readyState === 'complete'")
    exercises = driver.execute_script("return document.querySelectorAll('.exercise').length")
    solutions = driver.execute_script(
        "return [...document.querySelectorAll('.solution')].map(s => s.classList.contains('dropdown'))")
    assert exercises >= 3
    assert solutions and all(solutions), "every solution should be a folded dropdown"
