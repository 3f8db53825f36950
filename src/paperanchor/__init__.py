"""paperanchor: read scientific papers one section at a time."""

__version__ = "0.1.0"
