#!/usr/bin/env python3
"""PyTorch references on a CUDA GPU for scripts/gpu-check.sh: the models of trainer_bench
(pytorch_reference.py builds them), Adam (lr 1e-3), cross-entropy, on Fashion-MNIST, in one of two
forms, and one key=value line like trainer_bench's:

  --mode=eager  as a user writes it: the training set on the host (pinned), each batch gathered
                there and copied over, torch.optim.Adam with its CUDA default (foreach), autocast.
  --mode=graph  what PyTorch offers for speed: the training set on the GPU and shuffled there,
                Adam(fused=True, capturable=True), and forward, backward and optimizer step
                captured once as a CUDA graph and replayed per batch (full batches only; autocast
                with its cache off, as graph capture needs).

samples_per_second: the best epoch after the first, with torch.cuda.synchronize() before the
clock is read. Run with the Python whose torch the worker was built against."""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_reference import MEAN, STD, Cnn, mlp  # noqa: E402  (the same layers)


def load(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--train", type=int, default=0, help="first N samples (0: all)")
    p.add_argument("--mode", default="eager", choices=["eager", "graph"])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("pytorch_cuda_reference.py: torch.cuda.is_available() is False")
    dev = torch.device("cuda")
    torch.manual_seed(1)
    images = load(f"{a.data}/train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = load(f"{a.data}/train-labels-idx1-ubyte.gz", 8)
    if a.train:
        images, labels = images[: a.train], labels[: a.train]
    x = (torch.from_numpy(images.astype(np.float32)) / 255.0 - MEAN) / STD
    y = torch.from_numpy(labels.astype(np.int64))
    model = (mlp() if a.model == "mlp" else Cnn()).to(dev)
    model.train()
    amp = dict(device_type="cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16")
    n, bs = x.shape[0], a.batch
    best = 0.0

    if a.mode == "eager":
        x, y = x.pin_memory(), y.pin_memory()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for epoch in range(a.epochs):
            torch.cuda.synchronize()
            start = time.perf_counter()
            perm = torch.randperm(n)
            for i in range(0, n, bs):
                idx = perm[i:i + bs]
                xb = x.index_select(0, idx).to(dev, non_blocking=True)
                yb = y.index_select(0, idx).to(dev, non_blocking=True)
                with torch.autocast(**amp):
                    logits = model(xb)
                loss = F.cross_entropy(logits.float(), yb)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            torch.cuda.synchronize()
            if epoch > 0 or a.epochs == 1:
                best = max(best, n / (time.perf_counter() - start))
    else:
        x, y = x.to(dev), y.to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True, capturable=True)
        static_x = x[:bs].clone()
        static_y = y[:bs].clone()

        def step():
            with torch.autocast(**amp, cache_enabled=False):
                logits = model(static_x)
            loss = F.cross_entropy(logits.float(), static_y)
            loss.backward()
            opt.step()
            return loss

        # Warm up on a side stream (lazy initialisation must not be captured), then capture.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            step()
        full = n // bs * bs
        for epoch in range(a.epochs):
            torch.cuda.synchronize()
            start = time.perf_counter()
            perm = torch.randperm(n, device=dev)
            for i in range(0, full, bs):
                idx = perm[i:i + bs]
                torch.index_select(x, 0, idx, out=static_x)
                torch.index_select(y, 0, idx, out=static_y)
                graph.replay()
            torch.cuda.synchronize()
            if epoch > 0 or a.epochs == 1:
                best = max(best, full / (time.perf_counter() - start))

    print(f"impl=pytorch-{a.mode} device=cuda model={a.model} precision={a.precision} "
          f"batch={bs} samples_per_second={best:.1f} torch={torch.__version__} "
          f"gpu={torch.cuda.get_device_name().replace(' ', '_')}")


if __name__ == "__main__":
    main()
