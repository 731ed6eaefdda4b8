r"""Chapter 8: decoders with attention, in Bahdanau's and in Luong's style.

Both plug into :class:`~seq2seq_lib.encoder_decoder.EncoderDecoder` (same encoder, trainer,
greedy and beam search, evaluation as chapter 7). Their state carries the encoder outputs
``enc`` ``(N, S, h)`` and the source ``mask`` ``(N, S)`` (``True`` on real tokens) so every
step can attend; all entries are batch-first, so searches can reorder them.

**Bahdanau et al. (2015): attend, then update.** The previous state :math:`s_{t-1}` is the
query; the context enters the recurrent update:

.. math::

    c_t = \sum_s a_t(s)\, \bar h_s,\quad a_t = \operatorname{softmax}_s
    \operatorname{score}(s_{t-1}, \bar h_s), \qquad
    s_t = \operatorname{GRU}([e(y_{t-1}); c_t], s_{t-1}), \qquad
    o_t = W_o [s_t; c_t; e(y_{t-1})] + b_o .

**Luong et al. (2015): update, then attend and combine.** The new state :math:`h_t` is the
query; context and state are combined into the attentional state :math:`\tilde h_t`, which
produces the output (and, with *input feeding*, is fed to the next step):

.. math::

    h_t = \operatorname{RNN}([e(y_{t-1}); \tilde h_{t-1}], h_{t-1}), \quad
    a_t = \operatorname{softmax}_s \operatorname{score}(h_t, \bar h_s), \quad
    c_t = \sum_s a_t(s)\, \bar h_s, \quad
    \tilde h_t = \tanh(W_c [c_t; h_t]), \quad o_t = W_s \tilde h_t .

Without input feeding the RNN input is :math:`e(y_{t-1})` alone, and with teacher forcing all
steps run in one call — much faster on a CPU.

Both decoders return their attention weights ``(N, T, S)`` in the state under
``"attention"`` (the weights of the last call), for plots.
"""

from __future__ import annotations

import torch
from torch import nn

from seq2seq_lib.attention import AdditiveScore, Attention, make_score, masked_softmax
from seq2seq_lib.data import PAD_ID
from seq2seq_lib.encoder_decoder import (
    Decoder,
    EncoderDecoder,
    EncState,
    GRUEncoder,
    State,
    greedy_decode,
)


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
    """Attend with :math:`s_{t-1}`, then update the GRU with the context (see module docstring).

    Args:
        vocab_size, embed_size, hidden_size: target vocabulary, embedding and state sizes.
        score: ``"additive"`` (Bahdanau's, default), ``"dot"``, ``"general"`` or ``"concat"``.
        num_layers: GRU layers (the top layer's state is the query).
        attention_size: hidden size of the additive/concat score.

    State: ``{"h": (N, L, h), "enc": (N, S, h), "mask": (N, S), "attention": (N, T, S)}``.
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, *,
                 score: str = "additive", num_layers: int = 1,
                 attention_size: int | None = None) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.score = make_score(score, hidden_size, hidden_size, attention_size)
        self.rnn = nn.GRU(embed_size + hidden_size, hidden_size, num_layers, batch_first=True)
        self.out = nn.Linear(2 * hidden_size + embed_size, vocab_size)

    def init_state(self, enc_outputs: torch.Tensor, enc_state: EncState,
                   src_lengths: torch.Tensor) -> State:
        mask = source_mask(src_lengths, enc_outputs.shape[1])
        n, s = mask.shape
        return {"h": _initial_hidden(enc_state, self.num_layers), "enc": enc_outputs,
                "mask": mask, "attention": enc_outputs.new_zeros(n, 0, s)}

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        emb = self.embedding(tgt_in)  # (B, T, e)
        h = state["h"].transpose(0, 1).contiguous()  # (L, B, h) for nn.GRU
        enc, mask = state["enc"], state["mask"]
        additive = isinstance(self.score, AdditiveScore)
        projected = self.score.project_keys(enc) if additive else None  # once per sentence
        outputs, contexts, weights = [], [], []
        for t in range(tgt_in.shape[1]):
            query = h[-1]  # s_{t-1}, top layer: (B, h)
            scores = self.score(query, enc, projected) if additive else self.score(query, enc)
            w = masked_softmax(scores, mask)  # (B, S)
            context = torch.bmm(w.unsqueeze(1), enc).squeeze(1)  # (B, h)
            out, h = self.rnn(torch.cat([emb[:, t], context], -1).unsqueeze(1), h)
            outputs.append(out.squeeze(1))
            contexts.append(context)
            weights.append(w)
        s, c = torch.stack(outputs, 1), torch.stack(contexts, 1)
        logits = self.out(torch.cat([s, c, emb], dim=-1))
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


def attention_model(src_vocab: int, tgt_vocab: int, *, style: str = "luong",
                    score: str | None = None, embed_size: int = 64, hidden_size: int = 128,
                    num_layers: int = 1, input_feeding: bool = False,
                    dropout: float = 0.0, reverse_source: bool = False) -> EncoderDecoder:
    """A GRU encoder with a :class:`LuongDecoder`, a :class:`BahdanauDecoder` or (``style="none"``)
    the no-attention :class:`PlainDecoder`.

    ``score`` defaults to ``"additive"`` for Bahdanau and ``"general"`` for Luong.
    ``reverse_source``: the model reads the source reversed (chapter 7's ablation).
    """
    encoder = GRUEncoder(src_vocab, embed_size, hidden_size, num_layers=num_layers,
                         dropout=dropout)
    if style == "none":
        decoder: Decoder = PlainDecoder(tgt_vocab, embed_size, hidden_size, num_layers=num_layers)
    elif style == "bahdanau":
        decoder = BahdanauDecoder(tgt_vocab, embed_size, hidden_size,
                                           score=score or "additive", num_layers=num_layers)
    elif style == "luong":
        decoder = LuongDecoder(tgt_vocab, embed_size, hidden_size, score=score or "general",
                               num_layers=num_layers, input_feeding=input_feeding)
    else:
        raise ValueError(f"style must be 'luong', 'bahdanau' or 'none', got {style!r}")
    return EncoderDecoder(encoder, decoder, reverse_source=reverse_source)


def greedy_with_attention(model: EncoderDecoder, src: torch.Tensor, src_lengths: torch.Tensor,
                          *, max_len: int = 20) -> tuple[list[list[int]], list[torch.Tensor]]:
    """Greedy translations and, for each sentence, its attention weights ``(T_out, S_b)``.

    Row ``t`` of a sentence's weights is the distribution over its ``S_b`` real source
    positions used to produce output token ``t`` (``<eos>`` included). For heat maps.
    """
    rows: list[torch.Tensor] = []  # (N, S) per step
    outputs = greedy_decode(model, src, src_lengths, max_len=max_len,
                            on_step=lambda state: rows.append(state["attention"][:, -1]))
    weights = torch.stack(rows, 1)  # (N, T, S)
    maps = []
    for b, ids in enumerate(outputs):
        length = min(len(ids) + 1, weights.shape[1])  # + the step that produced <eos>
        maps.append(weights[b, :length, : int(src_lengths[b])].cpu())
    return outputs, maps
