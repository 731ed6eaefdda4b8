"""The chapter-11 checker accepts a correct solution and explains the usual mistakes."""

from __future__ import annotations

import pytest

from seq2seq_lib.exercises.ch11 import check_replace_unknowns


def correct(output, source, weights):
    return [source[int(weights[t].argmax())] if w == "<unk>" else w
            for t, w in enumerate(output)]


def off_by_one(output, source, weights):  # uses the row of the next step
    return [source[int(weights[t + 1].argmax())] if w == "<unk>" else w
            for t, w in enumerate(output)]


def last_maximum(output, source, weights):
    out = []
    for t, w in enumerate(output):
        row = weights[t].tolist()
        out.append(source[len(row) - 1 - row[::-1].index(max(row))] if w == "<unk>" else w)
    return out


def in_place(output, source, weights):
    for t, w in enumerate(output):
        if w == "<unk>":
            output[t] = source[int(weights[t].argmax())]
    return output


def every_word(output, source, weights):
    return [source[int(weights[t].argmax())] for t in range(len(output))]


def test_correct_solution_passes(capsys):
    check_replace_unknowns(correct)
    assert capsys.readouterr().out == "Exercise 11.1: all checks passed.\n"


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (off_by_one, "one <unk>, aligned with source word 3"),
        (last_maximum, "a tie"),
        (in_place, "modified"),
        (every_word, "no <unk>"),
        (lambda o, s, w: tuple(o), "return a list"),
    ],
)
def test_mistakes_are_explained(fn, message):
    with pytest.raises(AssertionError, match=message):
        check_replace_unknowns(fn)
