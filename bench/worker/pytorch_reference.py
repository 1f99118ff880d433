#!/usr/bin/python3
"""PyTorch eager reference for bench/worker: the same models, optimiser, batch and threads as
trainer_bench, on the same Fashion-MNIST slice. Prints one key=value line like trainer_bench.

By default a natural PyTorch program: NCHW, torch.optim.Adam's defaults, zero_grad() as 1.13
does it. --tricks adds what Sift does that a PyTorch user could do too, to show where each gain
comes from: channels_last (CNN weights and input), max-pool before ReLU, in-place ReLU (cl),
Adam(foreach=True), zero_grad(set_to_none=True) (foreach), and for the MLP in fp32 each Linear
(+ReLU) as one autograd.Function whose products call oneDNN's dnnl_sgemm through ctypes, as
Sift's FusedLinear does (onednn; PyTorch 1.13 runs fp32 matmuls on OpenBLAS).

Run with Debian's /usr/bin/python3 (python3-torch 1.13)."""
import argparse
import ctypes
import gzip
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MEAN, STD = 0.2860, 0.3530


def load(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def mlp(inplace=False):
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(inplace), nn.Linear(512, 256),
                         nn.ReLU(inplace), nn.Linear(256, 10))


def onednn_mlp():
    """The MLP with each Linear(+ReLU) as one autograd.Function on oneDNN's sgemm (the library
    Debian's PyTorch already loads): forward = product, bias add, ReLU in place; backward = mask,
    bias sum, two products. Under autocast (bf16) the plain layers run, as in Sift."""
    lib = ctypes.CDLL("libdnnl.so.2")
    sgemm = lib.dnnl_sgemm
    i64, f32, ptr = ctypes.c_int64, ctypes.c_float, ctypes.c_void_p
    sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, f32, ptr, i64, ptr, i64, f32,
                      ptr, i64]
    sgemm.restype = ctypes.c_int

    def mm(a, ta, b, tb):  # op(a) @ op(b), row-major contiguous
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        n = b.shape[0] if tb else b.shape[1]
        out = torch.empty(m, n)
        status = sgemm(b"T" if ta else b"N", b"T" if tb else b"N", m, n, k, 1.0, a.data_ptr(),
                       a.shape[1], b.data_ptr(), b.shape[1], 0.0, out.data_ptr(), n)
        assert status == 0, status
        return out

    class LinearFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b, relu):
            x = x.contiguous()
            out = mm(x, False, w, True).add_(b)
            if relu:
                out.relu_()
            ctx.save_for_backward(x, w, out if relu else None)
            return out

        @staticmethod
        def backward(ctx, g):
            x, w, out = ctx.saved_tensors
            g = g.contiguous()
            if out is not None:
                g = torch.ops.aten.threshold_backward(g, out, 0)
            gx = mm(g, False, w, False) if ctx.needs_input_grad[0] else None
            return gx, mm(g, True, x, False), g.sum(0), None

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(784, 512), nn.Linear(512, 256),
                                         nn.Linear(256, 10)])

        def forward(self, x):
            x = x.flatten(1)
            fused = not torch.is_autocast_cpu_enabled()
            for i, layer in enumerate(self.layers):
                relu = i + 1 < len(self.layers)
                if fused:
                    x = LinearFn.apply(x, layer.weight, layer.bias, relu)
                else:
                    x = layer(x).relu_() if relu else layer(x)
            return x

    return Mlp()


class Cnn(nn.Module):
    def __init__(self, channels=32, depth=2, k=3, pool_first=False):
        super().__init__()
        layers, c_in, size = [], 1, 28
        for i in range(depth):
            c_out = channels << i
            layers += [nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False), nn.BatchNorm2d(c_out)]
            # Max-pool and ReLU commute exactly; pooling first leaves ReLU a quarter of the work.
            block = [nn.ReLU(pool_first)]
            if size >= 4:
                block = [nn.MaxPool2d(2)] + block if pool_first else block + [nn.MaxPool2d(2)]
                size //= 2
            layers += block
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c_in, 10)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--train", type=int, default=12800)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--label", default="pytorch")
    p.add_argument("--tricks", default="", help="comma-separated: cl, foreach, onednn")
    a = p.parse_args()
    tricks = set(filter(None, a.tricks.split(",")))
    cl = "cl" in tricks
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    d = "/usr/share/datasets/fashion-mnist"
    images = load(f"{d}/train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)[: a.train]
    labels = load(f"{d}/train-labels-idx1-ubyte.gz", 8)[: a.train]
    x = (torch.from_numpy(images.astype(np.float32)) / 255.0 - MEAN) / STD
    y = torch.from_numpy(labels.astype(np.int64))
    if a.model == "mlp":
        model = onednn_mlp() if "onednn" in tricks else mlp(inplace=cl)
    else:
        model = Cnn(pool_first=cl)
    if cl and a.model == "cnn":
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    foreach = {"foreach": True} if "foreach" in tricks else {}
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, **foreach)
    model.train()
    n = x.shape[0]
    best = 0.0  # best epoch after the first, as trainer_bench reports
    for epoch in range(a.epochs):
        start = time.perf_counter()
        perm = torch.randperm(n)
        for i in range(0, n, a.batch):
            idx = perm[i:i + a.batch]
            xb, yb = x.index_select(0, idx), y.index_select(0, idx)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
                logits = model(xb)
            loss = F.cross_entropy(logits.float(), yb)
            opt.zero_grad(**({"set_to_none": True} if foreach else {}))
            loss.backward()
            opt.step()
        seconds = time.perf_counter() - start
        if epoch > 0 or a.epochs == 1:
            best = max(best, n / seconds)
    with open("/proc/self/status") as f:
        hwm = [int(l.split()[1]) for l in f if l.startswith("VmHWM")][0]
    env = " ".join(f"{k}={os.environ.get(k, 'unset')}" for k in
                   ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "LD_PRELOAD",
                    "MALLOC_CONF"))
    print(f"impl={a.label} tricks={a.tricks or 'none'} model={a.model} precision={a.precision} "
          f"batch={a.batch} micro=0 "
          f"threads={a.threads} samples_per_second={best:.1f} peak_rss_mib={hwm / 1024:.1f} "
          f"torch_threads={torch.get_num_threads()} {env}")


if __name__ == "__main__":
    main()
