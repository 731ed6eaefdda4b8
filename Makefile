# The two commands of the README. Both install what they need first.
#   make book   -> installs, then builds the HTML book into _build/html/index.html
#   make test   -> installs, builds the book, runs the whole test suite (unit tests, nbval over
#                  every chapter, and the headless-browser check of the rendered book)
PYTHON ?= python3
# The pinned CPU build first: an unpinned torch would pull GBs of CUDA packages on a CPU box.
# On a GPU machine use e.g. `make test TORCH=torch` to get the default (CUDA) build.
TORCH ?= torch==2.13.0

.PHONY: install book test notebooks clean

install:
	$(PYTHON) -m pip install "$(TORCH)"
	$(PYTHON) -m pip install -e ".[book,test]"

book: install
	jupyter-book build -W -n --keep-going .

test: book
	$(PYTHON) -m pytest

# Re-execute every chapter in place under the quick profile on CPU (what CI compares against).
notebooks:
	$(PYTHON) scripts/execute_notebooks.py

clean:
	rm -rf _build
