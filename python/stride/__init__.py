"""stride from Python: PyTorch's core rebuilt small, fast and correct in C++.

    import stride
    x = stride.randn(4, 3, requires_grad=True)
    y = (x @ x.T).relu().sum()
    y.backward()
    x.grad            # the same numbers as torch on the same inputs

The names are PyTorch's (`stride.tensor`, `stride.zeros`, `Tensor.view`,
`stride.no_grad`, ...), so code written for torch runs with its imports
changed. Tensors share memory with NumPy (`t.numpy()`, `stride.from_numpy`)
and with any DLPack framework (`stride.from_dlpack`).
"""

from . import (  # noqa: F401
    _stride,
    amp,
    autograd,  # noqa: F401
    backends,
    cpu,
    cuda,  # noqa: F401
    doctor,
    fft,
    linalg,
    masked,  # noqa: F401
    models,  # noqa: F401
    nn,
    optim,
    plot,  # noqa: F401
    profiler,  # noqa: F401
    random,
    return_types,  # noqa: F401
    signal,
    special,  # noqa: F401
    tokenizers,  # noqa: F401
    utils,  # noqa: F401
)
from ._aten import *  # noqa: F403  (native_layer_norm, torch.ops.aten, ...)
from ._compile import compile  # noqa: F401  (torch.compile; stride is eager)
from ._memory_format import (  # noqa: F401
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ._settings import (  # noqa: F401
    are_deterministic_algorithms_enabled,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from ._stride import (  # noqa: F401  (the public API, re-exported)  # noqa: F401
    Generator,
    Tensor,
    allclose,
    arange,
    as_tensor,
    bfloat16,
    bool,
    cat,
    complex64,
    complex128,
    default_generator,
    device,
    dtype,
    empty,
    eye,
    float16,
    float32,
    float64,
    from_dlpack,
    from_numpy,
    full,
    full_like,
    int32,
    int64,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    stack,
    tensor,
    uint8,
    where,
    zeros,
    zeros_like,
)
from ._type_info import finfo, iinfo  # noqa: F401
from ._view_copies import *  # noqa: F403  (expand_copy, permute_copy, ...)
from .amp import autocast  # noqa: F401
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .nn.rnn import (  # noqa: F401  (torch.lstm, torch.gru_cell, ...)
    gru,
    gru_cell,
    lstm,
    lstm_cell,
    rnn_relu,
    rnn_relu_cell,
    rnn_tanh,
    rnn_tanh_cell,
)
from .random import get_rng_state, initial_seed, seed, set_rng_state  # noqa: F401
from .serialization import load, save  # noqa: F401

# PyTorch's aliases of the dtypes.
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
cfloat = complex64
cdouble = complex128

# CMakeLists.txt's project version, compiled into the extension (pip's
# metadata says the same: pyproject.toml reads it from there too).
__version__ = _stride.__version__


def show_config():
    """Prints how this stride was built and what it runs on: its version,
    the CPU kernels' instruction-set level (STRIDE_CPU_CAPABILITY forces a
    lower one), the kernel threads and whether a CUDA device is usable."""
    print(f"stride {__version__}")
    print(f"  CPU capability: {_stride._cpu_capability_summary()}")
    print(f"  threads: {_stride.get_num_threads()}")
    print(f"  CUDA: {'available' if cuda.is_available() else 'not available'}")


def _export_ops():
    """Every op the extension binds as a function (stride.exp, stride.matmul,
    ...) becomes an attribute of this module."""
    namespace = globals()
    for name in dir(_stride):
        if not name.startswith("_") and name not in namespace:
            namespace[name] = getattr(_stride, name)


_export_ops()
del _export_ops


def _export_linalg_functions():
    """The torch.* linear algebra functions (stride.det, stride.svd, ...)
    and their Tensor methods, written in stride/linalg.py."""
    namespace = globals()
    for name, function in linalg.TORCH_FUNCTIONS.items():
        function.__name__ = name
        namespace[name] = function
        setattr(Tensor, name, function)


_export_linalg_functions()
del _export_linalg_functions
