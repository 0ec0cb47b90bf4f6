"""Programs whose jaxprs tests/test_jaxpr_jax_text.py compares with JAX's (see record_jaxprs.py).

Each is Python source run with `jax`, `jnp`, `lax` and `np` bound (to JAX's modules when recording,
to xjax's when testing) that defines `fn` and `args`; the recorded text is
str(jax.make_jaxpr(fn)(*args)), the recorded types are the outputs' (dtype, weak_type).
"""

PROGRAMS = {
    # ---- scalar gradients: Python floats and float32 arrays -------------------------------------
    "grad_sin_float": "fn = jax.grad(jnp.sin)\nargs = (1.0,)\n",
    "grad_cos_float": "fn = jax.grad(jnp.cos)\nargs = (1.0,)\n",
    "grad_tanh_float": "fn = jax.grad(jnp.tanh)\nargs = (1.0,)\n",
    "grad_exp_float": "fn = jax.grad(jnp.exp)\nargs = (1.0,)\n",
    "grad_log_float": "fn = jax.grad(jnp.log)\nargs = (2.0,)\n",
    "grad_log1p_float": "fn = jax.grad(jnp.log1p)\nargs = (0.5,)\n",
    "grad_expm1_float": "fn = jax.grad(jnp.expm1)\nargs = (0.5,)\n",
    "grad_sqrt_float": "fn = jax.grad(jnp.sqrt)\nargs = (2.0,)\n",
    "grad_rsqrt_float": "fn = jax.grad(lax.rsqrt)\nargs = (2.0,)\n",
    "grad_sigmoid_float": "fn = jax.grad(jax.nn.sigmoid)\nargs = (0.3,)\n",
    "grad_square_float": "fn = jax.grad(lambda x: x ** 2)\nargs = (3.0,)\n",
    "grad_cube_float": "fn = jax.grad(lambda x: x ** 3)\nargs = (3.0,)\n",
    "grad_pow_half_float": "fn = jax.grad(lambda x: x ** 0.5)\nargs = (3.0,)\n",
    "grad_recip_float": "fn = jax.grad(lambda x: 1.0 / x)\nargs = (3.0,)\n",
    "grad_where_float": "fn = jax.grad(lambda x: jnp.where(x > 0, x, 2 * x))\nargs = (0.7,)\n",
    "grad_sum_ones_float": "fn = jax.grad(lambda x: jnp.sum(jnp.ones(3) * x))\nargs = (0.7,)\n",
    "grad_abs_float": "fn = jax.grad(jnp.abs)\nargs = (-0.7,)\n",
    "grad_relu_float": "fn = jax.grad(jax.nn.relu)\nargs = (0.7,)\n",
    "grad_poly_float": "fn = jax.grad(lambda x: 3 * x ** 2 + 2 * x + 1)\nargs = (0.7,)\n",
    "grad_sin_array": "fn = jax.grad(jnp.sin)\nargs = (jnp.array(1.0),)\n",
    "grad_tanh_array": "fn = jax.grad(jnp.tanh)\nargs = (jnp.array(1.0),)\n",
    "grad_square_array": "fn = jax.grad(lambda x: x ** 2)\nargs = (jnp.array(3.0),)\n",
    "grad_where_array": "fn = jax.grad(lambda x: jnp.where(x > 0, x, 2 * x))\nargs = (jnp.array(0.7),)\n",
    "grad_sum_ones_array": "fn = jax.grad(lambda x: jnp.sum(jnp.ones(3) * x))\nargs = (jnp.array(0.7),)\n",
    "grad_logistic_array": "fn = jax.grad(lax.logistic)\nargs = (jnp.array(0.3),)\n",
    "grad_mul_two_args": "fn = jax.grad(lambda x, y: x * y, argnums=(0, 1))\nargs = (2.0, 3.0)\n",
    "grad_div_two_args": "fn = jax.grad(lambda x, y: x / y, argnums=(0, 1))\nargs = (2.0, 3.0)\n",
    "grad_pow_two_args": "fn = jax.grad(lambda x, y: x ** y, argnums=(0, 1))\nargs = (2.0, 3.0)\n",
    "grad_max_two_args": "fn = jax.grad(lambda x, y: jnp.maximum(x, y), argnums=(0, 1))\nargs = (2.0, 3.0)\n",
    "grad_min_two_args": "fn = jax.grad(lambda x, y: jnp.minimum(x, y), argnums=(0, 1))\nargs = (2.0, 3.0)\n",
    "grad_sign_mul": "fn = jax.grad(lambda x: jnp.sign(x) * x)\nargs = (jnp.array(-2.0),)\n",
    "grad_integer_pow": "fn = jax.grad(lambda x: lax.integer_pow(x, 4))\nargs = (jnp.array(2.0),)\n",
    # ---- value_and_grad, jvp ---------------------------------------------------------------------
    "value_and_grad_sin": "fn = jax.value_and_grad(jnp.sin)\nargs = (1.0,)\n",
    "value_and_grad_sumsq": "fn = jax.value_and_grad(lambda x: jnp.sum(x ** 2))\nargs = (jnp.arange(3.0),)\n",
    "value_and_grad_has_aux": ("def fn(x):\n    return jax.value_and_grad(lambda x: (jnp.sum(jnp.tanh(x)), x * 2), has_aux=True)(x)\n"
                               "args = (jnp.arange(3.0),)\n"),
    "jvp_sin": "def fn(x, t):\n    return jax.jvp(jnp.sin, (x,), (t,))\nargs = (1.0, 1.0)\n",
    "jvp_tanh_array": "def fn(x, t):\n    return jax.jvp(jnp.tanh, (x,), (t,))\nargs = (jnp.arange(3.0), jnp.ones(3))\n",
    "jvp_exp_log": "def fn(x, t):\n    return jax.jvp(lambda x: jnp.log(jnp.exp(x) + 1), (x,), (t,))\nargs = (jnp.arange(3.0), jnp.ones(3))\n",
    "jvp_div": "def fn(x, y, t):\n    return jax.jvp(lambda a, b: a / b, (x, y), (t, t))\nargs = (jnp.arange(3.0), jnp.ones(3), jnp.ones(3))\n",
    "jvp_sqrt_rsqrt": "def fn(x, t):\n    return jax.jvp(lambda x: jnp.sqrt(x) + lax.rsqrt(x), (x,), (t,))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "jvp_logistic": "def fn(x, t):\n    return jax.jvp(jax.nn.sigmoid, (x,), (t,))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "jvp_max": "def fn(x, y, t):\n    return jax.jvp(jnp.maximum, (x, y), (t, t))\nargs = (jnp.arange(3.0), jnp.ones(3), jnp.ones(3))\n",
    "jvp_abs": "def fn(x, t):\n    return jax.jvp(jnp.abs, (x,), (t,))\nargs = (jnp.arange(3.0), jnp.ones(3))\n",
    "jvp_pow": "def fn(x, y, t):\n    return jax.jvp(lax.pow, (x, y), (t, t))\nargs = (jnp.arange(3.0), jnp.ones(3), jnp.ones(3))\n",
    "jvp_select": "def fn(x, t):\n    return jax.jvp(lambda x: jnp.where(x > 1, x, -x), (x,), (t,))\nargs = (jnp.arange(3.0), jnp.ones(3))\n",
    "jvp_reduce_max": "def fn(x, t):\n    return jax.jvp(lambda x: jnp.max(x, axis=0), (x,), (t,))\nargs = (jnp.ones((2, 3)), jnp.ones((2, 3)))\n",
    # ---- gradients through arrays ------------------------------------------------------------------
    "grad_sumsq": "fn = jax.grad(lambda x: jnp.sum(x ** 2))\nargs = (jnp.arange(3.0),)\n",
    "grad_mean": "fn = jax.grad(lambda x: jnp.mean(jnp.sin(x)))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_max": "fn = jax.grad(lambda x: jnp.max(x))\nargs = (jnp.arange(3.0),)\n",
    "grad_max_axis": "fn = jax.grad(lambda x: jnp.sum(jnp.max(x, axis=1)))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_logsumexp": "fn = jax.grad(lambda x: jax.nn.logsumexp(x))\nargs = (jnp.arange(3.0),)\n",
    "grad_softmax": "fn = jax.grad(lambda x: jnp.sum(jax.nn.softmax(x) * jnp.arange(3.0)))\nargs = (jnp.arange(3.0),)\n",
    "grad_log_softmax": "fn = jax.grad(lambda x: jnp.sum(jax.nn.log_softmax(x)[0]))\nargs = (jnp.arange(3.0),)\n",
    "grad_relu_sum": "fn = jax.grad(lambda x: jnp.sum(jax.nn.relu(x)))\nargs = (jnp.arange(3.0) - 1,)\n",
    "grad_matmul": "fn = jax.grad(lambda w, x: jnp.sum(x @ w))\nargs = (jnp.ones((3, 2)), jnp.ones((4, 3)))\n",
    "grad_dot_vec": "fn = jax.grad(lambda w, x: jnp.dot(x, w))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "grad_layout": ("fn = jax.grad(lambda x: jnp.sum(jnp.expand_dims(x.reshape(3, 2).T, 0).squeeze(0) * jnp.arange(3.0)))\n"
                    "args = (jnp.ones(6),)\n"),
    "grad_broadcast": "fn = jax.grad(lambda x: jnp.sum(jnp.broadcast_to(x, (4, 3)) * 2.0))\nargs = (jnp.ones(3),)\n",
    "grad_convert": "fn = jax.grad(lambda x: jnp.sum(x.astype(jnp.bfloat16)).astype(jnp.float32))\nargs = (jnp.ones(3),)\n",
    "grad_cumsum": "fn = jax.grad(lambda x: jnp.sum(jnp.cumsum(x) ** 2))\nargs = (jnp.arange(3.0),)\n",
    "grad_mlp": ("def loss(params, x, y):\n    w1, b1, w2 = params\n    h = jax.nn.relu(x @ w1 + b1)\n"
                 "    return jnp.mean((h @ w2 - y) ** 2)\n"
                 "fn = jax.grad(loss)\nargs = ((jnp.ones((3, 4)), jnp.zeros(4), jnp.ones((4, 1))), jnp.ones((2, 3)), jnp.ones((2, 1)))\n"),
    "grad_linear_regression": ("def loss(theta, x, y):\n    w, b = theta\n    return jnp.mean((w * x + b - y) ** 2)\n"
                               "fn = jax.grad(loss)\nargs = ((1.0, 0.5), jnp.arange(4.0), jnp.ones(4))\n"),
    "grad_xent": ("def loss(logits, labels):\n    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))\n"
                  "fn = jax.grad(loss)\nargs = (jnp.ones((2, 3)), jnp.eye(3)[:2])\n"),
    "grad_of_grad_sin": "fn = jax.grad(jax.grad(jnp.sin))\nargs = (1.0,)\n",
    # ---- vmap ---------------------------------------------------------------------------------------
    "vmap_sin": "fn = jax.vmap(jnp.sin)\nargs = (jnp.ones(3),)\n",
    "vmap_add_unmapped": "fn = jax.vmap(lambda x, y: x + y, in_axes=(0, None))\nargs = (jnp.ones((3, 2)), jnp.ones(2))\n",
    "vmap_matvec": "fn = jax.vmap(lambda m, v: m @ v, in_axes=(None, 0))\nargs = (jnp.ones((2, 3)), jnp.ones((4, 3)))\n",
    "vmap_dot": "fn = jax.vmap(jnp.dot)\nargs = (jnp.ones((4, 3)), jnp.ones((4, 3)))\n",
    "vmap_sum_axis1": "fn = jax.vmap(lambda x: jnp.sum(x, axis=0), in_axes=1)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_argmax": "fn = jax.vmap(jnp.argmax)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_max": "fn = jax.vmap(jnp.max)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_cumsum": "fn = jax.vmap(jnp.cumsum)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_layout": "fn = jax.vmap(lambda x: jnp.expand_dims(x.reshape(3, 2).T, 0))\nargs = (jnp.ones((4, 6)),)\n",
    "vmap_broadcast": "fn = jax.vmap(lambda x: jnp.broadcast_to(x, (2, 3)))\nargs = (jnp.ones((4, 3)),)\n",
    "vmap_where": "fn = jax.vmap(lambda x, y: jnp.where(x > 0, x, y))\nargs = (jnp.ones(3), jnp.zeros(3))\n",
    "vmap_softmax": "fn = jax.vmap(jax.nn.softmax)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_convert": "fn = jax.vmap(lambda x: x.astype(jnp.int32))\nargs = (jnp.ones(3),)\n",
    "vmap_out_axes": "fn = jax.vmap(lambda x: x * 2, out_axes=1)\nargs = (jnp.ones((3, 2)),)\n",
    "vmap_grad_sin": "fn = jax.vmap(jax.grad(jnp.sin))\nargs = (jnp.ones(3),)\n",
    "vmap_grad_tanh_x": "fn = jax.vmap(jax.grad(lambda x: jnp.tanh(x) * x))\nargs = (jnp.ones(3),)\n",
    "vmap_grad_loss": ("def loss(w, x):\n    return jnp.sum(jnp.tanh(x @ w))\n"
                       "fn = jax.vmap(jax.grad(loss), in_axes=(None, 0))\nargs = (jnp.ones((3, 2)), jnp.ones((5, 3)))\n"),
    "grad_vmap": "fn = jax.grad(lambda x: jnp.sum(jax.vmap(jnp.sin)(x)))\nargs = (jnp.ones(3),)\n",
    "jacfwd_sin": "fn = jax.jacfwd(jnp.sin)\nargs = (jnp.ones(3),)\n",
    "jacrev_tanh": "fn = jax.jacrev(jnp.tanh)\nargs = (jnp.ones(3),)\n",
    # ---- scan ----------------------------------------------------------------------------------------
    "scan_weak_carry": "def fn(xs):\n    return lax.scan(lambda c, x: (c + x, c * 2), 0.0, xs)\nargs = (jnp.arange(3.0),)\n",
    "scan_cumsum_body": "def fn(xs):\n    return lax.scan(lambda c, x: (c + x, c), 0, xs)\nargs = (jnp.arange(3),)\n",
    "scan_int_to_float": "def fn(xs):\n    return lax.scan(lambda c, x: (c + x, x * 1.5), 0.0, xs)\nargs = (jnp.arange(3.0),)\n",
    "grad_scan": ("def f(x):\n    c, ys = lax.scan(lambda c, a: (jnp.sin(c) * a, c), x, jnp.arange(3.0))\n    return c + jnp.sum(ys)\n"
                  "fn = jax.grad(f)\nargs = (1.0,)\n"),
    "grad_scan_array": ("def f(w, xs):\n    c, _ = lax.scan(lambda c, a: (jnp.tanh(c * w + a), None), jnp.zeros(2), xs)\n    return jnp.sum(c)\n"
                        "fn = jax.grad(f)\nargs = (jnp.ones(2), jnp.ones((3, 2)))\n"),
    "jvp_scan": ("def fn(x, t):\n    return jax.jvp(lambda x: lax.scan(lambda c, a: (c * a, c), x, jnp.arange(3.0)), (x,), (t,))\n"
                 "args = (1.0, 1.0)\n"),
    "vmap_scan": "fn = jax.vmap(lambda xs: lax.scan(lambda c, a: (c + a, c), 0.0, xs))\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_grad_scan": ("def f(x):\n    c, _ = lax.scan(lambda c, a: (c * a, None), x, jnp.arange(1.0, 4.0))\n    return c\n"
                       "fn = jax.vmap(jax.grad(f))\nargs = (jnp.ones(2),)\n"),
    "fori_loop_grad": "fn = jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))\nargs = (2.0,)\n",
    # ---- dot_general and friends -----------------------------------------------------------------
    "matmul": "fn = lambda x, y: x @ y\nargs = (jnp.ones((2, 3)), jnp.ones((3, 4)))\n",
    "jnp_dot": "fn = jnp.dot\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "einsum": "fn = lambda x, y: jnp.einsum('ij,jk->ik', x, y)\nargs = (jnp.ones((2, 3)), jnp.ones((3, 4)))\n",
    "weak_sum_ones": "fn = lambda x: jnp.sum(jnp.ones(3) * x)\nargs = (0.7,)\n",
    "weak_mixed": "fn = lambda x, y: x * y + 1.0\nargs = (0.7, jnp.ones(3, jnp.bfloat16))\n",
    # ---- more compositions ------------------------------------------------------------------------
    "grad_jit": "f = jax.jit(lambda x: jnp.sin(x) * x)\nfn = jax.grad(f)\nargs = (1.0,)\n",
    "jvp_jit": "f = jax.jit(lambda x: jnp.sin(x) * x)\ndef fn(x, t):\n    return jax.jvp(f, (x,), (t,))\nargs = (1.0, 1.0)\n",
    "vmap_jit": "fn = jax.vmap(jax.jit(lambda x: jnp.sin(x) * x))\nargs = (jnp.ones(3),)\n",
    "grad_jit_array": ("f = jax.jit(lambda w, x: jnp.sum(jnp.tanh(x @ w)))\nfn = jax.grad(f)\n"
                       "args = (jnp.ones((3, 2)), jnp.ones((4, 3)))\n"),
    "grad_expm1_log1p": "fn = jax.grad(lambda x: jnp.sum(jnp.expm1(x) * jnp.log1p(x)))\nargs = (jnp.arange(3.0),)\n",
    "grad_integer_pow_neg": "fn = jax.grad(lambda x: jnp.sum(x ** -2))\nargs = (jnp.arange(1.0, 4.0),)\n",
    "grad_rsqrt_array": "fn = jax.grad(lambda x: jnp.sum(lax.rsqrt(x) + jnp.sqrt(x)))\nargs = (jnp.arange(1.0, 4.0),)\n",
    "grad_div_array": "fn = jax.grad(lambda x, y: jnp.sum(x / y), argnums=(0, 1))\nargs = (jnp.arange(3.0), jnp.arange(1.0, 4.0))\n",
    "grad_max_array": "fn = jax.grad(lambda x, y: jnp.sum(jnp.maximum(x, y)), argnums=(0, 1))\nargs = (jnp.arange(3.0), jnp.ones(3))\n",
    "grad_abs_sign": "fn = jax.grad(lambda x: jnp.sum(jnp.abs(x) * jnp.sign(x)))\nargs = (jnp.arange(3.0) - 1,)\n",
    "grad_select_n_int": "fn = jax.grad(lambda x: jnp.sum(lax.select_n(jnp.array([0, 1, 2]), x, 2 * x, x * x)))\nargs = (jnp.arange(3.0),)\n",
    "grad_mean_var": "fn = jax.grad(lambda x: jnp.var(x) + jnp.mean(x ** 2))\nargs = (jnp.arange(4.0),)\n",
    "grad_sum_keepdims": "fn = jax.grad(lambda x: jnp.sum(jnp.exp(x - jnp.max(x, axis=1, keepdims=True))))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_transpose_reshape": "fn = jax.grad(lambda x: jnp.sum(x.T.reshape(-1) * jnp.arange(6.0)))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_broadcast_add": "fn = jax.grad(lambda b, x: jnp.sum(jnp.tanh(x + b)))\nargs = (jnp.zeros(3), jnp.ones((2, 3)))\n",
    "grad_convert_int": "fn = jax.grad(lambda x: jnp.sum(x * jnp.arange(3)))\nargs = (jnp.ones(3),)\n",
    "grad_cumsum_axis": "fn = jax.grad(lambda x: jnp.sum(jnp.cumsum(x, axis=1) ** 2))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_logsumexp_axis": "fn = jax.grad(lambda x: jnp.sum(jax.nn.logsumexp(x, axis=1)))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_softmax_axis0": "fn = jax.grad(lambda x: jnp.sum(jax.nn.softmax(x, axis=0) ** 2))\nargs = (jnp.ones((2, 3)),)\n",
    "grad_relu_layer": ("def f(w, b, x):\n    return jnp.sum(jax.nn.relu(jnp.dot(x, w) + b))\n"
                        "fn = jax.grad(f, argnums=(0, 1))\nargs = (jnp.ones((3, 2)), jnp.zeros(2), jnp.ones((4, 3)))\n"),
    "value_and_grad_two_args": "fn = jax.value_and_grad(lambda x, y: jnp.sum(x * jnp.sin(y)), argnums=(0, 1))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "value_and_grad_float": "fn = jax.value_and_grad(lambda x: x ** 3 / 3)\nargs = (2.0,)\n",
    "jvp_of_grad": "def fn(x, t):\n    return jax.jvp(jax.grad(jnp.sin), (x,), (t,))\nargs = (1.0, 1.0)\n",
    "grad_of_grad_tanh": "fn = jax.grad(jax.grad(jnp.tanh))\nargs = (1.0,)\n",
    "jvp_reduce_sum": "def fn(x, t):\n    return jax.jvp(lambda x: jnp.sum(x ** 2, axis=0), (x,), (t,))\nargs = (jnp.ones((2, 3)), jnp.ones((2, 3)))\n",
    "jvp_matmul": "def fn(x, y, t):\n    return jax.jvp(lambda a: a @ y, (x,), (t,))\nargs = (jnp.ones((2, 3)), jnp.ones((3, 4)), jnp.ones((2, 3)))\n",
    "jvp_convert": "def fn(x, t):\n    return jax.jvp(lambda x: x.astype(jnp.bfloat16), (x,), (t,))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "jvp_cumsum": "def fn(x, t):\n    return jax.jvp(jnp.cumsum, (x,), (t,))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "vmap_dot_both": "fn = jax.vmap(lambda a, b: a @ b)\nargs = (jnp.ones((4, 2, 3)), jnp.ones((4, 3, 5)))\n",
    "vmap_matmul_axis1": "fn = jax.vmap(lambda a, b: a @ b, in_axes=(1, None))\nargs = (jnp.ones((2, 4, 3)), jnp.ones((3, 5)))\n",
    "vmap_reduce_keepdims": "fn = jax.vmap(lambda x: x - jnp.max(x, axis=0, keepdims=True))\nargs = (jnp.ones((4, 2, 3)),)\n",
    "vmap_argmax_axis": "fn = jax.vmap(lambda x: jnp.argmax(x, axis=1), in_axes=1)\nargs = (jnp.ones((2, 4, 3)),)\n",
    "vmap_transpose": "fn = jax.vmap(lambda x: x.T, in_axes=2)\nargs = (jnp.ones((2, 3, 4)),)\n",
    "vmap_squeeze_expand": "fn = jax.vmap(lambda x: jnp.expand_dims(jnp.squeeze(x, 0), 1))\nargs = (jnp.ones((4, 1, 3)),)\n",
    "vmap_select_scalar_pred": "fn = jax.vmap(lambda p, x: jnp.where(p, x, 0.0))\nargs = (jnp.array([True, False]), jnp.ones((2, 3)))\n",
    "vmap_mul_scalar": "fn = jax.vmap(lambda s, x: s * x)\nargs = (jnp.arange(2.0), jnp.ones((2, 3)))\n",
    "vmap_log_softmax": "fn = jax.vmap(jax.nn.log_softmax)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_logsumexp": "fn = jax.vmap(jax.nn.logsumexp)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_relu": "fn = jax.vmap(jax.nn.relu)\nargs = (jnp.ones((2, 3)),)\n",
    "vmap_integer_pow": "fn = jax.vmap(lambda x: x ** 3 + lax.integer_pow(x, 2))\nargs = (jnp.ones(3),)\n",
    "vmap_vmap": "fn = jax.vmap(jax.vmap(lambda x, y: x * y + 1.0))\nargs = (jnp.ones((2, 3)), jnp.ones((2, 3)))\n",
    "grad_vmap_dot": "fn = jax.grad(lambda w, x: jnp.sum(jax.vmap(lambda r: jnp.dot(r, w))(x)))\nargs = (jnp.ones(3), jnp.ones((4, 3)))\n",
    "vmap_value_and_grad": "fn = jax.vmap(jax.value_and_grad(lambda x: jnp.sin(x) ** 2))\nargs = (jnp.ones(3),)\n",
    "vmap_jvp": "fn = jax.vmap(lambda x, t: jax.jvp(jnp.exp, (x,), (t,)))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "scan_consts": ("def fn(w, xs):\n    return lax.scan(lambda c, x: (c * w + x, jnp.sin(c)), jnp.zeros(2), xs)\n"
                    "args = (jnp.ones(2), jnp.ones((3, 2)))\n"),
    "grad_scan_consts": ("def f(w, xs):\n    c, ys = lax.scan(lambda c, x: (c * w + x, jnp.sin(c)), jnp.zeros(2), xs)\n"
                         "    return jnp.sum(c) + jnp.sum(ys)\nfn = jax.grad(f)\nargs = (jnp.ones(2), jnp.ones((3, 2)))\n"),
    "grad_scan_xs": ("def f(xs):\n    c, ys = lax.scan(lambda c, x: (c + jnp.exp(x), c * x), 0.0, xs)\n"
                     "    return c + jnp.sum(ys)\nfn = jax.grad(f)\nargs = (jnp.arange(3.0),)\n"),
    "jvp_scan_array": ("def fn(w, t):\n    return jax.jvp(lambda w: lax.scan(lambda c, x: (jnp.tanh(c * w + x), c), jnp.zeros(2), jnp.ones((3, 2))), (w,), (t,))\n"
                       "args = (jnp.ones(2), jnp.ones(2))\n"),
    "vmap_scan_consts": ("fn = jax.vmap(lambda w: lax.scan(lambda c, x: (c * w + x, None), 0.0, jnp.arange(3.0))[0])\n"
                         "args = (jnp.ones(2),)\n"),
    "scan_reverse_grad": ("def f(x):\n    c, _ = lax.scan(lambda c, a: (c * a + 1.0, None), x, jnp.arange(1.0, 4.0), reverse=True)\n"
                          "    return c\nfn = jax.grad(f)\nargs = (2.0,)\n"),
    "map_grad": "fn = jax.grad(lambda x: jnp.sum(lax.map(jnp.sin, x)))\nargs = (jnp.ones(3),)\n",
    "fori_loop_array_grad": ("fn = jax.grad(lambda x: jnp.sum(lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c) * x, x)))\n"
                             "args = (jnp.ones(2),)\n"),
    "weak_where_float": "fn = lambda x: jnp.where(x > 0, x, 0.0)\nargs = (jnp.ones(3),)\n",
    "weak_scalar_mul_array": "fn = lambda x, s: x * s\nargs = (jnp.ones(3), 2.0)\n",
    "weak_bf16_grad": "fn = lambda x: jax.grad(lambda s: jnp.sum(jnp.ones(3) * s))(x) * jnp.ones(2, jnp.bfloat16)\nargs = (0.7,)\n",
    "mlp_training_step": ("def loss(p, x, y):\n    h = jnp.tanh(x @ p['w1'] + p['b1'])\n    out = h @ p['w2'] + p['b2']\n"
                          "    return jnp.mean(jnp.sum((out - y) ** 2, axis=-1))\n"
                          "def fn(p, x, y):\n    l, g = jax.value_and_grad(loss)(p, x, y)\n"
                          "    return l, jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)\n"
                          "args = ({'w1': jnp.ones((3, 4)), 'b1': jnp.zeros(4), 'w2': jnp.ones((4, 2)), 'b2': jnp.zeros(2)}, jnp.ones((5, 3)), jnp.ones((5, 2)))\n"),
    "jacfwd_two_args": "fn = jax.jacfwd(lambda x, y: jnp.sin(x) * y[0], argnums=(0, 1))\nargs = (jnp.ones(2), jnp.ones(3))\n",
    "jacrev_dict": "fn = jax.jacrev(lambda p: {'a': p['w'] @ p['b'], 'b': jnp.sum(p['w'])})\nargs = ({'w': jnp.ones((2, 3)), 'b': jnp.ones(3)},)\n",
    "hessian_scalar": "fn = jax.hessian(lambda x: jnp.sum(x ** 3))\nargs = (jnp.ones(2),)\n",
    "split_grad": "fn = jax.grad(lambda x: jnp.sum(jnp.split(x, [1, 3])[1] ** 2))\nargs = (jnp.arange(4.0),)\n",
    "vmap_split": "fn = jax.vmap(lambda x: jnp.split(x, 2)[0])\nargs = (jnp.ones((3, 4)),)\n",
    "eye_k": "fn = lambda: jnp.eye(3, 4, k=1)\nargs = ()\n",
    # ---- the seed programs' transformed functions ------------------------------------------------
    "seed_vmap_convolve": ("def convolve(x, w):\n    output = []\n    for i in range(1, len(x) - 1):\n"
                           "        output.append(jnp.dot(x[i - 1:i + 2], w))\n    return jnp.array(output)\n"
                           "fn = jax.vmap(convolve, in_axes=[0, None])\nargs = (jnp.stack([jnp.arange(5.0)] * 2), jnp.array([2.0, 3.0, 4.0]))\n"),
    "seed_td_loss_grad": ("def value_fn(theta, s):\n    return jnp.tanh(jnp.dot(theta, s))\n"
                          "def td_loss(theta, s_tm1, r_t, s_t):\n    v_tm1 = value_fn(theta, s_tm1)\n"
                          "    target = r_t + value_fn(theta, s_t)\n    return (lax.stop_gradient(target) - v_tm1) ** 2\n"
                          "fn = jax.grad(td_loss)\nargs = (jnp.array([0.1, -0.2, 0.3]), jnp.array([1.0, 2.0, 0.5]), 1.0, jnp.array([0.3, -1.0, 2.0]))\n"),
    "seed_training_loss": ("def model(params, x):\n    for layer in params[:-1]:\n        x = jax.nn.relu(x @ layer['w'] + layer['b'])\n"
                           "    return x @ params[-1]['w'] + params[-1]['b']\n"
                           "def loss(params, x, y):\n    logits = model(params, x)\n"
                           "    hits = jnp.sum(jnp.argmax(logits, axis=-1) == jnp.argmax(y, axis=-1))\n"
                           "    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1)), hits\n"
                           "fn = jax.value_and_grad(loss, has_aux=True)\n"
                           "args = ([{'w': jnp.ones((4, 5)), 'b': jnp.zeros(5)}, {'w': jnp.ones((5, 3)), 'b': jnp.zeros(3)}], jnp.ones((2, 4)), jnp.eye(3)[:2])\n"),
    "seed_linear_regression_vg": ("def loss(w, b, x, y):\n    return jnp.mean((jnp.dot(x, w) + b - y) ** 2)\n"
                                  "fn = jax.value_and_grad(loss, argnums=(0, 1))\nargs = (jnp.zeros(3), 0.0, jnp.ones((5, 3)), jnp.ones(5))\n"),
    # ---- more ops under grad and vmap --------------------------------------------------------------
    "more_mean_axis": 'fn = jax.grad(lambda x: jnp.sum(jnp.mean(x, axis=0) ** 2))\nargs = (jnp.ones((2, 3)),)\n',
    "more_elu": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.elu(x)))\nargs = (jnp.ones(3),)\n',
    "more_leaky_relu": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.leaky_relu(x)))\nargs = (jnp.ones(3),)\n',
    "more_silu": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.silu(x)))\nargs = (jnp.ones(3),)\n',
    "more_concat": 'fn = jax.grad(lambda x, y: jnp.sum(jnp.concatenate([x, y]) ** 2), argnums=(0, 1))\nargs = (jnp.ones(2), jnp.ones(3))\n',
    "more_remat": 'fn = jax.grad(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x))))\nargs = (1.0,)\n',
    "more_grad_dynamic_slice": 'fn = jax.grad(lambda x, i: jnp.sum(lax.dynamic_slice(x, (i,), (2,))))\nargs = (jnp.ones(4), 1)\n',
    "more_vmap_sum_all": 'fn = jax.vmap(jnp.sum)\nargs = (jnp.ones((2, 3)),)\n',
    "more_vmap_mean": 'fn = jax.vmap(jnp.mean)\nargs = (jnp.ones((2, 3)),)\n',
    "more_exp2_grad": 'fn = jax.grad(lambda x: jnp.sum(jnp.exp2(x)))\nargs = (jnp.ones(3),)\n',
    "more_atan2_grad": 'fn = jax.grad(lambda x, y: jnp.sum(jnp.arctan2(x, y)), argnums=(0, 1))\nargs = (jnp.ones(3), jnp.ones(3))\n',
    "more_square_grad": 'fn = jax.grad(lambda x: jnp.sum(jnp.square(x)))\nargs = (jnp.ones(3),)\n',
    "more_reciprocal_grad": 'fn = jax.grad(lambda x: jnp.sum(jnp.reciprocal(x)))\nargs = (jnp.ones(3),)\n',
    "more_log2_grad": 'fn = jax.grad(lambda x: jnp.sum(jnp.log2(x) + jnp.log10(x)))\nargs = (jnp.ones(3),)\n',
    "more_power_int": 'fn = jax.grad(lambda x: jnp.sum(jnp.power(x, 3)))\nargs = (jnp.ones(3),)\n',
    "more_max_grad_float": 'fn = jax.grad(lambda x: jnp.maximum(x, 0.0))\nargs = (1.0,)\n',
    "more_minimum_vmap": 'fn = jax.vmap(jnp.minimum, in_axes=(0, None))\nargs = (jnp.ones((2, 3)), jnp.zeros(3))\n',
    "more_outer": 'fn = jax.grad(lambda x: jnp.sum(jnp.outer(x, x)))\nargs = (jnp.ones(3),)\n',
    "more_tensordot": 'fn = jax.grad(lambda x: jnp.sum(jnp.tensordot(x, x, axes=1)))\nargs = (jnp.ones((2, 2)),)\n',
    "more_einsum_batch": "fn = jax.grad(lambda x, y: jnp.sum(jnp.einsum('bij,bjk->bik', x, y)))\nargs = (jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5)))\n",
    "more_matmul_vec": 'fn = jax.grad(lambda x, v: jnp.sum(x @ v))\nargs = (jnp.ones((2, 3)), jnp.ones(3))\n',
    "more_argmax_vmap_grad": 'fn = jax.grad(lambda x: jnp.sum(x * (jnp.argmax(x) == jnp.arange(3))))\nargs = (jnp.arange(3.0),)\n',
    "more_expand_squeeze_grad": 'fn = jax.grad(lambda x: jnp.sum(jnp.squeeze(jnp.expand_dims(x, 0)) ** 2))\nargs = (jnp.ones(3),)\n',
    "more_reshape_grad": 'fn = jax.grad(lambda x: jnp.sum(jnp.reshape(x, (3, 2)) @ jnp.ones(2)))\nargs = (jnp.ones(6),)\n',
    "more_scan_vmap_grad": 'fn = jax.vmap(jax.grad(lambda w: lax.scan(lambda c, x: (c * w + x, None), 1.0, jnp.arange(3.0))[0]))\nargs = (jnp.ones(2),)\n',
    "more_fori_loop_array": 'fn = lambda x: lax.fori_loop(0, 4, lambda i, c: c + i * x, jnp.zeros(3))\nargs = (jnp.ones(3),)\n',
    # ---- stack (JAX's stack/unstack primitives) ---------------------------------------------------
    "stack": "fn = lambda x, y: jnp.stack([x, y])\nargs = (jnp.ones(3), jnp.zeros(3))\n",
    "stack_axis1": "fn = lambda x, y: jnp.stack([x, y], axis=1)\nargs = (jnp.ones(3), jnp.zeros(3))\n",
    "grad_stack": "fn = jax.grad(lambda x, y: jnp.sum(jnp.stack([x, y]) ** 2), argnums=(0, 1))\nargs = (jnp.ones(3), jnp.ones(3))\n",
    "vmap_stack": "fn = jax.vmap(lambda x, y: jnp.stack([x, y]))\nargs = (jnp.ones((2, 3)), jnp.ones((2, 3)))\n",
    "vmap_stack_unmapped": "fn = jax.vmap(lambda x, y: jnp.stack([x, y], axis=1), in_axes=(1, None))\nargs = (jnp.ones((2, 3)), jnp.ones(2))\n",
    "grad_unstack": "fn = jax.grad(lambda x: jnp.sum(lax.unstack(x)[1] ** 2))\nargs = (jnp.ones((3, 2)),)\n",
    "vmap_unstack": "fn = jax.vmap(lambda x: lax.unstack(x, axis=1), in_axes=1)\nargs = (jnp.ones((2, 3, 4)),)\n",
    # ---- jax.nn: gelu (not jitted), glu, one_hot ---------------------------------------------------------
    "one_hot": 'fn = lambda x: jax.nn.one_hot(x, 3)\nargs = (jnp.arange(2),)\n',
    "vmap_one_hot": 'fn = jax.vmap(lambda x: jax.nn.one_hot(x, 3))\nargs = (jnp.arange(2),)\n',
    "grad_one_hot_xent": 'fn = jax.grad(lambda x, y: -jnp.sum(jax.nn.log_softmax(x) * jax.nn.one_hot(y, 3)))\nargs = (jnp.ones((2, 3)), jnp.arange(2))\n',
    "grad_glu": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.glu(x)))\nargs = (jnp.ones(4),)\n',
    "grad_gelu": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.gelu(x)))\nargs = (jnp.ones(3),)\n',
    "grad_gelu_exact": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.gelu(x, approximate=False)))\nargs = (jnp.ones(3),)\n',
    "vmap_gelu": 'fn = jax.vmap(jax.nn.gelu)\nargs = (jnp.ones((2, 3)),)\n',
    "value_and_grad_gelu": 'fn = jax.value_and_grad(lambda x: jnp.sum(jax.nn.gelu(x)))\nargs = (jnp.ones(3),)\n',
    "scan_gelu": 'def fn(xs):\n    return lax.scan(lambda c, x: (jax.nn.gelu(c + x), None), jnp.zeros(2), xs)[0]\nargs = (jnp.ones((3, 2)),)\n',
    # ---- logaddexp (JAX's custom_jvp in an inline jit), softplus, log_sigmoid ----------------------------
    "grad_logaddexp": 'fn = jax.grad(lambda x, y: jnp.sum(jnp.logaddexp(x, y)), argnums=(0, 1))\nargs = (jnp.arange(3.0), jnp.ones(3))\n',
    "grad_logaddexp2": 'fn = jax.grad(lambda x: jnp.sum(jnp.logaddexp2(x, 1.0)))\nargs = (jnp.ones(3),)\n',
    "vmap_logaddexp": 'fn = jax.vmap(jnp.logaddexp, in_axes=(0, None))\nargs = (jnp.ones((2, 3)), jnp.zeros(3))\n',
    "grad_softplus": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.softplus(x)))\nargs = (jnp.ones(3),)\n',
    "vmap_softplus": 'fn = jax.vmap(jax.nn.softplus)\nargs = (jnp.ones((2, 3)),)\n',
    "grad_log_sigmoid": 'fn = jax.grad(lambda x: jnp.sum(jax.nn.log_sigmoid(x)))\nargs = (jnp.ones(3),)\n',
    "vmap_log_sigmoid": 'fn = jax.vmap(jax.nn.log_sigmoid)\nargs = (jnp.ones((2, 3)),)\n',
    "jvp_softplus": 'def fn(x, t):\n    return jax.jvp(jax.nn.softplus, (x,), (t,))\nargs = (jnp.ones(3), jnp.ones(3))\n',
    # ---- prod (JAX's JVP of a halving tree), reshape with dimensions, pad's transpose, static slicing ----
    "grad_prod": 'fn = jax.grad(lambda x: jnp.prod(x))\nargs = (jnp.arange(1.0, 4.0),)\n',
    "jvp_prod": 'def fn(x, t):\n    return jax.jvp(jnp.prod, (x,), (t,))\nargs = (jnp.arange(1.0, 4.0), jnp.ones(3))\n',
    "grad_prod_axis": 'fn = jax.grad(lambda x: jnp.sum(jnp.prod(x, axis=1)))\nargs = (jnp.ones((2, 3)),)\n',
    "vmap_prod": 'fn = jax.vmap(jnp.prod)\nargs = (jnp.ones((2, 3)),)\n',
    "grad_prod_axes02": 'fn = jax.grad(lambda x: jnp.sum(jnp.prod(x, axis=(0, 2))))\nargs = (jnp.ones((2, 3, 2)),)\n',
    "vmap_grad_prod": 'fn = jax.vmap(jax.grad(jnp.prod))\nargs = (jnp.ones((2, 3)),)\n',
    "reshape_dimensions": 'fn = lambda x: lax.reshape(x, (4, 6), (2, 0, 1))\nargs = (jnp.ones((2, 3, 4)),)\n',
    "grad_reshape_dimensions": 'fn = jax.grad(lambda x: jnp.sum(lax.reshape(x, (4, 6), (2, 0, 1)) * jnp.arange(6.0)))\nargs = (jnp.ones((2, 3, 4)),)\n',
    "vmap_reshape_dimensions": 'fn = jax.vmap(lambda x: lax.reshape(x, (3, 2), (1, 0)), in_axes=1)\nargs = (jnp.ones((2, 4, 3)),)\n',
    "grad_pad_slice": 'fn = jax.grad(lambda x: jnp.sum(lax.pad(x, 0.0, [(1, -1, 1)]) ** 2))\nargs = (jnp.arange(3.0),)\n',
    "index_slices": 'fn = lambda x: x[1:, ::2, None]\nargs = (jnp.ones((3, 4)),)\n',
    "index_trivial_slice": 'fn = lambda x: x[:, :] * x[::-1]\nargs = (jnp.ones((3, 4)),)\n',
    "index_reverse": 'fn = lambda x: x[::-2, 3:0:-1]\nargs = (jnp.ones((5, 4)),)\n',
    "grad_index_slices": 'fn = jax.grad(lambda x: jnp.sum(x[1:, ::2] ** 2))\nargs = (jnp.ones((3, 4)),)\n',
}
