"""sdist download/verify/extract against a real loopback PEP 691 index (no network)."""

import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ctxfast.eval.errors import EvalError
from ctxfast.eval.trees import ReleaseTrees, SimpleIndex, safe_extract, verify_sha256


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_safe_extract_and_traversal(tmp_path):
    good = _tar(tmp_path / "pkg-1.0.tar.gz", {"pkg-1.0/pkg/mod.py": b"x = 1\n"})
    safe_extract(good, tmp_path / "out")
    assert (tmp_path / "out/pkg-1.0/pkg/mod.py").read_text() == "x = 1\n"
    for bad_name in ("../evil.py", "/abs/evil.py", "pkg/../../evil.py"):
        bad = _tar(tmp_path / "bad.tar.gz", {"pkg/ok.py": b"", bad_name: b"boom"})
        with pytest.raises(EvalError, match="unsafe path"):
            safe_extract(bad, tmp_path / "out2")
        assert not (tmp_path / "evil.py").exists()
        assert not (tmp_path / "out2/pkg/ok.py").exists()  # refused before writing anything


def test_symlink_members_are_skipped(tmp_path):
    path = tmp_path / "s.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo("p/link")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
    safe_extract(path, tmp_path / "o")
    assert not (tmp_path / "o/p/link").exists()


def test_verify_sha256(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"abc")
    verify_sha256(f, hashlib.sha256(b"abc").hexdigest())
    with pytest.raises(EvalError, match="sha256 mismatch"):
        verify_sha256(f, "0" * 64)


@pytest.fixture
def index_server(tmp_path):
    """A loopback simple index serving one project with one sdist."""
    archive = _tar(tmp_path / "Demo-1.0.tar.gz", {"Demo-1.0/demo/core.py": b"def f():\n  pass\n"})
    blob = archive.read_bytes()
    state = {"sha": hashlib.sha256(blob).hexdigest(), "hits": []}

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            state["hits"].append(self.path)
            port = self.server.server_address[1]
            if self.path == "/simple/demo/":
                assert self.headers["Accept"] == "application/vnd.pypi.simple.v1+json"
                body = json.dumps(
                    {
                        "files": [
                            {
                                "filename": "Demo-1.0.tar.gz",
                                "url": f"http://127.0.0.1:{port}/files/Demo-1.0.tar.gz",
                                "hashes": {"sha256": state["sha"]},
                            }
                        ]
                    }
                ).encode()
            elif self.path == "/files/Demo-1.0.tar.gz":
                body = blob
            else:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/simple", state
    srv.shutdown()
    srv.server_close()


def _sources(tmp_path):
    p = tmp_path / "sources.json"
    p.write_text(
        json.dumps(
            {
                "demo/demo@1.0": {
                    "pypi": "Demo==1.0",
                    "sdist_file": "Demo-1.0.tar.gz",
                    "sdist_prefix": "Demo-1.0",
                }
            }
        )
    )
    return p


def test_release_tree_downloaded_once_and_reused(tmp_path, index_server):
    url, state = index_server
    cache = tmp_path / "cache"
    trees = ReleaseTrees(_sources(tmp_path), cache, SimpleIndex(url))
    tree = trees.tree_for("demo/demo@1.0")
    assert (tree.path / "demo/core.py").exists()
    assert tree.key == f"sdist-{state['sha'][:16]}"
    assert state["hits"].count("/files/Demo-1.0.tar.gz") == 1
    # A fresh process-equivalent (new ReleaseTrees) reuses the verified extraction offline.
    again = ReleaseTrees(_sources(tmp_path), cache, SimpleIndex(url)).tree_for("demo/demo@1.0")
    assert again == tree
    assert len(state["hits"]) == 2  # one index lookup + one download, nothing more


def test_release_tree_hash_mismatch_is_refused(tmp_path, index_server):
    url, state = index_server
    state["sha"] = "f" * 64
    trees = ReleaseTrees(_sources(tmp_path), tmp_path / "cache", SimpleIndex(url))
    with pytest.raises(EvalError, match="sha256 mismatch"):
        trees.tree_for("demo/demo@1.0")
    assert not (tmp_path / "cache/archives/Demo-1.0.tar.gz").exists()
    with pytest.raises(EvalError, match="no PyPI release mapped"):
        trees.tree_for("other/other@1")


def test_concurrent_runs_share_one_cache(tmp_path, index_server):
    """Two evaluation runs fetching the same release into one cache both get the complete
    tree: downloads and extractions go to private names and are renamed into place."""
    url, _ = index_server
    cache = tmp_path / "cache"
    sources = _sources(tmp_path)
    results, errors = [], []

    def fetch():
        try:
            results.append(ReleaseTrees(sources, cache, SimpleIndex(url)).tree_for("demo/demo@1.0"))
        except Exception as exc:  # recorded, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=fetch) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({r.key for r in results}) == 1
    assert (results[0].path / "demo/core.py").read_text() == "def f():\n  pass\n"
    leftovers = [p.name for p in (cache / "trees").iterdir() if p.name != "Demo-1.0.tar.gz"]
    assert leftovers == []
    assert [p.name for p in (cache / "archives").iterdir()] == ["Demo-1.0.tar.gz"]


def test_partial_tree_from_a_killed_run_is_replaced(tmp_path, index_server):
    url, _ = index_server
    cache = tmp_path / "cache"
    partial = cache / "trees" / "Demo-1.0.tar.gz" / "Demo-1.0"
    partial.mkdir(parents=True)
    (partial / "half_written.py").write_text("def g(")
    tree = ReleaseTrees(_sources(tmp_path), cache, SimpleIndex(url)).tree_for("demo/demo@1.0")
    assert (tree.path / "demo/core.py").exists()
    assert not (tree.path / "half_written.py").exists()
