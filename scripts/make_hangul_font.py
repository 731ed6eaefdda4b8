"""Make the glossary's Korean webfont: the Hangul the book uses, cut from NanumGothic.

The glossary gives the Korean term for every entry. A reader without a Korean system font
would see empty boxes, so the book ships a font holding exactly the Hangul characters that
its pages use (a few kilobytes instead of NanumGothic's 4 MB), as ``_static/fonts/``
``course-hangul.woff``; ``_static/book.css`` declares it for the Hangul code points only.

NanumGothic (NAVER Corporation) is licensed under the SIL Open Font License 1.1, copied to
``_static/fonts/OFL.txt``. The licence reserves the name "NanumGothic" for the original, so
the subset is renamed "Course Hangul".

Run it after adding Korean text to a page::

    python scripts/make_hangul_font.py [path/to/NanumGothic.ttf]

(Debian and Ubuntu: ``apt install fonts-nanum`` puts it in ``/usr/share/fonts/truetype/nanum``.)
"""

from __future__ import annotations

import argparse
import io
import logging
import re
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
OUTPUT = ROOT / "_static" / "fonts" / "course-hangul.woff"
FAMILY = "Course Hangul"
HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
"""Hangul Jamo, Hangul Compatibility Jamo and Hangul Syllables."""


def book_pages(root: Path = ROOT) -> list[Path]:
    """The book's sources: its markdown pages and its chapter notebooks."""
    return sorted([*root.glob("*.md"), *(root / "chapters").glob("*.ipynb")])


def hangul_in_book(root: Path = ROOT) -> set[str]:
    """Every Hangul character of the book's pages."""
    return {ch for page in book_pages(root) for ch in HANGUL.findall(page.read_text("utf-8"))}


def make_font(source: Path, characters: set[str]) -> bytes:
    """A WOFF font of ``source``'s glyphs for ``characters``, renamed to :data:`FAMILY`."""
    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)  # (its hinting sources)
    font = TTFont(source)
    options = subset.Options()
    options.flavor = "woff"
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6]
    options.layout_features = []
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(ch) for ch in characters))
    subsetter.subset(font)
    names = font["name"]
    for record in list(names.names):
        if record.nameID in (1, 4, 16):
            names.setName(FAMILY, record.nameID, record.platformID, record.platEncID,
                          record.langID)
        elif record.nameID == 6:
            names.setName(FAMILY.replace(" ", ""), record.nameID, record.platformID,
                          record.platEncID, record.langID)
        elif record.nameID == 3:
            names.setName(f"{FAMILY} (subset of NanumGothic)", record.nameID,
                          record.platformID, record.platEncID, record.langID)
    font["head"].modified = font["head"].created  # the same bytes on every run
    buffer = io.BytesIO()
    font.flavor = "woff"
    font.save(buffer, reorderTables=True)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, default=SOURCE,
                        help=f"NanumGothic.ttf (default: {SOURCE})")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"make_hangul_font: {args.source} not found (Debian: apt install fonts-nanum)",
              file=sys.stderr)
        return 1
    characters = hangul_in_book()
    data = make_font(args.source, characters)
    tmp = args.output.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(args.output)
    print(f"{args.output.relative_to(ROOT)}: {len(characters)} characters, {len(data):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
