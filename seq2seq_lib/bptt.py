r"""Chapter 1: a vanilla RNN written out step by step, and backpropagation through time by hand.

The chapter follows the lecture's notation (column vectors, one sequence, no bias):

.. math::

    \vec a_t = U \vec h_{t-1},\qquad \vec b_t = W \vec x_t,\qquad
    \vec c_t = \vec a_t + \vec b_t,\qquad \vec h_t = \tanh \vec c_t

with ``U`` of shape ``(d_h, d_h)``, ``W`` of shape ``(d_h, d_in)``, inputs ``xs`` of shape
``(n, d_in)`` (row ``t-1`` is :math:`\vec x_t`) and ``h0`` of shape ``(d_h,)``.

Backpropagation through time (:func:`bptt`) runs the chain rule backwards. With
:math:`\vec g_t = \partial L/\partial \vec h_t` the *total* gradient reaching
:math:`\vec h_t` (the direct part from the loss plus what flows back from step ``t+1``):

.. math::

    \vec\delta_t = \frac{\partial L}{\partial \vec c_t} = (\vec 1 - \tanh^2 \vec c_t) \odot \vec g_t,
    \qquad \vec g_{t-1} = \frac{\partial L}{\partial \vec h_{t-1}}\Big|_{\text{direct}} + U^\top \vec\delta_t,

    \frac{\partial L}{\partial U} = \sum_{t=1}^{n} \vec\delta_t\, \vec h_{t-1}^\top, \qquad
    \frac{\partial L}{\partial W} = \sum_{t=1}^{n} \vec\delta_t\, \vec x_t^\top .
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Trace:
    """Every intermediate of a forward pass; row ``t-1`` of each tensor belongs to step ``t``.

    Shapes: ``a, b, c, h`` are ``(n, d_h)``; ``h0`` is ``(d_h,)``.
    """

    a: torch.Tensor
    b: torch.Tensor
    c: torch.Tensor
    h: torch.Tensor
    h0: torch.Tensor


@dataclass
class Grads:
    """Gradients of the loss with respect to ``U`` ``(d_h, d_h)``, ``W`` ``(d_h, d_in)``
    and the initial state ``h0`` ``(d_h,)``."""

    dU: torch.Tensor
    dW: torch.Tensor
    dh0: torch.Tensor


def _check_shapes(U: torch.Tensor, W: torch.Tensor, xs: torch.Tensor, h0: torch.Tensor) -> None:
    d_h = U.shape[0]
    if U.dim() != 2 or U.shape != (d_h, d_h):
        raise ValueError(f"U must be square (d_h, d_h), got {tuple(U.shape)}")
    if W.dim() != 2 or W.shape[0] != d_h:
        raise ValueError(f"W must be (d_h={d_h}, d_in), got {tuple(W.shape)}")
    if xs.dim() != 2 or xs.shape[1] != W.shape[1]:
        raise ValueError(f"xs must be (n, d_in={W.shape[1]}), got {tuple(xs.shape)}")
    if xs.shape[0] < 1:
        raise ValueError("xs must hold at least one time step")
    if h0.shape != (d_h,):
        raise ValueError(f"h0 must be (d_h={d_h},), got {tuple(h0.shape)}")


def forward(U: torch.Tensor, W: torch.Tensor, xs: torch.Tensor, h0: torch.Tensor) -> Trace:
    """Run the RNN over ``xs`` and keep ``a_t, b_t, c_t, h_t`` for every step."""
    _check_shapes(U, W, xs, h0)
    b = xs @ W.T  # b_t = W x_t for every step at once; row t-1 is b_t
    a, c, h = [], [], []
    h_prev = h0
    for t in range(xs.shape[0]):
        a_t = U @ h_prev
        c_t = a_t + b[t]
        h_prev = torch.tanh(c_t)
        a.append(a_t)
        c.append(c_t)
        h.append(h_prev)
    return Trace(torch.stack(a), b, torch.stack(c), torch.stack(h), h0)


def bptt(
    U: torch.Tensor, W: torch.Tensor, xs: torch.Tensor, h0: torch.Tensor, dL_dh: torch.Tensor
) -> Grads:
    """Backpropagation through time, written out by hand.

    Args:
        U, W, xs, h0: as in :func:`forward`.
        dL_dh: ``(n, d_h)``; row ``t-1`` is the *direct* gradient of the loss with respect to
            ``h_t`` (for a loss on the last state only, every row but the last is zero).

    Returns:
        :class:`Grads` with ``dU``, ``dW`` and ``dh0``, equal to what autograd computes.
    """
    trace = forward(U, W, xs, h0)
    if dL_dh.shape != trace.h.shape:
        raise ValueError(f"dL_dh must be (n, d_h) = {tuple(trace.h.shape)}, got {tuple(dL_dh.shape)}")
    n = xs.shape[0]
    h_prev = torch.cat([h0.unsqueeze(0), trace.h[:-1]])  # row t-1 holds h_{t-1}
    dU = torch.zeros_like(U)
    dW = torch.zeros_like(W)
    g = torch.zeros_like(h0)  # gradient flowing into h_t from step t+1
    for t in reversed(range(n)):
        g = g + dL_dh[t]
        delta = (1 - torch.tanh(trace.c[t]) ** 2) * g  # dL/dc_t
        dU += torch.outer(delta, h_prev[t])
        dW += torch.outer(delta, xs[t])
        g = U.T @ delta  # dL/dh_{t-1} through a_t = U h_{t-1}
    return Grads(dU=dU, dW=dW, dh0=g)


def hidden_state_grad_norms(
    U: torch.Tensor, W: torch.Tensor, xs: torch.Tensor, h0: torch.Tensor, dL_dhn: torch.Tensor
) -> torch.Tensor:
    r"""``(n,)`` norms :math:`\lVert\partial L/\partial \vec h_t\rVert` for ``t = 1..n`` when the
    loss depends on the last state only, with :math:`\partial L/\partial \vec h_n` = ``dL_dhn``.

    Each step back multiplies by :math:`U^\top \operatorname{diag}(1-\tanh^2 \vec c_t)`: the
    two causes of vanishing (or exploding) gradients in one product.
    """
    trace = forward(U, W, xs, h0)
    n = xs.shape[0]
    norms = torch.empty(n, dtype=U.dtype)
    g = dL_dhn
    for t in reversed(range(n)):
        norms[t] = g.norm()
        g = U.T @ ((1 - torch.tanh(trace.c[t]) ** 2) * g)
    return norms


def scaled_orthogonal(d: int, rho: float, generator: torch.Generator | None = None,
                      dtype: torch.dtype = torch.float64) -> torch.Tensor:
    r"""A ``(d, d)`` matrix :math:`\rho Q` with :math:`Q` a random orthogonal matrix.

    All its singular values — and the moduli of all its eigenvalues — equal ``rho``, so
    :math:`\lVert (\rho Q)^k \vec v\rVert = \rho^k \lVert\vec v\rVert` exactly: the cleanest
    way to show what "the size of U" does to a gradient.
    """
    if d < 1 or rho < 0:
        raise ValueError(f"need d >= 1 and rho >= 0, got d={d}, rho={rho}")
    a = torch.randn(d, d, generator=generator, dtype=dtype)
    q, r = torch.linalg.qr(a)
    q = q * torch.sign(torch.diagonal(r))  # a uniformly distributed orthogonal matrix
    return rho * q


def first_underflow_power(base: float, dtype: torch.dtype) -> int:
    """Smallest ``k`` with ``base ** k == 0`` when computed by repeated multiplication in ``dtype``.

    This is what happens to a product of ``k`` factors of size ``base`` in a backward pass.
    """
    if not 0 < base < 1:
        raise ValueError(f"base must be in (0, 1), got {base}")
    x = torch.tensor(1.0, dtype=dtype)
    b = torch.tensor(base, dtype=dtype)
    k = 0
    while x != 0:
        x = x * b
        k += 1
    return k
