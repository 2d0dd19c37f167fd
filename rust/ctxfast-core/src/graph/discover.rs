//! File discovery: which files the graph indexes, and which it deliberately skips.
//!
//! Uses the `ignore` crate (ripgrep's walker), so `.gitignore`/`.ignore` rules apply even
//! outside a git checkout. Vendored trees and `.git`/`.ctxfast` ([`VENDORED_DIRS`], the one
//! list every walk prunes) are pruned. Symlinks
//! are never followed (so a symlink loop or a link pointing outside the repository cannot
//! escape or hang the walk); a symlinked source file is recorded as skipped, with the reason.
//! Binary files (a NUL byte in the first 8 KB) and files over `max_file_bytes` are recorded as
//! skipped too, and so are FIFOs, sockets and devices (opening a FIFO waits for a writer
//! forever): every skip is visible in the `files` table, never silent. The tree can change
//! after the walk, so every read goes through [`read_regular`], which re-checks on the open
//! descriptor itself.

use super::lang::Lang;
use crate::vendored::VENDORED_DIRS;
use ignore::WalkBuilder;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Default per-file size cap (1 MB); larger files are skipped and recorded.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1_000_000;

/// Bytes inspected for a NUL when classifying a file as binary.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// One candidate source file.
#[derive(Debug, Clone)]
pub struct Found {
    /// POSIX path relative to the root.
    pub rel: String,
    pub abs: PathBuf,
    /// `None` only for recorded non-source entries (a symlinked directory).
    pub lang: Option<Lang>,
    pub bytes: u64,
    /// Modification time in nanoseconds since the epoch (0 when unknown).
    pub mtime_ns: i64,
    /// `Some(reason)` when the file is recorded but not parsed.
    pub skip: Option<String>,
}

/// Walks `root` and returns every source file (by extension), sorted by path.
pub fn discover(root: &Path, max_file_bytes: u64) -> Vec<Found> {
    // A parallel walk: on a refresh the walk and its stat calls are most of the time spent,
    // and directory reads overlap well across threads.
    let out = std::sync::Mutex::new(Vec::new());
    WalkBuilder::new(root)
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .parents(false)
        .filter_entry(|e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && e.depth() > 0
                && VENDORED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
        })
        .build_parallel()
        .run(|| {
            let out = &out;
            Box::new(move |entry| {
                let f = match entry {
                    Ok(entry) => found(root, &entry, max_file_bytes),
                    Err(err) => unwalkable(root, &err),
                };
                if let Some(f) = f {
                    out.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(f);
                }
                ignore::WalkState::Continue
            })
        });
    let mut out = out
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    headers_follow_cpp(&mut out);
    out
}

/// `.h` is C by its extension (the C++ grammar misreads C that uses C++ keywords as names),
/// but the headers of a repository written in C++ hold its classes, namespaces and
/// templates, which the C grammar reads as broken functions (a `namespace Catch { ... }`
/// became a function `Catch` spanning the file). So when a tree's C++ files outnumber its
/// `.c` files, its `.h` files are parsed as C++ ([`cpp_headers`] tells which was chosen).
fn headers_follow_cpp(found: &mut [Found]) {
    let is_header = |f: &Found| f.lang == Some(Lang::C) && is_h(&f.rel);
    let cpp = found.iter().filter(|f| f.lang == Some(Lang::Cpp)).count();
    let c = found
        .iter()
        .filter(|f| f.lang == Some(Lang::C) && !is_header(f))
        .count();
    if cpp > c {
        for f in found.iter_mut().filter(|f| is_header(f)) {
            f.lang = Some(Lang::Cpp);
        }
    }
}

/// True when the `.h` files of `found` are parsed as C++ ([`discover`]).
pub fn cpp_headers(found: &[Found]) -> bool {
    found
        .iter()
        .any(|f| f.lang == Some(Lang::Cpp) && is_h(&f.rel))
}

/// A `.h` path, by the extension [`Lang::from_path`] reads.
fn is_h(rel: &str) -> bool {
    rel.rsplit_once('.').is_some_and(|(_, ext)| ext == "h")
}

/// The record of an entry the walk could not read (a path longer than the system allows, a
/// directory without read permission), so it is skipped with its reason, never silently.
fn unwalkable(root: &Path, err: &ignore::Error) -> Option<Found> {
    fn path_of(e: &ignore::Error) -> Option<&Path> {
        match e {
            ignore::Error::WithPath { path, .. } => Some(path),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                path_of(err)
            }
            ignore::Error::Partial(errs) => errs.iter().find_map(path_of),
            _ => None,
        }
    }
    let path = path_of(err)?;
    let rel_os = path.strip_prefix(root).ok()?;
    let rel = rel_os
        .components()
        .map(|c| escaped_name(c.as_os_str()))
        .collect::<Vec<_>>()
        .join("/");
    (!rel.is_empty()).then(|| Found {
        rel,
        abs: path.to_path_buf(),
        lang: None,
        bytes: 0,
        mtime_ns: 0,
        skip: Some(format!("unreadable: {err}")),
    })
}

/// The record of one walked entry; `None` for directories and files that are not source.
fn found(root: &Path, entry: &ignore::DirEntry, max_file_bytes: u64) -> Option<Found> {
    let ft = entry.file_type()?;
    if ft.is_dir() {
        return None;
    }
    let rel_os = entry.path().strip_prefix(root).ok()?;
    // A UTF-8 path is already its POSIX spelling (the walk yields no `.` or `//`); only an
    // undecodable one is rebuilt component by component.
    let (rel, undecodable) = match rel_os.to_str() {
        Some(s) => (s.to_string(), false),
        None => (
            rel_os
                .components()
                .map(|c| escaped_name(c.as_os_str()))
                .collect::<Vec<_>>()
                .join("/"),
            true,
        ),
    };
    let lang = Lang::from_path(&rel);
    let odd_link =
        ft.is_symlink() && (entry.path().is_dir() || std::fs::canonicalize(entry.path()).is_err());
    if lang.is_none() && !odd_link {
        return None;
    }
    let abs = entry.path().to_path_buf();
    let mut f = Found {
        rel,
        abs,
        lang,
        bytes: 0,
        mtime_ns: 0,
        skip: None,
    };
    if undecodable {
        f.skip = Some(UNDECODABLE_NAME.into());
    } else if let Some(reason) = lang.and_then(|l| generated_by_path(&f.rel, l)) {
        f.skip = Some(reason.into());
    } else if ft.is_symlink() {
        f.skip = Some(symlink_reason(root, entry.path()));
    } else if !ft.is_file() {
        f.skip = Some(NOT_REGULAR.into());
    } else {
        match entry.metadata() {
            Ok(m) => {
                f.bytes = m.len();
                f.mtime_ns = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64);
                if m.len() > max_file_bytes {
                    f.skip = Some(format!(
                        "skipped: {} bytes exceeds the {} byte limit",
                        m.len(),
                        max_file_bytes
                    ));
                }
            }
            Err(e) => f.skip = Some(format!("unreadable: {e}")),
        }
    }
    Some(f)
}

fn symlink_reason(root: &Path, p: &Path) -> String {
    match std::fs::canonicalize(p) {
        Err(e) => format!("skipped: symlink not followed (broken or looping: {e})"),
        Ok(target) => {
            let inside = std::fs::canonicalize(root).is_ok_and(|r| target.starts_with(r));
            if inside {
                "skipped: symlink not followed (target inside the repository is indexed at its own path)".into()
            } else {
                "skipped: symlink not followed (points outside the repository)".into()
            }
        }
    }
}

/// The skip reason of a file whose name is not UTF-8: it is recorded under its escaped name
/// ([`escaped_name`]), never under a lossy one that could name another file.
pub const UNDECODABLE_NAME: &str = "skipped: file name is not valid UTF-8";

/// A path component as text, each byte of an invalid UTF-8 sequence written `\xNN` (the
/// spelling Python's `backslashreplace` gives, so both sides name the file alike).
pub fn escaped_name(s: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in s.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// The skip reason of a FIFO, socket or device.
pub const NOT_REGULAR: &str = "skipped: not a regular file (FIFO, socket or device)";

/// The regular file at `path` opened for reading, with its metadata read from the open
/// descriptor: the last component is not followed if it is a symlink and the open does not
/// block (a FIFO swapped in since a walk must not hang the reader); anything but a regular
/// file is an error.
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(NOT_REGULAR));
    }
    Ok((file, meta))
}

/// The bytes of the regular file at `path`, checked at read time on the descriptor read: the
/// last component is opened without following a symlink and without blocking (a file swapped
/// for a FIFO after the walk must not hang the build), and anything but a regular file is an
/// error. Reads at most `max_bytes + 1` bytes, so a file grown past the cap since the walk
/// costs no more than the cap.
pub fn read_regular(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let (file, meta) = open_regular(path)?;
    if meta.len() > max_bytes {
        return Err(std::io::Error::other(format!(
            "skipped: {} bytes exceeds the {max_bytes} byte limit",
            meta.len()
        )));
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut out)?;
    Ok(out)
}

/// Why a file is skipped as generated by its path alone: a minified or bundled name
/// (`jquery.min.js`, `app-min.js`, `vendor.bundle.js`), a generator's output by its
/// conventional name ([`GENERATED_SUFFIXES`]), or JavaScript/TypeScript under a
/// `dist/` or `build/` folder (a bundler's output). Such files are not the product's source:
/// indexed, their thousands of definitions and identifiers outrank the code a task is about
/// (a PHP repository whose only parsed files were its bundled JavaScript ranked
/// `jquery.min.js` first). Skipped here, they are in no retrieval's universe — recorded in
/// the `files` table with the reason, like every skip.
pub fn generated_by_path(rel: &str, lang: Lang) -> Option<&'static str> {
    let (dirs, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    if [".min.", "-min.", ".bundle."]
        .iter()
        .any(|p| name.contains(p))
    {
        return Some(MINIFIED_NAME);
    }
    if GENERATED_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        return Some(GENERATED_NAME);
    }
    let bundle_dir = dirs.split('/').any(|d| d == "dist" || d == "build");
    (lang.is_js() && bundle_dir).then_some(BUNDLE_DIR)
}

/// The skip reason of a file named as minified or bundled.
pub const MINIFIED_NAME: &str = "skipped: minified or bundled (by its name)";
/// The skip reason of a file named as a code generator's output ([`GENERATED_SUFFIXES`]).
pub const GENERATED_NAME: &str = "skipped: generated (by its name)";
/// The names code generators give their output in the generic tier's languages: Dart's
/// `build_runner` (`user.g.dart`, `user.freezed.dart`) and C#'s designers and source
/// generators (`Form1.Designer.cs`, `Api.g.cs`). Nobody edits them; indexed, their
/// boilerplate outranks the code they are generated from.
pub const GENERATED_SUFFIXES: &[&str] = &[
    ".g.dart",
    ".freezed.dart",
    ".g.cs",
    ".Designer.cs",
    ".designer.cs",
];
/// The skip reason of JavaScript under `dist/` or `build/`.
pub const BUNDLE_DIR: &str = "skipped: bundler output (JavaScript under dist/ or build/)";
/// The skip reason of a file whose lines are minified-long ([`is_minified`]).
pub const MINIFIED_LINES: &str = "skipped: minified (lines average over 200 bytes)";

/// True for minified code whatever its name: at least 1 KB whose lines average over 200
/// bytes. Hand-written code averages under 50; a minifier's output is one line, or a few of
/// tens of kilobytes. Applied where [`Lang::skips_minified`] says: a long generated line in
/// a curated language (a deeply nested expression) is still parsed, and its fail-soft entry
/// recorded.
pub fn is_minified(bytes: &[u8]) -> bool {
    const MIN_BYTES: usize = 1024;
    const MAX_AVERAGE: usize = 200;
    if bytes.len() < MIN_BYTES {
        return false;
    }
    let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    bytes.len() / lines > MAX_AVERAGE
}

/// The skip reason of a file whose first lines say it is generated ([`is_generated`]).
pub const GENERATED_HEADER: &str = "skipped: generated (its header says so)";
/// The skip reasons of files a tool wrote (minified, bundled, generated): no search may
/// offer their lines as the product's code. Other skips (too large, a symlink, a FIFO) say
/// nothing about who wrote the file.
pub const MACHINE_MADE: &[&str] = &[
    MINIFIED_NAME,
    MINIFIED_LINES,
    BUNDLE_DIR,
    GENERATED_NAME,
    GENERATED_HEADER,
];
/// How far into a file [`is_generated`] looks: the lines a license header leaves before a
/// generator's mark.
const GENERATED_HEAD_LINES: usize = 40;
const GENERATED_HEAD_BYTES: usize = 4096;

/// True when one of the first [`GENERATED_HEAD_LINES`] lines (within
/// [`GENERATED_HEAD_BYTES`]) marks the file as a generator's output, whatever its name: Go's
/// convention (`// Code generated by protoc-gen-go. DO NOT EDIT.`), which protobuf, ANTLR,
/// mockgen and most generators follow in some form (`# Generated by the protocol buffer
/// compiler.  DO NOT EDIT!`, `auto-generated on ... Do not edit!`), `@generated` and C#'s
/// `<auto-generated>`. The mark must be a comment line ([`COMMENT_LEADERS`]) that says both
/// that the file was generated and not to edit it, so the script that generates a file (a
/// `HEADER = "# Code generated by gen.py. DO NOT EDIT."` template, a "generates tables.py;
/// do not edit it by hand" note) is not taken for its output. Nobody fixes a bug there:
/// indexed, a generated mock or parser was shown whole as a change target and its names
/// outranked the code it mirrors.
pub fn is_generated(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(GENERATED_HEAD_BYTES)];
    head.split(|&b| b == b'\n')
        .take(GENERATED_HEAD_LINES)
        .any(|line| {
            let line = line.trim_ascii_start();
            // Leaders hold no letters: test them before copying the line to lower case, so a
            // file's code lines (most of the head) cost no allocation.
            if !COMMENT_LEADERS.iter().any(|c| line.starts_with(c)) {
                return false;
            }
            let line = line.to_ascii_lowercase();
            let has = |needle: &[u8]| memchr::memmem::find(&line, needle).is_some();
            has(b"@generated")
                || has(b"<auto-generated")
                || (has(b"do not edit") && GENERATED_WORDS.iter().any(|w| has(w)))
        })
}

/// How a comment line starts in the languages the index reads (a docstring's quotes too).
const COMMENT_LEADERS: &[&[u8]] = &[
    b"//", b"#", b"/*", b"*", b"--", b";", b"<!--", b"%", b"\"\"\"", b"'''", b"(*", b"{-",
];
/// The words by which a generator's mark says the file is its output.
const GENERATED_WORDS: &[&[u8]] = &[
    b"code generated",
    b"generated by",
    b"generated on",
    b"generated from",
    b"autogenerated",
    b"auto-generated",
];

/// True when the first [`BINARY_SNIFF_BYTES`] contain a NUL byte.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}
