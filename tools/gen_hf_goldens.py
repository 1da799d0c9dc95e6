#!/usr/bin/env python3
"""Generates tests/golden/hf/: tiny GPT-2 and Llama models made by Hugging
Face `transformers` and its outputs on them, which tests/models/hf_test.cpp
recomputes with stride (models/hf/hf.h loads the directories).

    build-venv/bin/pip install -r tools/requirements-hf.txt
    build-venv/bin/python tools/gen_hf_goldens.py [--out DIR]

Writes, under DIR (default tests/golden/hf):
  gpt2_tiny/           save_pretrained of a random GPT2LMHeadModel (tied head),
                       with tests/golden/tokenizers/gpt2_style.json as its
                       tokenizer.json (tools/gen_tokenizer_goldens.py; the
                       vocabularies match: 1000 tokens)
  gpt2_tiny_sharded/   the same model saved in shards with their index
  gpt2_tiny_untied/    an untied variant
  gpt2_tiny_outputs.safetensors
      ids (2, 24), labels (2, 24) with -100 at the first position of row 1;
      for each model M (tied, untied): M/logits (2, 24, V), M/loss (), the
      attention probabilities M/attn.<layer> (2, H, 24, 24), the hidden
      states M/hidden.<i> (2, 24, 32) of the embeddings and each layer (the
      last after the final norm), and M/greedy (72,): the prompt ids[0, :8]
      and 64 greedily generated tokens.
  llama_tiny_gqa/      a random LlamaForCausalLM: 4 query heads sharing 2
                       key/value heads, untied head, with the same tokenizer
  llama_tiny_tied/     one key/value head for 4 query heads, tied head,
                       rope_theta 500000 (Llama 3's)
  llama_tiny_outputs.safetensors
      the same ids and labels, and the same outputs for M in (gqa, tied).

With transformers 5 (tools/requirements-hf5.txt), which writes RoPE settings
as a "rope_parameters" object instead of a top-level rope_theta, it writes
instead, beside the 4.x files above:
  llama5_tiny_default/ rope_theta 500000 in rope_parameters
  llama5_tiny_llama3/  Llama 3.1's rope_type "llama3" (factor 8, bands 1 and 4
                       around an original context of 512 within 2048, so
                       that of a head's four frequencies one is kept, one
                       interpolated between the bands and two divided)
  llama5_tiny_linear/  rope_type "linear", factor 4
  llama5_tiny_outputs.safetensors
      the same ids and labels, and the outputs for M in (default, llama3,
      linear).
  gpt2_5_tiny/         a random GPT2LMHeadModel as transformers 5 saves it
  gpt2_5_tiny_outputs.safetensors
      the same ids and labels, and its outputs as M = tied.
Torch runs on one thread in float32; the models are seeded, so a re-run gives
the same values.
"""

import argparse
import os
import shutil

import torch
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM


def perturbed(model):
    """Larger weights than the default 0.02 init, so that the logits are far
    from uniform and a wrong transpose or a mixed-up head cannot hide."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    return model


def make_llama(kv_heads: int, tied: bool, seed: int, context: int = 96, **rope) -> LlamaForCausalLM:
    """rope: rope_theta=... (transformers 4) or rope_parameters={...} (5)."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=1000,
        hidden_size=32,
        intermediate_size=88,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=kv_heads,
        max_position_embeddings=context,
        rms_norm_eps=1e-5,
        tie_word_embeddings=tied,
        **rope,
    )
    model = perturbed(LlamaForCausalLM(config).eval())
    # Norm weights away from one, so that a norm left at its init shows.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.5 * torch.randn_like(p))
    return model


def make_model(tied: bool, seed: int) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=1000,
        n_positions=96,
        n_embd=32,
        n_layer=2,
        n_head=4,
        layer_norm_epsilon=1e-5,
        activation_function="gelu_new",
        tie_word_embeddings=tied,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return perturbed(GPT2LMHeadModel(config).eval())


def outputs(model, ids, labels, prefix: str) -> dict:
    out = {}
    with torch.no_grad():
        result = model(
            ids,
            labels=labels,
            output_attentions=True,
            output_hidden_states=True,
            attn_implementation="eager",
        )
        out[f"{prefix}/logits"] = result.logits.contiguous()
        out[f"{prefix}/loss"] = result.loss.reshape(()).contiguous()
        for layer, attn in enumerate(result.attentions):
            out[f"{prefix}/attn.{layer}"] = attn.contiguous()
        for i, hidden in enumerate(result.hidden_states):
            out[f"{prefix}/hidden.{i}"] = hidden.contiguous()
        greedy = model.generate(
            ids[:1, :8],
            max_new_tokens=64,
            do_sample=False,
            pad_token_id=0,
            attention_mask=torch.ones(1, 8, dtype=torch.long),
        )
        out[f"{prefix}/greedy"] = greedy[0].contiguous()
    return out


def save_llamas(out: str, models: dict, ids, labels, family: str, metadata: dict) -> None:
    tokenizer = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "tokenizers")
    tensors = {"ids": ids, "labels": labels}
    for prefix, model in models.items():
        model.config._attn_implementation = "eager"
        directory = os.path.join(out, f"{family}_{prefix}")
        model.save_pretrained(directory)
        shutil.copy(
            os.path.join(tokenizer, "gpt2_style.json"), os.path.join(directory, "tokenizer.json")
        )
        tensors.update(outputs(model, ids, labels, prefix))
    save_file(tensors, os.path.join(out, f"{family}_outputs.safetensors"), metadata=metadata)


def save_gpt2(model, directory: str) -> None:
    model.config._attn_implementation = "eager"
    model.save_pretrained(directory)
    tokenizer = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "tokenizers")
    shutil.copy(
        os.path.join(tokenizer, "gpt2_style.json"), os.path.join(directory, "tokenizer.json")
    )


def transformers4_goldens(out: str, ids, labels, metadata: dict) -> None:
    tensors = {"ids": ids, "labels": labels}
    tied = make_model(tied=True, seed=1)
    save_gpt2(tied, os.path.join(out, "gpt2_tiny"))
    tied.save_pretrained(os.path.join(out, "gpt2_tiny_sharded"), max_shard_size="40KB")
    tensors.update(outputs(tied, ids, labels, "tied"))

    untied = make_model(tied=False, seed=2)
    untied.config._attn_implementation = "eager"
    untied.save_pretrained(os.path.join(out, "gpt2_tiny_untied"))
    tensors.update(outputs(untied, ids, labels, "untied"))
    save_file(tensors, os.path.join(out, "gpt2_tiny_outputs.safetensors"), metadata=metadata)

    models = {
        "gqa": make_llama(kv_heads=2, tied=False, seed=3, rope_theta=10000.0),
        "tied": make_llama(kv_heads=1, tied=True, seed=4, rope_theta=500000.0),
    }
    save_llamas(out, models, ids, labels, "llama_tiny", metadata)


def transformers5_goldens(out: str, ids, labels, metadata: dict) -> None:
    llama3 = {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 512,
    }
    models = {
        "default": make_llama(
            kv_heads=2, tied=False, seed=5, rope_parameters={"rope_theta": 500000.0}
        ),
        "llama3": make_llama(kv_heads=2, tied=False, seed=6, context=2048, rope_parameters=llama3),
        "linear": make_llama(
            kv_heads=1,
            tied=True,
            seed=7,
            rope_parameters={"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0},
        ),
    }
    save_llamas(out, models, ids, labels, "llama5_tiny", metadata)
    gpt2 = make_model(tied=True, seed=8)
    save_gpt2(gpt2, os.path.join(out, "gpt2_5_tiny"))
    tensors = {"ids": ids, "labels": labels, **outputs(gpt2, ids, labels, "tied")}
    save_file(tensors, os.path.join(out, "gpt2_5_tiny_outputs.safetensors"), metadata=metadata)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join("tests", "golden", "hf"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)

    gen = torch.Generator().manual_seed(7)
    ids = torch.randint(0, 1000, (2, 24), generator=gen)
    labels = ids.clone()
    labels[1, 0] = -100

    import transformers

    metadata = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "command": "python tools/gen_hf_goldens.py",
    }
    if int(transformers.__version__.split(".")[0]) >= 5:
        transformers5_goldens(args.out, ids, labels, metadata)
    else:
        transformers4_goldens(args.out, ids, labels, metadata)


if __name__ == "__main__":
    main()
