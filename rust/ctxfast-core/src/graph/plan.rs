//! What one index run has to do: which files the previous run recorded and can be trusted
//! unread (the stat shortcut), which are gone or skipped, and — once the changed files are
//! parsed — which files must be resolved again.

use super::discover::Found;
use super::lang::{Lang, ModuleNamer};
use super::parse::Outcome;
use super::raw::{self, RawFile};
use super::resolve::FileData;
use crate::error::CoreResult;
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

/// Files modified less than this before the previous run started are re-hashed (1 s: far
/// above any filesystem's timestamp granularity).
pub const RACY_NS: i64 = 1_000_000_000;

/// A file's size and mtime when it was last hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub size: i64,
    pub mtime_ns: i64,
}

impl FileStat {
    pub fn of(f: &Found) -> FileStat {
        FileStat {
            size: f.bytes as i64,
            mtime_ns: f.mtime_ns,
        }
    }
}

/// What the index recorded at the end of the previous run (all empty for a new index).
#[derive(Default)]
pub struct Previous {
    /// Path → content key; `None` for a file that was recorded as skipped.
    pub shas: FxHashMap<String, Option<String>>,
    pub stats: FxHashMap<String, FileStat>,
    /// When the previous run started (`meta.run_start_ns`; 0 if never recorded).
    pub run_start_ns: i64,
}

/// `meta.run_start_ns` of the index behind `conn` (0 if never recorded): the tag of what
/// the run that wrote it left in this process ([`super::cache`]).
pub fn stored_run_start(conn: &rusqlite::Connection) -> i64 {
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'run_start_ns'",
        [],
        |r| r.get::<_, String>(0),
    )
    .ok()
    .and_then(|v| v.parse().ok())
    .unwrap_or(0)
}

impl Previous {
    pub fn read(conn: &rusqlite::Connection) -> CoreResult<Previous> {
        let mut shas = FxHashMap::default();
        let mut st = conn.prepare("SELECT path, sha256 FROM files")?;
        let rows = st.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })?;
        for row in rows {
            let (p, s) = row?;
            shas.insert(p, s);
        }
        let run_start_ns = stored_run_start(conn);
        let mut stats = FxHashMap::default();
        if !shas.is_empty() {
            let mut st = conn.prepare("SELECT path, size, mtime_ns FROM file_stat")?;
            let rows = st.query_map([], |r| {
                let stat = FileStat {
                    size: r.get(1)?,
                    mtime_ns: r.get(2)?,
                };
                Ok((r.get::<_, String>(0)?, stat))
            })?;
            stats.extend(rows.flatten());
        }
        Ok(Previous {
            shas,
            stats,
            run_start_ns,
        })
    }

    /// What `files` and `file_stat` hold once this run (started at `run_start_ns`) commits —
    /// what [`Previous::read`] would read back — so the next run in this process need not
    /// read them: every skipped file without a key, every other one with its key (`parsed`
    /// gives those of files parsed in this run, by path) and the stat it was found with.
    #[must_use]
    pub fn after_run<'p>(
        mut self,
        found: &[Found],
        skipped: &[SkippedFile],
        parsed: impl IntoIterator<Item = (&'p str, &'p str)>,
        run_start_ns: i64,
    ) -> Previous {
        // Updated in place: a one-file refresh of a large tree changes a few entries, and
        // rebuilding both maps cloned every path twice (a fifth of such a refresh's CPU at
        // 30k files went to the allocator).
        let parsed: FxHashMap<&str, &str> = parsed.into_iter().collect();
        let skipped: FxHashSet<&str> = skipped.iter().map(|s| s.rel.as_str()).collect();
        let mut with_sha = 0;
        for f in found {
            let rel = f.rel.as_str();
            let now = if skipped.contains(rel) {
                Some(None)
            } else {
                parsed.get(rel).map(|s| Some(s.to_string()))
            };
            let has_sha = match (now, self.shas.get_mut(rel)) {
                (Some(sha), Some(slot)) => {
                    *slot = sha;
                    slot.is_some()
                }
                (None, Some(slot)) => slot.is_some(),
                (sha, None) => {
                    let sha = sha.flatten();
                    let has = sha.is_some();
                    self.shas.insert(f.rel.clone(), sha);
                    has
                }
            };
            if has_sha {
                with_sha += 1;
                match self.stats.get_mut(rel) {
                    Some(st) => *st = FileStat::of(f),
                    None => {
                        self.stats.insert(f.rel.clone(), FileStat::of(f));
                    }
                }
            } else {
                self.stats.remove(rel);
            }
        }
        // Every found path is in both maps now (the stats of those with a key); anything
        // more is a file gone since the previous run.
        if self.shas.len() != found.len() || self.stats.len() != with_sha {
            let here: FxHashSet<&str> = found.iter().map(|f| f.rel.as_str()).collect();
            self.shas.retain(|p, _| here.contains(p.as_str()));
            self.stats.retain(|p, _| here.contains(p.as_str()));
        }
        Previous {
            shas: self.shas,
            stats: self.stats,
            run_start_ns,
        }
    }

    /// Nothing recorded: a new (or reset) index.
    pub fn is_empty(&self) -> bool {
        self.shas.is_empty()
    }

    /// No file of the index has a graph yet: every file is resolved.
    pub fn is_cold(&self) -> bool {
        self.shas.values().all(Option::is_none)
    }

    /// `rel` was indexed (not skipped) by the previous run.
    pub fn indexed(&self, rel: &str) -> bool {
        self.shas.get(rel).is_some_and(Option::is_some)
    }

    /// The stored content key of `rel`, if it was indexed.
    pub fn sha(&self, rel: &str) -> Option<&str> {
        self.shas.get(rel).and_then(|s| s.as_deref())
    }

    /// Stat shortcut (as git's index): a file whose size and mtime match what was recorded
    /// when it was last hashed is unchanged without reading it — unless that mtime is within
    /// [`RACY_NS`] of the previous run's start, when a same-size edit could share the
    /// timestamp.
    pub fn trusts_unread(&self, f: &Found) -> bool {
        self.indexed(&f.rel)
            && f.mtime_ns != 0
            && f.mtime_ns < self.run_start_ns - RACY_NS
            && self.stats.get(&f.rel) == Some(&FileStat::of(f))
    }
}

/// A file recorded without a graph (too large, binary, unreadable, no grammar).
pub struct SkippedFile {
    pub rel: String,
    pub lang: Option<Lang>,
    pub bytes: u64,
    pub reason: String,
}

/// The files of this run sorted by what happened to them.
pub struct Inventory<'a> {
    /// Files with a graph after this run (unchanged or parsed).
    pub present: FxHashSet<&'a str>,
    /// Files the previous run indexed that are gone (or skipped now).
    pub removed: Vec<String>,
    pub n_unchanged: usize,
    /// Unchanged files whose recorded stat is out of date: rewritten so the next run can
    /// trust them unread.
    pub restat: Vec<(&'a str, FileStat)>,
    pub skipped: Vec<SkippedFile>,
}

impl<'a> Inventory<'a> {
    /// Sorts `found` by `outcomes`; every skipped file is also reported in `errors`.
    pub fn take(
        found: &'a [Found],
        outcomes: &[Outcome],
        previous: &Previous,
        errors: &mut Vec<(String, String)>,
    ) -> Inventory<'a> {
        let present: FxHashSet<&str> = found
            .iter()
            .zip(outcomes)
            .filter(|(_, o)| !matches!(o, Outcome::Skipped(_)))
            .map(|(f, _)| f.rel.as_str())
            .collect();
        let removed = previous
            .shas
            .iter()
            .filter(|(p, sha)| sha.is_some() && !present.contains(p.as_str()))
            .map(|(p, _)| p.clone())
            .collect();
        let n_unchanged = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Unchanged))
            .count();
        let restat = found
            .iter()
            .zip(outcomes)
            .filter(|(f, o)| {
                matches!(o, Outcome::Unchanged)
                    && previous.stats.get(&f.rel) != Some(&FileStat::of(f))
            })
            .map(|(f, _)| (f.rel.as_str(), FileStat::of(f)))
            .collect();
        let mut skipped = vec![];
        for (f, o) in found.iter().zip(outcomes) {
            if let Outcome::Skipped(reason) = o {
                errors.push((f.rel.clone(), reason.clone()));
                skipped.push(SkippedFile {
                    rel: f.rel.clone(),
                    lang: f.lang,
                    bytes: f.bytes,
                    reason: reason.clone(),
                });
            }
        }
        Inventory {
            present,
            removed,
            n_unchanged,
            restat,
            skipped,
        }
    }
}

/// `meta.package_layout` of the index behind `conn`, if recorded.
fn stored_layout(conn: &rusqlite::Connection) -> Option<String> {
    stored_meta(conn, "package_layout")
}

/// `meta.<key>` of the index behind `conn`, if recorded.
pub fn stored_meta(conn: &rusqlite::Connection, key: &str) -> Option<String> {
    conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .ok()
}

/// True when a refresh that changed no graph row would not change the run record either, so
/// it writes nothing (an open of an unchanged index must not write: the write cost more than
/// the check, and every reader of the index saw a commit): no recorded stat is out of date,
/// the package layout and the skipped files' rows are as stored, and no file the previous
/// run start kept from the stat shortcut ([`Previous::trusts_unread`]) would be trusted
/// under `run_start`. Keeping the older run start is safe: it only makes more files racy.
pub fn record_is_current(
    conn: &rusqlite::Connection,
    previous: &Previous,
    found: &[Found],
    inventory: &Inventory<'_>,
    layout: &str,
    run_start: i64,
) -> CoreResult<bool> {
    let newly_trusted = |f: &Found| {
        previous.stats.get(&f.rel) == Some(&FileStat::of(f))
            && f.mtime_ns != 0
            && f.mtime_ns >= previous.run_start_ns - RACY_NS
            && f.mtime_ns < run_start - RACY_NS
    };
    if !inventory.restat.is_empty()
        || stored_layout(conn).as_deref() != Some(layout)
        || found.iter().any(newly_trusted)
    {
        return Ok(false);
    }
    let mut st = conn.prepare(
        "SELECT path, language, bytes, parse_error FROM files WHERE sha256 IS NULL ORDER BY path",
    )?;
    let stored = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut now: Vec<_> = inventory
        .skipped
        .iter()
        .map(|s| {
            (
                s.rel.clone(),
                s.lang.map(|l| l.as_str().to_string()),
                s.bytes as i64,
                Some(s.reason.clone()),
            )
        })
        .collect();
    now.sort();
    Ok(stored == now)
}

/// What the index records as its package layout: the Python package directories
/// ([`ModuleNamer::signature`]) and, when the tree's `.h` files are parsed as C++
/// ([`super::discover::cpp_headers`]), a marker line; a change of either re-parses every file.
pub fn layout_signature(namer: &ModuleNamer, cpp_headers: bool) -> String {
    let mut layout = namer.signature();
    if cpp_headers {
        layout.push_str(CPP_HEADERS);
    }
    layout
}

/// The line [`layout_signature`] adds when `.h` files are parsed as C++.
const CPP_HEADERS: &str = "\n#headers: c++";

/// True when the package layout differs from the stored one *and* some indexed Python file's
/// module name (its `def` node) is not what `namer` now gives it. The layout check keeps the
/// common refresh free of the node scan.
/// A flip of the headers' language ([`CPP_HEADERS`]) re-parses everything.
pub fn modules_moved(
    conn: &rusqlite::Connection,
    found: &[Found],
    namer: &ModuleNamer,
    layout: &str,
) -> CoreResult<bool> {
    let stored = stored_layout(conn);
    if stored.as_deref() == Some(layout) {
        return Ok(false);
    }
    // The headers' language changed (or an index from before the choice): every `.h`
    // file's extraction is of the other grammar.
    if stored.unwrap_or_default().ends_with(CPP_HEADERS) != layout.ends_with(CPP_HEADERS) {
        return Ok(true);
    }
    let mut st =
        conn.prepare("SELECT file, qualname FROM nodes WHERE kind = 'def' AND line = 1")?;
    let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let old: FxHashMap<String, String> = rows.flatten().collect();
    Ok(found.iter().any(|f| {
        f.lang == Some(Lang::Python)
            && old
                .get(&f.rel)
                .is_some_and(|m| *m != namer.name(&f.rel, Lang::Python))
    }))
}

/// Records every file whose module qualname another (earlier-sorted) file already has: the
/// resolver maps the name to the first file, and definitions with the same `qualname:line`
/// id are stored once, so the clash must not pass silently. `modules` gives each file with
/// a graph, in the run's order, with its module name.
pub fn record_clashes<'a>(
    modules: impl IntoIterator<Item = (&'a str, Cow<'a, str>)>,
    errors: &mut Vec<(String, String)>,
) {
    let mut first: FxHashMap<Cow<'a, str>, &str> = FxHashMap::default();
    for (rel, m) in modules {
        match first.get(&m) {
            Some(other) => errors.push((
                rel.to_string(),
                format!(
                    "module name clash: `{m}` is also the module of {other}; names resolve to \
                     {other} and this file's definitions with the same id are dropped"
                ),
            )),
            None => {
                first.insert(m, rel);
            }
        }
    }
}

/// [`record_clashes`] input for the files of `found` with a graph (`present`), their
/// module names from `namer`: for a run that assembled no file list.
pub fn found_modules<'a>(
    found: &'a [Found],
    present: &'a FxHashSet<&str>,
    namer: &'a ModuleNamer,
) -> impl Iterator<Item = (&'a str, Cow<'a, str>)> {
    found.iter().filter_map(move |f| match f.lang {
        Some(lang) if present.contains(f.rel.as_str()) => {
            Some((f.rel.as_str(), Cow::Owned(namer.name(&f.rel, lang))))
        }
        _ => None,
    })
}

/// [`record_clashes`] input for an assembled file list.
pub fn file_modules(files: &[FileData]) -> impl Iterator<Item = (&str, Cow<'_, str>)> {
    files
        .iter()
        .map(|f| (f.rel.as_str(), Cow::Borrowed(f.module.as_str())))
}

/// What the files parsed in this run moved of what other files' resolution sees.
#[derive(Clone, Copy)]
pub struct Moved<'a> {
    /// The files whose interface moved (indexes into the run's files).
    pub interfaces: &'a [usize],
    /// The [`Lang::linkage_family`] bits of the files that changed what they put in the
    /// repository-wide name maps (C/C++ functions, PHP and Ruby names).
    pub linkage: u32,
}

/// The files of this run (indexes into `files`) whose references must be resolved again:
/// all of them on a cold build; otherwise every changed file, plus — when some file's
/// interface moved (`iface_changed`) or a file was removed — the files whose resolution could
/// see that: those with an edge or a dependency into a touched file, those whose unresolved
/// names mention a name a touched file defines, those importing a module (or a name) whose
/// last segment is a touched module's name, and one step further the files reading through
/// a file whose imports may flip. A C/C++, PHP or Ruby call no scope, header or import
/// defines resolves through the repository-wide name maps, and a miss there is no
/// unresolved name: when a parsed file changed what it puts in those maps (`linkage`) or a
/// file of that language family was removed, every file of the family is resolved again.
pub fn to_resolve(
    conn: &rusqlite::Connection,
    files: &[FileData],
    changed: &[usize],
    moved: Moved<'_>,
    removed: &[String],
    previous: &Previous,
    namer: &ModuleNamer,
) -> CoreResult<Vec<usize>> {
    if previous.is_cold() {
        return Ok((0..files.len()).collect());
    }
    let Moved {
        interfaces: iface_changed,
        linkage: mut families,
    } = moved;
    let mut affected: FxHashSet<usize> = changed.iter().copied().collect();
    for p in removed {
        families |= Lang::from_path(p).map_or(0, Lang::linkage_family);
    }
    if families != 0 {
        affected
            .extend((0..files.len()).filter(|&i| files[i].lang.linkage_family() & families != 0));
    }
    affected.extend(same_package_readers(files, iface_changed));
    if !iface_changed.is_empty() || !removed.is_empty() {
        let index_of: FxHashMap<&str, usize> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.rel.as_str(), i))
            .collect();
        // Files whose import resolution may flip (see below), and whether a module appeared
        // or disappeared (only then can an import of an unchanged name flip).
        let mut flips: FxHashSet<usize> = FxHashSet::default();
        let appeared_or_gone =
            !removed.is_empty() || changed.iter().any(|&i| !previous.indexed(&files[i].rel));
        let mut touched: Vec<String> = iface_changed
            .iter()
            .map(|&i| files[i].rel.clone())
            .collect();
        touched.extend(removed.iter().cloned());
        let mut stems: FxHashSet<String> = FxHashSet::default();
        for t in &touched {
            if let Some(l) = Lang::from_path(t) {
                let m = namer.name(t, l);
                stems.insert(m.rsplit('.').next().unwrap_or(&m).to_string());
            }
        }
        let mut dependents = conn.prepare("SELECT src_file FROM file_deps WHERE dst_file = ?1")?;
        for t in &touched {
            let rows = dependents.query_map([t], |r| r.get::<_, String>(0))?;
            for p in rows.flatten() {
                if let Some(&i) = index_of.get(p.as_str()) {
                    affected.insert(i);
                }
            }
        }
        // A file with unresolved names is re-resolved only if one of those names mentions
        // a name defined by a file whose interface moved.
        let mut defined: FxHashSet<&str> = stems.iter().map(String::as_str).collect();
        for &i in iface_changed {
            defined.extend(files[i].raw.defs.iter().map(|d| d.name.as_str()));
        }
        let mut st = conn.prepare("SELECT file, name FROM unresolved")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for (p, name) in rows.flatten() {
            if !name.split('.').any(|s| defined.contains(s)) {
                continue;
            }
            if let Some(&i) = index_of.get(p.as_str()) {
                affected.insert(i);
                flips.insert(i);
            }
        }
        for (i, f) in files.iter().enumerate() {
            if imports_a_stem(&f.raw, f.lang, &stems) {
                affected.insert(i);
                if appeared_or_gone {
                    flips.insert(i);
                }
            }
        }
        // A file whose imports may now resolve where they failed (or fail where they
        // resolved) changes what every file reading through it sees: re-resolve those too.
        // Their deps name every file read on the way (`Resolved::deps`), so one step is
        // enough; a lookup that failed stopped at the file flagged here.
        for &i in &flips {
            let rows = dependents.query_map([&files[i].rel], |r| r.get::<_, String>(0))?;
            for p in rows.flatten() {
                if let Some(&j) = index_of.get(p.as_str()) {
                    affected.insert(j);
                }
            }
        }
    }
    let mut affected: Vec<usize> = affected.into_iter().collect();
    affected.sort_unstable();
    Ok(affected)
}

/// Java and Go name a definition of their own package without importing it, and a miss is no
/// unresolved name: when a Java or Go file's interface moved, the files of its package (and
/// the Java files importing all of it, `import p.*`) are resolved again.
fn same_package_readers(files: &[FileData], iface_changed: &[usize]) -> Vec<usize> {
    let packages: FxHashSet<(Lang, String)> = iface_changed
        .iter()
        .map(|&i| &files[i])
        .filter(|f| matches!(f.lang, Lang::Java | Lang::Go))
        .map(|f| (f.lang, f.prefix()))
        .collect();
    if packages.is_empty() {
        return vec![];
    }
    (0..files.len())
        .filter(|&i| {
            let f = &files[i];
            matches!(f.lang, Lang::Java | Lang::Go)
                && (packages.contains(&(f.lang, f.prefix()))
                    || f.raw.bindings.iter().any(|b| match &b.target {
                        raw::Target::Star { module, .. } => {
                            packages.contains(&(f.lang, module.clone()))
                        }
                        _ => false,
                    }))
        })
        .collect()
}

/// `raw` imports a module (or a name) whose last segment is one of `stems`, or has a binding
/// whose module is empty (a relative import of the package itself; in JavaScript, a name
/// read in the file itself, `export default X` or `var x = utils.x`, which imports nothing).
fn imports_a_stem(raw: &RawFile, lang: Lang, stems: &FxHashSet<String>) -> bool {
    let own_package = !lang.is_js();
    raw.bindings.iter().any(|b| {
        let (m, n) = match &b.target {
            raw::Target::Symbol { module, name, .. } => (module.as_str(), name.as_str()),
            raw::Target::Module { module, .. } | raw::Target::Star { module, .. } => {
                (module.as_str(), "")
            }
        };
        let last = m.rsplit(['.', '/', ':']).next().unwrap_or(m);
        stems.contains(last) || stems.contains(n) || (own_package && m.is_empty())
    })
}
