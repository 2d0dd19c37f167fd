//! Which indexes this user's ctxfast wrote.
//!
//! A repository can ship its own `.ctxfast/` (a clone brings it along), so a `recon.db` found
//! on disk may hold rows that describe other source: a function that does not exist would
//! reach the graph and the window. Every index this user's ctxfast writes therefore carries an
//! owner stamp in `meta`: a random `owner_nonce` and `owner_tag`, the HMAC-SHA256 under the
//! user's secret key (kept by the embedder, e.g. in the user's configuration directory) of
//! the nonce and the database's canonical path. Without the key nobody can make a tag that
//! verifies, and a stamped index copied from one place to another does not verify at the new
//! place. An index whose stamp does not verify is rebuilt from scratch, a seed whose stamp
//! does not verify is passed over, and readers refuse it until then.

use crate::error::CoreResult;
use hmac::{Hmac, Mac};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use sha2::Sha256;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a tag binds besides the nonce and the path: a stamp of another format never verifies.
const DOMAIN: &[u8] = b"ctxfast-index-owner-v1\0";

/// The tag of an index with `nonce` at `db_path` under `key` (lowercase hex). The path is
/// made canonical through its directory (the database itself may not exist yet).
///
/// # Panics
///
/// Never in practice: HMAC takes a key of any length.
pub fn tag(key: &[u8], nonce: &str, db_path: &Path) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(DOMAIN);
    mac.update(nonce.as_bytes());
    mac.update(b"\0");
    mac.update(canonical(db_path).as_os_str().as_encoded_bytes());
    hex(&mac.finalize().into_bytes())
}

/// `db_path` with its directory resolved (links, `..`), or as given when that fails.
fn canonical(db_path: &Path) -> PathBuf {
    let (Some(dir), Some(name)) = (db_path.parent(), db_path.file_name()) else {
        return db_path.to_path_buf();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::canonicalize(dir).map_or_else(|_| db_path.to_path_buf(), |d| d.join(name))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// Why the stamp read through `conn` does not verify, if it does not.
pub fn check(conn: &Connection, key: &[u8], db_path: &Path) -> Option<String> {
    let get = |k: &str| -> rusqlite::Result<Option<String>> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [k], |r| r.get(0))
            .optional()
    };
    match (get("owner_nonce"), get("owner_tag")) {
        (Ok(Some(nonce)), Ok(Some(found))) => {
            let want = tag(key, &nonce, db_path);
            (!constant_time_eq(want.as_bytes(), found.as_bytes()))
                .then(|| "its owner stamp does not verify".to_string())
        }
        (Ok(_), Ok(_)) => Some("it carries no owner stamp".into()),
        (Err(e), _) | (_, Err(e)) => Some(format!("its owner stamp cannot be read ({e})")),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why the index at `db_path` was not written by the holder of `key` (`None`: it was, or
/// there is no file there). A file that is not a database at all is foreign too.
pub fn foreign(db_path: &Path, key: &[u8]) -> Option<String> {
    if std::fs::symlink_metadata(db_path).is_err() {
        return None;
    }
    match open(db_path, OpenFlags::SQLITE_OPEN_READ_ONLY) {
        Ok(conn) => check(&conn, key, db_path),
        Err(e) => Some(format!("it cannot be opened ({e})")),
    }
}

/// Stamps the index at `db_path` as written by the holder of `key`, unless its stamp already
/// verifies (an unchanged index is opened read-only, without a write). A new nonce each time:
/// nothing of an earlier stamp is reused.
pub fn stamp(db_path: &Path, key: &[u8]) -> CoreResult<()> {
    if foreign(db_path, key).is_none() {
        return Ok(());
    }
    write_stamp(
        &open(db_path, OpenFlags::SQLITE_OPEN_READ_WRITE)?,
        key,
        db_path,
    )
}

/// Writes a new owner stamp through `conn`, for the index that will live at `db_path` (a
/// first build's side file is stamped for the place it is renamed to).
pub fn write_stamp(conn: &Connection, key: &[u8], db_path: &Path) -> CoreResult<()> {
    let nonce = hex(&random_bytes::<16>()?);
    let t = tag(key, &nonce, db_path);
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('owner_nonce', ?1), ('owner_tag', ?2)",
        [nonce, t],
    )?;
    Ok(())
}

/// A short-lived connection that leaves the WAL to the index's own connections: closing the
/// last connection would otherwise checkpoint (and fsync) it on every run, as
/// [`super::store::open`] explains.
fn open(db_path: &Path, mode: OpenFlags) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(db_path, mode | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )?;
    Ok(conn)
}

fn random_bytes<const N: usize>() -> CoreResult<[u8; N]> {
    use std::io::Read;
    let mut b = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| crate::error::CoreError::io(&e, "cannot read /dev/urandom"))?;
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_with_meta(path: &Path) -> Connection {
        let c = Connection::open(path).unwrap();
        c.execute_batch("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);")
            .unwrap();
        c
    }

    #[test]
    fn a_stamp_verifies_only_under_its_key_and_at_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("recon.db");
        drop(db_with_meta(&db));
        assert!(foreign(&db, b"k1").unwrap().contains("no owner stamp"));
        stamp(&db, b"k1").unwrap();
        assert_eq!(foreign(&db, b"k1"), None);
        assert!(foreign(&db, b"k2").unwrap().contains("does not verify"));
        let moved = dir.path().join("other.db");
        std::fs::copy(&db, &moved).unwrap();
        assert!(foreign(&moved, b"k1").is_some());
    }

    #[test]
    fn a_verified_stamp_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("recon.db");
        drop(db_with_meta(&db));
        stamp(&db, b"k").unwrap();
        let nonce = |db: &Path| -> String {
            Connection::open(db)
                .unwrap()
                .query_row("SELECT value FROM meta WHERE key='owner_nonce'", [], |r| {
                    r.get(0)
                })
                .unwrap()
        };
        let first = nonce(&db);
        stamp(&db, b"k").unwrap();
        assert_eq!(nonce(&db), first);
    }

    #[test]
    fn a_file_that_is_no_database_is_foreign_and_a_missing_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("recon.db");
        assert_eq!(foreign(&db, b"k"), None);
        std::fs::write(&db, b"not a database at all, just bytes").unwrap();
        assert!(foreign(&db, b"k").is_some());
    }
}
