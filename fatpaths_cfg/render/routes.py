"""Route tables as the shape templates and filters consume: two index columns into two packed
string tables (the layer's destination subnets, the switch's peer addresses), read as flat
string lists on demand."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from fatpaths_cfg import _native


@dataclass(frozen=True)
class PackedTexts:
    """Strings laid end to end in one UTF-8 buffer: entry `i` is
    `data[offsets[i]:offsets[i + 1]]`. The native route writer reads them without a Python
    string per route."""

    data: bytes
    offsets: np.ndarray  # int64, one more than there are entries

    @classmethod
    def of(cls, texts: Sequence[str]) -> PackedTexts:
        joined = "".join(texts)
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(_byte_lengths(texts, joined), out=offsets[1:])
        return cls(joined.encode(), offsets)

    @classmethod
    def sparse(cls, count: int, entries: dict[int, str]) -> PackedTexts:
        """`count` entries, empty but for `entries` (a switch's few dozen peers of thousands
        of switches)."""
        ids = sorted(entries)
        texts = [entries[i] for i in ids]
        joined = "".join(texts)
        lengths = np.zeros(count + 1, dtype=np.int64)
        lengths[np.array(ids, dtype=np.int64) + 1] = _byte_lengths(texts, joined)
        return cls(joined.encode(), np.cumsum(lengths))

    def texts(self, ids: np.ndarray) -> list[str]:
        data, offsets = self.data, self.offsets.tolist()
        return [data[offsets[i] : offsets[i + 1]].decode() for i in ids.tolist()]


def _byte_lengths(texts: Sequence[str], joined: str) -> list[int]:
    """Each text's length in UTF-8 bytes: its length in characters when `joined` (all of
    them) is ASCII, as addresses are."""
    if joined.isascii():
        return [len(text) for text in texts]
    return [len(text.encode()) for text in texts]


_NO_TEXTS = PackedTexts(b"", np.zeros(1, dtype=np.int64))
_NO_IDS = np.zeros(0, dtype=np.int64)


class RouteTable:
    """One entry per (prefix, next hop), sorted by destination; with equal-cost next hops
    inside a layer, consecutive entries share a prefix. A Slim Fly q=37 switch holds 24,633
    of them and the fabric 67 M, so the table keeps indices, and `prefixes` and `next_hops`
    (for filters that need strings) are built only when read."""

    def __init__(
        self,
        prefix_texts: PackedTexts,
        prefix_ids: np.ndarray,
        hop_texts: PackedTexts,
        hop_ids: np.ndarray,
    ) -> None:
        if len(prefix_ids) != len(hop_ids):
            raise ValueError("a route table needs one next hop per prefix")
        self.prefix_texts = prefix_texts
        self.prefix_ids = np.ascontiguousarray(prefix_ids, dtype=np.int64)
        self.hop_texts = hop_texts
        self.hop_ids = np.ascontiguousarray(hop_ids, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.prefix_ids)

    @cached_property
    def prefixes(self) -> list[str]:
        return self.prefix_texts.texts(self.prefix_ids)

    @cached_property
    def next_hops(self) -> list[str]:
        return self.hop_texts.texts(self.hop_ids)

    def lines(self, head: str, middle: str, tail: str) -> str:
        """Every route as `head + prefix + middle + next hop + tail`, newline-joined (no
        trailing newline)."""
        return _native.route_text(
            head,
            middle,
            tail,
            self.prefix_texts.data,
            self.prefix_texts.offsets,
            self.prefix_ids,
            self.hop_texts.data,
            self.hop_texts.offsets,
            self.hop_ids,
        )

    def grouped(self) -> list[tuple[str, list[str]]]:
        """(prefix, next hops) per destination."""
        groups: list[tuple[str, list[str]]] = []
        for prefix, hop in zip(self.prefixes, self.next_hops, strict=True):
            if groups and groups[-1][0] == prefix:
                groups[-1][1].append(hop)
            else:
                groups.append((prefix, [hop]))
        return groups


EMPTY_ROUTES = RouteTable(_NO_TEXTS, _NO_IDS, _NO_TEXTS, _NO_IDS)
