"""PNG plots for ``binder-py report`` (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from binder_py.tasks import task_profile
from binder_py.runs.escape import plot_label

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


#: the accuracy-by-subset plot shows "all" and at most this many subsets less one (a run's records name its
#: subsets, and a run directory may come from someone else; the markdown table lists them all)
MAX_PLOTTED_SUBSETS = 24


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _accuracy(figures: dict[str, Any], key: str) -> float:
    """An evaluator's accuracy; TabFact figures have one accuracy, which stands for every evaluator."""
    return float(figures[key] if key in figures else figures["correct_accuracy"])


def plot_accuracy_by_subset(runs: Sequence[Any], metrics: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Grouped bars: one group per subset ("all" first), one bar per run; a panel per WikiTQ evaluator
    (official, binder, semantic), TabFact's one accuracy shown in each."""
    plt = _pyplot()
    subsets = ["all"] + sorted({s for m in metrics for s in m["accuracy"] if s != "all"})
    shown_note = ""
    if len(subsets) > MAX_PLOTTED_SUBSETS:  # the figure's width grows with them (3,000 names: 68 s, 2.8 GB)
        size = {s: sum((m["accuracy"].get(s) or {}).get("total", 0) for m in metrics) for s in subsets[1:]}
        kept = sorted(subsets[1:], key=lambda s: (-size[s], s))[:MAX_PLOTTED_SUBSETS - 1]
        shown_note = f" ({len(kept)} of {len(subsets) - 1} subsets: those with the most questions)"
        subsets = ["all"] + sorted(kept)
    tabfact_only = all(task_profile(m["task"]).evaluator == "label" for m in metrics)
    panels = ([("correct_accuracy", "accuracy")] if tabfact_only else
              [("official_accuracy", "official evaluator"), ("binder_accuracy", "Binder's evaluator"),
               ("semantic_accuracy", "binder-py semantic match")])
    width = 0.8 / max(1, len(metrics))
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(6.0, 1.2 + 1.3 * len(subsets) * max(1, len(metrics)) * 0.6),
                                                      3.2 * len(panels) + 0.6), squeeze=False)
    for ax, (key, title) in zip(axes[:, 0], panels):
        for i, (run, m) in enumerate(zip(runs, metrics)):
            xs, ys, ns = [], [], []
            for j, s in enumerate(subsets):
                a = m["accuracy"].get(s)
                if a is None or not a["total"]:
                    continue
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(100 * _accuracy(a, key))
                ns.append(a["total"])
            bars = ax.bar(xs, ys, width=width * 0.95, color=_COLORS[i % len(_COLORS)], label=plot_label(run.label))
            for bar, y, n in zip(bars, ys, ns):
                ax.annotate(f"{y:.0f}%\nn={n}", (bar.get_x() + bar.get_width() / 2, y), ha="center", va="bottom",
                            fontsize=7, xytext=(0, 1), textcoords="offset points")
        ax.set_xticks(range(len(subsets)))
        ax.set_xticklabels([plot_label(s) for s in subsets])
        ax.set_ylim(0, 115)
        ax.set_ylabel("accuracy (%)")
        ax.set_title(f"Accuracy by subset and mode — {title}{shown_note}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    axes[0, 0].legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_accuracy_vs_candidates(runs: Sequence[Any], metrics: Sequence[dict[str, Any]],
                                curves: dict[str, list[dict[str, Any]]], path: str | Path) -> Path:
    """Accuracy against the number of voting candidates k (as the Binder paper's figures 6 and 7).

    Solid: semantic match (TabFact: accuracy); dashed: official evaluator; dash-dotted: Binder's
    evaluator; a dotted line marks each run's final recorded accuracy (repairs included)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    top = 0.0
    for i, (run, m) in enumerate(zip(runs, metrics)):
        curve = curves.get(run.name)
        if not curve:
            continue
        color = _COLORS[i % len(_COLORS)]
        ks = [p["k"] for p in curve]
        tabfact = task_profile(m["task"]).evaluator == "label"
        semantic = [100 * _accuracy(p, "semantic_accuracy") for p in curve]
        ax.plot(ks, semantic, marker="o", color=color, label=plot_label(run.label) + ("" if tabfact else " semantic"))
        if not tabfact:
            ax.plot(ks, [100 * p["official_accuracy"] for p in curve], marker="s", markersize=4, linestyle="--",
                    color=color, alpha=0.8, label=f"{plot_label(run.label)} official")
            ax.plot(ks, [100 * p["binder_accuracy"] for p in curve], marker="^", markersize=4, linestyle="-.",
                    color=color, alpha=0.8, label=f"{plot_label(run.label)} binder")
        final = 100 * _accuracy(m["accuracy"]["all"], "semantic_accuracy")
        ax.axhline(final, color=color, linestyle=":", linewidth=1)
        top = max(top, max(semantic, default=0.0), final)
    ax.set_xlabel("number of voting candidates k (first k sampled programs)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, min(100, top + 15) if top else 100)
    kmax = max((p["k"] for c in curves.values() for p in c), default=1)
    ax.set_xticks(range(1, kmax + 1) if kmax <= 20 else range(1, kmax + 1, max(1, kmax // 10)))
    ax.set_title("Accuracy vs. number of voting candidates\n(re-voted from recorded candidates; "
                 "dotted: final accuracy)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_reliability(runs: Sequence[Any], metrics: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """A reliability diagram: accuracy against mean confidence per confidence bin, one line per run
    (the diagonal is perfect calibration)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 100], [0, 100], color="grey", linestyle=":", label="perfect calibration")
    for run, m in zip(runs, metrics):
        cal = m.get("calibration")
        if not cal:
            continue
        points = [(100 * b["mean_confidence"], 100 * b["accuracy"]) for b in cal["bins"] if b["count"]]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                label=f"{plot_label(run.label)} (ECE {cal['ece']:.3f}, {cal['answered']} answered)")
    ax.set_xlabel("confidence (%)")
    ax.set_ylabel("accuracy (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
