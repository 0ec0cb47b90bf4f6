"""einsum on dot_general: diagonals and lone indices first, then pairwise contractions, then a transpose."""
import string

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.creation import diagonal
from xjax._src.lax.sharding_ops import out_sharding_of
from xjax._src.sharding import NamedSharding, PartitionSpec

_SPARE = string.ascii_uppercase + string.ascii_lowercase


def _parse(subscripts, shapes):
    """(list of input label strings, output label string), with '...' expanded to spare letters."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->")
        explicit = True
    else:
        lhs, out, explicit = spec, None, False
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: {len(ins)} operand subscripts for {len(shapes)} operands in {subscripts!r}")
    used = set(spec) - set(".,->")
    spare = [c for c in _SPARE if c not in used]
    ell_nd = 0
    for term, shp in zip(ins, shapes):
        if "..." in term:
            ell_nd = max(ell_nd, len(shp) - (len(term) - 3))
    ell = "".join(spare[:ell_nd])
    expanded = []
    for term, shp in zip(ins, shapes):
        if "..." in term:
            k = len(shp) - (len(term) - 3)
            if k < 0:
                raise ValueError(f"einsum: operand has {len(shp)} dimensions, too few for subscripts {term!r}")
            term = term.replace("...", ell[ell_nd - k:] if k else "")
        if len(term) != len(shp):
            raise ValueError(f"einsum(): operand with shape {shp} does not match subscripts {term!r}: "
                             f"expected {len(shp)} labels, got {len(term)}")
        for c in term:
            if not c.isalpha():
                raise ValueError(f"einsum: invalid subscript {c!r} in {subscripts!r}")
        expanded.append(term)
    if explicit:
        if "..." in out:
            out = out.replace("...", ell)
        elif ell and not any(c in out for c in ell):
            pass
    else:
        counts = {}
        for term in expanded:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    all_in = set("".join(expanded))
    for c in out:
        if c not in all_in:
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs of {subscripts!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"einsum: output subscript string {out!r} includes a repeated label")
    return expanded, out


def _take_diagonals(x, labels):
    """Collapses repeated labels of one operand by taking diagonals (the label moves last)."""
    while True:
        dup = next((c for c in labels if labels.count(c) > 1), None)
        if dup is None:
            return x, labels
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        x = diagonal(x, 0, i, j)
        labels = "".join(c for k, c in enumerate(labels) if k not in (i, j)) + dup


def _sum_labels(x, labels, keep):
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    return lax.reduce_sum(x, axes), "".join(c for c in labels if c in keep)


def _unify_sizes(ops, sizes):
    """Broadcasts size-1 dimensions to the size their label has elsewhere."""
    out = []
    for x, labels in ops:
        want = tuple(sizes[c] for c in labels)
        if x.aval.shape != want:
            x = util.broadcast_to_shape(x, want)
        out.append((x, labels))
    return out


def _interleaved_subscripts(args):
    """(subscripts string, operands) of einsum(op0, sublist0, op1, sublist1, ..., [output sublist]), each
    sublist a list of ints in [0, 52) (letters a-z, A-Z) or Ellipsis."""
    operands, sublists = list(args[0::2]), list(args[1::2])
    output = None
    if len(args) % 2:
        output, operands = operands[-1], operands[:-1]

    def letters(sublist):
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
                out.append(chr(ord("a") + s) if s < 26 else chr(ord("A") + s - 26))
            else:
                raise ValueError(f"einsum: subscript in a sublist must be an int in [0, 52) or Ellipsis, got {s!r}")
        return "".join(out)

    subscripts = ",".join(letters(s) for s in sublists)
    if output is not None:
        subscripts += "->" + letters(output)
    return subscripts, operands


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None,
           _dot_general=None, out_sharding=None):
    """Einstein summation over the operands as described by `subscripts` (NumPy's notation); out_sharding:
    the sharding of the result's type, given to the last product (JAX's)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):  # NumPy's interleaved form: op0, sublist0, op1, sublist1, ..., [out]
        subscripts, operands = _interleaved_subscripts((subscripts, *operands))
    util.check_arraylike("einsum", *operands)
    ops = [util.asarray(o) for o in operands]
    if preferred_element_type is None:
        preferred_element_type, weak = util.result_dtype(*ops)
    else:
        preferred_element_type, weak = dtypes.canonicalize_dtype(preferred_element_type), False
    if len({o.aval.dtype for o in ops}) > 1:  # the core contracts operands of one dtype
        ops = util.promote_dtypes(*ops)
    terms, out_labels = _parse(subscripts, [o.aval.shape for o in ops])
    sizes = {}
    for k, (x, labels) in enumerate(zip(ops, terms)):
        for c, d in zip(labels, x.aval.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                raise ValueError(f"Size of label '{c}' for operand {k} ({d}) does not match previous terms "
                                 f"({sizes[c]}).")
    work = _unify_sizes(list(zip(ops, terms)), sizes)
    work = [_take_diagonals(x, labels) for x, labels in work]

    def needed_elsewhere(k):
        keep = set(out_labels)
        for j, (_, lab) in enumerate(work):
            if j != k:
                keep |= set(lab)
        return keep

    work = [_sum_labels(x, lab, needed_elsewhere(k)) for k, (x, lab) in enumerate(work)]
    typed = out_sharding_of(out_sharding, len(out_labels), "jax.numpy.einsum", [x for x, _ in work])
    while len(work) > 1:
        (a, la), (b, lb) = work[0], work[1]
        rest = set(out_labels)
        for _, lab in work[2:]:
            rest |= set(lab)
        shared = [c for c in la if c in lb]
        batch = [c for c in shared if c in rest]
        contract = [c for c in shared if c not in rest]
        dn = ((tuple(la.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
              (tuple(la.index(c) for c in batch), tuple(lb.index(c) for c in batch)))
        labels = "".join(batch) + "".join(c for c in la if c not in shared) + "".join(c for c in lb if c not in shared)
        res = lax.dot_general(a, b, dn, preferred_element_type=preferred_element_type,
                              out_sharding=_labelled(typed, out_labels, labels) if len(work) == 2 else None)
        work = [(res, labels)] + work[2:]
    x, labels = work[0]
    x, labels = _sum_labels(x, labels, set(out_labels))
    if labels != out_labels:
        x = lax.transpose(x, tuple(labels.index(c) for c in out_labels))
    if typed is not None and len(operands) == 1:  # (no product to type: the result resharded)
        x = lax.broadcast_in_dim(x, x.aval.shape, tuple(range(x.aval.ndim)), out_sharding=typed)
    return lax.elementwise._convert(x, preferred_element_type, weak)


def _labelled(typed, out_labels, labels):
    """The sharding `typed` of the result (labels out_labels) for a product whose labels are `labels`
    (a label summed away after it unsplit)."""
    if typed is None:
        return None
    spec = tuple(typed.spec)
    return NamedSharding(typed.mesh, PartitionSpec(*(spec[out_labels.index(c)] if c in out_labels else None
                                                     for c in labels)))


def einsum_path(subscripts, *operands, optimize="greedy"):
    """The contraction order einsum uses (left to right) in NumPy's path format."""
    n = len(operands)
    path = ["einsum_path"] + [(0, 1)] * max(n - 1, 0)
    return path, f"  Complete contraction:  {subscripts}\n  (contracted left to right)"
