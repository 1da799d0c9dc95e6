"""torch.special: the special functions (CPU only; src/core/op_list.h's
STRIDE_SPECIAL_* lists), and PyTorch's aliases in this module of ops that
stride has under other names."""

from . import _stride
from ._stride.special import (  # noqa: F401  (the special functions, re-exported)
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    entr,
    erfcx,
    hermite_polynomial_h,
    hermite_polynomial_he,
    i0e,
    i1,
    i1e,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    ndtr,
    ndtri,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
    spherical_bessel_j0,
    xlog1py,
    zeta,
)

# PyTorch's aliases of ops of torch.*.
digamma = _stride.digamma
psi = _stride.digamma
gammaln = _stride.lgamma
polygamma = _stride.polygamma
gammainc = _stride.igamma
gammaincc = _stride.igammac
multigammaln = _stride.mvlgamma
erf = _stride.erf
erfc = _stride.erfc
erfinv = _stride.erfinv
expit = _stride.sigmoid
exp2 = _stride.exp2
expm1 = _stride.expm1
log1p = _stride.log1p
i0 = _stride.i0
sinc = _stride.sinc
logit = _stride.logit
xlogy = _stride.xlogy
softmax = _stride.softmax
log_softmax = _stride.log_softmax
logsumexp = _stride.logsumexp


def round(input, *, decimals=0):  # noqa: A001  (torch.special.round's name)
    """Each element of input rounded to the nearest integer, halves to even."""
    if decimals != 0:
        raise NotImplementedError(
            "special.round: decimals= is not supported; stride rounds to integers. "
            "Hint: scale by 10**decimals, round, and scale back."
        )
    return _stride.round(input)
