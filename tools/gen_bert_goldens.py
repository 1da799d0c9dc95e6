#!/usr/bin/env python3
"""Generates tests/golden/hf/bert_tiny*: tiny BERT models made by Hugging Face
`transformers` and its outputs on a padded batch, which
python/tests/test_models.py recomputes with stride.models and
tests/models/bert_test.cpp with the C++ BERT (models/bert/).

    build-venv/bin/pip install -r tools/requirements-hf.txt
    build-venv/bin/python tools/gen_bert_goldens.py [--out DIR]

Writes, under DIR (default tests/golden/hf):
  bert_tiny/        save_pretrained of a random BertForMaskedLM (2 layers,
                    4 heads of 8, vocabulary 1000, two token types, the
                    decoder tied to the word embedding)
  bert_tiny_base/   save_pretrained of a random BertModel with its pooler
  bert_tiny_outputs.safetensors
      ids (2, 16), attention_mask (2, 16) with row 1 padded after 12 tokens,
      token_type_ids (2, 16) (the second half 1), labels (2, 16) (-100 but
      at four masked positions); for the masked LM: mlm/logits, mlm/loss,
      mlm/attn.<layer> (2, 4, 16, 16), mlm/hidden.<i> (2, 16, 32) for the
      embeddings and each layer; for the base model: base/last_hidden_state,
      base/pooler_output (2, 32).
With transformers 5 (tools/requirements-hf5.txt) the same, as bert5_tiny/,
bert5_tiny_base/ and bert5_tiny_outputs.safetensors, from other seeds.
Torch runs on one thread in float32, with eager attention; the models are
seeded, so a re-run gives the same values.
"""

import argparse
import os

import torch
from safetensors.torch import save_file
from transformers import BertConfig, BertForMaskedLM, BertModel


def config() -> BertConfig:
    return BertConfig(
        vocab_size=1000,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )


def perturbed(model, seed: int):
    """Larger weights than the default 0.02 init, and norm weights away from
    one, so that a wrong transpose, a mixed-up head or a norm left at its
    init cannot hide."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.5 * torch.randn_like(p))
            else:
                p.add_(torch.randn_like(p) * 0.2)
    return model.eval()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join("tests", "golden", "hf"))
    args = parser.parse_args()
    torch.set_num_threads(1)

    gen = torch.Generator().manual_seed(11)
    ids = torch.randint(0, 1000, (2, 16), generator=gen)
    attention_mask = torch.ones(2, 16, dtype=torch.long)
    attention_mask[1, 12:] = 0
    token_type_ids = torch.zeros(2, 16, dtype=torch.long)
    token_type_ids[:, 8:] = 1
    labels = torch.full((2, 16), -100, dtype=torch.long)
    for row, col in ((0, 3), (0, 9), (1, 5), (1, 11)):
        labels[row, col] = ids[row, col]
        ids[row, col] = 103  # BERT's [MASK] id in its vocabulary

    import transformers

    # transformers 5's files beside 4's, from other seeds.
    five = int(transformers.__version__.split(".")[0]) >= 5
    name, seed = ("bert5_tiny", 112) if five else ("bert_tiny", 12)
    tensors = {
        "ids": ids,
        "attention_mask": attention_mask,
        "token_type_ids": token_type_ids,
        "labels": labels,
    }
    torch.manual_seed(seed)
    mlm = perturbed(BertForMaskedLM(config()), seed=seed + 1)
    mlm.save_pretrained(os.path.join(args.out, name))
    torch.manual_seed(seed + 2)
    base = perturbed(BertModel(config()), seed=seed + 3)
    base.save_pretrained(os.path.join(args.out, f"{name}_base"))
    with torch.no_grad():
        out = mlm(
            ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            labels=labels,
            output_attentions=True,
            output_hidden_states=True,
        )
        tensors["mlm/logits"] = out.logits.contiguous()
        tensors["mlm/loss"] = out.loss.reshape(()).contiguous()
        for layer, attn in enumerate(out.attentions):
            tensors[f"mlm/attn.{layer}"] = attn.contiguous()
        for i, hidden in enumerate(out.hidden_states):
            tensors[f"mlm/hidden.{i}"] = hidden.contiguous()
        out = base(ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        tensors["base/last_hidden_state"] = out.last_hidden_state.contiguous()
        tensors["base/pooler_output"] = out.pooler_output.contiguous()
    metadata = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "command": "python tools/gen_bert_goldens.py",
    }
    save_file(tensors, os.path.join(args.out, f"{name}_outputs.safetensors"), metadata=metadata)


if __name__ == "__main__":
    main()
