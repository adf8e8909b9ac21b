"""Sweeps over fabrics and routing parameters on Dask distributed, and tuning from them."""
