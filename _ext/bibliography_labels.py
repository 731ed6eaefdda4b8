"""Sphinx extension: author–year labels in the bibliography.

The chapters cite author–year ("Cho et al. (2014)"), but pybtex's default ``alpha`` style
labels the bibliography's entries by initials (``[CvMerrienboerBB14]``), so a reader cannot
match a citation with its entry at a glance. This registers a pybtex formatting style,
``author_year_labels``, that is ``alpha`` with labels written as the chapters cite:
``[Hochreiter & Schmidhuber, 1997]``, ``[Cho et al., 2014]``. Two papers of the same
authors and year are told apart by the year field itself (``2015a``, ``2015b`` in
``references.bib``), which the in-text citations show too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.labels import BaseLabelStyle

STYLE = "author_year_labels"


def _surname(person: Any) -> str:
    """``van Merriënboer``: prefix and last names, LaTeX accents and braces resolved."""
    return str(Text.from_latex(" ".join([*person.prelast_names, *person.last_names])))


def author_year(entry: Any) -> str:
    """``Last, year``, ``Last & Last, year`` or ``Last et al., year``."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(p) for p in people]
    if not names:
        who = str(Text.from_latex(entry.fields.get("title", entry.key)))
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} & {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    """Labels as the chapters cite; a repeated label (not expected) gets a number."""

    def format_labels(self, sorted_entries: Iterable[Any]) -> Iterator[str]:
        seen: dict[str, int] = {}
        for entry in sorted_entries:
            label = author_year(entry)
            seen[label] = seen.get(label, 0) + 1
            yield label if seen[label] == 1 else f"{label} ({seen[label]})"


class AuthorYearStyle(AlphaStyle):
    default_label_style = STYLE


def setup(app: Any) -> dict[str, Any]:
    register_plugin("pybtex.style.labels", STYLE, AuthorYearLabels)
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
