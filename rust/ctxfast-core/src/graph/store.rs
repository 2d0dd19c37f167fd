//! SQLite storage of the graph (`recon.db`): the spec §3.2 tables (`nodes`, `edges`,
//! `name_index`) plus `files`, `defs_meta` (signature + first docstring paragraph),
//! `unresolved`, `raw` (per-file extraction blobs for incremental refresh: the full one and its
//! interface part), `file_deps`
//! (which files a file's edges point into), `file_stat` (size and mtime of each file when it
//! was last hashed) and `meta`.
//!
//! WAL mode and one transaction per refresh: a reader (or a crash mid-index) always sees the
//! previous complete index.

use crate::error::{CoreError, CoreResult};
use rusqlite::Connection;
use std::path::Path;

/// Bumped whenever the schema, the raw blob format or what extraction records changes; a
/// mismatch rebuilds the index.
pub const SCHEMA_VERSION: &str = "6";

pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, sha256 TEXT, language TEXT, bytes INT, parse_error TEXT);
CREATE TABLE IF NOT EXISTS nodes(id TEXT PRIMARY KEY, kind TEXT, name TEXT, qualname TEXT, file TEXT, line INT, col INT, end_line INT);
CREATE TABLE IF NOT EXISTS edges(src TEXT, dst TEXT, type TEXT);
CREATE TABLE IF NOT EXISTS name_index(qualname TEXT);
CREATE TABLE IF NOT EXISTS defs_meta(id TEXT PRIMARY KEY, signature TEXT, doc TEXT);
CREATE TABLE IF NOT EXISTS unresolved(name TEXT, node_id TEXT, file TEXT, line INT, col INT);
CREATE TABLE IF NOT EXISTS raw(path TEXT PRIMARY KEY, data BLOB, iface BLOB);
CREATE TABLE IF NOT EXISTS file_deps(src_file TEXT, dst_file TEXT);
CREATE TABLE IF NOT EXISTS file_stat(path TEXT PRIMARY KEY, size INT, mtime_ns INT);
CREATE INDEX IF NOT EXISTS nodes_name ON nodes(name);
CREATE INDEX IF NOT EXISTS nodes_qualname ON nodes(qualname);
CREATE INDEX IF NOT EXISTS nodes_file ON nodes(file, line);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
CREATE INDEX IF NOT EXISTS name_index_q ON name_index(qualname);
CREATE INDEX IF NOT EXISTS unresolved_file ON unresolved(file);
CREATE INDEX IF NOT EXISTS file_deps_dst ON file_deps(dst_file);
CREATE INDEX IF NOT EXISTS file_deps_src ON file_deps(src_file);
";

/// Secondary indexes dropped during a cold bulk load and recreated by [`SCHEMA`].
pub const DROP_INDEXES: &str = "
DROP INDEX IF EXISTS nodes_name; DROP INDEX IF EXISTS nodes_qualname;
DROP INDEX IF EXISTS nodes_file; DROP INDEX IF EXISTS edges_src; DROP INDEX IF EXISTS edges_dst;
DROP INDEX IF EXISTS name_index_q; DROP INDEX IF EXISTS unresolved_file;
DROP INDEX IF EXISTS file_deps_dst; DROP INDEX IF EXISTS file_deps_src;
";

const TABLES: &[&str] = &[
    "meta",
    "files",
    "nodes",
    "edges",
    "name_index",
    "defs_meta",
    "unresolved",
    "raw",
    "file_deps",
    "file_stat",
];

pub fn db_err(op: &str, e: rusqlite::Error) -> CoreError {
    CoreError::Io(format!("recon.db {op}: {e}"))
}

/// Opens a brand-new database file for a first (cold) build: no journal, no fsync, a large
/// page cache. Safe only because the file is private to this run until it is renamed into
/// place — an interrupted build leaves the side file behind, never a half-written `recon.db`.
pub fn open_bulk(path: &Path) -> CoreResult<Connection> {
    for p in [path.to_path_buf(), side(path, "-journal")] {
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| CoreError::Io(format!("cannot remove stale {}: {e}", p.display())))?;
        }
    }
    let conn = Connection::open(path).map_err(|e| db_err("open", e))?;
    conn.execute_batch(
        "PRAGMA page_size=16384; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536; \
         PRAGMA temp_store=MEMORY;",
    )
    .map_err(|e| db_err("bulk pragmas", e))?;
    create_schema(&conn)?;
    Ok(conn)
}

/// Removes side files of cold builds that were killed midway (`recon.db.building-<pid>` whose
/// process is gone), so interrupted runs do not pile up full-size copies of the index. The
/// liveness check reads `/proc`; where it does not exist, side files are left alone.
pub fn remove_stale_builds(db_path: &Path) {
    let (Some(dir), Some(name)) = (db_path.parent(), db_path.file_name()) else {
        return;
    };
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return;
    }
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
        if pid.parse::<u32>().is_ok() && !proc_root.join(pid).exists() {
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
    std::fs::rename(built, db_path).map_err(|e| {
        CoreError::Io(format!(
            "cannot move {} to {}: {e}",
            built.display(),
            db_path.display()
        ))
    })
}

/// Opens (creating if needed) the database, in WAL mode, with a schema of the current version.
pub fn open(path: &Path) -> CoreResult<Connection> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            CoreError::Io(format!("cannot create index dir {}: {e}", dir.display()))
        })?;
    }
    let conn = Connection::open(path).map_err(|e| db_err("open", e))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(|e| db_err("busy_timeout", e))?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| db_err("journal_mode", e))?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(|e| db_err("synchronous", e))?;
    // Leave the WAL for SQLite's automatic checkpoints instead of checkpointing (and
    // fsyncing) on every close: a refresh is one short-lived connection, and that final
    // checkpoint cost more than a small refresh itself. Readers see the WAL either way.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .map_err(|e| db_err("no_ckpt_on_close", e))?;
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
        Err(e) => return Err(db_err("read schema version", e)),
    };
    if version.as_deref() != Some(SCHEMA_VERSION) {
        for t in TABLES {
            conn.execute_batch(&format!("DROP TABLE IF EXISTS {t};"))
                .map_err(|e| db_err("reset", e))?;
        }
    }
    create_schema(&conn)?;
    Ok(conn)
}

/// Creates the tables (if absent) and stamps the schema version; shared by the bulk cold
/// build and the incremental open.
fn create_schema(conn: &Connection) -> CoreResult<()> {
    conn.execute_batch(SCHEMA)
        .map_err(|e| db_err("schema", e))?;
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?1)",
        [SCHEMA_VERSION],
    )
    .map_err(|e| db_err("meta", e))?;
    Ok(())
}
