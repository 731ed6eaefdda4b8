"""A small offline translation task: dates in words → ISO dates.

It trains in seconds on a CPU and has one right answer, so a chapter can show an
encoder–decoder (chapter 6) or attention alignments (chapter 8) on it before the real corpus.
It returns the same
``(source tokens, target tokens)`` pairs as the English–French pipeline, so
:meth:`seq2seq_lib.batches.TranslationData.from_pairs`, :class:`~seq2seq_lib.vocab.Vocab` and
:func:`~seq2seq_lib.batches.collate` work unchanged.

**Dates.** A random date between ``1 January first_year`` and ``31 December last_year`` is
written in one of several English formats (source, word tokens made by
:func:`seq2seq_lib.vocab.tokenize`) and as ISO 8601 (target, one token per character)::

    "the third of march 1997"     -> 1 9 9 7 - 0 3 - 0 3
    "march 3, 1997"               -> (same)
    "3 march 1997"  "mar 3 1997"  "3rd march 1997"  "monday, march 3rd, 1997"

Everything is drawn from ``random.Random(seed)``: the same seed gives the same pairs on every
machine and Python version.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from seq2seq_lib.batches import TranslationData
from seq2seq_lib.vocab import TokenPair, tokenize

MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_UNITS = (
    "", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth",
)


def ordinal_word(day: int) -> str:
    """``3`` → ``"third"``, ``21`` → ``"twenty-first"``, ``30`` → ``"thirtieth"`` (1 to 31)."""
    if not 1 <= day <= 31:
        raise ValueError(f"day must be in 1..31, got {day}")
    if day < 20:
        return _UNITS[day]
    tens = {2: "twenty", 3: "thirty"}[day // 10]
    if day % 10 == 0:
        return tens[:-1] + "ieth"
    return f"{tens}-{_UNITS[day % 10]}"


def ordinal_suffix(day: int) -> str:
    """``1`` → ``"1st"``, ``2`` → ``"2nd"``, ``11`` → ``"11th"``, ``23`` → ``"23rd"``."""
    if 11 <= day % 100 <= 13:
        return f"{day}th"
    return f"{day}{({1: 'st', 2: 'nd', 3: 'rd'}).get(day % 10, 'th')}"


DATE_FORMATS = ("ordinal_words", "month_day_year", "day_month_year", "abbrev",
                "day_suffix", "weekday")


def format_date(date: dt.date, style: str) -> str:
    """Write ``date`` in English in one of :data:`DATE_FORMATS`."""
    month, day, year = MONTHS[date.month - 1], date.day, date.year
    if style == "ordinal_words":
        return f"the {ordinal_word(day)} of {month} {year}"
    if style == "month_day_year":
        return f"{month} {day}, {year}"
    if style == "day_month_year":
        return f"{day} {month} {year}"
    if style == "abbrev":
        return f"{month[:3]} {day} {year}"
    if style == "day_suffix":
        return f"{ordinal_suffix(day)} {month} {year}"
    if style == "weekday":
        return f"{WEEKDAYS[date.weekday()]}, {month} {ordinal_suffix(day)}, {year}"
    raise ValueError(f"unknown date style {style!r}; choose from {DATE_FORMATS}")


def date_pairs(
    n: int,
    *,
    seed: int = 0,
    first_year: int = 1950,
    last_year: int = 2049,
    formats: tuple[str, ...] = DATE_FORMATS,
) -> list[TokenPair]:
    """``n`` pairs (English date tokens, ISO date characters), drawn from ``seed``.

    >>> source, target = date_pairs(1, seed=0)[0]
    >>> source, "".join(target)
    (['feb', '15', '2019'], '2019-02-15')
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 1 <= first_year <= last_year <= 9999:
        raise ValueError(
            f"need 1 <= first_year <= last_year <= 9999, got {first_year}, {last_year}"
        )
    unknown = set(formats) - set(DATE_FORMATS)
    if not formats or unknown:
        raise ValueError(f"formats must be a non-empty subset of {DATE_FORMATS}, got {formats}")
    rng = random.Random(seed)
    start = dt.date(first_year, 1, 1).toordinal()
    end = dt.date(last_year, 12, 31).toordinal()
    pairs: list[TokenPair] = []
    for _ in range(n):
        date = dt.date.fromordinal(rng.randint(start, end))
        style = rng.choice(formats)
        pairs.append((tokenize(format_date(date, style)), list(date.isoformat())))
    return pairs


def date_data(n: int = 20_000, *, seed: int = 0, **kwargs: Any) -> TranslationData:
    """:func:`date_pairs` split by source sentence (80/10/10) with vocabularies from train."""
    return TranslationData.from_pairs(date_pairs(n, seed=seed, **kwargs), name="dates", seed=seed)
