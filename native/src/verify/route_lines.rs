//! Static routes read back out of rendered FRR configs (`ip route PREFIX NEXTHOP`, `ipv6 route
//! PREFIX NEXTHOP`), for `verify`. A Slim Fly q=19 renders 4.7 M such lines over 722 files; the
//! reader returns them as columns of ids into two name tables, because prefixes and next hops
//! repeat (a few thousand distinct of each) and one Python string per route costs gigabytes.
//!
//! It reads exactly what the Python reader reads (`verify/readers.py`): lines split on `\n`,
//! stripped, a route when the stripped text starts with one of the two statements and has four
//! words. Files whose bytes could make Python's `splitlines`, `strip` or `split` disagree with
//! that (anything outside ASCII, form feeds, separators, a lone carriage return) are handed back
//! unread, for the Python reader.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Everything read from a set of files, in file order, then line order.
#[derive(Debug, Default, PartialEq)]
pub struct RouteLines {
    pub prefix_names: Vec<String>,
    pub hop_names: Vec<String>,
    /// One entry per route: position of its file in the input list, line (1-based), ids.
    pub file: Vec<u32>,
    pub line: Vec<u32>,
    pub prefix: Vec<u32>,
    pub hop: Vec<u32>,
    /// Non-empty lines that are not routes and not `!` comments: (file, line, stripped text).
    pub other: Vec<(u32, u32, String)>,
    /// Files left to the Python reader.
    pub unread: Vec<u32>,
}

struct FileLines<'a> {
    routes: Vec<(u32, &'a [u8], &'a [u8])>,
    other: Vec<(u32, &'a [u8])>,
}

/// True when splitting on `\n` and trimming spaces, tabs and carriage returns gives what
/// Python's str methods give.
pub(crate) fn plain(text: &[u8]) -> bool {
    // Rendered files hold printable ASCII, tabs and newlines only: a branch-free pass over
    // every byte (vectorised) settles them; anything else takes the exact test below.
    let printable = text.iter().fold(true, |ok, &b| {
        ok & ((0x20..0x80).contains(&b) | (b == b'\n') | (b == b'\t'))
    });
    printable
        || text.iter().enumerate().all(|(i, &b)| match b {
            0x0b | 0x0c | 0x1c..=0x1f => false,
            b'\r' => text.get(i + 1) == Some(&b'\n'),
            _ => b < 0x80,
        })
}

fn is_blank(b: &u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

pub(crate) fn strip(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|b| !is_blank(b)).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !is_blank(b))
        .map_or(start, |e| e + 1);
    &line[start..end.max(start)]
}

/// The words of a line, as Python's `str.split()` gives them for `plain` text.
pub(crate) fn split_words(line: &[u8]) -> Vec<&[u8]> {
    line.split(is_blank).filter(|w| !w.is_empty()).collect()
}

fn route_words(text: &[u8]) -> Option<(&[u8], &[u8])> {
    if !(text.starts_with(b"ip route ") || text.starts_with(b"ipv6 route ")) {
        return None;
    }
    // The statement is two single-spaced words: what follows must be exactly two more.
    let rest = &text[text.iter().position(|&b| b == b' ')? + b"route ".len() + 1..];
    let (prefix, rest) = next_word(rest)?;
    let (hop, rest) = next_word(rest)?;
    next_word(rest).is_none().then_some((prefix, hop))
}

/// The first word of `text` and what follows it, None when only blanks are left.
fn next_word(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let start = text.iter().position(|b| !is_blank(b))?;
    let text = &text[start..];
    let end = text.iter().position(is_blank).unwrap_or(text.len());
    Some((&text[..end], &text[end..]))
}

/// Lines split on `\n`, eight bytes compared at a time: the newline search is most of the
/// reading of 185 MB of route lines.
fn split_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let end = next_newline(text, start);
        done = end == text.len();
        let line = &text[start..end];
        start = end + 1;
        Some(line)
    })
}

/// Position of the first `\n` at or after `from`, or the length of `text`.
fn next_newline(text: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut at = from;
    while let Some(chunk) = text.get(at..at + 8) {
        // A zero byte of `word` is a newline; the lowest flagged byte is the first one.
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ (ONES * 0x0a);
        let zeros = word.wrapping_sub(ONES) & !word & HIGHS;
        if zeros != 0 {
            return at + (zeros.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    text[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |p| at + p)
}

fn read_lines(text: &[u8]) -> FileLines<'_> {
    let mut lines = FileLines {
        routes: Vec::new(),
        other: Vec::new(),
    };
    for (index, raw) in split_lines(text).enumerate() {
        let number = index as u32 + 1;
        let stripped = strip(raw);
        if let Some((prefix, hop)) = route_words(stripped) {
            lines.routes.push((number, prefix, hop));
        } else if !stripped.is_empty() && stripped[0] != b'!' {
            lines.other.push((number, stripped));
        }
    }
    lines
}

/// Name tables being filled: ids by name, and the names in id order. Every route looks up
/// two names, one after the other: a fast hash of a few bytes, not a DoS-resistant one.
#[derive(Default)]
struct Names {
    ids: FxHashMap<Vec<u8>, u32>,
}

impl Names {
    fn id(&mut self, names: &mut Vec<String>, word: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(word) {
            return id;
        }
        names.push(String::from_utf8_lossy(word).into_owned());
        let id = names.len() as u32 - 1;
        self.ids.insert(word.to_vec(), id);
        id
    }
}

/// Route lines of every text (one per file), parsed in parallel and numbered in input order.
pub fn read_route_lines(texts: &[Vec<u8>]) -> RouteLines {
    let mut out = RouteLines::default();
    let (mut prefixes, mut hops) = (Names::default(), Names::default());
    add_route_lines(&mut out, &mut prefixes, &mut hops, texts, 0);
    out
}

/// Adds the route lines of `texts`, the files numbered from `first`.
fn add_route_lines(
    out: &mut RouteLines,
    prefixes: &mut Names,
    hops: &mut Names,
    texts: &[Vec<u8>],
    first: u32,
) {
    let parsed: Vec<Option<FileLines<'_>>> = texts
        .par_iter()
        .map(|text| plain(text).then(|| read_lines(text)))
        .collect();
    for (file, lines) in parsed.iter().enumerate() {
        let file = first + file as u32;
        let Some(lines) = lines else {
            out.unread.push(file);
            continue;
        };
        for &(line, prefix, hop) in &lines.routes {
            out.file.push(file);
            out.line.push(line);
            out.prefix.push(prefixes.id(&mut out.prefix_names, prefix));
            out.hop.push(hops.id(&mut out.hop_names, hop));
        }
        for &(line, text) in &lines.other {
            out.other
                .push((file, line, String::from_utf8_lossy(text).into_owned()));
        }
    }
}

/// Files read per parallel batch: enough to keep both cores busy, few enough that a large
/// fabric's configs (hundreds of MB) are never all in memory at once.
const FILES_PER_BATCH: usize = 64;

/// Route lines of the files at `paths`, read and parsed a batch at a time.
pub fn read_route_files(paths: &[String]) -> std::io::Result<RouteLines> {
    let mut out = RouteLines::default();
    let (mut prefixes, mut hops) = (Names::default(), Names::default());
    for (batch, chunk) in paths.chunks(FILES_PER_BATCH).enumerate() {
        let texts = chunk
            .par_iter()
            .map(std::fs::read)
            .collect::<std::io::Result<Vec<_>>>()?;
        let first = (batch * FILES_PER_BATCH) as u32;
        add_route_lines(&mut out, &mut prefixes, &mut hops, &texts, first);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_interned_and_other_lines_kept() {
        let texts = vec![
            b"hostname s0\n!\nip route 10.0.1.0/24 10.1.0.1\n  ipv6 route fd00::/64 fd01::1\r\n"
                .to_vec(),
            b"ip route 10.0.1.0/24 10.1.0.3\nip route 10.0.1.0/24\nbogus\n".to_vec(),
        ];
        let read = read_route_lines(&texts);
        assert_eq!(read.prefix_names, ["10.0.1.0/24", "fd00::/64"]);
        assert_eq!(read.hop_names, ["10.1.0.1", "fd01::1", "10.1.0.3"]);
        assert_eq!(read.file, [0, 0, 1]);
        assert_eq!(read.line, [3, 4, 1]);
        assert_eq!(read.prefix, [0, 1, 0]);
        assert_eq!(read.hop, [0, 1, 2]);
        assert_eq!(
            read.other,
            [
                (0, 1, "hostname s0".to_string()),
                (1, 2, "ip route 10.0.1.0/24".to_string()),
                (1, 3, "bogus".to_string()),
            ]
        );
        assert!(read.unread.is_empty());
    }

    #[test]
    fn lines_split_as_on_every_newline() {
        for text in [
            &b""[..],
            b"\n",
            b"a",
            b"ip route 10.0.0.0/24 10.1.0.1\n\nx\n",
            b"0123456789abcdef\n01234567\n\n\n0123456\n",
            "\u{e9}\u{e9}\u{e9}\u{e9}\n\u{e9}".as_bytes(),
        ] {
            let expected: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
            assert_eq!(split_lines(text).collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn route_words_as_split_gives_them() {
        for line in [
            &b"ip route a b"[..],
            b"ipv6 route a  \t b",
            b"ip route a",
            b"ip route a b c",
            b"ip route ",
            b"ipv6 route \t a\tb",
        ] {
            let words: Vec<&[u8]> = line.split(is_blank).filter(|w| !w.is_empty()).collect();
            let expected = (words.len() == 4).then(|| (words[2], words[3]));
            assert_eq!(route_words(line), expected);
        }
    }

    #[test]
    fn control_bytes_python_splits_alike_are_read() {
        let texts = vec![b"ip route a b\x01\r\n\x7f\n".to_vec()];
        let read = read_route_lines(&texts);
        assert!(read.unread.is_empty());
        assert_eq!(read.other, [(0, 2, "\x7f".to_string())]);
        assert_eq!(read.hop_names, ["b\x01"]);
    }

    #[test]
    fn text_python_would_split_differently_is_left_unread() {
        let texts = vec![
            b"ip route a b\x0c\n".to_vec(),
            b"ip route a b\rip route c d\n".to_vec(),
            "ip route a \u{e9}\n".as_bytes().to_vec(),
            b"ip route a b\n".to_vec(),
        ];
        let read = read_route_lines(&texts);
        assert_eq!(read.unread, [0, 1, 2]);
        assert_eq!(read.file, [3]);
    }

    #[test]
    fn files_read_in_batches_number_and_intern_across_batches() {
        let dir = std::env::temp_dir().join(format!("route-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let count = FILES_PER_BATCH + 3;
        let paths: Vec<String> = (0..count)
            .map(|i| {
                let path = dir.join(format!("{i}.conf"));
                std::fs::write(&path, format!("ip route p{} h\n", i % 2)).unwrap();
                path.to_string_lossy().into_owned()
            })
            .collect();
        let read = read_route_files(&paths).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read.file, (0..count as u32).collect::<Vec<_>>());
        assert_eq!(read.prefix_names, ["p0", "p1"]);
        assert_eq!(read.hop_names, ["h"]);
        assert_eq!(read.prefix[count - 1], ((count - 1) % 2) as u32);
    }

    #[test]
    fn a_statement_needs_its_trailing_space_and_four_words() {
        let texts = vec![b"ip route\tx y\nip  route x y\nipv6 route x y z\n".to_vec()];
        let read = read_route_lines(&texts);
        assert!(read.file.is_empty());
        assert_eq!(read.other.len(), 3);
    }
}

pub mod python {
    use numpy::{IntoPyArray, PyArray1};
    use pyo3::prelude::*;

    type Read<'py> = (
        Vec<String>,
        Vec<String>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u32>>,
        Vec<(u32, u32, String)>,
        Vec<u32>,
    );

    /// Route lines of the files at `paths` (FRR `ip route` / `ipv6 route`), as
    /// `(prefix_names, hop_names, file, line, prefix, hop, other, unread)`: per route the
    /// position of its file in `paths`, its line and ids into the two name tables; `other`
    /// holds every other non-empty, non-`!` line as (file, line, stripped text), and `unread`
    /// the files to be read by Python instead (text Python would split differently).
    #[pyfunction]
    pub fn read_route_lines<'py>(py: Python<'py>, paths: Vec<String>) -> PyResult<Read<'py>> {
        let read = crate::support::pool::detached(py, || super::read_route_files(&paths))?;
        Ok((
            read.prefix_names,
            read.hop_names,
            read.file.into_pyarray(py),
            read.line.into_pyarray(py),
            read.prefix.into_pyarray(py),
            read.hop.into_pyarray(py),
            read.other,
            read.unread,
        ))
    }
}
