"""The encoder–decoder architecture and the RNN encoder–decoder of Cho et al. (2014).

An **encoder** reads a variable-length source :math:`x_1, \\dots, x_S` and summarises it in a
state; a **decoder** turns that state into a variable-length target, one token at a time:

.. math::

    p(y_1, \\dots, y_T \\mid x) = \\prod_{t=1}^{T} p(y_t \\mid y_1, \\dots, y_{t-1}, x).

Three interfaces (d2l §9.6), all batch-first:

* :class:`Encoder` — ``forward(src (B, S), src_lengths (B,)) -> (outputs (B, S, h), state)``.
* :class:`Decoder` — ``init_state(enc_outputs, enc_state, src_lengths) -> state`` and
  ``forward(tgt_in (B, T), state) -> (logits (B, T, V), state)``.
* :class:`EncoderDecoder` — glues the two and adds what every model shares: the teacher-forced
  ``forward``, the **decoding step** ``step(prefix (N, t), state) -> (log_probs (N, V), state)``
  that greedy and beam search call (:mod:`seq2seq_lib.decoding`),
  :meth:`EncoderDecoder.score` (``log p(y|x)`` of given pairs) and
  :meth:`EncoderDecoder.generate`, which translates with a search passed in (greedy by
  default, chapter 9's beam search later).

Every model of the course is an :class:`EncoderDecoder` built from a frozen configuration
dataclass, kept as ``model.config`` (it is all a checkpoint needs to rebuild the model):
:class:`ChoModel` from :class:`ChoConfig` here, :class:`~seq2seq_lib.seq2seq.Seq2SeqModel`
(chapter 7) and :class:`~seq2seq_lib.attention_seq2seq.TranslatorModel` (chapter 8).

A decoder *state* is a ``dict`` of tensors whose **leading dimension is the batch** ``N``, so a
search can reorder or repeat hypotheses with ``{k: v[index] for k, v in state.items()}``
(:func:`seq2seq_lib.decoding.index_state`). PyTorch's own ``(num_layers, N, h)`` hidden
states are transposed to ``(N, num_layers, h)`` inside it.

:class:`RNNEncoder` packs the padded batch (``pack_padded_sequence``), so the final state is
the state after the last *real* token: padding never changes it.

The model of Cho et al. (2014), :class:`ChoDecoder`, conditions every step on a summary
:math:`c` of the source (the formulas are in its docstring). The paper also passes :math:`c`
into the reset and update gates — feeding :math:`[e(y_{t-1}); c]` as the GRU input does
exactly that — and puts a maxout layer before the softmax, which we leave out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from seq2seq_lib.decoding import Search, SearchResult, greedy_search
from seq2seq_lib.losses import sequence_log_prob
from seq2seq_lib.vocab import BOS_ID, EOS_ID, PAD_ID

State = dict[str, torch.Tensor]
EncState = torch.Tensor | tuple[torch.Tensor, torch.Tensor]


@contextlib.contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Put ``model`` in eval mode for the block (no dropout) and back in the mode it was in
    afterwards, also when the block raises."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def _check_source(src: torch.Tensor, src_lengths: torch.Tensor) -> None:
    if src.dim() != 2:
        raise ValueError(f"src must be (B, S) token ids, got shape {tuple(src.shape)}")
    if src_lengths.shape != src.shape[:1]:
        raise ValueError(f"src_lengths must be (B,) = ({src.shape[0]},), got "
                         f"{tuple(src_lengths.shape)}")
    if src.shape[0] and (int(src_lengths.min()) < 1 or int(src_lengths.max()) > src.shape[1]):
        raise ValueError(f"src_lengths must lie in 1..{src.shape[1]}, got {src_lengths.tolist()}")


# --------------------------------------------------------------------------- interfaces


class Encoder(nn.Module):
    """Reads a padded source batch and returns per-position outputs and a final state.

    ``forward(src, src_lengths)``:

    * ``src``: ``(B, S)`` token ids, padded with ``<pad>``.
    * ``src_lengths``: ``(B,)`` real lengths.
    * returns ``outputs`` ``(B, S, h)`` (zeros at padding) and the final ``state`` in PyTorch's
      layout: ``(num_layers, B, h)``, or a tuple ``(h, c)`` of those for an LSTM.
    """

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, EncState]:
        raise NotImplementedError


class Decoder(nn.Module):
    """Produces the target distribution, one step or a whole teacher-forced sequence at once.

    * ``init_state(enc_outputs, enc_state, src_lengths) -> state``: the initial decoder state,
      a dict of batch-first tensors.
    * ``forward(tgt_in (B, T), state) -> (logits (B, T, V), state)``: run the decoder over the
      given input tokens (``<bos> y_1 .. y_{T-1}``).
    """

    vocab_size: int

    def init_state(
        self, enc_outputs: torch.Tensor, enc_state: EncState, src_lengths: torch.Tensor
    ) -> State:
        raise NotImplementedError

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        raise NotImplementedError


class EncoderDecoder(nn.Module):
    """An encoder and a decoder trained jointly to maximise :math:`\\log p(y \\mid x)`.

    Args:
        encoder, decoder: the two halves.
        reverse_source: the model expects the source words reversed (Sutskever et al., 2014);
            evaluation code reads this flag to build batches the same way as training.

    A subclass built from a configuration dataclass sets ``config_class`` and keeps its
    configuration as ``self.config``.
    """

    config_class: ClassVar[type | None] = None

    def __init__(self, encoder: Encoder, decoder: Decoder, *, reverse_source: bool = False) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.reverse_source = reverse_source

    def init_state(self, src: torch.Tensor, src_lengths: torch.Tensor) -> State:
        """Encode ``src`` ``(N, S)`` and return the decoder's initial (batch-first) state."""
        _check_source(src, src_lengths)
        enc_outputs, enc_state = self.encoder(src, src_lengths)
        return self.decoder.init_state(enc_outputs, enc_state, src_lengths)

    def forward(
        self,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
        tgt_in: torch.Tensor,
        *,
        teacher_forcing: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Logits ``(B, T, V)`` for the targets ``y_1 .. y_T`` given the decoder inputs.

        With ``teacher_forcing = 1`` the decoder reads the true previous token
        ``tgt_in[:, t]`` at every step (one call over the whole sequence). With a ratio
        :math:`p < 1` it runs step by step and, independently for every sentence and step
        :math:`t \\ge 2`, reads the true token with probability :math:`p` and otherwise its
        own greedy prediction :math:`\\arg\\max_y p(y \\mid \\dots)` from step :math:`t - 1`
        (Bengio et al., 2015); :math:`p = 0` is *free running*. The predicted token is a
        constant (no gradient flows through the :math:`\\arg\\max`). ``generator`` drives the
        coin flips.
        """
        if not 0.0 <= teacher_forcing <= 1.0:
            raise ValueError(f"teacher_forcing must be in [0, 1], got {teacher_forcing}")
        if tgt_in.dim() != 2 or tgt_in.shape[0] != src.shape[0]:
            raise ValueError(
                f"tgt_in must be (B, T) with B = {src.shape[0]}, got {tuple(tgt_in.shape)}"
            )
        state = self.init_state(src, src_lengths)
        if teacher_forcing >= 1.0:
            logits, _ = self.decoder(tgt_in, state)
            return logits
        steps: list[torch.Tensor] = []
        token = tgt_in[:, :1]
        for t in range(tgt_in.shape[1]):
            if t > 0:
                predicted = steps[-1].argmax(-1)
                if teacher_forcing <= 0.0:
                    token = predicted
                else:
                    gold = tgt_in[:, t : t + 1]
                    coin = torch.rand(gold.shape, generator=generator)
                    token = torch.where(coin.to(gold.device) < teacher_forcing, gold, predicted)
            logits, state = self.decoder(token, state)
            steps.append(logits)
        return torch.cat(steps, dim=1)

    def step(self, prefix: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """One decoding step: ``log p(y_{t+1} | prefix, x)`` ``(N, V)`` and the next state.

        ``prefix`` ``(N, t)`` holds the tokens so far, starting with ``<bos>``; a recurrent
        decoder reads only the last one (its state carries the rest). ``state`` is the
        batch-first dict from :meth:`init_state` or an earlier step.
        """
        if prefix.dim() != 2 or prefix.shape[1] < 1:
            raise ValueError(f"prefix must be (N, t) with t >= 1, got {tuple(prefix.shape)}")
        logits, state = self.decoder(prefix[:, -1:], state)
        return F.log_softmax(logits[:, -1].float(), dim=-1), state

    def score(
        self, src: torch.Tensor, src_lengths: torch.Tensor, tgt: torch.Tensor
    ) -> torch.Tensor:
        """:math:`\\log p(y \\mid x) = \\sum_t \\log p(y_t \\mid y_{<t}, x)` for each pair ``(N,)``.

        ``tgt`` ``(N, T)`` holds the target words ``y_1 .. y_m`` padded with ``<pad>``; the
        ``<eos>`` that ends a sentence is appended here and scored too (a translation must
        also *end* at the right place). Use it to rank candidate translations of one source.
        """
        if tgt.dim() != 2 or tgt.shape[0] != src.shape[0]:
            raise ValueError(f"tgt must be (N, T) with N = {src.shape[0]}, got {tuple(tgt.shape)}")
        lengths = (tgt != PAD_ID).sum(1)
        n = tgt.shape[0]
        tgt_out = torch.cat([tgt, tgt.new_full((n, 1), PAD_ID)], dim=1)
        tgt_out[torch.arange(n, device=tgt.device), lengths] = EOS_ID
        tgt_in = torch.cat([tgt.new_full((n, 1), BOS_ID), tgt], dim=1)
        logp = F.log_softmax(self(src, src_lengths, tgt_in).float(), dim=-1)
        return sequence_log_prob(logp, tgt_out, PAD_ID)

    @torch.no_grad()
    def search(
        self,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
        *,
        search: Search = greedy_search,
        max_len: int = 20,
    ) -> SearchResult:
        """Run ``search`` on this model for a batch of sources; the :class:`SearchResult`.

        Encodes ``src`` ``(N, S)`` (:meth:`init_state`) and calls
        ``search(self.step, state, N, bos=<bos>, eos=<eos>, max_len=max_len, device=...)``
        in eval mode without gradients, then puts the model back in the mode it was in.
        ``search`` is :func:`~seq2seq_lib.decoding.greedy_search` (the default), or any
        search with that signature: chapter 9's beam search with its options bound, e.g.
        ``functools.partial(beam_search, beam_size=5, alpha=1.0)``.
        """
        with eval_mode(self):
            state = self.init_state(src, src_lengths)
            return search(self.step, state, src.shape[0], bos=BOS_ID, eos=EOS_ID,
                          max_len=max_len, device=src.device)

    def generate(
        self,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
        *,
        search: Search = greedy_search,
        max_len: int = 20,
    ) -> list[list[int]]:
        """Translate a batch: the token ids of each sentence's best hypothesis, ``<eos>``
        removed (at most ``max_len`` tokens, ``<eos>`` counted). See :meth:`search`."""
        result = self.search(src, src_lengths, search=search, max_len=max_len)
        return [h.output for h in result.best]


# --------------------------------------------------------------------------- encoders


class RNNEncoder(Encoder):
    """Embedding + a (multi-layer) GRU or LSTM over a packed batch.

    .. math::

        h_t = f(h_{t-1}, e(x_t)), \\qquad t = 1, \\dots, S_b

    for sentence :math:`b` of real length :math:`S_b`. The padded batch is packed with
    ``pack_padded_sequence``, so the returned final state is :math:`h_{S_b}` — exactly what
    the same sentence gives alone, whatever the padding.

    With ``bidirectional=True`` a second RNN reads the sentence backwards,
    :math:`\\overleftarrow h_t = f'(\\overleftarrow h_{t+1}, e(x_t))` from :math:`t = S_b` down
    to 1, and the output at position :math:`t` is :math:`[\\overrightarrow h_t;
    \\overleftarrow h_t]` (Bahdanau et al.'s *annotation* of word :math:`t`).

    Args:
        vocab_size, embed_size, hidden_size, num_layers: sizes; ``dropout`` between layers
            (and on the embeddings).
        cell: ``"gru"`` or ``"lstm"``.
        bidirectional: add the backward RNN.

    Shapes: ``src`` ``(B, S)``, ``src_lengths`` ``(B,)`` → ``outputs`` ``(B, S, D *
    hidden_size)`` (zeros at padding; ``D`` = 2 when bidirectional, else 1) and ``state``
    ``(D * num_layers, B, hidden_size)`` in PyTorch's order (layer by layer, forward then
    backward; a pair ``(h, c)`` for an LSTM). A bidirectional encoder's final backward state
    is :math:`\\overleftarrow h_1`.
    """

    def __init__(self, vocab_size: int, embed_size: int, hidden_size: int, *,
                 num_layers: int = 1, cell: str = "gru", dropout: float = 0.0,
                 bidirectional: bool = False) -> None:
        super().__init__()
        rnns = {"gru": nn.GRU, "lstm": nn.LSTM}
        if cell not in rnns:
            raise ValueError(f"cell must be 'gru' or 'lstm', got {cell!r}")
        self.cell = cell
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bidirectional = bidirectional
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.dropout = nn.Dropout(dropout)
        self.rnn = rnns[cell](
            embed_size, hidden_size, num_layers, batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0, bidirectional=bidirectional,
        )

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, EncState]:
        _check_source(src, src_lengths)
        emb = self.dropout(self.embedding(src))
        packed = pack_padded_sequence(emb, src_lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        outputs, state = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=src.shape[1])
        return outputs, state


def GRUEncoder(vocab_size: int, embed_size: int, hidden_size: int, **kw: object) -> RNNEncoder:
    """An :class:`RNNEncoder` with GRU cells."""
    return RNNEncoder(vocab_size, embed_size, hidden_size, cell="gru", **kw)  # type: ignore[arg-type]


def LSTMEncoder(vocab_size: int, embed_size: int, hidden_size: int, **kw: object) -> RNNEncoder:
    """An :class:`RNNEncoder` with LSTM cells."""
    return RNNEncoder(vocab_size, embed_size, hidden_size, cell="lstm", **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Cho et al. 2014


class ChoDecoder(Decoder):
    """The decoder of Cho et al. (2014): the summary :math:`c` at every step and at the output.

    .. math::

        c &= \\tanh(V h_S), \\quad h'_0 = \\tanh(V' c), \\\\
        h'_t &= \\operatorname{GRU}([e(y_{t-1}); c], h'_{t-1}), \\\\
        o_t &= W_o [h'_t; e(y_{t-1}); c] + b_o.

    where :math:`h_S` is the encoder's last state (its top layer) and :math:`e` the target
    embedding; :math:`p(y_t \\mid y_{<t}, c) = \\operatorname{softmax}(o_t)`.

    Args:
        vocab_size: target vocabulary size :math:`V`.
        embed_size: size of :math:`e(y)`.
        hidden_size: size of :math:`h'_t` and of :math:`c`.
        enc_hidden_size: size of the encoder's last state :math:`h_S`.

    State: ``{"h": (N, 1, hidden_size), "c": (N, hidden_size)}``.
    """

    def __init__(
        self, vocab_size: int, embed_size: int, hidden_size: int, enc_hidden_size: int
    ) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.V = nn.Linear(enc_hidden_size, hidden_size)
        self.V_prime = nn.Linear(hidden_size, hidden_size)
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD_ID)
        self.rnn = nn.GRU(embed_size + hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size + embed_size + hidden_size, vocab_size)

    def init_state(
        self, enc_outputs: torch.Tensor, enc_state: EncState, src_lengths: torch.Tensor
    ) -> State:
        h_last = enc_state[0] if isinstance(enc_state, tuple) else enc_state
        c = torch.tanh(self.V(h_last[-1]))  # (N, h): the top layer's final state
        h0 = torch.tanh(self.V_prime(c))
        return {"h": h0[:, None, :], "c": c}

    def forward(self, tgt_in: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        emb = self.embedding(tgt_in)  # (B, T, e)
        c = state["c"][:, None, :].expand(-1, tgt_in.shape[1], -1)
        outputs, h = self.rnn(torch.cat([emb, c], dim=-1), state["h"].transpose(0, 1).contiguous())
        logits = self.out(torch.cat([outputs, emb, c], dim=-1))
        return logits, {"h": h.transpose(0, 1), "c": state["c"]}


@dataclass(frozen=True)
class ChoConfig:
    """The sizes of Cho et al.'s encoder–decoder (:class:`ChoModel`).

    Attributes:
        src_vocab_size, tgt_vocab_size: the vocabulary sizes.
        embed_size: size of the word embeddings :math:`e(x)`, :math:`e(y)`.
        hidden_size: size of the encoder state :math:`h_t`, of :math:`c` and of the decoder
            state :math:`h'_t`.
        reverse_source: the model reads the source reversed (chapter 7's trick).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    embed_size: int = 64
    hidden_size: int = 128
    reverse_source: bool = False


class ChoModel(EncoderDecoder):
    r"""The RNN encoder–decoder of Cho et al. (2014), built from a :class:`ChoConfig` (kept as
    ``self.config``): a GRU :class:`RNNEncoder` and a :class:`ChoDecoder`,

    .. math::

        h_t &= \operatorname{GRU}(e(x_t), h_{t-1}), \quad c = \tanh(V h_S), \\
        h'_t &= \operatorname{GRU}([e(y_{t-1}); c], h'_{t-1}), \\
        p(y_t \mid y_{<t}, x) &= \operatorname{softmax}(W_o [h'_t; e(y_{t-1}); c] + b_o).

    Inputs of ``forward``: ``src`` ``(B, S)``, ``src_lengths`` ``(B,)``, ``tgt_in`` ``(B, T)``;
    output: logits ``(B, T, tgt_vocab_size)``.
    """

    config_class = ChoConfig

    def __init__(self, config: ChoConfig) -> None:
        super().__init__(
            GRUEncoder(config.src_vocab_size, config.embed_size, config.hidden_size),
            ChoDecoder(config.tgt_vocab_size, config.embed_size, config.hidden_size,
                       config.hidden_size),
            reverse_source=config.reverse_source,
        )
        self.config = config
