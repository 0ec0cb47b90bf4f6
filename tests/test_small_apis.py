"""Small public modules libraries import: jax.monitoring, jax.named_scope, and jax.experimental.pallas
(which xjax does not implement: importable, every name raises NotImplementedError)."""
import pytest

import xjax as jax


def test_monitoring_calls_its_listeners():
    from xjax import monitoring

    seen = []
    listener = lambda *args, **kwargs: seen.append((args, kwargs))  # noqa: E731
    monitoring.register_event_listener(listener)
    monitoring.register_scalar_listener(listener)
    try:
        monitoring.record_event("/a", tag="x")
        monitoring.record_scalar("/b", 2.5)
    finally:
        monitoring.unregister_event_listener(listener)
        monitoring.unregister_scalar_listener(listener)
    monitoring.record_event("/c")  # nobody listens any more
    assert seen == [(("/a",), {"tag": "x"}), (("/b", 2.5), {})]
    with pytest.raises(AssertionError):
        monitoring.unregister_event_listener(listener)


def test_named_scope():
    with jax.named_scope("layer"):
        assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0
    with pytest.raises(TypeError, match="must be a string"):
        with jax.named_scope(3):
            pass


def test_pallas_is_importable_but_not_implemented():
    from xjax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel
    import xjax.experimental.pallas as pl

    with pytest.raises(NotImplementedError, match="splash_attention_kernel.make_splash_mha is not implemented"):
        splash_attention_kernel.make_splash_mha
    with pytest.raises(NotImplementedError, match="pallas_call"):
        pl.pallas_call
    assert not hasattr(pl, "__wrapped__")  # dunder probes are plain AttributeErrors


def test_device_is_the_base_of_every_device():
    assert all(isinstance(d, jax.Device) for d in jax.devices())
    assert not isinstance("cpu:0", jax.Device)
