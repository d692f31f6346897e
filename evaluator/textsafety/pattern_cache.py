"""The detector's built patterns kept on disk, so that a process after the first only compiles them.

Building the patterns from the vocabulary (composing the concepts, guarding each pattern, reading the gate's
literal beginnings with the standard library's parser) took 3.3 s of a core on these machines, and compiling
what it built 2.5 s more, at the first scan of every process: each Ray worker, each ``evalgrid`` command, each
pytest worker. What the building makes is plain text (regular expressions and word lists), so it is kept in
the user's cache directory (``$XDG_CACHE_HOME/evalgrid``, else ``~/.cache/evalgrid``) under a name made of a
hash of everything it is built from: the vocabulary, this package's code, the Python version and whether its
regex parser could be read. Any change to those names another file.

The cache decides what the detector looks for, so a file is used only when this user owns it and nobody else
may write it or its folder; a file that is not so, or does not read, is ignored and built again. Where nothing
can be written (no home, a read-only file system) every process builds, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from evaluator.package_data import package_text
from evaluator.textsafety.guards import PARSE
from evaluator.textsafety.vocabulary import VOCABULARY


def fingerprint() -> str:
    """A hash of what the patterns are built from: the vocabulary, this package's modules, the Python and whether
    its private regex parser could be read (without it the patterns are built unguarded)."""
    digest = hashlib.sha256(f"{sys.version}\0{PARSE is not None}".encode())
    digest.update(package_text(*VOCABULARY.split("/", 1)).encode())
    for module in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()[:24]


def cache_file(key: str) -> Path | None:
    """Where the patterns of ``key`` are kept; None where there is no cache directory to use."""
    base = os.environ.get("XDG_CACHE_HOME") or (str(Path.home() / ".cache") if "HOME" in os.environ else "")
    return Path(base) / "evalgrid" / f"detector-patterns-{key}.json" if base else None


def load(key: str) -> dict[str, Any] | None:
    """The document stored for ``key``, or None: none stored, not this user's own alone, or unreadable."""
    path = cache_file(key)
    if path is None:
        return None
    try:
        if not (_private(path) and _private(path.parent)):
            return None
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) and document.get("key") == key else None


def store(key: str, document: dict[str, Any]) -> None:
    """Keep ``document`` for ``key`` (written whole or not at all; nothing is raised where it cannot be)."""
    path = cache_file(key)
    if path is None:
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=".detector-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({**document, "key": key}, out)
            os.replace(name, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)


def _private(path: Path) -> bool:
    info = path.stat()
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
