"""jax.scipy.spatial.transform.Rotation and Slerp against scipy.spatial.transform in float64: every
conversion both ways, composition, application, inverse, magnitude, mean, indexing and
concatenation, Euler angles for all twelve sequences (and JAX's values in gimbal lock), Slerp;
pytree, jit, vmap, gradients and JAX's errors."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.spatial.transform import Rotation as SRotation, Slerp as SSlerp

import xjax
import xjax.numpy as jnp
from xjax.scipy.spatial.transform import Rotation, Slerp
from xjax.test_util import check_grads

RNG = np.random.default_rng(2703)
SEQS = ["".join(p) for p in itertools.permutations("xyz")] + ["xyx", "xzx", "yxy", "yzy", "zxz", "zyz"]


@pytest.fixture
def x64():
    with xjax.enable_x64(True):
        yield


def close(a, b, tol=1e-13):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def pair(n=7, rng=RNG):
    quat = rng.normal(size=(n, 4))
    return Rotation.from_quat(quat), SRotation.from_quat(quat)


def test_conversions_against_scipy(x64):
    r, s = pair()
    close(r.as_quat(), s.as_quat())
    close(r.as_quat(canonical=True, scalar_first=True), s.as_quat(canonical=True, scalar_first=True))
    close(r.as_matrix(), s.as_matrix())
    close(r.as_rotvec(), s.as_rotvec())
    close(r.as_rotvec(degrees=True), s.as_rotvec(degrees=True), 1e-11)
    close(r.as_mrp(), s.as_mrp())
    close(r.magnitude(), s.magnitude())
    close(Rotation.from_matrix(s.as_matrix()).as_matrix(), s.as_matrix())
    close(Rotation.from_rotvec(s.as_rotvec()).as_matrix(), s.as_matrix())
    close(Rotation.from_rotvec(s.as_rotvec(degrees=True), degrees=True).as_matrix(), s.as_matrix())
    close(Rotation.from_mrp(s.as_mrp()).as_matrix(), s.as_matrix())
    small = RNG.normal(size=(3, 3)) * 1e-5  # the series branches of rotvec
    close(Rotation.from_rotvec(small).as_quat(), SRotation.from_rotvec(small).as_quat(), 1e-15)
    close(Rotation.from_rotvec(small).as_rotvec(), small, 1e-15)


@pytest.mark.parametrize("seq", SEQS)
def test_euler_against_scipy(x64, seq):
    r, s = pair()
    for seq in (seq, seq.upper()):
        close(r.as_euler(seq), s.as_euler(seq))
        close(r.as_euler(seq, degrees=True), s.as_euler(seq, degrees=True), 1e-11)
        angles = s.as_euler(seq)
        close(Rotation.from_euler(seq, angles).as_matrix(), s.as_matrix())
    close(Rotation.from_euler(seq[:2], angles[:, :2]).as_quat(), SRotation.from_euler(seq[:2], angles[:, :2]).as_quat())
    close(Rotation.from_euler(seq[0], 30.0, degrees=True).as_quat(), SRotation.from_euler(seq[0], 30.0, degrees=True).as_quat())


def test_euler_gimbal_lock_as_jax(x64):
    # In gimbal lock the third angle is 0 (SciPy warns); the values JAX 0.10.2 gives.
    locked = Rotation.from_euler("xyz", np.array([[0.3, np.pi / 2, 0.1], [0.3, -np.pi / 2, 0.2]]))
    close(locked.as_euler("xyz"), [[0.2, np.pi / 2, 0.0], [0.5, -np.pi / 2, 0.0]], 1e-7)
    locked = Rotation.from_euler("ZXZ", np.array([[0.3, 0.0, 0.1], [0.3, np.pi, 0.2]]))
    close(locked.as_euler("ZXZ"), [[0.4, 0.0, 0.0], [0.1, -np.pi, 0.0]], 1e-7)
    with pytest.warns(UserWarning, match="Gimbal lock"):
        want = SRotation.from_quat(np.asarray(locked.as_quat())).as_euler("ZXZ")
    close(locked.as_euler("ZXZ")[0], want[0], 1e-7)


def test_composition_application_inverse_mean(x64):
    r, s = pair()
    close((r * r[::-1]).as_matrix(), (s * s[::-1]).as_matrix())
    close((r[2] * r).as_matrix(), (s[2] * s).as_matrix())
    v = RNG.normal(size=(7, 3))
    close(r.apply(v), s.apply(v))
    close(r.apply(v, inverse=True), s.apply(v, inverse=True))
    close(r[0].apply(v), s[0].apply(v))
    close(r.apply(v[0]), s.apply(v[0]))
    close(r.inv().as_matrix(), s.inv().as_matrix())
    close(r.mean().as_matrix(), s.mean().as_matrix())
    w = RNG.uniform(0.1, 2, 7)
    close(r.mean(w).as_matrix(), s.mean(w).as_matrix())
    close(Rotation.concatenate([r, r[:2]]).as_quat(), SRotation.concatenate([s, s[:2]]).as_quat())
    assert len(r) == 7 and r[1:3].quat.shape == (2, 4) and r[0].single and not r.single


def test_identity_and_random():
    np.testing.assert_array_equal(Rotation.identity().as_matrix(), np.eye(3))
    assert Rotation.identity(3).quat.shape == (3, 4)
    r = Rotation.random(xjax.random.key(1), 2000)
    close(jnp.linalg.norm(r.quat, axis=-1), np.ones(2000), 1e-6)
    # Uniform over SO(3): the trace, 1 + 2 cos(angle), has mean 0.
    assert abs(float(jnp.mean(jnp.trace(r.as_matrix(), axis1=-2, axis2=-1)))) < 0.1
    assert Rotation.random(xjax.random.key(1)).single


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 5), seq=st.sampled_from(SEQS), upper=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_euler_roundtrip_hypothesis(n, seq, upper, seed):
    seq = seq.upper() if upper else seq
    quat = np.random.default_rng(seed).normal(size=(n, 4))
    with xjax.enable_x64(True):
        close(Rotation.from_quat(quat).as_euler(seq), SRotation.from_quat(quat).as_euler(seq), 1e-12)


def test_slerp_against_scipy(x64):
    r, s = pair(5)
    times = np.array([0.0, 1.0, 2.5, 3.0, 4.5])
    query = RNG.uniform(0, 4.5, 9)
    close(Slerp.init(times, r)(query).as_matrix(), SSlerp(times, s)(query).as_matrix())
    single = Slerp.init(times, r)(1.7)
    assert single.single
    close(single.as_matrix(), SSlerp(times, s)(1.7).as_matrix())


def test_pytree_jit_vmap_grad(x64):
    r, s = pair(4)
    v = RNG.normal(size=(4, 3))
    close(xjax.jit(lambda r, v: r.apply(v))(r, v), s.apply(v))
    close(xjax.vmap(lambda r: r.as_euler("zxz"))(r), s.as_euler("zxz"))
    close(xjax.vmap(lambda q, v: Rotation.from_quat(q).apply(v))(r.quat, v), s.apply(v))
    slerp = Slerp.init(np.arange(4.0), r)
    close(xjax.jit(lambda sl, t: sl(t).as_quat())(slerp, np.array([0.5, 2.5])),
          SSlerp(np.arange(4.0), s)([0.5, 2.5]).as_quat())
    q = RNG.normal(size=(3, 4))
    check_grads(lambda q, v: Rotation.from_quat(q).apply(v), (q, v[:3]), order=1)
    check_grads(lambda q: Rotation.from_quat(q).as_euler("xyz"), (q,), order=1)
    check_grads(lambda q: Rotation.from_quat(q).as_rotvec(), (q,), order=1)
    check_grads(lambda rv: Rotation.from_rotvec(rv).as_matrix(), (v,), order=1)
    check_grads(lambda m: Rotation.from_matrix(m).as_quat(), (np.asarray(r.as_matrix()),), order=1)
    check_grads(lambda p: Rotation.from_mrp(p).as_mrp(), (v * 0.3,), order=1)
    check_grads(lambda q: Rotation.from_quat(q).magnitude(), (q,), order=1)


def test_errors():
    r = Rotation.from_quat(jnp.array([0.0, 0.0, 0.0, 1.0]))
    with pytest.raises(TypeError, match="Single rotation is not subscriptable"):
        r[0]
    with pytest.raises(TypeError, match="Single rotation has no len"):
        len(r)
    with pytest.raises(ValueError, match="Expected axis specification"):
        Rotation.from_euler("xyzx", jnp.zeros(4))
    with pytest.raises(ValueError, match="Expected axes from `seq`"):
        Rotation.from_euler("xY", jnp.zeros(2))
    with pytest.raises(ValueError, match="Expected consecutive axes to be different"):
        Rotation.from_euler("xxy", jnp.zeros(3))
    with pytest.raises(ValueError, match="Expected 3 axes"):
        r.as_euler("xy")
    with pytest.raises(ValueError, match=r"Expected angles of shape \(\.\.\., 3\)"):
        Rotation.from_euler("xyz", jnp.zeros(2))
    many = Rotation.from_quat(jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="Expected `weights` to be 1 dimensional"):
        many.mean(jnp.ones((3, 1)))
    with pytest.raises(ValueError, match="got 2 values and 3 rotations"):
        many.mean(jnp.ones(2))
    with pytest.raises(TypeError, match="must be a `Rotation` instance"):
        Slerp.init(jnp.arange(3.0), jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init(jnp.arange(1.0), many[:1])
    with pytest.raises(ValueError, match="got 3 rotations and 2 timestamps"):
        Slerp.init(jnp.arange(2.0), many)
    with pytest.raises(ValueError, match="at most 1-dimensional"):
        Slerp.init(jnp.arange(3.0), many)(jnp.zeros((2, 2)))
