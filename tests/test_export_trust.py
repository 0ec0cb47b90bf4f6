"""The .xjx loader as a trust boundary: strided buffers, files replaced after loading, graphs that
return an `empty` buffer. Reproducers that once crashed run in their own process."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import _core
from xjax.export import Exporter, deserialize_module, load

from isolated import run_isolated


def _file():
    ex = Exporter()
    ex.add(lambda x: jnp.sin(x) * 2.0, jnp.ones(4), name="f")
    return ex.serialize()


def test_strided_buffers_are_copied_or_refused():
    out = run_isolated("""
        import numpy as np, xjax.numpy as jnp
        from xjax import _core
        from xjax.export import Exporter, deserialize_module
        ex = Exporter()
        ex.add(lambda x: jnp.sin(x) * 2.0, jnp.ones(4), name="f")
        blob = np.frombuffer(ex.serialize(), np.uint8)
        every_other = np.repeat(blob, 2)[::2]  # a strided view of the file's bytes
        backwards = blob[::-1]  # what once segfaulted: read from its last byte
        assert not every_other.flags.c_contiguous and not backwards.flags.c_contiguous
        m = deserialize_module(every_other)  # copied: read as the bytes it shows
        print(float(m.signatures("f")[0].call(jnp.ones(4))[0]))
        try:
            deserialize_module(backwards)
        except ValueError:
            print("refused")  # the reversed bytes are no file
        for view in (every_other, backwards):
            for fn in (lambda: _core.xjx_read(view), lambda: _core.xjx_checksum(view)):
                try:
                    fn()
                except ValueError as e:
                    assert "C-contiguous" in str(e), e
                else:
                    raise AssertionError("the binding took a strided buffer")
        """)
    lines = out.split()
    assert float(lines[0]) == pytest.approx(2 * np.sin(1.0), rel=1e-6) and lines[1] == "refused"


def test_a_loaded_file_can_be_replaced_by_default(tmp_path):
    path = tmp_path / "model.xjx"
    path.write_bytes(_file())
    out = run_isolated(f"""
        import os, xjax.numpy as jnp
        from xjax.export import load
        m = load({str(path)!r})
        f = m.signatures("f")[0]
        with open({str(path)!r}, "r+b") as fh:
            fh.truncate(10)  # what `cp new.xjx model.xjx` does first
        os.remove({str(path)!r})
        print(float(f.call(jnp.ones(4))[0]))
        """)
    assert float(out) == pytest.approx(2 * np.sin(1.0), rel=1e-6)


def test_mapped_loading_reads_weights_in_place(tmp_path):
    w = jnp.arange(4.0)
    ex = Exporter()
    ex.add(lambda x: x + w, jnp.ones(4), name="f")
    path = tmp_path / "model.xjx"
    path.write_bytes(ex.serialize())
    for mmap in (False, True):
        f = load(path, mmap=mmap).signatures("f")[0]
        np.testing.assert_array_equal(f.call(jnp.ones(4)), [1.0, 2.0, 3.0, 4.0])


def test_a_graph_returning_an_empty_buffer_reads_zeros():
    g = _core.Graph()
    (e,) = g.add("empty", [], {"shape": [4096], "dtype": "float32"})
    g.set_outputs([e])
    blob = _core.xjx_write([("leak", g, [], [((4096,), "float32", False)], [], '{"tuple":[]}', '"*"')], [], "test")
    garbage = [jnp.full((4096,), 7.0) + i for i in range(8)]  # blocks to be freed and reused
    jax.block_until_ready(garbage)
    del garbage
    module = deserialize_module(blob)
    for _ in range(3):
        (out,) = module._module.functions[0].call([])
        out.wait()
        assert not np.asarray(memoryview(out.bytes_view())).any()


def _chain_graph(n_nodes, size):
    g = _core.Graph()
    x = g.parameter((size,), "float32")
    v = x
    for i in range(n_nodes):
        (v,) = g.add("sin" if i % 3 else "add", [v] if i % 3 else [v, x], {})
    g.set_outputs([v])
    return g


def _record(name, g, size, outputs=1):
    spec = ((size,), "float32", False)
    return (name, g, [spec], [spec] * outputs, [], '{"tuple":[{"tuple":["*"]},{"dict":[]}]}',
            '"*"' if outputs == 1 else '{"tuple":[' + ",".join(['"*"'] * outputs) + ']}')


def test_records_sharing_a_graph_store_and_compile_it_once():
    g = _chain_graph(1500, 64)
    one = _core.xjx_write([_record("f0", g, 64)], [], "test")
    many = _core.xjx_write([_record(f"f{i}", g, 64) for i in range(400)], [], "test")
    assert len(many) < len(one) + 400 * 200  # one graph, 400 small records (was 400 graphs: 28 MB)
    module = deserialize_module(many)
    first, last = (module.signatures(n)[0].call(jnp.ones(64)) for n in ("f0", "f399"))
    np.testing.assert_array_equal(first, last)


def test_the_buffers_of_a_run_are_bounded_at_load():
    g = _core.Graph()
    x = g.parameter((1 << 18,), "float32")  # 1 MiB each: every value under the limit below
    outs = [g.add(op, [x], {})[0] for op in ("sin", "cos", "exp")]
    g.set_outputs(outs)
    blob = _core.xjx_write([_record("f", g, 1 << 18, outputs=3)], [], "test")
    assert len(deserialize_module(blob).names) == 1
    with pytest.raises(ValueError, match=r"function 'f' needs \d+ bytes of buffers per run, more than the limit"):
        deserialize_module(blob, max_array_bytes=2 << 20)
