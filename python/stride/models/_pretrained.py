"""What every pretrained model shares: loading a Hugging Face directory
(config.json and safetensors weights, mapped rather than read), the KV cache,
the attention masks, and generate().
"""

import json
import math
import os

import stride

from .. import nn
from ..nn import functional as F
from ._outputs import BaseModelOutputWithPast, CausalLMOutputWithPast

# Checkpoint entries that hold no weight of ours: GPT-2's causal-mask
# buffers, which older checkpoints saved, and rotary tables some Llama
# checkpoints saved; each model derives them itself.
_DERIVED_SUFFIXES = (
    ".attn.bias",
    ".attn.masked_bias",
    ".rotary_emb.inv_freq",
    # BERT's position ids, and its decoder's bias, which is the head's bias.
    "embeddings.position_ids",
    "predictions.decoder.bias",
)


def read_config(path):
    """The parsed config.json of a Hugging Face model directory."""
    file = os.path.join(os.fspath(path), "config.json")
    if not os.path.isfile(file):
        raise FileNotFoundError(
            f"[from_pretrained] {os.fspath(path)!r} has no config.json: pass the directory that "
            "transformers' save_pretrained wrote (config.json beside model.safetensors)."
        )
    with open(file, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"[from_pretrained] {file} is not valid JSON ({e}).") from None


def weight_files(path):
    """The safetensors files of a model directory: model.safetensors, or the
    shards its model.safetensors.index.json names."""
    path = os.fspath(path)
    single = os.path.join(path, "model.safetensors")
    if os.path.isfile(single):
        return [single]
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.isfile(index):
        with open(index, encoding="utf-8") as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        return [os.path.join(path, shard) for shard in shards]
    raise FileNotFoundError(
        f"[from_pretrained] {path!r} has no model.safetensors (nor a sharded index): stride reads "
        "Hugging Face weights in safetensors; save them with save_pretrained(..., "
        "safe_serialization=True)."
    )


def load_weights(path):
    """name -> tensor for every weight of the directory, each a view of its
    mapped file (private, copy-on-write pages: nothing is read until used)."""
    weights = {}
    for file in weight_files(path):
        weights.update(stride.load(file, mmap=True))
    return weights


class KVCache:
    """Each layer's keys and values so far, (batch, kv_heads, length,
    head_dim), as transformers' DynamicCache: past_key_values in and out."""

    def __init__(self, layers):
        self.keys = [None] * layers
        self.values = [None] * layers

    def get_seq_length(self, layer=0):
        keys = self.keys[layer]
        return 0 if keys is None else keys.shape[-2]

    def update(self, key, value, layer):
        """Appends this step's key and value to the layer's; returns all."""
        if self.keys[layer] is not None:
            key = stride.cat([self.keys[layer], key], dim=-2)
            value = stride.cat([self.values[layer], value], dim=-2)
        self.keys[layer], self.values[layer] = key, value
        return key, value


def additive_mask(attention_mask, queries, past, dtype, causal=True):
    """The additive mask of scores (batch, 1, queries, past + queries): 0
    where a query may attend, the dtype's lowest value where not (a later
    key when causal, a padding key where attention_mask is 0), as
    transformers' eager attention adds it."""
    keys = past + queries
    lowest = stride.finfo(dtype).min
    mask = stride.zeros(1, 1, queries, keys, dtype=dtype)
    if causal:
        rows = stride.arange(queries).reshape(queries, 1) + past
        later = stride.arange(keys).reshape(1, keys) > rows
        mask = mask.masked_fill(later.reshape(1, 1, queries, keys), lowest)
    if attention_mask is not None:
        if attention_mask.ndim != 2 or attention_mask.shape[-1] != keys:
            raise ValueError(
                f"attention_mask must be (batch, {keys}): 1 for tokens to attend to, 0 for "
                f"padding, over the past and new tokens; got {tuple(attention_mask.shape)}."
            )
        padding = (attention_mask == 0).reshape(attention_mask.shape[0], 1, 1, keys)
        mask = mask.masked_fill(padding, lowest)
    return mask


def attend(q, k, v, mask, want_probabilities, scale=None, causal=True):
    """Attention of q (B, H, T, D) to k, v (B, KV, S, D), KV dividing H,
    causal (the queries the last T of the S positions) or not: stride's
    fused kernel when nothing asks for the probabilities and no mask is
    given, else softmax(q k^T * scale + mask) written out, as
    transformers' eager attention (mask None: the causal mask, or none).
    Returns (output, probabilities or None)."""
    queries, keys = q.shape[-2], k.shape[-2]
    if not want_probabilities and mask is None:
        out = F.scaled_dot_product_attention(
            q,
            k,
            v,
            is_causal=causal and queries > 1,
            scale=scale,
            enable_gqa=True,
            alignment="bottom_right" if causal else None,
        )
        return out, None
    groups = q.shape[1] // k.shape[1]
    if groups > 1:
        k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q.matmul(k.transpose(-1, -2)) * scale
    if mask is None and causal:
        mask = additive_mask(None, queries, keys - queries, scores.dtype)
    probabilities = F.softmax(scores if mask is None else scores + mask, dim=-1)
    return probabilities.matmul(v), probabilities


def run_layers(layers, hidden_states, final_norm, output_attentions, output_hidden_states, *args):
    """hidden_states through each layer (layer(hidden_states, *args,
    output_attentions) -> (hidden_states, probabilities)), then final_norm:
    the last hidden state, and on request every layer's input (the
    embeddings first), the normalised output, and every layer's attention
    probabilities, as transformers collects them."""
    all_hidden, all_attentions = [], []
    for layer in layers:
        if output_hidden_states:
            all_hidden.append(hidden_states)
        hidden_states, probabilities = layer(hidden_states, *args, output_attentions)
        if output_attentions:
            all_attentions.append(probabilities)
    if final_norm is not None:
        hidden_states = final_norm(hidden_states)
    if output_hidden_states:
        all_hidden.append(hidden_states)
    return (
        hidden_states,
        tuple(all_hidden) if output_hidden_states else None,
        tuple(all_attentions) if output_attentions else None,
    )


def decoder_output(
    layers,
    hidden_states,
    final_norm,
    cache,
    use_cache,
    output_attentions,
    output_hidden_states,
    *args,
):
    """run_layers of a decoder, as transformers' BaseModelOutputWithPast."""
    hidden_states, all_hidden, all_attentions = run_layers(
        layers, hidden_states, final_norm, output_attentions, output_hidden_states, *args
    )
    return BaseModelOutputWithPast(
        last_hidden_state=hidden_states,
        past_key_values=cache if use_cache else None,
        hidden_states=all_hidden,
        attentions=all_attentions,
    )


def causal_lm_loss(logits, labels):
    """Mean cross entropy of each position's logits against the next
    label, labels of -100 left out, as transformers' causal LM loss."""
    vocab = logits.shape[-1]
    shifted = logits[:, :-1, :].reshape(-1, vocab)
    targets = labels[:, 1:].reshape(-1)
    return F.cross_entropy(shifted.float(), targets, ignore_index=-100)


class PreTrainedModel(nn.Module):
    """A model of a Hugging Face architecture, loaded by from_pretrained."""

    config_class = None

    def __init__(self, config):
        super().__init__()
        self.config = config

    @classmethod
    def from_pretrained(cls, path, *, dtype=None):
        """The model of a Hugging Face directory (config.json and its
        safetensors weights), in eval mode. The weights stay mapped from their
        files, private copy-on-write pages: loading reads nothing until a
        layer uses it, and training changes this process's copy only. dtype
        (e.g. stride.bfloat16) converts floating-point weights; by default
        they keep the checkpoint's dtype, 16-bit ones widened to float32."""
        config = cls.config_class.from_dict(read_config(path))
        weights = cls._checkpoint_weights(load_weights(path))
        model = cls._build(config, weights.keys())
        model._assign_weights(model._own_names(weights), dtype, os.fspath(path))
        model.tie_weights()
        return model.eval()

    @classmethod
    def _checkpoint_weights(cls, weights):
        """A checkpoint's weights under today's names, without those this
        architecture never reads (as transformers renames and skips them
        on loading)."""
        return weights

    @classmethod
    def _build(cls, config, weight_names):
        """The model for this config, whose checkpoint holds weight_names."""
        return cls(config)

    def _own_names(self, weights):
        """The checkpoint's weights under this model's names: a head model's
        checkpoint read by its base model (BertModel from a
        BertForMaskedLM's: "bert." dropped, the head's weights left out, as
        transformers leaves them), and the reverse."""
        prefix = getattr(self, "base_model_prefix", None)
        if prefix is None:
            return weights
        if prefix not in self._modules and any(n.startswith(prefix + ".") for n in weights):
            start = len(prefix) + 1
            return {n[start:]: t for n, t in weights.items() if n.startswith(prefix + ".")}
        own = dict(self.named_parameters())
        renamed = {}
        for name, tensor in weights.items():
            if name not in own and name.startswith(prefix + ".") and name[len(prefix) + 1 :] in own:
                name = name[len(prefix) + 1 :]
            elif name not in own and f"{prefix}.{name}" in own:
                name = f"{prefix}.{name}"
            renamed[name] = tensor
        return renamed

    def tie_weights(self):
        """Shares the input embedding with the output head when the config
        ties them (its checkpoint then stores the embedding only)."""

    def _assign_weights(self, weights, dtype, where):
        own = dict(self.named_parameters())
        tied = self._tied_parameter_names()
        missing = [name for name in own if name not in weights and name not in tied]
        unexpected = [
            name for name in weights if name not in own and not name.endswith(_DERIVED_SUFFIXES)
        ]
        problems = []
        if missing:
            problems.append(f"missing {missing}")
        if unexpected:
            problems.append(f"unexpected {unexpected}")
        for name, tensor in weights.items():
            if name in own and tuple(tensor.shape) != tuple(own[name].shape):
                problems.append(
                    f"{name} is {tuple(tensor.shape)} in the checkpoint but "
                    f"{tuple(own[name].shape)} in the config's model"
                )
        if problems:
            raise ValueError(
                f"[from_pretrained] the weights in {where!r} do not fit its config.json's "
                f"{type(self).__name__}: " + "; ".join(problems) + "."
            )
        for name, tensor in weights.items():
            if name not in own:
                continue
            if dtype is not None and tensor.is_floating_point():
                tensor = tensor.to(dtype)
            elif tensor.dtype in (stride.bfloat16, stride.float16):
                tensor = tensor.float()
            module_name, _, leaf = name.rpartition(".")
            setattr(self.get_submodule(module_name), leaf, nn.Parameter(tensor))

    def _tied_parameter_names(self):
        return set()

    def generate(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} has no generate(): it is no causal language model.")


class PreTrainedCausalLM(PreTrainedModel):
    """A decoder (the submodule named base_model_prefix) and lm_head, the
    head tied to the decoder's token embedding when the config says so."""

    base_model_prefix = None

    def _decoder(self):
        return getattr(self, self.base_model_prefix)

    def tie_weights(self):
        if self.config.tie_word_embeddings:
            self.lm_head.weight = self._decoder().get_input_embeddings().weight

    def _tied_parameter_names(self):
        return {"lm_head.weight"} if self.config.tie_word_embeddings else set()

    def forward(
        self,
        input_ids,
        attention_mask=None,
        labels=None,
        past_key_values=None,
        use_cache=False,
        output_attentions=False,
        output_hidden_states=False,
        return_dict=True,
        position_ids=None,
        logits_to_keep=0,
    ):
        """logits (batch, T, vocab); loss when labels (batch, T) are given
        (-100: left out); past_key_values, a KVCache to extend (use_cache
        makes one); position_ids (batch, T), each token's position (default:
        past, past + 1, ...; a left-padded row's count from its first real
        token); on request every layer's attention probabilities (batch,
        heads, T, past + T) and hidden states (the embeddings, each layer's
        output, the last one normalised). logits_to_keep, as transformers':
        an int N > 0 computes the logits of the last N positions only (a
        prompt's prefill needs the last), 0 all of them; a 1-d tensor, the
        positions it lists."""
        outputs = self._decoder()(
            input_ids,
            attention_mask=attention_mask,
            past_key_values=past_key_values,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
            position_ids=position_ids,
        )
        hidden = outputs.last_hidden_state
        if isinstance(logits_to_keep, int):
            hidden = hidden[:, -logits_to_keep:, :] if logits_to_keep > 0 else hidden
        else:
            hidden = hidden.index_select(1, logits_to_keep)
        logits = self.lm_head(hidden)
        loss = None if labels is None else causal_lm_loss(logits, labels)
        result = CausalLMOutputWithPast(
            loss=loss,
            logits=logits,
            past_key_values=outputs.past_key_values,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )
        return result if return_dict else result.to_tuple()

    def generate(
        self,
        input_ids,
        max_new_tokens=20,
        do_sample=False,
        temperature=1.0,
        top_k=50,
        top_p=1.0,
        eos_token_id=None,
        generator=None,
        attention_mask=None,
        **unused,
    ):
        """input_ids (batch, T) followed by up to max_new_tokens tokens each,
        as transformers' generate: greedy by default; with do_sample, drawn
        from the logits divided by temperature, kept to the top_k most likely
        and to the smallest set whose probability reaches top_p. Decodes
        with the KV cache, one token per forward after the prompt. A row
        that draws eos_token_id (default: the config's) stops, and is padded
        with it while the others go on. Prompts of different lengths are
        padded on the left, with zeros in attention_mask there (a tokenizer
        with padding_side "left"): each row then counts its positions from
        its first token, and no token attends to the padding, as in
        transformers. pad_token_id and the other transformers arguments that
        do not change the tokens are accepted and ignored."""
        mask, positions = _prompt_positions(input_ids, attention_mask)
        eos = self.config.eos_token_id if eos_token_id is None else eos_token_id
        eos = set(eos if isinstance(eos, (list, tuple)) else [] if eos is None else [eos])
        was_training = self.training
        self.eval()
        tokens = input_ids
        finished = stride.zeros(input_ids.shape[0], dtype=stride.bool)
        with stride.no_grad():
            cache = KVCache(self.config.num_hidden_layers)
            step_input = input_ids
            for _ in range(max_new_tokens):
                logits = self(
                    step_input,
                    attention_mask=mask,
                    position_ids=positions,
                    past_key_values=cache,
                    use_cache=True,
                    logits_to_keep=1,
                ).logits[:, -1, :]
                next_ids = _next_tokens(
                    logits.float(), do_sample, temperature, top_k, top_p, generator
                )
                if eos:
                    pad = next(iter(eos))
                    next_ids = stride.where(finished, stride.full_like(next_ids, pad), next_ids)
                    for token in eos:
                        finished = finished | (next_ids == token)
                tokens = stride.cat([tokens, next_ids.reshape(-1, 1)], dim=1)
                step_input = next_ids.reshape(-1, 1)
                if mask is not None:
                    mask = stride.cat([mask, stride.ones_like(mask[:, :1])], dim=1)
                    positions = positions[:, -1:] + 1
                if eos and bool(finished.all()):
                    break
        self.train(was_training)
        return tokens


def _prompt_positions(input_ids, attention_mask):
    """The attention mask and position ids generate() runs the prompt with:
    none for unpadded prompts; for left-padded ones the mask, and each
    token's position counted from its row's first real token (1 on the
    padding, which nothing attends to), as transformers' generate makes
    them."""
    if attention_mask is None or bool((attention_mask != 0).all()):
        return None, None
    if tuple(attention_mask.shape) != tuple(input_ids.shape):
        raise ValueError(
            f"generate(): attention_mask must have input_ids' shape {tuple(input_ids.shape)}; "
            f"got {tuple(attention_mask.shape)}."
        )
    mask = (attention_mask != 0).to(stride.int64)
    if not bool((mask[:, -1] == 1).all()):
        raise ValueError(
            "generate(): a prompt is padded on the right (attention_mask ends in 0), so its "
            "next token would follow the padding; pad on the left (tokenizer.padding_side = "
            '"left").'
        )
    positions = (mask.cumsum(dim=-1) - 1).masked_fill(mask == 0, 1)
    return mask, positions


def _next_tokens(logits, do_sample, temperature, top_k, top_p, generator):
    """Each row's next token: the argmax, or a draw from the filtered logits."""
    if not do_sample:
        return logits.argmax(dim=-1)
    if temperature <= 0:
        raise ValueError(f"generate(): temperature must be positive; got {temperature}.")
    logits = logits / temperature
    lowest = float("-inf")
    if top_k and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, lowest)
    if top_p < 1.0:
        sorted_logits, order = logits.sort(dim=-1, descending=True)
        sorted_probabilities = F.softmax(sorted_logits, dim=-1)
        # A token goes when the tokens before it already reach top_p; the
        # most likely one always stays.
        drop_sorted = (sorted_probabilities.cumsum(dim=-1) - sorted_probabilities) >= top_p
        drop = stride.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, lowest)
    probabilities = F.softmax(logits, dim=-1)
    return stride.multinomial(probabilities, 1, generator=generator).reshape(-1)
