"""GPT-2 as transformers' GPT2LMHeadModel: the same module tree and names
(transformer.h[5].attn.c_attn, ...), its Conv1D layers' (in, out) weights
as the checkpoints store them, and the head tied to the token embedding.
"""

import stride

from .. import nn
from ..nn import functional as F
from ._pretrained import KVCache, PreTrainedCausalLM, additive_mask, attend, decoder_output


class GPT2Config:
    """The fields of a GPT-2 config.json that shape the model, with
    transformers' defaults."""

    def __init__(self, **fields):
        self.vocab_size = fields.get("vocab_size", 50257)
        self.n_positions = fields.get("n_positions", 1024)
        self.n_embd = fields.get("n_embd", 768)
        self.n_layer = fields.get("n_layer", 12)
        self.n_head = fields.get("n_head", 12)
        self.n_inner = fields.get("n_inner") or 4 * self.n_embd
        self.layer_norm_epsilon = fields.get("layer_norm_epsilon", 1e-5)
        self.activation_function = fields.get("activation_function", "gelu_new")
        self.scale_attn_weights = fields.get("scale_attn_weights", True)
        self.scale_attn_by_inverse_layer_idx = fields.get("scale_attn_by_inverse_layer_idx", False)
        self.tie_word_embeddings = fields.get("tie_word_embeddings", True)
        self.bos_token_id = fields.get("bos_token_id", 50256)
        self.eos_token_id = fields.get("eos_token_id", 50256)
        self.pad_token_id = fields.get("pad_token_id")
        if self.activation_function not in _ACTIVATIONS:
            raise ValueError(
                f"[GPT2Config] activation_function {self.activation_function!r} is not supported; "
                f"stride's GPT-2 takes {sorted(_ACTIVATIONS)}."
            )
        if self.n_embd % self.n_head:
            raise ValueError(
                f"[GPT2Config] n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})."
            )

    # transformers' generic names, which generate() and the loaders read.
    @property
    def num_hidden_layers(self):
        return self.n_layer

    @property
    def hidden_size(self):
        return self.n_embd

    @classmethod
    def from_dict(cls, fields):
        return cls(**fields)


_ACTIVATIONS = {
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu": F.gelu,
    "relu": F.relu,
}


class Conv1D(nn.Module):
    """transformers' Conv1D: a linear layer whose weight is stored (in, out),
    y = x @ weight + bias."""

    def __init__(self, outputs, inputs):
        super().__init__()
        self.nf = outputs
        self.weight = nn.Parameter(stride.empty(inputs, outputs, device="meta"))
        self.bias = nn.Parameter(stride.empty(outputs, device="meta"))

    def forward(self, x):
        return F.linear(x, self.weight.t(), self.bias)


class GPT2Attention(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.heads = config.n_head
        self.head_dim = config.n_embd // config.n_head
        self.scale = 1.0
        if config.scale_attn_weights:
            self.scale /= self.head_dim**0.5
        if config.scale_attn_by_inverse_layer_idx:
            self.scale /= float(layer_idx + 1)
        self.c_attn = Conv1D(3 * config.n_embd, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, config.n_embd)

    def forward(self, hidden_states, mask, cache, output_attentions):
        batch, length, width = hidden_states.shape
        q, k, v = (
            t.view(batch, length, self.heads, self.head_dim).transpose(1, 2)
            for t in self.c_attn(hidden_states).split(width, dim=-1)
        )
        if cache is not None:
            k, v = cache.update(k, v, self.layer_idx)
        out, probabilities = attend(q, k, v, mask, output_attentions, scale=self.scale)
        out = out.transpose(1, 2).reshape(batch, length, width)
        return self.c_proj(out), probabilities


class GPT2MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = Conv1D(config.n_inner, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, config.n_inner)
        self.act = _ACTIVATIONS[config.activation_function]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        eps = config.layer_norm_epsilon
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=eps, device="meta")
        self.attn = GPT2Attention(config, layer_idx)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=eps, device="meta")
        self.mlp = GPT2MLP(config)

    def forward(self, hidden_states, mask, cache, output_attentions):
        attended, probabilities = self.attn(
            self.ln_1(hidden_states), mask, cache, output_attentions
        )
        hidden_states = hidden_states + attended
        hidden_states = hidden_states + self.mlp(self.ln_2(hidden_states))
        return hidden_states, probabilities


class GPT2Model(nn.Module):
    """The decoder without its head (transformers' GPT2Model)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd, device="meta")
        self.wpe = nn.Embedding(config.n_positions, config.n_embd, device="meta")
        self.h = nn.ModuleList(GPT2Block(config, i) for i in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon, device="meta")

    def forward(
        self,
        input_ids,
        attention_mask=None,
        past_key_values=None,
        use_cache=False,
        output_attentions=False,
        output_hidden_states=False,
        position_ids=None,
    ):
        cache = past_key_values
        if cache is None and use_cache:
            cache = KVCache(self.config.n_layer)
        past = 0 if cache is None else cache.get_seq_length()
        length = input_ids.shape[1]
        if past + length > self.config.n_positions:
            raise ValueError(
                f"GPT-2 takes at most n_positions = {self.config.n_positions} tokens; got "
                f"{past + length}."
            )
        positions = position_ids
        if positions is None:
            positions = stride.arange(past, past + length, dtype=stride.int64)
        hidden_states = self.wte(input_ids) + self.wpe(positions)
        mask = None
        if attention_mask is not None:
            mask = additive_mask(attention_mask, length, past, hidden_states.dtype)
        return decoder_output(
            self.h,
            hidden_states,
            self.ln_f,
            cache,
            use_cache,
            output_attentions,
            output_hidden_states,
            mask,
            cache,
        )

    def get_input_embeddings(self):
        return self.wte


class GPT2LMHeadModel(PreTrainedCausalLM):
    """transformers' GPT2LMHeadModel: transformer (GPT2Model) and lm_head."""

    config_class = GPT2Config
    base_model_prefix = "transformer"

    def __init__(self, config):
        super().__init__(config)
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False, device="meta")
