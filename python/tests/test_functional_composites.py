"""The torch.nn.functional entries stride composes in Python (class weights
and probability targets of cross_entropy and nll_loss, embedding's keywords,
the margin, triplet and Gaussian losses, the channel-wise and alpha
dropouts, rrelu, bilinear, channel_shuffle, pdist, local_response_norm) and
their modules, against PyTorch in float64: values and gradients, signatures,
and errors that name the function and the argument."""

import inspect

import numpy as np
import pytest
import stride
import stride.nn.functional as F
from stride import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def rand(seed, shape, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def pair(a, requires_grad=True):
    """The same values as a stride and a torch tensor (float64 for floats)."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return (
            stride.tensor(a.tolist(), dtype=stride.float64, requires_grad=requires_grad),
            torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad),
        )
    return stride.tensor(a.tolist(), dtype=stride.int64), torch.tensor(a, dtype=torch.int64)


def close(s, t, tol=1e-10):
    t = t.to_dense() if t.is_sparse else t  # sparse=True: stride's gradient is dense
    return np.allclose(s.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


def check(name, arrays, kwargs=None, grad_of=(0,), ours=None, theirs=None):
    """F.name and TF.name on the same arrays agree in value and in the
    gradient of sum(out * weights) with respect to the inputs grad_of."""
    kwargs = kwargs or {}
    s_args, t_args = zip(*[pair(a, i in grad_of) for i, a in enumerate(arrays)])
    got = (ours or getattr(F, name))(*s_args, **kwargs)
    want = (theirs or getattr(TF, name))(*t_args, **kwargs)
    assert got.shape == tuple(want.shape), (name, kwargs)
    assert close(got, want), (name, kwargs)
    w = rand(99, tuple(want.shape))
    got_grads = stride.autograd.grad(
        [(got * stride.tensor(w.tolist(), dtype=stride.float64)).sum()],
        [s_args[i] for i in grad_of],
    )
    want_grads = torch.autograd.grad([(want * torch.tensor(w)).sum()], [t_args[i] for i in grad_of])
    for g, h in zip(got_grads, want_grads):
        assert close(g, h), (name, kwargs)


REDUCTIONS = ["mean", "sum", "none"]
LOGITS, LABELS = rand(0, (5, 4)), np.array([0, 3, 1, 3, 2])
CLASS_WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_with_class_weights_and_ignore_index(reduction, smoothing):
    labels = np.array([0, 3, -100, 3, 2])
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    check("cross_entropy", [LOGITS, labels, CLASS_WEIGHT], kw)
    check(
        "cross_entropy",
        [LOGITS, np.array([0, 3, 1, 3, 1]), CLASS_WEIGHT],
        {**kw, "ignore_index": 1},
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_with_probability_targets(reduction, smoothing):
    probs = np.exp(rand(1, (5, 4)))
    probs /= probs.sum(1, keepdims=True)
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    check("cross_entropy", [LOGITS, probs], kw, grad_of=(0, 1))
    check("cross_entropy", [LOGITS, probs, CLASS_WEIGHT], kw, grad_of=(0, 1))
    # (N, C, d) and an unbatched (C,) input
    spatial = np.exp(rand(2, (2, 4, 3)))
    check("cross_entropy", [rand(3, (2, 4, 3)), spatial / spatial.sum(1, keepdims=True)], kw)
    check("cross_entropy", [LOGITS[0], probs[0]], kw)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_with_class_weights(reduction):
    logp = np.log(np.exp(LOGITS) / np.exp(LOGITS).sum(1, keepdims=True))
    check("nll_loss", [logp, np.array([0, 3, -100, 3, 2]), CLASS_WEIGHT], {"reduction": reduction})
    check(
        "nll_loss",
        [rand(4, (2, 4, 3)), np.array([[0, 1, 2], [3, 3, 0]]), CLASS_WEIGHT],
        {"reduction": reduction, "ignore_index": 3},
    )


def test_embedding_padding_idx_gets_no_gradient_and_scale_grad_by_freq_divides():
    ids = np.array([[1, 2, 1], [0, 1, 4]])
    for kw in (
        {"padding_idx": 1},
        {"padding_idx": -1},
        {"scale_grad_by_freq": True},
        {"padding_idx": 0, "scale_grad_by_freq": True},
        {"sparse": True},
    ):
        check("embedding", [ids, rand(5, (5, 3))], kw, grad_of=(1,))


def test_embedding_max_norm_renormalises_the_looked_up_rows_in_place():
    weight = rand(6, (5, 3), scale=2.0)
    ids = np.array([0, 2, 2])
    for norm_type in (2.0, 1.0):
        (s_ids, t_ids), (s_w, t_w) = pair(ids), pair(weight, False)
        got = F.embedding(s_ids, s_w, max_norm=1.0, norm_type=norm_type)
        want = TF.embedding(t_ids, t_w, max_norm=1.0, norm_type=norm_type)
        assert close(got, want, 1e-6) and close(s_w, t_w, 1e-6)


def test_embedding_module_zeroes_and_freezes_its_padding_row():
    emb = nn.Embedding(4, 2, padding_idx=2)
    assert emb.weight[2].tolist() == [0.0, 0.0]
    emb(stride.tensor([2, 1, 2])).sum().backward()
    assert emb.weight.grad[2].tolist() == [0.0, 0.0] and emb.weight.grad[1].tolist() == [1.0, 1.0]
    assert repr(emb) == repr(torch.nn.Embedding(4, 2, padding_idx=2))


def test_linear_with_a_one_dimensional_weight():
    check("linear", [rand(7, (2, 3, 4)), rand(8, (4,))], grad_of=(0, 1))
    check("linear", [rand(7, (4,)), rand(8, (4,)), np.array(0.5)], grad_of=(0, 1, 2))


def test_rms_norm_over_several_trailing_dims_and_a_negative_eps():
    x, w = rand(9, (2, 3, 4)), rand(10, (3, 4))
    check(
        "rms_norm",
        [x],
        ours=lambda a: F.rms_norm(a, (3, 4), eps=1e-5),
        theirs=lambda a: TF.rms_norm(a, (3, 4), eps=1e-5),
    )
    s_w, t_w = pair(w, False)
    check(
        "rms_norm",
        [x],
        ours=lambda a: F.rms_norm(a, (3, 4), s_w, eps=-0.5),
        theirs=lambda a: TF.rms_norm(a, (3, 4), t_w, eps=-0.5),
    )


def test_scaled_dot_product_attention_shares_key_heads_with_enable_gqa():
    q, k, v = rand(11, (2, 4, 3, 8)), rand(12, (2, 2, 5, 8)), rand(13, (2, 2, 5, 8))
    check("scaled_dot_product_attention", [q, k, v], {"enable_gqa": True}, grad_of=(0, 1, 2))
    mask = rand(14, (3, 5))
    check("scaled_dot_product_attention", [q, k, v, mask], {"enable_gqa": True, "scale": 0.3})
    with pytest.raises(ValueError, match="scaled_dot_product_attention.*enable_gqa"):
        F.scaled_dot_product_attention(
            stride.randn(1, 3, 2, 4),
            stride.randn(1, 2, 2, 4),
            stride.randn(1, 2, 2, 4),
            enable_gqa=True,
        )


X1, X2 = rand(20, (6, 5)), rand(21, (6, 5))
SIGNS = np.array([1, -1, 1, 1, -1, -1])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_losses_match_pytorch(reduction):
    r = {"reduction": reduction}
    check("cosine_embedding_loss", [X1, X2, SIGNS], {**r, "margin": 0.2}, grad_of=(0, 1))
    check("cosine_embedding_loss", [X1[0], X2[0], np.array(-1)], r, grad_of=(0, 1))
    check("margin_ranking_loss", [X1[:, 0], X2[:, 0], SIGNS], {**r, "margin": 0.3}, grad_of=(0, 1))
    labels = np.array([0, 4, 2, 2, 1, 3])
    check("multi_margin_loss", [X1, labels], r)
    s_w, t_w = pair(rand(22, (5,)), False)
    kw = {**r, "p": 2, "margin": 0.7}
    check(
        "multi_margin_loss",
        [X1, labels],
        ours=lambda x, y: F.multi_margin_loss(x, y, weight=s_w, **kw),
        theirs=lambda x, y: TF.multi_margin_loss(x, y, weight=t_w, **kw),
    )
    check("multi_margin_loss", [X1[0], np.array(3)], r)
    multilabel = np.array([[3, 0, -1, 1, 4]] * 3 + [[-1, 0, 1, 2, 3]] + [[4, 3, 2, 1, 0]] * 2)
    check("multilabel_margin_loss", [X1, multilabel], r)
    check("multilabel_margin_loss", [X1[0], multilabel[0]], r)
    targets = (rand(23, (6, 5)) > 0).astype(np.float64)
    check("multilabel_soft_margin_loss", [X1, targets, rand(24, (5,))], r)
    a, p, n = X1, X2, rand(25, (6, 5))
    for kw in ({}, {"margin": 0.5, "p": 1, "swap": True}, {"p": 3, "eps": 1e-3}):
        check("triplet_margin_loss", [a, p, n], {**r, **kw}, grad_of=(0, 1, 2))
    check("triplet_margin_with_distance_loss", [a, p, n], {**r, "swap": True}, grad_of=(0, 1, 2))
    var = np.abs(rand(26, (6, 5))) + 0.1
    for v, kw in ((var, {"full": True}), (var[:, 0], {}), (var[:, :1], {"eps": 0.5})):
        check("gaussian_nll_loss", [X1, X2, v], {**r, **kw}, grad_of=(0, 1, 2))


def test_triplet_margin_with_distance_loss_takes_a_stride_distance_function():
    def cosine_distance(x, y):
        return 1 - F.cosine_similarity(x, y)

    def torch_cosine_distance(x, y):
        return 1 - TF.cosine_similarity(x, y)

    s, t = zip(*[pair(a) for a in (X1, X2, rand(27, (6, 5)))])
    got = F.triplet_margin_with_distance_loss(*s, distance_function=cosine_distance)
    want = TF.triplet_margin_with_distance_loss(*t, distance_function=torch_cosine_distance)
    assert close(got, want)


def test_bilinear_channel_shuffle_pdist_and_local_response_norm_match_pytorch():
    check(
        "bilinear",
        [rand(30, (4, 3)), rand(31, (4, 2)), rand(32, (5, 3, 2)), rand(33, (5,))],
        grad_of=(0, 1, 2, 3),
    )
    check("channel_shuffle", [rand(34, (2, 6, 3))], {"groups": 3})
    for p in (2.0, 1.0, 3.5):
        check("pdist", [rand(35, (5, 3))], {"p": p})
    for size in (1, 2, 3, 4):
        check("local_response_norm", [rand(36, (2, 5, 3, 2))], {"size": size, "k": 2.0})
        check("local_response_norm", [rand(37, (2, 5, 4))], {"size": size, "alpha": 0.1})


def test_dropouts_drop_whole_channels_and_are_the_identity_in_eval():
    x = stride.ones(8, 16, 3, 3)
    for fn in (F.dropout2d, F.feature_alpha_dropout):
        y = fn(x, 0.5, True).numpy()
        assert all(len(set(c.ravel().tolist())) == 1 for c in y.reshape(8 * 16, 9)), fn.__name__
        assert len(set(y[:, :, 0, 0].ravel().tolist())) == 2, fn.__name__
    assert set(F.dropout2d(x, 0.5, True).numpy().ravel().tolist()) == {0.0, 2.0}
    assert set(F.dropout3d(stride.ones(4, 8, 2, 2, 2), 0.25).numpy().ravel().tolist()) <= {
        0.0,
        float(np.float32(4 / 3)),
    }
    for fn in (F.dropout2d, F.dropout3d, F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5, training=False) is x
        assert F.alpha_dropout(x, 1.0, True).abs().sum().item() == 0.0


def test_alpha_dropout_keeps_a_standard_normal_s_mean_and_variance():
    stride.manual_seed(0)
    y = F.alpha_dropout(stride.randn(200000), 0.3, True)
    assert abs(y.mean().item()) < 0.02 and abs(y.var().item() - 1) < 0.03


def test_rrelu_is_leaky_relu_with_the_mean_slope_in_eval_and_random_in_training():
    check("rrelu", [rand(40, (4, 5))], {"lower": 0.1, "upper": 0.3})
    x = stride.tensor([-1.0] * 1000 + [2.0])
    y = F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert y[-1] == 2.0 and ((-y[:-1] >= 0.1) & (-y[:-1] <= 0.3)).all() and len(set(y[:-1])) > 1


MODULES = [
    ("NLLLoss", {"weight": CLASS_WEIGHT}, [np.log(np.full((5, 4), 0.25)) + LOGITS, LABELS]),
    ("CosineEmbeddingLoss", {"margin": 0.1}, [X1, X2, SIGNS]),
    ("MarginRankingLoss", {"margin": 0.2}, [X1[:, 0], X2[:, 0], SIGNS]),
    ("MultiMarginLoss", {"p": 2}, [X1, np.array([0, 4, 2, 2, 1, 3])]),
    ("MultiLabelMarginLoss", {}, [X1, np.array([[1, 2, -1, 0, 0]] * 6)]),
    ("MultiLabelSoftMarginLoss", {"reduction": "sum"}, [X1, (X2 > 0).astype(np.float64)]),
    ("TripletMarginLoss", {"margin": 0.4, "swap": True}, [X1, X2, rand(50, (6, 5))]),
    ("GaussianNLLLoss", {"full": True}, [X1, X2, np.abs(X1) + 0.1]),
    ("ChannelShuffle", {"groups": 2}, [rand(51, (2, 4, 3))]),
    ("LocalResponseNorm", {"size": 3}, [rand(52, (2, 4, 3))]),
]


@pytest.mark.parametrize("name,kwargs,arrays", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_pytorch_s(name, kwargs, arrays):
    def build(lib, tensor):
        return getattr(lib, name)(
            **{k: tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        )

    ours = build(nn, lambda a: pair(a, False)[0])
    theirs = build(torch.nn, lambda a: pair(a, False)[1])
    s, t = zip(*[pair(a, False) for a in arrays])
    assert close(ours(*s), theirs(*t)), name
    assert repr(ours) == repr(theirs), name


def test_bilinear_and_dropout_modules():
    layer = nn.Bilinear(3, 2, 4)
    assert layer.weight.shape == (4, 3, 2) and layer.bias.shape == (4,)
    assert layer(stride.randn(5, 3), stride.randn(5, 2)).shape == (5, 4)
    assert repr(layer) == repr(torch.nn.Bilinear(3, 2, 4))
    for name in ("Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        assert repr(getattr(nn, name)(0.3)) == repr(getattr(torch.nn, name)(0.3))
    x = stride.randn(2, 3, 4)
    assert nn.Dropout1d(0.5).eval()(x) is x
    assert repr(nn.RReLU(0.1, 0.2)) == repr(torch.nn.RReLU(0.1, 0.2))


COMPOSED = [
    "cross_entropy",
    "nll_loss",
    "embedding",
    "cosine_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "gaussian_nll_loss",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "rrelu",
    "local_response_norm",
    "embedding_bag",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


@pytest.mark.parametrize("name", COMPOSED)
def test_signatures_are_pytorch_s(name):
    """(linear, bilinear, channel_shuffle and pdist are builtins in torch,
    without a signature to compare.)"""

    def params(fn):
        return [(p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()]

    assert params(getattr(F, name)) == params(getattr(TF, name))


def test_errors_name_the_function_and_the_argument():
    x, labels = stride.randn(3, 4), stride.tensor([0, 1, 2])
    with pytest.raises(TypeError, match="cross_entropy.*target.*shape"):
        F.cross_entropy(x, stride.randn(3, 5))
    with pytest.raises(ValueError, match="cross_entropy.*label_smoothing"):
        F.cross_entropy(x, labels, label_smoothing=1.5)
    with pytest.raises(ValueError, match="cross_entropy.*reduction"):
        F.cross_entropy(x, labels, stride.ones(4), reduction="avg")
    with pytest.raises(ValueError, match="nll_loss.*weight"):
        F.nll_loss(x, labels, stride.ones(3))
    with pytest.raises(ValueError, match="embedding.*padding_idx"):
        F.embedding(labels, x, padding_idx=3)
    with pytest.raises(ValueError, match="rms_norm.*normalized_shape"):
        F.rms_norm(x, (2, 4))
    with pytest.raises(ValueError, match="multi_margin_loss.*p"):
        F.multi_margin_loss(x, labels, p=3)
    with pytest.raises(ValueError, match="gaussian_nll_loss.*var"):
        F.gaussian_nll_loss(x, x, stride.ones(2))
    with pytest.raises(ValueError, match="gaussian_nll_loss.*var.*negative"):
        F.gaussian_nll_loss(x, x, -stride.ones(3, 4))
    with pytest.raises(ValueError, match="triplet_margin_with_distance_loss.*margin"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=0.0)
    with pytest.raises(TypeError, match="margin_ranking_loss.*input2"):
        F.margin_ranking_loss(x, 1.0, x)
    with pytest.raises(ValueError, match="dropout2d.*dims"):
        F.dropout2d(x)
    with pytest.raises(ValueError, match="alpha_dropout.*p"):
        F.alpha_dropout(x, 1.5)
    with pytest.raises(NotImplementedError, match="dropout2d.*inplace"):
        F.dropout2d(stride.ones(1, 2, 2, 2), inplace=True)
    with pytest.raises(ValueError, match="channel_shuffle.*groups"):
        F.channel_shuffle(stride.ones(1, 4, 2), 3)
    with pytest.raises(RuntimeError, match="pdist.*input"):
        F.pdist(stride.ones(3))
    with pytest.raises(RuntimeError, match="bilinear.*weight"):
        F.bilinear(x, x, stride.ones(2, 3, 4))
    with pytest.raises(ValueError, match="local_response_norm.*input"):
        F.local_response_norm(x, 2)


def test_legacy_size_average_and_reduce_decide_the_reduction_with_a_warning():
    x, labels = stride.randn(3, 4), stride.tensor([0, 1, 2])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        summed = F.nll_loss(x, labels, stride.ones(4), size_average=False)
    assert np.isclose(summed.item(), F.nll_loss(x, labels, reduction="sum").item())
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.margin_ranking_loss(x[0], x[1], x[2].sign(), reduce=False).shape == (4,)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_pytorch(mode):
    weight = rand(60, (6, 3))
    ids_2d = np.array([[0, 2, 2], [5, 1, 0]])
    ids_1d, offsets = np.array([1, 2, 4, 4, 0, 3, 5]), np.array([0, 2, 2, 5])
    s_off, t_off = pair(offsets)
    s_psw, t_psw = pair(rand(61, (7,)), False)
    forms = [
        ([ids_2d], {}),
        ([ids_2d], {"padding_idx": 2}),
        ([ids_1d], {"offsets": (s_off, t_off)}),
        ([ids_1d], {"offsets": (s_off, t_off), "include_last_offset": True, "padding_idx": -2}),
    ]
    if mode == "sum":
        forms.append(([ids_1d], {"offsets": (s_off, t_off), "per_sample_weights": (s_psw, t_psw)}))
    for arrays, kw in forms:
        ours_kw = {k: v[0] if isinstance(v, tuple) else v for k, v in kw.items()}
        theirs_kw = {k: v[1] if isinstance(v, tuple) else v for k, v in kw.items()}
        check(
            "embedding_bag",
            arrays + [weight],
            grad_of=(1,),
            ours=lambda i, w, kw=ours_kw: F.embedding_bag(i, w, mode=mode, **kw),
            theirs=lambda i, w, kw=theirs_kw: TF.embedding_bag(i, w, mode=mode, **kw),
        )


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool_inverts_max_pool_on_its_maxima(dims):
    shape = {1: (2, 3, 7), 2: (2, 3, 5, 6), 3: (2, 3, 5, 4, 6)}[dims]
    pooled_t, indices_t = getattr(TF, f"max_pool{dims}d")(
        torch.tensor(rand(62, shape)), 2, return_indices=True
    )
    indices = pair(indices_t.numpy())[0]
    for kw in ({}, {"output_size": shape[-dims:]}, {"output_size": shape}):
        check(
            f"max_unpool{dims}d",
            [pooled_t.numpy()],
            ours=lambda x, kw=kw: getattr(F, f"max_unpool{dims}d")(x, indices, 2, **kw),
            theirs=lambda x, kw=kw: getattr(TF, f"max_unpool{dims}d")(x, indices_t, 2, **kw),
        )
    with pytest.raises(ValueError, match=f"max_unpool{dims}d.*indices"):
        getattr(F, f"max_unpool{dims}d")(pair(pooled_t.numpy())[0], indices * 100, 2)


def test_embedding_bag_errors_name_the_argument():
    w = stride.randn(4, 2)
    with pytest.raises(ValueError, match="embedding_bag.*mode"):
        F.embedding_bag(stride.tensor([[0, 1]]), w, mode="min")
    with pytest.raises(ValueError, match="embedding_bag.*offsets"):
        F.embedding_bag(stride.tensor([0, 1]), w)
    with pytest.raises(NotImplementedError, match="embedding_bag.*per_sample_weights"):
        F.embedding_bag(stride.tensor([[0, 1]]), w, per_sample_weights=stride.ones(1, 2))


def test_embedding_bag_and_max_unpool_modules_match_pytorch_s():
    ours, theirs = nn.EmbeddingBag(5, 3, mode="sum", padding_idx=1), None
    theirs = torch.nn.EmbeddingBag(5, 3, mode="sum", padding_idx=1)
    assert repr(ours) == repr(theirs) and ours.weight[1].tolist() == [0.0, 0.0, 0.0]
    weight = pair(rand(70, (5, 3)), False)
    ours = nn.EmbeddingBag(5, 3, mode="max", _weight=weight[0])
    theirs = torch.nn.EmbeddingBag(5, 3, mode="max", _weight=weight[1])
    ids, offsets = pair(np.array([0, 4, 2, 2, 3])), pair(np.array([0, 3]))
    assert close(ours(ids[0], offsets[0]), theirs(ids[1], offsets[1]))
    assert repr(nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))
    x, i = TF.max_pool1d(torch.tensor(rand(71, (1, 2, 6))), 2, return_indices=True)
    got = nn.MaxUnpool1d(2)(pair(x.numpy())[0], pair(i.numpy())[0])
    assert close(got, torch.nn.MaxUnpool1d(2)(x, i))
