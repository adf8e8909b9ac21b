"""A lab state file fatpaths cannot read is a user error naming the file, never a traceback
(and nothing it lists is trusted to be removed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fatpaths_cfg.errors import UserErrors
from fatpaths_cfg.lab.state import LabState, load_state


@pytest.mark.parametrize(
    "content", [b"not json", b"[1, 2]", b'{"schema": "other/9"}', b"\xff\xfe", b'{"schema": null}']
)
def test_an_unreadable_state_is_refused_with_its_path(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "lab" / "state.json"
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(UserErrors, match=r"state\.json: not a lab state fatpaths can read"):
        load_state(path)
    assert path.read_bytes() == content


def test_a_written_state_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "lab" / "state.json"
    state = LabState(lab="fp-1", fabric="hand6", out="out", runtime_dir="run", failed_links=[3])
    state.save(path)
    assert load_state(path) == state
