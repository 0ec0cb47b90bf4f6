"""xjax.nn.initializers against values recorded from JAX 0.10.2 (key PRNGKey(3)), and their errors."""
import numpy as np
import pytest

import xjax
from xjax.nn import initializers as I

# Recorded with jax.nn.initializers.<name>(...)(jax.random.PRNGKey(3), shape), flattened.
RECORDED = {
    "glorot_normal": (I.glorot_normal(), (3, 4), [
        -0.8020675182342529, 0.8465593457221985, 0.22136852145195007, 1.0237629413604736, -0.3390099108219147,
        0.12138592451810837, -0.7007789015769958, -0.1745622456073761, -0.46093490719795227, -0.6432823538780212,
        0.3653041422367096, -0.5755691528320312]),
    "glorot_uniform": (I.glorot_uniform(), (3, 4), [
        -0.7887014150619507, 0.811285674571991, 0.27581480145454407, 0.8806789517402649, -0.41036462783813477,
        0.1535714715719223, -0.7286102175712585, -0.21929706633090973, -0.5352832078933716, -0.6888800859451294,
        0.43867427110671997, -0.6367253661155701]),
    "he_normal": (I.he_normal(), (2, 3, 4), [
        -0.8663319945335388, 0.9143886566162109, 0.23910534381866455, 1.105790376663208, -0.36617258191108704,
        0.13111178576946259, -0.7569277286529541, -0.18854877352714539, -0.49786660075187683, -0.6948243379592896,
        0.3945735692977905, -0.6216857433319092, -0.3255116939544678, -0.4062192738056183, 1.0644378662109375,
        -0.7528132200241089, 0.02269338257610798, 0.13727781176567078, 0.4422103762626648, -0.5116400718688965,
        0.2524475157260895, -0.6405125856399536, -0.4643976092338562, 0.7902783751487732]),
    "he_uniform": (I.he_uniform(), (3, 4), [
        -1.204761266708374, 1.2392592430114746, 0.4213140606880188, 1.3452593088150024, -0.6268423199653625,
        0.23458430171012878, -1.1129704713821411, -0.3349817991256714, -0.8176586031913757, -1.0522817373275757,
        0.6700859665870667, -0.972614049911499]),
    "lecun_normal": (I.lecun_normal(), (3, 4), [
        -0.8663319945335388, 0.9143886566162109, 0.23910534381866455, 1.105790376663208, -0.36617258191108704,
        0.13111178576946259, -0.7569277286529541, -0.18854877352714539, -0.49786660075187683, -0.6948243379592896,
        0.3945735692977905, -0.6216857433319092]),
    "lecun_uniform": (I.lecun_uniform(), (3, 4), [
        -0.8518948554992676, 0.876288652420044, 0.2979140281677246, 0.9512419700622559, -0.44324445724487305,
        0.16587615013122559, -0.7869889736175537, -0.23686790466308594, -0.578171968460083, -0.7440755367279053,
        0.47382235527038574, -0.6877419948577881]),
    "normal": (I.normal(0.5), (5,), [
        -0.7231284976005554, 0.7696905136108398, 0.19125312566757202, 0.9853509068489075, -0.2938337028026581]),
    "uniform": (I.uniform(2.0), (5,), [
        0.14810514450073242, 1.876288652420044, 1.2979140281677246, 1.9512419700622559, 0.556755542755127]),
    "truncated_normal": (I.truncated_normal(0.3, lower=-1.0, upper=1.5), (5,), [
        -0.23572009801864624, 0.36054590344429016, 0.12480153888463974, 0.4103356599807739, -0.0961700975894928]),
    "vs_fan_out_normal": (I.variance_scaling(3.0, "fan_out", "normal", in_axis=0, out_axis=1), (3, 2, 2), [
        -1.252495288848877, 1.3331429958343506, 0.3312601149082184, 1.706677794456482, -0.5089349150657654,
        0.18135924637317657, -1.0784860849380493, -0.2609943151473999, -0.6956380605697632, -0.9838711619377136,
        0.5489317178726196, -0.875114381313324]),
    "vs_geo_uniform": (I.variance_scaling(0.5, "fan_geo_avg", "uniform"), (4, 3), [
        -0.5605783462524414, 0.5766303539276123, 0.19603845477104187, 0.625952422618866, -0.2916712462902069,
        0.1091526448726654, -0.5178678631782532, -0.15586784482002258, -0.3804585635662079, -0.48962923884391785,
        0.31179264187812805, -0.4525596797466278]),
    "orthogonal": (I.orthogonal(), (3, 4), [
        -0.48706746101379395, 0.6636888384819031, -0.41939911246299744, -0.38260552287101746, 0.7265363335609436,
        0.19257184863090515, -0.6485683917999268, 0.12008364498615265, 0.2024156153202057, -0.40162351727485657,
        -0.057526323944330215, -0.8913007974624634]),
    "orthogonal_tall": (I.orthogonal(2.0), (5, 3), [
        -0.9594340324401855, 1.2992478609085083, 0.7801907658576965, 1.307346224784851, 0.19102615118026733,
        0.029144614934921265, -0.8261399865150452, -0.994596004486084, -0.8149139881134033, -0.753663182258606,
        0.27317726612091064, -0.7296597957611084, -0.3461448550224304, -1.1007344722747803, 1.4812042713165283]),
    "orthogonal_axis0": (I.orthogonal(column_axis=0), (3, 2, 2), [
        -0.48706746101379395, 0.6636888384819031, -0.41939911246299744, -0.38260552287101746, 0.7265363335609436,
        0.19257184863090515, -0.6485683917999268, 0.12008364498615265, 0.2024156153202057, -0.40162351727485657,
        -0.057526323944330215, -0.8913007974624634]),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
@pytest.mark.parametrize("jit", [False, True])
def test_matches_jax(name, jit):
    init, shape, want = RECORDED[name]
    f = xjax.jit(init, static_argnums=1) if jit else init
    got = f(xjax.random.PRNGKey(3), shape)
    assert got.shape == shape and got.dtype == np.float32
    # orthogonal goes through a QR factorisation: LAPACK's rounding, not bit for bit
    tol = 1e-5 if name.startswith("orthogonal") else 2e-6
    np.testing.assert_allclose(np.asarray(got).ravel(), np.float32(want), rtol=tol, atol=tol / 20)


def test_orthogonal_is_orthonormal_and_empty_shapes():
    q = np.asarray(I.orthogonal()(xjax.random.PRNGKey(0), (6, 4)), np.float64)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    assert I.orthogonal()(xjax.random.PRNGKey(0), (0, 3)).shape == (0, 3)
    with pytest.raises(ValueError, match="orthogonal initializer requires at least a 2D shape"):
        I.orthogonal()(xjax.random.PRNGKey(0), (5,))


def test_dtype_and_aliases():
    got = I.glorot_uniform(dtype=np.float32)(xjax.random.PRNGKey(0), (4, 4))
    assert got.dtype == np.float32
    assert I.xavier_normal is I.glorot_normal and I.kaiming_uniform is I.he_uniform


def test_errors_as_jax():
    key = xjax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan_bad"):
        I.variance_scaling(1.0, "fan_bad", "normal")(key, (3, 4))
    with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer: cauchy"):
        I.variance_scaling(1.0, "fan_in", "cauchy")(key, (3, 4))
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a 1-dimensional weights tensor"):
        I.glorot_normal()(xjax.random.PRNGKey(0), (5,))
