"""Cases shared by tests/test_stax.py, tests/test_example_optimizers.py and the recorder
tests/tools/record_stax_values.py: each builds its layer / optimizer / schedule from the module it
is given (jax's or xjax's example_libraries), so the same code runs on both. No jax import here."""
import numpy as np


def ramp(shape, seed=0):
    """Deterministic float32 values in about [-2, 2], distinct enough to avoid max-pool ties."""
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n, dtype=np.float64)
    return (2.0 * np.sin(0.731 * k + 1.3 * seed + 0.2) * np.cos(0.117 * k + seed)).astype(np.float32).reshape(shape)


# ---- stax layers: (label, lambda stax, numpy module -> layer, input shape, apply with rng?) --------------------------
LAYERS = [
    ("dense", lambda s, np_: s.Dense(3), (2, 4), False),
    ("dense_3d", lambda s, np_: s.Dense(5, b_init=s.normal(1.0)), (2, 3, 4), False),
    ("conv_valid", lambda s, np_: s.Conv(3, (2, 2)), (2, 5, 5, 2), False),
    ("conv_same_stride", lambda s, np_: s.Conv(4, (3, 3), strides=(2, 2), padding="SAME"), (2, 5, 6, 2), False),
    ("conv_explicit", lambda s, np_: s.Conv(2, (3, 2), padding=((1, 0), (2, 1))), (1, 4, 5, 3), False),
    ("conv_nchw", lambda s, np_: s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 3), padding="SAME"),
     (2, 2, 5, 4), False),
    ("conv_1d", lambda s, np_: s.GeneralConv(("NHC", "HIO", "NHC"), 3, (3,), strides=(2,)), (2, 9, 2), False),
    ("conv_mixed", lambda s, np_: s.GeneralConv(("NCHW", "HWIO", "NHWC"), 2, (2, 3), padding="SAME_LOWER"),
     (2, 3, 5, 4), False),
    ("conv_transpose_same", lambda s, np_: s.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"),
     (2, 3, 4, 2), False),
    ("conv_transpose_valid", lambda s, np_: s.ConvTranspose(2, (2, 3), padding="VALID"), (1, 3, 3, 2), False),
    ("conv_transpose_explicit", lambda s, np_: s.ConvTranspose(2, (3, 3), strides=(2, 2), padding=((1, 2), (0, 1))),
     (2, 3, 3, 2), False),
    ("conv1d_transpose", lambda s, np_: s.Conv1DTranspose(3, (3,), strides=(2,), padding="VALID"), (2, 4, 2), False),
    ("conv_transpose_nchw", lambda s, np_: s.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 2, (3, 3),
                                                                   strides=(2, 1), padding="SAME"),
     (1, 2, 3, 4), False),
    ("batchnorm", lambda s, np_: s.BatchNorm(beta_init=s.normal(1.0), gamma_init=s.normal(1.0)), (4, 3, 3, 2), False),
    ("batchnorm_axis0", lambda s, np_: s.BatchNorm(axis=0, beta_init=s.normal(1.0), gamma_init=s.normal(1.0)),
     (5, 3), False),
    ("batchnorm_no_center", lambda s, np_: s.BatchNorm(axis=(0, 1), center=False, gamma_init=s.normal(1.0)),
     (3, 4, 2), False),
    ("batchnorm_no_scale", lambda s, np_: s.BatchNorm(axis=(0,), scale=False, beta_init=s.normal(1.0)), (4, 3),
     False),
    ("batchnorm_plain", lambda s, np_: s.BatchNorm(axis=(0, 2), center=False, scale=False), (3, 2, 4), False),
    ("tanh", lambda s, np_: s.Tanh, (2, 5), False),
    ("relu", lambda s, np_: s.Relu, (2, 5), False),
    ("exp", lambda s, np_: s.Exp, (2, 5), False),
    ("log_softmax", lambda s, np_: s.LogSoftmax, (3, 4), False),
    ("softmax", lambda s, np_: s.Softmax, (3, 4), False),
    ("softplus", lambda s, np_: s.Softplus, (2, 5), False),
    ("sigmoid", lambda s, np_: s.Sigmoid, (2, 5), False),
    ("elu", lambda s, np_: s.Elu, (2, 5), False),
    ("leaky_relu", lambda s, np_: s.LeakyRelu, (2, 5), False),
    ("selu", lambda s, np_: s.Selu, (2, 5), False),
    ("gelu", lambda s, np_: s.Gelu, (2, 5), False),
    ("identity", lambda s, np_: s.Identity, (2, 5), False),
    ("elementwise_kwargs", lambda s, np_: s.elementwise(s.leaky_relu, negative_slope=0.3), (2, 5), False),
    ("elementwise_clip", lambda s, np_: s.elementwise(np_.clip, min=-0.5, max=1.0), (2, 5), False),
    ("flatten", lambda s, np_: s.Flatten, (2, 3, 2, 2), False),
    ("maxpool", lambda s, np_: s.MaxPool((2, 2)), (2, 5, 4, 3), False),
    ("maxpool_same_stride", lambda s, np_: s.MaxPool((3, 3), (2, 2), "SAME"), (2, 5, 6, 2), False),
    ("maxpool_1d", lambda s, np_: s.MaxPool((2,), strides=(2,)), (2, 7, 3), False),
    ("maxpool_nchw", lambda s, np_: s.MaxPool((2, 2), padding="SAME", spec="NCHW"), (2, 3, 5, 5), False),
    ("sumpool", lambda s, np_: s.SumPool((2, 2), (1, 2), "SAME"), (2, 4, 5, 2), False),
    ("avgpool", lambda s, np_: s.AvgPool((2, 2)), (2, 4, 4, 3), False),
    ("avgpool_same_stride", lambda s, np_: s.AvgPool((3, 3), (2, 2), "SAME"), (2, 5, 6, 2), False),
    ("avgpool_nchw_same", lambda s, np_: s.AvgPool((3, 3), padding="SAME", spec="NCHW"), (1, 2, 4, 5), False),
    ("avgpool_same_lower", lambda s, np_: s.AvgPool((2, 3), (2, 1), "SAME_LOWER"), (1, 5, 4, 2), False),
    ("dropout", lambda s, np_: s.Dropout(0.7), (4, 6), True),
    ("dropout_test_mode", lambda s, np_: s.Dropout(0.5, mode="test"), (4, 6), True),
    ("serial_mlp", lambda s, np_: s.serial(s.Dense(4), s.Relu, s.Dense(2)), (3, 5), False),
    ("serial_dropout", lambda s, np_: s.serial(s.Dense(6), s.Dropout(0.6), s.Tanh, s.Dense(2)), (3, 4), True),
    ("residual", lambda s, np_: s.serial(s.FanOut(2), s.parallel(s.Dense(3), s.Identity), s.FanInSum), (2, 3),
     False),
    ("concat", lambda s, np_: s.serial(s.FanOut(3), s.parallel(s.Dense(2), s.Dense(3), s.Identity),
                                       s.FanInConcat()), (2, 3), False),
    ("concat_axis0", lambda s, np_: s.serial(s.FanOut(2), s.parallel(s.Dense(3), s.Dense(3)), s.FanInConcat(0)),
     (2, 4), False),
    ("parallel_dropout", lambda s, np_: s.serial(s.FanOut(2), s.parallel(s.Dropout(0.5), s.Dense(3)),
                                                 s.FanInConcat()), (2, 3), True),
    ("shape_dependent", lambda s, np_: s.shape_dependent(lambda shape: s.Dense(2 * shape[-1])), (2, 3), False),
    ("cnn", lambda s, np_: s.serial(s.Conv(3, (3, 3), padding="SAME"), s.Relu, s.MaxPool((2, 2), (2, 2)),
                                    s.Conv(2, (2, 2)), s.AvgPool((2, 2), padding="SAME"), s.Flatten, s.Dense(4),
                                    s.LogSoftmax), (2, 8, 8, 1), False),
    ("resnet", lambda s, np_: resnet(s), (2, 12, 12, 3), False),
]


def resnet(s):
    """A small network in the style of JAX's examples/resnet50.py: a strided stem, a block with a
    projection shortcut and a block with an identity shortcut whose width follows its input."""
    def bn_relu(*layers):
        return [layer for conv in layers for layer in (conv, s.BatchNorm(), s.Relu)]

    main = s.serial(*bn_relu(s.Conv(2, (1, 1), (2, 2)), s.Conv(2, (3, 3), padding="SAME")), s.Conv(5, (1, 1)),
                    s.BatchNorm())
    shortcut = s.serial(s.Conv(5, (1, 1), (2, 2)), s.BatchNorm())
    projection_block = s.serial(s.FanOut(2), s.parallel(main, shortcut), s.FanInSum, s.Relu)
    same_width = s.shape_dependent(lambda shape: s.serial(*bn_relu(s.Conv(3, (3, 3), padding="SAME")),
                                                          s.Conv(shape[3], (1, 1)), s.BatchNorm()))
    identity_block = s.serial(s.FanOut(2), s.parallel(same_width, s.Identity), s.FanInSum, s.Relu)
    return s.serial(*bn_relu(s.Conv(4, (3, 3), (2, 2), "SAME")), s.MaxPool((3, 3), strides=(2, 2), padding="SAME"),
                    projection_block, identity_block, s.AvgPool((2, 2)), s.Flatten, s.Dense(3), s.LogSoftmax)

# Layers whose gradient (w.r.t. params and inputs, of sum(outputs * ramp)) is recorded too.
GRAD_LAYERS = ["dense", "conv_same_stride", "conv_nchw", "conv_transpose_same", "batchnorm", "maxpool",
               "maxpool_same_stride", "maxpool_1d", "maxpool_nchw", "sumpool", "avgpool", "avgpool_same_stride",
               "avgpool_nchw_same", "avgpool_same_lower", "cnn", "resnet"]


# ---- optimizers: (label, lambda optimizers -> Optimizer triple) --------------------------------------------
OPTIMIZERS = [
    ("sgd", lambda o: o.sgd(0.1)),
    ("sgd_schedule", lambda o: o.sgd(o.exponential_decay(0.2, 2, 0.5))),
    ("momentum", lambda o: o.momentum(0.05, 0.9)),
    ("nesterov", lambda o: o.nesterov(0.05, mass=0.8)),
    ("adagrad", lambda o: o.adagrad(0.3)),
    ("adagrad_nomom", lambda o: o.adagrad(0.3, momentum=0.0)),
    ("rmsprop", lambda o: o.rmsprop(0.01)),
    ("rmsprop_gamma", lambda o: o.rmsprop(0.02, gamma=0.5, eps=1e-3)),
    ("rmsprop_momentum", lambda o: o.rmsprop_momentum(0.01, momentum=0.7)),
    ("adam", lambda o: o.adam(0.01)),
    ("adam_args", lambda o: o.adam(o.inverse_time_decay(0.05, 2, 1.0), b1=0.8, b2=0.99, eps=1e-4)),
    ("adamax", lambda o: o.adamax(0.02)),
    ("adamax_args", lambda o: o.adamax(0.1, b1=0.5, b2=0.9, eps=1e-3)),
    ("sm3", lambda o: o.sm3(0.1)),
    ("sm3_nomom", lambda o: o.sm3(0.2, momentum=0.0)),
]
OPT_STEPS = 5


def opt_params():
    """The parameter tree every optimizer case starts from (a dict, a tuple, a 0-d and a 3-d leaf)."""
    return {"w": ramp((3, 2), 1), "b": ramp((2,), 2), "rest": (ramp((), 3), ramp((2, 2, 3), 4))}


def opt_grads(step):
    """The gradient tree fed at `step` (fixed arrays, so only the update rules are compared)."""
    return {"w": ramp((3, 2), 10 + step), "b": ramp((2,), 20 + step),
            "rest": (ramp((), 30 + step), ramp((2, 2, 3), 40 + step))}


# ---- schedules: (label, lambda optimizers -> schedule) -------------------------------------------------------
SCHEDULES = [
    ("constant", lambda o: o.constant(0.3)),
    ("exponential_decay", lambda o: o.exponential_decay(0.5, 3, 0.7)),
    ("inverse_time_decay", lambda o: o.inverse_time_decay(0.5, 4, 2.0)),
    ("inverse_time_decay_staircase", lambda o: o.inverse_time_decay(0.5, 4, 2.0, staircase=True)),
    ("polynomial_decay", lambda o: o.polynomial_decay(1.0, 8, 0.1)),
    ("polynomial_decay_power", lambda o: o.polynomial_decay(0.5, 6, 0.05, power=2.0)),
    ("piecewise_constant", lambda o: o.piecewise_constant([2, 5, 9], [1.0, 0.5, 0.25, 0.125])),
    ("make_schedule_scalar", lambda o: o.make_schedule(0.25)),
]
SCHEDULE_STEPS = list(range(13))

# ---- training: a tiny MLP and CNN trained with optimizers.adam under jit and grad ----------------------------
TRAIN_STEPS = 6


def mlp(s):
    return s.serial(s.Dense(8), s.Relu, s.Dense(3), s.LogSoftmax)


def cnn(s):
    return s.serial(s.Conv(4, (3, 3), padding="SAME"), s.Relu, s.MaxPool((2, 2), (2, 2)), s.Flatten, s.Dense(3),
                    s.LogSoftmax)


def train_data(kind):
    x = ramp((16, 4), 5) if kind == "mlp" else ramp((6, 6, 6, 1), 6)
    labels = (np.arange(x.shape[0]) * 7 % 3).astype(np.int32)
    return x, np.eye(3, dtype=np.float32)[labels]


# ---- comparing with the recorded leaves -------------------------------------------------------------------
def recorded_arrays(leaves):
    """The recorder's (shape, dtype, flat values) leaves as NumPy arrays."""
    return [np.array(flat, dtype=dtype).reshape(shape) for shape, dtype, flat in leaves]


def assert_leaves_close(actual_leaves, leaves, rtol, atol, what):
    expected = recorded_arrays(leaves)
    assert len(actual_leaves) == len(expected), f"{what}: {len(actual_leaves)} leaves, JAX has {len(expected)}"
    for k, (a, e) in enumerate(zip(actual_leaves, expected)):
        a = np.asarray(a)
        assert a.shape == e.shape and a.dtype == e.dtype, \
            f"{what} leaf {k}: {a.dtype}{a.shape} vs JAX {e.dtype}{e.shape}"
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"{what} leaf {k}")
