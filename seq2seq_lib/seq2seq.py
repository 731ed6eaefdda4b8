"""Sequence to sequence learning with deep LSTMs (Sutskever, Vinyals and Le, 2014).

An :math:`L`-layer LSTM encoder reads the (reversed) source; its final hidden and cell states
:math:`(h^{(l)}_S, c^{(l)}_S)_{l=1..L}` — the fixed-size vector :math:`v` — become the initial
state of an :math:`L`-layer LSTM decoder, which models

.. math::

    p(y_1, \\dots, y_T \\mid x_1, \\dots, x_S) &= \\prod_{t=1}^{T} p(y_t \\mid v, y_1, \\dots, y_{t-1}),
    \\\\
    p(y_t \\mid \\dots) &= \\operatorname{softmax}(W_o h^{(L)}_t + b_o).

The paper's model: 4 layers of 1000 units, 1000-dimensional embeddings, and the source
sentence fed **reversed** (``a b c`` → ``c b a``), which puts the first source words next to
the first target words and made optimisation much easier. Reversal is done by the data
pipeline (``collate(..., reverse_source=True)``); the model records it in
``model.reverse_source`` so that evaluation builds its batches the same way.

:class:`Seq2SeqModel` is built from a :class:`Seq2SeqConfig`. Chapter 7's recipe — its data,
sizes and budget, trained once and cached — is :mod:`seq2seq_lib.recipes.ch07`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from seq2seq_lib.encoder_decoder import (
    Decoder,
    EncoderDecoder,
    EncState,
    LSTMEncoder,
    State,
)
from seq2seq_lib.vocab import PAD_ID


class LSTMDecoder(Decoder):
    """An :math:`L`-layer LSTM decoder started from the encoder's final :math:`(h, c)`.

    .. math::

        (h_t, c_t) &= \\operatorname{LSTM}(e(y_{t-1}), (h_{t-1}, c_{t-1})), \\\\
        o_t &= W_o h^{(L)}_t + b_o, \\qquad (h_0, c_0) = (h_S^{enc}, c_S^{enc}).

    State: ``{"h": (N, L, hidden), "c": (N, L, hidden)}`` (batch-first; transposed to
    PyTorch's ``(L, N, hidden)`` around the ``nn.LSTM`` call).
    """

    def __init__(
        self,
        vocab_size: int,
        embed_size: int,
        hidden_size: int,
        *,
        num_layers: int = 1,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.dropout = nn.Dropout(dropout)
        self.rnn = nn.LSTM(
            embed_size, hidden_size, num_layers, batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.out = nn.Linear(hidden_size, vocab_size)

    def init_state(
        self, enc_outputs: torch.Tensor, enc_state: EncState, src_lengths: torch.Tensor
    ) -> State:
        if not isinstance(enc_state, tuple):
            raise TypeError("LSTMDecoder needs an LSTM encoder's (h, c) state")
        h, c = enc_state
        return {"h": h.transpose(0, 1), "c": c.transpose(0, 1)}

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        emb = self.dropout(self.embedding(tgt_in))
        hc = (state["h"].transpose(0, 1).contiguous(), state["c"].transpose(0, 1).contiguous())
        outputs, (h, c) = self.rnn(emb, hc)
        logits = self.out(self.dropout(outputs))
        return logits, {"h": h.transpose(0, 1), "c": c.transpose(0, 1)}


@dataclass(frozen=True)
class Seq2SeqConfig:
    """The sizes of the deep-LSTM seq2seq model (:class:`Seq2SeqModel`).

    Attributes:
        src_vocab_size, tgt_vocab_size: the vocabulary sizes.
        embed_size: size of the word embeddings.
        hidden_size: size of every LSTM layer's :math:`h` and :math:`c`, in the encoder and
            in the decoder.
        num_layers: :math:`L`, the same in the encoder and in the decoder.
        dropout: on the embeddings, between the layers and before the output layer.
        reverse_source: the model reads the source reversed (the paper's trick).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    embed_size: int = 256
    hidden_size: int = 512
    num_layers: int = 4
    dropout: float = 0.0
    reverse_source: bool = True

    def __post_init__(self) -> None:
        if self.num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {self.num_layers}")


class Seq2SeqModel(EncoderDecoder):
    r"""The deep-LSTM seq2seq model, built from a :class:`Seq2SeqConfig` (kept as
    ``self.config``): an :math:`L`-layer LSTM :class:`~seq2seq_lib.encoder_decoder.RNNEncoder`
    (packed) whose final states :math:`(h^{(l)}_S, c^{(l)}_S)` start an :math:`L`-layer
    :class:`LSTMDecoder` of the same hidden size,

    .. math::

        p(y_t \mid v, y_{<t}) = \operatorname{softmax}(W_o h^{(L)}_t + b_o).

    Inputs of ``forward``: ``src`` ``(B, S)`` (reversed words when ``reverse_source``),
    ``src_lengths`` ``(B,)``, ``tgt_in`` ``(B, T)``; output: logits
    ``(B, T, tgt_vocab_size)``.
    """

    config_class = Seq2SeqConfig

    def __init__(self, config: Seq2SeqConfig) -> None:
        c = config
        super().__init__(
            LSTMEncoder(c.src_vocab_size, c.embed_size, c.hidden_size, num_layers=c.num_layers,
                        dropout=c.dropout),
            LSTMDecoder(c.tgt_vocab_size, c.embed_size, c.hidden_size, num_layers=c.num_layers,
                        dropout=c.dropout),
            reverse_source=c.reverse_source,
        )
        self.config = config
