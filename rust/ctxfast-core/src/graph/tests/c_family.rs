//! C and C++ definitions where tree-sitter recovers from what it cannot parse: a definition
//! keeps the extent it has in the source instead of swallowing the definitions after it.

use super::*;

/// `kind qualname first-last` of every class and function of `file`, in line order.
fn spans(files: &[(&str, &str)], file: &str) -> Vec<String> {
    let d = repo(files);
    let db = d.path().join(".ctxfast/recon.db");
    index(d.path(), &db, &IndexOptions::default()).unwrap();
    let conn = store::open_with_text_ids(&db);
    let mut st = conn
        .prepare(
            "SELECT kind, qualname, line, end_line FROM nodes \
             WHERE file = ?1 AND kind IN ('class', 'function') ORDER BY line, qualname",
        )
        .unwrap();
    st.query_map([file], |r| {
        Ok(format!(
            "{} {} {}-{}",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Two headers of one function in the branches of an `#ifdef` (the second a function-try-
/// block), and two closings: tree-sitter opens the first one's body and never closes it, so
/// it swallowed the class and function after it. The first header, with nothing of its
/// own, is no definition.
const SPLIT_HEADER: &str = "\
namespace util {

#ifdef NO_EXCEPTIONS
inline bool parse_size(const char *s, int &out) {
#else
inline bool parse_size(const char *s, int &out) try {
#endif
  out = atoi(s);
  return out > 0;
#ifdef NO_EXCEPTIONS
}
#else
} catch (...) { return false; }
#endif

class Reader {
public:
  int next() { return step(); }
};

inline int twice(int x) { return x * 2; }

} // namespace util
";

#[test]
fn a_function_header_split_by_ifdef_does_not_swallow_what_follows() {
    let got = spans(&[("src/parse.cpp", SPLIT_HEADER)], "src/parse.cpp");
    assert_eq!(
        got,
        [
            "function src.parse_cpp.parse_size 6-13",
            "class src.parse_cpp.Reader 16-19",
            "function src.parse_cpp.Reader.next 18-18",
            "function src.parse_cpp.twice 21-21",
        ]
    );
}

/// One brace opened in each branch of an `#if` inside a body, one closed: the function ends
/// after its own statements; the definition after it is the file's, not the function's.
const SPLIT_BRACE: &str = "\
namespace num {

static inline bool scale(int power, int v, double &d) {
#if defined(WIDE)
  if (power > 0 && power < 40) {
#else
  if (power > 0 && power < 20) {
#endif
    d = v * power;
    return true;
  }
  d = 0;
  return false;
}

static inline bool unit(double &d) {
  return scale(1, 1, d);
}

} // namespace num
";

#[test]
fn braces_split_by_if_else_end_the_function_before_the_next_definition() {
    let got = spans(&[("src/scale.cpp", SPLIT_BRACE)], "src/scale.cpp");
    assert_eq!(
        got,
        [
            "function src.scale_cpp.scale 3-14",
            "function src.scale_cpp.unit 16-18",
        ]
    );
}

/// A macro alone on the line before a namespace (a target-region pragma in disguise) reads
/// as a function named `namespace`: no such function, and the namespace's members are the
/// file's.
const MACRO_NAMESPACE: &str = "\
BEGIN_TARGET_REGION
namespace lib {
int first(int x) { return x + 1; }
int second(int x) { return first(x) * 2; }
}
END_TARGET_REGION
";

#[test]
fn a_macro_before_a_namespace_is_no_function() {
    let got = spans(&[("src/lib.cpp", MACRO_NAMESPACE)], "src/lib.cpp");
    assert_eq!(
        got,
        [
            "function src.lib_cpp.first 3-3",
            "function src.lib_cpp.second 4-4",
        ]
    );
}

/// An export macro in a class head: the class, its methods and what follows it.
const EXPORT_MACRO: &str = "\
class WIDGET_API Widget : public Base {
 public:
  explicit Widget(int n) : n_(n) {}
  int spin() const { return n_; }
 private:
  int n_;
};

struct WIDGET_API Options final {
  int level;
};

int make(void) { return Widget(1).spin(); }
";

#[test]
fn an_export_macro_in_a_class_head_keeps_the_class() {
    let got = spans(&[("src/widget.cpp", EXPORT_MACRO)], "src/widget.cpp");
    assert_eq!(
        got,
        [
            "class src.widget_cpp.Widget 1-7",
            "function src.widget_cpp.Widget.Widget 3-3",
            "function src.widget_cpp.Widget.spin 4-4",
            "class src.widget_cpp.Options 9-11",
            "function src.widget_cpp.make 13-13",
        ]
    );
}

/// Statements tree-sitter reads as function definitions inside a well-formed body — a
/// looping macro (no type), macro lines before an `if` (an error in the declarator), a
/// braced initialiser with an `#if` inside (no function declarator) — do not cut the
/// function short; the initialiser's misread brace still ends `table` before `after`.
const BODY_LOOKALIKES: &str = "\
namespace calc {

static int total(const int *v, int n) {
  int sum = 0;
  FOR_EACH(int i, n) {
    sum += v[i];
  }
  PUSH_WARNINGS
  SILENCE_WARNING
  if (failed()) { return -1; }
  POP_WARNINGS
  return sum;
}

static const std::vector<int> &table() {
  static const std::vector<int> values {
#if WIDE
    wide(),
#endif
    narrow(),
  };
  return values;
}

static int after(void) { return 1; }

} // namespace calc
";

#[test]
fn statements_that_look_like_definitions_keep_their_function_whole() {
    let got = spans(&[("src/total.cpp", BODY_LOOKALIKES)], "src/total.cpp");
    // The statements misread as nested definitions are left as they were read.
    let own: Vec<&str> = got
        .iter()
        .map(String::as_str)
        .filter(|s| !s.contains("total.") && !s.contains("table."))
        .collect();
    assert_eq!(
        own,
        [
            "function src.total_cpp.total 3-13",
            "function src.total_cpp.table 15-23",
            "function src.total_cpp.after 25-25",
        ],
        "{got:?}"
    );
}
