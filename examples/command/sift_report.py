"""Reporting to Sift from a training script run as a command trial (docs/workloads.md, section 3).

One file, no dependencies: copy it next to your script.

    import sift_report
    params = sift_report.params()              # {"lr": 0.001, ...} (also given as --lr=0.001)
    state = sift_report.load("state.pt", torch.load)   # None on a fresh trial
    for epoch in range(sift_report.epoch_start() + 1, sift_report.max_epochs() + 1):
        ...train one epoch...
        sift_report.save("state.pt", lambda path: torch.save(state, path))
        sift_report.report(epoch=epoch, val_accuracy=acc, train_loss=loss)

Save before you report: the folder is uploaded as the trial's checkpoint when the report arrives.
On SIGTERM (stopped, paused, or the worker's VM reclaimed) save if you can and exit within the
study's trial.grace_seconds; the next lease, maybe on another machine, starts with that folder.
"""

import json
import math
import os
import sys

__all__ = ["report", "params", "epoch_start", "max_epochs", "trial", "checkpoint_dir",
           "checkpoint_path", "save", "load"]


def report(epoch, **metrics):
    """Prints one report line: epoch is the number of epochs completed (1, 2, ...)."""
    if not isinstance(epoch, int) or epoch < 1:
        raise ValueError("epoch must be a whole number >= 1, got %r" % (epoch,))
    values = {"epoch": epoch}
    for name, value in metrics.items():
        value = float(value)
        if not math.isfinite(value):
            raise ValueError("metric %s is %r; Sift takes finite numbers" % (name, value))
        values[name] = value
    sys.stdout.write(json.dumps({"sift": values}) + "\n")
    sys.stdout.flush()


def params():
    """The trial's parameters (searched and fixed) as a dict; {} when not run by Sift."""
    return json.loads(os.environ.get("SIFT_PARAMS", "{}"))


def epoch_start():
    """Epochs already reported by earlier leases of this trial (0 for a fresh trial)."""
    return int(os.environ.get("SIFT_EPOCH_START", "0"))


def max_epochs(default=10):
    return int(os.environ.get("SIFT_MAX_EPOCHS", default))


def trial():
    return int(os.environ.get("SIFT_TRIAL", "0"))


def checkpoint_dir():
    """The folder Sift uploads after each report and restores before a resumed lease."""
    path = os.environ.get("SIFT_CHECKPOINT_DIR", "sift-checkpoint")
    os.makedirs(path, exist_ok=True)
    return path


def checkpoint_path(name):
    return os.path.join(checkpoint_dir(), name)


def save(name, write):
    """Calls write(path) on a temporary path, then renames it to `name` in the checkpoint folder,
    so a checkpoint is never seen half-written."""
    final = checkpoint_path(name)
    tmp = final + ".tmp"
    write(tmp)
    os.replace(tmp, final)


def load(name, read):
    """read(path) of `name` in the checkpoint folder, or None when there is none."""
    path = checkpoint_path(name)
    return read(path) if os.path.exists(path) else None
