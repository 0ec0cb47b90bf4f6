"""lax.conv_general_dilated by its definition in NumPy, for the convolution tests."""
import numpy as np


def _perm(spec, pair, spatial):
    return [spec.index(pair[0]), spec.index(pair[1])] + [spec.index(c) for c in spatial]


def ref_conv(x, w, strides, padding, lhs_dilation, rhs_dilation, dn, fgc=1, bgc=1):
    """The convolution by its definition: dilate, pad (negative pads crop), slide, contract."""
    lhs_s, rhs_s, out_s = dn
    spatial = [c for c in rhs_s if c not in "OI"]
    x = np.transpose(x, _perm(lhs_s, "NC", spatial))
    w = np.transpose(w, _perm(rhs_s, "OI", spatial))
    nsp = len(spatial)
    xd = np.zeros(x.shape[:2] + tuple((s - 1) * d + 1 for s, d in zip(x.shape[2:], lhs_dilation)), x.dtype)
    xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    for i, (lo, hi) in enumerate(padding):
        ax = 2 + i
        xd = np.pad(xd, [(0, 0)] * ax + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (nsp - i - 1))
        n = xd.shape[ax]
        xd = np.take(xd, np.arange(max(-lo, 0), n - max(-hi, 0)), axis=ax)
    wd = np.zeros(w.shape[:2] + tuple((k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dilation)), w.dtype)
    wd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in rhs_dilation)] = w
    out_sp = [max(0, (p - k) // s + 1) for p, k, s in zip(xd.shape[2:], wd.shape[2:], strides)]
    groups = max(fgc, bgc)
    nb, og = x.shape[0] // bgc, w.shape[0] // groups
    cg = x.shape[1] // fgc
    out = np.zeros((nb, w.shape[0]) + tuple(out_sp), np.result_type(x, w))
    for g in range(groups):
        xs = xd[g * nb:(g + 1) * nb] if bgc > 1 else xd[:, g * cg:(g + 1) * cg]
        ws = wd[g * og:(g + 1) * og]
        for pos in np.ndindex(*out_sp):
            win = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, wd.shape[2:]))
            patch = xs[(slice(None), slice(None)) + win]
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = np.tensordot(
                patch, ws, axes=(list(range(1, 2 + nsp)), list(range(1, 2 + nsp))))
    return np.transpose(out, np.argsort(_perm(out_s, "NC", spatial)))
