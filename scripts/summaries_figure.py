#!/usr/bin/env python3
"""The MAP, MCC and majority-rule consensus trees of one exact posterior, side by
side, each internal node labelled with its cluster's exact marginal
(docs/figures/summaries-iris18.svg, shown in docs/summaries.md).

Usage (with the package installed, e.g. scripts/test-python's .venv-test):

    .venv-test/bin/python scripts/summaries_figure.py [--points examples/iris18.csv]
        [--beta 4] [--out docs/figures/summaries-iris18.svg]

The trees are drawn by rank (a node's height is one more than its tallest child), so the
multifurcating consensus and the binary trees share one scale; the data are the
`hcc` posterior on the RBF similarity of the points, centred, as in the docs.
"""

import argparse
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import trellis  # noqa: E402


def draw(ax, nested, support, names, title):
    """Draws nested lists (any number of children) as a dendrogram with the
    leaves at the bottom, each internal node but the root labelled with its
    support; returns nothing."""
    order = []

    def leaves(t):
        return [t] if isinstance(t, int) else [x for c in t for x in leaves(c)]

    for leaf in leaves(nested):
        order.append(leaf)
    x_of = {leaf: k for k, leaf in enumerate(order)}

    def walk(t, root):
        """(x, height) of node t, drawing its children."""
        if isinstance(t, int):
            return x_of[t], 0
        kids = [walk(c, False) for c in t]
        h = 1 + max(k[1] for k in kids)
        xs = [k[0] for k in kids]
        for x, kh in kids:
            ax.plot([x, x], [kh, h], color="k", lw=1)
        ax.plot([min(xs), max(xs)], [h, h], color="k", lw=1)
        x = (min(xs) + max(xs)) / 2
        if not root:
            p = support.get(tuple(sorted(leaves(t))), float("nan"))
            ax.text(x, h + 0.1, f"{p:.2f}", ha="center", va="bottom", fontsize=6,
                    color="tab:red" if p >= 0.5 else "tab:blue")
        return x, h

    _, top = walk(nested, True)
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels([names[i] if names else str(i) for i in order], rotation=90, fontsize=7)
    ax.set_yticks([])
    ax.set_ylim(-0.2, top + 0.8)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(title, fontsize=9)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", default="examples/iris18.csv")
    ap.add_argument("--beta", type=float, default=4.0)
    ap.add_argument("--out", default="docs/figures/summaries-iris18.svg")
    a = ap.parse_args()
    names, X = trellis.read_points(a.points)
    W = trellis.similarity(X, "rbf", center=True)
    post = trellis.exact_hierarchy(W, model="hcc", beta=a.beta, names=names)
    map_tree, mcc, consensus = post.map_tree, post.mcc_tree(), post.consensus_tree(0.5)
    map_support = dict(zip(map_tree.clusters(), [post.marginal(c) for c in map_tree.clusters()]))
    map_cred = sum(math.log(p) for c, p in map_support.items() if 1 < len(c) < post.n)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    draw(axes[0], map_tree.to_nested(), map_support, names, f"MAP tree (log credibility {map_cred:.1f})")
    draw(axes[1], mcc.to_nested(), mcc.support, names, f"MCC tree (log credibility {mcc.log_credibility:.1f})")
    draw(axes[2], consensus.to_nested(), consensus.support, names, "majority-rule consensus (p > 0.5)")
    fig.suptitle(f"{post.n} iris flowers, hcc, beta = {a.beta:g}: each cluster labelled with its exact marginal",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
