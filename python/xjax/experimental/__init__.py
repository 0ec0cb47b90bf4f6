"""Experimental APIs, as jax.experimental."""
