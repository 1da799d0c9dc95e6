"""The torch.nn.functional losses and argument forms that stride composes in
Python from its own differentiable ops (as PyTorch's are
CompositeImplicitAutograd): class weights and probability targets of
cross_entropy and nll_loss, and the margin, triplet and Gaussian losses.
The fused C++ cross_entropy and nll_loss still run every call they cover."""

import math
import warnings

import stride

from .._stride import Tensor, _nn

_REDUCTIONS = ("mean", "sum", "none")


def legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated size_average= and reduce=, when either is given,
    decide the reduction (torch.nn._reduction.legacy_get_string)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{result}' "
        "instead.",
        UserWarning,
        stacklevel=3,
    )
    return result


def reduce_loss(loss, reduction, name):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}(): reduction must be one of {_REDUCTIONS}; got {reduction!r}.")


def _check_tensor(name, arg, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): {arg} must be a stride.Tensor; got {type(value).__name__}.")


def _class_dim(input):
    return 1 if input.ndim >= 2 else 0


def _along_class_dim(weight, input):
    """weight (C,) viewed to broadcast against input (N, C, ...) or (C,)."""
    shape = [1] * input.ndim
    shape[_class_dim(input)] = -1
    return weight.view(shape)


def _weighted_nll(input, target, weight, ignore_index, reduction):
    """-input[target] * weight[target], ignore_index rows dropped; the mean
    divides by the kept targets' total weight, as PyTorch's does."""
    cdim = _class_dim(input)
    kept = target != ignore_index
    safe = stride.where(kept, target, stride.zeros_like(target))
    picked = input.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim)
    if weight is None:
        w = kept.to(input.dtype)
    else:
        w = weight.gather(0, safe.reshape(-1)).view(safe.shape) * kept.to(input.dtype)
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return reduce_loss(loss, reduction, "nll_loss")


def _check_class_weight(name, input, weight):
    _check_tensor(name, "weight", weight)
    classes = input.shape[_class_dim(input)] if input.ndim else 0
    if weight.shape != (classes,):
        raise ValueError(
            f"{name}(): weight must hold one value per class, shape ({classes},); got "
            f"{tuple(weight.shape)}."
        )


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
    reduction = legacy_reduction(size_average, reduce, reduction)
    if weight is None:
        return _nn.nll_loss(input, target, None, ignore_index, reduction)
    _check_tensor("nll_loss", "input", input)
    _check_class_weight("nll_loss", input, weight)
    reduce_loss(input, reduction, "nll_loss")  # checks the name before any work
    return _weighted_nll(input, target, weight, ignore_index, reduction)


def _smoothing_term(logp, target, weight, ignore_index, reduction):
    """The uniform-target part of label smoothing: -sum_c w_c log p_c, its
    mean taken as the NLL's (over the kept targets' weight)."""
    cdim = _class_dim(logp)
    per_class = logp if weight is None else logp * _along_class_dim(weight, logp)
    kept = target != ignore_index
    smooth = -per_class.sum(cdim) * kept.to(logp.dtype)
    if reduction != "mean":
        return reduce_loss(smooth, reduction, "cross_entropy")
    if weight is None:
        return smooth.sum() / kept.sum().to(logp.dtype)
    safe = stride.where(kept, target, stride.zeros_like(target))
    w = weight.gather(0, safe.reshape(-1)).view(safe.shape) * kept.to(logp.dtype)
    return smooth.sum() / w.sum()


def _probability_cross_entropy(input, target, weight, reduction, label_smoothing):
    """-sum_c w_c target_c log softmax(input)_c for targets that are class
    probabilities; the mean divides by the number of samples."""
    cdim = _class_dim(input)
    classes = input.shape[cdim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = _nn.log_softmax(input, cdim) * target
    if weight is not None:
        terms = terms * _along_class_dim(weight, input)
    loss = -terms.sum(cdim)
    if reduction == "mean":
        return loss.sum() / (input.numel() // classes if classes else 0)
    return reduce_loss(loss, reduction, "cross_entropy")


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
    weights run the fused C++ op; weight= and probability targets are
    composed from log_softmax."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensor("cross_entropy", "input", input)
    _check_tensor("cross_entropy", "target", target)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(
            f"cross_entropy(): label_smoothing must be in [0, 1]; got {label_smoothing}."
        )
    probabilities = target.is_floating_point()
    if not probabilities and weight is None:
        return _nn.cross_entropy(input, target, None, ignore_index, reduction, label_smoothing)
    if weight is not None:
        _check_class_weight("cross_entropy", input, weight)
    reduce_loss(input, reduction, "cross_entropy")  # checks the name before any work
    if probabilities:
        if target.shape != input.shape:
            raise TypeError(
                "cross_entropy(): target must be class indices (an integer tensor) or class "
                f"probabilities of the input's shape {tuple(input.shape)}; got a "
                f"{target.dtype} tensor of shape {tuple(target.shape)}."
            )
        return _probability_cross_entropy(input, target, weight, reduction, label_smoothing)
    logp = _nn.log_softmax(input, _class_dim(input))
    nll = _weighted_nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    smooth = _smoothing_term(logp, target, weight, ignore_index, reduction)
    classes = input.shape[_class_dim(input)]
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / classes)


def cosine_embedding_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where
    it is -1 (torch.nn.functional.cosine_embedding_loss)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    for arg, value in (("input1", input1), ("input2", input2), ("target", target)):
        _check_tensor("cosine_embedding_loss", arg, value)
    if input1.ndim not in (1, 2) or input1.shape != input2.shape:
        raise ValueError(
            "cosine_embedding_loss(): input1 and input2 must be (N, D) or (D,) of one shape; got "
            f"{tuple(input1.shape)} and {tuple(input2.shape)}."
        )
    dim = input1.ndim - 1
    eps = 1e-12  # PyTorch's EPSILON: keeps a zero vector's cosine finite
    dot = (input1 * input2).sum(dim)
    norms = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = dot / norms.sqrt()
    zero = stride.zeros_like(cos)
    positive = stride.where(target == 1, 1 - cos, zero)
    negative = stride.where(target == -1, (cos - margin).clamp_min(0), zero)
    return reduce_loss(positive + negative, reduction, "cosine_embedding_loss")


def margin_ranking_loss(
    input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -target * (input1 - input2) + margin)
    (torch.nn.functional.margin_ranking_loss)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    for arg, value in (("input1", input1), ("input2", input2), ("target", target)):
        _check_tensor("margin_ranking_loss", arg, value)
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return reduce_loss(loss, reduction, "margin_ranking_loss")


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
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensor("multi_margin_loss", "input", input)
    _check_tensor("multi_margin_loss", "target", target)
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss(): p must be 1 or 2; got {p}.")
    if input.ndim > 2:
        raise ValueError(
            f"multi_margin_loss(): input must be (N, C) or (C,); got {tuple(input.shape)}."
        )
    x = input.reshape(-1, input.shape[-1]) if input.ndim else input.reshape(1, 1)
    y = target.reshape(-1, 1)
    classes = x.shape[1]
    margins = (margin - x.gather(1, y) + x).clamp_min(0)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight.gather(0, y.reshape(-1)).unsqueeze(1)
    not_target = stride.arange(classes).unsqueeze(0) != y
    loss = (margins * not_target.to(x.dtype)).sum(1) / classes
    if input.ndim < 2:
        loss = loss.reshape(target.shape)
    return reduce_loss(loss, reduction, "multi_margin_loss")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and other classes k of
    max(0, 1 - (x[j] - x[k])) / C; each row's targets are the indices
    before its first -1 (torch.nn.functional.multilabel_margin_loss)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensor("multilabel_margin_loss", "input", input)
    _check_tensor("multilabel_margin_loss", "target", target)
    if input.ndim > 2 or target.shape != input.shape:
        raise ValueError(
            "multilabel_margin_loss(): input must be (N, C) or (C,) and target of its shape; "
            f"got {tuple(input.shape)} and {tuple(target.shape)}."
        )
    x = input.reshape(-1, input.shape[-1]) if input.ndim else input.reshape(1, 1)
    t = target.reshape(x.shape)
    classes = x.shape[1]
    listed = (t == -1).to(stride.int64).cumsum(1) == 0
    safe = stride.where(listed, t, stride.zeros_like(t))
    hits = _nn.one_hot(safe, classes) * listed.to(stride.int64).unsqueeze(2)
    is_target = hits.sum(1) > 0
    gaps = (1 - (x.gather(1, safe).unsqueeze(2) - x.unsqueeze(1))).clamp_min(0)
    pairs = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (gaps * pairs.to(x.dtype)).sum((1, 2)) / classes
    if input.ndim < 2:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction, "multilabel_margin_loss")


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """The mean over classes of the binary cross-entropy of sigmoid(input)
    against target (torch.nn.functional.multilabel_soft_margin_loss)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_tensor("multilabel_soft_margin_loss", "input", input)
    _check_tensor("multilabel_soft_margin_loss", "target", target)
    loss = -(target * _nn.logsigmoid(input) + (1 - target) * _nn.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    cdim = input.ndim - 1
    loss = loss.sum(cdim) / input.shape[cdim]
    return reduce_loss(loss, reduction, "multilabel_soft_margin_loss")


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
    (torch.nn.functional.triplet_margin_with_distance_loss)."""
    for arg, value in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _check_tensor("triplet_margin_with_distance_loss", arg, value)
    if margin <= 0:
        raise ValueError(
            f"triplet_margin_with_distance_loss(): margin must be greater than 0; got {margin}."
        )
    distance = distance_function if distance_function is not None else _nn.pairwise_distance
    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = stride.minimum(to_negative, distance(positive, negative))
    loss = (margin + to_positive - to_negative).clamp_min(0)
    return reduce_loss(loss, reduction, "triplet_margin_with_distance_loss")


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
    """triplet_margin_with_distance_loss with the p-norm pairwise distance
    (torch.nn.functional.triplet_margin_loss)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    for arg, value in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _check_tensor("triplet_margin_loss", arg, value)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(
            "triplet_margin_loss(): anchor, positive and negative must have the same number of "
            f"dims; got {anchor.ndim}, {positive.ndim} and {negative.ndim}."
        )

    def distance(a, b):
        return _nn.pairwise_distance(a, b, p, eps)

    to_positive = distance(anchor, positive)
    to_negative = distance(anchor, negative)
    if swap:
        to_negative = stride.minimum(to_negative, distance(positive, negative))
    loss = (margin + to_positive - to_negative).clamp_min(0)
    return reduce_loss(loss, reduction, "triplet_margin_loss")


def _gaussian_variance(input, var):
    """var broadcast the way PyTorch allows: input's shape, or input's with
    the last dim 1 or dropped (one variance per sample)."""
    if var.shape == input.shape:
        return var
    if var.shape == input.shape[:-1]:
        return var.unsqueeze(-1)
    if var.shape[:-1] == input.shape[:-1] and var.shape[-1:] == (1,):
        return var
    raise ValueError(
        f"gaussian_nll_loss(): var of shape {tuple(var.shape)} does not fit input of shape "
        f"{tuple(input.shape)}; it must be the input's shape, or that with the last dim 1 or "
        "dropped."
    )


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 * (log(var) + (input - target)^2 / var), var clamped below at eps
    with the gradient of the unclamped var, as PyTorch's
    (torch.nn.functional.gaussian_nll_loss); full adds 0.5 * log(2 pi)."""
    for arg, value in (("input", input), ("target", target)):
        _check_tensor("gaussian_nll_loss", arg, value)
    if not isinstance(var, Tensor):
        var = stride.full_like(input, float(var))
    var = _gaussian_variance(input, var)
    if (var < 0).any().item():
        raise ValueError("gaussian_nll_loss(): var has negative entries; it must be >= 0.")
    # PyTorch clamps a clone under no_grad: the value is clamped, the
    # gradient flows as if it were not.
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction, "gaussian_nll_loss")
