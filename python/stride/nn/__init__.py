"""stride.nn: modules, parameters and the functional ops (torch.nn).

    class Block(stride.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = stride.nn.RMSNorm(d)
            self.ffn = stride.nn.Sequential(stride.nn.Linear(d, 4 * d), stride.nn.SiLU(),
                                            stride.nn.Linear(4 * d, d))

        def forward(self, x):
            return x + self.ffn(self.norm(x))

Modules are Python classes, as PyTorch's are; the work runs in stride's C++
ops (stride.nn.functional).
"""

from . import functional, init, utils  # noqa: F401
from ._linear_cross_entropy import LinearCrossEntropyOptions  # noqa: F401
from .composite_layers import (  # noqa: F401
    AlphaDropout,
    Bilinear,
    ChannelShuffle,
    CosineEmbeddingLoss,
    CosineSimilarity,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    EmbeddingBag,
    FeatureAlphaDropout,
    GaussianNLLLoss,
    LocalResponseNorm,
    MarginRankingLoss,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    PairwiseDistance,
    RReLU,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import (  # noqa: F401
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    BatchNorm2d,
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    Fold,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    PixelShuffle,
    PixelUnshuffle,
    Unfold,
    Upsample,
)
from .layers import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    BatchNorm1d,
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    HuberLoss,
    Identity,
    KLDivLoss,
    L1Loss,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSigmoid,
    Mish,
    MSELoss,
    PReLU,
    ReLU,
    ReLU6,
    RMSNorm,
    SiLU,
    SmoothL1Loss,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
    Unflatten,
)
from .module import Module, RemovableHandle  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .transformer import MultiheadAttention, TransformerEncoderLayer  # noqa: F401
