"""xjax: a JAX-compatible array runtime with a C++ core."""
