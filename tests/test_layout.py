"""The house's layout (issue #46): the import graph of ``lambda_objectives``, ``reference`` and ``comparisons``
read from the sources (``ast``, nothing imported) has no circle and no import from a lower layer to a higher
one; the top level stays small and every name that left it is reachable in its namespace, and the old names
and module paths still give the same objects, with a ``FutureWarning``, for one release.

The layer order is written once, here (:data:`LAYERS`); docs/development.md draws the same table in words.
"""

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

import lambda_objectives as lo
from lambda_objectives._core.deprecation import MODULES, NAMES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lambda_objectives", "reference", "comparisons")

#: lowest first; a module belongs to the entry with the longest matching prefix; a module may import from
#: its own layer (no circle) or any lower one, never from a higher one
LAYERS = [
    ("lambda_objectives._core",),                  # dtypes, threads, OpenMP, optional imports, moved names
    ("lambda_objectives._kernels",),               # the numba kernels (private)
    ("lambda_objectives.data",),                   # loader, synthetic data, query boundaries
    ("lambda_objectives.checks",),                 # input checks
    ("lambda_objectives._registry",),              # one row per metric / objective
    ("lambda_objectives.objectives", "lambda_objectives.metrics"),   # what the objectives and metrics are
    ("lambda_objectives.adapters",),               # how they reach an engine
    ("lambda_objectives.validation",),             # how engines are validated (probes)
    ("lambda_objectives.catboost", "lambda_objectives.dask", "lambda_objectives.diagnostics",
     "lambda_objectives.clicks"),                  # tools on top
    ("lambda_objectives",),                        # the top level's re-exports
    ("reference",),                                # the from-scratch MART trainer
    ("lambda_objectives._warmup", "lambda_objectives.__main__"),   # the warm-up: calls the library and reference
    ("comparisons._machine", "comparisons._stats", "comparisons.paper_tables", "comparisons.runstore",
     "comparisons._progress"),
    ("comparisons._cli", "comparisons.__main__", "comparisons._runner", "comparisons._data"),
    ("comparisons",),                              # the commands and benchmarks
]

#: the public sub-namespaces (the API reference is built from these and the top level)
NAMESPACES = ("objectives", "metrics", "adapters", "data", "checks", "validation", "catboost", "dask",
              "diagnostics", "clicks")


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts), parts[-1] == "__init__"


def _is_module(name):
    p = ROOT.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def import_graph():
    """``{module: {module it imports}}`` over the three packages, lazy (function-level) imports included:
    ``from x import y`` is an edge to ``x.y`` when that is a module, else to ``x``."""
    graph = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            name, is_init = _module_name(path)
            here = name if is_init else name.rpartition(".")[0]
            deps = set()
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    deps |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = here.split(".")[: len(here.split(".")) - node.level + 1]
                        target = ".".join(base + ([node.module] if node.module else []))
                    else:
                        target = node.module
                    for a in node.names:
                        sub = f"{target}.{a.name}"
                        deps.add(sub if _is_module(sub) else target)
            graph[name] = {d for d in deps if d.split(".")[0] in PACKAGES and d != name}
    return graph


def unit(module):
    """``(layer index, the LAYERS entry it belongs to)``: longest matching prefix."""
    best = None
    for i, entries in enumerate(LAYERS):
        for prefix in entries:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[1])):
                best = (i, prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS in tests/test_layout.py"
    return best


def _circles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_every_module_has_a_layer():
    for module in import_graph():
        unit(module)


def test_no_import_circle_between_modules():
    assert _circles(import_graph()) == []


def test_no_import_circle_between_packages():
    units = {}
    for src, deps in import_graph().items():
        units.setdefault(unit(src)[1], set()).update(unit(d)[1] for d in deps if unit(d)[1] != unit(src)[1])
    assert _circles(units) == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    up = [f"{src} (layer {unit(src)[0]}) imports {dst} (layer {unit(dst)[0]})"
          for src, deps in sorted(import_graph().items()) for dst in sorted(deps) if unit(dst)[0] > unit(src)[0]]
    assert up == []


def test_the_graph_sees_known_edges():
    """The reader is not blind: relative, lazy and ``from pkg import module`` imports are all edges."""
    g = import_graph()
    assert "lambda_objectives._registry" in g["lambda_objectives.objectives.lambdas"]   # from .. import _registry
    assert "lambda_objectives.objectives.listwise" in g["lambda_objectives.objectives.lambdas"]  # lazy
    assert "lambda_objectives.data.groups" in g["lambda_objectives.checks"]
    assert "lambda_objectives.paper" not in g and "comparisons.paper" in g["comparisons.scale"]
    assert unit("lambda_objectives._kernels.pairs") < unit("lambda_objectives._registry")


def test_an_upward_import_is_caught(tmp_path):
    """The rule fails on the circle this layout removed (the kernels reading the registry's codes)."""
    g = import_graph()
    g["lambda_objectives._kernels.pairs"] = g["lambda_objectives._kernels.pairs"] | {"lambda_objectives._registry"}
    assert any(unit(d)[0] > unit(s)[0] for s, ds in g.items() for d in ds)


def test_top_level_is_small():
    assert len(lo.__all__) <= 30, sorted(lo.__all__)
    assert len(set(lo.__all__)) == len(lo.__all__)
    for name in lo.__all__:
        assert getattr(lo, name) is not None


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_namespaces_export_what_they_hold(namespace):
    mod = getattr(lo, namespace)
    assert mod is importlib.import_module(f"lambda_objectives.{namespace}")
    for name in mod.__all__:
        assert hasattr(mod, name), f"lambda_objectives.{namespace}.{name}"


@pytest.mark.parametrize("name", sorted(NAMES["lambda_objectives"]))
def test_old_top_level_name_is_reachable_and_warns(name):
    home = importlib.import_module(NAMES["lambda_objectives"][name])
    assert name in home.__all__, f"{name} is not exported by {home.__name__}"
    with pytest.warns(FutureWarning, match=f"lambda_objectives.{name} moved to {home.__name__}.{name}"):
        old = getattr(lo, name)
    assert old is getattr(home, name)


@pytest.mark.parametrize("module,name", [(m, n) for m, names in NAMES.items() if m != "lambda_objectives"
                                         for n in names])
def test_old_module_attribute_is_reachable_and_warns(module, name):
    new = getattr(importlib.import_module(NAMES[module][name]), name)
    with pytest.warns(FutureWarning, match=f"{module}.{name} moved to"):
        old = getattr(importlib.import_module(module), name)
    assert old is new


@pytest.mark.parametrize("old", sorted(MODULES))
def test_old_module_path_imports_the_new_module_and_warns(old):
    new = importlib.import_module(MODULES[old])
    parent, _, leaf = old.rpartition(".")
    saved = sys.modules.pop(old, None), vars(sys.modules[parent]).get(leaf)  # not getattr: it would import
    if saved[1] is not None:
        delattr(sys.modules[parent], leaf)
    try:
        with pytest.warns(FutureWarning, match=f"{old} moved to {MODULES[old]}"):
            got = importlib.import_module(old)
        assert got is new
        assert new.__name__ == MODULES[old] and new.__spec__.name == MODULES[old]  # the new module untouched
    finally:
        if saved[0] is not None:
            sys.modules[old] = saved[0]
        if saved[1] is not None:
            setattr(sys.modules[parent], leaf, saved[1])


def test_from_import_of_an_old_name_warns():
    with pytest.warns(FutureWarning, match="lambda_objectives.probe_lightgbm moved"):
        from lambda_objectives import probe_lightgbm
    assert probe_lightgbm is lo.validation.probe_lightgbm


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        lo.no_such_name  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not hasattr(lo, "no_such_name")
