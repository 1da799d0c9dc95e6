"""Inspecting a pretrained Hugging Face model from Python, as the PyTorch
lesson does: a forward hook on layer 5, every layer's attention
probabilities, one layer's heads drawn over the prompt's tokens, and the
profiler's op table over ten training steps.

    python examples/python/inspect_pretrained.py path/to/bert-base-uncased \\
        --prompt "The capital of France is [MASK]." --out attention.png

The directory is a Hugging Face model's (config.json, safetensors weights, a
tokenizer): BERT, GPT-2 or Llama. The heads are drawn with matplotlib where
it is installed, else with stride's own image writer (stride.plot).
"""

import argparse

import stride
from stride import nn


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a Hugging Face model directory")
    parser.add_argument("--prompt", default="The capital of France is [MASK].")
    parser.add_argument("--layer", type=int, default=5, help="the layer to hook and draw")
    parser.add_argument("--out", default="attention.png", help="the image of the layer's heads")
    parser.add_argument("--steps", type=int, default=10, help="training steps to profile")
    return parser.parse_args()


def blocks_of(model):
    """The model's transformer blocks, under transformers' names."""
    for path in ("bert.encoder.layer", "encoder.layer", "transformer.h", "model.layers"):
        try:
            return path, model.get_submodule(path)
        except AttributeError:
            continue
    raise ValueError(f"{type(model).__name__} has no transformer blocks this example knows.")


def print_shapes(module, inputs, output):
    """A forward hook: what goes into and comes out of the block."""
    outputs = output if isinstance(output, tuple) else (output,)
    shapes = [tuple(t.shape) for t in outputs if isinstance(t, stride.Tensor)]
    print(f"  hook: {type(module).__name__} in {tuple(inputs[0].shape)} out {shapes}")


def token_labels(tokenizer, ids):
    return [tokenizer.decode([i]).strip() or repr(tokenizer.decode([i])) for i in ids]


def draw_heads(probabilities, tokens, title, path):
    """One layer's heads, (heads, T, T), with the tokens on both axes."""
    heads = probabilities.shape[0]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        stride.plot.save_heatmaps(
            path,
            probabilities,
            title=title,
            map_titles=[f"head {h}" for h in range(heads)],
            row_labels=tokens,
            col_labels=tokens,
            grid_cols=min(heads, 4),
        )
        return "stride.plot"
    columns = min(heads, 4)
    rows = (heads + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(3 * columns, 3 * rows), squeeze=False)
    for h, axis in enumerate(axes.flat):
        axis.set_visible(h < heads)
        if h >= heads:
            continue
        axis.imshow(probabilities[h].numpy(), vmin=0, vmax=1, cmap="viridis")
        axis.set_title(f"head {h}")
        axis.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=6)
        axis.set_yticks(range(len(tokens)), tokens, fontsize=6)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path)
    return "matplotlib"


def training_batch(model, tokenizer, batch):
    """The batch with labels: the masked tokens for a masked LM (the prompt's
    [MASK], else its second token, to be predicted as itself), the next
    tokens for a causal LM."""
    ids = batch["input_ids"]
    if "Masked" not in type(model).__name__:
        return dict(batch, labels=ids)
    mask_id = tokenizer.mask_token_id
    masked = ids == mask_id if mask_id is not None else stride.zeros_like(ids, dtype=stride.bool)
    if not bool(masked.any()):
        masked = stride.zeros_like(ids, dtype=stride.bool)
        masked[:, 1] = True
    labels = stride.where(masked, ids, stride.full_like(ids, -100))
    return dict(batch, labels=labels)


def profile_training(model, batch, steps):
    model.train()
    optimizer = stride.optim.AdamW(model.parameters(), lr=1e-4)
    with stride.profiler.profile() as prof:
        for _ in range(steps):
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    print(f"loss after {steps} steps: {loss.item():.4f}")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


def main():
    args = parse_args()
    tokenizer = stride.tokenizers.AutoTokenizer.from_pretrained(args.model)
    model = stride.models.from_pretrained(args.model)
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{type(model).__name__}: {parameters:,} parameters from {args.model}")

    path, blocks = blocks_of(model)
    layer = min(args.layer, len(blocks) - 1)
    block = blocks[layer]
    assert isinstance(block, nn.Module)
    print(f"forward hook on model.{path}[{layer}] ({type(block).__name__}):")
    handle = block.register_forward_hook(print_shapes)
    batch = tokenizer(args.prompt, return_tensors="pt")
    with stride.no_grad():
        out = model(**batch, output_attentions=True, output_hidden_states=True)
    handle.remove()

    print(f"out.attentions[0].shape: {tuple(out.attentions[0].shape)}")
    print(f"len(out.hidden_states): {len(out.hidden_states)}, layers: {len(out.attentions)}")
    tokens = token_labels(tokenizer, batch["input_ids"][0].tolist())
    print(f"tokens: {tokens}")
    writer = draw_heads(
        out.attentions[layer][0], tokens, f"{type(model).__name__}, layer {layer}", args.out
    )
    print(f"layer {layer}'s {out.attentions[layer].shape[1]} heads drawn to {args.out} ({writer})")

    profile_training(model, training_batch(model, tokenizer, batch), args.steps)


if __name__ == "__main__":
    main()
