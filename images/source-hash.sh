#!/usr/bin/env bash
# Print the source label of an image: a short hash of everything that goes into it. build.sh stamps it on
# the image (label evalgrid.source) and skips a build whose label already matches; `make doctor` compares
# it with the built image's to say whether the image is current for this checkout.
#
#   images/source-hash.sh sandbox      # the base image, images/sandbox (its locks, scripts, Dockerfile, CAs)
#   images/source-hash.sh worker       # the base image, the venv's pinned packages, evaluator/ and cluster/
#
# SUITE and WHEEL_PYTHON as for build.sh.
set -euo pipefail
cd "$(dirname "$0")"
BASE="evalgrid/debian-base:${SUITE:-bookworm}"
WHEEL_PYTHON="${WHEEL_PYTHON:-$PWD/../.venv/bin/python}"
base_id="$(docker image inspect --format '{{.Id}}' "$BASE" 2>/dev/null || echo "no $BASE")"

inputs() {
  case "$1" in
    sandbox)
      echo "$base_id"; find sandbox -type f -not -path 'sandbox/build/*' | sort | xargs sha256sum ;;
    worker)
      "$WHEEL_PYTHON" -m pip freeze --exclude-editable --disable-pip-version-check; echo "$base_id"
      (cd .. && find pyproject.toml evaluator cluster images/worker -type f \
         -not -path '*/__pycache__/*' -not -path 'images/worker/wheels/*' -not -path 'images/worker/evalgrid-wheel/*' | sort | xargs sha256sum) ;;
  esac
}

case "${1:-}" in
  sandbox) ;;
  worker) [ -x "$WHEEL_PYTHON" ] || { echo "error: $WHEEL_PYTHON is missing; run 'make venv'" >&2; exit 1; } ;;
  *) echo "usage: source-hash.sh sandbox|worker" >&2; exit 2 ;;
esac
inputs "$1" | sha256sum | cut -c1-16
