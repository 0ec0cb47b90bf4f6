"""Helpers shared by the distributions: constants of an operand's dtype."""
import numpy as np


def const(x, value):
    """A 0-d constant of x's dtype (strongly typed, as JAX's lax._const)."""
    return np.array(value, x.aval.dtype)
