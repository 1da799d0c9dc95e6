"""The seven idioms every PyTorch user knows, in stride from Python: the
lesson's code with `import torch` changed to `import stride as torch`.
examples/idioms.cpp is the same program in C++. Exits non-zero when the
model did not learn, so CI runs it as a test."""

import os
import sys
import tempfile

import stride as torch
import stride.nn.functional as F
from stride import nn


def main():
    # 7. Seeding everything
    torch.manual_seed(0)

    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x = torch.randn(64, 8)
    y = x[:, :4].argmax(1)  # a learnable labelling

    # 1. The training loop
    model.to("cpu")
    losses = []
    for _ in range(100):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        # 5. Reading a scalar
        losses.append(loss.item())
    print(f"training loss {losses[0]:.4f} -> {losses[-1]:.4f}")

    # 2. The inference loop
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean()
        print(f"accuracy {accuracy.item():.3f}")
    model.train()

    # 3. Freezing a submodule
    for p in model[0].parameters():
        p.requires_grad_(False)

    # 6. Counting trainable parameters
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    print(f"trainable parameters: {trainable} of {total}")

    # 4. Saving and loading model + optimizer
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "idioms.safetensors")
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
        checkpoint = torch.load(path)
        model.load_state_dict(checkpoint["model"])
        opt.load_state_dict(checkpoint["optimizer"])

    return 0 if losses[-1] < losses[0] else 1


if __name__ == "__main__":
    sys.exit(main())
