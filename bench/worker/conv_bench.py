"""The benchmark CNN's convolutions alone, fp32 against bf16 autocast: what bf16 can gain on the
products that dominate the CNN's step, on this CPU, with the oneDNN build LibTorch 1.13 ships
(the same kernels Sift's trainer calls). Forward and backward of conv1 (1 -> 32 channels, 28x28,
weight gradient only: the images need none) and conv2 (32 -> 64, 14x14), channels-last, batch
256, interleaved rounds, best and median of 30 steps each.

    /usr/bin/python3 bench/worker/conv_bench.py [--threads 2] [--rounds 3]
"""
import argparse
import time

import torch


def convs(dtype):
    torch.manual_seed(0)
    cl = torch.channels_last
    c1 = torch.nn.Conv2d(1, 32, 3, padding=1, bias=False).to(memory_format=cl)
    c2 = torch.nn.Conv2d(32, 64, 3, padding=1, bias=False).to(memory_format=cl)
    images = torch.randn(256, 1, 28, 28)
    h = torch.randn(256, 32, 14, 14).contiguous(memory_format=cl).to(dtype).requires_grad_()
    g1 = torch.randn(256, 32, 28, 28).contiguous(memory_format=cl).to(dtype)
    g2 = torch.randn(256, 64, 14, 14).contiguous(memory_format=cl).to(dtype)
    bf16 = dtype == torch.bfloat16

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            y1, y2 = c1(images), c2(h)
        y1.backward(g1)
        y2.backward(g2)

    return step


def timed(step, n=30):
    for _ in range(5):
        step()
    ms = []
    for _ in range(n):
        start = time.perf_counter()
        step()
        ms.append((time.perf_counter() - start) * 1e3)
    ms.sort()
    return ms[0], ms[len(ms) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    steps = {"fp32": convs(torch.float32), "bf16": convs(torch.bfloat16)}
    print(f"# conv1 + conv2 forward + backward, batch 256, channels-last, threads {args.threads}")
    for r in range(args.rounds):
        (f, fm), (b, bm) = timed(steps["fp32"]), timed(steps["bf16"])
        print(f"round {r + 1}: fp32 best {f:.2f} ms median {fm:.2f} | bf16 best {b:.2f} ms "
              f"median {bm:.2f} | fp32/bf16 best {f / b:.2f}x median {fm / bm:.2f}x")


if __name__ == "__main__":
    main()
