#!/usr/bin/env bash
# Build evalgrid's images with no access to Docker Hub: a Debian base made with debootstrap from a
# Debian mirror, then the sandbox image on top. Re-running is cheap (the base and layers are cached).
#
#   EXTRA_CA=/path/to/proxy-ca.crt images/build.sh    # labs behind a TLS-intercepting proxy
#   MIRROR=http://mirror.example/debian images/build.sh
set -euo pipefail
cd "$(dirname "$0")"

SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
BASE="evalgrid/debian-base:${SUITE}"
SANDBOX="${SANDBOX_IMAGE:-evalgrid/sandbox:dev}"

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "error: debootstrap is missing; run 'make setup' as root" >&2; exit 1; }
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' EXIT
  echo "building $BASE with debootstrap from $MIRROR ..."
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >/dev/null
  tar -C "$root" -c . | docker import - "$BASE" >/dev/null
fi

# The CA option: whatever *.crt is in sandbox/ca/ is trusted inside the image.
find sandbox/ca -name 'extra-*.crt' -delete
if [ -n "${EXTRA_CA:-}" ]; then
  [ -f "$EXTRA_CA" ] || { echo "error: EXTRA_CA=$EXTRA_CA does not exist" >&2; exit 1; }
  cp "$EXTRA_CA" sandbox/ca/extra-1.crt
fi

echo "building $SANDBOX ..."
# (stderr filtered: the legacy builder's deprecation notice is noise; real errors still show)
docker build --quiet --build-arg "BASE=$BASE" -t "$SANDBOX" sandbox >/dev/null \
  2> >(grep -v -e 'legacy builder is deprecated' -e 'Install the buildx' -e 'docs.docker.com/go/buildx' -e '^\s*$' >&2)
docker image inspect --format "$SANDBOX {{.Id}} {{.Size}} bytes" "$SANDBOX"
