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
tied or untied head, the default, "linear" and "llama3" RoPE schedules) and
GPT-2 (GPT2LMHeadModel).
"""

from ._outputs import BaseModelOutputWithPast, CausalLMOutputWithPast, ModelOutput
from ._pretrained import KVCache, PreTrainedModel, read_config
from .gpt2 import GPT2Config, GPT2LMHeadModel, GPT2Model
from .llama import LlamaConfig, LlamaForCausalLM, LlamaModel

# config.json's model_type -> the causal language model class.
_CAUSAL_LM = {"llama": LlamaForCausalLM, "gpt2": GPT2LMHeadModel}


def from_pretrained(path, *, dtype=None):
    """The model of a Hugging Face directory, chosen by its config.json's
    model_type (PreTrainedModel.from_pretrained says how it loads)."""
    config = read_config(path)
    model_type = config.get("model_type")
    if model_type not in _CAUSAL_LM:
        raise ValueError(
            f"[from_pretrained] {path!r} holds a {model_type!r} model; stride.models loads "
            f"{sorted(_CAUSAL_LM)}."
        )
    return _CAUSAL_LM[model_type].from_pretrained(path, dtype=dtype)


class AutoModelForCausalLM:
    """transformers' AutoModelForCausalLM: from_pretrained picks the class
    from config.json."""

    @staticmethod
    def from_pretrained(path, *, dtype=None, **unused):
        return from_pretrained(path, dtype=dtype)


__all__ = [
    "AutoModelForCausalLM",
    "BaseModelOutputWithPast",
    "CausalLMOutputWithPast",
    "GPT2Config",
    "GPT2LMHeadModel",
    "GPT2Model",
    "KVCache",
    "LlamaConfig",
    "LlamaForCausalLM",
    "LlamaModel",
    "ModelOutput",
    "PreTrainedModel",
    "from_pretrained",
]
