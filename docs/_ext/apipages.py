"""The ``autoall`` directive: one API page documents one public namespace, read from its ``__all__``.

A page ``docs/api/<namespace>.md`` holds (MyST's ``eval-rst``, so autodoc's output is parsed as RST)::

    ```{eval-rst}
    .. autoall:: lambda_objectives.checks
    ```

and the directive writes the module's docstring and an autodoc entry (``autoclass`` with its public
members, ``autoexception``, ``autofunction`` or ``autodata``) for every name in the module's
``__all__``, in its order, so a name added to ``__all__`` appears without touching the docs. A
module without ``__all__`` gives the public names it defines itself. A class or function that several
namespaces export is described once, in the shallowest of them (:func:`_owners`); the others give a
short entry under their own name that links to it.
"""

import importlib
import inspect
import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

_PAGE = re.compile(r"^\.\. autoall::\s+(\S+)", re.M)
# scikit-learn's metadata-routing and parameter helpers: inherited machinery, documented by scikit-learn
_SKIP_MEMBERS = "get_metadata_routing, set_fit_request, set_score_request, set_predict_request, set_params, get_params, __init__"


def public_names(module):
    """The names a namespace exports: ``__all__``, or the public names it defines itself."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n, obj in vars(module).items()
            if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__
            and (inspect.isclass(obj) or inspect.isfunction(obj))]


def api_namespaces(srcdir):
    """Every namespace that has an API page, read from the pages themselves (``docs/api/*.md``)."""
    found = []
    for page in sorted((Path(srcdir) / "api").glob("*.md")):
        found += _PAGE.findall(page.read_text(encoding="utf-8"))
    return found


def _owners(srcdir):
    """``id(obj) -> "namespace.name"``: where each class or function exported by an API page is documented.

    One entry per object, so no object is described twice: the shallowest namespace that exports it owns
    it (the top level's everyday names are documented where users call them from), ties broken by name.
    """
    owners = {}
    for ns in sorted(api_namespaces(srcdir), key=lambda n: (n.count("."), n)):
        module = importlib.import_module(ns)
        for name in public_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) or callable(obj):
                owners.setdefault(id(obj), f"{ns}.{name}")
    return owners


def _entry(modname, name, obj):
    target = f"{modname}.{name}"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return [f".. autoexception:: {target}", ""]
    if inspect.isclass(obj):
        # inherited members too (``score`` comes from a mixin), but not scikit-learn's own
        return [f".. autoclass:: {target}", "   :members:", "   :inherited-members: BaseEstimator, object",
                f"   :exclude-members: {_SKIP_MEMBERS}", ""]
    if callable(obj):
        return [f".. autofunction:: {target}", ""]
    return [f".. autodata:: {target}", ""]


class AutoAll(SphinxDirective):
    """``.. autoall:: module``: the module's docstring, then every name of its ``__all__``."""

    required_arguments = 1
    has_content = False

    def run(self):
        modname = self.arguments[0]
        module = importlib.import_module(modname)
        self.env.note_dependency(inspect.getsourcefile(module))
        owners = _owners(self.env.srcdir)
        lines = [f".. automodule:: {modname}", "   :no-members:", ""]
        linked = []
        for name in public_names(module):
            obj = getattr(module, name)
            owner = owners.get(id(obj), f"{modname}.{name}") if inspect.isclass(obj) or callable(obj) else None
            if owner is not None and owner != f"{modname}.{name}":
                linked.append((name, owner))
                continue
            lines += _entry(modname, name, obj)
        if linked:
            # a short entry under this namespace's name too, so a reference to it resolves
            lines += [".. rubric:: Also here, documented where they are described in full", ""]
            for name, target in linked:
                kind = "class" if inspect.isclass(getattr(module, name)) else "function"
                lines += [f".. py:{kind}:: {name}", f"   :module: {modname}", "   :no-contents-entry:", "",
                          f"   The same object as :py:obj:`{target}`.", ""]
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(lines, source=f"autoall:{modname}"), container)
        return container.children


def _no_type_docstring(app, what, name, obj, options, lines):
    """A constant without a ``#:`` comment of its own: drop its type's docstring (a dtype's, a dict's)."""
    if what in ("data", "attribute") and not inspect.isclass(obj) and not callable(obj):
        text = "\n".join(lines).strip()
        for cls in type(obj).__mro__:
            doc = cls.__dict__.get("__doc__")
            if isinstance(doc, str) and text and text == inspect.cleandoc(doc).strip():
                lines.clear()
                return
        doc = inspect.getdoc(obj)
        if isinstance(doc, str) and text and text == doc.strip():
            lines.clear()


def _importable(name, context):
    """Whether ``name`` (absolute, or relative to the package ``context`` or its parents) is a module."""
    import importlib.util

    candidates = [name]
    while context:
        candidates.append(f"{context}.{name}")
        context = context.rpartition(".")[0]
    for candidate in candidates:
        try:
            if importlib.util.find_spec(candidate) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False


def _resolve_by_name(app, env, node, contnode):
    """A Python cross reference that names no documented object as written (``:func:`check_group_ptr```
    in a docstring rendered on another namespace's page, or an object's old dotted path) resolves to the
    documented object whose dotted name ends with the same name (for an old dotted path: the same last
    name), the shallowest when several do. A module reference to a real module without a page (a
    private one) is its name, unlinked. Anything else stays unresolved, so the strict build fails on it."""
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    domain = env.get_domain("py")
    target = node["reftarget"].lstrip("~.")
    if node.get("reftype") == "mod":
        table = {name: (mod.docname, mod.node_id) for name, mod in domain.modules.items()}
    else:
        table = {name: (obj.docname, obj.node_id) for name, obj in domain.objects.items() if not obj.aliased}
    def ending(tail):
        return sorted((name for name in table if name == tail or name.endswith("." + tail)),
                      key=lambda name: (name.count("."), name))

    # as written; then an old dotted path (``lambda_objectives.probe_catboost``) by its last name
    found = ending(target) or ("." in target and ending(target.rsplit(".", 1)[1]))
    if not found:
        if node.get("reftype") == "mod" and _importable(target, node.get("py:module")):
            return contnode  # a real module without a page of its own (a private one): its name, unlinked
        return None
    docname, node_id = table[found[0]]
    return make_refnode(app.builder, node["refdoc"], docname, node_id, contnode, found[0])


def setup(app):
    app.connect("missing-reference", _resolve_by_name)
    app.add_directive("autoall", AutoAll)
    # before numpydoc (priority 500) rewrites the lines, so they still read as the type wrote them
    app.connect("autodoc-process-docstring", _no_type_docstring, priority=100)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
