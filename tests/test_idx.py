"""xjax.examples.idx and the MNIST loader: IDX files the tests write (plain and gzipped), and every malformed
kind we can think of: each gives a clear IdxError, and the main job turns it into one line and exit code 2."""
import gzip
import os

import numpy as np
import pytest

from examples_util import assert_one_line_error, run_train, write_fake_mnist
from xjax.examples import data
from xjax.examples.idx import IdxError, parse_idx, read_idx, write_idx


def header(code, *dims):
    return bytes([0, 0, code, len(dims)]) + np.asarray(dims, ">u4").tobytes()


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
def test_round_trip(tmp_path, dtype, compress):
    array = (np.arange(24).reshape(2, 3, 4) - 7).astype(dtype)
    path = tmp_path / "a.idx"
    write_idx(path, array, compress=compress)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == compress
    back = read_idx(path)
    assert back.dtype == array.dtype and back.shape == (2, 3, 4)
    np.testing.assert_array_equal(back, array)


def test_layout_is_big_endian_as_the_format_says():
    raw = header(0x0B, 2) + bytes([0x01, 0x02, 0xFF, 0xFE])
    np.testing.assert_array_equal(parse_idx(raw), np.array([0x0102, -2], np.int16))
    labels = header(0x08, 3) + bytes([7, 0, 9])
    np.testing.assert_array_equal(parse_idx(labels), np.array([7, 0, 9], np.uint8))


@pytest.mark.parametrize("raw, message", [
    (b"", "truncated IDX header (0 bytes"),
    (b"\x00\x00\x08", "truncated IDX header (3 bytes"),
    (b"\x1f\x00\x08\x01" + bytes(5), "not an IDX file (magic starts with 1f00"),
    (b"\x00\x01\x08\x01" + bytes(5), "not an IDX file"),
    (header(0x07, 2) + bytes(2), "unknown IDX type code 0x07"),
    (header(0x08, 2, 3)[:9], "truncated IDX header (9 bytes, 2 dimensions need 12)"),
    (header(0x08, 2, 3) + bytes(5), "truncated: shape (2, 3) of uint8 needs 18 bytes, file has 17"),
    (header(0x0D, 4) + bytes(12), "truncated: shape (4,) of float32 needs 24 bytes, file has 20"),
    (header(0x08, 2) + bytes(3), "has trailing bytes"),
    (header(0x08, 0xFFFFFFFF, 0xFFFFFFFF) + bytes(8), "truncated: shape (4294967295, 4294967295)"),
], ids=["empty", "short_header", "gzip_like_magic", "nonzero_magic", "type_code", "short_dims", "short_uint8",
        "short_float32", "trailing", "huge_dims"])
def test_malformed_bytes(raw, message):
    with pytest.raises(IdxError, match="^name: ") as info:
        parse_idx(raw, "name")
    assert message in str(info.value)


def test_file_errors(tmp_path):
    with pytest.raises(IdxError, match="no such file"):
        read_idx(tmp_path / "missing")
    bad_gzip = tmp_path / "cut.gz"
    bad_gzip.write_bytes(gzip.compress(header(0x08, 100) + bytes(100))[:20])
    with pytest.raises(IdxError, match="corrupt or truncated gzip data"):
        read_idx(bad_gzip)
    with pytest.raises(IdxError, match="cannot read"):
        read_idx(tmp_path)  # a directory


def test_load_mnist_plain_and_gzipped(tmp_path):
    arrays = write_fake_mnist(tmp_path, n_train=30, n_test=12, gz=("train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))
    ds = data.load_mnist(str(tmp_path))
    assert ds.train_images.shape == (30, 28, 28, 1) and ds.train_images.dtype == np.float32
    assert ds.test_images.shape == (12, 28, 28, 1) and ds.test_labels.dtype == np.int32
    np.testing.assert_array_equal(ds.train_images[..., 0] * 255, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(ds.test_labels, arrays["t10k-labels-idx1-ubyte"])


def _replace(directory, name, array):
    os.remove(os.path.join(directory, name))
    write_idx(os.path.join(directory, name), array)


# Each case: (file to replace or delete, what to put there (None: delete), what the message must say).
MNIST_CASES = {
    "missing": ("t10k-labels-idx1-ubyte", None, "missing t10k-labels-idx1-ubyte (or t10k-labels-idx1-ubyte.gz)"),
    "labels_count": ("train-labels-idx1-ubyte", np.zeros(29, np.uint8),
                     "29 labels for 30 images in"),
    "label_range": ("t10k-labels-idx1-ubyte", np.full(12, 10, np.uint8), "label 10 out of range 0..9"),
    "image_dtype": ("train-images-idx3-ubyte", np.zeros((30, 28, 28), np.float32),
                    "expected uint8 images of shape (count, rows, cols), got float32 (30, 28, 28)"),
    "image_rank": ("t10k-images-idx3-ubyte", np.zeros((12, 784), np.uint8), "got uint8 (12, 784)"),
    "label_rank": ("train-labels-idx1-ubyte", np.zeros((30, 1), np.uint8), "expected uint8 labels of shape"),
    "image_size": ("t10k-images-idx3-ubyte", np.zeros((12, 20, 20), np.uint8),
                   "images are (20, 20), training images are (28, 28)"),
}


def _broken_mnist(directory, case):
    write_fake_mnist(directory, n_train=30, n_test=12, gz=())
    name, array, message = MNIST_CASES[case]
    if array is None:
        os.remove(os.path.join(directory, name))
    else:
        _replace(directory, name, array)
    return message


@pytest.mark.parametrize("case", sorted(MNIST_CASES))
def test_load_mnist_rejects(tmp_path, case):
    message = _broken_mnist(tmp_path, case)
    with pytest.raises(IdxError) as info:
        data.load_mnist(str(tmp_path))
    assert message in str(info.value)


def test_load_mnist_not_a_directory(tmp_path):
    with pytest.raises(IdxError, match="not a directory"):
        data.load_mnist(str(tmp_path / "nope"))


def _corrupt(path, how):
    raw = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write({"truncated": raw[:-7], "wrong_magic": b"\x08\x03" + raw[2:], "dtype_code": raw[:2] + b"\x0a" + raw[3:],
                 "bad_gzip": gzip.compress(raw)[:40]}[how])


@pytest.mark.parametrize("how, message", [
    ("truncated", "train-images-idx3-ubyte: truncated: shape (30, 28, 28) of uint8 needs 23536 bytes, file has 23529"),
    ("wrong_magic", "train-images-idx3-ubyte: not an IDX file"),
    ("dtype_code", "unknown IDX type code 0x0a"),
    ("bad_gzip", "corrupt or truncated gzip data"),
])
def test_cli_malformed_file_one_line_exit_2(tmp_path, how, message):
    write_fake_mnist(tmp_path / "mnist", n_train=30, n_test=12, gz=())
    _corrupt(tmp_path / "mnist" / "train-images-idx3-ubyte", how)
    proc = run_train("--data", tmp_path / "mnist", "--out", tmp_path, cwd=tmp_path)
    assert_one_line_error(proc, "--data: ", message)
    assert proc.stdout == "" and not (tmp_path / "training.png").exists()


@pytest.mark.parametrize("case", ["missing", "labels_count"])
def test_cli_bad_mnist_directory_one_line_exit_2(tmp_path, case):
    message = _broken_mnist(tmp_path / "mnist", case)
    assert_one_line_error(run_train("--data", tmp_path / "mnist", cwd=tmp_path), message)
