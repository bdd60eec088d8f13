# rewardkit: every target creates or reuses .venv and installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint typecheck quality docs docs-build toolchains docker clean

# constraints.txt pins our own torch (the CPU build); the package itself does not pin it.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[dev,all]'
	@touch $@

demo: $(STAMP)
	$(PY) -m rewardkit demo --out out/demo

toolchains:
	@bash scripts/install-toolchains.sh

# `rewardkit docker setup`, with the checkout's build cache (.cache/docker)
docker: $(STAMP)
	@PYTHON=$(PY) bash scripts/docker-setup.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check rewardkit sandbox analyzers trainers benchmarks tests

typecheck: $(STAMP)
	@bash scripts/typecheck.sh $(VENV)

# rewardkit's own analyzers on its own code (profile: quality.toml); fails under the floor.
QUALITY_FLOOR := 0.6
quality: $(STAMP)
	set -o pipefail; $(PY) -m rewardkit analyze rewardkit sandbox analyzers trainers benchmarks \
		--profile quality.toml --summary --fail-under $(QUALITY_FLOOR) | tail -n 1

# the docs site (mkdocs-material, sources in docs/): served locally, built strictly by make test
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# pytest in two parts: the tests that neither time anything nor look machine-wide on TEST_WORKERS
# xdist workers, then the `serial` ones (tests/conftest.py names them) alone; both parts run, and
# the target fails if either did.
# One more worker than the CI machine's 2 cores: many tests wait on a sandbox, a service or a
# subprocess, and a third worker fills that time.
TEST_WORKERS ?= 3
# The harnesses the agreement corpora compare with (tests/formats/test_agree_*.py): verl's
# prime_code (VERL_DIR below) and LiveCodeBench's testing_util (LCB_DIR below).
test: $(STAMP) toolchains docker lint typecheck quality docs-build .cache/verl/.stamp .cache/lcb/.stamp
	status=0; \
	$(PY) -m pytest -q -ra -m "not serial" -n $(TEST_WORKERS) --dist loadgroup || status=$$?; \
	$(PY) -m pytest -q -ra -m serial -p no:xdist || status=$$?; \
	exit $$status

# EvalPlus's own evaluator, for bench_evalplus.py: apart from our venv, without the model SDKs
# its declared dependencies pull in (benchmarks/perf/evalplus-requirements.txt says why).
EVALPLUS_DIR := .cache/evalplus
$(EVALPLUS_DIR)/.stamp: benchmarks/perf/evalplus-requirements.txt | $(STAMP)
	rm -rf $(EVALPLUS_DIR)
	$(PY) -m pip install -q --no-deps --target $(EVALPLUS_DIR) -r $<
	@touch $@

# verl's prime_code, for bench_throughput.py: the wheel alone, unpacked (verl-requirements.txt says why).
VERL_DIR := .cache/verl
$(VERL_DIR)/.stamp: benchmarks/perf/verl-requirements.txt | $(STAMP)
	rm -rf $(VERL_DIR)
	$(PY) -m pip install -q --no-deps --target $(VERL_DIR) -r $<
	@touch $@

# LiveCodeBench's testing_util.py is not on PyPI itself; skyrl-gym's wheel ships it as rLLM
# adapted it (skyrl_gym/envs/lcb/livecodebench.py: standard library and numpy only).
LCB_DIR := .cache/lcb
$(LCB_DIR)/.stamp: benchmarks/perf/lcb-requirements.txt | $(STAMP)
	rm -rf $(LCB_DIR)
	$(PY) -m pip install -q --no-deps --target $(LCB_DIR) -r $<
	@touch $@

bench: $(STAMP) toolchains docker $(EVALPLUS_DIR)/.stamp $(VERL_DIR)/.stamp
	@for script in benchmarks/perf/bench_*.py; do \
		echo "== $$script"; EVALPLUS_PATH=$(CURDIR)/$(EVALPLUS_DIR) VERL_PATH=$(CURDIR)/$(VERL_DIR) \
			$(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) .typecheck .mypy_cache .ruff_cache .pytest_cache out site
