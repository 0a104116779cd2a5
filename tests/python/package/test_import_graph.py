"""msrt's Python modules import each other without cycles.

The rule: the graph has an edge A -> B for every `import` / `from ... import`
statement in module A that names msrt module B, wherever the statement is --
at module level or inside a function (an import deferred into a function is
still a dependency; deferring it only hides the cycle from import order).
`from P import name` is an edge to P.name when that is a module, else to P
(for a package, its __init__). Importing a module does not add an edge to its
parent packages (Python runs them first, but they are the façade that imports
their children, not a dependency of them). The native module msrt._C is a leaf.
"""
import ast
import os

import pytest

PACKAGE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "python", "msrt")


def _modules(root):
    """{dotted name: (path, is_package)} for every .py file under msrt."""
    parent = os.path.dirname(os.path.abspath(root))
    mods = {"msrt._C": (None, False)}
    for folder, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = os.path.relpath(path, parent)[:-3].replace(os.sep, ".")
                is_package = name.endswith(".__init__")
                mods[name[: -len(".__init__")] if is_package else name] = (path, is_package)
    return mods


def import_graph(root=PACKAGE_DIR):
    """{module: set of msrt modules it imports} under the rule above."""
    mods = _modules(root)
    graph = {}
    for name, (path, is_package) in mods.items():
        edges = set()
        if path is not None:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    edges.update(a.name for a in node.names if a.name in mods)
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = name if is_package else name.rpartition(".")[0]
                        for _ in range(node.level - 1):
                            base = base.rpartition(".")[0]
                        target = f"{base}.{node.module}" if node.module else base
                    else:
                        target = node.module or ""
                    if target != "msrt" and not target.startswith("msrt."):
                        continue
                    submodules = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods}
                    edges.update(submodules)
                    if len(submodules) < len(node.names) and target in mods:
                        edges.add(target)
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph):
    """One cycle as a list of modules (first == last), or None."""
    state = {}
    stack = []

    def visit(v):
        state[v] = "open"
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == "open":
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = "done"
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_msrt_modules_import_each_other_without_cycles():
    graph = import_graph()
    assert "msrt._jit" in graph and "msrt.nn.cell" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_graph_compilation_modules_are_layered():
    """_jit sits below nn.cell and _grad; _graph_files below _jit (the cycle
    _jit -> nn.cell -> _graph_files -> _jit that lazy imports used to hide)."""
    graph = import_graph()

    def reaches(a, b, seen=None):
        seen = set() if seen is None else seen
        if a == b:
            return True
        seen.add(a)
        return any(reaches(n, b, seen) for n in graph[a] if n not in seen)

    assert reaches("msrt.nn.cell", "msrt._jit") and not reaches("msrt._jit", "msrt.nn.cell")
    assert reaches("msrt._grad", "msrt._jit") and not reaches("msrt._jit", "msrt._grad")
    assert reaches("msrt._jit", "msrt._graph_files") and not reaches("msrt._graph_files", "msrt._jit")


@pytest.mark.parametrize("source, cyclic", [
    ({"a": "from . import b", "b": "def f():\n    from . import a"}, True),  # a deferred import still counts
    ({"a": "from . import b", "b": "from . import c", "c": "import msrt.a"}, True),
    ({"a": "from . import b", "b": "from ._C import x\nimport os"}, False),
])
def test_the_rule_finds_cycles_through_deferred_imports(tmp_path, source, cyclic):
    root = tmp_path / "msrt"
    root.mkdir()
    (root / "__init__.py").write_text("")
    for name, text in source.items():
        (root / f"{name}.py").write_text(text + "\n")
    assert (find_cycle(import_graph(str(root))) is not None) == cyclic
