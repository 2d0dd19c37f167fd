//! The index store under hostile conditions: damage, leftovers of killed builds, a WAL that
//! only grows, special files in the tree, names that are not UTF-8.

use ctxfast_core::graph::{discover, index, store, IndexOptions};
use std::fs;
use std::path::Path;

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, body) in files {
        let path = d.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }
    d
}

fn two_files() -> tempfile::TempDir {
    repo(&[
        ("a.py", "class A:\n    def f(self):\n        return 1\n"),
        ("b.py", "from a import A\n\ndef g():\n    return A().f()\n"),
    ])
}

#[test]
fn defaults_are_pinned() {
    let o = IndexOptions::default();
    assert_eq!(o.lock_wait, std::time::Duration::from_mins(2));
    assert_eq!(o.wal_truncate_bytes, 64 << 20);
    assert_eq!(store::DEFAULT_LOCK_WAIT.as_secs(), 120);
}

#[test]
fn a_garbage_index_is_rebuilt_with_the_reason_first_in_errors() {
    let d = two_files();
    let db = d.path().join(".ctxfast/recon.db");
    let cold = index(d.path(), &db, &IndexOptions::default()).unwrap();
    // Garbage written behind the builder's back changes the file's stamp: it is checked.
    fs::write(&db, vec![0x5a; 64 * 1024]).unwrap();
    let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!((s.nodes, s.edges), (cold.nodes, cold.edges));
    assert!(
        s.errors[0].1.contains("rebuilt from scratch"),
        "{:?}",
        s.errors
    );
    // The rebuilt file is stamped: the next run trusts it without reading every page.
    assert!(store::damage(&db).is_none());
    let stamp = fs::read_to_string(store::side(&db, ".checked")).unwrap();
    assert!(stamp.starts_with(&fs::metadata(&db).unwrap().len().to_string()));
}

#[test]
fn a_missing_table_found_mid_run_rebuilds() {
    let d = two_files();
    let db = d.path().join(".ctxfast/recon.db");
    let cold = index(d.path(), &db, &IndexOptions::default()).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("DROP TABLE file_stat;").unwrap();
    drop(conn);
    fs::write(
        d.path().join("a.py"),
        "class A:\n    def f(self):\n        return 2\n",
    )
    .unwrap();
    let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert_eq!((s.nodes, s.edges), (cold.nodes, cold.edges));
    assert!(
        s.errors[0].1.contains("index was damaged"),
        "{:?}",
        s.errors
    );
}

#[test]
fn build_files_of_dead_processes_and_of_this_one_are_removed_under_the_lock() {
    let d = two_files();
    let db = d.path().join(".ctxfast/recon.db");
    fs::create_dir_all(db.parent().unwrap()).unwrap();
    let mine = store::side(&db, &format!(".building-{}-99", std::process::id()));
    let dead = store::side(&db, &format!(".building-{}-0", u32::MAX - 1));
    for p in [&mine, &dead] {
        fs::write(p, b"half a build").unwrap();
    }
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    fs::write(&mine, b"left by a failed build").unwrap();
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    assert!(!mine.exists() && !dead.exists());
    let a = store::build_path(&db);
    let b = store::build_path(&db);
    assert_ne!(a, b, "every cold build gets its own side file");
}

#[test]
fn a_refresh_truncates_a_wal_past_the_limit() {
    let d = two_files();
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    fs::write(
        d.path().join("a.py"),
        "class A:\n    def f(self):\n        return 3\n",
    )
    .unwrap();
    let keep = IndexOptions::default();
    index(d.path(), &db, &keep).unwrap();
    let wal = store::side(&db, "-wal");
    assert!(
        fs::metadata(&wal).map_or(0, |m| m.len()) > 0,
        "the default leaves a small WAL"
    );
    fs::write(
        d.path().join("a.py"),
        "class A:\n    def f(self):\n        return 4\n",
    )
    .unwrap();
    let shrink = IndexOptions {
        wal_truncate_bytes: 0,
        ..IndexOptions::default()
    };
    index(d.path(), &db, &shrink).unwrap();
    assert_eq!(fs::metadata(&wal).map_or(0, |m| m.len()), 0);
}

#[test]
fn fifos_and_undecodable_names_are_recorded_never_opened() {
    use std::os::unix::ffi::OsStrExt;
    let d = two_files();
    let fifo = d.path().join("pipe.py");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo on a path this test owns.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let odd = d.path().join(std::ffi::OsStr::from_bytes(b"b_\xe9.py"));
    fs::write(&odd, "def odd():\n    return 1\n").unwrap();
    let db = d.path().join(".ctxfast/recon.db");
    let s = index(d.path(), &db, &IndexOptions::default()).unwrap();
    let reasons: std::collections::HashMap<_, _> = s.errors.into_iter().collect();
    assert_eq!(reasons["pipe.py"], discover::NOT_REGULAR);
    assert_eq!(reasons["b_\\xe9.py"], discover::UNDECODABLE_NAME);
    // Swapped in after the walk, a FIFO is refused at read time, without blocking.
    let err = discover::read_regular(&fifo, 1 << 20).unwrap_err();
    assert!(err.to_string().contains("not a regular file"));
    let link = d.path().join("link.py");
    std::os::unix::fs::symlink(d.path().join("a.py"), &link).unwrap();
    assert!(discover::read_regular(&link, 1 << 20).is_err());
    assert!(discover::read_regular(Path::new(&d.path().join("a.py")), 4).is_err());
}
