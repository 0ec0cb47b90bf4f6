"""Waiting for queued work (JAX's `dispatch.wait_for_tokens`): xjax runs computations and their
ordered effects (host callbacks) on the core's stream in order, so waiting for the stream waits
for every effect issued so far."""
from xjax import _core


def wait_for_tokens():
    _core.synchronize()
