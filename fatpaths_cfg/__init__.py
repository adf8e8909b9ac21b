"""fatpaths: a FatPaths layered-routing configuration compiler for Ethernet fabrics."""

__version__ = "0.1.0"
