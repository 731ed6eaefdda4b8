"""Exercise checkers: helpful failures, and the chapter-1 checkers both ways."""

import pytest
import torch
from helpers import own_bptt, own_segment

from seq2seq_lib import bptt
from seq2seq_lib.exercises import assert_close, assert_shape, passed
from seq2seq_lib.exercises.ch01 import check_bptt, check_clip_by_global_norm


def test_assert_close_names_the_first_differing_element():
    expected = torch.zeros(2, 3)
    got = expected.clone()
    got[1, 2] = 0.5
    with pytest.raises(AssertionError, match=r"dW differs .* index \(1, 2\): got 0.5, expected 0 "
                                             r"\(1 of 6 elements differ"):
        assert_close("dW", got, expected)


def test_assert_close_reports_shape_type_and_nan():
    with pytest.raises(AssertionError, match=r"has shape \(3, 2\), expected \(2, 3\)"):
        assert_close("dW", torch.zeros(3, 2), torch.zeros(2, 3))
    with pytest.raises(AssertionError, match="should be a torch.Tensor, got list"):
        assert_close("dW", [[0.0]], torch.zeros(1, 1))
    with pytest.raises(AssertionError, match=r"non-finite value at index \(0,\)"):
        assert_close("g", torch.tensor([float("nan")]), torch.zeros(1))
    assert_close("ok", torch.ones(2) + 1e-9, torch.ones(2))
    assert_shape("x", torch.zeros(2), (2,))


def test_passed_prints_one_line(capsys):
    passed("Exercise 9.9")
    assert capsys.readouterr().out == "Exercise 9.9: all checks passed.\n"


def test_check_bptt_accepts_a_correct_solution(capsys):
    check_bptt(own_bptt)
    assert "Exercise 1.1: all checks passed." in capsys.readouterr().out


def test_check_bptt_refuses_the_library_bptt():
    def library_bptt(U, W, xs, h0, dL_dh):
        g = bptt.bptt(U, W, xs, h0, dL_dh)
        return g.dU, g.dW, g.dh0

    with pytest.raises(AssertionError, match=r"calls seq2seq_lib\.bptt\.bptt, the reference"):
        check_bptt(library_bptt)


def test_check_bptt_rejects_the_single_path_mistake():
    def last_step_only(U, W, xs, h0, dL_dh):  # forgets to sum dW over time steps
        dU, dW, dh0 = own_bptt(U, W, xs[-1:], h0, dL_dh[-1:])
        return dU, dW, dh0

    with pytest.raises(AssertionError, match="differs from the reference"):
        check_bptt(last_step_only)


def test_check_bptt_rejects_wrong_tanh_derivative_and_wrong_return():
    def wrong_derivative(U, W, xs, h0, dL_dh):
        trace = bptt.forward(U, W, xs, h0)
        h_prev = torch.cat([h0[None], trace.h[:-1]])
        dU, dW, g = torch.zeros_like(U), torch.zeros_like(W), torch.zeros_like(h0)
        for t in reversed(range(xs.shape[0])):
            delta = (1 - trace.h[t]) * (g + dL_dh[t])  # should be 1 - h**2
            dU += torch.outer(delta, h_prev[t])
            dW += torch.outer(delta, xs[t])
            g = U.T @ delta
        return dU, dW, g

    with pytest.raises(AssertionError, match="dU .*differs"):
        check_bptt(wrong_derivative)
    with pytest.raises(AssertionError, match="return a tuple"):
        check_bptt(lambda *args: own_bptt(*args)[0])
    with pytest.raises(AssertionError, match=r"dW .*has shape \(3, 4\), expected \(4, 3\)"):
        check_bptt(lambda *args: (own_bptt(*args)[0], own_bptt(*args)[1].T, own_bptt(*args)[2]))


def test_check_clip_both_ways(capsys):
    def clip(grads, max_norm):  # a correct solution: one scale for all, the global norm
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        return [g * min(1.0, max_norm / norm.item()) for g in grads]

    check_clip_by_global_norm(clip)
    assert "Exercise 1.3: all checks passed." in capsys.readouterr().out

    def per_tensor(grads, max_norm):  # clips each tensor separately: changes the direction
        return [g * min(1.0, max_norm / g.norm().item()) for g in grads]

    with pytest.raises(AssertionError, match="clipped gradient"):
        check_clip_by_global_norm(per_tensor)
    with pytest.raises(AssertionError, match=r"clipped gradient 0 \(max_norm=1.0\) differs"):
        check_clip_by_global_norm(lambda grads, m: [g * 0.5 for g in grads])


def test_assert_differentiable():
    from seq2seq_lib.exercises import assert_differentiable

    assert_differentiable("x", torch.ones(2, requires_grad=True) * 2)
    with pytest.raises(AssertionError, match="your loss is not differentiable"):
        assert_differentiable("your loss", torch.ones(2))


def _all_checkers():
    """Every ``check_*`` function of every chapter's checker module."""
    import importlib
    import pkgutil

    import seq2seq_lib.exercises as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found += [getattr(module, name) for name in sorted(vars(module))
                  if name.startswith("check_")
                  and getattr(module, name).__module__ == module.__name__]
    return found


CHECKERS = _all_checkers()


def test_every_chapter_with_an_exercise_module_is_found():
    names = {c.__module__.rsplit(".", 1)[1] for c in CHECKERS}
    assert names == {f"ch{n:02d}" for n in range(1, 12)}, names


@pytest.mark.parametrize("check", CHECKERS, ids=lambda c: c.__name__)
def test_an_unsolved_stub_prints_one_friendly_line_and_does_not_raise(check, capsys):
    def my_function(*args):
        raise NotImplementedError("Exercise: replace this line with your code")

    assert check(my_function) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    assert out.startswith("Exercise ") and " is not solved yet: " in out, out
    assert "`my_function`" in out, out


@pytest.mark.parametrize("check", CHECKERS, ids=lambda c: c.__name__)
def test_a_wrong_answer_still_fails_with_a_diagnosis(check, capsys):
    with pytest.raises(AssertionError):
        check(lambda *args: None)
    assert "not solved yet" not in capsys.readouterr().out


def test_the_label_of_the_exercise_is_the_one_passed(capsys):
    from seq2seq_lib.exercises.ch02 import check_gru_cell

    def gru_step_pytorch(X, H, params):
        raise NotImplementedError

    check_gru_cell(gru_step_pytorch, variant="pytorch", exercise="Exercise 2.2")
    assert capsys.readouterr().out.startswith("Exercise 2.2 is not solved yet: ")


def test_a_checker_needs_an_exercise_parameter():
    from seq2seq_lib.exercises import checker

    with pytest.raises(TypeError, match="exercise"):
        checker(lambda fn: None)


def test_check_segment_accepts_the_rank_rule_and_rejects_others(capsys):
    from itertools import pairwise

    from seq2seq_lib.exercises.ch11 import check_segment

    check_segment(own_segment)
    assert "all checks passed" in capsys.readouterr().out

    def most_frequent_last(piece, ranks):  # the highest rank first: another segmentation
        symbols = list(piece)
        while True:
            found = [(ranks[p], i) for i, p in enumerate(pairwise(symbols)) if p in ranks]
            if not found:
                return symbols
            _, i = max(found)
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]

    with pytest.raises(AssertionError, match="expected"):
        check_segment(most_frequent_last)

    def replay_in_order(piece, ranks):  # the chapter's `segment`, not the rank rule
        symbols = list(piece)
        for left, right in sorted(ranks, key=ranks.get):
            i = 0
            while i < len(symbols) - 1:
                if (symbols[i], symbols[i + 1]) == (left, right):
                    symbols[i:i + 2] = [left + right]
                i += 1
        return symbols

    with pytest.raises(AssertionError, match="'abcd'"):
        check_segment(replay_in_order)
    with pytest.raises(AssertionError, match="spell"):
        check_segment(lambda piece, ranks: [piece, "x"])
    with pytest.raises(AssertionError, match="expected"):
        check_segment(lambda piece, ranks: list(piece))

    def stub(piece, ranks):
        raise NotImplementedError

    check_segment(stub)
    assert "not solved yet" in capsys.readouterr().out
