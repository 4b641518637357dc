"""Dtypes used across the package, declared once with the reason beside them."""

import numpy as np

#: Scores, labels, gains, gradients and Hessians are float64 everywhere inside the package:
#: pair sums over hundreds of documents lose digits in float32, and the brute-force oracles
#: in the tests compare at 1e-12. Casting to float32 happens only at an engine boundary.
FLOAT = np.float64

#: Engines take gradients as float32 (LightGBM casts, XGBoost stores GradientPair<float>).
ENGINE_FLOAT = np.float32

#: Query boundaries: ``group_ptr[q]:group_ptr[q+1]`` are the rows of query ``q``. int64 so a
#: concatenation of large data sets never overflows.
PTR = np.int64

#: Feature matrices from the loaders default to float32 (what LightGBM/XGBoost bin from),
#: float64 on request.
X_FLOAT = np.float32


def kernel_array(values, dtype=FLOAT):
    """``values`` as the one array type a kernel is compiled for: ``dtype``, C-contiguous, aligned and
    writeable (the user's own array when it already is; a copy only when it is not).

    numba compiles one specialisation per argument type, and the type holds the dtype, the layout
    and the read-only flag: a read-only array (a pandas column under copy-on-write, ``np.broadcast_to``,
    a memory-mapped file) would compile every kernel it reaches a second time (seconds to tens of
    seconds each). The copy costs one pass over the array (8 bytes a row for float64), far below a
    kernel call; the kernels never write their inputs, so a writeable input stays untouched.
    """
    return np.require(values, dtype=dtype, requirements="CAW")
