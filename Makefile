# Ember: `make demo` (set up and run the tour) and `make test` (pytest + lit).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SHELL  := /bin/bash

.PHONY: venv test test-slow pytest lit demo clean bench bench-anchors fuzz bench-gpu bench-data bench-distribute bench-mpi

venv: $(STAMP)

# Re-installs when the dependencies change; `pip install -e` keeps the source tree live.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cuda,mpi]'
	$(PYC)
	touch $(STAMP)

# Byte-compiles the sources, as pip does for a wheel (an editable install does not): with
# PYTHONDONTWRITEBYTECODE set, each start would otherwise compile ~300 modules (~0.3 s).
PYC := $(BIN)/python -m compileall -q -j 0 ember dialects frontend passes backends runtime tools

test: venv pytest lit

# conftest.py fails the run when no test passed (all skipped or none collected). The tests
# run in pytest-xdist workers, one per core and one more (CI has 2 cores: 3 workers, at
# most 5): most of their time is compiling, but some wait on subprocesses, MPI jobs and
# watchdog timeouts, and with one worker per core ~7% of the cores' time was idle. A few
# tests take half a minute (the fuzz campaigns): worksteal keeps the workers busy to the end.
# Tests marked `slow` (whole-process and whole-library checks, the long tails of the CUDA
# tables: 257 tests, ~1 minute of CPU here, more on a busy machine) are left to
# `make test-slow`, keeping `make test` within CI's 15 minutes on 2 cores; run both before a
# change lands.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n + 1 < 5 ? n + 1 : 5 )))
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal
pytest: venv
	$(PYTEST) -m "not slow" tests

test-slow: venv
	$(PYTEST) -m slow tests

# lit exits 0 when every test is unsupported; require a "Passed" total as well. Its tests
# pipe one tool into another (ember-opt | FileCheck): as many workers as pytest's.
lit: venv
	set -o pipefail; PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/lit -v -j $(PYTEST_WORKERS) lit_tests \
	  | tee $(VENV)/lit.log
	@grep -Eq '^ *Passed *: *[1-9]' $(VENV)/lit.log || { echo "lit: no test passed"; exit 1; }

# The fuzz campaign (not part of `make test`): tests/fuzz/test_fuzz.py and test_grad_fuzz.py
# with forty times `make test`'s inputs (20,000 IR inputs, 5,000 programs per straight-line
# campaign, 1,000 gradient programs); counts and failing inputs go to FUZZ_DIR.
FUZZ_SCALE ?= 40
FUZZ_DIR   ?= $(VENV)/fuzz
fuzz: venv
	rm -rf $(FUZZ_DIR)
	EMBER_FUZZ_SCALE=$(FUZZ_SCALE) EMBER_FUZZ_DIR=$(abspath $(FUZZ_DIR)) \
	  $(BIN)/python -m pytest tests/fuzz/test_fuzz.py tests/fuzz/test_grad_fuzz.py \
	  -p no:cacheprovider -rA -s

demo: venv
	$(BIN)/python examples/tour.py

# Benchmarks (bench/README.md): ratios to numpy and, when installed, tf.function, jax.jit and
# torch.compile, each system in its own process. Uses .venv-anchors (make bench-anchors) if present.
ANCHORS := .venv-anchors

bench: venv
	@if [ -x $(ANCHORS)/bin/python ]; then py=$(ANCHORS)/bin/python; else py=$(BIN)/python; fi; \
	  echo "bench: $$py"; $(PYC) && $$py bench/run.py

# A separate venv for the anchors (TF, JAX, torch are large; the project venv stays lean).
# torch==2.13.0 (CPU build) is taken from this machine's disk; the others come from PyPI.
bench-anchors:
	test -x $(ANCHORS)/bin/python || $(PYTHON) -m venv $(ANCHORS)
	$(ANCHORS)/bin/python -m pip install --quiet --upgrade pip
	$(ANCHORS)/bin/python -m pip install --quiet -e . threadpoolctl
	$(ANCHORS)/bin/python -m pip install --quiet torch==2.13.0 || echo "bench-anchors: torch not installed"
	$(ANCHORS)/bin/python -m pip install --quiet jax jaxlib || echo "bench-anchors: jax not installed"
	$(ANCHORS)/bin/python -m pip install --quiet tensorflow-cpu || echo "bench-anchors: tensorflow-cpu not installed"

clean:
	rm -rf $(VENV) build *.egg-info

# The GPU bench (bench/gpu.py): case C against the device's copy bandwidth, 4096² matmul
# f32/bf16 against torch's cuBLAS when installed. Without a GPU: one line, status 0.
bench-gpu: venv
	$(BIN)/python bench/gpu.py

# The em.data bench (bench/data_pipeline.py): from_tensor_slices -> map -> batch -> prefetch
# against numpy and, when TensorFlow is installed (.venv-anchors, make bench-anchors), tf.data.
bench-data: venv
	@if [ -x $(ANCHORS)/bin/python ]; then py=$(ANCHORS)/bin/python; else py=$(BIN)/python; fi; \
	  echo "bench-data: $$py"; $$py bench/data_pipeline.py

# The replica bench (bench/distribute_replicas.py): a training step under MirroredStrategy,
# 2 replicas on 2 logical CPUs against 1, one thread per replica (issue 18: >= 1.8x).
bench-distribute: venv
	$(BIN)/python bench/distribute_replicas.py

# The multi-worker bench (bench/allreduce_mpi.py): a 64 MiB all-reduce across 2 MPI workers
# through MultiWorkerMirroredStrategy against mpi4py's own Allreduce (the mpi extra).
bench-mpi: venv
	$(BIN)/python bench/allreduce_mpi.py
