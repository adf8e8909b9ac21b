"""Analysis of a compiled fabric: path diversity and maximum achievable throughput."""
