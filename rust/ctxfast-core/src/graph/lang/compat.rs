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
//! * C++: an export macro between `class`/`struct` and the class's name (`class GTEST_API_
//!   Foo : public Bar {`, `struct MY_EXPORT Baz {`) is blanked. tree-sitter-cpp reads
//!   `class GTEST_API_` as an elaborated type and the rest as a function whose body is the
//!   class body, which, full of `public:` labels and member declarations, does not end at
//!   the class's `};` but runs on over the definitions that follow (gtest's
//!   `AssertionException` spanned 728 lines of `gtest.h`).
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
        Lang::Cpp => match cpp_class_macros(src) {
            Some(out) => Cow::Owned(out),
            None => Cow::Borrowed(src),
        },
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

/// The end of the identifier starting at `j` (`j` itself when none starts there).
fn ident_end(s: &[u8], mut j: usize) -> usize {
    if s.get(j).is_some_and(u8::is_ascii_digit) {
        return j;
    }
    while j < s.len() && is_ident(s[j]) && s[j] != b'$' {
        j += 1;
    }
    j
}

/// `src` with the macro of every `class MACRO Name` / `struct MACRO Name` head blanked, or
/// `None` when there is none. A macro is a name of capitals, digits and underscores (two
/// characters at least) written between the keyword and the class's name, where the name is
/// followed by `{`, a base clause (`:`, not `::`) or `final`: the shape of an export or
/// visibility macro, which no C++ without a preprocessor can hold. Nothing else changes.
fn cpp_class_macros(src: &[u8]) -> Option<Vec<u8>> {
    let mut blanks: Vec<(usize, usize)> = vec![];
    for kw in [&b"class"[..], &b"struct"[..]] {
        for at in memchr::memmem::find_iter(src, kw) {
            if at > 0 && is_ident(src[at - 1]) {
                continue;
            }
            let after_kw = at + kw.len();
            let m = skip_ws(src, after_kw);
            if m == after_kw {
                continue;
            }
            let m_end = ident_end(src, m);
            let macro_like = m_end - m >= 2
                && src[m..m_end]
                    .iter()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
                && src[m].is_ascii_uppercase();
            if !macro_like {
                continue;
            }
            let name = skip_ws(src, m_end);
            let name_end = ident_end(src, name);
            if name == m_end || name_end == name || &src[name..name_end] == b"final" {
                continue;
            }
            let next = skip_ws(src, name_end);
            let rest = &src[next..];
            let head = rest.first() == Some(&b'{')
                || (rest.first() == Some(&b':') && rest.get(1) != Some(&b':'))
                || (rest.starts_with(b"final") && !rest.get(5).is_some_and(|c| is_ident(*c)));
            if head {
                blanks.push((m, m_end));
            }
        }
    }
    if blanks.is_empty() {
        return None;
    }
    let mut out = src.to_vec();
    for (a, b) in blanks {
        out[a..b].fill(b' ');
    }
    Some(out)
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
    fn cpp_class_export_macros_are_blanked_and_nothing_else() {
        let src = "class MY_API Alpha : public Base {};\nstruct X_EXPORT Beta final {};\n\
                   class DLL Gamma{};\nstruct FOO bar;\nstruct FOO bar = {1};\n\
                   class A B {};\nclass API ns::Name {};\nstruct S : T {};\nmyclass API C {};";
        let out = rw(Lang::Cpp, src);
        assert_eq!(
            out,
            "class        Alpha : public Base {};\nstruct          Beta final {};\n\
             class     Gamma{};\nstruct FOO bar;\nstruct FOO bar = {1};\n\
             class A B {};\nclass API ns::Name {};\nstruct S : T {};\nmyclass API C {};"
        );
        assert_eq!(rw(Lang::C, "struct MY_API s {};"), "struct MY_API s {};");
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
