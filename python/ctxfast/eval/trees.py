"""Source trees for benchmark instances: ``--trees DIR`` or PyPI source releases.

Release archives are fetched once per ``sources.json`` entry into a cache (default
``~/.cache/ctxfast/sources``), verified against the sha256 the package index publishes in its
PEP 691 JSON simple API, and extracted once with path-traversal checks; every instance of the
same release then shares the extracted tree (and its index cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ctxfast.eval.errors import EvalError

DEFAULT_INDEX_URL = "https://pypi.org/simple"
PEP691_ACCEPT = "application/vnd.pypi.simple.v1+json"
COMPLETE_MARKER = ".ctxfast-complete"


def default_cache_dir() -> Path:
    return Path(os.environ.get("CTXFAST_SOURCES_CACHE", "~/.cache/ctxfast/sources")).expanduser()


def configured_index_url() -> str:
    """The index pip is configured with (``PIP_INDEX_URL`` or ``pip config``), else PyPI.

    Using pip's own index keeps the harness working behind the same mirror pip uses.
    """
    env = os.environ.get("PIP_INDEX_URL")
    if env:
        return env.rstrip("/")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        m = re.match(r"^[\w:.-]*index-url='([^']+)'", line.strip())
        if m and ".extra-index-url" not in line:
            return m.group(1).rstrip("/")
    return DEFAULT_INDEX_URL


def normalize_project(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    actual = sha256_file(path)
    if actual.lower() != expected.lower():
        raise EvalError(f"sha256 mismatch for {path.name}: expected {expected}, got {actual}")


def _member_target(root: Path, name: str) -> Path:
    """Resolve an archive member inside ``root`` or refuse it (absolute, ``..``, drive)."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or (p.parts and ":" in p.parts[0]):
        raise EvalError(f"unsafe path in archive: {name!r}")
    target = (root / Path(*p.parts)).resolve() if p.parts else root.resolve()
    if target != root.resolve() and root.resolve() not in target.parents:
        raise EvalError(f"unsafe path in archive: {name!r}")
    return target


def safe_extract(archive: Path, dest: Path) -> None:
    """Extract a ``.tar.gz``/``.tar.bz2``/``.zip`` sdist into ``dest`` without escaping it.

    Every member path is checked before anything is written; links, devices and FIFOs are
    skipped (source trees do not need them and they are the classic escape route).
    """
    dest.mkdir(parents=True, exist_ok=True)
    name = archive.name.lower()
    try:
        if name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                infos = zf.infolist()
                for info in infos:
                    _member_target(dest, info.filename)
                for info in infos:
                    target = _member_target(dest, info.filename)
                    if info.is_dir():
                        target.mkdir(parents=True, exist_ok=True)
                        continue
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, target.open("wb") as out:
                        shutil.copyfileobj(src, out)
            return
        with tarfile.open(archive, "r:*") as tf:
            members = tf.getmembers()
            for m in members:
                _member_target(dest, m.name)
            for m in members:
                target = _member_target(dest, m.name)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                elif m.isfile():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    member = tf.extractfile(m)
                    if member is None:
                        continue
                    with member, target.open("wb") as fh:
                        shutil.copyfileobj(member, fh)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise EvalError(f"corrupt archive {archive.name}: {exc}") from exc


@dataclass(frozen=True)
class ReleaseFile:
    url: str
    sha256: str


class SimpleIndex:
    """A PEP 691 JSON simple-API client (one request per project, memoised)."""

    def __init__(self, index_url: str | None = None, timeout: float = 120.0) -> None:
        self.index_url = (index_url or configured_index_url()).rstrip("/")
        self.timeout = timeout
        self._projects: dict[str, dict[str, Any]] = {}

    def _project(self, name: str) -> dict[str, Any]:
        import httpx

        key = normalize_project(name)
        if key not in self._projects:
            url = f"{self.index_url}/{key}/"
            try:
                r = httpx.get(
                    url,
                    headers={"Accept": PEP691_ACCEPT},
                    timeout=self.timeout,
                    follow_redirects=True,
                )
                r.raise_for_status()
                self._projects[key] = json.loads(r.text)
            except (httpx.HTTPError, json.JSONDecodeError) as exc:
                raise EvalError(f"package index lookup failed for {name} at {url}: {exc}") from exc
        return self._projects[key]

    def release_file(self, project: str, filename: str) -> ReleaseFile:
        for f in self._project(project).get("files", []):
            if f.get("filename") == filename:
                sha = (f.get("hashes") or {}).get("sha256")
                if not sha:
                    raise EvalError(f"index publishes no sha256 for {filename}")
                return ReleaseFile(url=f["url"], sha256=sha)
        raise EvalError(f"{filename} is not listed by the index for {project}")

    def download(self, rf: ReleaseFile, dest: Path) -> None:
        import httpx

        # A private name: two runs sharing a cache may fetch the same release at once.
        fd, name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
        os.close(fd)
        tmp = Path(name)
        try:
            with (
                httpx.stream("GET", rf.url, timeout=self.timeout, follow_redirects=True) as r,
                tmp.open("wb") as out,
            ):
                r.raise_for_status()
                for chunk in r.iter_bytes():
                    out.write(chunk)
        except httpx.HTTPError as exc:
            tmp.unlink(missing_ok=True)
            raise EvalError(f"download failed for {rf.url}: {exc}") from exc
        try:
            verify_sha256(tmp, rf.sha256)
        except EvalError:
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(dest)


@dataclass(frozen=True)
class Tree:
    """A source tree on disk plus a stable key that identifies its content (for index caches)."""

    key: str
    path: Path


class ReleaseTrees:
    """Map instances to extracted PyPI release trees described by ``sources.json``."""

    def __init__(
        self,
        sources_json: str | Path,
        cache_dir: str | Path | None = None,
        index: SimpleIndex | None = None,
    ) -> None:
        try:
            self.sources: dict[str, dict[str, Any]] = json.loads(
                Path(sources_json).read_text(encoding="utf-8")
            )
        except (OSError, json.JSONDecodeError) as exc:
            raise EvalError(f"cannot read sources file {sources_json}: {exc}") from exc
        self.cache = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self._index = index
        self._trees: dict[str, Tree] = {}

    @property
    def index(self) -> SimpleIndex:
        if self._index is None:
            self._index = SimpleIndex()
        return self._index

    def entry(self, source_key: str) -> dict[str, Any]:
        if source_key not in self.sources:
            raise EvalError(f"no PyPI release mapped for {source_key}")
        return self.sources[source_key]

    def tree_for(self, source_key: str) -> Tree:
        """Download (once), verify, extract (once) and return the release tree."""
        if source_key in self._trees:
            return self._trees[source_key]
        ent = self.entry(source_key)
        project = str(ent["pypi"]).split("==")[0]
        filename = str(ent["sdist_file"])
        prefix = str(ent.get("sdist_prefix") or "")
        archives = self.cache / "archives"
        archives.mkdir(parents=True, exist_ok=True)
        archive = archives / filename
        extract_root = self.cache / "trees" / filename
        marker = extract_root / COMPLETE_MARKER
        if marker.exists():
            sha = marker.read_text(encoding="utf-8").strip()
        else:
            rf = self.index.release_file(project, filename)
            if archive.exists():
                verify_sha256(archive, rf.sha256)
            else:
                self.index.download(rf, archive)
            sha = rf.sha256
            self._extract(archive, extract_root, sha)
        path = extract_root / prefix if prefix else extract_root
        if not path.is_dir():
            raise EvalError(f"{filename}: expected top folder {prefix!r} in the archive")
        tree = Tree(key=f"sdist-{sha[:16]}", path=path)
        self._trees[source_key] = tree
        return tree

    @staticmethod
    def _extract(archive: Path, extract_root: Path, sha: str) -> None:
        """Extract into a private folder, mark it complete, then rename it into place.

        The marker is written before the rename, so a tree is either absent or complete; a
        concurrent run that finished first wins and this copy is discarded."""
        extract_root.parent.mkdir(parents=True, exist_ok=True)
        if extract_root.exists() and not (extract_root / COMPLETE_MARKER).exists():
            shutil.rmtree(extract_root, ignore_errors=True)  # an unmarked, partial tree
        tmp = Path(tempfile.mkdtemp(prefix=extract_root.name + ".", dir=extract_root.parent))
        try:
            safe_extract(archive, tmp)
            (tmp / COMPLETE_MARKER).write_text(sha + "\n", encoding="utf-8")
            try:
                tmp.replace(extract_root)
            except OSError:
                if not (extract_root / COMPLETE_MARKER).exists():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class DirTrees:
    """``--trees DIR``: ``DIR/<instance_id>/`` is the repository at the instance's state."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise EvalError(f"--trees: {root} is not a directory")

    def tree_for_instance(self, instance_id: str) -> Tree:
        path = self.root / instance_id
        if not path.is_dir():
            raise EvalError(f"no tree at {path}")
        return Tree(key=f"dir-{instance_id}-{tree_fingerprint(path)}", path=path)


def tree_fingerprint(root: Path) -> str:
    """A cheap content stamp (path, size, mtime of every file) so an edited tree re-indexes."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            p = Path(dirpath) / fn
            try:
                st = p.stat()
            except OSError:
                continue
            h.update(f"{p.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


__all__ = [
    "DirTrees",
    "ReleaseTrees",
    "SimpleIndex",
    "Tree",
    "configured_index_url",
    "default_cache_dir",
    "safe_extract",
    "sha256_file",
    "verify_sha256",
]
