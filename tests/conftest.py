"""Test-wide settings: hypothesis without per-example deadlines (the machines are small and shared)."""
from hypothesis import settings

settings.register_profile("xjax", deadline=None)
settings.load_profile("xjax")
