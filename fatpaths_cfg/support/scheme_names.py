"""Names the commands accept that were renamed: the old spelling is still read, as the new one.

`--lb minimal` (simulate) and `--schemes minimal` (analyze) became `single-path`: one fixed
shortest path per pair, which `minimal` did not say beside `simulate --routing min` (SC'15's MIN,
which spreads over every minimal path). Results carry the new name."""

SINGLE_PATH = "single-path"
RENAMED = {"minimal": SINGLE_PATH}


def current_name(name: str) -> str:
    """`name`, or what it is called now."""
    return RENAMED.get(name, name)
