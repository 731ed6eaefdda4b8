"""Maintenance scripts of the course (executing the chapters, the notebook edition, the numerics
fingerprint, chapter 11's results files, timings): each is run as a file,
``python scripts/NAME.py`` (``--help`` says what it does). This file only makes the folder a
package, so that the tests import them as ``from scripts import make_edition`` with no change
to ``sys.path`` (the repository root is on it in a pytest session, through the root
``conftest.py``); nothing here is part of the installed library.
"""
