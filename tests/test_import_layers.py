"""The layers of xjax._src (docs/architecture.md, "Layers"): import-linter's contracts in
pyproject.toml hold, an upward import or a cycle breaks them, and every function-local import
left is a deliberate lazy load that says why."""
import ast
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "xjax"

pytest.importorskip("importlinter")


def _lint(python_dir):
    """(return code, output) of lint-imports over the package under python_dir, with pyproject's contracts."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    proc = subprocess.run([sys.executable, "-c", code, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=python_dir, env={"PYTHONPATH": str(python_dir), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _package_copy(tmp_path):
    target = tmp_path / "python"
    shutil.copytree(PACKAGE, target / "xjax", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return target


def _append_to_function(path, import_line):
    """Adds `import_line` as a function-local import (as the imports that hid cycles were)."""
    with open(path, "a") as f:
        f.write(f"\n\ndef _added():\n    {import_line}\n")


def test_the_contracts_hold():
    rc, out = _lint(ROOT / "python")
    assert rc == 0, out
    assert "Contracts: 2 kept, 0 broken." in out, out


@pytest.mark.parametrize("module, import_line, message", [
    # the IR importing the API layer above it
    ("_src/core.py", "from xjax._src import api", "xjax._src.core is not allowed to import xjax._src.api"),
    # the interpreters importing lax (they apply lax's functions through interpreters/array_ops)
    ("_src/interpreters/ad.py", "from xjax._src.lax import layout",
     "xjax._src.interpreters is not allowed to import xjax._src.lax"),
    # the CPU paths importing the GPU runtime (it plugs in through platforms.gpu)
    ("_src/backends/cpu.py", "from xjax._src.gpu import cuda", "xjax._src.backends is not allowed to import xjax._src.gpu"),
])
def test_an_upward_import_breaks_the_layers(tmp_path, module, import_line, message):
    python_dir = _package_copy(tmp_path)
    _append_to_function(python_dir / "xjax" / module, import_line)
    rc, out = _lint(python_dir)
    assert rc != 0 and message in out, out


def test_a_cycle_within_a_layer_breaks_the_acyclic_contract(tmp_path):
    python_dir = _package_copy(tmp_path)
    # numpy.take imports numpy.indexing; the reverse closes a cycle inside the numpy layer
    _append_to_function(python_dir / "xjax" / "_src" / "numpy" / "indexing.py", "from xjax._src.numpy import take")
    rc, out = _lint(python_dir)
    assert rc != 0 and "No cycles are allowed in xjax._src.numpy" in out, out


def _function_local_imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        lines = text.split("\n")
        for fn in ast.walk(ast.parse(text)):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        yield path.relative_to(PACKAGE), node.lineno, lines[node.lineno - 1]


def test_function_local_imports_are_lazy_loads_that_say_why():
    found = list(_function_local_imports())
    assert found, "the scan finds nothing: it no longer reads the package"
    unexplained = [f"{path}:{line}: {text.strip()}" for path, line, text in found if "# lazy:" not in text
                   and "- lazy" not in text]
    assert not unexplained, "function-local imports without a `# lazy: why` comment:\n" + "\n".join(unexplained)


def test_every_module_of_src_is_in_a_layer():
    tomllib = pytest.importorskip("tomllib")  # (Python 3.11+)
    with open(ROOT / "pyproject.toml", "rb") as f:
        layers = tomllib.load(f)["tool"]["importlinter"]["contracts"][0]["layers"]
    listed = {name.strip() for layer in layers for name in re.split(r"[:|]", layer)}
    src = PACKAGE / "_src"
    modules = {p.stem for p in src.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in src.iterdir() if (p / "__init__.py").exists()}
    assert modules - listed == set(), "modules of xjax._src in no layer of pyproject.toml (add them where they belong)"
    assert listed - modules == set(), "layers naming modules that do not exist"
