"""torch.nn.functional.multi_head_attention_forward with PyTorch's Python
signature over the C++ op (src/nn/multi_head_attention.cpp);
nn.MultiheadAttention calls it."""

from .._stride import _nn


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """Multi-head attention of query (L, N, E) over key and value (S, N, E)
    ((L, E), (S, E) unbatched): (output (L, N, E), weights (N, L, S) averaged
    over heads, (N, heads, L, S) otherwise, or None without need_weights)."""
    return _nn.multi_head_attention_forward(
        query,
        key,
        value,
        embed_dim_to_check,
        num_heads,
        in_proj_weight,
        in_proj_bias,
        bias_k,
        bias_v,
        add_zero_attn,
        dropout_p,
        out_proj_weight,
        out_proj_bias,
        training,
        key_padding_mask,
        need_weights,
        attn_mask,
        use_separate_proj_weight,
        q_proj_weight,
        k_proj_weight,
        v_proj_weight,
        static_k,
        static_v,
        average_attn_weights,
        is_causal,
    )
