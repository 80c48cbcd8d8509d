# Set-up and checks. `make test` creates .venv, installs the project (with the test and RLlib
# extras, so the RLlib backend's test runs too) and runs the test suite.
#
# TORCH picks the PyTorch build installed before the project. The pinned default is a CPU wheel on
# the project's CI machines and a regular PyPI wheel elsewhere; pass e.g.
#   make test TORCH="torch --index-url https://download.pytorch.org/whl/cpu"
# to choose another build.
#
# TEST_WORKERS is the number of pytest-xdist processes the suite runs on: the suite is one long
# queue of mostly single-threaded tests, so two processes take a 2-core host's run from about 8 to
# about 4 minutes (6 with numba's cache empty); TEST_WORKERS=0 runs it in this process alone.
PYTHON ?= python3
TEST_WORKERS ?= 2
VENV ?= .venv
TORCH ?= torch==2.13.0
PY := $(VENV)/bin/python

.PHONY: setup test main bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e ".[dev,rllib]"
	touch $@

test: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS)

# The main job: train the default config (resuming it if a run exists), then a 4-player
# tournament of the trained policy against the baselines, printed as a table.
RUN := runs/default
main: setup
	if [ -f $(RUN)/state.json ]; then $(PY) train.py --resume $(RUN); \
	else $(PY) train.py --config configs/default.yaml; fi
	$(PY) evaluate.py --players 4 --agents ppo:$(RUN)/policy.npz heuristic greedy random \
		--games 96 --seed 0 --max-turns 500 --out $(RUN)/tournament --overwrite

bench: setup
	$(PY) benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
