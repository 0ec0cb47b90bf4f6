"""Testing helpers: numerical gradient checks."""
from xjax._src.test_util import check_grads, check_jvp, check_vjp  # noqa: F401
