//! Same-length source rewrites for syntax the grammars in use do not parse yet, applied
//! before parsing so that one newer construct does not turn a whole file into a syntax error.
//!
//! Every rewrite keeps each byte offset (and so every line and column) where it was: the
//! graph's positions still point into the file as written.
//! * Rust: the 2015-edition `try!(expr)` macro (a reserved word since 2018, rejected by
//!   tree-sitter-rust 0.24) becomes the parenthesised `    (expr)`, so the calls inside it are
//!   seen as calls.
//! * Rust: a macro called with parentheses, `name!(args)`, becomes the call `name (args)`, so
//!   the calls in its arguments are seen (see `rust_macro_calls`).
//! * TypeScript: variance annotations on type parameters (`<out O = unknown>`, `<in T>`,
//!   `<in out T>`, TypeScript 4.7; tree-sitter-typescript 0.23 predates them) are blanked.

use super::Lang;
use std::borrow::Cow;

/// `src` with the rewrites `lang` needs, or `src` itself when nothing applies.
pub fn rewrite(lang: Lang, src: &[u8]) -> Cow<'_, [u8]> {
    match lang {
        Lang::Rust
            if memchr::memmem::find(src, b"!(").is_some()
                || memchr::memmem::find(src, b"try!").is_some() =>
        {
            Cow::Owned(rust_macro_calls(rust_try(src.to_vec())))
        }
        Lang::TypeScript | Lang::Tsx
            if memchr::memmem::find(src, b"in ").is_some()
                || memchr::memmem::find(src, b"out ").is_some() =>
        {
            Cow::Owned(ts_variance(src.to_vec()))
        }
        _ => Cow::Borrowed(src),
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

fn rust_try(mut s: Vec<u8>) -> Vec<u8> {
    let mut i = 0;
    while let Some(off) = memchr::memmem::find(&s[i..], b"try!") {
        let at = i + off;
        let standalone = at == 0 || !(is_ident(s[at - 1]) || s[at - 1] == b'#');
        let mut j = at + 4;
        while j < s.len() && (s[j] == b' ' || s[j] == b'\t') {
            j += 1;
        }
        if standalone && s.get(j) == Some(&b'(') {
            s[at..at + 4].copy_from_slice(b"    ");
        }
        i = at + 4;
    }
    s
}

/// `name!(args)` becomes `name (args)`: tree-sitter keeps a macro's arguments as an opaque
/// token tree, so the calls in `assert_eq!(Input::new(p).get(), x)` or `format!("{}",
/// f(x))` would never be seen; as the arguments of a call they parse as the expressions they
/// are. The macro's own name resolves to no definition, so it gives no edge.
fn rust_macro_calls(mut s: Vec<u8>) -> Vec<u8> {
    let mut i = 1;
    while let Some(off) = memchr::memmem::find(&s[i..], b"!(") {
        let at = i + off;
        if is_ident(s[at - 1]) {
            s[at] = b' ';
        }
        i = at + 2;
    }
    s
}

fn skip_ws(s: &[u8], mut j: usize) -> usize {
    while j < s.len() && s[j].is_ascii_whitespace() {
        j += 1;
    }
    j
}

/// Blanks `in`/`out` written as modifiers of a type parameter: right after `<` or `,`, and
/// followed by a type parameter name and then `,`, `>`, `=` or `extends`.
fn ts_variance(mut s: Vec<u8>) -> Vec<u8> {
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'<' && s[i] != b',' {
            i += 1;
            continue;
        }
        let mut j = skip_ws(&s, i + 1);
        let mut mods = vec![];
        loop {
            let word = [&b"in"[..], &b"out"[..]].into_iter().find(|w| {
                s[j..].starts_with(w) && s.get(j + w.len()).is_some_and(u8::is_ascii_whitespace)
            });
            match word {
                Some(w) => {
                    mods.push((j, w.len()));
                    j = skip_ws(&s, j + w.len());
                }
                None => break,
            }
        }
        let name_start = j;
        while j < s.len() && is_ident(s[j]) {
            j += 1;
        }
        let after = skip_ws(&s, j);
        let follows =
            matches!(s.get(after), Some(b',' | b'>' | b'=')) || s[after..].starts_with(b"extends");
        if !mods.is_empty() && j > name_start && follows {
            for (at, len) in mods {
                s[at..at + len].fill(b' ');
            }
        }
        i += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(lang: Lang, s: &str) -> String {
        String::from_utf8(rewrite(lang, s.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn rust_try_becomes_a_parenthesised_expression_of_the_same_length() {
        let src = "let x = try!(open(p)); let y = r#try!(z); my_try!(w);";
        let out = rw(Lang::Rust, src);
        assert_eq!(out, "let x =     (open(p)); let y = r#try (z); my_try (w);");
        assert_eq!(out.len(), src.len());
    }

    #[test]
    fn rust_macros_called_with_parentheses_become_calls_and_nothing_else() {
        let src = "assert_eq!(f(x), g!(y)); if !(a != b) { v![1]; m! (z); }";
        let out = rw(Lang::Rust, src);
        assert_eq!(
            out,
            "assert_eq (f(x), g (y)); if !(a != b) { v![1]; m! (z); }"
        );
        assert_eq!(out.len(), src.len());
    }

    #[test]
    fn ts_variance_modifiers_are_blanked_and_nothing_else() {
        let src = "interface T<out O = unknown, in I, in out X extends Y> {}\n\
                   for (const k in obj) {}\nconst a = b < c, d = e in f;\ntype G<in> = 1;";
        let out = rw(Lang::TypeScript, src);
        assert_eq!(
            out,
            "interface T<    O = unknown,    I,        X extends Y> {}\n\
             for (const k in obj) {}\nconst a = b < c, d = e in f;\ntype G<in> = 1;"
        );
        assert_eq!(rw(Lang::Python, "try!(x)"), "try!(x)");
    }
}
