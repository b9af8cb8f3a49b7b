# Two entry points, both run from a fresh clone with only Python >= 3.10 and make:
#   make lab    set up .venv (once) and open JupyterLab on notebooks/
#   make test   set up .venv (once) and run the whole suite: pytest --nbval in smoke mode
#
# Variables you can set on the command line (no file needs editing):
#   PYTHON=python3.12         the interpreter that creates the virtual environment
#   VENV=.venv                where the virtual environment lives
#   TORCH_SPEC=torch==2.13.0  install this torch first (CI pins the CPU build this way);
#                             empty = let pip pick the build for your platform (MPS, CUDA, CPU)
#   TL_MINIMAL_DATA=dir       read data sets from a local directory instead of downloading
#   EXTRAS=dev,browser        the optional dependencies setup installs (default dev); browser
#                             adds Playwright for tests/test_browser.py (with a fresh .venv:
#                             setup runs once; or add it later: .venv/bin/pip install -e ".[browser]")
#   TL_BROWSER=/path/chromium the browser for tests/test_browser.py (default: chromium on PATH)

PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?=
EXTRAS ?= dev
BIN := $(VENV)/bin
STAMP := $(VENV)/.tl-minimal-installed

.PHONY: setup lab test test-fast sync clean-venv

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "tl-minimal needs Python >= 3.10, this is " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@if [ -n "$(TORCH_SPEC)" ]; then echo "installing $(TORCH_SPEC) first"; $(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"; fi
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

# JupyterLab refuses to run as root unless told (containers, cloud shells): tell it only then.
LAB_ARGS ?= $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: setup
	$(BIN)/jupyter lab notebooks/ $(LAB_ARGS)

test: setup
	TL_SMOKE=1 $(BIN)/python -m pytest --nbval

# the unit tests alone, without executing notebooks (so without the browser test, which runs them)
test-fast: setup
	TL_SMOKE=1 $(BIN)/python -m pytest tests -m "not browser"

# after editing a notebook's .py (or .ipynb), bring its pair up to date
sync: setup
	$(BIN)/jupytext --sync notebooks/*.ipynb notebooks/exercises/*.ipynb notebooks/exercises/solutions/*.ipynb

clean-venv:
	rm -rf $(VENV)
