"""xjax.config: the jax.config surface programs use at start (update, read, values, attributes,
absl entry points) and the top-level flag context managers; messages as JAX 0.10.2 words them."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp

# The subprocess imports the xjax this test imports (an installed one in CI, python/ in the edit loop).
PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(xjax.__file__)))


def run_script(code, *argv, env=None):
    """Runs code in a fresh interpreter with argv; returns its stdout (the test fails on a non-zero exit)."""
    full_env = dict(os.environ, PYTHONPATH=PYTHON_DIR, **(env or {}))
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *argv], capture_output=True, text=True,
                         env=full_env, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_update_read_values_and_attributes():
    c = xjax.config
    assert c.read("jax_enable_x64") is False and c.jax_enable_x64 is False and c.x64_enabled is False
    values = c.values
    assert values["jax_enable_x64"] is False and values["jax_numpy_rank_promotion"] == "allow"
    values["jax_enable_x64"] = True  # a copy: changing it changes nothing
    assert c.jax_enable_x64 is False
    c.update("jax_enable_x64", True)
    try:
        assert c.jax_enable_x64 and c.x64_enabled and jnp.arange(2).dtype == np.int64
    finally:
        c.update("jax_enable_x64", False)
    assert jnp.arange(2).dtype == np.int32


def test_flags_programs_set_at_start_are_accepted():
    c = xjax.config
    for name, value in [("jax_platforms", "cpu"), ("jax_platform_name", "cpu"), ("jax_default_matmul_precision", "highest"),
                        ("jax_compilation_cache_dir", "/tmp/xjax-cache"), ("jax_persistent_cache_min_compile_time_secs", 0),
                        ("jax_traceback_filtering", "off"), ("jax_threefry_partitionable", True),
                        ("jax_enable_checks", False), ("jax_log_compiles", False), ("jax_num_cpu_devices", 1)]:
        old = c.read(name)
        c.update(name, value)
        try:
            assert c.read(name) == value
        finally:
            c.update(name, old)
    assert c.read("jax_persistent_cache_min_compile_time_secs") == 1.0


@pytest.mark.parametrize("name, value, exc, match", [
    ("jax_nonexistent", 1, AttributeError, "Unrecognized config option: jax_nonexistent"),
    ("jax_numpy_rank_promotion", "bogus", ValueError,
     r"new enum value must be in \['allow', 'warn', 'raise'\], got bogus of type <class 'str'>."),
    ("jax_default_matmul_precision", "bogus", ValueError, r"new enum value must be None or in \['default', 'high',"),
    ("jax_platforms", 3, ValueError, "new string config value must be None or of type str, got 3 of type <class 'int'>."),
])
def test_bad_updates(name, value, exc, match):
    with pytest.raises(exc, match=match):
        xjax.config.update(name, value)


def test_reading_unknown_names():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nonexistent"):
        xjax.config.read("jax_nonexistent")
    with pytest.raises(AttributeError, match="'Config' object has no attribute 'jax_nonexistent'"):
        xjax.config.jax_nonexistent  # noqa: B018


def test_bool_flags_coerce_as_in_jax():
    c = xjax.config
    c.update("jax_log_compiles", "yes")
    assert c.jax_log_compiles is True
    c.update("jax_log_compiles", None)
    assert c.jax_log_compiles is False


def test_unimplemented_result_changing_flags_warn():
    with pytest.warns(UserWarning, match="xjax does not implement jax_debug_nans=True yet"):
        xjax.config.update("jax_debug_nans", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xjax.config.update("jax_debug_nans", False)  # back to the default: no warning
        xjax.config.update("jax_numpy_rank_promotion", "allow")


def test_context_managers():
    with xjax.enable_x64():
        assert jnp.arange(2).dtype == np.int64 and xjax.enable_x64.value
    assert jnp.arange(2).dtype == np.int32 and not xjax.enable_x64.value
    with xjax.enable_x64(False):
        assert jnp.arange(2).dtype == np.int32
    with xjax.disable_jit():
        assert xjax.config.jax_disable_jit
        seen = []
        xjax.jit(lambda x: seen.append(type(x).__name__) or x)(jnp.ones(2))
        assert seen == ["Array"]  # ran eagerly, on concrete arrays
    assert not xjax.config.jax_disable_jit
    with xjax.default_matmul_precision("float32"):
        assert xjax.config.jax_default_matmul_precision == "float32"
    assert xjax.config.jax_default_matmul_precision is None
    with pytest.raises(TypeError, match="Context manager for numpy_rank_promotion config option requires an argument"):
        with xjax.numpy_rank_promotion():
            pass


def test_parse_flags_with_absl_reads_jax_options_from_argv():
    out = run_script("""
        import xjax
        xjax.config.parse_flags_with_absl()
        xjax.config.parse_flags_with_absl()  # once only: a second call changes nothing
        print(xjax.config.jax_enable_x64, xjax.config.jax_platforms, xjax.config.jax_log_compiles,
              xjax.config.jax_persistent_cache_min_compile_time_secs, xjax.config.jax_debug_infs)
        """, "--jax_enable_x64", "--jax_platforms=cpu", "--nojax_log_compiles", "--other_flag=1", "positional",
        "--jax_persistent_cache_min_compile_time_secs=2.5", "--", "--jax_debug_infs")
    assert out.split() == ["True", "cpu", "False", "2.5", "False"]


def test_config_with_absl_lets_app_run_take_jax_flags():
    pytest.importorskip("absl")
    out = run_script("""
        from absl import app
        import xjax
        import xjax.numpy as jnp

        def main(argv):
            print(jnp.arange(2).dtype, xjax.config.jax_platforms, xjax.config.use_absl)

        xjax.config.config_with_absl()
        app.run(main)
        """, "--jax_enable_x64", "--jax_platforms=cpu")
    assert out.split() == ["int64", "cpu", "True"]


def test_environment_variables_set_flags():
    out = run_script("""
        import xjax
        print(xjax.config.jax_enable_x64, xjax.config.jax_platforms, xjax.config.jax_num_cpu_devices)
        """, env={"JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "2"})
    assert out.split() == ["True", "cpu", "2"]
