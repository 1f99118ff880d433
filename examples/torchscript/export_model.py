#!/usr/bin/python3
"""Scripts a small PyTorch model for Fashion-MNIST and saves it with torch.jit.save, the file a
Sift study trains with `trainer: {model: torchscript, path: ...}`.

    mlp   flatten - linear(width) - relu - dropout - linear(width/2) - relu - dropout - linear(10)
    cnn   [conv3x3 - batch norm - relu - max pool] x 2 (width, 2 x width channels) - global mean -
          dropout - linear(10)

`dropout_p` is a plain float attribute of the scripted module: a search space entry of that name
sets it before training. The weights in the file are every trial's starting weights.

Usage (Debian's interpreter, where python3-torch installs):
    /usr/bin/python3 examples/torchscript/export_model.py --model cnn --width 16 --out net_16.pt
Options: --outputs N (default 10; 1 for a regression), --features N (mlp input size, default
784), --channels N (cnn input channels, default 1), --seed N (default 0).
"""
import argparse

import torch
from torch import nn
import torch.nn.functional as F


class Mlp(nn.Module):
    dropout_p: float

    def __init__(self, features: int, width: int, outputs: int):
        super().__init__()
        self.dropout_p = 0.0
        self.fc1 = nn.Linear(features, width)
        self.fc2 = nn.Linear(width, max(width // 2, 1))
        self.head = nn.Linear(max(width // 2, 1), outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.flatten(1)
        x = F.dropout(F.relu(self.fc1(x)), self.dropout_p, self.training)
        x = F.dropout(F.relu(self.fc2(x)), self.dropout_p, self.training)
        return self.head(x)


class Cnn(nn.Module):
    dropout_p: float

    def __init__(self, channels: int, width: int, outputs: int):
        super().__init__()
        self.dropout_p = 0.0
        self.features = nn.Sequential(
            nn.Conv2d(channels, width, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(2 * width, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x).mean(dim=(2, 3))
        return self.head(F.dropout(x, self.dropout_p, self.training))


def export(model: str, width: int, out: str, outputs: int = 10, features: int = 28 * 28,
           channels: int = 1, seed: int = 0) -> str:
    """Scripts and saves one model; returns a line saying what was written."""
    torch.manual_seed(seed)
    net = Mlp(features, width, outputs) if model == "mlp" else Cnn(channels, width, outputs)
    torch.jit.save(torch.jit.script(net), out)
    return (f"wrote {out}: {model}, width {width}, "
            f"{sum(p.numel() for p in net.parameters())} parameters")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=["mlp", "cnn"], default="cnn")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--outputs", type=int, default=10)
    parser.add_argument("--features", type=int, default=28 * 28)
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    a = parser.parse_args()
    print(export(a.model, a.width, a.out, a.outputs, a.features, a.channels, a.seed))


if __name__ == "__main__":
    main()
