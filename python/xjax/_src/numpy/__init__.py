"""The implementation of xjax.numpy, written only in terms of xjax.lax primitives."""
