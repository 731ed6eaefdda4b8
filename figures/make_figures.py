"""Every diagram of the book, drawn from this one file.

    python figures/make_figures.py            # (re)write figures/*.svg
    python figures/make_figures.py --check    # regenerate into a temporary folder, compare bytes

Why matplotlib: it is already a dependency of the course (pinned in ``constraints.txt``), needs
no system package, writes deterministic SVG, and its mathtext typesets the chapters' symbols
($\\mathbf H_t$, $\\tilde{\\mathbf H}_t$, $\\bar h_s$, ...) the way the equations show them.
Graphviz would lay out the graphs for us, but these diagrams are about *where* things are
(the carry path on top, the context fed to every step, the beam tree by step), which we want
to place by hand, and its layout and output change between versions.

Byte-identical output: the SVG hash salt is fixed, text is drawn as paths (no font is needed
to view a figure), the date and creator are left out, and every glyph comes from a font file
shipped with matplotlib (never from the system's fonts). Every figure is a white card with a
thin border, which reads the same in the book's light and dark themes.

The file has three parts: the drawing helpers, one function per figure (in chapter order),
and the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # draw from this checkout's library, whatever pip installed
import seq2seq_lib  # noqa: E402,F401  (pins the numerics before NumPy loads; see CONTRIBUTING.md)

# isort: split
import argparse  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")

# isort: split
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.font_manager import FontProperties  # noqa: E402
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle  # noqa: E402
from matplotlib.path import Path as MplPath  # noqa: E402
from matplotlib.patheffects import Normal, withStroke  # noqa: E402

from seq2seq_lib import beam, bleu, search_examples, subwords  # noqa: E402

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------------------------
# Drawing helpers. Coordinates are inches from the lower left corner of the card.
# --------------------------------------------------------------------------------------------

INK, MUTED, EDGE = "#1f2328", "#57606a", "#c9d1d9"
# Okabe-Ito colours: distinguishable with every common colour-vision deficiency.
BLUE, ORANGE, GREEN, VERMILION, PURPLE, SKY = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9")
FILL = {BLUE: "#d5e6f3", ORANGE: "#fbe9c6", GREEN: "#cdeee4", VERMILION: "#f8dccb",
        PURPLE: "#f4e1ec", SKY: "#dcf0fb", MUTED: "#eef1f4", INK: "#ffffff"}
SIZE = 12  # points: labels
SMALL = 9.5  # points: annotations
_FONTS = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
SANS, MONO = (FontProperties(fname=_FONTS / f"{name}.ttf") for name in ("DejaVuSans", "DejaVuSansMono"))


def _style() -> None:
    matplotlib.rcdefaults()
    matplotlib.rcParams.update({
        "svg.hashsalt": "seq2seq-course",  # the ids of clip paths and markers
        "svg.fonttype": "path",
        "mathtext.fontset": "cm",  # Computer Modern from matplotlib's own files, like the book's TeX
        "path.simplify": False,
    })


@dataclass(frozen=True)
class Node:
    """A drawn box or circle: its centre, width and height."""

    x: float
    y: float
    w: float
    h: float
    circle: bool = False

    def toward(self, px: float, py: float) -> tuple[float, float]:
        """The point of the border on the way to ``(px, py)``."""
        dx, dy = px - self.x, py - self.y
        if self.circle:
            scale = self.w / 2 / math.hypot(dx, dy)
        else:
            scale = min(self.w / 2 / abs(dx) if dx else math.inf, self.h / 2 / abs(dy) if dy else math.inf)
        return self.x + dx * scale, self.y + dy * scale

    def side(self, where: str, offset: float = 0.0) -> tuple[float, float]:
        """The middle of side ``n``, ``s``, ``e`` or ``w``, moved ``offset`` along it."""
        dx, dy = {"n": (offset, self.h / 2), "s": (offset, -self.h / 2),
                  "e": (self.w / 2, offset), "w": (-self.w / 2, offset)}[where]
        return self.x + dx, self.y + dy


Point = Node | tuple[float, float]


def _xy(p: Point) -> tuple[float, float]:
    return (p.x, p.y) if isinstance(p, Node) else p


class Card:
    """A figure of ``width`` × ``height`` inches: a white card with a thin border."""

    def __init__(self, width: float, height: float) -> None:
        self.fig = plt.figure(figsize=(width, height), facecolor="white")
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(0, height)
        self.ax.axis("off")
        self.ax.add_patch(FancyBboxPatch((0.03, 0.03), width - 0.06, height - 0.06, lw=0.8,
                                         boxstyle="round,pad=0,rounding_size=0.08",
                                         fc="white", ec=EDGE, zorder=0))

    def text(self, x: float, y: float, s: str, *, size: float = SIZE, color: str = INK,
             ha: str = "center", va: str = "center", mono: bool = False, **kw) -> None:
        font = (MONO if mono else SANS).copy()
        font.set_size(size)
        font.set_math_fontfamily("cm")
        self.ax.text(x, y, s, fontproperties=font, color=color, ha=ha, va=va, **{"zorder": 5, **kw})

    def box(self, x: float, y: float, label: str, *, w: float = 0.5, h: float = 0.36,
            color: str = INK, size: float = SIZE, circle: bool = False, dashed: bool = False,
            text_color: str = INK, lw: float = 1.0) -> Node:
        """A rounded box (or a circle of diameter ``w``) with ``label`` in the middle."""
        style = {"fc": FILL[color], "ec": color if color != INK else MUTED, "lw": lw, "zorder": 3,
                 "ls": (0, (3, 2)) if dashed else "-"}
        if circle:
            self.ax.add_patch(Circle((x, y), w / 2, **style))
        else:
            self.ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, **style,
                                             boxstyle="round,pad=0,rounding_size=0.06"))
        self.text(x, y, label, size=size, color=text_color)
        return Node(x, y, w, w if circle else h, circle)

    def ring(self, node: Node, color: str) -> None:
        """An outline around ``node``: it is the one the text talks about."""
        self.ax.add_patch(FancyBboxPatch((node.x - node.w / 2 - 0.06, node.y - node.h / 2 - 0.06),
                                         node.w + 0.12, node.h + 0.12, fc="none", ec=color, lw=2,
                                         boxstyle="round,pad=0,rounding_size=0.09", zorder=4))

    def op(self, x: float, y: float, symbol: str, *, color: str = INK) -> Node:
        """A point-wise operation (⊙, +, 1−) in a small circle."""
        return self.box(x, y, symbol, w=0.34, circle=True, color=color,
                        size=SIZE if len(symbol) < 5 else SMALL)

    def arrow(self, *points: Point, color: str = INK, lw: float = 1.2, head: bool = True,
              dashed: bool = False, halo: bool = False, z: float = 2) -> None:
        """A polyline through ``points``; a Node at either end is left at its border."""
        pts = [_xy(p) for p in points]
        if isinstance(points[0], Node):
            pts[0] = points[0].toward(*pts[1])
        if isinstance(points[-1], Node):
            pts[-1] = points[-1].toward(*pts[-2])
        patch = FancyArrowPatch(path=MplPath(pts), arrowstyle="-|>" if head else "-",
                                mutation_scale=9, color=color, lw=lw, zorder=z,
                                linestyle=(0, (4, 2.5)) if dashed else "-", joinstyle="round",
                                capstyle="round")
        if halo:  # a white outline, so that a crossing line reads as passing underneath
            patch.set_path_effects([withStroke(linewidth=lw + 5, foreground="white"), Normal()])
        self.ax.add_patch(patch)

    def band(self, points: Sequence[Point], color: str, width: float) -> None:
        """A wide line under the drawing, through the centres of ``points`` (a highlighted path)."""
        xs, ys = zip(*(_xy(p) for p in points), strict=True)
        self.ax.plot(xs, ys, color=color, lw=width, solid_capstyle="round",
                     solid_joinstyle="round", zorder=1)

    def frame(self, x0: float, y0: float, x1: float, y1: float, title: str, color: str) -> None:
        """A tinted rectangle behind a group of nodes, with ``title`` at its top left."""
        self.ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, fc=FILL[color], ec=color,
                                         lw=0.8, alpha=0.45, zorder=0.5,
                                         boxstyle="round,pad=0,rounding_size=0.1"))
        self.text(x1 - 0.1, y1 - 0.14, title, size=SMALL, color=MUTED, ha="right")

    def save(self, path: Path) -> None:
        """Write the SVG: no date and no creator, so the bytes depend on the drawing alone."""
        self.fig.savefig(path, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(self.fig)


def legend(card: Card, x: float, y: float, entries: Sequence[tuple[str, str]], *,
           dy: float = 0.3, size: float = SMALL) -> None:
    """Colour swatches with their labels, one per line from ``(x, y)`` down."""
    for i, (color, label) in enumerate(entries):
        card.ax.add_patch(Rectangle((x, y - i * dy - 0.06), 0.3, 0.12, fc=color, ec="none", zorder=3))
        card.text(x + 0.4, y - i * dy, label, size=size, ha="left")


# --------------------------------------------------------------------------------------------
# Chapter 1: backpropagation through time
# --------------------------------------------------------------------------------------------


def bptt_paths() -> Card:
    """The length-3 graph of chapter 1 and the three paths from L back to the shared W."""
    card = Card(8.2, 3.6)
    y, step = 2.2, 0.7
    names = ["h_0"] + [f"{v}_{t}" for t in (1, 2, 3) for v in "ach"]
    nodes = {n: card.box(0.55 + i * step, y, rf"$\vec {n}$", w=0.46, circle=True)
             for i, n in enumerate(names)}
    nodes["L"] = card.box(0.55 + len(names) * step, y, "$L$", w=0.46, circle=True, color=VERMILION)
    nodes["W"] = card.box(nodes["c_2"].x, 0.55, "$W$", w=0.46, circle=True, color=PURPLE)
    chain = names + ["L"]
    for a, b in zip(chain, chain[1:], strict=False):
        card.arrow(nodes[a], nodes[b])
    for t in (1, 2, 3):
        c = nodes[f"c_{t}"]
        nodes[f"b_{t}"] = b = card.box(c.x, 1.45, rf"$\vec b_{t}$", w=0.46, circle=True)
        card.arrow(b, c)
        card.arrow(nodes["W"], b)
        side = 1 if t == 3 else -1
        x_in = card.box(c.x + 0.62 * side, b.y, rf"$\vec x_{t}$", w=0.4, circle=True, color=MUTED)
        card.arrow(x_in, b)
        card.text(nodes[f"a_{t}"].x - step / 2, y + 0.16, "$U$", size=SMALL, color=MUTED)
        card.text(c.x + step / 2, y + 0.33, "tanh", size=SMALL, color=MUTED)
    colors = {1: "#a6cee3", 2: "#fdbf6f", 3: "#9bdcc4"}
    for t, width in ((1, 22), (2, 15), (3, 8)):
        back = ["L", "h_3", "c_3"]
        for k in range(3, t, -1):
            back += [f"a_{k}", f"h_{k - 1}", f"c_{k - 1}"]
        card.band([nodes[n] for n in [*back, f"b_{t}", "W"]], colors[t], width)
    legend(card, 0.35, 3.3, [
        (colors[1], r"$t=1$: $\vec\delta_1\vec x_1^\top$, through $\vec b_1$: the single chain,"
                    " the longest path"),
        (colors[2], r"$t=2$: $\vec\delta_2\vec x_2^\top$, through $\vec b_2$"),
        (colors[3], r"$t=3$: $\vec\delta_3\vec x_3^\top$, through $\vec b_3$: the shortest path")])
    card.text(0.35, 0.4, r"$\partial L/\partial W=\sum_{t=1}^{3}\vec\delta_t\,\vec x_t^\top$",
              size=SIZE + 1, ha="left")
    return card


# --------------------------------------------------------------------------------------------
# Chapters 2 and 3: the gated cells
# --------------------------------------------------------------------------------------------

KEEP = GREEN  # the path along which a gated cell keeps its memory


def dot(card: Card, x: float, y: float) -> None:
    """A junction: a line splits here."""
    card.ax.add_patch(Circle((x, y), 0.045, fc=INK, ec="none", zorder=4))


def gate_row(card: Card, h_in: Sequence[Point], x_in: float, y_bus: float,
             boxes: Sequence[tuple[float, str, str]]) -> list[Node]:
    """The boxes that read ``[X_t, H_{t-1}]``: the state arrives along ``h_in`` to the bus at
    height ``y_bus``, ``X_t`` joins it from below at ``x_in``, and an arrow goes up to each box
    ``(x, label, colour)``."""
    nodes = [card.box(x, y_bus + 0.85, label, w=0.62, h=0.4, color=color) for x, label, color in boxes]
    card.arrow(*h_in, (nodes[-1].x, y_bus), nodes[-1])
    for node in nodes[:-1]:
        card.arrow((node.x, y_bus), node)
        dot(card, node.x, y_bus)
    card.arrow((x_in, y_bus - 0.6), (x_in, y_bus), head=False)
    dot(card, x_in, y_bus)
    card.text(x_in, y_bus - 0.75, r"$\mathbf{X}_t$")
    return nodes


def gru_cell() -> Card:
    """The GRU of chapter 2 (the book's variant: the reset gate acts before W_hh)."""
    card = Card(8.4, 4.4)
    top, bus = 3.7, 0.95
    card.text(0.45, top, r"$\mathbf{H}_{t-1}$")
    keep_z = card.op(6.0, top, r"$\odot$", color=KEEP)
    plus = card.op(7.1, top, "$+$", color=KEEP)
    # The gates read [X_t, H_{t-1}] from the bus; the candidate reads X_t alone, on its own
    # line below the bus, and H_{t-1} only through the reset gate's product.
    r_gate, z_gate = (card.box(x, bus + 0.85, r"$\sigma$", w=0.62, h=0.4, color=ORANGE)
                      for x in (2.4, 3.8))
    card.arrow((1.2, top), (1.2, bus), (z_gate.x, bus), z_gate)
    card.arrow((r_gate.x, bus), r_gate)
    dot(card, r_gate.x, bus)
    x_in, x_split = 1.75, bus - 0.35
    card.arrow((x_in, bus - 0.6), (x_in, x_split), head=False)
    card.arrow((x_in, x_split), (x_in, bus))  # X_t joins the bus from below
    dot(card, x_in, x_split)
    card.text(x_in, bus - 0.75, r"$\mathbf{X}_t$")
    cand = card.box(5.2, r_gate.y, r"$\tanh$", w=0.62, h=0.4, color=BLUE)
    card.arrow((x_in, x_split), (cand.x, x_split), cand)  # X_t to the candidate
    reset = card.op(2.4, 2.75, r"$\odot$")
    card.arrow(r_gate, reset)
    card.arrow((2.4, top), reset)
    for x in (1.2, 2.4):
        dot(card, x, top)
    card.arrow(z_gate, (3.8, 3.2), (6.0, 3.2), keep_z)
    one_minus = card.op(6.6, 3.2, "$1-$")
    card.arrow((6.0, 3.2), one_minus)
    dot(card, 6.0, 3.2)
    mix = card.op(6.6, 2.45, r"$\odot$")
    card.arrow(one_minus, mix)
    card.arrow(cand, (6.6, cand.y), mix)
    card.arrow(mix, (7.1, mix.y), plus)
    card.arrow(reset, (cand.x, reset.y), cand, halo=True, z=2.5)
    card.arrow((0.85, top), keep_z, color=KEEP, lw=2.2)
    card.arrow(keep_z, plus, color=KEEP, lw=2.2)
    card.arrow(plus, (8.05, top), color=KEEP, lw=2.2)
    card.text(7.95, top + 0.3, r"$\mathbf{H}_t$")
    card.text(2.28, 2.3, r"$\mathbf{R}_t$", ha="right")
    card.text(3.68, 2.5, r"$\mathbf{Z}_t$", ha="right")
    card.text(5.85, 1.98, r"$\tilde{\mathbf{H}}_t$")
    card.text(4.5, 2.95, r"$\mathbf{R}_t\odot\mathbf{H}_{t-1}$", size=SMALL + 1)
    for node, name in ((r_gate, "reset gate"), (z_gate, "update gate"), (cand, "candidate")):
        card.text(node.x + 0.07, node.y - 0.38, name, size=SMALL - 0.5, color=MUTED, ha="left")
    card.text(3.9, 3.9, r"copy path, kept when $\mathbf{Z}_t\to 1$", size=SMALL, color=KEEP)
    card.text(3.9, 4.2, r"$\mathbf{H}_t=\mathbf{Z}_t\odot\mathbf{H}_{t-1}"
              r"+(1-\mathbf{Z}_t)\odot\tilde{\mathbf{H}}_t$", size=SMALL + 1)
    return card


def lstm_cell() -> Card:
    """The LSTM of chapter 3: three gates, the candidate, and the memory cell on top."""
    card = Card(8.4, 4.4)
    top, bus = 3.7, 0.95
    card.text(0.45, top, r"$\mathbf{C}_{t-1}$")
    card.text(0.45, bus, r"$\mathbf{H}_{t-1}$")
    forget = card.op(2.3, top, r"$\odot$", color=KEEP)
    plus = card.op(4.5, top, "$+$", color=KEEP)
    f_gate, i_gate, cand, o_gate = gate_row(card, [(0.85, bus)], 1.5, bus, [
        (2.3, r"$\sigma$", ORANGE), (3.5, r"$\sigma$", ORANGE), (4.5, r"$\tanh$", BLUE),
        (5.7, r"$\sigma$", ORANGE)])
    write = card.op(4.5, 2.75, r"$\odot$")
    card.arrow(f_gate, forget)
    card.arrow(i_gate, (3.5, write.y), write)
    card.arrow(cand, write)
    card.arrow(write, plus)
    squash = card.box(6.8, 2.75, r"$\tanh$", w=0.62, h=0.34)
    read = card.op(6.8, f_gate.y, r"$\odot$")
    card.arrow((6.8, top), squash)
    dot(card, 6.8, top)
    card.arrow(squash, read)
    card.arrow(o_gate, read)
    card.arrow(read, (6.8, bus), (8.05, bus))
    for a, b in (((0.85, top), forget), (forget, plus), (plus, (8.05, top))):
        card.arrow(a, b, color=KEEP, lw=2.2)
    card.text(7.95, top + 0.3, r"$\mathbf{C}_t$")
    card.text(7.95, bus + 0.3, r"$\mathbf{H}_t$")
    for node, sym, name in ((f_gate, r"$\mathbf{F}_t$", "forget gate"),
                            (i_gate, r"$\mathbf{I}_t$", "input gate"),
                            (cand, r"$\tilde{\mathbf{C}}_t$", "candidate cell"),
                            (o_gate, r"$\mathbf{O}_t$", "output gate")):
        if node is o_gate:
            card.text(node.x + 0.55, node.y + 0.2, sym)
        else:
            card.text(node.x - 0.1, node.y + 0.5, sym, ha="right")
        card.text(node.x + 0.07, node.y - 0.38, name, size=SMALL - 0.5, color=MUTED, ha="left")
    card.text(3.7, 4.08, r"memory cell, the carry path:   $\mathbf{C}_t=\mathbf{F}_t\odot"
              r"\mathbf{C}_{t-1}+\mathbf{I}_t\odot\tilde{\mathbf{C}}_t$", size=SMALL + 1)
    card.text(7.3, bus - 0.4, r"$\mathbf{H}_t=\mathbf{O}_t\odot\tanh(\mathbf{C}_t)$", size=SMALL + 1)
    return card


# --------------------------------------------------------------------------------------------
# Chapters 4 and 5: deep and bidirectional RNNs
# --------------------------------------------------------------------------------------------


def state_row(card: Card, xs: Sequence[float], y: float, labels: Sequence[str], *,
              color: str = BLUE, start: tuple[float, str] | None = None, w: float = 0.8,
              backward: bool = False) -> list[Node]:
    """One recurrent layer unrolled: a box per step, arrows along time (right to left when
    ``backward``) from the initial state ``start = (x, label)``."""
    nodes = [card.box(x, y, label, w=w, h=0.42, color=color) for x, label in zip(xs, labels, strict=True)]
    chain = nodes[::-1] if backward else nodes
    if start:
        card.text(start[0], y, start[1], size=SMALL + 1)
        card.arrow((start[0] + (-0.3 if backward else 0.3), y), chain[0])
    for a, b in zip(chain, chain[1:], strict=False):
        card.arrow(a, b)
    return nodes


def inputs(card: Card, xs: Sequence[float], labels: Sequence[str], y: float = 0.5) -> list[Node]:
    """The input boxes of an unrolled network."""
    return [card.box(x, y, s, w=0.62, h=0.34, color=MUTED, size=SMALL + 1 if s[0] != "$" else SIZE)
            for x, s in zip(xs, labels, strict=True)]


X_T = [rf"$\mathbf{{X}}_{t}$" for t in (1, 2, 3, 4)]


def deep_rnn() -> Card:
    """Chapter 4: three stacked layers over four steps, and what `outputs` and `H_n` hold."""
    card = Card(8.2, 4.6)
    xs = [1.5, 2.8, 4.1, 5.4]
    below = inputs(card, xs, X_T)
    for layer in (1, 2, 3):
        row = state_row(card, xs, 0.5 + 0.9 * layer,
                        [rf"$\mathbf{{H}}_{t}^{{({layer})}}$" for t in (1, 2, 3, 4)],
                        start=(0.45, rf"$\mathbf{{H}}_0^{{({layer})}}$"))
        for a, b in zip(below, row, strict=True):
            card.arrow(a, b)
        below = row
    outs = [card.box(x, 4.05, rf"$\mathbf{{O}}_{t}$", w=0.56, h=0.36, color=VERMILION)
            for t, x in enumerate(xs, 1)]
    for a, b in zip(below, outs, strict=True):
        card.arrow(a, b)
    card.text(0.95, 1.0, r"$\mathbf{W}_{xh}^{(1)}$", size=SMALL, color=MUTED)
    card.text(2.15, 1.6, r"$\mathbf{W}_{hh}^{(1)}$", size=SMALL, color=MUTED)
    card.frame(1.0, 2.95, 5.9, 3.55, "", ORANGE)
    card.frame(4.9, 1.15, 5.9, 3.5, "", GREEN)
    card.text(6.1, 3.25, "outputs (B, T, h):\ntop layer, every step", size=SMALL, ha="left", mono=True)
    card.text(6.1, 1.85, "H_n (L, B, h):\nthe last step,\nevery layer", size=SMALL, ha="left", mono=True)
    return card


def bidirectional_rnn() -> Card:
    """Chapter 5: a forward and a backward layer, concatenated; where `H_n` finds its rows."""
    card = Card(8.2, 4.6)
    xs = [1.6, 3.0, 4.4, 5.8]
    xin = inputs(card, xs, X_T)
    fwd = state_row(card, [x - 0.3 for x in xs], 1.5,
                    [rf"$\overrightarrow{{\mathbf{{H}}}}_{t}$" for t in (1, 2, 3, 4)], w=0.62,
                    start=(0.55, r"$\overrightarrow{\mathbf{H}}_0=0$"))
    bwd = state_row(card, [x + 0.3 for x in xs], 2.4,
                    [rf"$\overleftarrow{{\mathbf{{H}}}}_{t}$" for t in (1, 2, 3, 4)], w=0.62,
                    color=PURPLE, backward=True, start=(6.95, r"$\overleftarrow{\mathbf{H}}_5=0$"))
    cat = [card.box(x, 3.3, rf"$\mathbf{{H}}_{t}$", w=0.56, h=0.36) for t, x in enumerate(xs, 1)]
    outs = [card.box(x, 4.05, rf"$\mathbf{{O}}_{t}$", w=0.56, h=0.36, color=VERMILION)
            for t, x in enumerate(xs, 1)]
    for f, b, c, o, i in zip(fwd, bwd, cat, outs, xin, strict=True):
        card.arrow(i, f)
        card.arrow(i.side("n", 0.12), b.side("s", -0.12), halo=True, z=2.5)
        card.arrow(f.side("n"), c.side("s", -0.12), halo=True, z=2.5)
        card.arrow(b.side("n"), c.side("s", 0.12))
        card.arrow(c, o)
    card.text(0.75, 3.3, r"$[\overrightarrow{\mathbf{H}}_t,\overleftarrow{\mathbf{H}}_t]$",
              size=SMALL + 1)
    card.ring(fwd[-1], GREEN)
    card.ring(bwd[0], GREEN)
    card.text(6.65, 1.5, "H_n[0]", size=SMALL, mono=True, ha="left", color=GREEN)
    card.text(0.7, 2.4, "H_n[1]", size=SMALL, mono=True, color=GREEN)
    return card


# --------------------------------------------------------------------------------------------
# Chapters 6 and 7: encoder–decoders
# --------------------------------------------------------------------------------------------


def decoder_steps(card: Card, xs: Sequence[float], y: float, ins: Sequence[str],
                  outs: Sequence[str], *, feed: bool = False, label: str = "",
                  gap: float = 1.0) -> tuple[list[Node], list[Node], list[Node]]:
    """A decoder unrolled over ``xs``: input tokens ``gap`` below, a step box, output tokens
    above. With ``feed`` each output goes back (dashed) as the next input: free running."""
    inp = inputs(card, xs, ins, y - gap)
    steps = state_row(card, xs, y, [label] * len(xs), color=PURPLE, w=0.62)
    out = [card.box(x, y + gap, s, w=0.62, h=0.34, color=VERMILION, size=SMALL + 1 if s[0] != "$" else SIZE)
           for x, s in zip(xs, outs, strict=True)]
    for i, s, o in zip(inp, steps, out, strict=True):
        card.arrow(i, s)
        card.arrow(s, o)
    if feed:
        gap = (xs[1] - xs[0]) / 2
        for o, i in zip(out, inp[1:], strict=False):
            card.arrow(o.side("e"), (o.x + gap, o.y), (o.x + gap, i.y), i.side("w"), color=VERMILION,
                       dashed=True, halo=True, z=2.5)
    return inp, steps, out


def encoder_decoder() -> Card:
    """Chapter 6: the encoder reads the whole source; the decoder writes one token at a time."""
    card = Card(8.4, 3.3)
    enc = card.box(1.9, 1.6, "Encoder", w=2.9, h=0.55, color=GREEN)
    src = ["il", "fait", "froid", ".", "<eos>"]
    for token in inputs(card, [0.75 + i * 0.575 for i in range(len(src))], src, 0.6):
        card.arrow(token, (token.x, enc.y - enc.h / 2))
    xs = [4.6, 5.7, 6.8, 7.9]
    _, steps, _ = decoder_steps(card, xs, 1.6, ["<bos>", "it's", "cold", "."],
                                ["it's", "cold", ".", "<eos>"], feed=True, label="step")
    card.arrow(enc, steps[0])
    card.text(3.85, 1.8, "state", size=SMALL, color=MUTED)
    card.text(1.9, 2.55, "reads the whole source", size=SMALL, color=MUTED)
    card.text(6.25, 3.05, "the decoder writes one token per step, reading its last output", size=SMALL,
              color=MUTED)
    return card


def cho_decoder() -> Card:
    """Chapter 6: Cho et al.'s decoder reads the summary c at every step, and so does its output."""
    card = Card(8.9, 4.6)
    y_in, y_h, y_c = 1.0, 2.05, 3.95
    enc = state_row(card, [0.85, 1.95, 3.05], y_h, ["$h_1$", "$h_2$", "$h_S$"], color=GREEN, w=0.6)
    for node, x in zip(enc, inputs(card, [n.x for n in enc], ["$x_1$", "$x_2$", "$x_S$"], y_in), strict=True):
        card.arrow(x, node)
    card.text(2.5, y_h + 0.17, r"$\cdots$", size=SMALL)
    ctx = card.box(4.1, y_c, r"$c=\tanh(Vh_S)$", w=1.45, h=0.4, color=ORANGE)
    h0 = card.box(4.1, y_h, r"$h_0^{\prime}=\tanh(V^{\prime}c)$", w=1.45, h=0.4, color=PURPLE)
    card.arrow(enc[-1], (enc[-1].x, y_c), ctx)
    card.arrow(ctx, h0)
    xs = [5.55, 6.85, 8.15]
    ins, steps, outs = decoder_steps(card, xs, y_h, ["<bos>", "$y_1$", "$y_2$"],
                                     [f"$p(y_{t})$" for t in (1, 2, 3)])
    card.arrow(h0, steps[0])
    for t, node in enumerate(steps, 1):
        card.text(node.x, node.y, rf"$h_{t}^{{\prime}}$")
    card.arrow(ctx, (xs[-1] + 0.5, y_c), head=False, color=ORANGE, lw=1.6)
    for i, s, o in zip(ins, steps, outs, strict=True):
        tap = s.x + 0.5
        card.arrow((tap, y_c), (tap, o.y), o.side("e"), color=ORANGE, lw=1.6)
        card.arrow((tap, o.y), (tap, s.y + 0.12), s.side("e", 0.12), color=ORANGE, lw=1.6)
        dot(card, tap, y_c)
        dot(card, tap, o.y)
        card.arrow(i.side("w"), (s.x - 0.5, i.y), (s.x - 0.5, o.y), o.side("w"))
    card.frame(0.35, 0.6, 3.45, 2.7, "encoder (GRU)", GREEN)
    card.frame(4.95, 0.6, 8.75, 3.55, "decoder (GRU)", PURPLE)
    card.text(4.45, 0.3, r"$h_t^{\prime}=\operatorname{GRU}([e(y_{t-1});c],h_{t-1}^{\prime})$,    "
              r"$p(y_t\mid y_{<t},x)=\operatorname{softmax}(W_o[h_t^{\prime};e(y_{t-1});c]+b_o)$",
              size=SMALL + 1)
    return card


def seq2seq_reversed() -> Card:
    """Chapter 7: the same source in its normal order and reversed; the path from x_1 to y_1."""
    card = Card(8.6, 4.75)
    enc_x, dec_x = [0.9, 1.75, 2.6, 3.45], [4.75, 5.6, 6.45, 7.3]
    for y, order, steps_apart in ((3.2, [1, 2, 3], 4), (1.0, [3, 2, 1], 2)):
        tokens = [f"$x_{i}$" for i in order] + ["<eos>"]
        enc = state_row(card, enc_x, y, [""] * 4, color=GREEN, w=0.62)
        for box, tok in zip(enc, inputs(card, enc_x, tokens, y - 0.62), strict=True):
            card.arrow(tok, box)
        _, dec, _ = decoder_steps(card, dec_x, y, ["<bos>", "$y_1$", "$y_2$", "$y_3$"],
                                  ["$y_1$", "$y_2$", "$y_3$", "<eos>"], gap=0.62)
        card.arrow(enc[-1], dec[0])
        card.text(4.1, y + 0.17, "$v$", size=SMALL + 1)
        first = enc[order.index(1)]
        card.band([first, *enc[order.index(1) + 1:], dec[0]], "#fdbf6f", 16)
        card.text(7.9, y, f"$x_1$ to $y_1$:\n{steps_apart} steps", size=SMALL + 0.5, ha="left")
    card.text(0.35, 4.45, "the source in its normal order", size=SMALL + 0.5, color=MUTED, ha="left")
    card.text(0.35, 2.25, "the source reversed (Sutskever et al.); <eos> stays last", size=SMALL + 0.5,
              color=MUTED, ha="left")
    return card


def teacher_forcing() -> Card:
    """Chapter 7: what the decoder reads during training, the truth or its own predictions."""
    card = Card(8.4, 3.65)
    outs = [rf"$\hat y_{t}$" for t in (1, 2, 3)]
    truth, _, _ = decoder_steps(card, [0.9, 2.0, 3.1], 1.7, ["<bos>", "$y_1$", "$y_2$"], outs)
    decoder_steps(card, [5.0, 6.1, 7.2], 1.7, ["<bos>", r"$\hat y_1$", r"$\hat y_2$"], outs, feed=True)
    for node in truth[1:]:
        card.ring(node, GREEN)
    card.text(2.0, 3.3, r"teacher forcing ($\epsilon=1$): reads the true $y_{t-1}$", size=SMALL + 0.5)
    card.text(6.1, 3.3, r"free running ($\epsilon=0$): reads its own $\hat y_{t-1}$", size=SMALL + 0.5)
    card.text(2.0, 0.2, "green: words of the reference translation", size=SMALL, color=MUTED)
    card.text(6.1, 0.2, "dashed: the model's greedy prediction, fed back", size=SMALL, color=MUTED)
    card.ax.plot([4.05, 4.05], [0.3, 3.45], color=EDGE, lw=1)
    return card


# --------------------------------------------------------------------------------------------
# Chapter 8: attention
# --------------------------------------------------------------------------------------------


def badge(card: Card, node: Node, number: int) -> None:
    """The order in which a decoder step computes ``node``: a numbered dot at its corner."""
    x, y = node.x - node.w / 2, node.y + node.h / 2
    card.ax.add_patch(Circle((x, y), 0.14, fc=INK, ec="white", lw=1, zorder=6))
    card.text(x, y, str(number), size=SMALL, color="white", zorder=7)


def attend(card: Card, x0: float, query: str) -> tuple[Node, Node, Node]:
    """Score every encoder state against ``query``, softmax, weighted sum: the three boxes."""
    enc = inputs(card, [x0 + 1.95 + 0.7 * s for s in range(4)], [rf"$\bar h_{s}$" for s in (1, 2, 3, 4)], 0.7)
    card.text(x0 + 3.0, 0.3, r"encoder states $\bar h_1,\dots,\bar h_S$", size=SMALL, color=MUTED)
    score = card.box(x0 + 3.0, 1.5, rf"$\mathrm{{score}}({query},\bar h_s)$", w=2.5, h=0.38, color=ORANGE)
    soft = card.box(x0 + 3.0, 2.25, r"softmax over $s$", w=2.5, h=0.36, color=ORANGE, size=SMALL + 1)
    ctx = card.box(x0 + 3.0, 3.45, r"$c_t=\sum_s a_t(s)\,\bar h_s$", w=2.5, h=0.38, color=ORANGE)
    for h, a in zip(enc, (0.1, 0.65, 0.15, 0.1), strict=True):
        card.arrow(h, (h.x, score.y - score.h / 2))
        card.ax.add_patch(Rectangle((h.x - 0.12, 2.5), 0.24, 0.6 * a, fc=ORANGE, ec="none", zorder=3))
        card.arrow((h.x, 2.52 + 0.6 * a), (h.x, ctx.y - ctx.h / 2), lw=0.9)
    card.text(x0 + 1.5, 2.68, "$a_t(s)$", size=SMALL + 1)
    card.arrow(score, soft)
    card.arrow(enc[-1].side("e"), (x0 + 4.45, enc[-1].y), (x0 + 4.45, ctx.y), ctx.side("e"), lw=0.9)
    card.text(x0 + 4.4, 1.07, r"$\bar h_s$", size=SMALL + 1, ha="right")
    return score, soft, ctx


def attention_decoders() -> Card:
    """Chapter 8: one decoder step of Luong's model (update, then attend) and of Bahdanau's
    (attend with the previous state, then update the GRU; the maxout output reads the update's
    inputs), numbered in the order they compute."""
    card = Card(9.4, 6.0)
    for x0, title in ((0.1, "Luong: update, then attend"), (4.8, "Bahdanau: attend, then update")):
        card.text(x0 + 2.4, 5.72, title, size=SIZE)
    score, soft, ctx = attend(card, 0.1, "h_t")
    rnn = card.box(0.85, score.y, "GRU", w=1.0, h=0.38, color=PURPLE, size=SMALL + 1)
    for dx, label in ((-0.32, "$h_{t-1}$"), (0.3, "$e(y_{t-1})$")):
        card.text(rnn.x + dx, 0.7, label, size=SMALL + 1)
        card.arrow((rnn.x + dx, 0.85), rnn.side("s", dx))
    card.arrow(rnn, score)
    card.text(1.55, score.y + 0.2, "$h_t$", size=SMALL + 1)
    combine = card.box(2.45, 4.45, r"$\tilde h_t=\tanh(W_c[c_t;h_t])$", w=3.9, h=0.4, color=PURPLE)
    out = card.box(2.45, 5.2, r"$p(y_t)=\mathrm{softmax}(W_s\tilde h_t)$", w=3.9, h=0.4, color=VERMILION)
    card.arrow(rnn, (rnn.x, combine.y - combine.h / 2))
    card.arrow(ctx, (ctx.x, combine.y - combine.h / 2))
    card.arrow(combine, (out.x, out.y - out.h / 2))
    for i, node in enumerate((rnn, score, soft, ctx, combine, out), 1):
        badge(card, node, i)
    score, soft, ctx = attend(card, 4.8, "s_{t-1}")
    card.text(5.55, 0.7, "$s_{t-1}$", size=SMALL + 1)
    card.arrow((5.55, 0.85), (5.55, score.y), score)
    dot(card, 5.55, score.y)
    # 4 and 5 read the same three inputs: s_{t-1} (left line), e(y_{t-1}) and c_t
    out = card.box(7.15, 5.2, r"$p(y_t)=\mathrm{softmax}(W_o\,\mathrm{maxout}(U_o s_{t-1}+V_o e(y_{t-1})"
                   r"+C_o c_t))$", w=3.9, h=0.4, color=VERMILION, size=SMALL + 1)
    update = card.box(7.55, 4.45, r"$s_t=\mathrm{GRU}([e(y_{t-1});c_t],\,s_{t-1})$", w=2.3, h=0.4,
                      color=PURPLE, size=SMALL)
    bottom = out.y - out.h / 2
    card.arrow((5.55, score.y), (5.55, bottom))
    dot(card, 5.55, update.y)
    card.arrow((5.55, update.y), update.side("w"))
    card.text(6.0, 3.8, "$e(y_{t-1})$", size=SMALL + 1)
    card.arrow((6.0, 3.93), (6.0, bottom))
    dot(card, 6.0, 4.08)
    card.arrow((6.0, 4.08), (6.65, 4.08), (6.65, update.y - update.h / 2))
    card.arrow(ctx.side("n", -0.15), (ctx.x - 0.15, update.y - update.h / 2))
    card.arrow(ctx.side("n", 1.0), (ctx.x + 1.0, bottom))
    card.text(ctx.x + 1.12, 3.95, "$c_t$", size=SMALL + 1, ha="left")
    card.text(5.62, 4.8, "$s_{t-1}$", size=SMALL, ha="left")
    card.text(update.x, update.y + 0.33, "$s_t$: the next query", size=SMALL, color=MUTED)
    for i, node in enumerate((score, soft, ctx, update, out), 1):
        badge(card, node, i)
    card.ax.plot([4.75, 4.75], [0.25, 5.85], color=EDGE, lw=1)
    return card


# --------------------------------------------------------------------------------------------
# Chapter 9: beam search
# --------------------------------------------------------------------------------------------


def prefix_probabilities(example: search_examples.TableExample, prefix: tuple[int, ...]) -> list[float]:
    """The next-token row of the example's table after ``prefix`` (token ids)."""
    step = example.step
    return step.table.get(prefix, step.default)


def beam_tree() -> Card:
    """Chapter 9: the lecture notes' beam example, k = 2, every candidate with its P."""
    example = search_examples.seed_beam_example()
    step = example.step
    result = beam.beam_search(step, None, 1, bos=example.bos, eos=example.eos, beam_size=2,
                              max_len=example.max_len, keep_history=True)
    beams = [{tuple(tokens) for tokens in record.tokens[0].tolist()} for record in result.history]
    words = [i for i, tok in enumerate(step.vocab) if tok != "<eos>"]
    card = Card(8.8, 5.4)
    rows = 10

    def y_of(slot: float) -> float:
        return 4.55 - 0.42 * slot

    root = card.box(0.55, y_of((rows - 1) / 2), "<bos>", w=0.62, h=0.34, color=MUTED, size=SMALL)
    frontier = [((), root, 1.0)]
    for depth, kept in enumerate(beams):
        x = 2.15 + depth * 2.35
        card.text(x, 5.05, f"step {depth + 1}: keep {len(kept)} of {len(frontier) * len(words)}",
                  size=SMALL + 1, color=MUTED)
        children = [(prefix + (tok,), parent, p * prefix_probabilities(example, prefix)[tok])
                    for prefix, parent, p in frontier for tok in words]
        frontier = []
        for i, (prefix, parent, p) in enumerate(children):
            keep = prefix in kept
            label = f"{''.join(step.decode(prefix))}   {p:.3f}".replace("0.", ".")
            node = card.box(x, y_of(i * (rows - 1) / (len(children) - 1)), label, w=1.45, h=0.34,
                            size=SMALL + 1.5, color=BLUE if keep else MUTED, dashed=not keep,
                            text_color=INK if keep else MUTED, lw=1.4 if keep else 0.8)
            card.arrow(parent.side("e"), node.side("w"), color=INK if keep else EDGE,
                       lw=1.1 if keep else 0.8)
            if keep:
                frontier.append((prefix, node, p))
    best = max(frontier, key=lambda entry: entry[2])
    card.ring(best[1], GREEN)
    card.text(best[1].x + 0.85, best[1].y, "best of\nlast beam", size=SMALL + 1, color=GREEN,
              ha="left")
    card.text(0.35, 0.3, "P(prefix) = P(its parent) × P(token | parent); "
              "solid: in the beam, dashed: pruned", size=SMALL, color=MUTED, ha="left")
    return card


# --------------------------------------------------------------------------------------------
# Chapter 10: BLEU
# --------------------------------------------------------------------------------------------

# The chapter's examples: Papineni et al.'s "the the the ..." and their candidate 1.
THE7 = "the the the the the the the"
CAT_REFS = ["the cat is on the mat", "there is a cat on the mat"]
PAPINENI_REFS = [
    "It is a guide to action that ensures that the military will forever heed Party commands.",
    "It is the guiding principle which guarantees the military forces always being under the "
    "command of the Party.",
    "It is the practical guide for the army always to heed the directions of the party.",
]
CANDIDATE_1 = ("It is a guide to action which ensures that the military always obeys the commands "
               "of the party.")


def clipped_matches(hyp: Sequence[str], refs: Sequence[Sequence[str]], n: int) -> list[bool]:
    """For every n-gram of ``hyp`` in order: does it count? (at most as often as in the
    reference where it is most frequent: BLEU's clipping)."""
    best: dict[tuple[str, ...], int] = {}
    for ref in refs:
        for gram, count in bleu.ngram_counts(ref, n).items():
            if len(gram) == n:
                best[gram] = max(best.get(gram, 0), count)
    used: dict[tuple[str, ...], int] = {}
    flags = []
    for i in range(len(hyp) - n + 1):
        gram = tuple(hyp[i:i + n])
        used[gram] = used.get(gram, 0) + 1
        flags.append(used[gram] <= best.get(gram, 0))
    assert (sum(flags), len(flags)) == bleu.clipped_precision(hyp, refs, n)
    return flags


def token_row(card: Card, x: float, y: float, tokens: Sequence[str], counted: Sequence[bool]) -> None:
    """Words in boxes from ``(x, y)`` to the right; the counted ones in green."""
    for tok, ok in zip(tokens, counted, strict=True):
        w = 0.14 + 0.085 * len(tok)
        card.box(x + w / 2, y, tok, w=w, h=0.3, size=SMALL, color=GREEN if ok else MUTED, dashed=not ok)
        x += w + 0.06


def bleu_matching() -> Card:
    """Chapter 10: clipping on "the the the ..." and the n-gram matches of candidate 1."""
    card = Card(9.0, 5.6)
    hyp, refs = THE7.split(), [r.split() for r in CAT_REFS]
    card.text(0.35, 5.2, "clipping: a word's count capped by one reference", size=SMALL + 1,
              ha="left")
    rows = [("hypothesis", hyp, clipped_matches(hyp, refs, 1))]
    rows += [(f"reference {i}", ref, [tok == "the" for tok in ref]) for i, ref in enumerate(refs, 1)]
    for k, (label, tokens, counted) in enumerate(rows):
        card.text(0.35, 4.75 - 1.05 * k, label, size=SMALL, color=MUTED, ha="left")
        token_row(card, 0.35, 4.42 - 1.05 * k, tokens, counted)
    most = max(ref.count("the") for ref in refs)
    card.text(0.35, 1.65, f"'the': {len(hyp)} in the hypothesis, at most {most} in one reference",
              size=SMALL + 0.5, ha="left")
    n = len(hyp)
    card.text(0.35, 1.2, rf"$p_1=\min({n},{most})\,/\,{n}={most}/{n}$, not ${n}/{n}$", size=SIZE,
              ha="left")
    words = CANDIDATE_1.rstrip(".").split()
    ref_words = [r.rstrip(".").split() for r in PAPINENI_REFS]
    card.text(6.9, 5.2, "candidate 1: which n-grams match", size=SMALL + 1)
    for i, word in enumerate(words):
        card.text(6.0, 4.55 - 0.215 * i, word, size=SMALL + 0.5, ha="right")
    for n in (1, 2, 3, 4):
        x = 6.05 + 0.52 * n
        card.text(x, 4.85, f"$n={n}$", size=SMALL)
        flags = clipped_matches(words, ref_words, n)
        for i, ok in enumerate(flags):
            card.box(x, 4.55 - 0.215 * i, "", w=0.4, h=0.16, color=GREEN if ok else MUTED, dashed=not ok)
        card.text(x, 0.6, f"{sum(flags)}/{len(flags)}", size=SMALL)
    card.text(5.95, 0.6, "$p_n$", size=SMALL + 1, ha="right")
    card.ax.plot([4.65, 4.65], [0.3, 5.4], color=EDGE, lw=1)
    return card


# --------------------------------------------------------------------------------------------
# Chapter 11: the translator
# --------------------------------------------------------------------------------------------


def stage(card: Card, x: float, y: float, name: str, value: str, color: str) -> Node:
    """One stage of the translator: the function's name, and what it makes of the example."""
    node = card.box(x, y, "", w=2.05, h=0.75, color=color)
    card.text(x, y + 0.15, name, size=SMALL, mono=True)
    card.text(x, y - 0.17, value, size=SMALL - 0.5)
    return node


def translator_pipeline() -> Card:
    """Chapter 11: from a French sentence to an English one, and the file that holds it all."""
    card = Card(9.0, 4.3)
    sentence = "Il fait froid dehors."  # and the chapter's translator's output for it:
    pieces = subwords.pre_tokenize(sentence)
    output = subwords.pre_tokenize("It's cold outside.")
    top = [stage(card, 1.2, 3.3, "input", sentence, MUTED),
           stage(card, 3.4, 3.3, "src_vocab.tokenize", " ".join(pieces[:3]) + " …", MUTED),
           stage(card, 5.6, 3.3, "encode_source", "subword ids + <eos>", MUTED),
           stage(card, 7.8, 3.3, "encoder (GRU)", r"$\bar h_1,\dots,\bar h_S$", GREEN)]
    bottom = [stage(card, 7.8, 1.75, "beam_search", r"decoder steps, $k$, $\alpha$", PURPLE),
              stage(card, 5.6, 1.75, "tgt_vocab.decode", " ".join(output), MUTED),
              stage(card, 3.4, 1.75, "detokenize", subwords.detokenize(output), MUTED),
              stage(card, 1.2, 1.75, "output", subwords.detokenize(output), VERMILION)]
    chain = top + bottom
    for a, b in zip(chain, chain[1:], strict=False):
        card.arrow(a, b)
    ckpt = card.box(4.5, 0.55, "translator-fr-en.pt: weights, both vocabularies and their merges, "
                    "model class and config, default search", w=8.3, h=0.38, color=ORANGE,
                    size=SMALL)
    card.arrow(ckpt.side("n", 3.3), bottom[0], dashed=True, color=ORANGE)
    card.text(4.5, 0.95, "load_translator: one file rebuilds the whole pipeline", size=SMALL,
              color=MUTED)
    card.text(4.5, 4.0, f'seq2seq-translate translator-fr-en.pt "{sentence}"',
              size=SMALL, mono=True)
    return card


# --------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------

FIGURES: dict[str, Callable[[], Card]] = {
    "ch01_bptt_paths.svg": bptt_paths,
    "ch02_gru_cell.svg": gru_cell,
    "ch03_lstm_cell.svg": lstm_cell,
    "ch04_deep_rnn.svg": deep_rnn,
    "ch05_bidirectional_rnn.svg": bidirectional_rnn,
    "ch06_encoder_decoder.svg": encoder_decoder,
    "ch06_cho_decoder.svg": cho_decoder,
    "ch07_reversed_source.svg": seq2seq_reversed,
    "ch07_teacher_forcing.svg": teacher_forcing,
    "ch08_luong_bahdanau.svg": attention_decoders,
    "ch09_beam_tree.svg": beam_tree,
    "ch10_ngram_clipping.svg": bleu_matching,
    "ch11_translator_pipeline.svg": translator_pipeline,
}


def write_all(folder: Path) -> list[Path]:
    """Draw every figure into ``folder``; returns the files written."""
    _style()
    paths = []
    for name, draw in FIGURES.items():
        draw().save(folder / name)
        paths.append(folder / name)
    return paths


def png_bytes(name: str, dpi: float) -> bytes:
    """Figure ``name`` (a key of ``FIGURES``) as PNG bytes at ``dpi``, for the notebook
    edition (``scripts/make_edition.py``): no metadata, so the bytes depend on the drawing."""
    import io

    _style()
    card = FIGURES[name]()
    buffer = io.BytesIO()
    card.fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(card.fig)
    return buffer.getvalue()


def stale(folder: Path = HERE) -> list[str]:
    """The figures whose file in ``folder`` is missing or differs from a fresh drawing."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = write_all(Path(tmp))
        return [p.name for p in fresh
                if not (folder / p.name).exists() or (folder / p.name).read_bytes() != p.read_bytes()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary folder and compare with figures/*.svg")
    args = parser.parse_args(argv)
    if args.check:
        differ = stale()
        print("figures up to date" if not differ else "out of date: " + ", ".join(differ))
        return 1 if differ else 0
    for path in write_all(HERE):
        print(path.relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
