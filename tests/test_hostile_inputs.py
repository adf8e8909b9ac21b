"""Hostile inventories (huge, deeply nested, not UTF-8, error floods) are refused quickly with a
located error, exit code 2 and nothing written. Inputs too big to commit are generated here."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fatpaths_cfg.cli import build_app
from fatpaths_cfg.inventory import yaml_source
from fatpaths_cfg.inventory.load import load_inventory


def compile_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Compile `tmp_path/name`; check exit 2, no traceback, no output; return the error lines."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(build_app(), ["compile", name, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not out.exists()
    return [line.removeprefix("error: ") for line in result.stderr.splitlines()]


def write_plain_links(path: Path, count: int) -> None:
    """A wiring inventory with `count` links and no aliases: a full mesh cut off at `count`."""
    switches = 2
    while switches * (switches - 1) // 2 < count:
        switches += 1
    parts = ["fabric: big\nswitches:\n", *(f"  - name: s{i}\n" for i in range(switches))]
    parts.append("links:\n")
    written = 0
    for i in range(switches):
        for j in range(i + 1, min(switches, i + 1 + count - written)):
            parts.append(f"  - a: s{i}:Ethernet{j}\n    b: s{j}:Ethernet{i}\n")
        written = min(count, written + switches - i - 1)
    path.write_text("".join(parts), encoding="utf-8")


NESTED_500 = {
    "flow_sequence": ("fabric: f\ndescription: " + "[" * 500 + "]" * 500 + "\n", 2),
    "flow_mapping": ("fabric: f\ndescription: " + "{a: " * 500 + "1" + "}" * 500 + "\n", 2),
    # Line 2 holds `description:`, line k + 2 the key at level k + 2; level 65 is refused.
    "block_mapping": (
        "fabric: f\ndescription:\n"
        + "".join(f"{'  ' * (k + 1)}k{k}:\n" for k in range(500))
        + "  " * 501
        + "v\n",
        65,
    ),
}


@pytest.mark.parametrize("style", sorted(NESTED_500))
def test_500_levels_of_nesting_are_refused_at_their_line(
    style: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, line = NESTED_500[style]
    (tmp_path / "deep.yaml").write_text(text, encoding="utf-8")
    assert compile_errors(tmp_path, monkeypatch, "deep.yaml") == [
        f"deep.yaml:{line}: description: nested more than 64 levels deep "
        "(an inventory nests about five levels; look for unclosed brackets)"
    ]


def test_nesting_up_to_the_cap_reaches_the_schema(tmp_path: Path) -> None:
    # 63 lists inside the root mapping: 64 levels, the most allowed.
    inventory = tmp_path / "inv.yaml"
    inventory.write_text("fabric: f\ndescription: " + "[" * 63 + "]" * 63 + "\n")
    with pytest.raises(Exception) as caught:
        load_inventory(inventory)
    assert "should be a valid string" in str(caught.value)


def test_aliases_chained_past_the_nesting_cap_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each line is shallow, but every alias wraps the previous anchor in one more list.
    lines = ["fabric: f", "a0: &a0 [x]", *(f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 600))]
    (tmp_path / "chain.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert compile_errors(tmp_path, monkeypatch, "chain.yaml") == [
        "chain.yaml:64: a62: nested more than 64 levels deep "
        "(aliases inside anchored values add a level each)"
    ]


def test_a_byte_that_is_not_utf8_is_reported_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "latin1.yaml").write_bytes(
        b"fabric: f\nswitches:\n  - name: sw1\ndescription: caf\xe9 au lait\n"
    )
    assert compile_errors(tmp_path, monkeypatch, "latin1.yaml") == [
        "latin1.yaml:4: not UTF-8: byte 0xe9 at column 17 cannot be decoded "
        "(save the file as UTF-8)"
    ]


def test_a_control_character_is_reported_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "nul.yaml").write_text("fabric: f\nswitches:\n  - name: s\x00w\n")
    assert compile_errors(tmp_path, monkeypatch, "nul.yaml") == [
        "nul.yaml:3: character U+0000 is not allowed in YAML (remove control characters)"
    ]


def test_a_million_plain_links_are_refused_by_size_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plain_links(tmp_path / "big.yaml", 1_000_000)
    size = (tmp_path / "big.yaml").stat().st_size
    started = time.perf_counter()
    errors = compile_errors(tmp_path, monkeypatch, "big.yaml")
    # Parsing would take minutes; refusing must not.
    assert time.perf_counter() - started < 10
    assert errors == [
        f"big.yaml:1: the file is {size:,} bytes, over the 16 MB cap on inventory size "
        f"(refused before parsing; to parse it anyway set FATPATHS_MAX_INVENTORY_MB="
        f"{-(-size // 1_000_000)})"
    ]


def test_the_size_cap_is_set_by_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A long comment makes a file over 1 MB that still parses in a moment.
    inventory = tmp_path / "inv.yaml"
    inventory.write_text("# " + "x" * 1_200_000 + "\nfabric: f\nswitches:\n  - name: sw1\n")
    monkeypatch.setenv("FATPATHS_MAX_INVENTORY_MB", "1")
    assert compile_errors(tmp_path, monkeypatch, "inv.yaml") == [
        "inv.yaml:1: the file is 1,200,037 bytes, over the 1 MB cap on inventory size "
        "(refused before parsing; to parse it anyway set FATPATHS_MAX_INVENTORY_MB=2)"
    ]
    monkeypatch.setenv("FATPATHS_MAX_INVENTORY_MB", "2")
    assert load_inventory(inventory).spec.fabric == "f"
    monkeypatch.setenv("FATPATHS_MAX_INVENTORY_MB", "lots")
    assert compile_errors(tmp_path, monkeypatch, "inv.yaml") == [
        "inv.yaml: FATPATHS_MAX_INVENTORY_MB='lots' is not a size "
        "(a whole number of MB, e.g. FATPATHS_MAX_INVENTORY_MB=64)"
    ]


def test_plain_values_do_not_count_as_alias_expansion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_source, "MAX_ALIAS_VALUES", 100)
    plain = tmp_path / "plain.yaml"
    write_plain_links(plain, 1_000)
    assert len(load_inventory(plain).spec.links) == 1_000
    anchored = tmp_path / "anchored.yaml"
    anchored.write_text(
        "fabric: f\nswitches:\n  - &sw {name: sw1}\nx: &x [" + "x, " * 60 + "]\ny: [*x, *x]\n"
    )
    assert compile_errors(tmp_path, monkeypatch, "anchored.yaml") == [
        "anchored.yaml:5: y: aliases expand to more than 100 values "
        "(&anchor / *alias nested this deep looks like an alias bomb)"
    ]


def test_printed_errors_stop_at_50_and_count_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    links = "".join(f"  - a: sw1:Ethernet{i}\n    b: nowhere:Ethernet{i}\n" for i in range(120))
    (tmp_path / "many.yaml").write_text(f"fabric: f\nswitches:\n  - name: sw1\nlinks:\n{links}")
    errors = compile_errors(tmp_path, monkeypatch, "many.yaml")
    assert len(errors) == 51
    assert errors[0] == "many.yaml:6: links[0].b: unknown switch 'nowhere' (known switches: sw1)"
    assert errors[49].startswith("many.yaml:104: links[49].b: unknown switch")
    assert errors[50] == "70 more errors not shown (the first 50 are above)"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_stream_is_cut_off_at_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A device reports no size; reading must still stop one byte past the cap.
    monkeypatch.setenv("FATPATHS_MAX_INVENTORY_MB", "1")
    assert compile_errors(tmp_path, monkeypatch, "/dev/zero") == [
        "/dev/zero:1: the file is more than 1,000,000 bytes, over the 1 MB cap on inventory size "
        "(refused before parsing; to parse it anyway set FATPATHS_MAX_INVENTORY_MB higher)"
    ]
