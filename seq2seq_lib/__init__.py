"""seq2seq_lib — the library of the course *Modern RNNs & Seq2Seq*.

Modules map to chapters and are readable top to bottom; a chapter imports only what
it or an earlier chapter introduced:

===============================  ================================================================
module                           introduced in
===============================  ================================================================
``seq2seq_lib.numerics``         every chapter: kernels pinned for bit-identical CPU results
``seq2seq_lib.device``           every chapter: the GPU toggle, budget profile, seeding
``seq2seq_lib.cache``            train-or-load cache for expensive models
``seq2seq_lib.exercises``        automatic checkers for the exercises
``seq2seq_lib.bptt``             chapter 1: a vanilla RNN and hand-written BPTT
``seq2seq_lib.cells``            chapters 2-3: from-scratch RNN, GRU (two variants), LSTM cells
``seq2seq_lib.rnn``              chapters 2-5: scratch layers over time, deep, bidirectional
``seq2seq_lib.tasks``            chapters 2-5: synthetic long-dependency tasks and their training
``seq2seq_lib.download``         chapter 6: checksummed, atomic downloads; safe unzip
``seq2seq_lib.data``             chapter 6: the English–French corpus, vocabularies, batches
``seq2seq_lib.synthetic``        chapter 6: offline synthetic translation tasks
``seq2seq_lib.losses``           chapter 6: the masked (padding-ignoring) cross-entropy
``seq2seq_lib.batching``         chapter 6: length-bucketed batches
``seq2seq_lib.encoder_decoder``  chapter 6: the interfaces, packed encoders, Cho et al. 2014
``seq2seq_lib.training``         chapter 6: the trainer (teacher forcing, scheduled sampling)
``seq2seq_lib.evaluation``       chapter 6: translation, pair scoring, BLEU of a model
``seq2seq_lib.seq2seq``          chapter 7: Sutskever et al. 2014's deep LSTM model
``seq2seq_lib.attention``        chapter 8: score functions, masked softmax, attention read-out
``seq2seq_lib.decoding``         chapter 9: greedy, exhaustive and batched beam search
``seq2seq_lib.bleu``             chapter 10: BLEU from scratch, equal to sacrebleu
``seq2seq_lib.recipes``          chapters 7-11: the shared translator recipes (train or load)
``seq2seq_lib.attention_seq2seq``  chapter 8: attention decoders (Bahdanau, Luong) and baseline
``seq2seq_lib.ablation``         chapter 11: the translator ablation, results files
``seq2seq_lib.translate``        chapter 11: translator checkpoints, ``seq2seq-translate``
===============================  ================================================================

Importing the package pins the CPU kernels (:mod:`seq2seq_lib.numerics`: the same bits on
every x86-64 CPU with AVX2, unless ``SEQ2SEQ_NUMERICS=native``), which loads torch; import it
before torch and NumPy. Then import the module you need.
"""

from seq2seq_lib import numerics as _numerics

__version__ = "0.1.0"

_numerics.pin()
