"""Optional dependencies: imported on use, with an error that says which extra installs them."""

import importlib

#: module -> the extra of ``pyproject.toml`` that installs it
EXTRAS = {"lightgbm": "engines", "xgboost": "engines", "catboost": "catboost", "dask": "dask",
          "distributed": "dask", "matplotlib": "plots", "tqdm": "plots"}


def require(module):
    """Import ``module`` (e.g. ``"xgboost"``); an ``ImportError`` naming the pip extra if it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = EXTRAS.get(top, "all")
        raise ImportError(f"{top} is needed for this and is not installed: pip install 'lambda_objectives[{extra}]' "
                          f"(or pip install {top})") from exc
