"""default_collate (torch.utils.data's): a batch of samples as tensors."""

import collections
import collections.abc

import numpy as np

from ... import _stride


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _collate_numpy(batch):
    elem = batch[0]
    if elem.dtype.kind in "OSUV":
        raise TypeError(f"default_collate: numpy arrays of dtype {elem.dtype} cannot be collated.")
    # np.stack makes one new contiguous array, which the tensor then shares.
    return _stride.from_numpy(np.ascontiguousarray(np.stack(batch)))


def _collate_sequences(batch):
    elem = batch[0]
    size = len(elem)
    for i, item in enumerate(batch):
        if len(item) != size:
            raise RuntimeError(
                f"default_collate: each element in the batch should be of equal size; item 0 "
                f"has {size} and item {i} has {len(item)}."
            )
    columns = [default_collate(list(samples)) for samples in zip(*batch)]
    if _is_namedtuple(elem):
        return type(elem)(*columns)
    if isinstance(elem, tuple):
        return columns  # PyTorch returns a list for tuples
    try:
        return type(elem)(columns)
    except TypeError:
        return columns


def default_collate(batch):
    """Turns a list of samples into a batch, as torch's default_collate:
    tensors are stacked into (B, ...); NumPy arrays and NumPy scalars become
    tensors of their dtype; Python floats a float64 tensor, ints an int64 one,
    bools a bool one; strings and bytes stay a list; dicts, named tuples,
    tuples and lists are collated field by field (tuples give lists)."""
    if not isinstance(batch, (collections.abc.Sequence, np.ndarray)) or isinstance(
        batch, (str, bytes)
    ):
        raise TypeError(
            f"default_collate: batch must be a sequence of samples; got {type(batch).__name__}."
        )
    elem = batch[0]
    if isinstance(elem, _stride.Tensor):
        return _stride.stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        return _collate_numpy([np.asarray(x) for x in batch])
    if isinstance(elem, bool):
        return _stride.tensor(list(batch), dtype=_stride.bool)
    if isinstance(elem, int):
        return _stride.tensor(list(batch), dtype=_stride.int64)
    if isinstance(elem, float):
        return _stride.tensor(list(batch), dtype=_stride.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequences(batch)
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
        f"lists; found {type(elem).__name__}."
    )
