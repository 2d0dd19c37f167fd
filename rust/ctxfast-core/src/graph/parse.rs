//! The parse stage: every file the plan cannot trust unread is read, hashed and — when its
//! content key moved — parsed (in parallel, through the shared parse cache when there is
//! one); then the run's file list is assembled for resolution from the fresh extractions and
//! the stored ones of unchanged files.

use super::discover::{self, Found};
use super::lang::{self, Lang, ModuleNamer};
use super::names::ChangedNames;
use super::parse_cache::{self, ParseCache};
use super::plan::Previous;
use super::progress::Progress;
use super::raw::RawFile;
use super::resolve::{linkage_keys, FileData};
use super::{cache, IndexOptions};
use crate::error::CoreResult;
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

/// What the parse stage did with one discovered file.
pub enum Outcome {
    Unchanged,
    Parsed {
        sha: String,
        /// Boxed: an extraction is many times the size of the other outcomes.
        raw: Box<RawFile>,
        parse_error: Option<String>,
    },
    Skipped(String),
}

/// The content key of a file: `sha256(bytes + path)`.
pub fn sha_key(bytes: &[u8], rel: &str) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    h.update(rel.as_bytes());
    h.finalize().iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The outcome of every discovered file, in `found`'s order.
pub struct Parsed {
    pub outcomes: Vec<Outcome>,
    /// How many extractions the parse cache answered.
    pub cache_hits: usize,
    /// (cache dir, error) when the parse cache could not be opened or written: the run goes
    /// on without it.
    pub cache_errors: Vec<(String, String)>,
}

/// Sees each chunk of parsed files with their outcomes (see [`parse_files`]).
pub type Sink<'s> = &'s mut dyn FnMut(&[Found], &[Outcome]);

/// Files parsed between two calls of a [`parse_files`] sink: small enough that a chunk's
/// rows are a few megabytes, large enough that the workers rarely wait at its end.
pub const SINK_CHUNK: usize = 512;

/// Reads, hashes and parses the files of `found`. With `reparse_all` (the package layout moved
/// module names) nothing is trusted from `previous`. A cancel stops the parse and is
/// reported by the caller's `progress.check()`.
///
/// With a `sink`, the files are parsed [`SINK_CHUNK`] at a time, in order, and the sink sees
/// each chunk's files and outcomes as soon as they are done (the cold build writes them
/// while the next chunk parses).
pub fn parse_files(
    found: &[Found],
    previous: &Previous,
    reparse_all: bool,
    namer: &ModuleNamer,
    opts: &IndexOptions,
    progress: &Progress,
    mut sink: Option<Sink<'_>>,
) -> CoreResult<Parsed> {
    let mut cache_errors: Vec<(String, String)> = vec![];
    let cache_error = |o: &parse_cache::ParseCacheOptions, e: crate::CoreError| {
        (o.dir.display().to_string(), format!("parse cache: {e}"))
    };
    let pcache = opts
        .parse_cache
        .as_ref()
        .and_then(|o| match ParseCache::open(o) {
            Ok(c) => Some(c),
            Err(e) => {
                cache_errors.push(cache_error(o, e));
                None
            }
        });
    let chunk = if sink.is_some() {
        SINK_CHUNK
    } else {
        found.len().max(1)
    };
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(found.len());
    for part in found.chunks(chunk) {
        let start = outcomes.len();
        outcomes.par_extend(part.par_iter().map(|f| {
            let _tick = Tick(progress);
            if progress.is_cancelled() {
                return Outcome::Unchanged; // discarded: the run stops after the loop
            }
            parse_one(f, previous, reparse_all, namer, opts, pcache.as_ref())
        }));
        if progress.is_cancelled() {
            break;
        }
        if let Some(s) = sink.as_mut() {
            s(part, &outcomes[start..]);
        }
    }
    progress.check()?;
    if let (Some(c), Some(o)) = (&pcache, &opts.parse_cache) {
        if let Err(e) = c.flush() {
            cache_errors.push(cache_error(o, e));
        }
    }
    Ok(Parsed {
        outcomes,
        cache_hits: pcache.as_ref().map_or(0, ParseCache::hits),
        cache_errors,
    })
}

fn parse_one(
    f: &Found,
    previous: &Previous,
    reparse_all: bool,
    namer: &ModuleNamer,
    opts: &IndexOptions,
    pcache: Option<&ParseCache>,
) -> Outcome {
    let (Some(lang), None) = (f.lang, &f.skip) else {
        return Outcome::Skipped(f.skip.clone().unwrap_or_else(|| "skipped".into()));
    };
    if !reparse_all && previous.trusts_unread(f) {
        return Outcome::Unchanged;
    }
    let bytes = match discover::read_regular(&f.abs, opts.max_file_bytes) {
        Ok(b) => b,
        Err(e) => return Outcome::Skipped(format!("unreadable: {e}")),
    };
    if discover::is_binary(&bytes) {
        return Outcome::Skipped("skipped: binary file (NUL byte in the first 8 KB)".into());
    }
    if lang.skips_minified() && discover::is_minified(&bytes) {
        return Outcome::Skipped(discover::MINIFIED_LINES.into());
    }
    if discover::is_generated(&bytes) {
        return Outcome::Skipped(discover::GENERATED_HEADER.into());
    }
    let sha = sha_key(&bytes, &f.rel);
    if !reparse_all && previous.sha(&f.rel) == Some(sha.as_str()) {
        return Outcome::Unchanged;
    }
    let module = namer.name(&f.rel, lang);
    let lines = line_count(&bytes);
    let (raw, parse_error) = if let Some(c) = pcache {
        c.extract(lang, &bytes, &module, lines)
    } else {
        let ex = lang::extract(lang, &bytes, &module, lines);
        (ex.raw, ex.parse_error)
    };
    Outcome::Parsed {
        sha,
        raw: Box::new(raw),
        parse_error,
    }
}

/// The line count a file's module definition ends at.
fn line_count(bytes: &[u8]) -> u32 {
    memchr::memchr_iter(b'\n', bytes).count() as u32 + 1
}

/// Parses again a file whose stored blob is unusable, as [`parse_one`] parses it: its bytes
/// and what they yield.
fn parse_again(
    abs: &Path,
    lang: Lang,
    module: &str,
    opts: &IndexOptions,
) -> (Vec<u8>, lang::Extracted) {
    let bytes = discover::read_regular(abs, opts.max_file_bytes).unwrap_or_default();
    let ex = lang::extract(lang, &bytes, module, line_count(&bytes));
    (bytes, ex)
}

/// Counts one file as done when the parse closure returns, whichever way it returns.
struct Tick<'a>(&'a Progress);

impl Drop for Tick<'_> {
    fn drop(&mut self) {
        self.0.tick();
    }
}

/// The stored extraction (interface part) of every still-present file, from this process's
/// last run when it wrote the index ([`cache`]) or else from the `raw` table: unchanged files
/// feed resolution as-is; for changed files the old one tells whether their interface moved.
pub fn stored_interfaces(
    conn: &rusqlite::Connection,
    db_path: &Path,
    previous: &Previous,
    present: &FxHashSet<&str>,
) -> CoreResult<cache::Ifaces> {
    if previous.is_empty() {
        return Ok(cache::Ifaces::default());
    }
    if let Some(mut c) = cache::take(db_path, previous.run_start_ns) {
        c.retain(|p, _| present.contains(p.as_str()));
        return Ok(c);
    }
    let mut blobs: Vec<(String, Vec<u8>)> = vec![];
    let mut st = conn.prepare("SELECT path, iface FROM raw")?;
    let rows = st.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
    })?;
    for row in rows {
        let (p, data) = row?;
        if present.contains(p.as_str()) {
            blobs.push((p, data));
        }
    }
    Ok(blobs
        .into_par_iter()
        .filter_map(|(p, data)| {
            let signatures = Lang::from_path(&p).is_some_and(Lang::signatures_resolve);
            RawFile::decode_interface_blob(&data, signatures).map(|r| (p, r))
        })
        .collect())
}

/// A file parsed in this run: its `files` row.
pub struct ChangedFile {
    /// Index into [`Assembled::files`].
    pub index: usize,
    pub sha: String,
    pub language: &'static str,
    pub parse_error: Option<String>,
}

/// Every file with a graph, ready for the symbol table.
pub struct Assembled {
    pub files: Vec<FileData>,
    /// The files parsed in this run, in `files` order.
    pub changed: Vec<ChangedFile>,
    /// Of those, the ones whose interface moved (indexes into `files`).
    pub iface_changed: Vec<usize>,
    /// The [`super::lang::Lang::linkage_family`] bits of the parsed files that changed what
    /// they put in the repository-wide name maps ([`linkage_keys`]): a call in any file of
    /// those families may now resolve differently.
    pub linkage_moved: u32,
    /// The names whose lookup the parsed files' interface changes may move
    /// ([`ChangedNames::add_diff`]); the files without a previous interface are in `unknown`.
    pub names: ChangedNames,
    /// Files whose interface moved with no previous one to compare (new files, or a stored
    /// blob that did not decode): indexes into `files`.
    pub unknown: Vec<usize>,
}

/// Puts the fresh extractions of parsed files and the stored interfaces of unchanged ones
/// (`stored`, consumed) in `found`'s order. An unchanged file without a usable stored blob is
/// parsed again here; parse errors go to `errors`.
pub fn assemble(
    found: &[Found],
    outcomes: Vec<Outcome>,
    mut stored: cache::Ifaces,
    namer: &ModuleNamer,
    opts: &IndexOptions,
    errors: &mut Vec<(String, String)>,
) -> Assembled {
    let mut out = Assembled {
        files: vec![],
        changed: vec![],
        iface_changed: vec![],
        linkage_moved: 0,
        names: ChangedNames::default(),
        unknown: vec![],
    };
    for (f, o) in found.iter().zip(outcomes) {
        let (Some(lang), false) = (f.lang, matches!(o, Outcome::Skipped(_))) else {
            continue;
        };
        let module = namer.name(&f.rel, lang);
        match o {
            Outcome::Unchanged => {
                if let Some(raw) = stored.remove(&f.rel) {
                    out.files
                        .push(FileData::new(f.rel.clone(), lang, module, raw));
                } else {
                    // Stored row without a usable blob: re-parse it.
                    let (bytes, ex) = parse_again(&f.abs, lang, &module, opts);
                    out.linkage_moved |= lang.linkage_family();
                    out.names.any = true;
                    out.iface_changed.push(out.files.len());
                    out.changed.push(ChangedFile {
                        index: out.files.len(),
                        sha: sha_key(&bytes, &f.rel),
                        language: lang.as_str(),
                        parse_error: ex.parse_error,
                    });
                    out.files
                        .push(FileData::new(f.rel.clone(), lang, module, ex.raw));
                }
            }
            Outcome::Parsed {
                sha,
                raw,
                parse_error,
            } => {
                if let Some(e) = &parse_error {
                    errors.push((f.rel.clone(), e.clone()));
                }
                let old = stored.remove(&f.rel);
                if lang.linkage_family() != 0 {
                    let before = old
                        .as_ref()
                        .map(|o| linkage_keys(lang, o))
                        .unwrap_or_default();
                    if before != linkage_keys(lang, &raw) {
                        out.linkage_moved |= lang.linkage_family();
                    }
                }
                let same = old
                    .as_ref()
                    .is_some_and(|old| old.same_interface(&raw, lang.signatures_resolve()));
                if !same {
                    match &old {
                        Some(old) => out.names.add_diff(old, &raw, lang, &f.rel, &module),
                        None => out.unknown.push(out.files.len()),
                    }
                    out.iface_changed.push(out.files.len());
                }
                out.changed.push(ChangedFile {
                    index: out.files.len(),
                    sha,
                    language: lang.as_str(),
                    parse_error,
                });
                out.files
                    .push(FileData::new(f.rel.clone(), lang, module, *raw));
            }
            Outcome::Skipped(_) => {}
        }
    }
    out
}

/// Gives the unchanged files about to be resolved again (`to_resolve` minus `changed`) their
/// full extraction back from the `raw` table (they came in with the interface part only); a
/// full blob that no longer decodes is parsed again so no reference is lost.
pub fn load_full_extractions(
    conn: &rusqlite::Connection,
    root: &Path,
    files: &mut [FileData],
    to_resolve: &[usize],
    changed: &HashSet<usize>,
    opts: &IndexOptions,
) -> CoreResult<()> {
    let mut full_blobs: Vec<(usize, Vec<u8>)> = vec![];
    let mut st = conn.prepare("SELECT data FROM raw WHERE path = ?1")?;
    for &i in to_resolve.iter().filter(|i| !changed.contains(i)) {
        if let Ok(b) = st.query_row([&files[i].rel], |r| r.get::<_, Vec<u8>>(0)) {
            full_blobs.push((i, b));
        }
    }
    let decoded: Vec<(usize, Option<RawFile>)> = full_blobs
        .into_par_iter()
        .map(|(i, b)| (i, RawFile::decode_compressed(&b)))
        .collect();
    for (i, raw) in decoded {
        if let Some(raw) = raw {
            files[i].raw = raw;
        } else {
            let f = &files[i];
            let (_, ex) = parse_again(&root.join(&f.rel), f.lang, &f.module, opts);
            files[i].raw = ex.raw;
        }
    }
    Ok(())
}
