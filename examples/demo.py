"""A short tour: eager xjax.numpy (arrays live in the C++ core, ops run there asynchronously), then jit."""
import time

import numpy as np

import xjax as jax
import xjax.numpy as jnp

x = jnp.arange(10)
print(x)
print(repr(x))
print(repr(x * 2 + 1), repr(x / 2))

m = jnp.asarray(np.random.default_rng(0).random((512, 512), dtype=np.float32))
t = time.perf_counter()
y = (m @ m).block_until_ready()
print(f"512x512 matmul: {1e3 * (time.perf_counter() - t):.2f} ms, checksum {float(jnp.sum(y)):.3f}")

v = jnp.linspace(-3.0, 3.0, 7)
print("tanh:", jnp.tanh(v))
print("sorted:", jnp.sort(jnp.asarray([3, 1, 2])), "argmax:", jnp.argmax(v))
print("updated:", x.at[2].set(100))
try:
    x[0] = 1
except TypeError as e:
    print("TypeError:", str(e).split(".")[0])
print("devices:", jax.devices())


def selu(x, alpha=1.67, lambda_=1.05):
    return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


print(jax.make_jaxpr(selu)(1.0))
big = jnp.linspace(-5.0, 5.0, 4_000_000)
selu_jit = jax.jit(selu)
selu_jit(big).block_until_ready()  # compiles once: one fused kernel
for name, fn in (("eager", selu), ("jit", selu_jit)):
    t = time.perf_counter()
    for _ in range(10):
        fn(big).block_until_ready()
    print(f"selu over 4M floats, {name}: {1e2 * (time.perf_counter() - t):.2f} ms")
