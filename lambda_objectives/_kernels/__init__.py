"""LOW LEVEL numba kernels, one module per metric or objective (see docs/development.md)."""
