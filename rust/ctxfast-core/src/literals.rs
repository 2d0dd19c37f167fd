//! String-literal fragments: the constant, prose-like pieces of every one-line string literal
//! in source text, which retrieval matches against the messages an issue quotes.
//!
//! A literal is a quoted run on one line (`"…"` or `'…'`, backslash escapes honoured) with at
//! most two prefix letters (`r b u f`, any case) that no identifier character or quote
//! precedes. Its body is split at format placeholders (`%s`, `%(name)r`, `%-5.2f`, `{…}`,
//! `${…}`, `\n`, `\t`, `\r`); each piece has its whitespace collapsed and the edge punctuation
//! ` .,:;'"`` ` stripped, and is kept when it has at least `min_chars` characters and reads as
//! prose: two plain words or more (`[A-Za-z]+` with one optional trailing `,.:;!?`) making up
//! at least half of its whitespace-separated tokens. `ctxfast._reference.literal_fragments`
//! is the executable specification the tests hold this scanner to.
//!
//! The same literals also give *names*: a literal whose whole body is one name-like token
//! (`"glob"`, `"--list-details"`, `"NO_COLOR"`) — how command-line flags, environment
//! variables, subcommands and option keys are declared in every language — which a task
//! names far more often than it quotes a message (`literal_names`,
//! `ctxfast._reference.literal_names`).

use rayon::prelude::*;

/// One kept fragment: the index of its text, its 1-based line, the fragment.
pub type Fragment = (usize, u32, String);

/// Every kept fragment of every text, in text then line order (texts scanned in parallel).
pub fn literal_fragments(texts: &[String], min_chars: usize) -> Vec<Fragment> {
    let per_text: Vec<Vec<Fragment>> = texts
        .par_iter()
        .enumerate()
        .map(|(i, text)| {
            let mut out = Vec::new();
            for (n, line) in text.lines().enumerate() {
                for body in line_literals(line) {
                    for piece in fragments(body, min_chars) {
                        out.push((i, (n + 1) as u32, piece));
                    }
                }
            }
            out
        })
        .collect();
    per_text.into_iter().flatten().collect()
}

/// `(text index, name)` for every distinct name literal of every text (see the module
/// docs), in text order and, within a text, in order of first occurrence. A name is 2 to
/// `max_chars` bytes of `[A-Za-z0-9_.-]` holding at least one letter.
pub fn literal_names(texts: &[String], max_chars: usize) -> Vec<(usize, String)> {
    let per_text: Vec<Vec<(usize, String)>> = texts
        .par_iter()
        .enumerate()
        .map(|(i, text)| {
            let mut seen = std::collections::HashSet::new();
            let mut out = Vec::new();
            for line in text.lines() {
                for body in line_literals(line) {
                    if is_name(body, max_chars) && seen.insert(body) {
                        out.push((i, body.to_string()));
                    }
                }
            }
            out
        })
        .collect();
    per_text.into_iter().flatten().collect()
}

fn is_name(body: &str, max_chars: usize) -> bool {
    let b = body.as_bytes();
    (2..=max_chars).contains(&b.len())
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
        && b.iter().any(u8::is_ascii_alphabetic)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_prefix_byte(b: u8) -> bool {
    matches!(b, b'r' | b'b' | b'u' | b'R' | b'B' | b'U' | b'f' | b'F')
}

/// Whether a quote at `q` may open a literal: up to two prefix letters before it, and before
/// those no identifier character or quote.
fn opens_literal(line: &[u8], q: usize) -> bool {
    (0..=2).any(|k| {
        if k > q || !line[q - k..q].iter().all(|&b| is_prefix_byte(b)) {
            return false;
        }
        q - k == 0 || {
            let before = line[q - k - 1];
            !(is_ident_byte(before) || before == b'"' || before == b'\'')
        }
    })
}

/// The bodies of the line's one-line string literals, left to right.
fn line_literals(line: &str) -> Vec<&str> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let quote = bytes[i];
        if (quote == b'"' || quote == b'\'') && opens_literal(bytes, i) {
            if let Some(end) = closing_quote(bytes, i) {
                out.push(&line[i + 1..end]);
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The index of the quote closing the literal opened at `open`, if it closes on this line.
fn closing_quote(bytes: &[u8], open: usize) -> Option<usize> {
    let quote = bytes[open];
    let mut j = open + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' if j + 1 < bytes.len() => j += 2,
            b'\\' => return None,
            b if b == quote => return Some(j),
            _ => j += 1,
        }
    }
    None
}

/// Length in bytes of the placeholder starting at `i`, if one does.
fn placeholder_len(body: &[u8], i: usize) -> Option<usize> {
    let rest = &body[i..];
    match rest[0] {
        b'%' => printf_len(rest),
        b'{' => rest[1..]
            .iter()
            .position(|&b| b == b'{' || b == b'}')
            .filter(|&p| rest[1 + p] == b'}')
            .map(|p| p + 2),
        b'\\' if rest.len() > 1 && matches!(rest[1], b'n' | b't' | b'r') => Some(2),
        b'$' if rest.len() > 1 && rest[1] == b'{' => {
            rest[2..].iter().position(|&b| b == b'}').map(|p| p + 3)
        }
        _ => None,
    }
}

/// `%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifgxXeEc%]` at the start of `s`.
fn printf_len(s: &[u8]) -> Option<usize> {
    let mut j = 1;
    if s.get(j) == Some(&b'(') {
        if let Some(p) = s[j + 1..].iter().position(|&b| b == b')') {
            j += p + 2;
        }
        // An unclosed "(" is no mapping key: the conversion must follow "%" directly then.
    }
    while j < s.len() && matches!(s[j], b'-' | b'#' | b'0' | b' ' | b'+') {
        j += 1;
    }
    while j < s.len() && s[j].is_ascii_digit() {
        j += 1;
    }
    if s.get(j) == Some(&b'.') && s.get(j + 1).is_some_and(u8::is_ascii_digit) {
        j += 1;
        while j < s.len() && s[j].is_ascii_digit() {
            j += 1;
        }
    }
    match s.get(j) {
        Some(b's' | b'd' | b'r' | b'i' | b'f' | b'g' | b'x' | b'X' | b'e' | b'E' | b'c' | b'%') => {
            Some(j + 1)
        }
        _ => None,
    }
}

/// The kept pieces of one literal body.
fn fragments(body: &str, min_chars: usize) -> Vec<String> {
    let bytes = body.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(len) = placeholder_len(bytes, i) {
            pieces.push(&body[start..i]);
            i += len;
            start = i;
        } else {
            i += 1;
        }
    }
    pieces.push(&body[start..]);
    pieces
        .into_iter()
        .filter_map(|p| {
            let flat = p.split_whitespace().collect::<Vec<_>>().join(" ");
            let piece = flat.trim_matches(|c| " .,:;'\"`".contains(c));
            (piece.chars().count() >= min_chars && is_prose(piece)).then(|| piece.to_string())
        })
        .collect()
}

fn is_plain_word(token: &str) -> bool {
    let t = token
        .strip_suffix(|c| ",.:;!?".contains(c))
        .unwrap_or(token);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphabetic())
}

fn is_prose(piece: &str) -> bool {
    let tokens: Vec<&str> = piece.split_whitespace().collect();
    let words = tokens.iter().filter(|t| is_plain_word(t)).count();
    words >= 2 && 2 * words >= tokens.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frags(line: &str) -> Vec<String> {
        literal_fragments(&[line.to_string()], 12)
            .into_iter()
            .map(|(_, _, f)| f)
            .collect()
    }

    #[test]
    fn splits_at_placeholders_and_keeps_prose() {
        assert_eq!(
            frags(r#"raise E("duplicate %s description of %s, other instance in %s" % x)"#),
            ["description of", "other instance in"]
        );
        assert_eq!(
            frags(r"msg = f'Field %(name)r clashes with field {other!r} in model'"),
            ["clashes with field"]
        );
        assert_eq!(
            frags(r#"x = "value is\n   not    allowed here""#),
            ["not allowed here"]
        );
        assert_eq!(
            frags(r#"t = "%-5.2f of total amount %% done""#),
            ["of total amount"]
        );
    }

    #[test]
    fn rejects_code_templates_identifiers_and_prefixed_names() {
        assert!(frags(r#"s = "= models.DateField(""#).is_empty());
        assert!(frags(r#"s = "single_identifier_only""#).is_empty());
        // An identifier before the quote: not a literal opening (e.g. the tail of `x"…"`).
        assert!(frags(r#"abc"is not a literal here at all""#).is_empty());
        assert_eq!(
            frags(r"p = rb'raw bytes message here'"),
            ["raw bytes message here"]
        );
    }

    #[test]
    fn names_are_whole_one_token_literals() {
        let texts = [
            r#"Arg::new("list-details").long("list-details"), x("--glob"), 'a b'"#.to_string(),
            r#"env::var("NO_COLOR"); s = "x"; n = "1337"; p = "a/b"; q = "é1"; t = f"{x}""#
                .to_string(),
        ];
        assert_eq!(
            literal_names(&texts, 40),
            [
                (0, "list-details".to_string()),
                (0, "--glob".to_string()),
                (1, "NO_COLOR".to_string())
            ]
        );
        assert_eq!(literal_names(&texts, 6), [(0, "--glob".to_string())]);
    }

    #[test]
    fn escapes_unterminated_and_lines() {
        assert_eq!(
            frags(r#"m = "say \"hello there\" to everyone""#),
            [r#"say \"hello there\" to everyone"#]
        );
        assert!(frags(r#"m = "never closed on this line"#).is_empty());
        let got = literal_fragments(
            &[
                "a = 1\nb = 'second line message'\n".into(),
                "c = 'third file text'".into(),
            ],
            12,
        );
        assert_eq!(
            got,
            [
                (0, 2, "second line message".to_string()),
                (1, 1, "third file text".to_string())
            ]
        );
    }
}
