"""A sweep's inputs as one content-addressed archive, for sweeps that run where its files are not.

On a cluster, the driver (the RayJob) and every worker pod must read the same sweep file, query
file and replayed answers. ``evalgrid cluster submit`` packs them into one deterministic
``tar.gz`` named by its SHA-256 and puts it beside the run directory in the object store;
``evalgrid run --inputs URL`` and each worker unpack it to the same local path, so every
:class:`~evaluator.models.RunSpec`'s ``answers_dir`` means the same files on every node.

Layout of the archive: ``sweep.yaml`` (the spec, with the query file and every answers
directory rewritten to the paths below), ``queries.yaml``, ``answers/<candidate id>/<files>``.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from cluster.store.object_store import S3Store, StoreLocation, StoreSettings
from cluster.sweep.spec import Sweep
from evaluator import ConfigError, QuerySet

SWEEP_FILE = "sweep.yaml"
_MAX_MEMBERS = 200_000
_MAX_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class InputsRef:
    """Where a packed sweep lives and where it is unpacked on every node; plain and picklable."""

    store: StoreSettings
    """The object-store directory holding the archive."""
    name: str
    """The archive's name in that directory: ``<sha256>.tar.gz``."""
    directory: str
    """Absolute local directory the archive is unpacked into (the same on every node)."""

    @property
    def url(self) -> str:
        """The archive's ``s3://`` URL."""
        return f"{self.store.url}/{self.name}"


def inputs_root() -> Path:
    """Where archives are unpacked: ``$EVALGRID_INPUTS_DIR``, else ``~/.cache/evalgrid/inputs``."""
    configured = os.environ.get("EVALGRID_INPUTS_DIR")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "evalgrid" / "inputs"


def pack_inputs(sweep: Sweep) -> tuple[str, bytes]:
    """The sweep's inputs as ``(sha256, tar.gz bytes)``; the same inputs always give the same bytes."""
    spec = sweep.spec.model_dump(mode="json", exclude_defaults=True)
    spec["queries"] = "queries.yaml"
    spec.pop("only_queries", None)  # the packed query file holds exactly the sweep's queries
    for candidate in spec["candidates"]:
        if candidate.get("answers"):
            candidate["answers"] = f"answers/{candidate['id']}"
    files: dict[str, bytes] = {
        SWEEP_FILE: yaml.safe_dump(spec, sort_keys=True, allow_unicode=True).encode(),
        "queries.yaml": yaml.safe_dump(QuerySet(queries=sweep.queries).model_dump(mode="json"), sort_keys=True,
                                       allow_unicode=True).encode(),
    }
    for candidate in sweep.spec.candidates:
        directory = sweep.answers_dir(candidate)
        if directory is None:
            continue
        for path in sorted(directory.rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[f"answers/{candidate.id}/{path.relative_to(directory).as_posix()}"] = path.read_bytes()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(files[name]))
    data = gzip.compress(raw.getvalue(), mtime=0)
    return hashlib.sha256(data).hexdigest(), data


def unpack_inputs(data: bytes, root: Path) -> Path:
    """Unpack an archive under ``root/<sha256>/`` (once; later calls reuse it) and return its sweep file.

    Only regular files with relative, non-escaping names are accepted: an archive is data, and a
    crafted one must not write outside its directory.
    """
    digest = hashlib.sha256(data).hexdigest()
    target = root / digest
    if (target / SWEEP_FILE).is_file():
        return target / SWEEP_FILE
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=root))
    try:
        _extract(data, staging)
        if not (staging / SWEEP_FILE).is_file():
            raise ConfigError(f"the inputs archive {digest[:12]} has no {SWEEP_FILE}; pack it with "
                              "`evalgrid cluster submit`")
        try:
            staging.rename(target)  # atomic: another worker unpacking the same archive wins or loses whole
        except OSError:
            if not (target / SWEEP_FILE).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / SWEEP_FILE


def _extract(data: bytes, into: Path) -> None:
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for count, member in enumerate(tar, start=1):
                name = PurePosixPath(member.name)
                if (count > _MAX_MEMBERS or not member.isfile() or name.is_absolute() or ".." in name.parts
                        or not name.parts):
                    raise ConfigError(f"the inputs archive holds an entry it may not: {member.name!r}")
                total += member.size
                if total > _MAX_BYTES:
                    raise ConfigError("the inputs archive unpacks to more than 2 GiB")
                source = tar.extractfile(member)
                if source is None:
                    raise ConfigError(f"the inputs archive entry {member.name!r} cannot be read")
                path = into.joinpath(*name.parts)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(source.read())
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ConfigError(f"the inputs archive is not a readable tar.gz ({exc})") from exc


def upload_inputs(sweep: Sweep, run_dir: StoreSettings) -> InputsRef:
    """Pack ``sweep`` and put it under ``<run dir>/inputs/`` (skipped when the same archive is there)."""
    digest, data = pack_inputs(sweep)
    store = S3Store(_inputs_settings(run_dir, f"{run_dir.url.rstrip('/')}/inputs"))
    name = f"{digest}.tar.gz"
    if store.size(name) != len(data):
        store.put_bytes(name, data, content_type="application/gzip")
    return InputsRef(store=store.settings, name=name, directory=str(inputs_root() / digest))


def resolve_inputs(url: str, like: StoreSettings | None = None) -> InputsRef:
    """The :class:`InputsRef` of an archive URL (``s3://.../<sha256>.tar.gz``), reached like ``like``."""
    location = StoreLocation.parse(url)
    parent, _, name = location.prefix.rpartition("/")
    digest = name.removesuffix(".tar.gz")
    if len(digest) != 64 or not name.endswith(".tar.gz") or any(c not in "0123456789abcdef" for c in digest):
        raise ConfigError(f"{url} is not an inputs archive (…/inputs/<sha256>.tar.gz, as `evalgrid cluster "
                          "submit` writes)")
    settings = _inputs_settings(like, f"s3://{location.bucket}/{parent}".rstrip("/"))
    return InputsRef(store=settings, name=name, directory=str(inputs_root() / digest))


def fetch_inputs(ref: InputsRef) -> Path:
    """Make the archive's files present at ``ref.directory`` (downloading it if needed); returns the sweep file."""
    directory = Path(ref.directory)
    if (directory / SWEEP_FILE).is_file():
        return directory / SWEEP_FILE
    data = S3Store(ref.store).get_bytes(ref.name)
    if data is None:
        raise ConfigError(f"no inputs archive at {ref.url}; submit the sweep again")
    if hashlib.sha256(data).hexdigest() != directory.name:
        raise ConfigError(f"{ref.url} does not match its name (sha256); the archive was changed or damaged")
    return unpack_inputs(data, directory.parent)


def _inputs_settings(like: StoreSettings | None, url: str) -> StoreSettings:
    return StoreSettings(url=url) if like is None else dataclasses.replace(like, url=url)
