//! Route lines written for a config: `head PREFIX middle NEXTHOP tail`, one per route. A Slim
//! Fly q=37 config set holds 67 M of them; laid out here from two packed string tables (the
//! layer's destination subnets, the switch's peer addresses) and two index columns, without a
//! Python string per route.

/// Strings laid end to end: entry `i` is `data[offsets[i]..offsets[i + 1]]`.
pub struct Packed<'a> {
    pub data: &'a [u8],
    pub offsets: &'a [i64],
}

impl Packed<'_> {
    fn check(&self, what: &str) -> Result<(), String> {
        let ordered = self.offsets.windows(2).all(|pair| pair[0] <= pair[1]);
        let inside = self.offsets.first().is_none_or(|&first| first == 0)
            && self
                .offsets
                .last()
                .is_none_or(|&last| last as usize <= self.data.len());
        if self.offsets.is_empty() || !ordered || !inside {
            return Err(format!(
                "{what}: offsets must rise from 0 to the data's length"
            ));
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn get(&self, index: i64) -> &[u8] {
        let i = index as usize;
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// Every route as `head + prefix + middle + hop + tail`, newline-joined (no trailing newline),
/// the way `route_lines` in the render environment lays them out.
pub fn route_text(
    [head, middle, tail]: [&str; 3],
    prefixes: &Packed,
    prefix_ids: &[i64],
    hops: &Packed,
    hop_ids: &[i64],
) -> Result<String, String> {
    prefixes.check("prefixes")?;
    hops.check("next hops")?;
    if prefix_ids.len() != hop_ids.len() {
        return Err("a route table needs one next hop per prefix".into());
    }
    let in_range =
        |ids: &[i64], table: &Packed| ids.iter().all(|&id| id >= 0 && (id as usize) < table.len());
    if !in_range(prefix_ids, prefixes) || !in_range(hop_ids, hops) {
        return Err("a route names an entry outside its table".into());
    }
    if prefix_ids.is_empty() {
        return Ok(String::new());
    }
    // A switch's routes go through a few dozen next hops: each line is its prefix and then
    // one of a few dozen pieces `middle + hop + tail + "\n" + head`, two copies instead of
    // five; the last line's newline and head are cut off at the end.
    let mut piece_of = vec![u32::MAX; hops.len()];
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let mut piece_text = Vec::new();
    for &h in hop_ids {
        let slot = &mut piece_of[h as usize];
        if *slot == u32::MAX {
            *slot = pieces.len() as u32;
            let start = piece_text.len();
            piece_text.extend_from_slice(middle.as_bytes());
            piece_text.extend_from_slice(hops.get(h));
            piece_text.extend_from_slice(tail.as_bytes());
            piece_text.push(b'\n');
            piece_text.extend_from_slice(head.as_bytes());
            pieces.push((start, piece_text.len()));
        }
    }
    let size: usize = head.len()
        + prefix_ids
            .iter()
            .zip(hop_ids)
            .map(|(&p, &h)| {
                let (start, end) = pieces[piece_of[h as usize] as usize];
                prefixes.get(p).len() + end - start
            })
            .sum::<usize>();
    let mut text = Vec::with_capacity(size);
    text.extend_from_slice(head.as_bytes());
    for (&p, &h) in prefix_ids.iter().zip(hop_ids) {
        let (start, end) = pieces[piece_of[h as usize] as usize];
        text.extend_from_slice(prefixes.get(p));
        text.extend_from_slice(&piece_text[start..end]);
    }
    text.truncate(size - head.len() - 1);
    // The tables come from Python strings cut at their own boundaries, so this holds; a table
    // cut elsewhere is refused rather than passed on as broken text.
    String::from_utf8(text).map_err(|_| "a table entry is not whole UTF-8 text".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(texts: &[&str]) -> (Vec<u8>, Vec<i64>) {
        let mut offsets = vec![0i64];
        let mut data = Vec::new();
        for text in texts {
            data.extend_from_slice(text.as_bytes());
            offsets.push(data.len() as i64);
        }
        (data, offsets)
    }

    #[test]
    fn lines_follow_the_index_columns() {
        let (pd, po) = packed(&["10.0.0.0/27", "10.0.0.32/27", "10.0.0.64/27"]);
        let (hd, ho) = packed(&["", "172.16.0.1", "", "172.16.0.3"]);
        let prefixes = Packed {
            data: &pd,
            offsets: &po,
        };
        let hops = Packed {
            data: &hd,
            offsets: &ho,
        };
        let text = route_text(["ip route ", " ", ""], &prefixes, &[2, 0], &hops, &[3, 1]);
        assert_eq!(
            text.as_deref(),
            Ok("ip route 10.0.0.64/27 172.16.0.3\nip route 10.0.0.0/27 172.16.0.1")
        );
        let none = route_text(["a", "b", "c"], &prefixes, &[], &hops, &[]);
        assert_eq!(none.as_deref(), Ok(""));
    }

    #[test]
    fn bad_tables_and_ids_are_refused() {
        let (pd, po) = packed(&["p"]);
        let prefixes = Packed {
            data: &pd,
            offsets: &po,
        };
        let lines = |ids: &[i64], hop_ids: &[i64]| {
            route_text(["", " ", ""], &prefixes, ids, &prefixes, hop_ids)
        };
        assert!(lines(&[1], &[0]).is_err());
        assert!(lines(&[-1], &[0]).is_err());
        assert!(lines(&[0], &[]).is_err());
        let short = Packed {
            data: b"",
            offsets: &po,
        };
        assert!(route_text(["", "", ""], &short, &[0], &prefixes, &[0]).is_err());
        // The first half of "é", twice: not text (both halves in order would be).
        let halves = Packed {
            data: "é".as_bytes(),
            offsets: &[0, 1, 2],
        };
        assert!(route_text(["", "", ""], &halves, &[0], &halves, &[0]).is_err());
    }
}

pub mod python {
    use numpy::PyReadonlyArray1;
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;

    use super::Packed;

    /// Routes as config lines, `head + prefix + middle + hop + tail` joined by newlines:
    /// prefix `i` is `prefix_data[prefix_offsets[prefix_ids[i]]:...]` (UTF-8), likewise the hop.
    #[pyfunction]
    #[pyo3(signature = (head, middle, tail, prefix_data, prefix_offsets, prefix_ids, hop_data, hop_offsets, hop_ids))]
    #[allow(clippy::too_many_arguments)]
    pub fn route_text<'py>(
        head: &str,
        middle: &str,
        tail: &str,
        prefix_data: &[u8],
        prefix_offsets: PyReadonlyArray1<'py, i64>,
        prefix_ids: PyReadonlyArray1<'py, i64>,
        hop_data: &[u8],
        hop_offsets: PyReadonlyArray1<'py, i64>,
        hop_ids: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<String> {
        let prefixes = Packed {
            data: prefix_data,
            offsets: prefix_offsets.as_slice()?,
        };
        let hops = Packed {
            data: hop_data,
            offsets: hop_offsets.as_slice()?,
        };
        super::route_text(
            [head, middle, tail],
            &prefixes,
            prefix_ids.as_slice()?,
            &hops,
            hop_ids.as_slice()?,
        )
        .map_err(PyValueError::new_err)
    }
}
