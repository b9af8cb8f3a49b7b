# A thin alias of run.py for those who like make: every target is `python run.py TARGET`, which also
# works without make (Windows: `py run.py TARGET`). The options, all optional:
#   PYTHON=python3.12         the interpreter that runs run.py and creates the virtual environment
#   VENV=.venv                where the virtual environment lives
#   TORCH_SPEC=torch==2.13.0  install this torch first (empty: let pip pick the build)
#   TORCH_INDEX=cpu           take torch from PyTorch's CPU wheel index (Linux without a GPU)
#   EXTRAS=dev,lab,browser    the optional dependencies to install (default dev,lab)
#   TL_MINIMAL_DATA=dir       read data sets from a local directory instead of downloading
# `python run.py --help` and run.py's docstring say more.

PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?=
TORCH_INDEX ?=
EXTRAS ?= dev,lab
RUN = $(PYTHON) run.py --python "$(PYTHON)" --venv "$(VENV)" --extras "$(EXTRAS)" \
      $(if $(TORCH_SPEC),--torch "$(TORCH_SPEC)") $(if $(TORCH_INDEX),--torch-index "$(TORCH_INDEX)")

.PHONY: setup lab test test-fast sync clean-venv

setup lab test test-fast sync:
	$(RUN) $@

clean-venv:
	$(RUN) clean
