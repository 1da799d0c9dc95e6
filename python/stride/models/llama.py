"""Llama as transformers' LlamaForCausalLM: the same module tree and names
(model.layers[5].self_attn.q_proj, ...), so its checkpoints load as they
are and hooks, named_parameters and state_dict see what they see in
transformers; the layers run on stride's fused kernels (RMSNorm, RoPE,
SwiGLU, attention).
"""

import math

import stride

from .. import nn
from ..nn import functional as F
from ._pretrained import KVCache, PreTrainedCausalLM, additive_mask, attend, decoder_output


class LlamaConfig:
    """The fields of a Llama config.json that shape the model, with
    transformers' defaults."""

    def __init__(self, **fields):
        self.vocab_size = fields.get("vocab_size", 32000)
        self.hidden_size = fields.get("hidden_size", 4096)
        self.intermediate_size = fields.get("intermediate_size", 11008)
        self.num_hidden_layers = fields.get("num_hidden_layers", 32)
        self.num_attention_heads = fields.get("num_attention_heads", 32)
        self.num_key_value_heads = fields.get("num_key_value_heads") or self.num_attention_heads
        self.head_dim = fields.get("head_dim") or self.hidden_size // self.num_attention_heads
        self.hidden_act = fields.get("hidden_act", "silu")
        self.rms_norm_eps = fields.get("rms_norm_eps", 1e-6)
        self.max_position_embeddings = fields.get("max_position_embeddings", 2048)
        self.tie_word_embeddings = fields.get("tie_word_embeddings", False)
        self.attention_bias = fields.get("attention_bias", False)
        self.mlp_bias = fields.get("mlp_bias", False)
        self.bos_token_id = fields.get("bos_token_id", 1)
        self.eos_token_id = fields.get("eos_token_id", 2)
        self.pad_token_id = fields.get("pad_token_id")
        # transformers 4 writes rope_theta and rope_scaling; 5 one
        # rope_parameters object holding both.
        rope = dict(fields.get("rope_parameters") or fields.get("rope_scaling") or {})
        self.rope_theta = rope.get("rope_theta", fields.get("rope_theta", 10000.0))
        self.rope_scaling = rope
        if self.hidden_act != "silu":
            raise ValueError(
                f"[LlamaConfig] hidden_act {self.hidden_act!r} is not supported: stride's Llama "
                "runs SwiGLU with silu, as every Llama checkpoint does."
            )
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"[LlamaConfig] num_attention_heads ({self.num_attention_heads}) must be a "
                f"multiple of num_key_value_heads ({self.num_key_value_heads})."
            )

    @classmethod
    def from_dict(cls, fields):
        return cls(**fields)


def rope_inverse_frequencies(config):
    """The rotary frequencies of each pair of a head's dims, in float32 as
    transformers computes them: the default schedule, "linear" (divided by
    factor) or "llama3" (Llama 3.1's bands around the original context)."""
    dim = config.head_dim
    exponents = stride.arange(0, dim, 2, dtype=stride.int64).float() / dim
    inv_freq = 1.0 / (config.rope_theta**exponents)
    kind = config.rope_scaling.get("rope_type", config.rope_scaling.get("type", "default"))
    if kind == "default":
        return inv_freq
    factor = config.rope_scaling["factor"]
    if kind == "linear":
        return inv_freq / factor
    if kind == "llama3":
        low = config.rope_scaling["low_freq_factor"]
        high = config.rope_scaling["high_freq_factor"]
        context = config.rope_scaling["original_max_position_embeddings"]
        wavelength = 2 * math.pi / inv_freq
        scaled = stride.where(wavelength > context / low, inv_freq / factor, inv_freq)
        smooth = (context / wavelength - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelength < context / high) & ~(wavelength > context / low)
        return stride.where(medium, smoothed, scaled)
    raise ValueError(
        f"[LlamaConfig] rope_type {kind!r} is not supported; stride's Llama takes the default "
        "schedule, 'linear' and 'llama3'."
    )


class LlamaRotaryEmbedding(nn.Module):
    """The cos and sin tables of positions [past, past + T), (T, head_dim / 2),
    or of each row's position_ids (batch, T), (batch, T, head_dim / 2)."""

    def __init__(self, config):
        super().__init__()
        self.register_buffer("inv_freq", rope_inverse_frequencies(config), persistent=False)

    def forward(self, past, length, position_ids=None):
        if position_ids is None:
            positions = stride.arange(past, past + length, dtype=stride.int64)
        else:
            positions = position_ids
        angles = positions.float().unsqueeze(-1) * self.inv_freq
        return angles.cos(), angles.sin()


def _rotate_rows(x, cos, sin):
    """Hugging Face's rotate-half RoPE of x (batch, heads, T, D) by each
    row's own angles, cos and sin (batch, T, D / 2): composed, where the
    fused kernel takes one table for every row."""
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    first, second = x.chunk(2, dim=-1)
    return stride.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)


def _rotate(x, cos, sin):
    if cos.ndim == 3:
        return _rotate_rows(x, cos, sin)
    return F.rotary_embedding(x, cos, sin, convention="half_split")


class LlamaAttention(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = config.head_dim
        width, bias = config.hidden_size, config.attention_bias
        self.q_proj = nn.Linear(width, self.heads * self.head_dim, bias=bias, device="meta")
        self.k_proj = nn.Linear(width, self.kv_heads * self.head_dim, bias=bias, device="meta")
        self.v_proj = nn.Linear(width, self.kv_heads * self.head_dim, bias=bias, device="meta")
        self.o_proj = nn.Linear(self.heads * self.head_dim, width, bias=bias, device="meta")

    def forward(self, hidden_states, rope, mask, cache, output_attentions):
        batch, length, _ = hidden_states.shape

        def heads(projection, count):
            return (
                projection(hidden_states).view(batch, length, count, self.head_dim).transpose(1, 2)
            )

        cos, sin = rope
        q = _rotate(heads(self.q_proj, self.heads), cos, sin)
        k = _rotate(heads(self.k_proj, self.kv_heads), cos, sin)
        v = heads(self.v_proj, self.kv_heads)
        if cache is not None:
            k, v = cache.update(k, v, self.layer_idx)
        out, probabilities = attend(q, k, v, mask, output_attentions)
        out = out.transpose(1, 2).reshape(batch, length, self.heads * self.head_dim)
        return self.o_proj(out), probabilities


class LlamaMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        width, inner, bias = config.hidden_size, config.intermediate_size, config.mlp_bias
        self.gate_proj = nn.Linear(width, inner, bias=bias, device="meta")
        self.up_proj = nn.Linear(width, inner, bias=bias, device="meta")
        self.down_proj = nn.Linear(inner, width, bias=bias, device="meta")

    def forward(self, x):
        return self.down_proj(F.swiglu(self.gate_proj(x), self.up_proj(x)))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.self_attn = LlamaAttention(config, layer_idx)
        self.mlp = LlamaMLP(config)
        eps = config.rms_norm_eps
        self.input_layernorm = nn.RMSNorm(config.hidden_size, eps=eps, device="meta")
        self.post_attention_layernorm = nn.RMSNorm(config.hidden_size, eps=eps, device="meta")

    def forward(self, hidden_states, rope, mask, cache, output_attentions):
        attended, probabilities = self.self_attn(
            self.input_layernorm(hidden_states), rope, mask, cache, output_attentions
        )
        hidden_states = hidden_states + attended
        hidden_states = hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))
        return hidden_states, probabilities


class LlamaModel(nn.Module):
    """The decoder without its head (transformers' LlamaModel)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, device="meta")
        self.layers = nn.ModuleList(
            LlamaDecoderLayer(config, i) for i in range(config.num_hidden_layers)
        )
        self.norm = nn.RMSNorm(config.hidden_size, eps=config.rms_norm_eps, device="meta")
        self.rotary_emb = LlamaRotaryEmbedding(config)

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
            cache = KVCache(self.config.num_hidden_layers)
        past = 0 if cache is None else cache.get_seq_length()
        hidden_states = self.embed_tokens(input_ids)
        length = input_ids.shape[1]
        rope = self.rotary_emb(past, length, position_ids)
        mask = None
        if attention_mask is not None:
            mask = additive_mask(attention_mask, length, past, hidden_states.dtype)
        return decoder_output(
            self.layers,
            hidden_states,
            self.norm,
            cache,
            use_cache,
            output_attentions,
            output_hidden_states,
            rope,
            mask,
            cache,
        )

    def get_input_embeddings(self):
        return self.embed_tokens


class LlamaForCausalLM(PreTrainedCausalLM):
    """transformers' LlamaForCausalLM: model (LlamaModel) and lm_head."""

    config_class = LlamaConfig
    base_model_prefix = "model"

    def __init__(self, config):
        super().__init__(config)
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False, device="meta")
