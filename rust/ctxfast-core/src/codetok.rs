//! The code tokenizer shared by BM25, the API-description index and line scoring.
//!
//! Code and issue text name the same thing in different spellings (`MemStore.remember`,
//! "mem store", `mem_store`), so each identifier is emitted **whole** (for exact symbol hits)
//! **and** split into its `snake_case` / CamelCase parts (for prose hits). Rules, in order:
//!
//! * A *word* is a maximal run of ASCII `[A-Za-z0-9_]`. Every other character (including all
//!   non-ASCII text) separates words. ASCII-only keeps the tokenizer byte-for-byte equal to
//!   its pure-Python reference and identifiers are ASCII in practice.
//! * Each word made of underscores only is dropped; otherwise it is emitted lowercased.
//! * A word is split on `_` and on case boundaries — lower/digit → Upper (`fooBar`,
//!   `utf8Decode`) and Upper → Upper+lower (`HTTPServer` → `HTTP`, `Server`). Digits never
//!   start a part on their own: `base64Encode` → `base64`, `encode`; `2to3` stays whole. If
//!   the split gives two or more parts, each part is emitted lowercased after the whole word
//!   (duplicates are kept: a repeated part is real term frequency).
//! * A *path token*: a maximal run of `[A-Za-z0-9_./\\-]` that contains `/` or `\`, or ends
//!   in `.EXT` for a known source extension, is additionally emitted whole (lowercased,
//!   `\` → `/`, leading `./` and surrounding `.`/`-`/`/` trimmed) before its words, so an
//!   issue naming `django/db/models/query.py` hits that exact path. Dotted names such as
//!   `self.value` are not paths and produce only their words.

/// File extensions that make a dotted run a path token (`query.py`).
pub const PATH_EXTENSIONS: &[&str] = &[
    "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "rs", "java", "kt", "c", "h", "cc",
    "cpp", "hpp", "cs", "rb", "php", "swift", "scala", "toml", "json", "yaml", "yml", "cfg", "ini",
    "txt", "md", "rst", "html", "css", "sh",
];

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_path_byte(b: u8) -> bool {
    is_word_byte(b) || matches!(b, b'.' | b'/' | b'\\' | b'-')
}

/// Splits one word into its snake/Camel parts (original case, not lowercased).
pub fn split_word(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    split_word_into(word, &mut parts);
    parts
}

/// [`split_word`] into a caller-owned buffer (cleared first): the tokenizer reuses one
/// buffer for every word instead of allocating a vector per word.
fn split_word_into<'a>(word: &'a str, parts: &mut Vec<&'a str>) {
    parts.clear();
    for seg in word.split('_').filter(|s| !s.is_empty()) {
        let b = seg.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            let prev = b[i - 1];
            let cur = b[i];
            let lower_to_upper =
                (prev.is_ascii_lowercase() || prev.is_ascii_digit()) && cur.is_ascii_uppercase();
            let acronym_end = prev.is_ascii_uppercase()
                && cur.is_ascii_uppercase()
                && b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            if lower_to_upper || acronym_end {
                parts.push(&seg[start..i]);
                start = i;
            }
        }
        parts.push(&seg[start..]);
    }
}

/// Calls `emit` with the tokens of one word (whole, then parts when there are two or more),
/// each lowercased into `buf`.
fn emit_word<'a>(
    word: &'a str,
    parts: &mut Vec<&'a str>,
    buf: &mut String,
    emit: &mut impl FnMut(&str),
) {
    if word.bytes().all(|b| b == b'_') {
        return;
    }
    let mut lower = |s: &str, buf: &mut String| {
        buf.clear();
        buf.push_str(s);
        buf.make_ascii_lowercase();
        emit(buf.as_str());
    };
    lower(word, buf);
    split_word_into(word, parts);
    if parts.len() >= 2 {
        for p in parts.iter() {
            lower(p, buf);
        }
    }
}

/// The normalised path token of a run, if the run is a path.
fn path_token(run: &str) -> Option<String> {
    // A path needs a separator or an extension dot: a plain word (most runs) is rejected
    // here, before the trimming below allocates.
    if !run.bytes().any(|b| matches!(b, b'/' | b'\\' | b'.')) {
        return None;
    }
    let trimmed = run.trim_matches(|c| matches!(c, '.' | '-' | '/' | '\\'));
    let norm = trimmed.replace('\\', "/");
    let norm = norm.trim_start_matches("./");
    if !norm.bytes().any(is_word_byte) {
        return None;
    }
    let has_sep = norm.contains('/');
    let has_ext = norm.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && PATH_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    });
    (has_sep || has_ext).then(|| norm.to_ascii_lowercase())
}

/// Tokenizes `text` with the rules of this module (see the module documentation).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_string()));
    out
}

/// The tokens of [`tokenize`], in the same order, each lent to `emit` instead of allocated:
/// an index builder looks most tokens up in its vocabulary and keeps only the new ones.
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut buf = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if !is_path_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_path_byte(bytes[i]) {
            i += 1;
        }
        // Runs are pure ASCII, so byte offsets are char boundaries.
        let run = &text[start..i];
        if let Some(p) = path_token(run) {
            emit(&p);
        }
        for word in run.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if !word.is_empty() {
                emit_word(word, &mut parts, &mut buf, &mut emit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s)
    }

    #[test]
    fn snake_and_camel_split() {
        assert_eq!(toks("mem_store"), ["mem_store", "mem", "store"]);
        assert_eq!(toks("MemStore"), ["memstore", "mem", "store"]);
        assert_eq!(toks("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(
            toks("getHTTPResponseCode"),
            ["gethttpresponsecode", "get", "http", "response", "code"]
        );
        assert_eq!(toks("value"), ["value"]);
    }

    #[test]
    fn digits_stay_attached() {
        assert_eq!(toks("base64Encode"), ["base64encode", "base64", "encode"]);
        assert_eq!(toks("utf8"), ["utf8"]);
        assert_eq!(toks("2to3"), ["2to3"]);
        assert_eq!(toks("404"), ["404"]);
        assert_eq!(toks("x2_y"), ["x2_y", "x2", "y"]);
    }

    #[test]
    fn underscores() {
        assert_eq!(toks("__init__"), ["__init__"]);
        assert_eq!(toks("_private_name"), ["_private_name", "private", "name"]);
        assert_eq!(toks("___ _"), Vec::<String>::new());
    }

    #[test]
    fn dotted_names_are_words_not_paths() {
        assert_eq!(toks("self.fooBar"), ["self", "foobar", "foo", "bar"]);
    }

    #[test]
    fn path_tokens() {
        assert_eq!(
            toks("see django/db/Query.py."),
            ["see", "django/db/query.py", "django", "db", "query", "py"]
        );
        assert_eq!(toks("setup.cfg"), ["setup.cfg", "setup", "cfg"]);
        assert_eq!(toks(r".\src\main.rs"), ["src/main.rs", "src", "main", "rs"]);
        assert_eq!(toks("a-b"), ["a", "b"]);
        assert_eq!(toks("/"), Vec::<String>::new());
    }

    #[test]
    fn non_ascii_separates() {
        assert_eq!(toks("naïve café→x"), ["na", "ve", "caf", "x"]);
        assert!(toks("").is_empty());
    }
}
