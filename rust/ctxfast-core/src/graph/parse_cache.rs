//! Content-addressed cache of per-file extractions, shared by every index on the machine.
//!
//! Batch harnesses index hundreds of trees that are versions of the same few repositories;
//! most of their files are byte-identical from one tree to the next, and parsing is the
//! dominant cost of a cold build. An extraction ([`RawFile`] plus its parse error) is a pure
//! function of the file's bytes, its language, the module name it is parsed under (relative
//! imports and qualnames are written against it) and the extractor/grammar version — so it is
//! cached under the SHA-256 of exactly those, never under a path or a tree.
//!
//! Storage is one SQLite file in WAL mode (`parse-cache.db` in the cache directory): any
//! number of processes read it concurrently, and each index run writes its new entries and
//! its hit timestamps in one `BEGIN IMMEDIATE` transaction (writers queue on the busy
//! timeout instead of failing). The payload is bounded: when the stored bytes pass
//! `max_bytes`, the least recently used entries are deleted down to [`LOW_WATER`] of it
//! (SQLite reuses the freed pages, so the file stops growing at about the bound).
//!
//! The cache only ever speeds a run up: an entry that fails to decode is parsed again, and a
//! cache that cannot be opened or written is reported in the run's errors and skipped.

use super::lang::{self, Lang};
use super::raw::RawFile;
use crate::error::{CoreError, CoreResult, IoContext};
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Payload bound of a cache directory unless configured (2 GiB: the extractions of several
/// hundred Django-sized trees' distinct files).
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// Eviction deletes least recently used entries until the payload is this share of the bound,
/// so a full cache does not evict on every run.
pub const LOW_WATER: f64 = 0.9;

/// The database file inside the cache directory.
pub const FILE_NAME: &str = "parse-cache.db";

/// Bumped whenever an extractor's output for the same bytes changes (a new field, a fixed
/// visitor): old entries then simply stop matching. Grammar changes are covered by the
/// grammar fingerprint in the key.
pub const EXTRACTOR_VERSION: u32 = 12;

/// Where the cache lives and how large it may grow.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseCacheOptions {
    pub dir: PathBuf,
    pub max_bytes: u64,
}

impl ParseCacheOptions {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ParseCacheOptions {
            dir: dir.into(),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

type Key = [u8; 32];

/// A new entry waiting for the flush: key, encoded extraction, parse error.
type Entry = (Key, Vec<u8>, Option<String>);

/// An open cache for one index run: lookups go to SQLite as the parse workers ask; new
/// entries and hits are queued and written by [`ParseCache::flush`] in one transaction.
pub struct ParseCache {
    conn: Mutex<Connection>,
    max_bytes: u64,
    new_entries: Mutex<Vec<Entry>>,
    hit_keys: Mutex<Vec<Key>>,
    hits: AtomicUsize,
}

/// The cache key of one extraction.
pub fn key(lang: Lang, module: &str, bytes: &[u8]) -> Key {
    let mut h = Sha256::new();
    h.update(EXTRACTOR_VERSION.to_le_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update([0]);
    h.update(lang.as_str().as_bytes());
    h.update([0]);
    h.update(lang.grammar_fingerprint().as_bytes());
    h.update([0]);
    h.update(module.as_bytes());
    h.update([0]);
    h.update(bytes);
    h.finalize().into()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl ParseCache {
    /// Opens (creating if needed) the cache in `opts.dir`.
    pub fn open(opts: &ParseCacheOptions) -> CoreResult<ParseCache> {
        // Private to this user (0700): the cache holds extractions of every tree indexed.
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&opts.dir)
            .context(|| format!("cannot create parse cache dir {}", opts.dir.display()))?;
        let conn = open_db(&opts.dir.join(FILE_NAME))?;
        Ok(ParseCache {
            conn: Mutex::new(conn),
            max_bytes: opts.max_bytes,
            new_entries: Mutex::new(vec![]),
            hit_keys: Mutex::new(vec![]),
            hits: AtomicUsize::new(0),
        })
    }

    /// The extraction of `bytes`: from the cache when it holds one, else parsed (and queued
    /// for [`ParseCache::flush`]).
    pub fn extract(
        &self,
        lang: Lang,
        bytes: &[u8],
        module: &str,
        end_line: u32,
    ) -> (RawFile, Option<String>) {
        let k = key(lang, module, bytes);
        if let Some((raw, perr)) = self.get(&k) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            lock(&self.hit_keys).push(k);
            return (raw, perr);
        }
        let ex = lang::extract(lang, bytes, module, end_line);
        let blob = ex.raw.encode();
        lock(&self.new_entries).push((k, blob, ex.parse_error.clone()));
        (ex.raw, ex.parse_error)
    }

    fn get(&self, k: &Key) -> Option<(RawFile, Option<String>)> {
        let row: Option<(Vec<u8>, Option<String>)> = lock(&self.conn)
            .prepare_cached("SELECT data, error FROM entries WHERE key = ?1")
            .and_then(|mut st| {
                st.query_row([&k[..]], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .ok()
            .flatten();
        let (data, perr) = row?;
        RawFile::decode(&data).map(|raw| (raw, perr))
    }

    /// How many extractions this run took from the cache.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// Writes the queued entries and hit times, then evicts down to [`LOW_WATER`] of the bound
    /// if the payload passed it — one immediate transaction, so concurrent writers serialise.
    pub fn flush(&self) -> CoreResult<()> {
        let entries = std::mem::take(&mut *lock(&self.new_entries));
        let hit_keys = std::mem::take(&mut *lock(&self.hit_keys));
        if entries.is_empty() && hit_keys.is_empty() {
            return Ok(());
        }
        let mut conn = lock(&self.conn);
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let now = now_ms();
        let mut added: i64 = 0;
        {
            let mut ins = tx.prepare_cached(
                "INSERT OR IGNORE INTO entries(key, data, error, size, used) \
                     VALUES(?1, ?2, ?3, ?4, ?5)",
            )?;
            for (k, data, perr) in &entries {
                let size = entry_size(data, perr.as_deref());
                if ins.execute(params![&k[..], data, perr, size, now])? == 1 {
                    added += size;
                }
            }
            let mut touch = tx.prepare_cached("UPDATE entries SET used = ?2 WHERE key = ?1")?;
            for k in &hit_keys {
                touch.execute(params![&k[..], now])?;
            }
        }
        let total: i64 = tx.query_row(
            "UPDATE meta SET value = value + ?1 WHERE key = 'payload_bytes' RETURNING value",
            [added],
            |r| r.get(0),
        )?;
        if total as u64 > self.max_bytes {
            evict(&tx, total, (self.max_bytes as f64 * LOW_WATER) as i64)?;
        }
        Ok(tx.commit()?)
    }
}

/// Bytes an entry counts against the bound: its blob, its error text and the key.
fn entry_size(data: &[u8], perr: Option<&str>) -> i64 {
    (data.len() + perr.map_or(0, str::len) + 32) as i64
}

/// Deletes least recently used entries until the payload is at most `target`.
fn evict(tx: &rusqlite::Transaction<'_>, mut total: i64, target: i64) -> CoreResult<()> {
    let victims: Vec<(Vec<u8>, i64)> = {
        let mut st = tx.prepare("SELECT key, size FROM entries ORDER BY used, key")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut out = vec![];
        for row in rows {
            if total <= target {
                break;
            }
            let (k, size): (Vec<u8>, i64) = row?;
            total -= size;
            out.push((k, size));
        }
        out
    };
    let mut del = tx.prepare_cached("DELETE FROM entries WHERE key = ?1")?;
    for (k, _) in &victims {
        del.execute([k])?;
    }
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'payload_bytes'",
        [total],
    )?;
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn open_db(path: &Path) -> CoreResult<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_mins(1))?;
    // Switching a new file to WAL can answer SQLITE_BUSY at once, without the busy handler,
    // while another process is creating the same cache: retry within the same 60 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => break,
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => return Err(e.into()),
        }
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(
        "BEGIN IMMEDIATE;
         CREATE TABLE IF NOT EXISTS entries(key BLOB PRIMARY KEY, data BLOB NOT NULL, error TEXT,
             size INT NOT NULL, used INT NOT NULL) WITHOUT ROWID;
         CREATE INDEX IF NOT EXISTS entries_used ON entries(used);
         CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INT NOT NULL);
         INSERT OR IGNORE INTO meta(key, value) VALUES('payload_bytes', 0);
         COMMIT;",
    )?;
    Ok(conn)
}

/// Payload bytes currently recorded in the cache at `dir` (for tests and reports).
pub fn payload_bytes(dir: &Path) -> CoreResult<u64> {
    let conn = open_db(&dir.join(FILE_NAME))?;
    conn.query_row(
        "SELECT value FROM meta WHERE key = 'payload_bytes'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|v| v as u64)
    .map_err(CoreError::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{index, IndexOptions};
    use std::fs;

    /// A small tree touching every extractor.
    const TREE: &[(&str, &str)] = &[
        ("pkg/__init__.py", ""),
        ("pkg/a.py", "class A:\n    def f(self):\n        return 1\n"),
        (
            "pkg/b.py",
            "from .a import A\n\n\ndef g():\n    return A().f()\n",
        ),
        ("c.py", "import pkg.b\n\n\ndef h():\n    return pkg.b.g()\n"),
        (
            "web/x.js",
            "import { y } from './y.js';\nexport function x() { return y(); }\n",
        ),
        ("web/y.js", "export function y() { return 1; }\n"),
        (
            "go/m.go",
            "package m\n\nfunc F() int { return G() }\n\nfunc G() int { return 1 }\n",
        ),
        (
            "src/lib.rs",
            "pub fn r() -> u32 { s() }\nfn s() -> u32 { 1 }\n",
        ),
        (
            "J.java",
            "class J { int f() { return g(); } int g() { return 1; } }\n",
        ),
        ("broken.py", "def oops(:\n    pass\n"),
    ];

    fn write_tree(root: &Path, files: &[(&str, &str)]) {
        for (p, text) in files {
            let path = root.join(p);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }

    /// Every row of every table of the index, sorted, the run timestamps left out.
    fn dump(db: &Path) -> Vec<String> {
        crate::graph::tests::every_row(db, &[])
    }

    fn cached(dir: &Path) -> IndexOptions {
        IndexOptions {
            parse_cache: Some(ParseCacheOptions::new(dir)),
            ..IndexOptions::default()
        }
    }

    #[test]
    fn defaults_are_pinned() {
        assert_eq!(DEFAULT_MAX_BYTES, 2 * 1024 * 1024 * 1024);
        assert_eq!(LOW_WATER, 0.9);
        assert_eq!(FILE_NAME, "parse-cache.db");
        assert_eq!(ParseCacheOptions::new("/x").max_bytes, DEFAULT_MAX_BYTES);
        assert!(IndexOptions::default().parse_cache.is_none());
    }

    #[test]
    fn a_second_version_reuses_unchanged_files_and_builds_the_identical_graph() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("cache");
        let (v1, v2) = (d.path().join("v1"), d.path().join("v2"));
        write_tree(&v1, TREE);
        write_tree(&v2, TREE);
        // v2: one file edited (its interface moves), one added.
        write_tree(
            &v2,
            &[
                (
                    "pkg/a.py",
                    "\nclass A:\n    def f(self):\n        return 2\n",
                ),
                (
                    "pkg/new.py",
                    "from pkg.a import A\n\n\ndef n():\n    return A()\n",
                ),
            ],
        );
        let s1 = index(&v1, &d.path().join("i1/recon.db"), &cached(&cache)).unwrap();
        assert_eq!((s1.files_parsed, s1.cache_hits), (TREE.len(), 0));
        let plain1 = d.path().join("p1/recon.db");
        index(&v1, &plain1, &IndexOptions::default()).unwrap();
        assert_eq!(dump(&d.path().join("i1/recon.db")), dump(&plain1));

        let db2 = d.path().join("i2/recon.db");
        let s2 = index(&v2, &db2, &cached(&cache)).unwrap();
        assert_eq!(s2.files_parsed, TREE.len() + 1);
        assert_eq!(s2.cache_hits, TREE.len() - 1);
        let plain2 = d.path().join("p2/recon.db");
        let p2 = index(&v2, &plain2, &IndexOptions::default()).unwrap();
        assert_eq!(dump(&db2), dump(&plain2));
        // Parse errors come back from the cache as well.
        assert_eq!(s2.errors, p2.errors);
        assert!(s2.errors.iter().any(|(p, _)| p == "broken.py"));
    }

    #[test]
    fn an_unusable_cache_is_reported_and_the_index_still_built() {
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("t");
        write_tree(&tree, TREE);
        let not_a_dir = d.path().join("file");
        fs::write(&not_a_dir, "x").unwrap();
        let db = d.path().join("i/recon.db");
        let s = index(&tree, &db, &cached(&not_a_dir)).unwrap();
        assert_eq!((s.files_parsed, s.cache_hits), (TREE.len(), 0));
        assert!(
            s.errors
                .iter()
                .any(|(p, e)| p == &not_a_dir.display().to_string() && e.contains("parse cache")),
            "{:?}",
            s.errors
        );
        let plain = d.path().join("p/recon.db");
        index(&tree, &plain, &IndexOptions::default()).unwrap();
        assert_eq!(dump(&db), dump(&plain));
    }

    #[test]
    fn the_module_name_is_part_of_the_key() {
        // The same bytes under another package parse to other relative-import targets.
        let src = b"from .a import A\n";
        assert_ne!(
            key(Lang::Python, "pkg.b", src),
            key(Lang::Python, "other.b", src)
        );
        assert_ne!(
            key(Lang::Python, "pkg.b", src),
            key(Lang::JavaScript, "pkg.b", src)
        );
        assert_eq!(
            key(Lang::Python, "pkg.b", src),
            key(Lang::Python, "pkg.b", src)
        );
    }

    #[test]
    fn undecodable_entries_are_parsed_again() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("cache");
        let tree = d.path().join("t");
        write_tree(&tree, TREE);
        index(&tree, &d.path().join("a/recon.db"), &cached(&cache)).unwrap();
        let conn = Connection::open(cache.join(FILE_NAME)).unwrap();
        conn.execute("UPDATE entries SET data = x'00ff'", [])
            .unwrap();
        let db = d.path().join("b/recon.db");
        let s = index(&tree, &db, &cached(&cache)).unwrap();
        assert_eq!(s.cache_hits, 0);
        let plain = d.path().join("p/recon.db");
        index(&tree, &plain, &IndexOptions::default()).unwrap();
        assert_eq!(dump(&db), dump(&plain));
    }

    #[test]
    fn the_payload_stays_under_the_bound_evicting_least_recently_used() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("cache");
        let (old, new) = (d.path().join("old"), d.path().join("new"));
        let files: Vec<(String, String)> = (0..40)
            .map(|i| (format!("m{i}.py"), format!("def f{i}():\n    return {i}\n")))
            .collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        write_tree(&old, &refs[..20]);
        write_tree(&new, &refs[20..]);
        let unbounded = d.path().join("probe");
        index(&old, &d.path().join("x/recon.db"), &cached(&unbounded)).unwrap();
        let per_tree = payload_bytes(&unbounded).unwrap();
        // Room for about one and a half trees: indexing the second evicts the first's oldest.
        let opts = IndexOptions {
            parse_cache: Some(ParseCacheOptions {
                dir: cache.clone(),
                max_bytes: per_tree * 3 / 2,
            }),
            ..IndexOptions::default()
        };
        index(&old, &d.path().join("o/recon.db"), &opts).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        index(&new, &d.path().join("n/recon.db"), &opts).unwrap();
        let payload = payload_bytes(&cache).unwrap();
        assert!(payload <= per_tree * 3 / 2, "{payload} > bound");
        let conn = Connection::open(cache.join(FILE_NAME)).unwrap();
        let stored: i64 = conn
            .query_row("SELECT SUM(size) FROM entries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored as u64, payload);
        // The newest tree is whole; the evicted entries are the old tree's.
        let s = index(&new, &d.path().join("n2/recon.db"), &opts).unwrap();
        assert_eq!(s.cache_hits, 20);
        let s = index(&old, &d.path().join("o2/recon.db"), &opts).unwrap();
        assert!(s.cache_hits < 20, "{}", s.cache_hits);
    }

    #[test]
    fn concurrent_writers_share_one_cache() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("cache");
        let tree = d.path().join("t");
        write_tree(&tree, TREE);
        let plain = d.path().join("p/recon.db");
        index(&tree, &plain, &IndexOptions::default()).unwrap();
        let want = dump(&plain);
        std::thread::scope(|s| {
            for n in 0..4 {
                let (tree, cache, want, base) = (&tree, &cache, &want, d.path());
                s.spawn(move || {
                    let db = base.join(format!("w{n}/recon.db"));
                    let st = index(tree, &db, &cached(cache)).unwrap();
                    assert!(
                        st.errors.iter().all(|(p, _)| p == "broken.py"),
                        "{:?}",
                        st.errors
                    );
                    assert_eq!(&dump(&db), want);
                });
            }
        });
        let conn = Connection::open(cache.join(FILE_NAME)).unwrap();
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM entries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n as usize, TREE.len());
        let sum: i64 = conn
            .query_row("SELECT SUM(size) FROM entries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sum as u64, payload_bytes(&cache).unwrap());
    }
}
