//! A refresh that finds nothing to do writes nothing: every read of an index refreshes it
//! first, and a commit per read cost time and looked like a change to every other reader.

use ctxfast_core::graph::{index, store, IndexOptions, RACY_NS};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn wal_len(db: &Path) -> u64 {
    fs::metadata(store::side(db, "-wal")).map_or(0, |m| m.len())
}

/// Read-only, so closing it does not checkpoint the WAL away.
fn run_start(db: &Path) -> i64 {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let conn = rusqlite::Connection::open_with_flags(db, flags).unwrap();
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'run_start_ns'",
        [],
        |r| r.get::<_, String>(0),
    )
    .unwrap()
    .parse()
    .unwrap()
}

#[test]
fn a_racy_file_is_recorded_once_then_refreshes_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.py");
    fs::write(&a, "def f():\n    return 1\n").unwrap();
    let old = SystemTime::now() - Duration::from_mins(1);
    fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    index(d.path(), &db, &opts).unwrap();
    // The recorded run start moved to just after the file's mtime: the file is racy (a
    // same-tick edit could hide), so the next refresh re-hashes it and records its own start,
    // under which the file is trusted unread.
    let mtime = old.duration_since(UNIX_EPOCH).unwrap().as_nanos() as i64;
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'run_start_ns'",
        [(mtime + RACY_NS / 2).to_string()],
    )
    .unwrap();
    drop(conn);
    let before = (wal_len(&db), run_start(&db));
    assert_eq!(index(d.path(), &db, &opts).unwrap().files_parsed, 0);
    let recorded = (wal_len(&db), run_start(&db));
    assert!(
        recorded.0 > before.0 && recorded.1 > mtime + RACY_NS,
        "{before:?} {recorded:?}"
    );
    let checked = fs::read_to_string(store::side(&db, ".checked")).unwrap();
    // Nothing is racy any more and nothing changed: no write (tests/test_noop_refresh.py
    // checks a fresh process, which reads the run record back from the index).
    for _ in 0..2 {
        assert_eq!(index(d.path(), &db, &opts).unwrap().files_parsed, 0);
        assert_eq!((wal_len(&db), run_start(&db)), recorded);
    }
    assert_eq!(
        fs::read_to_string(store::side(&db, ".checked")).unwrap(),
        checked
    );
}
