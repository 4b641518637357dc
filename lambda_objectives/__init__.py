"""lambda_objectives: exact, fast LambdaMART objectives and ranking metrics as numba kernels.

The public API is flat: everything a user needs is importable from ``lambda_objectives``.
"""

from .groups import (
    frame_group_ptr,
    ptr_to_qid,
    ptr_to_sizes,
    qid_to_ptr,
    resolve_group_ptr,
    sizes_to_ptr,
)

__version__ = "0.1.0"

__all__ = [
    "frame_group_ptr",
    "ptr_to_qid",
    "ptr_to_sizes",
    "qid_to_ptr",
    "resolve_group_ptr",
    "sizes_to_ptr",
]

# Each module below adds its names in its own block (kept in this order).
# --- io / datasets ---
# --- metrics ---
# --- lambdas ---
# --- adapters ---
