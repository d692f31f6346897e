"""Real npm releases from the registry, each in a prefix of its own, for tests of what a host's npm does."""

from __future__ import annotations

import subprocess
from pathlib import Path

# gitignored (build/), so later runs reuse the prefixes; npm's own cache makes a refetch fast too
PREFIXES = Path(__file__).resolve().parents[2] / "images" / "sandbox" / "build" / "npm-versions"


def npm_bin(version: str) -> Path:
    """The bin/ directory of npm VERSION (fetched on first use); put it first on PATH to use that npm."""
    prefix = PREFIXES / version
    npm = prefix / "node_modules" / ".bin" / "npm"
    if not npm.exists():
        subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                        f"npm@{version}"], check=True, capture_output=True, text=True, timeout=180)
    found = subprocess.run([str(npm), "--version"], capture_output=True, text=True)
    if found.returncode != 0 or found.stdout.strip() != version:
        raise NpmUnsupportedError(f"npm {version} does not run on this host's Node: {found.stderr.strip()[:300]}")
    return npm.parent


class NpmUnsupportedError(RuntimeError):
    """This npm release does not run on the host's Node (npm 11 needs Node >= 20.17; bookworm has 18.20.4)."""
