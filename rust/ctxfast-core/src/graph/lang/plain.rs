//! Source languages the graph has no grammar for. Their files are still recorded — hashed,
//! with the module node that stands for the whole file and no definitions — so that every
//! reader of the index sees them: retrieval ranks them by their text (whole-file BM25, path
//! words, lexical hits), the repo map lists them, the manifest counts them. A repository
//! written in such a language is then ranked at least as well as plain BM25 over its files
//! would rank it, instead of not at all.
//!
//! Only extensions that name source code in one language are listed: an extension shared
//! with data or another language (`.m`: Objective-C or MATLAB; `.d`: D or make's dependency
//! files; `.v`: Verilog or Coq) would put files in the index under a wrong name.

/// (language name in the index, its file extensions exactly as written, no dot).
pub const PLAIN: &[(&str, &[&str])] = &[
    ("haskell", &["hs", "lhs"]),
    ("shell", &["sh", "bash", "zsh"]),
    ("perl", &["pl", "pm"]),
    ("julia", &["jl"]),
    ("zig", &["zig"]),
    (
        "fortran",
        &["f", "F", "f90", "F90", "f95", "f03", "f08", "for", "ftn"],
    ),
    ("cobol", &["cob", "cbl", "cpy", "COB", "CBL"]),
    ("clojure", &["clj", "cljs", "cljc"]),
    ("erlang", &["erl", "hrl"]),
    ("fsharp", &["fs", "fsi", "fsx"]),
    ("groovy", &["groovy"]),
    ("objective-c", &["mm"]),
    ("pascal", &["pas", "dpr"]),
    ("ada", &["adb", "ads"]),
    ("nim", &["nim"]),
    ("crystal", &["cr"]),
    ("visual-basic", &["vb", "bas"]),
    ("tcl", &["tcl"]),
    ("lisp", &["lisp", "lsp", "el", "rkt"]),
    ("systemverilog", &["sv", "svh"]),
    ("vhdl", &["vhd", "vhdl"]),
    ("powershell", &["ps1", "psm1"]),
];
