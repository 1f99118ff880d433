"""A PyTorch training script tuned by Sift as a command trial: a small MLP on a slice of
Fashion-MNIST (Debian's dataset-fashion-mnist), run once per trial by
examples/command/command_trial.yaml. Sift passes the parameters as --name=value arguments,
restores SIFT_CHECKPOINT_DIR before a resumed trial, and reads the report lines sift_report
prints. Run by hand too: /usr/bin/python3 train.py --lr=0.01 --hidden=64
"""

import argparse
import gzip
import os
import signal
import sys

import numpy as np
import torch
from torch import nn

import sift_report

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
parser.add_argument("--train-size", type=int, default=6000)
parser.add_argument("--val-size", type=int, default=2000)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--hidden", type=int, default=128)
parser.add_argument("--dropout", type=float, default=0.0)
parser.add_argument("--batch_size", type=int, default=64)
args = parser.parse_args()

# SIGTERM (stopped, paused, or the machine reclaimed): finish the current batch, then leave; the
# checkpoint of the last finished epoch is already in the folder.
stopping = False


def on_sigterm(signum, frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_sigterm)


def read_idx(name, offset):
    with gzip.open(os.path.join(args.data, name)) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load_split():
    images = read_idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    labels = read_idx("train-labels-idx1-ubyte.gz", 8)
    # The same slice in every trial: the first rows train, the last rows validate.
    n, v = args.train_size, args.val_size
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    y = torch.from_numpy(labels.astype(np.int64))
    return x[:n], y[:n], x[-v:], y[-v:]


torch.manual_seed(int(os.environ.get("SIFT_SEED", "0")) % (2**31))
torch.set_num_threads(1)
x_train, y_train, x_val, y_val = load_split()
model = nn.Sequential(nn.Linear(784, args.hidden), nn.ReLU(), nn.Dropout(args.dropout),
                      nn.Linear(args.hidden, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()

# A resumed trial (another lease, maybe another machine) continues from its folder.
state = sift_report.load("state.pt", torch.load)
first_epoch = 1
if state is not None:
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    first_epoch = state["epoch"] + 1
    print("resumed from the checkpoint of epoch %d" % state["epoch"], file=sys.stderr)

for epoch in range(first_epoch, sift_report.max_epochs() + 1):
    model.train()
    order = torch.randperm(len(x_train))
    total = 0.0
    for i in range(0, len(order), args.batch_size):
        if stopping:
            sys.exit(0)
        batch = order[i:i + args.batch_size]
        optimizer.zero_grad()
        loss = loss_fn(model(x_train[batch]), y_train[batch])
        loss.backward()
        optimizer.step()
        total += loss.item() * len(batch)
    model.eval()
    with torch.no_grad():
        logits = model(x_val)
        val_loss = loss_fn(logits, y_val).item()
        val_accuracy = (logits.argmax(1) == y_val).float().mean().item()
    # Save, then report: Sift uploads the folder when the report arrives.
    sift_report.save("state.pt", lambda path: torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
         "rng": torch.get_rng_state(), "epoch": epoch}, path))
    sift_report.report(epoch=epoch, val_accuracy=val_accuracy, val_loss=val_loss,
                       train_loss=total / len(x_train))
