"""jax.scipy.spatial.transform: Rotation (unit quaternions, scalar last, in arrays of shape
(..., 4)) and Slerp. Both are NamedTuples, so pytrees, as in JAX. Every conversion works on the
last axis with broadcasting over the leading ones, as JAX's vectorized helpers do."""
from __future__ import annotations

import re
import typing

import numpy as np

from xjax._src.random.samplers import normal
import xjax.numpy as jnp


def _select(flag, if_true, if_false):
    """jnp.where for a flag that may be traced; a Python bool picks its branch at trace time."""
    if isinstance(flag, (bool, np.bool_)):
        return if_true if flag else if_false
    return jnp.where(flag, if_true, if_false)


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """The quaternion product p q (the rotation q, then p)."""
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    vector = pw * qv + qw * pv + jnp.cross(pv, qv)
    scalar = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
    return jnp.concatenate([vector, scalar], axis=-1)


def _as_matrix(quat):
    x, y, z, w = (quat[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return jnp.stack([jnp.stack(row, axis=-1) for row in rows], axis=-2)


def _from_matrix(matrix):
    """The quaternion of a rotation matrix, from the largest of its diagonal and its trace
    (Shepperd's choice), which keeps the division away from zero."""
    m = lambda i, j: matrix[..., i, j]
    trace = m(0, 0) + m(1, 1) + m(2, 2)
    choice = jnp.argmax(jnp.stack([m(0, 0), m(1, 1), m(2, 2), trace], axis=-1), axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        quat = [None] * 4
        quat[i] = 1 - trace + 2 * m(i, i)
        quat[j] = m(j, i) + m(i, j)
        quat[k] = m(k, i) + m(i, k)
        quat[3] = m(k, j) - m(j, k)
        candidates.append(jnp.stack(quat, axis=-1))
    candidates.append(jnp.stack([m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1), 1 + trace], axis=-1))
    quat = candidates[3]
    for i in range(3):
        quat = jnp.where((choice == i)[..., None], candidates[i], quat)
    return _normalize(quat)


def _as_rotvec(quat, degrees):
    quat = jnp.where(quat[..., 3:] < 0, -quat, quat)  # w >= 0, so that the angle is in [0, pi]
    angle = 2 * jnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
    small = angle <= 1e-3
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    safe = jnp.where(small, 1.0, angle)  # keeps 0/0 out of the gradient of the unused branch
    scale = jnp.where(small, small_scale, safe / jnp.sin(safe / 2))
    scale = _select(degrees, jnp.rad2deg(scale), scale)
    return scale[..., None] * quat[..., :3]


def _from_rotvec(rotvec, degrees):
    rotvec = _select(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    small = angle <= 1e-3
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    safe = jnp.where(small, 1.0, angle)
    scale = jnp.where(small, small_scale, jnp.sin(safe / 2) / safe)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_mrp(quat):
    sign = jnp.where(quat[..., 3:] < 0, -1.0, 1.0).astype(quat.dtype)
    return sign * quat[..., :3] / (1 + sign * quat[..., 3:])


def _from_mrp(mrp):
    square_plus_1 = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return jnp.concatenate([2 * mrp, 2 - square_plus_1], axis=-1) / square_plus_1


def _make_canonical(quat):
    """The sign of quat whose first nonzero component, from w then x, y, z, is positive."""
    x, y, z, w = (quat[..., i] for i in range(4))
    negate = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return jnp.where(negate[..., None], -quat, quat)


def _parse_seq(seq, allowed_lengths):
    """(axis indices, intrinsic) of an Euler sequence such as 'xyz' (extrinsic) or 'ZXZ'."""
    if len(seq) not in allowed_lengths:
        if allowed_lengths == (3,):
            raise ValueError(f"Expected 3 axes, got {seq}.")
        raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(c) for c in seq.lower()], intrinsic


def _elementary_quat(axis, angle):
    parts = [jnp.zeros_like(angle)] * 3 + [jnp.cos(angle / 2)]
    parts[axis] = jnp.sin(angle / 2)
    return jnp.stack(parts, axis=-1)


def _from_euler(angles, axes, intrinsic, degrees):
    angles = _select(degrees, jnp.deg2rad(angles), angles)
    result = _elementary_quat(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], start=1):
        quat = _elementary_quat(axis, angles[..., n])
        result = _compose(result, quat) if intrinsic else _compose(quat, result)
    return result


def _as_euler(quat, axes, extrinsic, degrees):
    """Euler angles by Bernardes and Viollet's method (as SciPy and JAX): the middle angle from
    the quaternion's components, the outer ones from two half-angle sums; in gimbal lock the third
    angle is 0."""
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = lambda n: quat[..., n]
    if symmetric:
        a, b, c, d = q(3), q(i), q(j), q(k) * sign
    else:
        a, b, c, d = q(3) - q(j), q(i) + q(k) * sign, q(j) + q(3), q(k) * sign - q(i)
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    case = jnp.where(jnp.abs(middle) <= eps, 1, jnp.where(jnp.abs(middle - np.pi) <= eps, 2, 0))
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    locked = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    zero = jnp.zeros_like(middle)
    angles = [None, middle, None]
    angles[first] = jnp.where(case == 0, half_sum - half_diff, locked if first == 0 else zero)
    angles[third] = jnp.where(case == 0, half_sum + half_diff, locked if third == 0 else zero)
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    angles = (jnp.stack(angles, axis=-1) + np.pi) % (2 * np.pi) - np.pi
    return _select(degrees, jnp.rad2deg(angles), angles)


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, held as unit quaternions (x, y, z, w): `quat` has shape (4,) for
    one rotation, (N, 4) for N."""
    quat: typing.Any

    @classmethod
    def concatenate(cls, rotations):
        """The rotations of a sequence of Rotation objects, in one."""
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes of `seq`: 'xyz' letters are extrinsic (fixed axes),
        'XYZ' intrinsic (the rotating body's axes)."""
        axes, intrinsic = _parse_seq(seq, (1, 2, 3))
        angles = jnp.atleast_1d(angles)
        if angles.shape[-1] != len(axes):
            raise ValueError(f"Expected angles of shape (..., {len(axes)}) for seq {seq!r}, got shape {angles.shape}")
        return cls(_from_euler(angles, axes, intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices of shape (..., 3, 3)."""
        return cls(_from_matrix(jnp.asarray(matrix)))

    @classmethod
    def from_mrp(cls, mrp):
        """From Modified Rodrigues Parameters, axis * tan(angle / 4)."""
        return cls(_from_mrp(jnp.asarray(mrp)))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (x, y, z, w), normalized."""
        return cls(_normalize(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors, axis * angle."""
        return cls(_from_rotvec(jnp.asarray(rotvec), degrees))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation, or `num` of them."""
        quat = jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else jnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key, num=None):
        """Rotations uniformly distributed over SO(3): normalized Gaussian quaternions."""
        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(normal(random_key, shape)))

    def __getitem__(self, indexer):
        """The rotation(s) at `indexer`."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """The number of rotations."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other):
        """The composition: `other`, then this rotation."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """The rotated vectors (shape (..., 3), broadcast against the rotations)."""
        matrix = self.as_matrix()
        matrix = _select(inverse, jnp.swapaxes(matrix, -1, -2), matrix)
        return jnp.matmul(matrix, jnp.asarray(vectors)[..., None])[..., 0]

    def as_euler(self, seq, degrees=False):
        """Euler angles about the three axes of `seq` (see from_euler)."""
        axes, intrinsic = _parse_seq(seq, (3,))
        return _as_euler(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self):
        """Rotation matrices, shape (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (of the quaternion with w >= 0)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees=False):
        """Rotation vectors, axis * angle with the angle in [0, pi]."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions (x, y, z, w), or (w, x, y, z) with scalar_first; canonical picks the
        sign with w > 0 (or the first nonzero of x, y, z positive where w == 0)."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self):
        """The inverse rotation(s)."""
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angle(s), in [0, pi]."""
        return 2 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation: the eigenvector of the largest eigenvalue of
        sum_i w_i q_i q_i^T (Markley et al.)."""
        if weights is None:
            weights = jnp.ones(self.quat.shape[0], dtype=self.quat.dtype)
        else:
            weights = jnp.asarray(weights, dtype=self.quat.dtype)
        if weights.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {weights.shape}.")
        if weights.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of rotations, got "
                             f"{weights.shape[0]} values and {len(self)} rotations.")
        moments = jnp.dot(weights[None, :] * self.quat.T, self.quat)
        _, vectors = jnp.linalg.eigh(moments)
        return Rotation(vectors[:, -1])

    @property
    def single(self):
        """Whether this holds one rotation (quat of shape (4,))."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times; made by
    Slerp.init(times, rotations) and called with the times to interpolate at."""
    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations):
        """The interpolator between `rotations` (at least 2) at the 1-d `times`."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got {times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of timestamps given, got "
                             f"{len(rotations)} rotations and {times.shape[0]} timestamps.")
        quat = rotations.as_quat()
        starts = Rotation(quat[:-1])
        steps = (starts.inv() * Rotation(quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times):
        """The interpolated rotation(s) at `times` (a scalar gives a single rotation)."""
        times = jnp.asarray(times, dtype=self.times.dtype)
        if times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = times.ndim == 0
        times = jnp.atleast_1d(times)
        index = jnp.maximum(jnp.searchsorted(self.times, times) - 1, 0)
        alpha = (times - self.times[index]) / self.timedelta[index]
        result = self.rotations[index] * Rotation.from_rotvec(self.rotvecs[index] * alpha[:, None])
        return result[0] if single else result
