"""Tests of seq2seq_lib.synthetic: the dates → ISO task."""

from __future__ import annotations

import datetime as dt
import doctest

import pytest
import torch

from seq2seq_lib import synthetic as S
from seq2seq_lib.batches import SPLITS, collate

# An independent reading of the English dates (not using the module's tables).
ORDINALS = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth "
    "twenty-first twenty-second twenty-third twenty-fourth twenty-fifth twenty-sixth "
    "twenty-seventh twenty-eighth twenty-ninth thirtieth thirty-first"
).split()
MONTH_NAMES = [dt.date(2000, m, 1).strftime("%B").lower() for m in range(1, 13)]
WEEKDAY_NAMES = [dt.date(2024, 1, d).strftime("%A").lower() for d in range(1, 8)]  # Mon first


def parse_english_date(tokens: list[str]) -> tuple[dt.date, str | None]:
    """The date that ``tokens`` names, and the weekday word if there is one."""
    year = month = day = None
    weekday = None
    for t in tokens:
        if t.isdigit() and len(t) == 4:
            year = int(t)
        elif t.isdigit():
            day = int(t)
        elif t in ORDINALS:
            day = ORDINALS.index(t) + 1
        elif t[:-2].isdigit() and t[-2:] in ("st", "nd", "rd", "th"):
            day = int(t[:-2])
        elif t in WEEKDAY_NAMES:
            weekday = t
        else:
            for m, name in enumerate(MONTH_NAMES, start=1):
                if t in (name, name[:3]):
                    month = m
    assert year and month and day, f"cannot read a date from {tokens}"
    return dt.date(year, month, day), weekday


def test_ordinals() -> None:
    assert [S.ordinal_word(d) for d in range(1, 32)] == ORDINALS
    suffixes = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th",
                21: "21st", 22: "22nd", 23: "23rd", 30: "30th", 31: "31st"}
    assert {d: S.ordinal_suffix(d) for d in suffixes} == suffixes
    for bad in (0, 32):
        with pytest.raises(ValueError, match="day"):
            S.ordinal_word(bad)


def test_format_date_examples() -> None:
    date = dt.date(1997, 3, 3)  # a Monday
    assert S.format_date(date, "ordinal_words") == "the third of march 1997"
    assert S.format_date(date, "month_day_year") == "march 3, 1997"
    assert S.format_date(date, "day_month_year") == "3 march 1997"
    assert S.format_date(date, "abbrev") == "mar 3 1997"
    assert S.format_date(date, "day_suffix") == "3rd march 1997"
    assert S.format_date(date, "weekday") == "monday, march 3rd, 1997"
    with pytest.raises(ValueError, match="unknown date style"):
        S.format_date(date, "klingon")


def test_date_pairs_are_correct_translations() -> None:
    pairs = S.date_pairs(3000, seed=7)
    seen_formats = set()
    for source, target in pairs:
        iso = "".join(target)
        date = dt.date.fromisoformat(iso)
        assert target == list(iso) and len(target) == 10
        parsed, weekday = parse_english_date(source)
        assert parsed == date, (source, iso)
        if weekday is not None:
            assert weekday == WEEKDAY_NAMES[date.weekday()]
        assert 1950 <= date.year <= 2049
        seen_formats.add((source[0] == "the", "," in source, weekday is not None))
    assert len(seen_formats) >= 3  # several source formats really occur


def test_date_pairs_are_deterministic_and_configurable() -> None:
    assert S.date_pairs(50, seed=1) == S.date_pairs(50, seed=1)
    assert S.date_pairs(50, seed=1) != S.date_pairs(50, seed=2)
    only = S.date_pairs(100, seed=0, formats=("ordinal_words",), first_year=2000, last_year=2000)
    assert all(src[0] == "the" and src[-1] == "2000" for src, _ in only)
    assert S.date_pairs(0) == []
    with pytest.raises(ValueError, match="formats"):
        S.date_pairs(5, formats=("bad",))
    with pytest.raises(ValueError, match="first_year"):
        S.date_pairs(5, first_year=2000, last_year=1999)
    with pytest.raises(ValueError, match="n must"):
        S.date_pairs(-1)


def test_synthetic_data_uses_the_common_pipeline() -> None:
    data = S.date_data(2000, seed=0)
    keys = [{" ".join(src) for src, _ in data.split(n)} for n in SPLITS]
    assert not (keys[0] & keys[1] or keys[0] & keys[2] or keys[1] & keys[2])
    assert sum(len(data.split(n)) for n in SPLITS) == 2000
    batch = next(iter(data.loader("train", 16)))
    assert batch.src.shape[0] == 16
    assert batch.tgt_out.max() < len(data.tgt_vocab)
    decoded = [data.tgt_vocab.decode(row) for row in batch.tgt_out]
    assert all(len(d) >= 1 for d in decoded)


def test_date_vocab_is_characters() -> None:
    data = S.date_data(2000, seed=0)
    assert sorted(data.tgt_vocab.itos[4:]) == sorted("0123456789-")
    example = data.dataset("test")[0]
    batch = collate([example])
    assert "".join(data.tgt_vocab.decode(batch.tgt_out[0])) == "".join(data.test[0][1])
    assert torch.equal(batch.tgt_in[0, 1:], batch.tgt_out[0, :-1])


def test_doctests() -> None:
    assert doctest.testmod(S).failed == 0
