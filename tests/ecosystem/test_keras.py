"""Keras 3 on its JAX backend, with `jax` aliased to xjax: a model trained with `model.fit()` and the
stateless training loop (stateless_call, optimizer.stateless_apply under jax.jit), compared with the
values the same programs print under JAX 0.10.2. Each program runs in a fresh interpreter, since
install_as_jax() is process-global."""
import importlib.util
import json

import numpy as np
import pytest

from isolated import run_isolated

MISSING = next((f"{m} is not installed" for m in ("keras", "sklearn") if importlib.util.find_spec(m) is None), None)
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

PRELUDE = """
import os
os.environ["KERAS_BACKEND"] = "jax"
import xjax
xjax.install_as_jax()
"""


def run_keras(program):
    """Runs `program` with jax aliased to xjax; returns what it printed, one `name value` line each."""
    out = run_isolated(program, PRELUDE, timeout=300)
    return {name: json.loads(value) for name, value in (line.split(" ", 1) for line in out.splitlines())}


def assert_close(got, want):
    # float32 training: the two runtimes may round a few operations differently in the last place
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-4, atol=1e-6)


FIT = """
import keras
import numpy as np
from sklearn.datasets import load_digits

keras.utils.set_random_seed(7)
digits = load_digits()
x = (digits.data[:320] / 16.0).astype("float32")
y = digits.target[:320].astype("int32")
model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(10)])
model.compile(optimizer=keras.optimizers.Adam(1e-2),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
history = model.fit(x[:256], y[:256], batch_size=32, epochs=3, shuffle=False, verbose=0)
print("loss", history.history["loss"])
print("accuracy", history.history["accuracy"])
print("evaluate", model.evaluate(x[256:], y[256:], batch_size=32, verbose=0))
print("predict", model.predict(x[256:259], verbose=0)[:, :4].tolist())
"""


def test_fit_evaluate_predict():
    out = run_keras(FIT)
    # Recorded from JAX 0.10.2 (keras 3.15.1), the same program with the real jax.
    assert_close(out["loss"], [2.0168612003326416, 1.3198837041854858, 0.7426362037658691])
    assert out["accuracy"] == [0.34765625, 0.85546875, 0.953125]
    assert_close(out["evaluate"], [0.8584746718406677, 0.8125])
    assert_close(out["predict"], [
        [2.32401967048645, -2.6345200538635254, -2.1571033000946045, -2.6060755252838135],
        [-3.2892954349517822, 0.47243043780326843, 1.3884679079055786, -1.6928232908248901],
        [-2.1295812129974365, -1.8157099485397339, 2.3899290561676025, -0.664713442325592]])


STATELESS = """
import jax
import keras
import numpy as np
from sklearn.datasets import load_digits

keras.utils.set_random_seed(3)
digits = load_digits()
x = (digits.data[:192] / 16.0).astype("float32")
y = keras.utils.to_categorical(digits.target[:192], 10).astype("float32")
model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(32), keras.layers.BatchNormalization(),
                          keras.layers.Activation("tanh"), keras.layers.Dropout(0.25), keras.layers.Dense(10)])
optimizer = keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
loss_fn = keras.losses.CategoricalCrossentropy(from_logits=True)
optimizer.build(model.trainable_variables)


def loss_and_state(trainable, non_trainable, x, y):
    y_pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
    return loss_fn(y, y_pred), non_trainable


@jax.jit
def train_step(state, x, y):
    trainable, non_trainable, opt_vars = state
    (loss, non_trainable), grads = jax.value_and_grad(loss_and_state, has_aux=True)(trainable, non_trainable, x, y)
    trainable, opt_vars = optimizer.stateless_apply(opt_vars, grads, trainable)
    return loss, (trainable, non_trainable, opt_vars)


state = ([v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables],
         [v.value for v in optimizer.variables])
losses = []
for epoch in range(2):
    for i in range(0, 192, 32):
        loss, state = train_step(state, x[i:i + 32], y[i:i + 32])
        losses.append(float(loss))
print("losses", losses)
trainable, non_trainable, _ = state
print("moving_mean", np.asarray(non_trainable[0][:4]).tolist())
print("moving_var", np.asarray(non_trainable[1][:4]).tolist())
logits, _ = model.stateless_call(trainable, non_trainable, x[:3], training=False)
print("logits", np.asarray(logits)[:, :4].tolist())
"""


def test_stateless_training_loop():
    """BatchNormalization's moving statistics come back as non-trainable state, and Dropout draws its masks
    from keras's seed generator (jax.random): both must follow JAX's numbers."""
    out = run_keras(STATELESS)
    # Recorded from JAX 0.10.2 (keras 3.15.1), the same program with the real jax.
    assert_close(out["losses"], [
        2.58144474029541, 2.41965389251709, 1.889066219329834, 1.5674214363098145, 1.2884445190429688,
        0.9025835990905762, 0.6366206407546997, 0.3525518774986267, 0.4993424415588379, 0.560035228729248,
        0.40829941630363464, 0.2833096385002136])
    assert_close(out["moving_mean"], [-0.08605274558067322, 0.04111484810709953, 0.014621946029365063,
                                      -0.03897234797477722])
    assert_close(out["moving_var"], [0.9077669382095337, 0.9023411273956299, 0.9061107635498047,
                                     0.8997787237167358])
    assert_close(out["logits"], [
        [3.052701234817505, -1.5532314777374268, -1.6169098615646362, -0.31976285576820374],
        [-1.2830826044082642, 2.4088077545166016, -1.1788978576660156, -1.362328052520752],
        [-1.1502019166946411, 0.035238541662693024, 1.8564496040344238, -1.629235029220581]])


LAYERS = """
import keras
import numpy as np
from sklearn.datasets import load_digits

keras.utils.set_random_seed(11)
digits = load_digits()
images = (digits.data[:192] / 16.0).astype("float32").reshape(-1, 8, 8, 1)
rows = images.reshape(-1, 8, 8)
y = digits.target[:192]
loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

conv = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
                         keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(10)])
conv.compile("adam", loss, metrics=["accuracy"])
h = conv.fit(images, y, batch_size=32, epochs=2, verbose=0, validation_split=0.25, shuffle=False).history
print("conv", [h["loss"], h["val_loss"], h["val_accuracy"]])

lstm = keras.Sequential([keras.Input((8, 8)), keras.layers.LSTM(16), keras.layers.Dense(10)])
lstm.compile("rmsprop", loss)
print("lstm", lstm.fit(rows, y, batch_size=32, epochs=2, verbose=0, shuffle=False).history["loss"])

tokens = (rows.reshape(-1, 64)[:, :16] * 4).astype("int32")
gru = keras.Sequential([keras.Input((16,), dtype="int32"), keras.layers.Embedding(5, 8), keras.layers.GRU(8),
                        keras.layers.LayerNormalization(), keras.layers.Dense(10)])
gru.compile(keras.optimizers.AdamW(1e-2), loss)
print("gru", gru.fit(tokens, y, batch_size=64, epochs=2, verbose=0, shuffle=False).history["loss"])

inputs = keras.Input((8, 8))
attended = keras.layers.GlobalAveragePooling1D()(keras.layers.MultiHeadAttention(2, 4)(inputs, inputs))
attention = keras.Model(inputs, keras.layers.Dense(10)(attended))
attention.compile("sgd", loss)
print("attention", attention.fit(rows, y, batch_size=64, epochs=2, verbose=0, shuffle=False).history["loss"])
"""


def test_fit_conv_recurrent_and_attention_layers():
    """Conv2D + pooling (with a validation split), LSTM (orthogonal initializer: a QR factorisation), GRU over
    an Embedding with LayerNormalization and AdamW, and MultiHeadAttention, each fitted for two epochs."""
    out = run_keras(LAYERS)
    # Recorded from JAX 0.10.2 (keras 3.15.1), the same program with the real jax.
    assert_close(out["conv"], [[2.301058769226074, 2.2730250358581543], [2.300008535385132, 2.272711753845215],
                               [0.2916666567325592, 0.3125]])
    assert_close(out["lstm"], [2.300577402114868, 2.282909393310547])
    assert_close(out["gru"], [2.418384075164795, 2.317596912384033])
    assert_close(out["attention"], [2.463670492172241, 2.4433348178863525])
