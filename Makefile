# The two commands of the README. Both install what they need first.
#   make book   -> installs, then builds the HTML book into _build/html/index.html
#   make test   -> installs, builds the book, runs the whole test suite (unit tests, nbval over
#                  every chapter, the notebook edition, the simulated Colab run and the
#                  headless-browser check of the rendered book)
#   make lint   -> ruff over the library, tests, scripts and chapters (CI runs it too)
PYTHON ?= python3
# The pinned CPU build first: an unpinned torch would pull GBs of CUDA packages on a CPU box.
# On a GPU machine use `make test TORCH=torch` to get the default (CUDA) build.
TORCH ?= torch==2.13.0
# Exact versions of everything else (see the file's header; `make lock` refreshes it).
LOCK ?= constraints.txt

.PHONY: install book test lint notebooks lock clean

install:
	$(PYTHON) -m pip install -c $(LOCK) "$(TORCH)"
	$(PYTHON) -m pip install -c $(LOCK) -e ".[book,test]"

book: install
	jupyter-book build -W -n --keep-going .

# Two worker processes, one test file per unit of work (a notebook's cells stay in order in
# one kernel), the long notebooks first in the order the root conftest.py gives (see README).
test: book
	$(PYTHON) -m pytest -n 2 --dist loadfile --no-loadscope-reorder

lint: install
	$(PYTHON) -m ruff check .

# Re-execute every chapter in place under the quick profile on CPU (what CI compares against).
notebooks:
	$(PYTHON) scripts/execute_notebooks.py

# Newest versions within pyproject.toml's ranges, resolved in a fresh virtual environment,
# written to $(LOCK). Then re-run `make test` (and re-execute notebooks if outputs changed).
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install -q --upgrade pip
	.lock-venv/bin/python -m pip install -q "$(TORCH)"
	.lock-venv/bin/python -m pip install -q -e ".[book,test]"
	{ sed -n '/^#/p' $(LOCK); .lock-venv/bin/python -m pip freeze --exclude-editable \
	  | grep -v -i '^torch=='; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .lock-venv

clean:
	rm -rf _build
