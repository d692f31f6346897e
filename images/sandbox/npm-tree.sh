#!/usr/bin/env bash
# Install a locked npm tree of the sandbox image (PKGDIR: package.json + package-lock.json) into
# OUTDIR/node_modules: the packages the offline CDN mirror serves (mirror/), the mirror's own code's
# dependencies (cdn/, required by its modules there) and the build toolchain (toolchain/, used by build.mjs).
#
#   images/sandbox/npm-tree.sh images/sandbox/mirror images/sandbox/build/mirror
#   EXTRA_CA=/path/to/proxy-ca.crt images/sandbox/npm-tree.sh PKGDIR OUTDIR   # TLS-intercepting lab proxy
#
# Runs on the build host (the sandbox has neither npm nor a network). A stamp of the lock, the
# package.json and this script makes a re-run with nothing changed a no-op, so build.sh can call it
# every time.
#
# Supported: Node >= 18 with npm 9, 10 or 11 (Debian bookworm's Node 18.20.4 and npm 9.2.0 included;
# npm 11 itself needs Node >= 20.17). The install does not depend on which: `npm ci` installs exactly
# what the lock says, and lockcheck.js verifies the installed tree by content afterwards.
#
# Regenerating a lock after editing a package.json: use npm 11, which writes every platform's optional
# packages (rollup's and esbuild's native builds); `npm ci` under npm 9 and 10 refuses a lock without
# them. `(cd images/sandbox/toolchain && npx --yes npm@11 install --package-lock-only --legacy-peer-deps
# --ignore-scripts)`.
set -euo pipefail

here=$(cd "${1:?usage: npm-tree.sh PKGDIR OUTDIR}" && pwd)
out=${2:?usage: npm-tree.sh PKGDIR OUTDIR}

if ! command -v npm >/dev/null 2>&1; then
  echo "error: npm is not installed; run make setup (the sandbox's packages come from the npm registry)" >&2
  exit 1
fi

check="$(dirname "$0")/lockcheck.js"
# A package.json edited without its lock fails here, in a second, before anything is fetched.
node "$check" "$here"

want=$(cat "$here/package.json" "$here/package-lock.json" "$0" "$check" | sha256sum | cut -d' ' -f1)
stamp="$out/.evalgrid-npm-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$out/node_modules" ]; then
  echo "$out is up to date"
  exit 0
fi

mkdir -p "$out"
rm -f "$stamp"
cp "$here/package.json" "$here/package-lock.json" "$out/"

if [ -n "${EXTRA_CA:-}" ]; then
  [ -f "$EXTRA_CA" ] || { echo "error: EXTRA_CA=$EXTRA_CA does not exist" >&2; exit 1; }
  # npm's cafile replaces the default roots, so hand it the system bundle plus the lab CA.
  bundle="$out/.ca-bundle.crt"
  : >"$bundle"
  for system in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
    if [ -f "$system" ]; then cat "$system" >>"$bundle"; break; fi
  done
  cat "$EXTRA_CA" >>"$bundle"
  export NODE_EXTRA_CA_CERTS="$EXTRA_CA" npm_config_cafile="$bundle"
fi

# --legacy-peer-deps: the mirror holds several majors of react/react-dom side by side as aliases, and
# their peer ranges cannot all be met by the one top-level react.
if ! (cd "$out" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --legacy-peer-deps --loglevel=error); then
  echo "error: npm $(npm --version) could not install $here/package-lock.json (above); a lock written by an npm" \
       "older than 11 lacks other platforms' packages: regenerate it as the comment in $0 says" >&2
  exit 1
fi
node "$check" "$here" "$out"

# Pages never fetch source maps or type declarations (Chromium asks for maps only with DevTools
# open), and chart.js 3 ships its 20 MB documentation site in dist/: dropping them keeps the image
# about 100 MB smaller.
find "$out/node_modules" -type d -path '*/dist/docs' -prune -exec rm -rf {} +
find "$out/node_modules" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

echo "$want" >"$stamp"
echo "installed $(du -sh "$out/node_modules" | cut -f1) into $out"
