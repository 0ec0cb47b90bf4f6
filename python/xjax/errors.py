"""xjax.errors: the errors of tracing and transformations, under JAX's names."""
from xjax._src.errors import (  # noqa: F401
    ConcretizationTypeError, JAXIndexError, JAXTypeError, JaxRuntimeError, KeyReuseError, NonConcreteBooleanIndexError,
    TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError, UnexpectedTracerError)

__all__ = [
    "ConcretizationTypeError", "JAXIndexError", "JAXTypeError", "JaxRuntimeError", "KeyReuseError", "NonConcreteBooleanIndexError",
    "TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
