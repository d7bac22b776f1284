#!/usr/bin/env python3
"""The MAP, MCC and majority-rule consensus trees of exact posteriors, side by side,
each internal node labelled with its cluster's exact marginal (docs/figures/summaries.svg,
shown in docs/summaries.md): one row for iris flowers, one for a simulated jet.

Usage (with the package installed and the release CLI built, e.g. by scripts/test-python,
from the repository root):

    .venv-test/bin/python scripts/summaries_figure.py [--points examples/iris18.csv]
        [--beta 4] [--cli target/release/trellis] [--jet-seed 7] [--jet-index 1]
        [--out docs/figures/summaries.svg]

Row 1: the `hcc` posterior (Python package) on the RBF similarity of the points,
centred, at --beta. Row 2: the Ginkgo likelihood's posterior of one W-like jet simulated
by the CLI (`trellis ginkgo generate --preset w --n-jets K --min-leaves 10 --max-leaves 11
--seed S`, jet number --jet-index), through `trellis map`, `trellis marginals` and
`trellis summary --kind mcc|consensus` with `--model ginkgo --jets`; nothing is read
from outside the repository. The trees are drawn by rank (a node's height is one more
than its tallest child), so the multifurcating consensus and the binary trees share one
scale.
"""

import argparse
import json
import math
import subprocess
import tempfile
from pathlib import Path

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


def clusters_of(nested):
    """The clusters (sorted tuples) of the internal nodes of nested lists."""
    out = []

    def go(t):
        if isinstance(t, int):
            return [t]
        pts = sorted(x for c in t for x in go(c))
        out.append(tuple(pts))
        return pts

    go(nested)
    return out


def log_credibility(nested, support, n):
    """Σ log P(C) over the tree's clusters of 2 to n - 1 points."""
    return sum(math.log(support[c]) for c in clusters_of(nested) if 1 < len(c) < n)


def iris_row(points, beta):
    """(title, names, [(nested, support, title)] for MAP, MCC, consensus) of the
    iris posterior, by the Python package."""
    names, X = trellis.read_points(points)
    W = trellis.similarity(X, "rbf", center=True)
    post = trellis.exact_hierarchy(W, model="hcc", beta=beta, names=names)
    map_tree, mcc, consensus = post.map_tree, post.mcc_tree(), post.consensus_tree(0.5)
    map_support = dict(zip(map_tree.clusters(), [post.marginal(c) for c in map_tree.clusters()]))
    map_cred = log_credibility(map_tree.to_nested(), map_support, post.n)
    return (
        f"{post.n} iris flowers ({points}), hcc, beta = {beta:g}",
        names,
        [
            (map_tree.to_nested(), map_support, f"MAP tree (log credibility {map_cred:.1f})"),
            (mcc.to_nested(), mcc.support, f"MCC tree (log credibility {mcc.log_credibility:.1f})"),
            (consensus.to_nested(), consensus.support, "majority-rule consensus (p > 0.5)"),
        ],
    )


def cli_json(cli, *args):
    """The JSON lines of one `trellis` command, as a list."""
    out = subprocess.run([cli, "-q", *args], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def jet_row(cli, seed, index):
    """The same three trees of one simulated jet's Ginkgo posterior, by the CLI."""
    with tempfile.TemporaryDirectory() as tmp:
        jets = Path(tmp) / "jets.json"
        gen = subprocess.run(
            [cli, "ginkgo", "generate", "--preset", "w", "--n-jets", str(index + 1), "--min-leaves", "10",
             "--max-leaves", "11", "--seed", str(seed)],
            check=True, capture_output=True, text=True,
        ).stdout
        jets.write_text(gen)
        base = ["--model", "ginkgo", "--jets", str(jets)]
        pick = lambda lines: lines[index]  # noqa: E731 - one line per jet, in order
        map_line = pick(cli_json(cli, "map", *base, "--json"))
        marg = pick(cli_json(cli, "marginals", *base, "--json", "--min-p", "0"))
        mcc = pick(cli_json(cli, "summary", *base, "--kind", "mcc", "--json"))
        cons = pick(cli_json(cli, "summary", *base, "--kind", "consensus", "--json"))
    n = map_line["n"]
    support = {tuple(sorted(c["members"])): c["p"] for c in marg["clusters"]}
    mcc_support = {tuple(c["members"]): c["p"] for c in mcc["clusters"]}
    cons_support = {tuple(c["members"]): c["p"] for c in cons["clusters"]}
    map_cred = log_credibility(map_line["tree"], support, n)
    return (
        f"jet {map_line['id']} ({n} particles; trellis ginkgo generate --preset w --seed {seed}, jet {index}), "
        "Ginkgo likelihood",
        None,
        [
            (map_line["tree"], support, f"MAP tree (log credibility {map_cred:.1f})"),
            (mcc["tree"], mcc_support, f"MCC tree (log credibility {mcc['log_credibility']:.1f})"),
            (cons["tree"], cons_support, "majority-rule consensus (p > 0.5)"),
        ],
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", default="examples/iris18.csv")
    ap.add_argument("--beta", type=float, default=4.0)
    ap.add_argument("--cli", default="target/release/trellis", help="the trellis command (for the jet)")
    ap.add_argument("--jet-seed", type=int, default=7)
    ap.add_argument("--jet-index", type=int, default=1)
    ap.add_argument("--out", default="docs/figures/summaries.svg")
    a = ap.parse_args()
    rows = [iris_row(a.points, a.beta), jet_row(a.cli, a.jet_seed, a.jet_index)]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.6))
    for r, (title, names, trees) in enumerate(rows):
        for c, (nested, support, sub) in enumerate(trees):
            draw(axes[r, c], nested, support, names, sub)
        label = axes[r, 0].annotate(title, xy=(0, 1.12), xycoords="axes fraction", fontsize=10,
                                    fontweight="bold")
        label.set_in_layout(False)  # a row's title must not squeeze its first panel
    fig.suptitle("MAP, MCC and majority-rule consensus trees: each cluster labelled with its exact marginal",
                 fontsize=11)
    fig.tight_layout(h_pad=3.0, rect=(0, 0, 1, 0.95))
    fig.savefig(a.out, metadata={"Date": None})
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
