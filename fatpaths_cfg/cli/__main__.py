"""`python -m fatpaths_cfg.cli`: the `fatpaths` command."""

from fatpaths_cfg.cli import main

main()
