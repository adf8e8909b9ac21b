"""Support code every stage may use and none owns: writing outputs under the marker rule
(`output`), the console (`console`), memory and CPU estimates (`memory`), named random streams
(`stable_hash`), running work beside the main process (`beside`) and block-style YAML
(`block_yaml`). It imports nothing of the pipeline."""
