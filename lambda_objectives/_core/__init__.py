"""Private core, the lowest layer: dtypes (:mod:`.config`), numba thread counts (:mod:`.threads`), the OpenMP
runtime shared with XGBoost (:mod:`.openmp`), optional imports (:mod:`.optional`) and the one table of moved
names and module paths (:mod:`.deprecation`). Imports nothing from the rest of the library."""
