"""A reader for IDX files (the format MNIST ships in), plain or gzipped, that rejects malformed input with IdxError.

An IDX file is: two zero bytes, a type code, the number of dimensions n, then n big-endian
uint32 sizes, then the values, big-endian, in C order. Everything is checked against the file's
length before any array is built, so a hostile header cannot make us allocate gigabytes.
"""
import gzip
import os
import zlib

import numpy as np

# IDX type code -> big-endian NumPy dtype.
_DTYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
           0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}
_GZIP_MAGIC = b"\x1f\x8b"


class IdxError(ValueError):
    """A missing or malformed IDX file; the message names the file and what is wrong with it."""


def read_bytes(path):
    """The file's bytes, decompressed when it is gzipped (detected by content, not by name)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise IdxError(f"{path}: no such file") from None
    except OSError as e:
        raise IdxError(f"{path}: cannot read: {e.strerror or e}") from None
    if not raw.startswith(_GZIP_MAGIC):
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise IdxError(f"{path}: corrupt or truncated gzip data ({e})") from None


def parse_idx(data, name="<bytes>"):
    """Parses the bytes of an IDX file into a NumPy array in native byte order."""
    if len(data) < 4:
        raise IdxError(f"{name}: truncated IDX header ({len(data)} bytes, need at least 4)")
    if data[0] != 0 or data[1] != 0:
        raise IdxError(f"{name}: not an IDX file (magic starts with {data[:2].hex()}, expected 0000)")
    code, ndim = data[2], data[3]
    if code not in _DTYPES:
        known = ", ".join(f"0x{c:02x}" for c in _DTYPES)
        raise IdxError(f"{name}: unknown IDX type code 0x{code:02x} (known: {known})")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise IdxError(f"{name}: truncated IDX header ({len(data)} bytes, {ndim} dimensions need {header})")
    shape = tuple(int(d) for d in np.frombuffer(data, ">u4", ndim, 4))
    dtype = _DTYPES[code]
    expected = header + int(np.prod(shape, dtype=object)) * dtype.itemsize
    if len(data) != expected:
        what = "truncated" if len(data) < expected else "has trailing bytes"
        raise IdxError(f"{name}: {what}: shape {shape} of {dtype.name} needs {expected} bytes, file has {len(data)}")
    return np.frombuffer(data, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def read_idx(path):
    """Reads one IDX file (plain or gzipped) into a NumPy array."""
    return parse_idx(read_bytes(path), os.fspath(path))


def write_idx(path, array, compress=False):
    """Writes `array` as an IDX file (gzipped when `compress`); the tests and tools use it to make inputs."""
    array = np.asarray(array)
    codes = {dt.newbyteorder("="): code for code, dt in _DTYPES.items()}
    code = codes.get(array.dtype)
    if code is None:
        raise IdxError(f"write_idx: dtype {array.dtype} has no IDX type code")
    header = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    data = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if compress else data)
