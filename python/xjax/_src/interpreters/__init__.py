"""Interpreters of jaxprs and tracers: tracing to jaxprs (partial_eval), lowering to C++ graphs."""
