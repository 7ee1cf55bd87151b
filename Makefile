# Ember: `make demo` (set up and run the tour) and `make test` (pytest + lit).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SHELL  := /bin/bash

.PHONY: venv test pytest lit demo clean

venv: $(STAMP)

# Re-installs when the dependencies change; `pip install -e` keeps the source tree live.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

test: venv pytest lit

# conftest.py fails the run when no test passed (all skipped or none collected).
pytest: venv
	$(BIN)/python -m pytest tests

# lit exits 0 when every test is unsupported; require a "Passed" total as well.
lit: venv
	set -o pipefail; PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -v lit_tests | tee $(VENV)/lit.log
	@grep -Eq '^ *Passed *: *[1-9]' $(VENV)/lit.log || { echo "lit: no test passed"; exit 1; }

demo: venv
	$(BIN)/python examples/tour.py

clean:
	rm -rf $(VENV) build *.egg-info
