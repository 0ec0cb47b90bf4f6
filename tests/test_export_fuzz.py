"""The .xjx loader is an untrusted-input boundary: thousands of mutations of real exported files (bit
flips, random bytes, length and count fields set to edge values, truncations, header edits), most
resealed with a valid checksum so that the parser itself meets them, must each load or raise
ValueError. The loop runs in a subprocess, so that a crash fails this test instead of pytest."""
import os
import pathlib
import subprocess
import sys
import textwrap

FUZZ_SCRIPT = textwrap.dedent(r'''
    import random
    import struct
    import sys

    import numpy as np
    import xjax as jax
    import xjax.numpy as jnp
    from xjax import _core, lax, optim
    from xjax.export import Exporter, deserialize_module

    # Real files: an MLP's predict and adam train step; control flow; PRNG.
    key = jax.random.PRNGKey(0)
    params = [{"w": jax.random.normal(key, (8, 16)), "b": jnp.zeros(16)},
              {"w": jax.random.normal(key, (16, 4)), "b": jnp.zeros(4)}]
    opt = optim.adam(1e-2)

    def model(p, x):
        return jax.nn.relu(x @ p[0]["w"] + p[0]["b"]) @ p[1]["w"] + p[1]["b"]

    def train_step(p, s, x, y):
        loss, g = jax.value_and_grad(lambda p: jnp.mean((model(p, x) - y) ** 2))(p)
        u, s = opt.update(g, s, p)
        return loss, optim.apply_updates(p, u), s

    def control(i, x):
        x = lax.cond(i > 0, jnp.sin, jnp.cos, x)
        x = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]
        return lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(4), x.reshape(2, 4))

    def noise(k, x):
        return x + jax.random.uniform(k, x.shape)

    def layout_and_indexing(x, idx, img):
        g = x[idx].sum() + x.at[idx].add(1.0)[::-1]
        d = lax.dynamic_slice(x, (idx[0],), (3,))
        c = lax.conv_general_dilated(img, jnp.ones((2, 1, 3, 3)), (1, 1), "SAME")
        p = lax.reduce_window(c, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        s = jnp.sort(x) + jnp.cumsum(x) + jnp.argmax(x)
        t = lax.top_k(x, 2)[0]
        cat = jnp.concatenate([jnp.pad(d, 1), t, jnp.transpose(p.reshape(2, 4)).ravel()])
        return g.sum() + s, cat

    x, y = jnp.ones((2, 8)), jnp.ones((2, 4))
    ex1 = Exporter()
    ex1.add(lambda x: model(params, x), x, name="predict")
    ex1.add(train_step, params, opt.init(params), x, y)
    ex2 = Exporter()
    ex2.add(control, 1, jnp.arange(8.0))
    ex2.add(noise, key, jnp.ones(5))
    ex3 = Exporter()
    ex3.add(layout_and_indexing, jnp.arange(8.0), jnp.array([1, 3, 5]), jnp.ones((1, 1, 4, 4)))
    files = [ex1.serialize(), ex2.serialize(), ex3.serialize()]

    def reseal(b):
        b[-8:] = struct.pack("<Q", _core.xjx_checksum(bytes(b[:-8])))

    EDGE = [0, 1, 2, 7, 63, 64, 65, 255, 2**16, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**62, 2**63, 2**64 - 1]

    def mutate(rng, b, kind):
        n = len(b)
        prog_end = struct.unpack_from("<Q", b, 24)[0] + struct.unpack_from("<Q", b, 32)[0]
        if kind == 0:  # bit flips
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(n - 8)] ^= 1 << rng.randrange(8)
        elif kind == 1:  # random bytes in the program section
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(64, prog_end)] = rng.randrange(256)
        elif kind == 2:  # a length or count field set to an edge value
            at = rng.randrange(64, prog_end - 8)
            v = rng.choice(EDGE)
            if rng.random() < 0.5:
                struct.pack_into("<I", b, at, v & 0xFFFFFFFF)
            else:
                struct.pack_into("<Q", b, at, v & 0xFFFFFFFFFFFFFFFF)
        elif kind == 3:  # a header field (versions, sizes, offsets) set to an edge value
            at = rng.choice([8, 12, 16, 24, 32, 40, 48, 56])
            struct.pack_into("<Q" if at >= 16 else "<I", b, at, rng.choice(EDGE) & (2**64 - 1 if at >= 16 else 2**32 - 1))
        elif kind == 4:  # truncated, the header's size made to match
            del b[rng.randrange(64, n - 8):-8]
            struct.pack_into("<Q", b, 16, len(b))
        elif kind == 5:  # truncated as is (no reseal)
            del b[rng.randrange(n):]
            return
        elif kind == 6:  # a bit flip without reseal: the checksum must catch it
            b[rng.randrange(n - 8)] ^= 1 << rng.randrange(8)
            return
        if len(b) >= 72:
            reseal(b)

    def zeros(shape, dtype):
        n = int(np.prod(shape, dtype=np.int64)) * (2 if dtype == "bfloat16" else np.dtype(dtype).itemsize)
        return _core.Array.from_buffer(np.zeros(n, np.uint8), shape, dtype)

    rng = random.Random(int(sys.argv[1]))
    n_cases = int(sys.argv[2])
    loaded = refused = called = 0
    for k in range(n_cases):
        b = bytearray(files[k % len(files)])
        mutate(rng, b, k % 7)
        try:
            module = deserialize_module(bytes(b), max_array_bytes=1 << 26)
        except ValueError:
            refused += 1
            continue
        loaded += 1
        # What the shape rules let through, the kernels must survive: run it on zeros (an exception
        # is fine, a crash is not). Not loops: a mutated loop may never end.
        for fn in module._module.functions:
            if "= while(" in fn.graph.text():
                continue
            try:
                args = [zeros(s, d) for s, d, _ in fn.inputs]
                for out in fn.call(args):
                    out.wait()
            except Exception:  # noqa: BLE001 - any error is an answer; only a crash fails
                pass
        # And as a user calls them: each signature's Exported, its arguments rebuilt from the stored
        # structure (pytree text parsed), called through Exported.call.
        for name in module.names:
            try:
                sigs = module.signatures(name)
            except Exception:  # noqa: BLE001
                continue
            for exp in sigs:
                if "= while(" in exp.graph_text():
                    continue
                try:
                    leaves = [jnp.zeros(a.shape, a.dtype) for a in exp.in_avals]
                    args, kwargs = exp.in_tree.unflatten(leaves)
                    jax.block_until_ready(exp.call(*args, **kwargs))
                    called += 1
                except Exception:  # noqa: BLE001
                    pass
    print(loaded, refused, called)
''')


def test_mutated_files_load_or_raise_value_error():
    import xjax

    root = str(pathlib.Path(xjax.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", FUZZ_SCRIPT, "13", "20000"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    loaded, refused, called = map(int, proc.stdout.split())
    assert loaded + refused == 20000
    assert called > 100  # loaded functions ran through the public API
    assert refused > 15000  # most mutations break something; each one that did was refused cleanly
