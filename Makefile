# evalgrid — the two commands a fresh Debian machine needs (as root): `make demo` and `make test`.
# Both do all set-up first: Debian's Chromium, ffmpeg and CJK fonts when missing, then the venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMPS := .make-stamps
APT_PACKAGES := chromium ffmpeg fonts-noto-cjk fonts-noto-color-emoji fonts-liberation fonts-dejavu-core

.PHONY: setup system venv demo test lint bench clean

setup: system venv

# System packages: Debian's Chromium (Playwright cannot download its own browser offline),
# ffmpeg to encode the screen video, fonts that cover the queries' languages.
system: $(STAMPS)/system
$(STAMPS)/system:
	@mkdir -p $(STAMPS)
	@if command -v chromium >/dev/null && command -v ffmpeg >/dev/null && fc-list 2>/dev/null | grep -qi "Noto Sans CJK" && fc-list 2>/dev/null | grep -qi "Noto Color Emoji"; then \
		echo "system packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	else \
		echo "error: need Debian packages $(APT_PACKAGES); run 'make setup' as root or install them" >&2; exit 1; \
	fi
	@touch $@

venv: $(STAMPS)/venv
$(STAMPS)/venv: pyproject.toml
	@mkdir -p $(STAMPS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@

demo: setup
	$(BIN)/evalgrid run fixtures/sweeps/demo.yaml

test: setup lint
	$(BIN)/pytest -q

lint: venv
	$(BIN)/ruff check evaluator cluster tests
	$(BIN)/mypy

bench: setup
	$(BIN)/python tests/benchmarks/bench_static_perception.py
	$(BIN)/python tests/benchmarks/bench_reducer.py

clean:
	rm -rf $(VENV) $(STAMPS) runs *.egg-info
