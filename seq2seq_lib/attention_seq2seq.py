r"""Chapter 8: decoders with attention, in Bahdanau's and in Luong's style.

Both plug into :class:`~seq2seq_lib.encoder_decoder.EncoderDecoder` (same encoder, trainer,
greedy and beam search, evaluation as chapter 7). Their state carries the encoder outputs
``enc`` ``(N, S, h)`` and the source ``mask`` ``(N, S)`` (``True`` on real tokens) so every
step can attend; all entries are batch-first, so searches can reorder them.

**Bahdanau et al. (2015): attend, then update.** The encoder is bidirectional: the
*annotation* of source word :math:`s` is :math:`\bar h_s = [\overrightarrow h_s;
\overleftarrow h_s]`, so it summarises the words on both sides of it. The decoder starts from
the backward RNN's final state, :math:`s_0 = \tanh(W_{init} \overleftarrow h_1)`; the
previous state :math:`s_{t-1}` is the query, the context enters the recurrent update, and
the output is a *deep output* with one maxout layer (the paper's appendix A.2.2):

.. math::

    a_t &= \operatorname{softmax}_s \operatorname{score}(s_{t-1}, \bar h_s), \quad
    c_t = \sum_s a_t(s)\, \bar h_s, \\
    s_t &= \operatorname{GRU}([e(y_{t-1}); c_t], s_{t-1}),

    \tilde t_t &= U_o s_{t-1} + V_o e(y_{t-1}) + C_o c_t, \\
    t_{t,j} &= \max(\tilde t_{t,2j-1}, \tilde t_{t,2j}), \qquad o_t = W_o t_t .

(With ``bidirectional_encoder=False`` the decoder starts from the unidirectional encoder's
final state, like the others.)

**Luong et al. (2015): update, then attend and combine.** The new state :math:`h_t` is the
query; context and state are combined into the attentional state :math:`\tilde h_t`, which
produces the output (and, with *input feeding*, is fed to the next step):

.. math::

    h_t &= \operatorname{RNN}([e(y_{t-1}); \tilde h_{t-1}], h_{t-1}), \\
    a_t &= \operatorname{softmax}_s \operatorname{score}(h_t, \bar h_s), \quad
    c_t = \sum_s a_t(s)\, \bar h_s, \\
    \tilde h_t &= \tanh(W_c [c_t; h_t]), \quad o_t = W_s \tilde h_t .

Without input feeding the RNN input is :math:`e(y_{t-1})` alone, and with teacher forcing all
steps run in one call — much faster on a CPU.

Both decoders return their attention weights ``(N, T, S)`` in the state under
``"attention"`` (the weights of the last call), for plots.

:class:`TranslatorModel` builds any of them (and the no-attention baseline) from a
:class:`TranslatorConfig`; chapter 8's training recipes are in :mod:`seq2seq_lib.recipes.ch08`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
from torch import nn

from seq2seq_lib.attention import SCORES, AdditiveScore, Attention, make_score, masked_softmax
from seq2seq_lib.decoding import greedy_search
from seq2seq_lib.encoder_decoder import Decoder, EncoderDecoder, EncState, GRUEncoder, State
from seq2seq_lib.vocab import PAD_ID


def _initial_hidden(enc_state: EncState, num_layers: int) -> torch.Tensor:
    """The encoder's final state ``(L_enc, N, h)`` as a batch-first ``(N, num_layers, h)``."""
    h = enc_state[0] if isinstance(enc_state, tuple) else enc_state
    if h.shape[0] < num_layers:
        raise ValueError(f"the decoder has {num_layers} layers but the encoder only {h.shape[0]}")
    return h[-num_layers:].transpose(0, 1).contiguous()


def source_mask(src_lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """``(N, S)`` boolean mask, ``True`` on the first ``src_lengths[i]`` positions."""
    positions = torch.arange(max_len, device=src_lengths.device)
    return positions[None, :] < src_lengths[:, None]


class BahdanauDecoder(Decoder):
    r"""Attend with :math:`s_{t-1}`, update the GRU with the context, predict with a maxout
    deep output (Bahdanau et al., 2015; see the module docstring).

    Step :math:`t` reads the previous token :math:`y_{t-1}` and the previous state
    :math:`s_{t-1}` (the top layer's, with several layers):

    .. math::

        a_t &= \operatorname{softmax}_s \operatorname{score}(s_{t-1}, \bar h_s), \quad
        c_t = \sum_s a_t(s)\, \bar h_s, \\
        s_t &= \operatorname{GRU}([e(y_{t-1}); c_t], s_{t-1}),

        \tilde t_t &= U_o s_{t-1} + V_o e(y_{t-1}) + C_o c_t, \\
        t_{t,j} &= \max(\tilde t_{t,2j-1}, \tilde t_{t,2j}) \ (j = 1, \dots, l), \\
        p(y_t \mid y_{<t}, x) &= \operatorname{softmax}(W_o t_t).

    The output reads :math:`s_{t-1}`, as in the paper's appendix A.2.2 (its eq. 4 writes
    :math:`s_t`): everything step :math:`t` predicts comes from the inputs of its update,
    and :math:`s_t` is the query of the next step. The maxout layer costs
    :math:`2l(h + e + Dh) + lV` weights instead of :math:`(h + e + Dh)\,V` for a linear
    output layer on :math:`[s; c; e]`.

    Shapes (``B`` sentences, ``T`` steps, ``D*h`` the annotation size): :math:`s`
    ``(B, T, h)``, :math:`e(y)` ``(B, T, e)``, :math:`c` ``(B, T, D*h)``, :math:`\tilde t`
    ``(B, T, 2l)``, :math:`t` ``(B, T, l)``, logits ``(B, T, V)``. Layers: ``U_o``
    (:math:`h \to 2l`, the layer's bias), ``V_o`` (:math:`e \to 2l`), ``C_o``
    (:math:`Dh \to 2l`), ``W_o`` (:math:`l \to V`, with the output bias).

    Args:
        vocab_size, embed_size, hidden_size: target vocabulary, embedding and state sizes.
        score: ``"additive"`` (Bahdanau's, default), ``"dot"``, ``"general"`` or ``"concat"``.
        num_layers: GRU layers (the top layer's state is the query).
        attention_size: hidden size of the additive/concat score.
        bidirectional_encoder: the encoder is bidirectional (as in the paper): annotations of
            size ``2 * hidden_size``, and :math:`s_0^{(l)} = \tanh(W_{init}
            \overleftarrow h_1^{(l)})` from the backward final state of each layer ``l``
            (``self.W_init``). Otherwise :math:`s_0` is the encoder's final state.
        maxout_size: :math:`l`, the maxout layer's size (default ``hidden_size``).

    State: ``{"h": (N, L, h), "enc": (N, S, D*h), "mask": (N, S), "attention": (N, T, S)}``
    (``D`` = 2 with a bidirectional encoder, else 1).
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, *,
                 score: str = "additive", num_layers: int = 1,
                 attention_size: int | None = None, bidirectional_encoder: bool = False,
                 maxout_size: int | None = None) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.num_layers = num_layers
        self.bidirectional_encoder = bidirectional_encoder
        key_size = 2 * hidden_size if bidirectional_encoder else hidden_size
        maxout = maxout_size or hidden_size
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.score = make_score(score, hidden_size, key_size, attention_size)
        self.rnn = nn.GRU(embed_size + key_size, hidden_size, num_layers, batch_first=True)
        self.U_o = nn.Linear(hidden_size, 2 * maxout)
        self.V_o = nn.Linear(embed_size, 2 * maxout, bias=False)
        self.C_o = nn.Linear(key_size, 2 * maxout, bias=False)
        self.W_o = nn.Linear(maxout, vocab_size)
        if bidirectional_encoder:
            self.W_init = nn.Linear(hidden_size, hidden_size)

    def init_state(self, enc_outputs: torch.Tensor, enc_state: EncState,
                   src_lengths: torch.Tensor) -> State:
        mask = source_mask(src_lengths, enc_outputs.shape[1])
        n, s = mask.shape
        if self.bidirectional_encoder:
            h = enc_state[0] if isinstance(enc_state, tuple) else enc_state  # (2 L_enc, N, h)
            backward = h.view(-1, 2, n, h.shape[-1])[:, 1]  # (L_enc, N, h): each layer's <-h_1
            if backward.shape[0] < self.num_layers:
                raise ValueError(f"the decoder has {self.num_layers} layers but the encoder "
                                 f"only {backward.shape[0]}")
            h0 = torch.tanh(self.W_init(backward[-self.num_layers:])).transpose(0, 1)
        else:
            h0 = _initial_hidden(enc_state, self.num_layers)
        return {"h": h0.contiguous(), "enc": enc_outputs, "mask": mask,
                "attention": enc_outputs.new_zeros(n, 0, s)}

    def deep_output(self, s_prev: torch.Tensor, emb: torch.Tensor,
                    context: torch.Tensor) -> torch.Tensor:
        """Logits :math:`W_o t` with :math:`t` the maxout of :math:`U_o s_{t-1} + V_o e(y_{t-1})
        + C_o c_t` over pairs of units: ``(B, T, h), (B, T, e), (B, T, D*h) -> (B, T, V)``."""
        t_tilde = self.U_o(s_prev) + self.V_o(emb) + self.C_o(context)  # (B, T, 2l)
        t = t_tilde.unflatten(-1, (-1, 2)).amax(-1)  # units 2j-1, 2j -> their max: (B, T, l)
        return self.W_o(t)

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        emb = self.embedding(tgt_in)  # (B, T, e)
        h = state["h"].transpose(0, 1).contiguous()  # (L, B, h) for nn.GRU
        enc, mask = state["enc"], state["mask"]
        additive = isinstance(self.score, AdditiveScore)
        projected = self.score.project_keys(enc) if additive else None  # once per sentence
        queries, contexts, weights = [], [], []
        for t in range(tgt_in.shape[1]):
            query = h[-1]  # s_{t-1}, top layer: (B, h)
            scores = self.score(query, enc, projected) if additive else self.score(query, enc)
            w = masked_softmax(scores, mask)  # (B, S)
            context = torch.bmm(w.unsqueeze(1), enc).squeeze(1)  # c_t: (B, D*h)
            _, h = self.rnn(torch.cat([emb[:, t], context], -1).unsqueeze(1), h)  # s_t
            queries.append(query)
            contexts.append(context)
            weights.append(w)
        logits = self.deep_output(torch.stack(queries, 1), emb, torch.stack(contexts, 1))
        new_state = {"h": h.transpose(0, 1), "enc": enc, "mask": mask,
                     "attention": torch.stack(weights, 1)}
        return logits, new_state


class LuongDecoder(Decoder):
    """Update the RNN, then attend with :math:`h_t` and combine (see module docstring).

    Args:
        vocab_size, embed_size, hidden_size: sizes.
        score: ``"dot"``, ``"general"`` (default), ``"concat"`` or ``"additive"``.
        num_layers: GRU layers.
        input_feeding: feed :math:`\\tilde h_{t-1}` into the next step (Luong et al.'s
            input-feeding approach); without it, teacher-forced training runs all steps at once.

    State: ``{"h": (N, L, h), "h_tilde": (N, h), "enc", "mask", "attention"}``.
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, *,
                 score: str = "general", num_layers: int = 1, input_feeding: bool = False,
                 attention_size: int | None = None) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.num_layers = num_layers
        self.input_feeding = input_feeding
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.attention = Attention(make_score(score, hidden_size, hidden_size, attention_size))
        rnn_input = embed_size + (hidden_size if input_feeding else 0)
        self.rnn = nn.GRU(rnn_input, hidden_size, num_layers, batch_first=True)
        self.W_c = nn.Linear(2 * hidden_size, hidden_size, bias=False)
        self.W_s = nn.Linear(hidden_size, vocab_size)

    def init_state(self, enc_outputs: torch.Tensor, enc_state: EncState,
                   src_lengths: torch.Tensor) -> State:
        mask = source_mask(src_lengths, enc_outputs.shape[1])
        h = _initial_hidden(enc_state, self.num_layers)
        n, s = mask.shape
        return {"h": h, "h_tilde": torch.zeros_like(h[:, -1]), "enc": enc_outputs, "mask": mask,
                "attention": enc_outputs.new_zeros(n, 0, s)}

    def combine(self, h_t: torch.Tensor, enc: torch.Tensor,
                mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend with ``h_t`` ``(B, T, h)`` and return ``(h_tilde (B, T, h), weights (B, T, S))``."""
        context, weights = self.attention(h_t, enc, mask)
        return torch.tanh(self.W_c(torch.cat([context, h_t], dim=-1))), weights

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        emb = self.embedding(tgt_in)
        h = state["h"].transpose(0, 1).contiguous()
        enc, mask = state["enc"], state["mask"]
        if not self.input_feeding:  # all steps at once: RNN over T, then attention over T
            outputs, h = self.rnn(emb, h)
            h_tilde, weights = self.combine(outputs, enc, mask)
        else:
            tildes, ws = [], []
            prev = state["h_tilde"]
            for t in range(tgt_in.shape[1]):
                out, h = self.rnn(torch.cat([emb[:, t], prev], -1).unsqueeze(1), h)
                prev_3d, w = self.combine(out, enc, mask)
                prev = prev_3d.squeeze(1)
                tildes.append(prev)
                ws.append(w.squeeze(1))
            h_tilde, weights = torch.stack(tildes, 1), torch.stack(ws, 1)
        new_state = {"h": h.transpose(0, 1), "h_tilde": h_tilde[:, -1], "enc": enc,
                     "mask": mask, "attention": weights}
        return self.W_s(h_tilde), new_state


class PlainDecoder(Decoder):
    """The no-attention baseline with the same parts as :class:`LuongDecoder`:
    :math:`h_t = \\operatorname{GRU}(e(y_{t-1}), h_{t-1})` from the encoder's final state,
    :math:`o_t = W_s \\tanh(W_c h_t)`. The whole source reaches it through :math:`h_0` only.

    State: ``{"h": (N, L, h)}``.
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, *,
                 num_layers: int = 1) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.rnn = nn.GRU(embed_size, hidden_size, num_layers, batch_first=True)
        self.W_c = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_s = nn.Linear(hidden_size, vocab_size)

    def init_state(self, enc_outputs: torch.Tensor, enc_state: EncState,
                   src_lengths: torch.Tensor) -> State:
        return {"h": _initial_hidden(enc_state, self.num_layers)}

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        outputs, h = self.rnn(self.embedding(tgt_in), state["h"].transpose(0, 1).contiguous())
        return self.W_s(torch.tanh(self.W_c(outputs))), {"h": h.transpose(0, 1)}


STYLES = ("luong", "bahdanau", "none")


@dataclass(frozen=True)
class TranslatorConfig:
    """A chapter-8 translator: a GRU encoder and a decoder with or without attention.

    Attributes:
        src_vocab_size, tgt_vocab_size: the vocabulary sizes.
        style: ``"luong"`` (:class:`LuongDecoder`), ``"bahdanau"`` (:class:`BahdanauDecoder`)
            or ``"none"`` (:class:`PlainDecoder`, no attention).
        score: the score function (``seq2seq_lib.attention.SCORES``); ``None`` is the
            style's own, ``"general"`` for Luong and ``"additive"`` for Bahdanau (and the only
            choice for ``"none"``, which has no score).
        embed_size, hidden_size, num_layers: sizes (encoder and decoder alike).
        input_feeding: Luong's input feeding (``style="luong"`` only).
        dropout: between the encoder's layers and on its embeddings.
        reverse_source: the model reads the source reversed (chapter 7's trick).
        attention_size: hidden size of the additive and concat scores (default
            ``hidden_size``).
        bidirectional_encoder: a bidirectional encoder (``style="bahdanau"`` only);
            ``None`` is the style's own: ``True`` for Bahdanau, as in the paper.
        maxout_size: :math:`l`, the size of the Bahdanau decoder's maxout layer
            (``style="bahdanau"`` only); ``None`` is ``hidden_size`` for Bahdanau.

    ``None`` fields are resolved when the configuration is made, so two configurations of the
    same model are equal.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    style: str = "luong"
    score: str | None = None
    embed_size: int = 64
    hidden_size: int = 128
    num_layers: int = 1
    input_feeding: bool = False
    dropout: float = 0.0
    reverse_source: bool = False
    attention_size: int | None = None
    bidirectional_encoder: bool | None = None
    maxout_size: int | None = None

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, got {self.style!r}")
        own = {"luong": "general", "bahdanau": "additive", "none": None}[self.style]
        score = own if self.score is None else self.score
        if self.style == "none" and score is not None:
            raise ValueError(f"style 'none' has no attention, hence no score (got {score!r})")
        if score is not None and score not in SCORES:
            raise ValueError(f"score must be one of {SCORES}, got {score!r}")
        bidirectional = (self.style == "bahdanau" if self.bidirectional_encoder is None
                         else self.bidirectional_encoder)
        if bidirectional and self.style != "bahdanau":
            raise ValueError("only the Bahdanau decoder reads a bidirectional encoder")
        if self.input_feeding and self.style != "luong":
            raise ValueError("input feeding is Luong's: it needs style='luong'")
        maxout = self.maxout_size
        if maxout is not None and self.style != "bahdanau":
            raise ValueError("the maxout output layer is Bahdanau's: it needs style='bahdanau'")
        if maxout is not None and maxout < 1:
            raise ValueError(f"maxout_size must be >= 1, got {maxout}")
        if self.style == "bahdanau" and maxout is None:
            maxout = self.hidden_size
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "bidirectional_encoder", bidirectional)
        object.__setattr__(self, "maxout_size", maxout)


class TranslatorModel(EncoderDecoder):
    """A translator of chapter 8, built from a :class:`TranslatorConfig` (kept as
    ``self.config``): a GRU :class:`~seq2seq_lib.encoder_decoder.RNNEncoder` (bidirectional
    for Bahdanau) producing :math:`\\bar h_1, \\dots, \\bar h_S`, and a :class:`LuongDecoder`,
    a :class:`BahdanauDecoder` or the no-attention :class:`PlainDecoder` (the equations are in
    the module docstring).

    Inputs of ``forward``: ``src`` ``(B, S)``, ``src_lengths`` ``(B,)``, ``tgt_in`` ``(B, T)``;
    output: logits ``(B, T, tgt_vocab_size)``. The decoder state (from ``init_state`` and
    ``step``) holds the attention weights ``(N, T, S)`` of the last call.
    """

    config_class = TranslatorConfig

    def __init__(self, config: TranslatorConfig) -> None:
        c = config
        encoder = GRUEncoder(c.src_vocab_size, c.embed_size, c.hidden_size,
                             num_layers=c.num_layers, dropout=c.dropout,
                             bidirectional=bool(c.bidirectional_encoder))
        decoder: Decoder
        if c.style == "none":
            decoder = PlainDecoder(c.tgt_vocab_size, c.embed_size, c.hidden_size,
                                   num_layers=c.num_layers)
        elif c.style == "bahdanau":
            decoder = BahdanauDecoder(c.tgt_vocab_size, c.embed_size, c.hidden_size,
                                      score=str(c.score), num_layers=c.num_layers,
                                      attention_size=c.attention_size,
                                      bidirectional_encoder=bool(c.bidirectional_encoder),
                                      maxout_size=c.maxout_size)
        else:
            decoder = LuongDecoder(c.tgt_vocab_size, c.embed_size, c.hidden_size,
                                   score=str(c.score), num_layers=c.num_layers,
                                   input_feeding=c.input_feeding,
                                   attention_size=c.attention_size)
        super().__init__(encoder, decoder, reverse_source=c.reverse_source)
        self.config = config


def greedy_with_attention(model: EncoderDecoder, src: torch.Tensor, src_lengths: torch.Tensor,
                          *, max_len: int = 20) -> tuple[list[list[int]], list[torch.Tensor]]:
    """Greedy translations and, for each sentence, its attention weights ``(T_out, S_b)``.

    Row ``t`` of a sentence's weights is the distribution over its ``S_b`` real source
    positions used to produce output token ``t`` (``<eos>`` included). For heat maps.
    """
    rows: list[torch.Tensor] = []  # (N, S) per step
    collect = partial(greedy_search, on_step=lambda state: rows.append(state["attention"][:, -1]))
    outputs = model.generate(src, src_lengths, search=collect, max_len=max_len)
    weights = torch.stack(rows, 1)  # (N, T, S)
    maps = []
    for b, ids in enumerate(outputs):
        length = min(len(ids) + 1, weights.shape[1])  # + the step that produced <eos>
        maps.append(weights[b, :length, : int(src_lengths[b])].cpu())
    return outputs, maps
