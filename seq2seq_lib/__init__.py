"""seq2seq_lib — the library of the course *Modern RNNs & Seq2Seq*.

Modules map to chapters and are readable top to bottom: one module per idea, and a chapter
imports only what it or an earlier chapter introduced. :data:`seq2seq_lib.chapters.MODULE_CHAPTER`
is the table of which chapter introduces each module (a test checks every notebook against it,
imports of imports included); the API reference lists the modules in that order.

Importing the package pins the CPU kernels (:mod:`seq2seq_lib.numerics`: the same bits on
every x86-64 CPU with AVX2, unless ``SEQ2SEQ_NUMERICS=native``), which loads torch; import it
before torch and NumPy. Then import the module you need.
"""

from seq2seq_lib import numerics as _numerics

__version__ = "0.1.0"

_numerics.pin()
