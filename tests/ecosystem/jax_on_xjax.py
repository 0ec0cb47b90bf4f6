"""pytest plugin: `import jax` gives xjax for the whole run, so a library's own test suite (optax's,
shipped in its wheel) runs on xjax unchanged:

    python -m pytest -p tests.ecosystem.jax_on_xjax --pyargs optax

A plugin named with -p is imported before pytest collects anything, so the alias is in place before
the first test module imports jax.
"""
import xjax

xjax.install_as_jax()
