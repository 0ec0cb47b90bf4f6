"""Draws the main job's loss and accuracy curves into a PNG (matplotlib, Agg backend: no display needed)."""
import numpy as np


def smooth(values, window):
    """Running mean over `window` points (shorter at the start), so a noisy per-step loss reads as a curve."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return values
    sums = np.cumsum(values)
    starts = np.maximum(np.arange(len(values)) - window, -1)
    before = np.where(starts >= 0, sums[np.maximum(starts, 0)], 0.0)
    return (sums - before) / (np.arange(len(values)) - starts)


def write_curves(path, history, title):
    """history: {"loss": per-step losses, "train_acc"/"test_acc": per-epoch (step, accuracy) pairs}."""
    import matplotlib  # lazy: matplotlib is optional (examples)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after choosing the Agg backend

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    steps = np.arange(1, len(history["loss"]) + 1)
    ax_loss.plot(steps, history["loss"], color="0.8", linewidth=0.8, label="per step")
    ax_loss.plot(steps, smooth(history["loss"], 20), color="C0", label="running mean")
    ax_loss.set(xlabel="step", ylabel="cross-entropy loss", yscale="log", title="training loss")
    ax_loss.legend()
    for key, label, color in (("train_acc", "train (running, per epoch)", "C1"), ("test_acc", "test", "C2")):
        if history[key]:
            x, y = zip(*history[key])
            ax_acc.plot(x, y, marker="o", color=color, label=label)
    ax_acc.set(xlabel="step", ylabel="accuracy", title="accuracy")
    ax_acc.grid(alpha=0.3)
    ax_acc.legend(loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
