"""xjax.experimental.checkify (jax.experimental.checkify): not implemented in xjax yet."""
from xjax._src.checkify import FailedCheckError, JaxException, check, checkify, user_checks  # noqa: F401
