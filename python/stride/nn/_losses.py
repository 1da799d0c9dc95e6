"""torch.nn.functional's losses whose C++ forms (src/nn/margin_losses.cpp,
cross_entropy.cpp) take more than PyTorch's builtin signature can show:
these wrappers keep PyTorch's parameter names, order and defaults, name
the argument that is not a tensor, and take what C++ cannot (a float var,
a Python distance function). The math is C++'s."""

import stride

from .._stride import Tensor, _nn


def _check_tensors(name, **args):
    for arg, value in args.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): {arg} must be a stride.Tensor; got {type(value).__name__}.")


def nll_loss(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
):
    """Negative log-likelihood of log-probabilities (N, C, ...) or (C,)
    against class indices (torch.nn.functional.nll_loss); weight (C,)
    weighs each class, and the mean divides by the targets' total weight."""
    _check_tensors("nll_loss", input=input, target=target)
    return _nn.nll_loss(input, target, weight, size_average, ignore_index, reduce, reduction)


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """log_softmax + NLL of logits (N, C, ...) or (C,) against class indices
    or class probabilities of the input's shape
    (torch.nn.functional.cross_entropy). Index targets without class
    weights run the fused op."""
    _check_tensors("cross_entropy", input=input, target=target)
    return _nn.cross_entropy(
        input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing
    )


def cosine_embedding_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where
    it is -1 (torch.nn.functional.cosine_embedding_loss)."""
    _check_tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    return _nn.cosine_embedding_loss(
        input1, input2, target, margin, size_average, reduce, reduction
    )


def margin_ranking_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -target * (input1 - input2) + margin)
    (torch.nn.functional.margin_ranking_loss)."""
    _check_tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    return _nn.margin_ranking_loss(input1, input2, target, margin, size_average, reduce, reduction)


def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """sum over classes j != y of max(0, margin - x[y] + x[j])^p / C, times
    weight[y] (torch.nn.functional.multi_margin_loss)."""
    _check_tensors("multi_margin_loss", input=input, target=target)
    return _nn.multi_margin_loss(input, target, p, margin, weight, size_average, reduce, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and other classes k of
    max(0, 1 - (x[j] - x[k])) / C; each row's targets are the indices
    before its first -1 (torch.nn.functional.multilabel_margin_loss)."""
    _check_tensors("multilabel_margin_loss", input=input, target=target)
    return _nn.multilabel_margin_loss(input, target, size_average, reduce, reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """The mean over classes of the binary cross-entropy of sigmoid(input)
    against target (torch.nn.functional.multilabel_soft_margin_loss)."""
    _check_tensors("multilabel_soft_margin_loss", input=input, target=target)
    return _nn.multilabel_soft_margin_loss(input, target, weight, size_average, reduce, reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the
    p-norm pairwise distance (torch.nn.functional.triplet_margin_loss)."""
    _check_tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    return _nn.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap, size_average, reduce, reduction
    )


def triplet_margin_with_distance_loss(
    anchor,
    positive,
    negative,
    *,
    distance_function=None,
    margin=1.0,
    swap=False,
    reduction="mean",
):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d being
    distance_function (pairwise_distance by default); swap also takes
    d(positive, negative) when smaller
    (torch.nn.functional.triplet_margin_with_distance_loss). d may be any
    Python callable of two tensors; the C++ loss calls it."""
    name = "triplet_margin_with_distance_loss"
    _check_tensors(name, anchor=anchor, positive=positive, negative=negative)
    return _nn.triplet_margin_with_distance_loss(
        anchor,
        positive,
        negative,
        distance_function=distance_function,
        margin=margin,
        swap=swap,
        reduction=reduction,
    )


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(var) + (input - target)^2 / var), var clamped below at eps
    with the gradient of the unclamped var, as PyTorch's
    (torch.nn.functional.gaussian_nll_loss); full adds 0.5 * log(2 pi). var
    may be a float, one variance for every element."""
    _check_tensors("gaussian_nll_loss", input=input, target=target)
    if not isinstance(var, Tensor):
        var = stride.full_like(input, float(var))
    return _nn.gaussian_nll_loss(input, target, var, full, eps, reduction)
