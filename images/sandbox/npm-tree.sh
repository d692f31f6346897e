#!/usr/bin/env bash
# Install a locked npm tree of the sandbox image (PKGDIR: package.json + package-lock.json) into
# OUTDIR/node_modules: the offline CDN mirror (mirror/, read by mirror.js) and the build toolchain
# (toolchain/, used by build.mjs).
#
#   images/sandbox/npm-tree.sh images/sandbox/mirror images/sandbox/build/mirror
#   EXTRA_CA=/path/to/proxy-ca.crt images/sandbox/npm-tree.sh PKGDIR OUTDIR   # TLS-intercepting lab proxy
#
# Runs on the build host (the sandbox has neither npm nor a network). A stamp of the lock, the
# package.json and this script makes a re-run with nothing changed a no-op, so build.sh can call it
# every time.
set -euo pipefail

here=$(cd "${1:?usage: npm-tree.sh PKGDIR OUTDIR}" && pwd)
out=${2:?usage: npm-tree.sh PKGDIR OUTDIR}

if ! command -v npm >/dev/null 2>&1; then
  echo "error: npm is not installed; run make setup (the sandbox's packages come from the npm registry)" >&2
  exit 1
fi

want=$(cat "$here/package.json" "$here/package-lock.json" "$0" | sha256sum | cut -d' ' -f1)
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
# their peer ranges cannot all be met by the one top-level react. `npm install` rather than `npm ci`:
# npm writes locks without the other platforms' optional packages (rollup's, esbuild's) and `npm ci`
# then refuses them; the lock is checked unchanged below, so the versions are still the locked ones.
(cd "$out" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --legacy-peer-deps --loglevel=error)
if ! cmp -s "$here/package-lock.json" "$out/package-lock.json"; then
  echo "error: $here/package-lock.json does not match its package.json; regenerate it with npm install" >&2
  exit 1
fi

# Pages never fetch source maps or type declarations (Chromium asks for maps only with DevTools
# open), and chart.js 3 ships its 20 MB documentation site in dist/: dropping them keeps the image
# about 100 MB smaller.
find "$out/node_modules" -type d -path '*/dist/docs' -prune -exec rm -rf {} +
find "$out/node_modules" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

echo "$want" >"$stamp"
echo "installed $(du -sh "$out/node_modules" | cut -f1) into $out"
