"""xjax.install_as_jax() and `python -m xjax run`: `import jax` gives xjax's modules (each test in a
fresh interpreter, since the alias lasts for the life of a process)."""
import os
import subprocess
import sys

from isolated import run_isolated


def test_jax_modules_are_xjax_modules():
    out = run_isolated("""
        import xjax
        xjax.install_as_jax()
        import jax, jax.numpy as jnp
        from jax import lax, random
        import jax.scipy.special, jax.tree_util
        from jax.typing import ArrayLike, DTypeLike
        assert jnp is xjax.numpy and lax is xjax.lax and jax.tree_util is xjax.tree_util
        assert jax.numpy.__name__ == "xjax.numpy" and jax.numpy.__spec__.name == "xjax.numpy"
        assert jax.jit is xjax.jit and jax.Array is xjax.Array
        print(jax.__version__, float(jax.grad(lambda x: jnp.sin(x))(0.0)), jax.device_get({"a": jnp.ones(2)}))
        import jax.version
        print(jax.version.__version__, jax.version.__version_info__, jax.version is jax.version)
        xjax.install_as_jax()  # again: nothing changes
        """)
    lines = out.split("\n")
    assert lines[0] == "0.10.2 1.0 {'a': array([1., 1.], dtype=float32)}"
    assert lines[1] == "0.10.2 (0, 10, 2) True"  # JAX's version module (Flax checks it), not xjax's


def test_missing_modules_and_jaxlib_are_named():
    out = run_isolated("""
        import xjax
        xjax.install_as_jax()
        try:
            import jax.no_such_module
        except ModuleNotFoundError as e:
            print(e.name, "|", e)
        try:
            import jaxlib.xla_client
        except ImportError as e:
            print(e)
        """)
    lines = out.splitlines()
    assert lines[0] == "jax.no_such_module | No module named 'jax.no_such_module'"
    assert lines[1].startswith("'jaxlib' is JAX's own runtime, which xjax replaces") and "<string>:" in lines[1]


def test_refused_after_the_real_jax_is_imported():
    out = run_isolated("""
        import sys, types
        sys.modules["jax"] = types.ModuleType("jax")  # stands for a real JAX imported first
        import xjax
        try:
            xjax.install_as_jax()
        except RuntimeError as e:
            print(e)
        """)
    assert "jax is already imported" in out


def test_python_m_xjax_run_runs_a_jax_program_unedited(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys\nimport jax, jax.numpy as jnp\n"
                      "print(jax.__version__, sys.argv[1:], float(jnp.sum(jnp.arange(4.0))))\n")
    out = subprocess.run([sys.executable, "-m", "xjax", "run", str(script), "a", "--b"], capture_output=True,
                         text=True, env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.10.2 ['a', '--b'] 6.0"
