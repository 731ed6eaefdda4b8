"""The rendered book in a real headless browser (Debian's chromium + chromedriver).

Needs a built book (``jupyter-book build -W -n --keep-going .``). Without the book or the
browser the tests are skipped locally, but fail under CI (``CI=true``), where both must exist.
Pages are served from 127.0.0.1; the browser has no other network, so math can only render
if MathJax is served by the book itself.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest
import yaml
from nbtools import figure_directives

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def _pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [ch["file"] for part in toc.get("parts", []) for ch in part["chapters"]]
    return [f"{f}.html" for f in files]


def _missing() -> str | None:
    if not (HTML / "index.html").exists():
        return "the book is not built (run: jupyter-book build -W -n --keep-going .)"
    if not (CHROMIUM and CHROMEDRIVER):
        return "Debian's chromium and chromium-driver are not installed"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must check the rendered book, but {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    handler = functools.partial(QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic", "--window-size=1280,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver, f"http://127.0.0.1:{server.server_address[1]}"
    driver.quit()
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


def _wait(driver, script: str, timeout: float = 30.0, what: str = "the page"):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout).until(lambda d: d.execute_script(script))
    except TimeoutException:
        pytest.fail(f"{what} not ready after {timeout:.0f} s ({driver.current_url}): {script}")


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
def test_chapter_has_colab_link_from_config(browser, page):
    driver, base = browser
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]["url"].removeprefix("https://github.com/").rstrip("/")
    expected = (f"https://colab.research.google.com/github/{repo}/blob/"
                f"{config['repository']['branch']}/{page.removesuffix('.html')}.ipynb")
    driver.get(f"{base}/{page}")
    _wait(driver, "return document.readyState === 'complete'")
    hrefs = driver.execute_script("return [...document.querySelectorAll('a')].map(a => a.href)")
    assert expected in hrefs, f"{page}: no Colab launch link {expected}"


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
