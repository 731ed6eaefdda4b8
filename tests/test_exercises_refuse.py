"""Every exercise checker refuses a "solution" that calls what the exercise asks to write.

For each checker: a function that only calls the reference it is checked against (or
PyTorch's ready-made module the exercise rebuilds) fails with a message naming it —
whether the reference is called directly, through a module attribute, in a lambda, from a
helper of the reader's or passed itself — while the reader's own implementation passes and
a stub still says "not solved yet". Each shortcut below really computes the right answer:
with the refusal switched off it passes the checker, so these tests fail if the refusal
goes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from helpers import gru_gates, own_bidirectional, own_bptt, own_coupled, own_segment, own_stacked
from torch import nn
from torch.nn.utils import clip_grad_norm_

import seq2seq_lib.exercises as exercises
from seq2seq_lib import attention, beam, bleu, bptt, cells, losses, subwords
from seq2seq_lib.attention import masked_softmax
from seq2seq_lib.beam import beam_step
from seq2seq_lib.bleu import clipped_precision
from seq2seq_lib.exercises import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11
from seq2seq_lib.exercises.ch02 import _gru_formula
from seq2seq_lib.exercises.ch04 import copy_cells, run_cell
from seq2seq_lib.exercises.ch11 import _cases
from seq2seq_lib.losses import masked_cross_entropy, sequence_log_prob
from seq2seq_lib.subwords import BPE

library_bptt = bptt.bptt  # as a notebook might name it


# -- the reader's own solutions ------------------------------------------------------------
def own_clip(grads, max_norm):
    norm = torch.sqrt(sum((g**2).sum() for g in grads))
    return [g * min(1.0, max_norm / (norm.item() + 1e-6)) for g in grads]


def own_gru_cho(X, H, p):
    R, Z = gru_gates(X, H, p)
    return Z * H + (1 - Z) * torch.tanh(X @ p["W_xh"] + (R * H) @ p["W_hh"] + p["b_h"])


def own_gru_pytorch(X, H, p):
    R, Z = gru_gates(X, H, p)
    H_tilde = torch.tanh(X @ p["W_xh"] + p["b_xh"] + R * (H @ p["W_hh"] + p["b_hh"]))
    return Z * H + (1 - Z) * H_tilde


def own_lstm(X, H, C, p):
    def pre(g):
        return X @ p[f"W_x{g}"] + H @ p[f"W_h{g}"] + p[f"b_{g}"]

    i, f, o = (torch.sigmoid(pre(g)) for g in "ifo")
    C = f * C + i * torch.tanh(pre("c"))
    return o * torch.tanh(C), C


def own_sequence_log_prob(log_probs, targets, pad_id):
    mask = targets != pad_id
    token = log_probs.gather(-1, targets.masked_fill(~mask, 0).unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, token, torch.zeros_like(token)).sum(1)


def own_masked_cross_entropy(logits, targets, pad_id):  # F.cross_entropy is a building block
    mask = targets != pad_id
    per_token = F.cross_entropy(logits.transpose(1, 2), targets.masked_fill(~mask, 0),
                                reduction="none")
    return (per_token * mask).sum() / mask.sum()


def own_masked_softmax(scores, mask):
    return torch.softmax(scores.masked_fill(~mask[:, None, :], float("-inf")), dim=-1)


def own_general_score(h_t, h_bar, W_a):
    return (h_t @ W_a) @ h_bar.transpose(1, 2)


def own_beam_step(scores, log_probs):
    B, k, V = log_probs.shape
    new_scores, flat = (scores.unsqueeze(-1) + log_probs).reshape(B, k * V).topk(k, dim=1)
    return new_scores, flat // V, flat % V


def own_clipped_precision(hypothesis, references, n):
    from collections import Counter

    def grams(tokens):
        return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))

    hyp, most = grams(hypothesis), Counter()
    for ref in references:
        most |= grams(ref)
    return sum(min(c, most[g]) for g, c in hyp.items()), sum(hyp.values())


def own_replace_unknowns(output, source, weights):
    return [source[int(weights[t].argmax())] if w == "<unk>" else w for t, w in enumerate(output)]


# -- shortcuts: each calls the reference (and computes the right answer) --------------------
def bptt_direct(U, W, xs, h0, dL_dh):
    g = library_bptt(U, W, xs, h0, dL_dh)
    return g.dU, g.dW, g.dh0


def bptt_attribute(U, W, xs, h0, dL_dh):
    g = bptt.bptt(U, W, xs, h0, dL_dh)
    return g.dU, g.dW, g.dh0


def bptt_backward(U, W, xs, h0, dL_dh):
    U, W, h0 = (t.clone().requires_grad_() for t in (U, W, h0))
    (bptt.forward(U, W, xs, h0).h * dL_dh).sum().backward()
    return U.grad, W.grad, h0.grad


def bptt_autograd_grad(U, W, xs, h0, dL_dh):
    U, W, h0 = (t.clone().requires_grad_() for t in (U, W, h0))
    return torch.autograd.grad((bptt.forward(U, W, xs, h0).h * dL_dh).sum(), (U, W, h0))


def _clip_with(clip, grads, max_norm):
    params = [nn.Parameter(torch.zeros_like(g)) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = g.clone()
    clip(params, max_norm)
    return [p.grad for p in params]


def clip_direct(grads, max_norm):
    params = [nn.Parameter(g.clone()) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = g.clone()
    clip_grad_norm_(params, max_norm)
    return [p.grad for p in params]


def clip_attribute(grads, max_norm):
    return _clip_with(torch.nn.utils.clip_grad_norm_, grads, max_norm)


def _torch_gru_cell(GRUCell, X, H, p):
    cell = GRUCell(X.shape[1], H.shape[1])
    zero = torch.zeros_like(p["b_r"])
    with torch.no_grad():
        cell.weight_ih.copy_(torch.cat([p["W_xr"], p["W_xz"], p["W_xh"]], 1).T)
        cell.weight_hh.copy_(torch.cat([p["W_hr"], p["W_hz"], p["W_hh"]], 1).T)
        cell.bias_ih.copy_(torch.cat([p["b_r"], p["b_z"], p["b_xh"]]))
        cell.bias_hh.copy_(torch.cat([zero, zero, p["b_hh"]]))
        return cell(X, H)


def gru_direct(X, H, p):  # Exercise 2.2 with PyTorch's own cell
    return _torch_gru_cell(nn.GRUCell, X, H, p)


def gru_attribute(X, H, p):
    return _torch_gru_cell(torch.nn.GRUCell, X, H, p)


def gru_kernel(X, H, p):
    w_ih = torch.cat([p["W_xr"], p["W_xz"], p["W_xh"]], 1).T
    w_hh = torch.cat([p["W_hr"], p["W_hz"], p["W_hh"]], 1).T
    zero = torch.zeros_like(p["b_r"])
    return torch.gru_cell(X, H, w_ih, w_hh, torch.cat([p["b_r"], p["b_z"], p["b_xh"]]),
                          torch.cat([zero, zero, p["b_hh"]]))


def gru_cho_library(X, H, p):  # Exercise 2.1 with the library's cell
    cell = cells.GRUCell(X.shape[1], H.shape[1], variant="cho")
    with torch.no_grad():
        for g in "rzh":
            blk = cell.gate(g)
            blk.W_x.copy_(p[f"W_x{g}"])
            blk.W_h.copy_(p[f"W_h{g}"])
            blk.b_x.copy_(p[f"b_{g}"])
            blk.b_h.zero_()
        return cell(X, H)


def gru_cho_formula(X, H, p):
    return _gru_formula(X, H, p, "before", False)


def _torch_lstm_cell(LSTMCell, X, H, C, p):
    cell = LSTMCell(X.shape[1], H.shape[1])
    with torch.no_grad():
        cell.weight_ih.copy_(torch.cat([p[f"W_x{g}"] for g in "ifco"], 1).T)
        cell.weight_hh.copy_(torch.cat([p[f"W_h{g}"] for g in "ifco"], 1).T)
        cell.bias_ih.copy_(torch.cat([p[f"b_{g}"] for g in "ifco"]))
        cell.bias_hh.zero_()
        return cell(X, (H, C))


def lstm_direct(X, H, C, p):
    return _torch_lstm_cell(nn.LSTMCell, X, H, C, p)


def lstm_attribute(X, H, C, p):
    return _torch_lstm_cell(torch.nn.LSTMCell, X, H, C, p)


def stacked_direct(X, cells_):
    gru = nn.GRU(X.shape[2], cells_[0].hidden_size, num_layers=len(cells_), batch_first=True)
    copy_cells(gru, cells_, [f"_l{i}" for i in range(len(cells_))])
    with torch.no_grad():
        return gru(X)


def stacked_attribute(X, cells_):
    gru = torch.nn.GRU(X.shape[2], cells_[0].hidden_size, num_layers=len(cells_),
                       batch_first=True)
    copy_cells(gru, cells_, [f"_l{i}" for i in range(len(cells_))])
    with torch.no_grad():
        return gru(X)


def stacked_run_cell(X, cells_):  # the checker's own loop over time
    inp, last = X, []
    for cell in cells_:
        inp = run_cell(cell, inp)
        last.append(inp[:, -1])
    return inp, torch.stack(last)


def bidirectional_direct(X, cell_f, cell_b):
    gru = nn.GRU(X.shape[2], cell_f.hidden_size, bidirectional=True, batch_first=True)
    copy_cells(gru, [cell_f, cell_b], ["_l0", "_l0_reverse"])
    with torch.no_grad():
        return gru(X)[0]


def bidirectional_attribute(X, cell_f, cell_b):
    return torch.cat([ch04.run_cell(cell_f, X), ch04.run_cell(cell_b, X, reverse=True)], 2)


def score_direct(log_probs, targets, pad_id):
    return sequence_log_prob(log_probs, targets, pad_id)


def score_attribute(log_probs, targets, pad_id):
    return losses.sequence_log_prob(log_probs, targets, pad_id)




def loss_direct(logits, targets, pad_id):  # the issue's example
    return masked_cross_entropy(logits, targets, pad_id)


def loss_attribute(logits, targets, pad_id):
    return losses.masked_cross_entropy(logits, targets, pad_id)


def loss_by_score(logits, targets, pad_id):  # the library's masked sum of chapter 6
    score = losses.sequence_log_prob(torch.log_softmax(logits, -1), targets, pad_id)
    return -score.sum() / (targets != pad_id).sum()


def softmax_direct(scores, mask):
    return masked_softmax(scores, mask)


def softmax_attribute(scores, mask):
    return attention.masked_softmax(scores, mask)


def general_attribute(h_t, h_bar, W_a):
    score = attention.GeneralScore(*W_a.shape)
    with torch.no_grad():
        score.W_a.copy_(W_a)
        return score(h_t, h_bar)


def general_direct(h_t, h_bar, W_a):
    score = attention.make_score("general", *W_a.shape)
    with torch.no_grad():
        score.W_a.copy_(W_a)
        return score(h_t, h_bar)


def beam_direct(scores, log_probs):
    return beam_step(scores, log_probs)


def beam_attribute(scores, log_probs):
    return beam.beam_step(scores, log_probs)


def precision_direct(hypothesis, references, n):
    return clipped_precision(hypothesis, references, n)


def precision_attribute(hypothesis, references, n):
    return bleu.clipped_precision(hypothesis, references, n)


def precision_by_bleu(hypothesis, references, n):  # the statistics of the library's BLEU
    _, _, matches, totals = bleu._segment_stats(" ".join(hypothesis),
                                                [" ".join(r) for r in references])
    return matches[n - 1], totals[n - 1]


def replace_direct(output, source, weights):  # looks the answer up in the checker's cases
    return next(list(e) for _, o, s, _, e in _cases() if o == output and s == source)


def replace_attribute(output, source, weights):
    return next(list(e) for _, o, s, _, e in ch11._cases() if o == output and s == source)


def segment_direct(piece, ranks):
    return BPE(tuple(sorted(set(piece))), tuple(sorted(ranks, key=ranks.get))).segment(piece)


def segment_attribute(piece, ranks):
    return list(subwords._segment(piece, ranks))


# -- the table ---------------------------------------------------------------------------------
@dataclass
class Exercise:
    label: str
    check: Callable[..., None]
    module: Any  # the checker's module (to switch its refusal off)
    own: Callable[..., Any]
    #: shortcut -> the dotted name the refusal must report
    shortcuts: dict[Callable[..., Any], str]
    #: a lambda that calls the reference: (lambda, dotted name)
    lam: tuple[Callable[..., Any], str] | None = None
    #: the reference itself, when it has the exercise's signature
    itself: tuple[Callable[..., Any], str] | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return self.label


EXERCISES = [
    Exercise(
        "Exercise 1.1", ch01.check_bptt, ch01, own_bptt,
        {bptt_direct: "seq2seq_lib.bptt.bptt", bptt_attribute: "seq2seq_lib.bptt.bptt",
         bptt_backward: ".backward()", bptt_autograd_grad: "torch.autograd.grad"},
        lam=(lambda U, W, xs, h0, d: tuple(vars(bptt.bptt(U, W, xs, h0, d)).values()),
             "seq2seq_lib.bptt.bptt"),
    ),
    Exercise(
        "Exercise 1.3", ch01.check_clip_by_global_norm, ch01, own_clip,
        {clip_direct: "torch.nn.utils.clip_grad_norm_",
         clip_attribute: "torch.nn.utils.clip_grad_norm_"},
        lam=(lambda grads, m: _clip_with(torch.nn.utils.clip_grad_norm_, grads, m),
             "torch.nn.utils.clip_grad_norm_"),
    ),
    Exercise(
        "Exercise 2.1", ch02.check_gru_cell, ch02, own_gru_cho,
        {gru_cho_library: "seq2seq_lib.cells.GRUCell",
         gru_cho_formula: "seq2seq_lib.exercises.ch02._gru_formula"},
        lam=(lambda X, H, p: ch02._gru_formula(X, H, p, "before", False),
             "seq2seq_lib.exercises.ch02._gru_formula"),
    ),
    Exercise(
        "Exercise 2.2", ch02.check_gru_cell, ch02, own_gru_pytorch,
        {gru_direct: "torch.nn.GRUCell", gru_attribute: "torch.nn.GRUCell",
         gru_kernel: "torch.gru_cell"},
        lam=(lambda X, H, p: _torch_gru_cell(nn.GRUCell, X, H, p), "torch.nn.GRUCell"),
        kwargs={"variant": "pytorch", "exercise": "Exercise 2.2"},
    ),
    Exercise(
        "Exercise 3.1", ch03.check_lstm_cell, ch03, own_lstm,
        {lstm_direct: "torch.nn.LSTMCell", lstm_attribute: "torch.nn.LSTMCell"},
        lam=(lambda X, H, C, p: _torch_lstm_cell(nn.LSTMCell, X, H, C, p), "torch.nn.LSTMCell"),
    ),
    Exercise(
        "Exercise 4.1", ch04.check_stacked_gru, ch04, own_stacked,
        {stacked_direct: "torch.nn.GRU", stacked_attribute: "torch.nn.GRU",
         stacked_run_cell: "seq2seq_lib.exercises.ch04.run_cell"},
        lam=(lambda X, cs: (run_cell(cs[0], X), torch.stack([run_cell(cs[0], X)[:, -1]])),
             "seq2seq_lib.exercises.ch04.run_cell"),
    ),
    Exercise(
        "Exercise 5.1", ch05.check_bidirectional_gru, ch05, own_bidirectional,
        {bidirectional_direct: "torch.nn.GRU",
         bidirectional_attribute: "seq2seq_lib.exercises.ch04.run_cell"},
        lam=(lambda X, f, b: torch.cat([run_cell(f, X), run_cell(b, X, reverse=True)], 2),
             "seq2seq_lib.exercises.ch04.run_cell"),
    ),
    Exercise(
        "Exercise 6.1", ch06.check_sequence_log_prob, ch06, own_sequence_log_prob,
        {score_direct: "seq2seq_lib.losses.sequence_log_prob",
         score_attribute: "seq2seq_lib.losses.sequence_log_prob"},
        lam=(lambda lp, t, p: losses.sequence_log_prob(lp, t, p),
             "seq2seq_lib.losses.sequence_log_prob"),
        itself=(sequence_log_prob, "seq2seq_lib.losses.sequence_log_prob"),
    ),
    Exercise(
        "Exercise 7.1", ch07.check_masked_cross_entropy, ch07, own_masked_cross_entropy,
        {loss_direct: "seq2seq_lib.losses.masked_cross_entropy",
         loss_attribute: "seq2seq_lib.losses.masked_cross_entropy",
         loss_by_score: "seq2seq_lib.losses.sequence_log_prob"},
        lam=(lambda lo, t, p: masked_cross_entropy(lo, t, p),
             "seq2seq_lib.losses.masked_cross_entropy"),
        itself=(masked_cross_entropy, "seq2seq_lib.losses.masked_cross_entropy"),
    ),
    Exercise(
        "Exercise 8.1", ch08.check_masked_softmax, ch08, own_masked_softmax,
        {softmax_direct: "seq2seq_lib.attention.masked_softmax",
         softmax_attribute: "seq2seq_lib.attention.masked_softmax"},
        lam=(lambda s, m: attention.masked_softmax(s, m), "seq2seq_lib.attention.masked_softmax"),
        itself=(masked_softmax, "seq2seq_lib.attention.masked_softmax"),
    ),
    Exercise(
        "Exercise 8.2", ch08.check_general_score, ch08, own_general_score,
        {general_attribute: "seq2seq_lib.attention.GeneralScore",
         general_direct: "seq2seq_lib.attention.make_score"},
        lam=(lambda q, k, W: general_attribute(q, k, W), "seq2seq_lib.attention.GeneralScore"),
    ),
    Exercise(
        "Exercise 9.1", ch09.check_beam_step, ch09, own_beam_step,
        {beam_direct: "seq2seq_lib.beam.beam_step", beam_attribute: "seq2seq_lib.beam.beam_step"},
        lam=(lambda s, lp: beam.beam_step(s, lp), "seq2seq_lib.beam.beam_step"),
        itself=(beam_step, "seq2seq_lib.beam.beam_step"),
    ),
    Exercise(
        "Exercise 10.1", ch10.check_clipped_precision, ch10, own_clipped_precision,
        {precision_direct: "seq2seq_lib.bleu.clipped_precision",
         precision_attribute: "seq2seq_lib.bleu.clipped_precision",
         precision_by_bleu: "seq2seq_lib.bleu._segment_stats"},
        lam=(lambda h, r, n: bleu.clipped_precision(h, r, n), "seq2seq_lib.bleu.clipped_precision"),
        itself=(clipped_precision, "seq2seq_lib.bleu.clipped_precision"),
    ),
    Exercise(
        "Exercise 11.1", ch11.check_replace_unknowns, ch11, own_replace_unknowns,
        {replace_direct: "seq2seq_lib.exercises.ch11._cases",
         replace_attribute: "seq2seq_lib.exercises.ch11._cases"},
        lam=(lambda o, s, w: replace_direct(o, s, w), "seq2seq_lib.exercises.ch11._cases"),
    ),
    Exercise(
        "Exercise 11.4", ch11.check_segment, ch11, own_segment,
        {segment_direct: "seq2seq_lib.subwords.BPE",
         segment_attribute: "seq2seq_lib.subwords._segment"},
        lam=(lambda piece, ranks: list(subwords._segment(piece, ranks)),
             "seq2seq_lib.subwords._segment"),
    ),
]
SHORTCUTS = [(ex, fn, name) for ex in EXERCISES for fn, name in ex.shortcuts.items()]


def _refused(ex: Exercise, fn: Callable[..., Any], name: str, *, itself: bool = False) -> str:
    with pytest.raises(AssertionError) as info:
        ex.check(fn, **ex.kwargs)
    message = str(info.value)
    said = "you passed" if itself else "calls"
    assert re.match(rf"{re.escape(ex.label)}: .*{said} .*{re.escape(name)}(\(\))?[ ,]", message), \
        message
    assert "The exercise is to write it yourself" in message, message
    assert "\n" not in message, message
    return message


def test_every_checker_is_in_the_table():
    """Exercise 3.2 asks for parameters, which no library function computes: nothing to call."""
    checkers = {ex.check.__name__ for ex in EXERCISES}
    everything = {name for module in (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10,
                                      ch11)
                  for name, value in vars(module).items()
                  if name.startswith("check_") and value.__module__ == module.__name__}
    assert len(everything) == 15
    assert everything - checkers == {"check_coupled_lstm"}


@pytest.mark.parametrize(("ex", "fn", "name"), SHORTCUTS,
                         ids=[f"{ex.label[9:]}-{fn.__name__}" for ex, fn, _ in SHORTCUTS])
def test_a_solution_that_calls_the_reference_is_refused(ex, fn, name, capsys):
    message = _refused(ex, fn, name)
    assert f"`{fn.__name__}` calls" in message
    assert capsys.readouterr().out == ""  # nothing ran: no "not solved yet", no "passed"


@pytest.mark.parametrize(("ex", "fn", "name"), SHORTCUTS,
                         ids=[f"{ex.label[9:]}-{fn.__name__}" for ex, fn, _ in SHORTCUTS])
def test_without_the_refusal_each_shortcut_would_pass(ex, fn, name, capsys, monkeypatch):
    """The shortcuts are real answers: only the refusal stops them (so these tests can fail)."""
    monkeypatch.setattr(ex.module, "refuse_reference", lambda *args, **kwargs: None)
    ex.check(fn, **ex.kwargs)
    assert capsys.readouterr().out == f"{ex.label}: all checks passed.\n"


@pytest.mark.parametrize("ex", EXERCISES, ids=repr)
def test_a_lambda_that_calls_the_reference_is_refused(ex):
    fn, name = ex.lam
    message = _refused(ex, fn, name)
    assert "your function calls" in message or "`" in message


@pytest.mark.parametrize("ex", EXERCISES, ids=repr)
def test_a_reference_behind_helpers_of_the_reader_is_refused(ex):
    helper, name = next(iter(ex.shortcuts.items()))

    def my_solution(*args):  # the reader's function calls the reader's helper ...
        return outer(*args)

    def outer(*args):  # ... which calls another, which calls the reference
        return helper(*args)

    message = _refused(ex, my_solution, name)
    assert f"`my_solution` calls `outer`, which calls `{helper.__name__}`, which calls" in message
    _refused(ex, functools.partial(helper), name)  # a partial is looked through too


@pytest.mark.parametrize("ex", [ex for ex in EXERCISES if ex.itself], ids=repr)
def test_passing_the_reference_itself_is_refused(ex):
    fn, name = ex.itself
    _refused(ex, fn, name, itself=True)


@pytest.mark.parametrize("ex", EXERCISES, ids=repr)
def test_the_readers_own_solution_passes(ex, capsys):
    ex.check(ex.own, **ex.kwargs)
    assert capsys.readouterr().out == f"{ex.label}: all checks passed.\n"


@pytest.mark.parametrize("ex", EXERCISES, ids=repr)
def test_a_stub_next_to_the_imported_reference_is_not_solved_yet(ex, capsys):
    def my_solution(*args):
        raise NotImplementedError("Exercise: replace this line with your code")

    ex.check(my_solution, **ex.kwargs)
    out = capsys.readouterr().out
    assert out.startswith(f"{ex.label} is not solved yet: ") and out.count("\n") == 1, out


def test_coupled_lstm_still_passes_and_stubs_still_print(capsys):
    ch03.check_coupled_lstm(own_coupled)

    def coupled_lstm_params(p):
        raise NotImplementedError

    ch03.check_coupled_lstm(coupled_lstm_params)
    out = capsys.readouterr().out
    assert out.startswith("Exercise 3.2: all checks passed.\nExercise 3.2 is not solved yet: ")


# -- the rule itself ------------------------------------------------------------------------
def test_building_blocks_are_allowed():
    def blocks(scores, mask):
        import torch.nn.functional as G

        weights = G.softmax(scores.masked_fill(~mask[:, None, :], -torch.inf), dim=-1)
        return torch.nan_to_num(weights @ torch.eye(weights.shape[-1]))

    exercises.refuse_reference(blocks, ch08.SOFTMAX_REFERENCES, "Exercise 8.1")
    exercises.refuse_reference(own_masked_cross_entropy, ch07.LOSS_REFERENCES, "Exercise 7.1")
    exercises.refuse_reference(own_stacked, ch04.LAYER_REFERENCES, "Exercise 4.1")  # calls cells


def test_imports_aliases_closures_defaults_and_classes_are_followed():
    refs = ch07.LOSS_REFERENCES

    def imported_inside(logits, targets, pad_id):
        from seq2seq_lib.losses import masked_cross_entropy as mce

        return mce(logits, targets, pad_id)

    def module_imported_inside(logits, targets, pad_id):
        import seq2seq_lib.losses

        return seq2seq_lib.losses.masked_cross_entropy(logits, targets, pad_id)

    def alias(logits, targets, pad_id):
        f = losses.masked_cross_entropy
        return f(logits, targets, pad_id)

    def in_a_comprehension(logits, targets, pad_id):
        return sum(masked_cross_entropy(lo[None], t[None], pad_id)
                   for lo, t in zip(logits, targets, strict=True))

    def default(logits, targets, pad_id, loss=masked_cross_entropy):
        return loss(logits, targets, pad_id)

    def closure():
        loss = losses.masked_cross_entropy
        return lambda logits, targets, pad_id: loss(logits, targets, pad_id)

    class Loss:
        def __call__(self, logits, targets, pad_id):
            return loss_attribute(logits, targets, pad_id)

    for fn in (imported_inside, module_imported_inside, alias, in_a_comprehension, default,
               closure(), Loss()):
        with pytest.raises(AssertionError, match=r"seq2seq_lib\.losses\.masked_cross_entropy"):
            exercises.refuse_reference(fn, refs, "Exercise 7.1")


def test_a_subclass_or_an_instance_of_a_refused_class_is_refused():
    class MyGRU(nn.GRU):
        pass

    layer = nn.GRU(3, 4)

    def subclass(X, cells_):
        return MyGRU(3, 4)(X)

    def instance(X, cells_):
        return layer(X)

    with pytest.raises(AssertionError, match=r"calls a subclass of torch\.nn\.GRU"):
        exercises.refuse_reference(subclass, ch04.LAYER_REFERENCES, "Exercise 4.1")
    with pytest.raises(AssertionError, match=r"calls an instance of torch\.nn\.GRU"):
        exercises.refuse_reference(instance, ch04.LAYER_REFERENCES, "Exercise 4.1")


def test_the_message_of_the_issue(capsys):
    def my_masked_cross_entropy(l, t, p):  # noqa: E741 - the issue's example, verbatim
        return masked_cross_entropy(l, t, p)

    with pytest.raises(AssertionError) as info:
        ch07.check_masked_cross_entropy(my_masked_cross_entropy)
    assert str(info.value) == (
        "Exercise 7.1: `my_masked_cross_entropy` calls seq2seq_lib.losses.masked_cross_entropy, "
        "the reference it is checked against. The exercise is to write it yourself, with torch "
        'operations (F.cross_entropy with reduction="none" is fine).'
    )
    assert capsys.readouterr().out == ""


REFERENCE_LISTS = [
    (module, name, getattr(module, name))
    for module in (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11)
    for name in sorted(vars(module)) if name.endswith("_REFERENCES")
]


@pytest.mark.parametrize(("module", "name", "refs"), REFERENCE_LISTS,
                         ids=[f"{m.__name__[-4:]}.{n}" for m, n, _ in REFERENCE_LISTS])
def test_every_reference_exists_and_is_from_the_chapter_or_before(module, name, refs):
    """A typo in a path would silently refuse nothing; a later chapter's module is one the
    reader of this chapter has not met."""
    from seq2seq_lib import chapters

    chapter = chapters.MODULE_CHAPTER[module.__name__.removeprefix("seq2seq_lib.")]
    optional = {"torch.nn.utils.clip_grads_with_norm_", "torch.func.grad", "torch.func.vjp",
                "torch.func.jacrev", "sacrebleu.metrics.BLEU"}  # newer PyTorch / sacrebleu
    for entry in refs:
        path = entry if isinstance(entry, str) else entry[0]
        if path.startswith("."):
            continue
        assert exercises.resolve(path) is not None or path in optional, path
        if path.startswith("seq2seq_lib."):
            owner = next(m for m in sorted(chapters.MODULE_CHAPTER, key=len, reverse=True)
                         if path.removeprefix("seq2seq_lib.").startswith(m + "."))
            assert chapters.MODULE_CHAPTER[owner] <= chapter, (path, owner)
