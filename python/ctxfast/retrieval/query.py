"""Query construction: task text → a deterministic retrieval query.

No model and no embedding: identifiers, error strings, test ids, file paths and a goal hint
are pulled out with regular expressions (the defaults of :class:`QueryConfig`),
and tracebacks in any of eight formats become ``(path, line)`` frames, because a frame names
the code that failed more precisely than any prose. A link to a line of a file on a code host
(``…/blob/<ref>/<path>#L926``) is a frame too: the reporter pointing at a line is as precise.

Identifier resolution: with a ``name_index`` (the code graph's defined names), candidates that
resolve (the name, or for a dotted name any dotted suffix of it) go to ``identifiers`` and the
rest to ``unresolved_terms`` (a recall input, never silently dropped). Plain prose words that
the snake_case regex also matches (``the``, ``when``) are only kept when they *look like code*
— they contain ``_``, sit inside backticks or a fenced block, or are called (``name(``) —
because as recall terms they would only return noise. Without a ``name_index`` nothing can be
resolved, so the code-like candidates are all returned as ``identifiers``.

Bounded work: ``error`` is clipped to its head and tail (a pasted 1 MB log costs the same as
64 KB), ``task_text`` to ``max_text_chars``, and regexes run per whitespace token or per line
with length caps, so no pathological input can make a backtracking regex quadratic.

Deliberate refinements of the plain rules, each for a mistake it avoids: ``file_paths`` requires the
extension to end the match (``x.json`` is not ``x.js``); a quoted string must not be glued to
letters on either side (so the apostrophes of ``don't … it's`` are not a quote) and is kept
without its quotes; the goal sentence ends at a ``.`` followed by whitespace (so ``foo.bar``
does not end it); error lines are ordered ``Error:``/``Exception:`` first, then ``assert``,
then ``Traceback``, the error log's last lines first (the final exception is the specific one);
and, as an extension, a qualified exception line without those markers
(``django.core.exceptions.ObjectDoesNotExist: x``) ranks with the ``Error:`` lines. Dotted
candidates that are file names (``memstore.py``) are left to ``file_paths``. A traceback
frame line gives identifiers only its function name: its ``File "…", line N`` and its path are
where the code ran, not names of it (:func:`without_frame_paths`).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache, lru_cache

from ctxfast.bm25 import tokenize_code
from ctxfast.errors import InvalidArgumentError
from ctxfast.text import CALL, CAPITALISED_IDENTIFIER_RE, CODE_SPAN, IDENTIFIER

SPEC_DOTTED_RE = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+"
SPEC_SNAKE_RE = r"\b[a-z_][a-z0-9_]*\b"
SPEC_TEST_RE = r"\S+\.py::\S+|\S+::\S+::\S+"
SPEC_FILE_PATH_RE = r"[\w\-/]+\.(py|js|ts|go|rs|java|c|h|toml|json|yaml|yml)(?!\w)"
SPEC_QUOTED_RE = r"""(?<![A-Za-z0-9])(?:'([^'\n]+)'|"([^"\n]+)")(?![A-Za-z0-9])"""
SPEC_ERROR_LINE_MARKERS = ("Error:", "Exception:", "assert", "Traceback")
SPEC_GOAL_VERBS = ("fix", "implement", "add", "change", "when", "given", "please", "we need to")


@dataclass(frozen=True)
class QueryConfig:
    """How the task's text is parsed into a query (``RetrievalConfig.query``): the patterns
    that find identifiers, error lines, test names and paths, how many of each are kept,
    and the bounds that keep parsing cheap on a huge pasted log. The defaults are the
    parser's design values; none was tuned on benchmarks."""

    #: A dotted name (``pkg.module.func``).
    dotted_re: str = SPEC_DOTTED_RE
    #: A capitalised identifier (``ParseError``, ``HTTPServer``).
    camel_re: str = CAPITALISED_IDENTIFIER_RE
    #: A snake_case identifier (``parse_args``).
    snake_re: str = SPEC_SNAKE_RE
    #: A test's name (``test_parse_empty``).
    test_re: str = SPEC_TEST_RE
    #: A file path (``src/app/cli.py``).
    file_path_re: str = SPEC_FILE_PATH_RE
    #: A quoted string (an error message the task quotes).
    quoted_re: str = SPEC_QUOTED_RE
    #: What makes a line an error line (``Error:``, ``Exception:``, ``assert``,
    #: ``Traceback``), best first: error lines rank by the first marker they hold.
    error_line_markers: tuple[str, ...] = SPEC_ERROR_LINE_MARKERS
    #: The request verbs ("fix", "add", ...) that mark the goal sentence and are stripped
    #: from it: they say what to do, not where.
    goal_verbs: tuple[str, ...] = SPEC_GOAL_VERBS
    #: Where the goal sentence ends (a full stop before a space, or a line break).
    goal_sentence_end_re: str = r"\.(?=\s|$)|\n"
    #: A qualified exception line (``django.core.exceptions.ObjectDoesNotExist: x``) ranks
    #: with ``Error:`` lines although it holds none of the markers above.
    exception_line_re: str = r"^(?:[A-Za-z_]\w*\.)+[A-Z]\w*: \S"
    #: Identifiers kept that the repository defines (32).
    max_identifiers: int = 32
    #: Identifiers kept that it does not define (32): still searched as words.
    max_unresolved: int = 32
    #: Error lines kept (8).
    max_error_strings: int = 8
    #: Test names kept (8).
    max_test_names: int = 8
    #: File paths kept (8).
    max_file_paths: int = 8
    #: Each kept item is cut to this many characters (120).
    max_item_chars: int = 120
    #: The goal sentence is cut to this many characters (200).
    max_goal_chars: int = 200
    #: Traceback frames kept (64, the innermost ones matter most and come last).
    max_frames: int = 64
    #: The task's text is read up to this many characters (200,000).
    max_text_chars: int = 200_000
    #: A long error output keeps its first this many characters (16 KB) ...
    error_head_chars: int = 16_384
    #: ... and its last this many (48 KB), where a failure's cause is reported.
    error_tail_chars: int = 49_152
    #: Whitespace-separated tokens longer than this (256 characters) are skipped: no name is
    #: that long, a base64 blob is.
    max_token_chars: int = 256
    #: Lines are cut to this many characters (2,000) before the patterns run on them.
    max_line_chars: int = 2_000


DEFAULT_CONFIG = QueryConfig()


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame: ``path`` as printed (not yet mapped to the repo), 1-based ``line``."""

    path: str
    line: int
    func: str | None
    lang: str


@dataclass(frozen=True)
class Query:
    """The retrieval query, plus ``unresolved_terms`` and traceback ``frames``."""

    identifiers: list[str]
    error_strings: list[str]
    test_names: list[str]
    file_paths: list[str]
    goal_hint: str
    unresolved_terms: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)

    def recall_terms(self) -> list[str]:
        """The lexical-recall terms: identifiers, unresolved names, error strings, paths."""
        return _dedup(
            [*self.identifiers, *self.unresolved_terms, *self.error_strings, *self.file_paths]
        )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@cache
def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _dedup(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _take(items: Iterable[str], cap: int, max_chars: int) -> list[str]:
    out: list[str] = []
    for it in _dedup(s[:max_chars] for s in items if s):
        if len(out) >= cap:
            break
        if it not in out:
            out.append(it)
    return out


def _clip_error(text: str, cfg: QueryConfig) -> str:
    if len(text) <= cfg.error_head_chars + cfg.error_tail_chars:
        return text
    tail = text[len(text) - cfg.error_tail_chars :] if cfg.error_tail_chars else ""
    return text[: cfg.error_head_chars] + "\n" + tail


def _lines(text: str, cfg: QueryConfig) -> list[str]:
    return [ln[: cfg.max_line_chars] for ln in text.splitlines()]


def _tokens(text: str, cfg: QueryConfig) -> list[str]:
    return [t for t in text.split() if len(t) <= cfg.max_token_chars]


@lru_cache(maxsize=1 << 16)
def _matches(pattern: str, token: str) -> tuple[str, ...]:
    """The matches of ``pattern`` in one whitespace-free token, in order. Remembered: the
    identifier, test-id and path patterns each run over every token of a task, and a task's
    tokens are mostly the same words as every other task's."""
    return tuple(m.group(0) for m in _rx(pattern).finditer(token))


# --- identifiers ---------------------------------------------------------------------------

_FILE_NAME = re.compile(
    r"\.(?:py|pyi|pyx|js|jsx|mjs|ts|tsx|go|rs|java|kt|scala|swift|c|h|cc|cpp|hpp|cs|rb|php"
    r"|toml|json|yaml|yml|cfg|ini|txt|md|rst|html|css|sh|lock|xml|csv)$"
)


def _code_words(text: str) -> set[str]:
    """Words that appear in code context: backtick spans, fenced blocks, calls."""
    words: set[str] = set()
    for m in CODE_SPAN.finditer(text):
        words.update(IDENTIFIER.findall(m.group(0)))
    words.update(m.group(1) for m in CALL.finditer(text))
    return words


def _looks_like_code(name: str, kind: str, code_words: set[str]) -> bool:
    if name in code_words:
        return True
    if kind == "dotted":
        return any(len(seg) > 1 for seg in name.split("."))
    if kind == "camel":
        return any(c.isupper() or c.isdigit() or c == "_" for c in name[1:])
    return "_" in name.strip("_")


def _candidates(text: str, cfg: QueryConfig) -> list[tuple[str, str]]:
    """(name, kind) in class priority: dotted, CamelCase, snake_case; each by position."""
    toks = _tokens(text, cfg)
    out: list[tuple[str, str]] = []
    for kind, pattern in (
        ("dotted", cfg.dotted_re),
        ("camel", cfg.camel_re),
        ("snake", cfg.snake_re),
    ):
        out += [(name, kind) for tok in toks for name in _matches(pattern, tok)]
    # A dotted "name" that is a file name (memstore.py) belongs to file_paths, not here.
    out = [(n, k) for n, k in out if not (k == "dotted" and _FILE_NAME.search(n))]
    return out


def _resolves(name: str, name_index: Container[str]) -> bool:
    if name in name_index:
        return True
    parts = name.split(".")
    return any(".".join(parts[i:]) in name_index for i in range(1, len(parts)))


def _identifiers(
    texts: list[str], cfg: QueryConfig, name_index: Container[str] | None
) -> tuple[list[str], list[str]]:
    resolved: list[str] = []
    unresolved: list[str] = []
    # A name recurs in a task (prose words above all): each is looked up once.
    resolves: dict[str, bool] = {}
    for text in texts:
        code_words = _code_words(text)
        for name, kind in _candidates(text, cfg):
            if name_index is not None and name not in resolves:
                resolves[name] = _resolves(name, name_index)
            if name_index is not None and resolves[name]:
                resolved.append(name)
            elif _looks_like_code(name, kind, code_words):
                (unresolved if name_index is not None else resolved).append(name)
    return (
        _take(resolved, cfg.max_identifiers, cfg.max_item_chars),
        _take(unresolved, cfg.max_unresolved, cfg.max_item_chars),
    )


# --- error strings, tests, paths, goal -----------------------------------------------------


def _error_strings(task: str, error: str, cfg: QueryConfig) -> list[str]:
    ranked: list[tuple[int, int, str]] = []
    order = 0
    for source_lines in (list(reversed(_lines(error, cfg))), _lines(task, cfg)):
        for ln in source_lines:
            for rank, marker in enumerate(cfg.error_line_markers):
                if marker in ln:
                    ranked.append((rank, order, ln.strip()))
                    order += 1
                    break
            else:
                if cfg.exception_line_re and _rx(cfg.exception_line_re).match(ln):
                    ranked.append((0, order, ln.strip()))
                    order += 1
    ranked.sort()
    quoted: list[str] = []
    rx = _rx(cfg.quoted_re)
    for text in (error, task):
        for ln in _lines(text, cfg):
            for m in rx.finditer(ln):
                quoted.append((m.group(1) or m.group(2) or "").strip())
    items = [s for _, _, s in ranked] + quoted
    return _take(items, cfg.max_error_strings, cfg.max_item_chars)


_EDGE_PUNCT = "`'\",;:()<>"


def _clean_test_id(tok: str) -> str:
    tok = tok.strip(_EDGE_PUNCT).rstrip(".")
    if tok.endswith("]") and "[" not in tok:
        tok = tok.rstrip("]")
    return tok.strip(_EDGE_PUNCT)


def _test_names(task: str, error: str, test: str | None, cfg: QueryConfig) -> list[str]:
    found = [test.strip()] if test else []
    for text in (task, error):
        found += [
            _clean_test_id(m) for tok in _tokens(text, cfg) for m in _matches(cfg.test_re, tok)
        ]
    return _take(found, cfg.max_test_names, cfg.max_item_chars)


def _file_paths(task: str, cfg: QueryConfig) -> list[str]:
    found: list[str] = []
    for tok in _tokens(task, cfg):
        for p in _matches(cfg.file_path_re, tok):
            while p.startswith("./"):
                p = p[2:]
            found.append(p)
    return _take(found, cfg.max_file_paths, cfg.max_item_chars)


def goal_hint(task_text: str, config: QueryConfig | None = None) -> str:
    """The first sentence of ``task_text`` with leading request verbs stripped."""
    cfg = config or DEFAULT_CONFIG
    text = task_text[: cfg.max_text_chars].lstrip(" \t\r\n#>*-")
    m = _rx(cfg.goal_sentence_end_re).search(text)
    sentence = (text[: m.start()] if m else text).strip()
    return _without_leading_verbs(sentence, cfg.goal_verbs).strip()[: cfg.max_goal_chars]


def _without_leading_verbs(sentence: str, goal_verbs: tuple[str, ...]) -> str:
    """``sentence`` without the run of request verbs it opens with (``fix: add ...``), each
    with the spaces and ``:,-`` after it, longest verb first. One pass over the run: cutting
    one verb at a time copied the rest of the sentence once per verb, quadratic in a
    sentence of repeated verbs."""
    verbs = "|".join(re.escape(v) for v in sorted(goal_verbs, key=len, reverse=True))
    run = _rx(r"^(?:(?:" + verbs + r")\b[\s:,\-]*+)*+", re.IGNORECASE).match(sentence)
    return sentence[run.end() :] if run else sentence


# --- traceback frames ----------------------------------------------------------------------

_PY_FILE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')
_IPY8_FILE = re.compile(r"^\s*File (?P<path>[^\s\"]+?):(?P<line>\d+)(?:, in (?P<func>[\w.<>]+))?")
_PYTEST = re.compile(r"^(?P<path>[^\s:\"]+\.py):(?P<line>\d+):(?:\s|$)")
_IPY_OLD = re.compile(r"^(?P<path>\S+\.py) in (?P<func>[\w.<>]+)\(")
_IPY_ARROW = re.compile(r"^-+>\s*(?P<line>\d+)")
_JAVA = re.compile(
    r"^\s*at (?P<func>[\w$.<>/]+)\((?P<file>[\w$]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)"
)
_JS = re.compile(
    r"^\s*at (?:(?P<func>[^()]+?) \()?(?:file://)?(?P<path>(?:[A-Za-z]:)?[^\s():]+)"
    r":(?P<line>\d+):\d+\)?\s*$"
)
_GO = re.compile(r"^\s*(?P<path>(?:[A-Za-z]:)?[^\s:()]+\.go):(?P<line>\d+)\b")
#: The function line above a Go frame: ``pkg.(*T).Method(0x1, ...)``. The lookahead checks
#: the line ends with ``)`` once, up front: written after the name, as ``\(.*\)$``, it
#: rescanned the rest of the line from every ``(`` of a line that did not.
_GO_FUNC = re.compile(r"^(?=.*\)$)(?P<func>[\w./*()\[\]-]+)\(")
#: A Rust location ``src/lib.rs:12:5`` anywhere in a line. The lookbehind starts a path only
#: where a run of path characters starts (the leftmost match always did): a search tried
#: every position inside a run, and each rescanned the run to its end.
_RUST = re.compile(r"(?<![^\s:'\"(),])(?P<path>[^\s:'\"(),]+\.rs):(?P<line>\d+):\d+")
_RUST_FUNC = re.compile(r"^\s*\d+: (?P<func>\S+)")
#: A Ruby backtrace line, anywhere in a line (the first one follows the error message, the
#: rest start with ``from``; RSpec prefixes ``# ``): ``/gems/x/lib/x.rb:12:in `block in run'``
#: (Ruby 3.4 quotes ``'X#run'``). The function is the text after the last `` in ``.
_RUBY = re.compile(
    r"(?<![^\s#(])(?P<path>[^\s:'\"`()#]+\.(?:rb|rake)):(?P<line>\d+)"
    r":in [`'](?P<func>[^'`]{1,200})['`]"
)
#: A PHP location: a stack trace's ``#0 /app/src/A.php(12): B->c()`` (the name is what that
#: line calls, not the function holding it: not kept), an error's ``in /app/src/A.php:12``
#: or ``… in /app/src/A.php on line 12``.
_PHP = re.compile(
    r"(?<![^\s#(\[:'\"])(?P<path>[^\s:'\"()\[\]]+\.php)"
    r"(?:\((?P<l1>\d+)\)|:(?P<l2>\d+)\b| on line (?P<l3>\d+))"
)
#: A .NET frame: ``at Ns.Type.Method(int x) in C:\\src\\Type.cs:line 42``.
_CSHARP = re.compile(
    r"^\s*at (?P<func>[\w.$<>`+\[\],]+)\([^()]*\) in (?P<path>[^\n]+?\.cs):line (?P<line>\d+)"
)
#: A link to a line of a file in a code host's web view, anywhere in a line: GitHub's and
#: Gitea's ``…/blob/<ref>/<path>#L12`` (or ``#L12-L20``), GitLab's ``…/-/blob/<ref>/<path>#L12``.
#: The path after the ref is relative to the repository root; a ref with a slash in it
#: leaves a leading component that :meth:`RepoIndex.resolve_path`'s suffix match drops.
_LINK = re.compile(r"/blob/[^/\s]+/(?P<path>[^\s#?()\[\]<>\"'`]+)(?:\?[^\s#]*)?#L(?P<line>\d+)")


def _java_path(func: str, file: str) -> str:
    cls = func.rsplit(".", 1)[0] if "." in func else ""
    pkg = cls.rsplit(".", 1)[0] if "." in cls else ""
    return f"{pkg.replace('.', '/')}/{file}" if pkg else file


def _frames_in(text: str, cfg: QueryConfig) -> list[Frame]:
    lines = _lines(text, cfg)
    frames: list[Frame] = []
    for i, ln in enumerate(lines):
        prev = lines[i - 1] if i else ""
        if m := _PY_FILE.match(ln) or _IPY8_FILE.match(ln):
            frames.append(Frame(m["path"], int(m["line"]), m["func"], "python"))
        elif m := _PYTEST.match(ln):
            frames.append(Frame(m["path"], int(m["line"]), None, "python"))
        elif m := _IPY_OLD.match(ln):
            for nxt in lines[i + 1 : i + 40]:
                if _IPY_OLD.match(nxt):
                    break
                if a := _IPY_ARROW.match(nxt):
                    frames.append(Frame(m["path"], int(a["line"]), m["func"], "python"))
                    break
        elif m := _JAVA.match(ln):
            path = _java_path(m["func"], m["file"])
            frames.append(Frame(path, int(m["line"]), m["func"], "java"))
        elif m := _RUST.search(ln):
            f = _RUST_FUNC.match(prev)
            frames.append(Frame(m["path"], int(m["line"]), f["func"] if f else None, "rust"))
        elif m := _JS.match(ln):
            func = m["func"].strip() if m["func"] else None
            frames.append(Frame(m["path"], int(m["line"]), func, "javascript"))
        elif m := _GO.match(ln):
            f = _GO_FUNC.match(prev.strip())
            frames.append(Frame(m["path"], int(m["line"]), f["func"] if f else None, "go"))
        elif m := _RUBY.search(ln):
            func = m["func"].rsplit(" in ", 1)[-1].replace("#", ".")
            frames.append(Frame(m["path"], int(m["line"]), func, "ruby"))
        elif m := _CSHARP.match(ln):
            frames.append(Frame(m["path"], int(m["line"]), m["func"], "csharp"))
        elif m := _PHP.search(ln):
            line = m["l1"] or m["l2"] or m["l3"]
            frames.append(Frame(m["path"], int(line), None, "php"))
        frames.extend(Frame(m["path"], int(m["line"]), None, "link") for m in _LINK.finditer(ln))
    return frames


#: The other frame formats (in the order :func:`_frames_in` tries them) and their path group.
_FRAME_PATHS = (
    (_PYTEST, "path"),
    (_IPY_OLD, "path"),
    (_JAVA, "file"),
    (_RUST, "path"),
    (_JS, "path"),
    (_GO, "path"),
    (_RUBY, "path"),
    (_CSHARP, "path"),
    (_PHP, "path"),
)


#: The frame formats found anywhere in a line (the others start it).
_ANYWHERE = (_RUST, _RUBY, _PHP)


def _frame_free(line: str) -> str:
    """``line`` without what a traceback frame on it says about where the code ran: a Python
    frame's ``File "…", line N`` (its ``File`` is boilerplate, not the class ``File``), any
    other frame's path. Its function name and anything else on the line stay."""
    if m := _PY_FILE.match(line) or _IPY8_FILE.match(line):
        return line[: m.start()] + line[m.end("line") :]
    for rx, group in _FRAME_PATHS:
        if m := rx.search(line) if rx in _ANYWHERE else rx.match(line):
            return line[: m.start(group)] + line[m.end(group) :]
    return line


def without_frame_paths(text: str, config: QueryConfig | None = None) -> str:
    """``text`` with every traceback frame line cut to what names code (:func:`_frame_free`),
    for identifier extraction: a frame's path is the user's home, a virtualenv's
    site-packages or their own script as often as a repository file, and its components
    (``/Users/me/FastAPI/nan.py``) and the ``File`` keyword matched classes of the repository
    (``FastAPI``, ``File``, ``UploadFile``). The path itself still reaches retrieval as the
    frame's (:attr:`Query.frames`), which maps a repository file and drops any other. Lines
    over ``max_line_chars`` are left as they are (no frame is that long)."""
    cfg = config or DEFAULT_CONFIG
    lines = text.split("\n")
    return "\n".join(ln if len(ln) > cfg.max_line_chars else _frame_free(ln) for ln in lines)


def parse_frames(text: str, config: QueryConfig | None = None) -> list[Frame]:
    """Stack frames of Python (incl. pytest, IPython/Jupyter), JS/Node, Go, Rust, Java, Ruby,
    PHP and .NET traces, and links to a line, in ``text``, in order of appearance,
    duplicates removed, at most ``max_frames``."""
    cfg = config or DEFAULT_CONFIG
    out = list(dict.fromkeys(_frames_in(_clip_error(text, cfg), cfg)))
    return out[: cfg.max_frames]


def innermost_depths(frames: Sequence[Frame]) -> list[int]:
    """Each frame's distance from the innermost frame of its trace (0 for the innermost):
    Python prints the innermost frame last; Java, JS, Go, Rust, Ruby, PHP and .NET print it
    first. A linked
    line is no trace's frame: each is where the reporter points, depth 0."""
    depths = []
    for i, f in enumerate(frames):
        if f.lang == "link":
            depths.append(0)
            continue
        rest = frames[i + 1 :] if f.lang == "python" else frames[:i]
        depths.append(sum(1 for g in rest if g.lang == f.lang))
    return depths


# --- the entry point -----------------------------------------------------------------------


def build_query(
    task_text: str,
    error: str | None = None,
    test: str | None = None,
    config: QueryConfig | None = None,
    *,
    name_index: Container[str] | None = None,
) -> Query:
    """Build the retrieval query from the task (``task_text``), the latest error/traceback
    (``error``) and the failing test id (``test``). Pure and deterministic."""
    for name, value in (("task_text", task_text), ("error", error), ("test", test)):
        if value is not None and not isinstance(value, str):
            raise InvalidArgumentError(f"{name} must be str, not {type(value).__name__}")
    cfg = config or DEFAULT_CONFIG
    task = task_text[: cfg.max_text_chars]
    err = _clip_error(error or "", cfg)
    texts = [without_frame_paths(t, cfg) for t in (task, err)]
    identifiers, unresolved = _identifiers(texts, cfg, name_index)
    frames = list(dict.fromkeys([*_frames_in(err, cfg), *_frames_in(task, cfg)]))
    return Query(
        identifiers=identifiers,
        error_strings=_error_strings(task, err, cfg),
        test_names=_test_names(task, err, test, cfg),
        file_paths=_file_paths(task, cfg),
        goal_hint=goal_hint(task, cfg),
        unresolved_terms=unresolved,
        frames=frames[: cfg.max_frames],
    )


# --- BM25 query terms -------------------------------------------------------------------


def query_terms(text: str, stopwords: Container[str]) -> list[str]:
    """The task as BM25 query terms: the code tokenizer's tokens without ``stopwords``.

    Documents keep every token; only the query drops them. An issue's prose repeats "the",
    "to", "a" dozens of times and each repetition adds to the score, so files and
    definitions full of prose (a quick-start wizard's prompts, long docstrings) outranked
    the code an issue is about."""
    return [t for t in tokenize_code(text) if t not in stopwords]


__all__ = [
    "DEFAULT_CONFIG",
    "SPEC_DOTTED_RE",
    "SPEC_ERROR_LINE_MARKERS",
    "SPEC_FILE_PATH_RE",
    "SPEC_GOAL_VERBS",
    "SPEC_QUOTED_RE",
    "SPEC_SNAKE_RE",
    "SPEC_TEST_RE",
    "Frame",
    "Query",
    "QueryConfig",
    "build_query",
    "goal_hint",
    "innermost_depths",
    "parse_frames",
    "query_terms",
    "without_frame_paths",
]
