"""Runnable examples shipped with xjax; `python -m xjax.examples.train` is the main job (a CNN on digits)."""
