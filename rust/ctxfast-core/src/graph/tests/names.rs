//! A refresh resolves again only the files that look up a name the edit moved
//! ([`crate::graph::names`]), and still writes exactly a cold build's rows: each edit below
//! reaches some file only through a chain the narrowing must follow (a re-export through
//! `__init__` modules, an alias, a base class, a typed attribute, a star import), and is
//! checked both as an in-process refresh and as a new index seeded from the old tree's.

use super::*;

/// A package re-exporting through two `__init__` levels, and readers of each kind.
const BASE: &[(&str, &str)] = &[
    (
        "pkg/__init__.py",
        "from .core import *\nfrom .util import helper as assist\nfrom .extra import *\n",
    ),
    (
        "pkg/core/__init__.py",
        "from .basic import Basic, make\nfrom .sym import Symbol\n",
    ),
    (
        "pkg/core/basic.py",
        "from pkg.mixins import Left, Right\n\n\nclass Basic(Left):\n    def diff(self):\n        return 1\n\n\ndef make():\n    return Basic()\n",
    ),
    (
        "pkg/mixins.py",
        "class Left:\n    def spin(self):\n        return 1\n\n\nclass Right:\n    def spin(self):\n        return 2\n",
    ),
    (
        "pkg/core/sym.py",
        "from .basic import Basic\n\n\nclass Symbol(Basic):\n    def name(self):\n        return 'x'\n",
    ),
    (
        "pkg/util.py",
        "def helper():\n    return 1\n\n\ndef other():\n    return 2\n",
    ),
    ("pkg/extra.py", "def spare():\n    return 0\n"),
    (
        "pkg/holder.py",
        "from pkg.core import Basic\n\n\nclass Holder:\n    def __init__(self):\n        self.item = Basic()\n",
    ),
    (
        "app/use_sym.py",
        "from pkg import Symbol\n\n\ndef f():\n    return Symbol().diff()\n\n\nclass Mine(Symbol):\n    def go(self):\n        return self.spin()\n",
    ),
    (
        "app/use_make.py",
        "from pkg import make\n\n\ndef g():\n    return make()\n",
    ),
    (
        "app/use_assist.py",
        "from pkg import assist\n\n\ndef h():\n    return assist()\n",
    ),
    (
        "app/use_other.py",
        "from pkg.util import other\n\n\ndef k():\n    return other()\n",
    ),
    (
        "app/use_holder.py",
        "from pkg.holder import Holder\n\n\nclass User(Holder):\n    def run(self):\n        return self.item.diff()\n",
    ),
    (
        "app/unres.py",
        "from pkg import *\n\n\ndef u():\n    return newname() + spare()\n",
    ),
    ("app/alone.py", "def solo():\n    return 3\n"),
    (
        "app/star_left.py",
        "from pkg import *\n\n\ndef sl():\n    return Left()\n",
    ),
    (
        "app/later.py",
        "import pkg.core\n\n\ndef l():\n    return pkg.core.fresh.thing()\n",
    ),
];

/// One edit of [`BASE`]: files written (or, with `None`, removed).
type Edit = (
    &'static str,
    &'static [(&'static str, Option<&'static str>)],
);

const EDITS: &[Edit] = &[
    // A definition moves down: every edge into `diff` and `make` gets a new end key,
    // including those reached through `Symbol`'s base and `Holder`'s typed attribute.
    (
        "definition moves lines",
        &[(
            "pkg/core/basic.py",
            Some("from pkg.mixins import Left, Right\n\n# header\n\nclass Basic(Left):\n    def diff(self):\n        return 1\n\n\ndef make():\n    return Basic()\n"),
        )],
    ),
    // `assist` is an alias of `helper`: only the alias's name is in the reader.
    (
        "aliased definition moves",
        &[(
            "pkg/util.py",
            Some("\n\ndef helper():\n    return 1\n\n\ndef other():\n    return 2\n"),
        )],
    ),
    // The re-export chain now binds `assist` to another definition.
    (
        "re-export changes target",
        &[(
            "pkg/__init__.py",
            Some("from .core import *\nfrom .util import other as assist\nfrom .extra import *\n"),
        )],
    ),
    // `Symbol` now has its own `diff`, shadowing the inherited one.
    (
        "inherited name newly shadowed",
        &[(
            "pkg/core/sym.py",
            Some("from .basic import Basic\n\n\nclass Symbol(Basic):\n    def name(self):\n        return 'x'\n\n    def diff(self):\n        return 2\n"),
        )],
    ),
    // A base class changes in the middle of the chain: `Symbol` inherits `spin` from
    // another class, though neither `Symbol`, `spin` nor any line moved.
    (
        "base class rebound",
        &[(
            "pkg/core/basic.py",
            Some("from pkg.mixins import Left, Right\n\n\nclass Basic(Right):\n    def diff(self):\n        return 1\n\n\ndef make():\n    return Basic()\n"),
        )],
    ),
    // `Basic` as the core package exports it is now another class: the typed attribute
    // `Holder.item` (and so `User.run`'s `self.item.diff()`) follows it.
    (
        "re-exported class swapped",
        &[
            (
                "pkg/core/__init__.py",
                Some("from .sym import Symbol as Basic\nfrom .basic import make\nfrom .sym import Symbol\n"),
            ),
        ],
    ),
    // A star-imported module newly defines a name another file could not resolve.
    (
        "unresolved name newly defined",
        &[(
            "pkg/extra.py",
            Some("def spare():\n    return 0\n\n\ndef newname():\n    return 1\n"),
        )],
    ),
    // The package star-imports one more module: `Left` is now found through it, though
    // no name of the package changed.
    (
        "star import added",
        &[(
            "pkg/__init__.py",
            Some("from .core import *\nfrom .util import helper as assist\nfrom .extra import *\nfrom .mixins import *\n"),
        )],
    ),
    // A file is deleted: its readers lose their edges.
    ("file deleted", &[("pkg/util.py", None)]),
    // A new module appears where a name was looked up through its package.
    (
        "module appears",
        &[("pkg/core/fresh.py", Some("def thing():\n    return 5\n"))],
    ),
];

/// Writes `edit` into the tree at `root`.
fn apply(root: &Path, edit: &[(&str, Option<&str>)]) {
    for (p, text) in edit {
        let path = root.join(p);
        match text {
            Some(t) => {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, t).unwrap();
            }
            None => fs::remove_file(path).unwrap(),
        }
    }
}

/// The edits after which an in-process refresh of [`BASE`] (`seeded`: a new index of the
/// edited tree seeded from [`BASE`]'s) differs from a cold build.
fn unlike_cold(seeded: bool) -> Vec<&'static str> {
    let mut differ = vec![];
    for (name, edit) in EDITS {
        let (a, b) = (repo(BASE), repo(BASE));
        let seed_db = a.path().join(".ctxfast/recon.db");
        index(a.path(), &seed_db, &IndexOptions::default()).unwrap();
        let db = b.path().join(".ctxfast/recon.db");
        let opts = if seeded {
            IndexOptions {
                seeds: vec![seed_db],
                ..IndexOptions::default()
            }
        } else {
            index(b.path(), &db, &IndexOptions::default()).unwrap();
            IndexOptions::default()
        };
        apply(b.path(), edit);
        let s = index(b.path(), &db, &opts).unwrap();
        assert!(s.files_resolved < s.files_seen, "{name}: narrowed");
        if seeded {
            assert!(s.seed.used.is_some(), "{name}: {:?}", s.seed.note);
        }
        if !matches_cold(b.path(), &db) {
            differ.push(*name);
        }
    }
    differ
}

#[test]
fn a_refresh_after_each_edit_writes_a_cold_builds_rows() {
    assert_eq!(unlike_cold(false), Vec::<&str>::new());
}

#[test]
fn a_seeded_index_after_each_edit_writes_a_cold_builds_rows() {
    assert_eq!(unlike_cold(true), Vec::<&str>::new());
}

#[test]
fn only_the_readers_of_a_moved_name_are_resolved_again() {
    // `other` moves; `helper` (read through the package's `assist` alias) does not. Every
    // reader of `pkg.util` can see the change, but none looks up a name that changed: the
    // package `__init__`, use_assist.py and the star-importing unres.py keep their rows, and
    // use_other.py's edge into `other` is pointed at its new line without resolving it.
    let d = repo(BASE);
    let db = d.path().join(".ctxfast/recon.db");
    let opts = IndexOptions::default();
    index(d.path(), &db, &opts).unwrap();
    apply(
        d.path(),
        &[(
            "pkg/util.py",
            Some("def helper():\n    return 1\n\n\n\ndef other():\n    return 2\n"),
        )],
    );
    let s = index(d.path(), &db, &opts).unwrap();
    assert_eq!((s.files_parsed, s.files_resolved), (1, 1));
    let into_other = pairs(
        &db,
        "SELECT e.src, e.dst FROM edges e JOIN nodes n ON n.id = e.dst WHERE n.name = 'other'",
    );
    assert_eq!(into_other.len(), 2, "{into_other:?}"); // the import and the call
    assert!(into_other.iter().all(|(_, dst)| dst == "pkg.util.other:6"));
    assert!(matches_cold(d.path(), &db));
}
