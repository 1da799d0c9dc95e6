"""Linear algebra with torch.linalg's names, signatures and named-tuple
results: factorizations through LAPACK (LU, Cholesky, QR, eigh, SVD) and the
ops written with them, batched over leading dims, in float32 and float64,
with gradients.

    import stride
    A = stride.randn(3, 3, dtype=stride.float64)
    x = stride.linalg.solve(A, stride.ones(3, dtype=stride.float64))
    sign, logabsdet = stride.linalg.slogdet(A)
"""

import functools
import inspect

from . import return_types
from ._stride import Tensor, _linalg, float64, tensor, zeros

__all__ = [
    "cholesky",
    "cholesky_ex",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "householder_product",
    "inv",
    "inv_ex",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_factor_ex",
    "lu_solve",
    "matrix_exp",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "solve_ex",
    "solve_triangular",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "vander",
    "vecdot",
    "vector_norm",
]


class LinAlgError(RuntimeError):
    """A matrix the op cannot work on (singular, not positive-definite), as
    torch.linalg.LinAlgError."""


class _NonTensorArgument(TypeError):
    """A non-tensor where a function takes a tensor, named after the public
    function the user called (the outermost of nested calls)."""


def _non_tensor_argument(fn, args, kwargs):
    public = fn.__name__.lstrip("_")
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except TypeError:
        bound = dict(enumerate((*args, *kwargs.values())))
    given = ", ".join(
        f"{name}={type(value).__name__}"
        for name, value in bound.items()
        if not isinstance(value, Tensor)
    )
    return _NonTensorArgument(
        f"{public}() takes stride Tensors for its tensor arguments; got {given}. "
        "Hint: stride.as_tensor converts an ndarray or a list."
    )


def _raising_linalg_error(fn):
    """Runs fn, turning stride's ValueError for a failing matrix into
    LinAlgError (which is a RuntimeError, as PyTorch's), and the extension's
    refusal of a non-tensor argument (which names its private entry point)
    into a TypeError naming fn and the arguments that are not tensors."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as error:
            if isinstance(error, _NonTensorArgument) or "incompatible function arguments" in str(
                error
            ):
                raise _non_tensor_argument(fn, args, kwargs) from None
            raise
        except ValueError as error:
            message = str(error)
            if "singular" in message or "positive-definite" in message or "converge" in message:
                raise LinAlgError(message) from None
            raise

    return call


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"stride.linalg.{name}: out= is not supported; use the result.")


@_raising_linalg_error
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """The LU factorization with partial pivoting, A = P L U, compactly:
    (LU, pivots, info), info > 0 where U is singular."""
    _no_out("lu_factor_ex", out)
    return return_types.linalg_lu_factor_ex(*_linalg.lu_factor_ex(A, pivot, check_errors))


@_raising_linalg_error
def lu_factor(A, *, pivot=True, out=None):
    """The LU factorization with partial pivoting, compactly: (LU, pivots).
    Raises LinAlgError where U is singular."""
    _no_out("lu_factor", out)
    LU, pivots, info = _linalg.lu_factor_ex(A, pivot, False)
    if info.numel() and bool(info.gt(0).any()):
        raise LinAlgError(
            "linalg.lu_factor: U has a zero on its diagonal, and using it in lu_solve would "
            "divide by zero. Use linalg.lu or linalg.lu_factor_ex to factor it anyway."
        )
    return return_types.linalg_lu_factor(LU, pivots)


@_raising_linalg_error
def lu(A, *, pivot=True, out=None):
    """The LU factorization with partial pivoting: (P, L, U) with A = P L U."""
    _no_out("lu", out)
    return return_types.linalg_lu(*_linalg.lu(A, pivot))


@_raising_linalg_error
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (X A = B when left=False; A^T when adjoint), A given by
    lu_factor's (LU, pivots)."""
    _no_out("lu_solve", out)
    return _linalg.lu_solve(LU, pivots, B, left, adjoint)


@_raising_linalg_error
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info): the solution of A X = B (X A = B when left=False) and
    info > 0 where A is singular."""
    _no_out("solve_ex", out)
    return return_types.linalg_solve_ex(*_linalg.solve_ex(A, B, left, check_errors))


@_raising_linalg_error
def solve(A, B, *, left=True, out=None):
    """The solution X of A X = B (X A = B when left=False); B may be a vector.
    Raises LinAlgError where A is singular."""
    _no_out("solve", out)
    return _linalg.solve_ex(A, B, left, True)[0]


@_raising_linalg_error
def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info), info > 0 where A is singular."""
    _no_out("inv_ex", out)
    return return_types.linalg_inv_ex(*_linalg.inv_ex(A, check_errors))


@_raising_linalg_error
def inv(A, *, out=None):
    """The inverse of each square matrix. Raises LinAlgError where one is
    singular."""
    _no_out("inv", out)
    return _linalg.inv_ex(A, True)[0]


@_raising_linalg_error
def det(A, *, out=None):
    """The determinant of each square matrix (0 for a singular one)."""
    _no_out("det", out)
    return _linalg.det(A)


@_raising_linalg_error
def slogdet(A, *, out=None):
    """(sign, logabsdet): the sign of the determinant and the log of its
    absolute value (0 and -inf for a singular matrix)."""
    _no_out("slogdet", out)
    return return_types.linalg_slogdet(*_linalg.slogdet(A))


@_raising_linalg_error
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): the Cholesky factor of each symmetric positive-definite
    matrix (U = L^T when upper), info > 0 where one is not."""
    _no_out("cholesky_ex", out)
    return return_types.linalg_cholesky_ex(*_linalg.cholesky_ex(A, upper, check_errors))


@_raising_linalg_error
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L (A = L L^T), or U = L^T when upper. Raises
    LinAlgError where A is not positive-definite."""
    _no_out("cholesky", out)
    return _linalg.cholesky_ex(A, upper, True)[0]


@_raising_linalg_error
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (X A = B when left=False), A upper or lower triangular
    (its diagonal taken as ones when unitriangular)."""
    _no_out("solve_triangular", out)
    return _linalg.solve_triangular(A, B, upper, left, unitriangular)


@_raising_linalg_error
def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q R, Q orthonormal: mode 'reduced', 'complete' or 'r'
    (Q empty)."""
    _no_out("qr", out)
    return return_types.linalg_qr(*_linalg.qr(A, mode))


@_raising_linalg_error
def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric
    matrix, reading its lower (UPLO='L') or upper triangle."""
    _no_out("eigh", out)
    return return_types.linalg_eigh(*_linalg.eigh(A, UPLO))


@_raising_linalg_error
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of each symmetric matrix, ascending."""
    _no_out("eigvalsh", out)
    return _linalg.eigh(A, UPLO)[0]


def _check_svd_driver(name, driver):
    if driver is not None:
        raise NotImplementedError(
            f"stride.linalg.{name}: driver= chooses a CUDA solver; leave it None on the CPU."
        )


@_raising_linalg_error
def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending; U and Vh square when
    full_matrices."""
    _no_out("svd", out)
    _check_svd_driver("svd", driver)
    return return_types.linalg_svd(*_linalg.svd(A, full_matrices))


@_raising_linalg_error
def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix, descending."""
    _no_out("svdvals", out)
    _check_svd_driver("svdvals", driver)
    return _linalg.svd(A, False)[1]


@_raising_linalg_error
def householder_product(A, tau, *, out=None):
    """The first n columns of the product of the Householder reflectors
    I - tau_i v_i v_i^T stored in A's columns (LAPACK's orgqr)."""
    _no_out("householder_product", out)
    return _linalg.householder_product(A, tau)


def _cast(x, dtype):
    return x if dtype is None else x.to(dtype)


@_raising_linalg_error
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector norm of ord (inf, -inf, 0 or p) over dim (every dim when
    None)."""
    _no_out("vector_norm", out)
    return _linalg.vector_norm(x, float(ord), dim, keepdim, dtype)


@_raising_linalg_error
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of ord ('fro', 'nuc', inf, -inf, 1, -1, 2, -2) over
    the two dims."""
    _no_out("matrix_norm", out)
    A = _cast(A, dtype)
    return _linalg.matrix_norm(A, ord if isinstance(ord, str) else float(ord), list(dim), keepdim)


@_raising_linalg_error
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm, or a matrix norm where ord is a string, dim has two
    dims or A is 2-d with a numeric ord; with neither ord nor dim, the 2-norm
    of the flattened input."""
    _no_out("norm", out)
    A = _cast(A, dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(ord, str):
        if dim is None and A.dim() != 2:
            raise RuntimeError(f"linalg.norm: ord='{ord}' needs a 2-d input or two dims.")
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim)
    if dim is not None and len(dim) == 2 and ord is not None:
        return matrix_norm(A, ord, dim, keepdim)
    if dim is None and ord is not None and A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro", dim, keepdim)
    if ord is not None and dim is None and A.dim() != 1:
        raise RuntimeError(
            "linalg.norm: a numeric ord needs a 1-d or 2-d input unless dim is given."
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)


@_raising_linalg_error
def cond(A, p=None, *, out=None):
    """The condition number of each matrix in the norm p (None: the 2-norm)."""
    _no_out("cond", out)
    return _linalg.cond(A, p if p is None or isinstance(p, str) else float(p))


@_raising_linalg_error
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values (eigenvalue magnitudes when hermitian)
    above max(atol, rtol * the largest), int64."""
    _no_out("matrix_rank", out)
    if tol is not None:
        atol, rtol = tol, 0.0
    return _linalg.matrix_rank(A, _optional_tolerance(atol), _optional_tolerance(rtol), hermitian)


def _optional_tolerance(value):
    """A tolerance as a tensor (a number becomes a 0-d float64 one)."""
    if value is None or isinstance(value, Tensor):
        return value
    return tensor(float(value), dtype=float64)


@_raising_linalg_error
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse, dropping singular values at most
    max(atol, rtol * the largest)."""
    _no_out("pinv", out)
    if rcond is not None:
        rtol = rcond
    return _linalg.pinv(A, _optional_tolerance(atol), _optional_tolerance(rtol), hermitian)


@_raising_linalg_error
def matrix_power(A, n, *, out=None):
    """A to the integer power n (the inverse's for negative n)."""
    _no_out("matrix_power", out)
    return _linalg.matrix_power(A, n)


@_raising_linalg_error
def matrix_exp(A):
    """The matrix exponential of each square matrix."""
    return _linalg.matrix_exp(A)


@_raising_linalg_error
def cross(input, other, *, dim=-1, out=None):  # noqa: A002
    """The cross product of 3-element vectors along dim, broadcasting."""
    _no_out("cross", out)
    return _linalg.cross(input, other, dim)


@_raising_linalg_error
def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of x and y along dim, broadcasting."""
    _no_out("vecdot", out)
    return _linalg.vecdot(x, y, dim)


@_raising_linalg_error
def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first and last may be
    vectors)."""
    _no_out("multi_dot", out)
    return _linalg.multi_dot(list(tensors))


@_raising_linalg_error
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of a batch of matrices, a view."""
    return _linalg.diagonal(A, offset, dim1, dim2)


@_raising_linalg_error
def vander(x, *, N=None):
    """The Vandermonde matrix: columns x^0, x^1, ..., x^(N-1)."""
    return _linalg.vander(x, N)


@_raising_linalg_error
def tensorinv(A, ind=2, *, out=None):
    """The inverse of A seen as a linear map from its first ind dims to the
    rest."""
    _no_out("tensorinv", out)
    return _linalg.tensorinv(A, ind)


@_raising_linalg_error
def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B."""
    _no_out("tensorsolve", out)
    return _linalg.tensorsolve(A, B, None if dims is None else list(dims))


@_raising_linalg_error
def lstsq(A, B, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||, each
    empty where the driver (CPU: gelsy by default, gelsd, gelss, gels) does
    not compute it."""
    return return_types.linalg_lstsq(*_linalg.lstsq(A, B, rcond, driver or "gelsy"))


# --- torch.* functions of the same kind (stride.det, ...) --------------------


@_raising_linalg_error
def _det(input):  # noqa: A002
    """The determinant of each square matrix (torch.det)."""
    return _linalg.det(input)


@_raising_linalg_error
def _logdet(input):  # noqa: A002
    """log det: NaN where the determinant is negative, -inf where zero."""
    return _linalg.logdet(input)


@_raising_linalg_error
def _slogdet(input):  # noqa: A002
    """(sign, logabsdet) of the determinant (torch.slogdet)."""
    return return_types.slogdet(*_linalg.slogdet(input))


@_raising_linalg_error
def _inverse(input, *, out=None):  # noqa: A002
    """The inverse of each square matrix (torch.inverse)."""
    _no_out("inverse", out)
    return _linalg.inv_ex(input, True)[0]


@_raising_linalg_error
def _cholesky(input, upper=False, *, out=None):  # noqa: A002
    """The Cholesky factor (torch.cholesky)."""
    _no_out("cholesky", out)
    return _linalg.cholesky_ex(input, upper, True)[0]


@_raising_linalg_error
def _cholesky_solve(input, input2, upper=False, *, out=None):  # noqa: A002
    """X with A X = input, A given by its Cholesky factor input2."""
    _no_out("cholesky_solve", out)
    return _linalg.cholesky_solve(input, input2, upper)


@_raising_linalg_error
def _cholesky_inverse(input, upper=False, *, out=None):  # noqa: A002
    """A^-1 from A's Cholesky factor."""
    _no_out("cholesky_inverse", out)
    return _linalg.cholesky_inverse(input, upper)


@_raising_linalg_error
def _lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) of lu_factor's (LU, pivots) (torch.lu_unpack)."""
    _no_out("lu_unpack", out)
    if not (unpack_data and unpack_pivots):
        raise NotImplementedError("stride.lu_unpack: unpack_data and unpack_pivots must be True.")
    return return_types.lu_unpack(*_linalg.lu_unpack(LU_data, LU_pivots))


@_raising_linalg_error
def _lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), and the infos when get_infos, without raising
    on a singular matrix."""
    _no_out("lu", out)
    LU, pivots, infos = _linalg.lu_factor_ex(A, pivot, False)
    return (LU, pivots, infos) if get_infos else (LU, pivots)


@_raising_linalg_error
def _lu_solve(b, LU_data, LU_pivots, *, out=None):
    """X with A X = b, A given by lu_factor (torch.lu_solve)."""
    _no_out("lu_solve", out)
    return _linalg.lu_solve(LU_data, LU_pivots, b, True, False)


@_raising_linalg_error
def _triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(solution, cloned_coefficient) of A X = b, A triangular."""
    _no_out("triangular_solve", out)
    return return_types.triangular_solve(
        *_linalg.triangular_solve(b, A, upper, transpose, unitriangular)
    )


@_raising_linalg_error
def _svd(input, some=True, compute_uv=True, *, out=None):  # noqa: A002
    """(U, S, V) with input = U diag(S) V^T (torch.svd: V, not Vh); zero U
    and V when not compute_uv."""
    _no_out("svd", out)
    if not compute_uv:
        # PyTorch's zero-filled square U and V, whatever some says.
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        S = _linalg.svd(input, False)[1]
        options = {"dtype": input.dtype}
        return return_types.svd(zeros(*batch, m, m, **options), S, zeros(*batch, n, n, **options))
    U, S, Vh = _linalg.svd(input, not some)
    return return_types.svd(U, S, Vh.transpose(-2, -1))


@_raising_linalg_error
def _pinverse(input, rcond=1e-15):  # noqa: A002
    """The pseudo-inverse (torch.pinverse)."""
    return _linalg.pinv(input, None, _optional_tolerance(rcond), False)


@_raising_linalg_error
def _cross(input, other, dim=None, *, out=None):  # noqa: A002
    """The cross product along dim (the first of size 3 when None)."""
    _no_out("cross", out)
    if dim is None:
        dim = next((d for d, size in enumerate(input.shape) if size == 3), -1)
    return _linalg.cross(input, other, dim)


@_raising_linalg_error
def _norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002
    """torch.norm: the Frobenius norm ('fro'), the nuclear norm ('nuc') or
    the p-norm over dim (every element when None)."""
    _no_out("norm", out)
    input = _cast(input, dtype)  # noqa: A001
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    if p == "fro" or p is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(input, "fro", dim, keepdim)
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm: p must be 'fro', 'nuc' or a number; got '{p}'.")
    return vector_norm(input, p, dim, keepdim)


TORCH_FUNCTIONS = {
    "det": _det,
    "logdet": _logdet,
    "slogdet": _slogdet,
    "inverse": _inverse,
    "cholesky": _cholesky,
    "cholesky_solve": _cholesky_solve,
    "cholesky_inverse": _cholesky_inverse,
    "lu": _lu,
    "lu_unpack": _lu_unpack,
    "lu_solve": _lu_solve,
    "triangular_solve": _triangular_solve,
    "svd": _svd,
    "pinverse": _pinverse,
    "matrix_exp": matrix_exp,
    "matrix_power": matrix_power,
    "cross": _cross,
    "norm": _norm,
}
