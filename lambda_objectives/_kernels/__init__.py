"""LOW LEVEL numba kernels: shared ranking pieces, one module per metric, the pair loop, engine parity."""
