"""checkify (jax.experimental.checkify): functional error checks. Not implemented in xjax yet: the
names exist so that libraries import, and checkify itself raises NotImplementedError."""


class JaxException(Exception):
    """The base class of the errors checkify can check for."""


class FailedCheckError(JaxException):
    """A user check (checkify.check) that failed."""


user_checks = frozenset({FailedCheckError})


def checkify(f, errors=user_checks):
    raise NotImplementedError("jax.experimental.checkify.checkify is not implemented in xjax yet")


def check(pred, msg, *fmt_args, **fmt_kwargs):
    raise NotImplementedError("jax.experimental.checkify.check is not implemented in xjax yet")
