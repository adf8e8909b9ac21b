//! Large inventories in the plain block style that `topo generate` writes, parsed without
//! libyaml's event stream.
//!
//! Only a strict subset of YAML is accepted: block mappings and sequences indented with
//! spaces, plain scalars on one line, comments and blank lines. Everything else (quotes, flow
//! collections, anchors, aliases, tags, block scalars, multi-line scalars, several documents,
//! tabs, duplicate keys, non-string keys) makes the parser give up, and the caller takes its
//! libyaml path, which handles and reports all of YAML. A value the subset accepts is typed
//! as YAML 1.1's safe loader types it, or left for the caller to type where that is not
//! certain from its first character (numbers other than plain decimals, dates, `.inf`).

/// A parsed value with the 1-based line where it starts (a mapping entry: its key's line).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub line: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    /// A plain scalar whose type only YAML's full resolver table can decide.
    Untyped(String),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
}

/// Why the subset gave up; the caller only needs to know that it did.
#[derive(Debug, PartialEq)]
pub struct OutsideSubset;

type Parsed<T> = Result<T, OutsideSubset>;

struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
}

/// Parse `text` into one document, or give up.
pub fn parse(text: &str, max_nesting: usize) -> Parsed<Node> {
    if text.starts_with('\u{feff}') || text.contains('\t') || text.contains('\r') {
        return Err(OutsideSubset);
    }
    let mut lines = Vec::new();
    for (index, raw) in text.split('\n').enumerate() {
        let body = raw.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if raw.starts_with("---") || raw.starts_with("...") || raw.starts_with('%') {
            return Err(OutsideSubset);
        }
        let text = strip_comment(body).trim_end_matches(' ');
        lines.push(Line {
            number: index + 1,
            indent: raw.len() - body.len(),
            text,
        });
    }
    let mut parser = Parser {
        lines,
        next: 0,
        max_nesting,
    };
    if parser.lines.is_empty() {
        return Err(OutsideSubset);
    }
    let indent = parser.lines[0].indent;
    let root = parser.node(indent, 0)?;
    if parser.next != parser.lines.len() {
        return Err(OutsideSubset);
    }
    Ok(root)
}

/// The line without a trailing comment: `#` starts one after a space (or at the start).
fn strip_comment(body: &str) -> &str {
    match body.find(" #") {
        Some(at) => &body[..at],
        None => body,
    }
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    next: usize,
    max_nesting: usize,
}

impl<'a> Parser<'a> {
    fn current(&self) -> Option<&Line<'a>> {
        self.lines.get(self.next)
    }

    fn node(&mut self, indent: usize, depth: usize) -> Parsed<Node> {
        // `depth` is the node's path length; the events path gives up at the same one.
        if depth + 1 >= self.max_nesting {
            return Err(OutsideSubset);
        }
        let line = self.current().ok_or(OutsideSubset)?;
        if line.indent != indent {
            return Err(OutsideSubset);
        }
        if is_entry(line.text) {
            self.sequence(indent, depth)
        } else if split_key(line.text).is_some() {
            self.mapping(indent, depth)
        } else {
            Err(OutsideSubset) // a scalar on a line of its own: multi-line or a bare document
        }
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> Parsed<Node> {
        let start = self.current().ok_or(OutsideSubset)?.number;
        let mut entries: Vec<(String, Node)> = Vec::new();
        while let Some(line) = self.current() {
            let (number, line_indent, text) = (line.number, line.indent, line.text);
            if line_indent < indent {
                break;
            }
            if line_indent > indent || is_entry(text) || depth + 2 >= self.max_nesting {
                return Err(OutsideSubset);
            }
            let (key, rest) = split_key(text).ok_or(OutsideSubset)?;
            if key.ends_with(' ') {
                return Err(OutsideSubset); // YAML trims the spaces before the colon
            }
            let key = match classify(key)? {
                Value::Str(key) => key,
                _ => return Err(OutsideSubset),
            };
            if entries.iter().any(|(known, _)| *known == key) {
                return Err(OutsideSubset);
            }
            self.next += 1;
            let value = if !rest.is_empty() {
                classify(rest)?
            } else {
                match self.current() {
                    Some(below)
                        if below.indent > indent
                            || (below.indent == indent && is_entry(below.text)) =>
                    {
                        let below = below.indent;
                        self.node(below, depth + 1)?.value
                    }
                    _ => Value::Null,
                }
            };
            entries.push((
                key,
                Node {
                    line: number,
                    value,
                },
            ));
        }
        Ok(Node {
            line: start,
            value: Value::Map(entries),
        })
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> Parsed<Node> {
        let start = self.current().ok_or(OutsideSubset)?.number;
        let mut items = Vec::new();
        while let Some(line) = self.current() {
            let (number, line_indent, text) = (line.number, line.indent, line.text);
            // A key at the sequence's own indent ends it: the sequence was a key's value.
            if line_indent < indent || (line_indent == indent && !is_entry(text)) {
                break;
            }
            if line_indent > indent || depth + 2 >= self.max_nesting {
                return Err(OutsideSubset);
            }
            let rest = text[1..].trim_start_matches(' ');
            if rest.is_empty() || is_entry(rest) {
                return Err(OutsideSubset);
            }
            let item = if split_key(rest).is_some() {
                // "- key: value": a mapping whose first key sits after the dash; its other
                // keys line up with that one.
                let inner = indent + (text.len() - rest.len());
                self.lines[self.next] = Line {
                    number,
                    indent: inner,
                    text: rest,
                };
                self.mapping(inner, depth + 1)?
            } else {
                self.next += 1;
                Node {
                    line: number,
                    value: classify(rest)?,
                }
            };
            items.push(item);
        }
        Ok(Node {
            line: start,
            value: Value::List(items),
        })
    }
}

fn is_entry(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// "key: value" or "key:" as (key, value); None when the line has no mapping indicator.
fn split_key(text: &str) -> Option<(&str, &str)> {
    if let Some(at) = text.find(": ") {
        return Some((&text[..at], text[at + 2..].trim_start_matches(' ')));
    }
    text.strip_suffix(':').map(|key| (key, ""))
}

const BOOLS: [(&str, bool); 18] = [
    ("yes", true),
    ("Yes", true),
    ("YES", true),
    ("no", false),
    ("No", false),
    ("NO", false),
    ("true", true),
    ("True", true),
    ("TRUE", true),
    ("false", false),
    ("False", false),
    ("FALSE", false),
    ("on", true),
    ("On", true),
    ("ON", true),
    ("off", false),
    ("Off", false),
    ("OFF", false),
];

/// A plain scalar's value, or OutsideSubset where its spelling is not a plain scalar here.
fn classify(text: &str) -> Parsed<Value> {
    let first = text.chars().next().ok_or(OutsideSubset)?;
    // Indicators that start something other than a plain scalar, and text the block style
    // would read as a nested mapping or a continuation.
    if ",[]{}#&*!|>'\"%@`?".contains(first)
        || is_entry(text)
        || text.starts_with(": ")
        || text == ":"
        || text.contains(": ")
        || text.ends_with(':')
    {
        return Err(OutsideSubset);
    }
    if matches!(text, "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some((_, value)) = BOOLS.iter().find(|(word, _)| *word == text) {
        return Ok(Value::Bool(*value));
    }
    if first.is_ascii_alphabetic() || first == '_' || first == '/' || first == '(' {
        // The resolver's table holds only booleans and nulls for these first characters.
        return Ok(Value::Str(text.to_string()));
    }
    if let Some(value) = plain_decimal(text) {
        return Ok(Value::Int(value));
    }
    Ok(Value::Untyped(text.to_string()))
}

/// `0` or a decimal without leading zeros or underscores, optionally signed; YAML 1.1 reads
/// other digit strings as octal, binary, hexadecimal or base 60.
fn plain_decimal(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    let plain = digits == "0"
        || (!digits.is_empty()
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit()));
    if plain {
        text.parse().ok()
    } else {
        None
    }
}

pub mod python {
    use super::{parse, Node, Value};
    use pyo3::prelude::*;
    use pyo3::types::{PyDict, PyList, PyString, PyTuple};

    /// `(value, lines, untyped)` of a document in the plain block subset, or None when it
    /// leaves the subset. `lines` maps every path (a tuple of keys and indices) to the line
    /// where its value starts, the line of its key for mapping entries; `untyped` lists the
    /// paths of plain scalars still to be typed by YAML's resolver, left as strings.
    #[pyfunction]
    pub fn load_plain_yaml<'py>(
        py: Python<'py>,
        text: &str,
        max_nesting: usize,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Ok(root) = parse(text, max_nesting) else {
            return Ok(None);
        };
        let lines = PyDict::new(py);
        let untyped = PyList::empty(py);
        let mut path: Vec<Bound<'py, PyAny>> = Vec::new();
        let value = convert(py, &root, &mut path, &lines, &untyped)?;
        Ok(Some(PyTuple::new(
            py,
            [value, lines.into_any(), untyped.into_any()],
        )?))
    }

    fn convert<'py>(
        py: Python<'py>,
        node: &Node,
        path: &mut Vec<Bound<'py, PyAny>>,
        lines: &Bound<'py, PyDict>,
        untyped: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let key = PyTuple::new(py, path.iter())?;
        lines.set_item(&key, node.line)?;
        Ok(match &node.value {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            Value::Int(i) => i.into_pyobject(py)?.into_any(),
            Value::Str(s) => PyString::new(py, s).into_any(),
            Value::Untyped(s) => {
                untyped.append(key)?;
                PyString::new(py, s).into_any()
            }
            Value::List(items) => {
                let list = PyList::empty(py);
                for (index, item) in items.iter().enumerate() {
                    path.push(index.into_pyobject(py)?.into_any());
                    list.append(convert(py, item, path, lines, untyped)?)?;
                    path.pop();
                }
                list.into_any()
            }
            Value::Map(entries) => {
                let dict = PyDict::new(py);
                for (name, item) in entries {
                    let name = PyString::intern(py, name).into_any();
                    path.push(name.clone());
                    dict.set_item(name, convert(py, item, path, lines, untyped)?)?;
                    path.pop();
                }
                dict.into_any()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(node: &Node) -> &Vec<(String, Node)> {
        match &node.value {
            Value::Map(entries) => entries,
            other => panic!("not a mapping: {other:?}"),
        }
    }

    #[test]
    fn generated_inventory_shape_with_lines() {
        let text = "# header\nfabric: f1\ndefaults:\n  link_speed: 100G\nswitches:\n- name: s1\n  ports: 44\n- name: s2   # note\n  ports: 8\nhosts:\n  - name: h1\n    uplink: s1:Ethernet1\n";
        let root = parse(text, 64).unwrap();
        assert_eq!(root.line, 2);
        let top = map(&root);
        assert_eq!(
            top[0],
            (
                "fabric".into(),
                Node {
                    line: 2,
                    value: Value::Str("f1".into())
                }
            )
        );
        let defaults = map(&top[1].1);
        assert_eq!(defaults[0].1.value, Value::Untyped("100G".into()));
        let Value::List(switches) = &top[2].1.value else {
            panic!()
        };
        assert_eq!(switches.len(), 2);
        assert_eq!(switches[1].line, 8);
        assert_eq!(map(&switches[1])[0].1.value, Value::Str("s2".into()));
        assert_eq!(
            map(&switches[1])[1],
            (
                "ports".into(),
                Node {
                    line: 9,
                    value: Value::Int(8)
                }
            )
        );
        let Value::List(hosts) = &top[3].1.value else {
            panic!()
        };
        let after = parse("a:\n- x\nb: 1\n", 64).unwrap();
        assert_eq!(
            map(&after)[1],
            (
                "b".into(),
                Node {
                    line: 3,
                    value: Value::Int(1)
                }
            )
        );
        assert_eq!(map(&hosts[0])[1].1.value, Value::Str("s1:Ethernet1".into()));
        assert_eq!(map(&hosts[0])[1].1.line, 12);
    }

    #[test]
    fn scalars_typed_as_yaml_1_1_or_left_untyped() {
        let cases = [
            ("a: yes", Value::Bool(true)),
            ("a: Off", Value::Bool(false)),
            ("a: ~", Value::Null),
            ("a:", Value::Null),
            ("a: 0", Value::Int(0)),
            ("a: -12", Value::Int(-12)),
            ("a: 012", Value::Untyped("012".into())),
            ("a: 1_000", Value::Untyped("1_000".into())),
            ("a: 1:20", Value::Untyped("1:20".into())),
            ("a: 2.5", Value::Untyped("2.5".into())),
            ("a: .inf", Value::Untyped(".inf".into())),
            ("a: <<", Value::Untyped("<<".into())),
            ("a: y", Value::Str("y".into())),
            ("a: sf-0#1", Value::Str("sf-0#1".into())),
        ];
        for (text, expected) in cases {
            let root = parse(text, 64).unwrap();
            assert_eq!(map(&root)[0].1.value, expected, "{text}");
        }
    }

    #[test]
    fn anything_outside_the_subset_gives_up() {
        for text in [
            "a: 'quoted'",
            "a: \"quoted\"",
            "a: [1, 2]",
            "a: {b: 1}",
            "a: &anchor 1",
            "a: *alias",
            "a: !tag 1",
            "a: |\n  text",
            "a: b\n  continued",
            "a: 1\na: 2",
            "1: one",
            "true: yes",
            "a:\n\tb: 1",
            "a: 1\r\n",
            "---\na: 1",
            "a: 1\n---\nb: 2",
            "a: b: c",
            "- - nested",
            "-\n  a: 1",
            "just a scalar",
            "",
            "a:\n    b: 1\n  c: 2",
            "a: 1\n  b: 2",
            "- x\nb: 1",
            "a  : 1",
        ] {
            assert_eq!(parse(text, 64), Err(OutsideSubset), "{text:?}");
        }
    }

    #[test]
    fn nesting_cap_gives_up_where_the_events_path_would() {
        let text = "a:\n  b:\n    c: 1\n";
        assert!(parse(text, 5).is_ok());
        assert_eq!(parse(text, 4), Err(OutsideSubset));
        let items = "a:\n- b: 1\n";
        assert!(parse(items, 5).is_ok());
        assert_eq!(parse(items, 4), Err(OutsideSubset));
    }
}
