"""stride.models: Hugging Face checkpoints as stride.nn modules.

    import stride
    model = stride.models.from_pretrained("path/to/llama")   # or AutoModelForCausalLM
    out = model(input_ids, labels=input_ids, output_attentions=True,
                output_hidden_states=True)
    out.logits, out.loss, out.attentions[0].shape, out.hidden_states[-1]
    model.model.layers[5].register_forward_hook(hook)        # transformers' names
    model.generate(input_ids, max_new_tokens=20)

A directory that transformers' save_pretrained wrote (config.json and
safetensors weights) loads as the module tree transformers builds, with its
names, so forward hooks, named_parameters, state_dict and to() work on every
submodule as they do there. The modules are Python over stride's ops, on its
fused kernels. Supported: Llama (LlamaForCausalLM: grouped-query attention,
tied or untied head, the default, "linear" and "llama3" RoPE schedules),
GPT-2 (GPT2LMHeadModel) and BERT (BertModel with its pooler,
BertForMaskedLM; token types and padding masks).
"""

from ._outputs import BaseModelOutputWithPast, CausalLMOutputWithPast, ModelOutput
from ._pretrained import KVCache, PreTrainedModel, read_config
from .bert import (
    BaseModelOutputWithPooling,
    BertConfig,
    BertForMaskedLM,
    BertModel,
    MaskedLMOutput,
)
from .gpt2 import GPT2Config, GPT2LMHeadModel, GPT2Model
from .llama import LlamaConfig, LlamaForCausalLM, LlamaModel

# config.json's architectures[0] -> the class, and model_type -> the class
# for a config that names no architecture.
_ARCHITECTURES = {
    cls.__name__: cls for cls in (LlamaForCausalLM, GPT2LMHeadModel, BertForMaskedLM, BertModel)
}
_MODEL_TYPES = {"llama": LlamaForCausalLM, "gpt2": GPT2LMHeadModel, "bert": BertModel}


def _model_class(path, config):
    for name in config.get("architectures") or []:
        if name in _ARCHITECTURES:
            return _ARCHITECTURES[name]
    model_type = config.get("model_type")
    if model_type in _MODEL_TYPES:
        return _MODEL_TYPES[model_type]
    raise ValueError(
        f"[from_pretrained] {str(path)!r} holds a {model_type!r} model "
        f"({config.get('architectures')}); stride.models loads {sorted(_ARCHITECTURES)}."
    )


def from_pretrained(path, *, dtype=None):
    """The model of a Hugging Face directory, of the class its config.json
    names (architectures, else model_type); PreTrainedModel.from_pretrained
    says how it loads."""
    return _model_class(path, read_config(path)).from_pretrained(path, dtype=dtype)


class AutoModelForCausalLM:
    """transformers' AutoModelForCausalLM: from_pretrained picks the class
    from config.json (Llama, GPT-2)."""

    @staticmethod
    def from_pretrained(path, *, dtype=None, **unused):
        model = from_pretrained(path, dtype=dtype)
        if not hasattr(model, "lm_head"):
            raise ValueError(
                f"[AutoModelForCausalLM] {str(path)!r} holds a {type(model).__name__}, which is "
                "no causal language model; load it with AutoModelForMaskedLM or from_pretrained."
            )
        return model


class AutoModelForMaskedLM:
    """transformers' AutoModelForMaskedLM: BERT's masked-token model."""

    @staticmethod
    def from_pretrained(path, *, dtype=None, **unused):
        config = read_config(path)
        if config.get("model_type") != "bert":
            raise ValueError(
                f"[AutoModelForMaskedLM] {str(path)!r} holds a {config.get('model_type')!r} "
                "model; stride's masked language model is BERT's."
            )
        return BertForMaskedLM.from_pretrained(path, dtype=dtype)


__all__ = [
    "AutoModelForCausalLM",
    "AutoModelForMaskedLM",
    "BaseModelOutputWithPast",
    "BaseModelOutputWithPooling",
    "BertConfig",
    "BertForMaskedLM",
    "BertModel",
    "CausalLMOutputWithPast",
    "GPT2Config",
    "GPT2LMHeadModel",
    "GPT2Model",
    "KVCache",
    "LlamaConfig",
    "LlamaForCausalLM",
    "LlamaModel",
    "MaskedLMOutput",
    "ModelOutput",
    "PreTrainedModel",
    "from_pretrained",
]
