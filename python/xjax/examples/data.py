"""The main job's data sets: scikit-learn's 8x8 digits (the default) or MNIST from IDX files in a directory.

Both come back as a Dataset of float32 NHWC images in [0, 1] and int32 labels in 0..9.
"""
import os
from typing import NamedTuple

import numpy as np

from xjax.examples.idx import IdxError, read_idx

NUM_CLASSES = 10
MNIST_FILES = {"train_images": "train-images-idx3-ubyte", "train_labels": "train-labels-idx1-ubyte",
               "test_images": "t10k-images-idx3-ubyte", "test_labels": "t10k-labels-idx1-ubyte"}
SPLIT_SEED = 0  # the digits test split is the same for every --seed, so accuracies compare


class Dataset(NamedTuple):
    name: str
    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray


def load_digits(test_fraction=0.2):
    """scikit-learn's digits (1797 8x8 images, shipped in the package); the test set: the last 20% after a fixed
    shuffle."""
    from sklearn.datasets import load_digits as sklearn_digits  # lazy: scikit-learn is optional (examples)

    digits = sklearn_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    train, test = order[:-n_test], order[-n_test:]
    return Dataset("digits 8x8", images[train], labels[train], images[test], labels[test])


def find_mnist_file(directory, stem):
    """The path of `stem` or `stem.gz` in `directory`; IdxError when neither exists."""
    for name in (stem, stem + ".gz"):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    raise IdxError(f"{directory}: missing {stem} (or {stem}.gz)")


def _images(path):
    images = read_idx(path)
    if images.ndim != 3 or images.dtype != np.uint8:
        raise IdxError(f"{path}: expected uint8 images of shape (count, rows, cols), got {images.dtype} {images.shape}")
    return (images.astype(np.float32) / 255.0)[..., None]


def _labels(path, count, images_path):
    labels = read_idx(path)
    if labels.ndim != 1 or labels.dtype != np.uint8:
        raise IdxError(f"{path}: expected uint8 labels of shape (count,), got {labels.dtype} {labels.shape}")
    if len(labels) != count:
        raise IdxError(f"{path}: {len(labels)} labels for {count} images in {images_path}")
    if len(labels) and labels.max() >= NUM_CLASSES:
        raise IdxError(f"{path}: label {int(labels.max())} out of range 0..{NUM_CLASSES - 1}")
    return labels.astype(np.int32)


def load_mnist(directory):
    """MNIST's four IDX files (plain or .gz) from `directory`, checked for shapes, dtypes and label range."""
    if not os.path.isdir(directory):
        raise IdxError(f"{directory}: not a directory")
    paths = {key: find_mnist_file(directory, stem) for key, stem in MNIST_FILES.items()}
    train_images = _images(paths["train_images"])
    test_images = _images(paths["test_images"])
    if train_images.shape[1:] != test_images.shape[1:]:
        raise IdxError(f"{paths['test_images']}: images are {test_images.shape[1:3]}, "
                       f"training images are {train_images.shape[1:3]}")
    if len(train_images) == 0 or len(test_images) == 0:
        raise IdxError(f"{directory}: empty training or test set")
    train_labels = _labels(paths["train_labels"], len(train_images), paths["train_images"])
    test_labels = _labels(paths["test_labels"], len(test_images), paths["test_images"])
    rows, cols = train_images.shape[1:3]
    return Dataset(f"MNIST {rows}x{cols} from {directory}", train_images, train_labels, test_images, test_labels)
