//! SQLite storage of the graph (`recon.db`): the tables every reader queries (`nodes`, `edges`,
//! `name_index`) plus `files`, `defs_meta` (signature + first docstring paragraph),
//! `unresolved`, `raw` (per-file extraction blobs for incremental refresh: the full one and its
//! interface part), `file_deps`
//! (which files a file's edges point into), `file_stat` (size and mtime of each file when it
//! was last hashed) and `meta`.
//!
//! Nodes are keyed by an integer, [`node_key`] of their text id (`qualname:line`, which the
//! row's own columns spell): edges, `defs_meta` and `unresolved` carry the 8-byte key, not the
//! text, and the full extraction in `raw.data` is deflated. Together they halved the sympy
//! index (241 MB to 116 MB for 30 MB of source). Schema 9 stores files by integer id too
//! (`node_rows.file_id`, `file_dep_rows`), edge types as codes and the interface blob
//! deflated, behind views that keep the readers' `nodes`/`edges`/`file_deps` columns: 86 MB.
//!
//! WAL mode and one transaction per refresh: a reader (or a crash mid-index) always sees the
//! previous complete index.

use crate::error::{CoreError, CoreResult, IoContext};
use crate::graph::parse_cache::EXTRACTOR_VERSION;
use crate::graph::resolve::RESOLVER_VERSION;
use rusqlite::{Connection, OptionalExtension};
use std::path::Path;

/// Bumped whenever the schema or the raw blob format changes (what extraction records has
/// its own [`EXTRACTOR_VERSION`]); see [`index_version`].
pub const SCHEMA_VERSION: &str = "9";

/// What `meta.schema_version` holds: the schema, the extractor and the resolver that filled
/// it, as `schema.extractor.resolver`. An index written by another extractor or resolver
/// holds another graph (a fixed visitor, a new kind of edge, a call reaching another
/// definition) even when its tables look the same, so a mismatch of any rebuilds it, and
/// readers refuse it until then. A resolver change alone keeps the parse cache's entries.
pub fn index_version() -> String {
    format!("{SCHEMA_VERSION}.{EXTRACTOR_VERSION}.{RESOLVER_VERSION}")
}

/// `nodes` is a view: the rows live in `node_rows`, which names its file by the integer
/// `files.id` instead of repeating the path on every row (and again in `nodes_file`); the
/// view joins the path back, so readers still select and filter `nodes.file` by path (a
/// `file = ?` filter becomes a `files.path` lookup and a `nodes_file` range).
/// A file keeps its id while it exists, and an id is never handed out twice
/// (`AUTOINCREMENT`): a row naming a file gone since can never come to name another file.
///
/// `edges` and `file_deps` are views for the same reason: `edge_rows.kind` is an
/// [`EdgeKind`](super::resolve::EdgeKind) code (0 and 1 take no bytes in a record) where each
/// row spelled `invoke`, and `file_dep_rows` holds two file ids where it held two paths, each
/// indexed again. A view has no rowid of its own (it reads NULL), so `edges` shows the row's
/// as a fourth column: readers still order ties by insertion with `e.rowid`.
///
/// `nodes_name` holds definitions only: bare-name lookups ask for definitions
/// (`kind != 'ref'`, which lets SQLite use the partial index), and reference sites are three
/// rows in four.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL UNIQUE, sha256 TEXT, language TEXT, bytes INT, parse_error TEXT);
CREATE TABLE IF NOT EXISTS node_rows(id INTEGER PRIMARY KEY, kind TEXT, name TEXT, qualname TEXT, file_id INT, line INT, col INT, end_line INT);
CREATE VIEW IF NOT EXISTS nodes AS SELECT n.id AS id, n.kind AS kind, n.name AS name, n.qualname AS qualname, f.path AS file, n.line AS line, n.col AS col, n.end_line AS end_line FROM node_rows n JOIN files f ON f.id = n.file_id;
CREATE TABLE IF NOT EXISTS edge_rows(src INTEGER, dst INTEGER, kind INT);
CREATE VIEW IF NOT EXISTS edges AS SELECT src, dst, CASE kind WHEN 0 THEN 'invoke' WHEN 1 THEN 'import' WHEN 2 THEN 'contain' END AS type, rowid AS rowid FROM edge_rows;
CREATE TABLE IF NOT EXISTS name_index(qualname TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS defs_meta(id INTEGER PRIMARY KEY, signature TEXT, doc TEXT);
CREATE TABLE IF NOT EXISTS unresolved(name TEXT, node_id INTEGER, file TEXT, line INT, col INT);
CREATE TABLE IF NOT EXISTS raw(path TEXT PRIMARY KEY, data BLOB, iface BLOB);
CREATE TABLE IF NOT EXISTS file_dep_rows(src INT, dst INT);
CREATE VIEW IF NOT EXISTS file_deps AS SELECT s.path AS src_file, d.path AS dst_file FROM file_dep_rows x JOIN files s ON s.id = x.src JOIN files d ON d.id = x.dst;
CREATE TABLE IF NOT EXISTS file_stat(path TEXT PRIMARY KEY, size INT, mtime_ns INT);
CREATE INDEX IF NOT EXISTS nodes_name ON node_rows(name) WHERE kind != 'ref';
CREATE INDEX IF NOT EXISTS nodes_qualname ON node_rows(qualname, kind);
CREATE INDEX IF NOT EXISTS nodes_file ON node_rows(file_id, line);
CREATE INDEX IF NOT EXISTS edges_src ON edge_rows(src);
CREATE INDEX IF NOT EXISTS edges_dst ON edge_rows(dst);
CREATE INDEX IF NOT EXISTS unresolved_file ON unresolved(file);
CREATE INDEX IF NOT EXISTS file_deps_dst ON file_dep_rows(dst);
CREATE INDEX IF NOT EXISTS file_deps_src ON file_dep_rows(src);
";

/// The integer key a node is stored under: the first 63 bits of `sha256(id)`, where `id` is
/// the node's text id (`qualname:line`, which is also `qualname || ':' || line` of its row).
///
/// Edges, `defs_meta` and `unresolved` refer to nodes by this key: 8 bytes instead of a
/// ~35-byte string stored (and indexed) on both ends of every edge. The text id is built only
/// at the API edge (the Python readers select `qualname || ':' || line` and look a text id
/// up through the same function, exposed by the binding). Derived from the id rather than
/// assigned, so a refresh needs no lookup to point an unchanged file's edge at a re-inserted
/// definition. Two ids sharing a key (about 1 in 10^9 for a million nodes) are reported by
/// the write as an error, never merged silently.
pub fn node_key(id: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(id.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[..8]);
    (u64::from_be_bytes(b) >> 1) as i64
}

/// [`node_key`] of the node with `qualname` at `line` (its text id `qualname:line`).
pub fn key_of(qualname: &str, line: u32) -> i64 {
    node_key(&format!("{qualname}:{line}"))
}

/// `nodes_qualname` carries `kind` too: nodes are stored in key (hash) order, so the reference
/// sites of one scope no longer sit together, and the readers' "definitions named q" lookups
/// (`kind != 'ref'`) would fetch every site's row only to drop it (fresh-process compose on
/// sympy spent 0.13–0.27 s in SQL with `(qualname)` alone, 0.07–0.10 s with `(qualname, kind)`).
/// Secondary indexes dropped during a cold bulk load and recreated by [`SCHEMA`].
pub const DROP_INDEXES: &str = "
DROP INDEX IF EXISTS nodes_name; DROP INDEX IF EXISTS nodes_qualname;
DROP INDEX IF EXISTS nodes_file; DROP INDEX IF EXISTS edges_src; DROP INDEX IF EXISTS edges_dst;
DROP INDEX IF EXISTS unresolved_file;
DROP INDEX IF EXISTS file_deps_dst; DROP INDEX IF EXISTS file_deps_src;
";

/// The tables of [`SCHEMA`] (its views aside): one missing is damage.
const TABLES: &[&str] = &[
    "meta",
    "files",
    "node_rows",
    "edge_rows",
    "name_index",
    "defs_meta",
    "unresolved",
    "raw",
    "file_dep_rows",
    "file_stat",
];

/// The views of [`SCHEMA`], which readers query as plain tables (file paths and edge type
/// names rather than integer ids and codes), so the compact storage stays private to this
/// module.
const VIEWS: &[&str] = &["nodes", "edges", "file_deps"];

/// How long a build waits for another process (or thread) building the same index before
/// it gives up with an error naming the lock file (default 120 s).
pub const DEFAULT_LOCK_WAIT: std::time::Duration = std::time::Duration::from_mins(2);

/// An exclusive `flock` on `recon.db.lock`, held for a whole build or refresh: two writers
/// of one index (processes or threads) take turns instead of racing for SQLite's write lock
/// or a shared side file. The kernel drops it when the holder dies, even by `kill -9`.
pub struct BuildLock {
    _file: Option<std::fs::File>,
}

/// True for the errors of a directory or file system this process may not write.
fn read_only(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EROFS | libc::EACCES | libc::EPERM)
    )
}

/// Every name the index keeps beside `db_path` (the database, its journals, its lock and
/// check stamp).
const SIDE_SUFFIXES: &[&str] = &["", "-wal", "-shm", "-journal", ".lock", ".checked"];

/// Removes any of the index's own files that is a symbolic link or not a regular file (a
/// link itself, never what it points at). A repository can ship its `.ctxfast/` with
/// `recon.db` linked to another SQLite file or `recon.db.checked` to a file to overwrite;
/// this index never makes such entries, so removing them only costs a rebuild.
pub fn drop_links(db_path: &Path) {
    for suffix in SIDE_SUFFIXES {
        let p = side(db_path, suffix);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_symlink() || !m.file_type().is_dir() && !m.is_file() {
            if std::fs::remove_file(&p).is_ok() {
                crate::log::push(
                    crate::log::Level::Warning,
                    format!("removed {}: not a regular file", p.display()),
                );
            }
        } else if m.is_dir() && std::fs::remove_dir_all(&p).is_ok() {
            crate::log::push(
                crate::log::Level::Warning,
                format!(
                    "removed {}: a directory where the index keeps a file",
                    p.display()
                ),
            );
        }
    }
}

/// Takes the [`BuildLock`] of `db_path` (creating its directory), waiting up to `wait`.
/// Links among the index's own files are removed first ([`drop_links`]). In a directory this
/// user cannot write, an existing lock file is locked through a read-only descriptor, and
/// none is needed when there is none (nobody can build there): a complete, current index in
/// a read-only directory is still read.
pub fn lock_builds(db_path: &Path, wait: std::time::Duration) -> CoreResult<BuildLock> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = db_path.parent() {
        std::fs::create_dir_all(dir)
            .context(|| format!("cannot create index dir {}", dir.display()))?;
    }
    drop_links(db_path);
    let path = side(db_path, ".lock");
    let opened = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path);
    let file = match opened {
        Ok(f) => f,
        Err(e) if read_only(&e) => match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BuildLock { _file: None })
            }
            Err(e) => {
                return Err(CoreError::io(
                    &e,
                    &format!("cannot open {}", path.display()),
                ))
            }
        },
        Err(e) => {
            return Err(CoreError::io(
                &e,
                &format!("cannot open {}", path.display()),
            ))
        }
    };
    let deadline = std::time::Instant::now() + wait;
    // SAFETY: flock on a descriptor this function owns for the whole call.
    while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(CoreError::io(
                &err,
                &format!("cannot lock {}", path.display()),
            ));
        }
        if std::time::Instant::now() >= deadline {
            return Err(CoreError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "another build of this index has held {} for over {} s",
                    path.display(),
                    wait.as_secs()
                ),
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(BuildLock { _file: Some(file) })
}

/// A side-file name for one cold build, unique per call (`recon.db.building-<pid>-<n>`): two
/// builds in one process never share a file.
pub fn build_path(db_path: &Path) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    side(db_path, &format!(".building-{}-{n}", std::process::id()))
}

/// Why the existing `db_path` cannot be trusted, if it cannot: `PRAGMA quick_check` fails
/// (a missing table is caught by [`open`] on every run). The check reads every page (0.4 s
/// on a 218 MB index), so it runs only when the file is not as the last build left it: each
/// build records the database's size and mtime in `recon.db.checked` ([`trust`]); anything
/// else touching the file — a truncation, random or zeroed pages, another tool — changes them.
pub fn damage(db_path: &Path) -> Option<String> {
    let stamp = file_stamp(db_path)?;
    if std::fs::read_to_string(side(db_path, ".checked")).ok() == Some(stamp) {
        return None;
    }
    let verdict = (|| -> Result<Option<String>, rusqlite::Error> {
        let conn = Connection::open(db_path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let ok: String = conn.query_row("PRAGMA quick_check(1)", [], |r| r.get(0))?;
        Ok((ok != "ok").then(|| format!("quick_check: {ok}")))
    })();
    match verdict {
        Ok(None) => {
            trust(db_path);
            None
        }
        Ok(Some(why)) => Some(why),
        // Busy or unreadable is not damage: leave it to the build to report.
        Err(e) => CoreError::from(e).damage(),
    }
}

/// Size and mtime of `db_path` as one line (`None` when it does not exist).
fn file_stamp(db_path: &Path) -> Option<String> {
    let m = std::fs::metadata(db_path).ok()?;
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(format!("{} {mtime}\n", m.len()))
}

/// Records `db_path` as sound as it is now (this process just wrote or checked it); a stamp
/// already recorded is not rewritten (an unchanged index is opened without a write).
pub fn trust(db_path: &Path) {
    let Some(stamp) = file_stamp(db_path) else {
        return;
    };
    let checked = side(db_path, ".checked");
    if std::fs::read_to_string(&checked).ok() != Some(stamp.clone()) {
        let _ = write_no_follow(&checked, stamp.as_bytes());
    }
}

/// Writes `data` to `path`, replacing a link there instead of writing through it: the check
/// stamp of a seed's index is written outside this run's build lock, where a link may have
/// appeared since [`drop_links`] last ran.
fn write_no_follow(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        std::fs::remove_file(path)?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?
        .write_all(data)
}

/// Removes a damaged database and its WAL side files, so the next build starts cold.
pub fn discard(db_path: &Path) -> CoreResult<()> {
    for p in [
        db_path.to_path_buf(),
        side(db_path, ".checked"),
        side(db_path, "-wal"),
        side(db_path, "-shm"),
    ] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(CoreError::io(
                    &e,
                    &format!("cannot remove damaged {}", p.display()),
                ))
            }
        }
    }
    Ok(())
}

/// Starts a refresh's write transaction with `BEGIN IMMEDIATE`: the write lock is taken up
/// front, under the busy timeout. A deferred transaction that reads first and upgrades later
/// fails at once with "database is locked" when another writer committed in between.
pub fn begin_write(conn: &mut Connection) -> CoreResult<rusqlite::Transaction<'_>> {
    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(CoreError::from)
}

/// WAL size past which a refresh checkpoints with `TRUNCATE` (default 64 MiB): automatic
/// checkpoints never shrink the file, and after big refreshes it stayed at 158 MB.
pub const WAL_TRUNCATE_BYTES: u64 = 64 << 20;

/// Checkpoints and truncates the WAL of `conn`'s database when it has grown past
/// `limit` bytes; a busy checkpoint (a reader holds old frames) is left for next time.
pub fn shrink_wal(conn: &Connection, db_path: &Path, limit: u64) {
    let wal = std::fs::metadata(side(db_path, "-wal")).map_or(0, |m| m.len());
    if wal > limit {
        let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
}

/// Opens a brand-new database file for a first (cold) build: no journal, no fsync, a large
/// page cache. Safe only because the file is private to this run until it is renamed into
/// place — an interrupted build leaves the side file behind, never a half-written `recon.db`.
/// Temporary tables and sorts (the node stage of [`super::bulk`], index builds) keep SQLite's
/// default of spilling to temporary files past the cache size, so memory stays bounded on a
/// large tree (with `temp_store=MEMORY` a 100k-file build held them all in RAM).
pub fn open_bulk(path: &Path) -> CoreResult<Connection> {
    for p in [path.to_path_buf(), side(path, "-journal")] {
        if p.exists() {
            std::fs::remove_file(&p).context(|| format!("cannot remove stale {}", p.display()))?;
        }
    }
    let conn = Connection::open(path)?;
    conn.execute_batch("PRAGMA page_size=16384;")?;
    conn.execute_batch(PRIVATE_PRAGMAS)?;
    create_schema(&conn)?;
    Ok(conn)
}

/// How a database private to one run is written ([`open_bulk`], [`open_private`]).
const PRIVATE_PRAGMAS: &str =
    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;";

/// Opens an existing database file private to this run (a seed's copy, [`super::seed`]) the
/// way [`open_bulk`] opens a new one: no journal, no fsync, a large page cache. A seeded
/// refresh rewrites the rows of every file that differs, spread over the whole file (nodes
/// are stored in key order); through a WAL and SQLite's default 2 MB cache the sympy pair
/// spent 6 of its 7 seconds writing and re-reading the same pages.
pub fn open_private(path: &Path) -> CoreResult<Connection> {
    let conn = Connection::open(path)?;
    conn.execute_batch(PRIVATE_PRAGMAS)?;
    Ok(conn)
}

/// Removes side files of cold builds that were killed midway (`recon.db.building-<pid>-<n>`
/// whose process is gone, or of this process: the caller holds the [`BuildLock`], so no other
/// build of this process is under way), so interrupted runs do not pile up full-size copies of
/// the index. The liveness check reads `/proc`; where it does not exist, side files of other
/// processes are left alone.
pub fn remove_stale_builds(db_path: &Path) {
    let (Some(dir), Some(name)) = (db_path.parent(), db_path.file_name()) else {
        return;
    };
    let proc_root = Path::new("/proc");
    let have_proc = proc_root.join("self").exists();
    let me = std::process::id().to_string();
    let prefix = format!("{}.building-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        let dead = have_proc && !proc_root.join(pid).exists();
        if pid.parse::<u32>().is_ok() && (pid == me || dead) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `path` with `suffix` appended to its file name (`recon.db` → `recon.db-wal`).
pub fn side(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    std::path::PathBuf::from(s)
}

/// Moves a finished bulk build over `db_path` (removing WAL side files that belonged to no
/// database: the target did not exist when the build started).
pub fn install(built: &Path, db_path: &Path) -> CoreResult<()> {
    for suffix in ["-wal", "-shm"] {
        let p = side(db_path, suffix);
        if p.exists() && !db_path.exists() {
            let _ = std::fs::remove_file(&p);
        }
    }
    std::fs::rename(built, db_path)
        .context(|| format!("cannot move {} to {}", built.display(), db_path.display()))?;
    Ok(())
}

/// Opens (creating if needed) the database, in WAL mode, with a schema of the current version.
pub fn open(path: &Path) -> CoreResult<Connection> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .context(|| format!("cannot create index dir {}", dir.display()))?;
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Leave the WAL for SQLite's automatic checkpoints instead of checkpointing (and
    // fsyncing) on every close: a refresh is one short-lived connection, and that final
    // checkpoint cost more than a small refresh itself. Readers see the WAL either way.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )?;
    // Only a missing table/row or another version resets the index; any other error (a busy
    // or unreadable file) is reported rather than silently triggering a full rebuild.
    let version: Option<String> = match conn.query_row(
        "SELECT value FROM meta WHERE key='schema_version'",
        [],
        |r| r.get(0),
    ) {
        Ok(v) => Some(v),
        Err(rusqlite::Error::QueryReturnedNoRows) => None,
        Err(e) if e.to_string().contains("no such table") => None,
        Err(e) => return Err(e.into()),
    };
    if version.as_deref() == Some(index_version().as_str()) {
        // A table of the current schema gone (dropped, or its root page lost) would be
        // recreated empty below while `meta` still counts its rows: damage, not a fresh start.
        for t in TABLES {
            let n: i64 = conn.query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name=?1",
                [t],
                |r| r.get(0),
            )?;
            if n == 0 {
                return Err(CoreError::Corrupt(format!(
                    "recon.db: table {t} is missing"
                )));
            }
        }
        for v in VIEWS {
            let n: i64 = conn.query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type='view' AND name=?1",
                [v],
                |r| r.get(0),
            )?;
            if n == 0 {
                return Err(CoreError::Corrupt(format!("recon.db: view {v} is missing")));
            }
        }
    } else {
        drop_all(&conn)?;
    }
    create_schema(&conn)?;
    Ok(conn)
}

/// Drops every table and view of an index of another schema (whatever that schema named
/// them: `nodes` was a table up to schema 8 and is a view since, and `DROP TABLE` refuses a
/// view), so [`create_schema`] starts from an empty file.
fn drop_all(conn: &Connection) -> CoreResult<()> {
    let objects: Vec<(String, String)> = conn
        .prepare(
            "SELECT type, name FROM sqlite_master WHERE type IN ('view', 'table') \
             AND name NOT LIKE 'sqlite_%' ORDER BY type = 'table'",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (kind, name) in objects {
        let kind = if kind == "view" { "VIEW" } else { "TABLE" };
        conn.execute_batch(&format!(
            "DROP {kind} IF EXISTS \"{}\";",
            name.replace('"', "\"\"")
        ))?;
    }
    Ok(())
}

/// Creates the tables (if absent) and stamps the schema version; shared by the bulk cold
/// build and the incremental open. An index already stamped is not written to: every open
/// of an unchanged index used to commit this one row.
pub(super) fn create_schema(conn: &Connection) -> CoreResult<()> {
    conn.execute_batch(SCHEMA)?;
    let version = index_version();
    let stamped: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if stamped.as_deref() != Some(version.as_str()) {
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?1)",
            [version],
        )?;
    }
    Ok(())
}

/// The graph tables with text ids in place of keys, as TEMP views shadowing the tables on one
/// connection: what tests (and people) read to compare graphs by id.
pub const TEXT_ID_VIEWS: &str = "
CREATE TEMP VIEW nodes AS SELECT qualname || ':' || line AS id, kind, name, qualname, file, line, col, end_line FROM main.nodes;
CREATE TEMP VIEW edges AS SELECT s.qualname || ':' || s.line AS src, d.qualname || ':' || d.line AS dst, e.type AS type FROM main.edges e JOIN main.nodes s ON s.id = e.src JOIN main.nodes d ON d.id = e.dst;
CREATE TEMP VIEW defs_meta AS SELECT n.qualname || ':' || n.line AS id, m.signature AS signature, m.doc AS doc FROM main.defs_meta m JOIN main.nodes n ON n.id = m.id;
CREATE TEMP VIEW unresolved AS SELECT u.name AS name, n.qualname || ':' || n.line AS node_id, u.file AS file, u.line AS line, u.col AS col FROM main.unresolved u JOIN main.nodes n ON n.id = u.node_id;
";

/// Opens `db` with the text-id views of [`TEXT_ID_VIEWS`] (a test helper).
///
/// # Panics
///
/// When the database cannot be opened or the views cannot be created.
#[cfg(test)]
pub fn open_with_text_ids(db: &Path) -> Connection {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch(TEXT_ID_VIEWS).unwrap();
    conn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_stamp_replaces_a_link_instead_of_writing_through_it() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("recon.db");
        std::fs::write(&db, b"x").unwrap();
        let target = d.path().join("precious");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, side(&db, ".checked")).unwrap();
        trust(&db);
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(side(&db, ".checked"))
            .unwrap()
            .is_file());
    }

    #[test]
    fn node_keys_are_stable_positive_and_distinct() {
        // Pinned: a different key function is a schema change (SCHEMA_VERSION).
        assert_eq!(node_key("a.f:1"), node_key("a.f:1"));
        assert!(node_key("a.f:1") >= 0 && node_key("") >= 0);
        assert_ne!(node_key("a.f:1"), node_key("a.f:2"));
        assert_eq!(node_key("m:1"), 0x2978_6b77_6f5b_d028);
    }
}
