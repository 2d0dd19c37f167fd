//! Lexical recall in-process, with ripgrep's own crates.
//!
//! The reference invocation is `rg --no-heading --line-number --color never -F '<term>' ROOT
//! --glob '!vendor/**' … -g '*.py' | head -40`, once per term. This module does the same search
//! for all terms in one walk:
//!
//! * the walk is `ignore`'s (`.gitignore`/`.ignore` honoured inside git repositories, hidden
//!   files skipped, symlinks not followed — ripgrep's defaults), the language globs are
//!   `ignore` overrides exactly like `-g '*.py'`;
//! * vendored directories are pruned **at any depth** ([`crate::vendored::VENDORED_DIRS`], the
//!   list the indexer prunes too) — stricter than that invocation's root-anchored
//!   globs on purpose, because `frontend/node_modules/` is as vendored as `node_modules/`;
//!   `build` is pruned only at the root (as the invocation's glob does), since nested `build`
//!   packages are real source;
//! * matching is fixed-string (`grep-regex` with `fixed_strings`): a term is bytes, never a
//!   pattern, and nothing is ever executed;
//! * binary files are detected like ripgrep (`quit` at a NUL byte); non-UTF-8 text is searched
//!   as bytes and reported with lossy UTF-8.
//!
//! Determinism: hits are ordered by (path, line), and each term keeps its first `max_hits`
//! hits in that order; `truncated` is set when at least one more exists (the excess is not
//! stored — a cap is a cap). Files are searched in sorted chunks so a saturated term stops
//! costing anything.
//!
//! [`Corpus`] is the same search over a walk done once and held in memory: a caller that
//! searches one repository state many times (retrieval, per query) pays the walk and the
//! reads once. Its hits are identical to [`search`] over the same files — the searcher and
//! matcher are the same; only where the bytes come from differs (see [`Corpus::search`]).
//! It also holds a [`TrigramFilter`] per in-memory file, so that a search skips the files
//! that cannot contain any term still short of its cap: most terms of a query saturate in the
//! first files, and the few rare ones left then cost only the files that may hold them.

use crate::error::{CoreError, CoreResult};
use crate::vendored::VENDORED_DIRS;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Bytes;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Default in-memory budget of a [`Corpus`]: files past it are searched from disk.
pub const DEFAULT_CORPUS_MAX_BYTES: u64 = 512 << 20;

/// Language name → file globs. Names are those of the manifest (lowercase).
pub const LANGUAGE_GLOBS: &[(&str, &[&str])] = &[
    ("python", &["*.py", "*.pyi"]),
    ("javascript", &["*.js", "*.jsx", "*.mjs", "*.cjs"]),
    ("typescript", &["*.ts", "*.tsx", "*.mts", "*.cts"]),
    ("go", &["*.go"]),
    ("rust", &["*.rs"]),
    ("java", &["*.java"]),
    ("kotlin", &["*.kt", "*.kts"]),
    ("c", &["*.c", "*.h"]),
    (
        "cpp",
        &["*.cc", "*.cpp", "*.cxx", "*.hh", "*.hpp", "*.hxx", "*.h"],
    ),
    ("csharp", &["*.cs"]),
    ("ruby", &["*.rb", "*.rake"]),
    ("php", &["*.php"]),
    ("swift", &["*.swift"]),
    ("scala", &["*.scala", "*.sc"]),
    ("shell", &["*.sh", "*.bash"]),
];

/// Directory names pruned only directly under the root.
pub const EXCLUDED_DIRS_ROOT: &[&str] = &["build"];

/// The search request.
#[derive(Clone, Debug)]
pub struct LexicalRequest {
    pub root: PathBuf,
    pub terms: Vec<String>,
    /// Manifest languages; `None` searches every language of [`LANGUAGE_GLOBS`].
    pub languages: Option<Vec<String>>,
    /// Extra include globs (ripgrep `-g` syntax), added to the language globs.
    pub extra_globs: Vec<String>,
    pub max_hits: usize,
    /// Line text longer than this many characters is cut (on a char boundary).
    pub max_line_chars: usize,
    pub exclude_any_depth: Vec<String>,
    pub exclude_root: Vec<String>,
    /// Files (POSIX paths relative to the root) left out of the walk: the index's
    /// machine-made files, whose lines would otherwise take a term's hits.
    pub exclude_files: Vec<String>,
}

impl LexicalRequest {
    pub fn new(root: impl Into<PathBuf>, terms: Vec<String>) -> Self {
        LexicalRequest {
            root: root.into(),
            terms,
            languages: None,
            extra_globs: Vec::new(),
            max_hits: 40,
            max_line_chars: 500,
            exclude_any_depth: VENDORED_DIRS.iter().map(ToString::to_string).collect(),
            exclude_root: EXCLUDED_DIRS_ROOT.iter().map(ToString::to_string).collect(),
            exclude_files: Vec::new(),
        }
    }
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// POSIX path relative to the root.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    pub text: String,
}

/// The hits of one term.
#[derive(Clone, Debug, Default)]
pub struct TermHits {
    pub term: String,
    pub hits: Vec<Hit>,
    pub truncated: bool,
}

/// The whole answer; `terms` follows the request order with duplicates removed.
#[derive(Clone, Debug, Default)]
pub struct LexicalResult {
    pub terms: Vec<TermHits>,
    /// Terms that cannot match a single line (empty, or containing a line break), with why.
    pub skipped_terms: Vec<(String, String)>,
    /// Requested languages with no glob mapping.
    pub unknown_languages: Vec<String>,
    pub files_searched: usize,
    /// Files that could not be read (permission, vanished), relative POSIX paths.
    pub unreadable: Vec<String>,
}

/// Include globs for `languages` plus the unknown language names.
pub fn globs_for_languages(languages: Option<&[String]>) -> (Vec<String>, Vec<String>) {
    let mut globs: Vec<String> = Vec::new();
    let mut unknown = Vec::new();
    let mut push = |gs: &[&str]| {
        for g in gs {
            if !globs.iter().any(|x| x == g) {
                globs.push(g.to_string());
            }
        }
    };
    match languages {
        None => LANGUAGE_GLOBS.iter().for_each(|(_, gs)| push(gs)),
        Some(langs) => {
            for lang in langs {
                let key = lang.to_ascii_lowercase();
                match LANGUAGE_GLOBS.iter().find(|(name, _)| *name == key) {
                    Some((_, gs)) => push(gs),
                    None => unknown.push(lang.clone()),
                }
            }
        }
    }
    (globs, unknown)
}

fn rel_posix(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn cap_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

/// Where the walk goes: the root, the include globs, the pruned directory names and the
/// files left out.
struct WalkSpec<'a> {
    root: &'a Path,
    globs: &'a [String],
    exclude_any_depth: &'a [String],
    exclude_root: &'a [String],
    exclude_files: &'a [String],
}

/// Lists the files to search, sorted by relative POSIX path.
fn collect_files(spec: &WalkSpec<'_>) -> CoreResult<Vec<(String, PathBuf)>> {
    let globs = spec.globs;
    let mut ob = OverrideBuilder::new(spec.root);
    for g in globs {
        ob.add(g)
            .map_err(|e| CoreError::InvalidArgument(format!("bad glob {g:?}: {e}")))?;
    }
    let overrides = ob
        .build()
        .map_err(|e| CoreError::InvalidArgument(format!("bad globs: {e}")))?;
    let any_depth = spec.exclude_any_depth.to_vec();
    let root_only = spec.exclude_root.to_vec();
    let mut wb = WalkBuilder::new(spec.root);
    wb.overrides(overrides).filter_entry(move |e| {
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if !is_dir || e.depth() == 0 {
            return true;
        }
        let name = e.file_name().to_string_lossy();
        !(any_depth.iter().any(|x| *x == name)
            || (e.depth() == 1 && root_only.iter().any(|x| *x == name)))
    });
    let found: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let root = spec.root.to_path_buf();
    wb.build_parallel().run(|| {
        let found = &found;
        let root = root.clone();
        Box::new(move |entry| {
            if let Ok(e) = entry {
                if e.file_type().is_some_and(|t| t.is_file()) {
                    let rel = rel_posix(&root, e.path());
                    found.lock().expect("walk lock").push((rel, e.into_path()));
                }
            }
            WalkState::Continue
        })
    });
    let mut files = found.into_inner().expect("walk lock");
    if !spec.exclude_files.is_empty() {
        let left_out: std::collections::HashSet<&str> =
            spec.exclude_files.iter().map(String::as_str).collect();
        files.retain(|(rel, _)| !left_out.contains(rel.as_str()));
    }
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// Per file: for each active term (by position in `active`), its first hits (at most `cap`).
type FileHits = Result<Vec<Vec<(u64, String)>>, ()>;

/// The per-chunk search state shared (read-only) by all worker threads, for the files the
/// searcher reads (on disk, or with a NUL or a byte-order mark). It depends only on the
/// active terms, so consecutive chunks reuse it until a term saturates (compiling the
/// matcher per chunk cost more than searching an in-memory chunk).
struct ChunkMatcher {
    matcher: grep_regex::RegexMatcher,
    finders: Vec<memchr::memmem::Finder<'static>>,
}

impl ChunkMatcher {
    fn new(active: &[&str]) -> CoreResult<Self> {
        let matcher = RegexMatcherBuilder::new()
            .fixed_strings(true)
            .line_terminator(Some(b'\n'))
            .build_literals(active)
            .map_err(|e| CoreError::InvalidArgument(format!("cannot build matcher: {e}")))?;
        let finders = active
            .iter()
            .map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned())
            .collect();
        Ok(ChunkMatcher { matcher, finders })
    }
}

/// The searcher configuration of every file search (one searcher per worker thread, reused
/// from file to file).
fn new_searcher() -> grep_searcher::Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build()
}

/// Where one file's bytes come from.
#[derive(Clone, Copy)]
enum Haystack<'a> {
    /// Read from disk by the searcher.
    Path(&'a Path),
    /// Held in memory; `has_nul` is whether the bytes contain a NUL anywhere.
    Bytes { bytes: &'a [u8], has_nul: bool },
    /// Held in memory, and its lines are its bytes (see [`text_filter`]): searched by
    /// [`scan_text`] for the terms its filter does not rule out.
    Text {
        bytes: &'a [u8],
        filter: &'a TrigramFilter,
    },
}

/// The hash of the trigram `a b c` (Fibonacci hashing: the high bits are the well-mixed ones).
fn trigram_hash(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c)).wrapping_mul(TRIGRAM_MUL)
}

/// The odd multiplier of [`trigram_hash`]: 2^32 / φ.
const TRIGRAM_MUL: u32 = 0x9E37_79B1;

/// The trigram hashes of a term, in order (none for a term shorter than three bytes).
fn term_trigrams(term: &str) -> Vec<u32> {
    term.as_bytes()
        .windows(3)
        .map(|w| trigram_hash(w[0], w[1], w[2]))
        .collect()
}

/// Which trigrams occur in a file's bytes, as a one-hash Bloom filter: every trigram of the
/// bytes sets its bit, so a term with a trigram whose bit is unset cannot occur in the file —
/// and, holding no line break, in none of its lines. About one bit per byte of the file (the next power of two), so that even a large file's
/// set stays sparse enough to rule out a term of a few trigrams.
#[derive(Debug)]
struct TrigramFilter {
    bits: Vec<u64>,
    /// `32 - log2(number of bits)`: a hash's bit is its top bits.
    shift: u32,
}

impl TrigramFilter {
    const MIN_LOG2_BITS: u32 = 9;
    const MAX_LOG2_BITS: u32 = 30;

    fn build(bytes: &[u8]) -> Self {
        let log2 = (bytes.len().max(1).next_power_of_two().trailing_zeros())
            .clamp(Self::MIN_LOG2_BITS, Self::MAX_LOG2_BITS);
        let mut bits = vec![0u64; 1 << (log2 - 6)];
        let shift = 32 - log2;
        let last = bits.len() - 1;
        // The last three bytes, rolled in one byte at a time (the hash input of
        // `trigram_hash`), from the third byte on.
        let mut window = bytes
            .iter()
            .take(2)
            .fold(0u32, |w, &b| w << 8 | u32::from(b));
        for &b in bytes.iter().skip(2) {
            window = (window << 8 | u32::from(b)) & 0x00FF_FFFF;
            let h = window.wrapping_mul(TRIGRAM_MUL) >> shift;
            bits[(h >> 6) as usize & last] |= 1 << (h & 63);
        }
        TrigramFilter { bits, shift }
    }

    /// False when the term of these trigram hashes cannot occur in the file.
    fn may_contain(&self, grams: &[u32]) -> bool {
        grams.iter().all(|g| {
            let h = g >> self.shift;
            self.bits[(h >> 6) as usize] & (1 << (h & 63)) != 0
        })
    }
}

/// The filter of an in-memory file whose lines, as the searcher sees them, are its bytes cut
/// at each `\n`; `None` for the others, which the searcher then reads itself: a NUL byte
/// (binary detection stops at its buffer) or a byte-order mark (UTF-16 is transcoded, a
/// UTF-8 mark stripped).
fn text_filter(bytes: &[u8], has_nul: bool) -> Option<TrigramFilter> {
    let bom = bytes.starts_with(&[0xEF, 0xBB, 0xBF])
        || bytes.starts_with(&[0xFF, 0xFE])
        || bytes.starts_with(&[0xFE, 0xFF]);
    (!has_nul && !bom).then(|| TrigramFilter::build(bytes))
}

/// The lines of a text file holding each wanted term (by position in `active`; the others
/// stay empty), at most `cap` per term, in order — what the searcher's sink collects from
/// the file, found by one substring search per term instead of a line-by-line pass for all
/// of them: a file usually holds a few of a query's terms, and a rare term is then a single
/// vectorised scan. Line numbers count `\n`; a line's text drops its `\n` and one `\r`.
fn scan_text(
    bytes: &[u8],
    finders: &[memchr::memmem::Finder<'static>],
    active: &[usize],
    wanted: &[usize],
    cap: usize,
    max_line_chars: usize,
) -> Vec<Vec<(u64, String)>> {
    let mut out: Vec<Vec<(u64, String)>> = vec![Vec::new(); active.len()];
    for &ai in wanted {
        let finder = &finders[active[ai]];
        let hits = &mut out[ai];
        // `pos` starts line `line_no`.
        let (mut pos, mut line_no) = (0usize, 1u64);
        while hits.len() < cap {
            let Some(at) = finder.find(&bytes[pos..]).map(|i| pos + i) else {
                break;
            };
            let start = memchr::memrchr(b'\n', &bytes[pos..at]).map_or(pos, |i| pos + i + 1);
            line_no += memchr::memchr_iter(b'\n', &bytes[pos..start]).count() as u64;
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
            let line = &bytes[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            hits.push((
                line_no,
                cap_chars(&String::from_utf8_lossy(line), max_line_chars),
            ));
            if end == bytes.len() {
                break;
            }
            (pos, line_no) = (end + 1, line_no + 1);
        }
    }
    out
}

fn search_file(
    searcher: &mut grep_searcher::Searcher,
    src: Haystack<'_>,
    cm: &ChunkMatcher,
    cap: usize,
    max_line_chars: usize,
) -> FileHits {
    let matcher = &cm.matcher;
    let finders = &cm.finders;
    let mut out: Vec<Vec<(u64, String)>> = vec![Vec::new(); finders.len()];
    let mut full = 0usize;
    let sink = Bytes(|line_no, bytes| {
        let line = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut text: Option<String> = None;
        for (ti, f) in finders.iter().enumerate() {
            if out[ti].len() < cap && f.find(line).is_some() {
                let t = text.get_or_insert_with(|| {
                    cap_chars(&String::from_utf8_lossy(line), max_line_chars)
                });
                out[ti].push((line_no, t.clone()));
                if out[ti].len() == cap {
                    full += 1;
                }
            }
        }
        // Stop reading the file once every term has all the hits it can use.
        Ok(full < finders.len())
    });
    // In-memory bytes are searched exactly as `search_path` reads a file (unbuffered by a
    // memory map, through the same decoder and line buffer): the slice strategy is that path
    // whenever binary detection cannot fire (no NUL byte anywhere; a BOM makes the slice
    // strategy fall back to the reader itself). With a NUL, the two strategies differ — the
    // reader checks every 64 KB buffer, the slice only the first one — so such a file goes
    // through the reader over its bytes.
    let res = match src {
        // Opened without following a link or blocking: a file swapped for a FIFO (or a link
        // out of the tree) since the walk is skipped, not waited on.
        Haystack::Path(path) => match crate::graph::discover::open_regular(path) {
            Ok((file, _)) => searcher.search_file(matcher, &file, sink),
            Err(_) => return Err(()),
        },
        Haystack::Bytes {
            bytes,
            has_nul: true,
        } => searcher.search_reader(matcher, bytes, sink),
        Haystack::Bytes {
            bytes,
            has_nul: false,
        }
        | Haystack::Text { bytes, .. } => searcher.search_slice(matcher, bytes, sink),
    };
    res.map_err(|_| ())?;
    Ok(out)
}

/// The include globs of a request (language globs + extra globs) and its unknown languages;
/// a missing root or an empty glob set is an error.
fn walk_globs(
    root: &Path,
    languages: Option<&[String]>,
    extra_globs: &[String],
) -> CoreResult<(Vec<String>, Vec<String>)> {
    if !root.is_dir() {
        return Err(CoreError::InvalidArgument(format!(
            "lexical search root is not a directory: {}",
            root.display()
        )));
    }
    let (mut globs, unknown) = globs_for_languages(languages);
    globs.extend(extra_globs.iter().cloned());
    if globs.is_empty() {
        return Err(CoreError::InvalidArgument(format!(
            "no file globs: none of the languages {unknown:?} is known and no extra globs given"
        )));
    }
    Ok((globs, unknown))
}

/// The result skeleton: terms deduplicated in request order, unmatchable ones skipped.
fn prepare_terms(terms: &[String], unknown: Vec<String>) -> LexicalResult {
    let mut result = LexicalResult {
        unknown_languages: unknown,
        ..Default::default()
    };
    for term in terms {
        if result.terms.iter().any(|t| &t.term == term)
            || result.skipped_terms.iter().any(|(t, _)| t == term)
        {
            continue;
        }
        if term.is_empty() {
            result
                .skipped_terms
                .push((term.clone(), "empty term".into()));
        } else if term.contains('\n') || term.contains('\r') {
            result.skipped_terms.push((
                term.clone(),
                "contains a line break; lines are matched one at a time".into(),
            ));
        } else {
            result.terms.push(TermHits {
                term: term.clone(),
                ..Default::default()
            });
        }
    }
    result
}

/// The files a request's walk yields for `globs` (its root and exclusions applied).
fn request_files(req: &LexicalRequest, globs: &[String]) -> CoreResult<Vec<(String, PathBuf)>> {
    collect_files(&WalkSpec {
        root: &req.root,
        globs,
        exclude_any_depth: &req.exclude_any_depth,
        exclude_root: &req.exclude_root,
        exclude_files: &req.exclude_files,
    })
}

/// Runs the search. A missing or non-directory root is an error; everything else fails soft.
pub fn search(req: &LexicalRequest) -> CoreResult<LexicalResult> {
    let (globs, unknown) = walk_globs(&req.root, req.languages.as_deref(), &req.extra_globs)?;
    let mut result = prepare_terms(&req.terms, unknown);
    if result.terms.is_empty() || req.max_hits == 0 {
        return Ok(result);
    }
    let files = request_files(req, &globs)?;
    let sources: Vec<(&str, Haystack<'_>)> = files
        .iter()
        .map(|(rel, p)| (rel.as_str(), Haystack::Path(p)))
        .collect();
    search_files(&mut result, &sources, req.max_hits, req.max_line_chars)?;
    Ok(result)
}

/// One file of a chunk: its path, its bytes and the terms to search it for (positions in
/// the chunk's active terms).
type ChunkFile<'a> = (&'a str, Haystack<'a>, Vec<usize>);

/// The chunked search of `files` (sorted by relative path) into `result`'s terms. A chunk is
/// the next files that may hold a term still short of its cap, each searched for those of
/// them it may hold: a text file's filter rules the others out (they would add no hit
/// there), any other file is searched for all.
fn search_files(
    result: &mut LexicalResult,
    files: &[(&str, Haystack<'_>)],
    max_hits: usize,
    max_line_chars: usize,
) -> CoreResult<()> {
    result.files_searched = files.len();
    // Each term needs max_hits + 1 hits to know whether it was truncated.
    let need = max_hits + 1;
    let chunk = (rayon::current_num_threads() * 64).max(64);
    let grams: Vec<Vec<u32>> = result
        .terms
        .iter()
        .map(|t| term_trigrams(&t.term))
        .collect();
    let finders: Vec<memchr::memmem::Finder<'static>> = result
        .terms
        .iter()
        .map(|t| memchr::memmem::Finder::new(t.term.as_bytes()).into_owned())
        .collect();
    let mut current: Option<(Vec<usize>, ChunkMatcher)> = None;
    let mut rest = files.iter();
    loop {
        let active: Vec<usize> = (0..result.terms.len())
            .filter(|&i| result.terms[i].hits.len() < need)
            .collect();
        if active.is_empty() {
            break;
        }
        let batch: Vec<ChunkFile<'_>> = rest
            .by_ref()
            .filter_map(|&(rel, src)| {
                let wanted: Vec<usize> = match src {
                    Haystack::Text { filter, .. } => (0..active.len())
                        .filter(|&ai| filter.may_contain(&grams[active[ai]]))
                        .collect(),
                    _ => (0..active.len()).collect(),
                };
                (!wanted.is_empty()).then_some((rel, src, wanted))
            })
            .take(chunk)
            .collect();
        if batch.is_empty() {
            break;
        }
        let needs_matcher = batch
            .iter()
            .any(|(_, src, _)| !matches!(src, Haystack::Text { .. }));
        if needs_matcher && current.as_ref().is_none_or(|(prev, _)| *prev != active) {
            let active_terms: Vec<&str> = active
                .iter()
                .map(|&i| result.terms[i].term.as_str())
                .collect();
            current = Some((active.clone(), ChunkMatcher::new(&active_terms)?));
        }
        let cm = current.as_ref().map(|(_, cm)| cm);
        let per_file: Vec<FileHits> = batch
            .par_iter()
            .map_init(new_searcher, |searcher, (_, src, wanted)| match *src {
                Haystack::Text { bytes, .. } => Ok(scan_text(
                    bytes,
                    &finders,
                    &active,
                    wanted,
                    need,
                    max_line_chars,
                )),
                _ => search_file(
                    searcher,
                    *src,
                    cm.expect("a matcher for the active terms"),
                    need,
                    max_line_chars,
                ),
            })
            .collect();
        for ((rel, _, _), fh) in batch.iter().zip(per_file) {
            let Ok(per_term) = fh else {
                result.unreadable.push(rel.to_string());
                continue;
            };
            for (ai, hits) in per_term.into_iter().enumerate() {
                let th = &mut result.terms[active[ai]];
                for (line, text) in hits {
                    if th.hits.len() == need {
                        break;
                    }
                    th.hits.push(Hit {
                        path: rel.to_string(),
                        line,
                        text,
                    });
                }
            }
        }
    }
    for th in &mut result.terms {
        if th.hits.len() > max_hits {
            th.hits.truncate(max_hits);
            th.truncated = true;
        }
    }
    Ok(())
}

/// One file of a [`Corpus`]: its bytes, or `None` when it is searched from disk (past the
/// memory budget, or unreadable when loaded — then reported unreadable exactly as by
/// [`search`] if it still is).
#[derive(Debug)]
struct CorpusFile {
    rel: String,
    path: PathBuf,
    bytes: Option<Vec<u8>>,
    has_nul: bool,
    /// Set for in-memory files whose lines are their bytes ([`text_filter`]).
    filter: Option<TrigramFilter>,
}

/// The files of one walk (same globs and pruning as [`search`]), read once into memory.
///
/// The corpus is a snapshot: edits made on disk after [`Corpus::load`] are not seen by
/// in-memory files. Callers key it to the repository state it was loaded for (retrieval
/// keys it, with its other per-index structures, to the index's content).
#[derive(Debug)]
pub struct Corpus {
    files: Vec<CorpusFile>,
    unknown_languages: Vec<String>,
    bytes_loaded: u64,
}

impl Corpus {
    /// Walks `req`'s root (its `terms`, `max_hits` and `max_line_chars` are not used) and
    /// reads every file, in path order, while the total stays within `max_bytes`; later
    /// files stay on disk and are read per search.
    pub fn load(req: &LexicalRequest, max_bytes: u64) -> CoreResult<Self> {
        let (globs, unknown) = walk_globs(&req.root, req.languages.as_deref(), &req.extra_globs)?;
        let files = request_files(req, &globs)?;
        let sizes: Vec<u64> = files
            .par_iter()
            .map(|(_, p)| std::fs::metadata(p).map_or(u64::MAX, |m| m.len()))
            .collect();
        let mut total = 0u64;
        let fits: Vec<bool> = sizes
            .iter()
            .map(|&n| {
                let ok = n != u64::MAX && total.saturating_add(n) <= max_bytes;
                if ok {
                    total += n;
                }
                ok
            })
            .collect();
        let files: Vec<CorpusFile> = files
            .into_par_iter()
            .zip(fits)
            .map(|((rel, path), fit)| {
                // A file swapped for a FIFO since the walk must not hang the load.
                let read = || crate::graph::discover::read_regular(&path, u64::MAX).ok();
                let bytes = if fit { read() } else { None };
                let has_nul = bytes
                    .as_ref()
                    .is_some_and(|b| memchr::memchr(0, b).is_some());
                let filter = bytes.as_deref().and_then(|b| text_filter(b, has_nul));
                CorpusFile {
                    rel,
                    path,
                    bytes,
                    has_nul,
                    filter,
                }
            })
            .collect();
        let bytes_loaded = files
            .iter()
            .filter_map(|f| f.bytes.as_ref())
            .map(|b| b.len() as u64)
            .sum();
        Ok(Corpus {
            files,
            unknown_languages: unknown,
            bytes_loaded,
        })
    }

    /// Number of files the walk found (in memory or not).
    pub fn num_files(&self) -> usize {
        self.files.len()
    }

    /// Bytes held in memory.
    pub fn bytes_loaded(&self) -> u64 {
        self.bytes_loaded
    }

    /// [`search`] over the loaded files: the same terms handling, caps, order and
    /// diagnostics, with the bytes taken from memory where they were loaded, and the files
    /// their trigram filters rule out for every term still short of its cap not searched
    /// (they would add no hit).
    pub fn search(
        &self,
        terms: &[String],
        max_hits: usize,
        max_line_chars: usize,
    ) -> CoreResult<LexicalResult> {
        let mut result = prepare_terms(terms, self.unknown_languages.clone());
        if result.terms.is_empty() || max_hits == 0 {
            return Ok(result);
        }
        let sources: Vec<(&str, Haystack<'_>)> = self
            .files
            .iter()
            .map(|f| {
                let src = match (&f.bytes, &f.filter) {
                    (Some(bytes), Some(filter)) => Haystack::Text { bytes, filter },
                    (Some(b), None) => Haystack::Bytes {
                        bytes: b,
                        has_nul: f.has_nul,
                    },
                    (None, _) => Haystack::Path(&f.path),
                };
                (f.rel.as_str(), src)
            })
            .collect();
        search_files(&mut result, &sources, max_hits, max_line_chars)?;
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;
    use std::fs;

    fn write(root: &Path, rel: &str, body: &[u8]) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }

    fn run(root: &Path, terms: &[&str], langs: Option<&[&str]>, max_hits: usize) -> LexicalResult {
        let mut req = LexicalRequest::new(root, terms.iter().map(ToString::to_string).collect());
        req.languages = langs.map(|l| l.iter().map(ToString::to_string).collect());
        req.max_hits = max_hits;
        search(&req).unwrap()
    }

    #[test]
    fn a_file_swapped_for_a_fifo_or_a_link_after_the_walk_is_skipped_not_waited_on() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("swapped.py");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path this test owns.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let outside = d.path().join("outside.txt");
        fs::write(&outside, "needle\n").unwrap();
        let link = d.path().join("linked.py");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let cm = ChunkMatcher::new(&["needle"]).unwrap();
        let mut searcher = new_searcher();
        // A blocking open of the FIFO would wait here for a writer forever.
        for p in [&fifo, &link] {
            assert!(search_file(&mut searcher, Haystack::Path(p), &cm, 5, 100).is_err());
        }
        let plain = d.path().join("plain.py");
        fs::write(&plain, "x = 'needle'\n").unwrap();
        let hits = search_file(&mut searcher, Haystack::Path(&plain), &cm, 5, 100).unwrap();
        assert_eq!(hits[0].len(), 1);
    }

    #[test]
    fn literal_terms_sorted_and_vendored_skipped() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, "b.py", b"x = foo(1)\ny = 2\nfoo.bar()\n");
        write(r, "a/mod.py", b"def foo():\n    return '(a|b)*'\n");
        write(r, "vendor/v.py", b"foo\n");
        write(r, "pkg/node_modules/n.py", b"foo\n");
        write(r, "build/gen.py", b"foo\n");
        write(r, "pkg/build/real.py", b"foo\n");
        write(r, "notes.txt", b"foo\n");
        let res = run(
            r,
            &["foo", "(a|b)*", "nothing-here", "foo"],
            Some(&["python"]),
            40,
        );
        assert_eq!(res.terms.len(), 3);
        let foo: Vec<(String, u64)> = res.terms[0]
            .hits
            .iter()
            .map(|h| (h.path.clone(), h.line))
            .collect();
        assert_eq!(
            foo,
            [
                ("a/mod.py".to_string(), 1),
                ("b.py".to_string(), 1),
                ("b.py".to_string(), 3),
                ("pkg/build/real.py".to_string(), 1)
            ]
        );
        assert_eq!(res.terms[0].hits[1].text, "x = foo(1)");
        assert_eq!(res.terms[1].hits.len(), 1);
        assert_eq!(res.terms[1].hits[0].path, "a/mod.py");
        assert!(res.terms[2].hits.is_empty());
        assert!(!res.terms[0].truncated);
    }

    #[test]
    fn excluded_files_are_never_searched_and_take_no_hits_of_the_cap() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, "a_generated.py", b"needle 1\nneedle 2\nneedle 3\n");
        write(r, "b.py", b"needle here\n");
        write(r, "pkg/a_generated.py", b"needle nested\n");
        let mut req = LexicalRequest::new(r, vec!["needle".into()]);
        req.max_hits = 2;
        let paths = |res: &LexicalResult| -> Vec<String> {
            res.terms[0].hits.iter().map(|h| h.path.clone()).collect()
        };
        assert_eq!(
            paths(&search(&req).unwrap()),
            ["a_generated.py", "a_generated.py"]
        );
        // Left out by its exact path: the cap goes to the other files, and a file of the
        // same name elsewhere is still searched.
        req.exclude_files = vec!["a_generated.py".into()];
        let walk = search(&req).unwrap();
        assert_eq!(paths(&walk), ["b.py", "pkg/a_generated.py"]);
        assert_eq!(walk.files_searched, 2);
        let corpus = Corpus::load(&req, u64::MAX).unwrap();
        assert_eq!(corpus.num_files(), 2);
        assert_eq!(
            paths(&corpus.search(&req.terms, 2, 500).unwrap()),
            paths(&walk)
        );
    }

    #[test]
    fn cap_and_truncated_flag() {
        let d = tempfile::tempdir().unwrap();
        let body: String = (0..30).fold(String::new(), |mut out, i| {
            let _ = writeln!(out, "hit {i}");
            out
        });
        write(d.path(), "a.py", body.as_bytes());
        write(d.path(), "b.py", body.as_bytes());
        let res = run(d.path(), &["hit"], None, 40);
        let th = &res.terms[0];
        assert_eq!(th.hits.len(), 40);
        assert!(th.truncated);
        assert_eq!(th.hits[39].path, "b.py");
        assert_eq!(th.hits[39].line, 10);
        let exact = run(d.path(), &["hit 2"], None, 40);
        // "hit 2", "hit 20".."hit 29" in each file = 11 × 2 = 22 hits, not truncated.
        assert_eq!(exact.terms[0].hits.len(), 22);
        assert!(!exact.terms[0].truncated);
    }

    #[test]
    fn binary_and_non_utf8_files() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "bin.py", b"needle\x00\x01\x02needle\n");
        write(d.path(), "latin.py", b"caf\xe9 needle\n");
        let res = run(d.path(), &["needle"], Some(&["python"]), 40);
        let hits = &res.terms[0].hits;
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].path, "latin.py");
        assert_eq!(hits[0].text, "caf\u{fffd} needle");
    }

    #[test]
    fn bad_inputs() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "a.py", b"x\n");
        let mut req = LexicalRequest::new(d.path().join("missing"), vec!["x".into()]);
        assert!(matches!(search(&req), Err(CoreError::InvalidArgument(_))));
        req.root = d.path().to_path_buf();
        req.languages = Some(vec!["cobol".into()]);
        assert!(matches!(search(&req), Err(CoreError::InvalidArgument(_))));
        req.languages = Some(vec!["cobol".into(), "python".into()]);
        req.terms = vec![String::new(), "a\nb".into(), "x".into()];
        let res = search(&req).unwrap();
        assert_eq!(res.unknown_languages, ["cobol"]);
        assert_eq!(res.skipped_terms.len(), 2);
        assert_eq!(res.terms[0].hits.len(), 1);
    }

    /// (term, [(path, line, text)], truncated) per term.
    type TermAnswer = (String, Vec<(String, u64, String)>, bool);

    fn hits_of(r: &LexicalResult) -> Vec<TermAnswer> {
        r.terms
            .iter()
            .map(|t| {
                let hits = t
                    .hits
                    .iter()
                    .map(|h| (h.path.clone(), h.line, h.text.clone()))
                    .collect();
                (t.term.clone(), hits, t.truncated)
            })
            .collect()
    }

    /// The in-memory corpus answers exactly as the walk-per-search, including the cases where
    /// the searcher's strategies differ: a NUL past the first 64 KB buffer (the reader keeps
    /// the hits before it), a UTF-16 BOM (transcoded), invalid UTF-8, a saturated term, and
    /// files left on disk by the memory budget.
    #[test]
    fn corpus_matches_walk_search() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let mut late_nul = b"needle early\n".to_vec();
        late_nul.extend(std::iter::repeat_n(b"zzzzzzz\n".as_slice(), 20_000).flatten());
        // "mid" shares the NUL's 64 KB buffer: the reader drops it, a slice search would not.
        late_nul.extend_from_slice(b"needle mid\nneedle\x00late\nneedle after\n");
        write(r, "a/late_nul.py", &late_nul);
        write(r, "a/early_nul.py", b"needle\x00\n");
        let mut utf16 = vec![0xFF, 0xFE];
        for u in "x = 'needle'\nneedle2\n".encode_utf16() {
            utf16.extend_from_slice(&u.to_le_bytes());
        }
        write(r, "b/utf16.py", &utf16);
        write(r, "b/latin.py", b"caf\xe9 needle\r\nother\n");
        let many: String = (0..50).fold(String::new(), |mut out, i| {
            let _ = writeln!(out, "common {i}");
            out
        });
        write(r, "c/many.py", many.as_bytes());
        write(r, "c/vendor/skip.py", b"needle\n");
        write(r, "d/readme.txt", b"needle\n");
        let terms: Vec<String> = ["needle", "common", "late", "after", "needle2", "", "a\nb"]
            .iter()
            .map(ToString::to_string)
            .collect();
        for langs in [None, Some(vec!["python".to_string(), "cobol".to_string()])] {
            let mut req = LexicalRequest::new(r, terms.clone());
            req.languages = langs;
            let walk = search(&req).unwrap();
            let late: Vec<&str> = walk.terms[0].hits.iter().map(|h| h.text.as_str()).collect();
            assert_eq!(
                late[0], "needle early",
                "the reader keeps the buffers before the NUL"
            );
            assert!(
                !late.contains(&"needle mid"),
                "and drops the NUL's own buffer"
            );
            for budget in [u64::MAX, 100, 0] {
                let corpus = Corpus::load(&req, budget).unwrap();
                let got = corpus.search(&terms, 40, 500).unwrap();
                assert_eq!(hits_of(&got), hits_of(&walk), "budget {budget}");
                assert_eq!(got.skipped_terms, walk.skipped_terms);
                assert_eq!(got.unknown_languages, walk.unknown_languages);
                assert_eq!(got.files_searched, walk.files_searched);
                assert_eq!(corpus.num_files(), walk.files_searched);
                assert!(corpus.bytes_loaded() <= budget);
            }
            let capped = Corpus::load(&req, u64::MAX)
                .unwrap()
                .search(&terms, 3, 4)
                .unwrap();
            let mut req3 = req.clone();
            req3.max_hits = 3;
            req3.max_line_chars = 4;
            assert_eq!(hits_of(&capped), hits_of(&search(&req3).unwrap()));
            assert!(capped.terms[1].truncated);
        }
        assert!(Corpus::load(&LexicalRequest::new(r.join("missing"), vec![]), 1).is_err());
    }

    /// The filter never rules out a term the file holds, at any size (so any fill), and
    /// rules out nearly all terms of four trigrams it does not hold; a file with a NUL or a
    /// byte-order mark has none (it is not searched as text).
    #[test]
    fn trigram_filter_has_no_false_negatives() {
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in [0usize, 2, 3, 50, 700, 5000, 100_000] {
            let bytes: Vec<u8> = (0..len)
                .map(|_| b"abcdefgh_\n ("[next() as usize % 12])
                .collect();
            let f = TrigramFilter::build(&bytes);
            let mut spans = vec![(0, len.min(3)), (len.saturating_sub(3), len)];
            for _ in 0..200 {
                let start = next() as usize % len.max(1);
                spans.push((start, (start + 3 + next() as usize % 20).min(len)));
            }
            for (start, end) in spans.into_iter().filter(|(s, e)| e - s >= 3) {
                let term = String::from_utf8(bytes[start..end].to_vec()).unwrap();
                assert!(f.may_contain(&term_trigrams(&term)), "{len} {term:?}");
            }
            assert!(f.may_contain(&term_trigrams("xy")), "too short to rule out");
            let absent = (0..100)
                .filter(|_| {
                    let term: String = (0..6)
                        .map(|_| (b'A' + (next() % 26) as u8) as char)
                        .collect();
                    f.may_contain(&term_trigrams(&term))
                })
                .count();
            assert!(absent <= 10, "{len}: {absent} of 100 absent terms pass");
        }
        for bom in [&b"\xEF\xBB\xBFx = 1\n"[..], b"\xFF\xFEx\0", b"\xFE\xFF\0x"] {
            assert!(text_filter(bom, false).is_none());
        }
        assert!(text_filter(b"x\0", true).is_none());
        assert!(text_filter(b"x = 1\n", false).is_some());
    }

    proptest::proptest! {
        /// [`scan_text`] collects exactly what the searcher's sink collects from a text file:
        /// the same lines, numbers, texts and caps, for every subset of the terms.
        #[test]
        fn text_scan_equals_the_searcher(
            text in "(foo|bar|ab|é|\\.|\\(| |\r|\n|\n\n|\r\n|\u{fffd}|x){0,120}",
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..60),
            terms in proptest::collection::vec("(foo|bar|ab|é|\\.|\\(| |x){1,4}", 1..6),
            cap in 1usize..6,
            max_line_chars in 1usize..12,
            mask in 0u32..64,
        ) {
            let mut bytes = text.into_bytes();
            bytes.extend(raw.iter().filter(|&&b| b != 0));
            proptest::prop_assume!(text_filter(&bytes, false).is_some());
            let filter = TrigramFilter::build(&bytes);
            let refs: Vec<&str> = terms.iter().map(String::as_str).collect();
            let cm = ChunkMatcher::new(&refs).unwrap();
            let src = Haystack::Text { bytes: &bytes, filter: &filter };
            let want = search_file(&mut new_searcher(), src, &cm, cap, max_line_chars).unwrap();
            let active: Vec<usize> = (0..terms.len()).collect();
            let wanted: Vec<usize> = (0..terms.len()).filter(|i| mask & (1 << i) != 0).collect();
            let got = scan_text(&bytes, &cm.finders, &active, &wanted, cap, max_line_chars);
            for (ai, hits) in got.iter().enumerate() {
                let expected = if wanted.contains(&ai) { want[ai].clone() } else { vec![] };
                proptest::prop_assert_eq!(hits, &expected, "term {:?}", terms[ai]);
            }
        }
    }

    #[test]
    fn long_lines_are_capped_on_char_boundary() {
        let d = tempfile::tempdir().unwrap();
        let line = format!("needle {}\n", "é".repeat(1000));
        write(d.path(), "a.py", line.as_bytes());
        let mut req = LexicalRequest::new(d.path(), vec!["needle".into()]);
        req.max_line_chars = 10;
        let res = search(&req).unwrap();
        assert_eq!(res.terms[0].hits[0].text, "needle ééé");
    }
}
