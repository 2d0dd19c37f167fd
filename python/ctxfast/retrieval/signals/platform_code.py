"""``platform_code``: when the task's goal sentence names an operating system (``on
Windows``, ``macOS``, ``FreeBSD``), the files whose code is conditional on it
(``#[cfg(windows)]``, ``//go:build windows``, ``sys.platform == "win32"``), by how many of
their gate lines name it (``RepoIndex.platform_gates``).

Why: a bug "on Windows" lives in code that runs only there, which shares the word with the
task once per gate whatever the rest of the file says. Only the goal sentence counts: an
issue's body names the reporter's platform in its environment report (``Platform:
macOS-12.4-arm64``) or in an example (``skipif("sys.platform == 'win32'")``) whatever the bug
is about.

Measured on the 200-task languages dev set: Rust file Acc@5 .82 → .84, nothing else moves;
no SWE-bench Lite task names a platform in its goal sentence (read from the whole task, 50 of
300 do and two lost file Acc@1). PHP's and Ruby's gates (``PHP_OS``, ``RUBY_PLATFORM``,
``Gem.win_platform?``) and the spellings ``win``, ``mswin``, ``mingw``, ``cygwin``, added
later: on the 41 PHP/Ruby dev tasks the 8k window covered one more (a Windows-only cURL
bug whose file tests ``PHP_OS`` against ``'WIN'``), the corpus's and Lite's windows byte for
byte the same.

Settings (``FileSignals``): ``platform_code`` switches it; ``weights["platform_code"]``.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.signals.base import FileSignal, SignalContext

#: An operating system named in prose (``on Windows``, ``macOS``, ``FreeBSD``): the
#: platform keys of ``RepoIndex.platform_gates``.
_TASK_PLATFORMS = {
    "windows": re.compile(r"\b(?:windows|win32|win64)\b", re.IGNORECASE),
    "macos": re.compile(r"\b(?:macos|mac os|os x|osx|darwin)\b", re.IGNORECASE),
    "linux": re.compile(r"\blinux\b", re.IGNORECASE),
    "freebsd": re.compile(r"\bfreebsd\b", re.IGNORECASE),
    "openbsd": re.compile(r"\bopenbsd\b", re.IGNORECASE),
    "netbsd": re.compile(r"\bnetbsd\b", re.IGNORECASE),
    "android": re.compile(r"\bandroid\b", re.IGNORECASE),
    "wasm": re.compile(r"\b(?:wasm|wasm32|wasi|webassembly)\b", re.IGNORECASE),
}


def platform_scores(index: RepoIndex, goal: str) -> dict[str, float]:
    """Per file, how many of its gate lines name a platform the task's goal sentence
    ``goal`` names (see ``RepoIndex.platform_gates``)."""
    named = [plat for plat, rx in _TASK_PLATFORMS.items() if rx.search(goal)]
    if not named:
        return {}
    gates = index.platform_gates()
    out: dict[str, float] = defaultdict(float)
    for plat in named:
        for f, n in gates.get(plat, {}).items():
            out[f] += n
    return dict(out)


def _measure(ctx: SignalContext) -> dict[str, float]:
    return platform_scores(ctx.index, ctx.tq.query.goal_hint)


SIGNAL = FileSignal("platform_code", "platform_code", _measure)
