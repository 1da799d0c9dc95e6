"""A classifier trained as PyTorch's quickstart tutorial trains one: a
TensorDataset and DataLoaders, an nn.Sequential model, CrossEntropyLoss, SGD
with momentum and a StepLR schedule, train and test loops, then
torch.save(model.state_dict()). The data is synthetic: NumPy draws points
and labels them by a random linear teacher.

    python classifier.py --arch=mlp --epochs=3 --init=init.pt --out=model.pt

--arch=cnn reads the points as 1x8x8 images and classifies them with
Conv2d, MaxPool2d and Flatten. --init names a file of initial weights,
written by the first run and loaded by later ones, so that PyTorch and stride
(python -m stride.compat classifier.py ...) start from the same weights.
"""

import argparse
import os

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

NUM_FEATURES, NUM_CLASSES = 64, 4


def synthetic_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, NUM_FEATURES)).astype(np.float32)
    teacher = np.random.default_rng(0).normal(size=(NUM_FEATURES, NUM_CLASSES))
    y = (x @ teacher + 0.5 * rng.normal(size=(n, NUM_CLASSES))).argmax(axis=1)
    return torch.from_numpy(x), torch.from_numpy(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(NUM_FEATURES, 128),
            nn.ReLU(),
            nn.Linear(128, 128),
            nn.ReLU(),
            nn.Linear(128, NUM_CLASSES),
        )

    def forward(self, x):
        return self.linear_relu_stack(x)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 2 * 2, NUM_CLASSES))

    def forward(self, x):
        return self.classifier(self.features(x.view(-1, 1, 8, 8)))


def train(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"batch {batch}: loss {loss.item():.9g}")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"test: accuracy {100 * correct:.1f}%, loss {test_loss:.9g}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--init", default="")
    parser.add_argument("--out", default="model.pth")
    args = parser.parse_args()

    torch.manual_seed(0)
    train_data = TensorDataset(*synthetic_data(512, seed=1))
    test_data = TensorDataset(*synthetic_data(256, seed=2))
    # The order is the data's own (NumPy drew it at random): the two
    # libraries' shuffles differ.
    train_dataloader = DataLoader(train_data, batch_size=32)
    test_dataloader = DataLoader(test_data, batch_size=64)

    model = MLP() if args.arch == "mlp" else CNN()
    if args.init and os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init, weights_only=True))
    elif args.init:
        torch.save(model.state_dict(), args.init)
    print(model)

    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    for t in range(args.epochs):
        print(f"epoch {t + 1}, lr {scheduler.get_last_lr()[0]:.4g}")
        train(train_dataloader, model, loss_fn, optimizer)
        test(test_dataloader, model, loss_fn)
        scheduler.step()
    torch.save(model.state_dict(), args.out)
    print(f"saved the model's state to {args.out}")


if __name__ == "__main__":
    main()
