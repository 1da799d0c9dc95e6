"""BERT as transformers' BertModel and BertForMaskedLM: the same module tree
and names (bert.encoder.layer[5].attention.self.query, ...): absolute and
token-type embeddings, post-LayerNorm blocks, GELU, the pooler, and
attention masks for padded batches.
"""

import stride

from .. import nn
from ..nn import functional as F
from ._outputs import ModelOutput
from ._pretrained import PreTrainedModel, additive_mask, attend, run_layers


class BaseModelOutputWithPooling(ModelOutput):
    """An encoder's last hidden state, the pooled first token, and on
    request every layer's hidden state and attention probabilities."""

    _fields = ("last_hidden_state", "pooler_output", "hidden_states", "attentions")


class MaskedLMOutput(ModelOutput):
    """A masked language model's logits, its loss when given labels, and on
    request every layer's hidden state and attention probabilities."""

    _fields = ("loss", "logits", "hidden_states", "attentions")


class BertConfig:
    """The fields of a BERT config.json that shape the model, with
    transformers' defaults."""

    def __init__(self, **fields):
        self.vocab_size = fields.get("vocab_size", 30522)
        self.hidden_size = fields.get("hidden_size", 768)
        self.num_hidden_layers = fields.get("num_hidden_layers", 12)
        self.num_attention_heads = fields.get("num_attention_heads", 12)
        self.intermediate_size = fields.get("intermediate_size", 3072)
        self.hidden_act = fields.get("hidden_act", "gelu")
        self.max_position_embeddings = fields.get("max_position_embeddings", 512)
        self.type_vocab_size = fields.get("type_vocab_size", 2)
        self.layer_norm_eps = fields.get("layer_norm_eps", 1e-12)
        self.pad_token_id = fields.get("pad_token_id", 0)
        self.tie_word_embeddings = fields.get("tie_word_embeddings", True)
        self.position_embedding_type = fields.get("position_embedding_type", "absolute")
        self.is_decoder = fields.get("is_decoder", False)
        if self.hidden_act not in _ACTIVATIONS:
            raise ValueError(
                f"[BertConfig] hidden_act {self.hidden_act!r} is not supported; stride's BERT "
                f"takes {sorted(_ACTIVATIONS)}."
            )
        if self.position_embedding_type != "absolute" or self.is_decoder:
            raise ValueError(
                "[BertConfig] stride's BERT is the encoder with absolute positions; got "
                f"position_embedding_type {self.position_embedding_type!r}"
                + (" and is_decoder" if self.is_decoder else "")
                + "."
            )
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"[BertConfig] hidden_size ({self.hidden_size}) must be a multiple of "
                f"num_attention_heads ({self.num_attention_heads})."
            )
        self.eos_token_id = None

    @classmethod
    def from_dict(cls, fields):
        return cls(**fields)


_ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
}


# Google's original checkpoints, converted as they were (bert-base-uncased's
# model.safetensors among them), name LayerNorm's weight and bias gamma and
# beta; transformers renames them on loading.
_GOOGLE_NAMES = ((".LayerNorm.gamma", ".LayerNorm.weight"), (".LayerNorm.beta", ".LayerNorm.bias"))


def _today_names(weights):
    renamed = {}
    for name, tensor in weights.items():
        for old, new in _GOOGLE_NAMES:
            if name.endswith(old):
                name = name[: -len(old)] + new
        renamed[name] = tensor
    return renamed


def _linear(inputs, outputs):
    return nn.Linear(inputs, outputs, device="meta")


def _layer_norm(config):
    return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps, device="meta")


class BertEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        width = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, width, device="meta")
        self.position_embeddings = nn.Embedding(
            config.max_position_embeddings, width, device="meta"
        )
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, width, device="meta")
        self.LayerNorm = _layer_norm(config)
        self.max_positions = config.max_position_embeddings

    def forward(self, input_ids, token_type_ids):
        length = input_ids.shape[1]
        if length > self.max_positions:
            raise ValueError(
                f"BERT takes at most max_position_embeddings = {self.max_positions} tokens; got "
                f"{length}."
            )
        if token_type_ids is None:
            token_type_ids = stride.zeros_like(input_ids)
        positions = stride.arange(length, dtype=stride.int64)
        embedded = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(positions)
            + self.token_type_embeddings(token_type_ids)
        )
        return self.LayerNorm(embedded)


class BertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.query = _linear(config.hidden_size, config.hidden_size)
        self.key = _linear(config.hidden_size, config.hidden_size)
        self.value = _linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states, mask, output_attentions):
        batch, length, width = hidden_states.shape

        def heads(projection):
            return (
                projection(hidden_states)
                .view(batch, length, self.heads, self.head_dim)
                .transpose(1, 2)
            )

        out, probabilities = attend(
            heads(self.query),
            heads(self.key),
            heads(self.value),
            mask,
            output_attentions,
            causal=False,
        )
        return out.transpose(1, 2).reshape(batch, length, width), probabilities


class BertOutput(nn.Module):
    """LayerNorm(dense(x) + residual): how each half of a BERT layer ends,
    after attention (attention.output, from hidden_size) and after the
    feed-forward (output, from intermediate_size)."""

    def __init__(self, config, inputs):
        super().__init__()
        self.dense = _linear(inputs, config.hidden_size)
        self.LayerNorm = _layer_norm(config)

    def forward(self, hidden_states, residual):
        return self.LayerNorm(self.dense(hidden_states) + residual)


class BertAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertOutput(config, config.hidden_size)

    def forward(self, hidden_states, mask, output_attentions):
        attended, probabilities = self.self(hidden_states, mask, output_attentions)
        return self.output(attended, hidden_states), probabilities


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = _ACTIVATIONS[config.hidden_act]

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config, config.intermediate_size)

    def forward(self, hidden_states, mask, output_attentions):
        attended, probabilities = self.attention(hidden_states, mask, output_attentions)
        return self.output(self.intermediate(attended), attended), probabilities


class BertEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, hidden_states, mask, output_attentions, output_hidden_states):
        return run_layers(
            self.layer, hidden_states, None, output_attentions, output_hidden_states, mask
        )


class BertPooler(nn.Module):
    """tanh(dense(the first token's hidden state)): BERT's [CLS] summary."""

    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        return self.dense(hidden_states[:, 0]).tanh()


class BertModel(PreTrainedModel):
    """transformers' BertModel: embeddings, encoder and (by default) the
    pooler. Loaded from a checkpoint without a pooler (a BertForMaskedLM's),
    it has none, and pooler_output is None."""

    config_class = BertConfig
    base_model_prefix = "bert"

    def __init__(self, config, add_pooling_layer=True):
        super().__init__(config)
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None

    @classmethod
    def _checkpoint_weights(cls, weights):
        return _today_names(weights)

    @classmethod
    def _build(cls, config, weight_names):
        return cls(config, add_pooling_layer=any("pooler." in n for n in weight_names))

    def forward(
        self,
        input_ids,
        attention_mask=None,
        token_type_ids=None,
        output_attentions=False,
        output_hidden_states=False,
        return_dict=True,
    ):
        """input_ids (batch, T); attention_mask (batch, T), 0 at padding,
        which no token attends to; token_type_ids (batch, T), the segment of
        each token (default 0)."""
        hidden_states = self.embeddings(input_ids, token_type_ids)
        mask = None
        if attention_mask is not None:
            length = input_ids.shape[1]
            mask = additive_mask(attention_mask, length, 0, hidden_states.dtype, causal=False)
        hidden_states, all_hidden, all_attentions = self.encoder(
            hidden_states, mask, output_attentions, output_hidden_states
        )
        result = BaseModelOutputWithPooling(
            last_hidden_state=hidden_states,
            pooler_output=None if self.pooler is None else self.pooler(hidden_states),
            hidden_states=all_hidden,
            attentions=all_attentions,
        )
        return result if return_dict else result.to_tuple()


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = _linear(config.hidden_size, config.hidden_size)
        self.transform_act_fn = _ACTIVATIONS[config.hidden_act]
        self.LayerNorm = _layer_norm(config)

    def forward(self, hidden_states):
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))


class BertLMPredictionHead(nn.Module):
    """The transform, then the decoder to the vocabulary, whose weight is the
    word embedding's (tied) and whose bias is this module's `bias`."""

    def __init__(self, config):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False, device="meta")
        self.bias = nn.Parameter(stride.empty(config.vocab_size, device="meta"))

    def forward(self, hidden_states):
        return F.linear(self.transform(hidden_states), self.decoder.weight, self.bias)


class BertOnlyMLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)

    def forward(self, hidden_states):
        return self.predictions(hidden_states)


class BertForMaskedLM(PreTrainedModel):
    """transformers' BertForMaskedLM: bert (a BertModel without pooler) and
    cls, the masked-token head."""

    config_class = BertConfig
    base_model_prefix = "bert"

    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)

    @classmethod
    def _checkpoint_weights(cls, weights):
        """BertForPreTraining's checkpoints (bert-base-uncased's) also hold
        the pooler and the next-sentence head, which the masked LM does not
        compute: skipped, as transformers skips them."""
        return {
            name: tensor
            for name, tensor in _today_names(weights).items()
            if not name.startswith(("bert.pooler.", "cls.seq_relationship."))
        }

    def tie_weights(self):
        if self.config.tie_word_embeddings:
            self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def _tied_parameter_names(self):
        return {"cls.predictions.decoder.weight"} if self.config.tie_word_embeddings else set()

    def forward(
        self,
        input_ids,
        attention_mask=None,
        token_type_ids=None,
        labels=None,
        output_attentions=False,
        output_hidden_states=False,
        return_dict=True,
    ):
        """logits (batch, T, vocab) for every position; loss when labels
        (batch, T) are given: the mean cross entropy of the positions whose
        label is not -100 (the masked tokens)."""
        outputs = self.bert(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        logits = self.cls(outputs.last_hidden_state)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=-100
            )
        result = MaskedLMOutput(
            loss=loss,
            logits=logits,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )
        return result if return_dict else result.to_tuple()

    def generate(self, *args, **kwargs):
        raise TypeError(
            "BertForMaskedLM.generate(): BERT is an encoder: it fills in masked tokens in one "
            "forward (model(ids).logits at the [MASK] positions) and does not generate text "
            "left to right."
        )
