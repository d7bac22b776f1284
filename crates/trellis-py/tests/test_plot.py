"""Issue 23: pictures (trellis.plot) and the notebook displays of trees and posteriors."""

import subprocess
import sys

import numpy as np
import pytest

import trellis

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trellis import plot  # noqa: E402


def weights(n, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n, n))
    return (w + w.T) / 2


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def merges(tree):
    """The members of every merge of a tree's linkage matrix, in row order."""
    z = tree.to_linkage()
    n = tree.n
    below = {i: [i] for i in range(n)}
    out = []
    for k in range(n - 1):
        below[n + k] = below[int(z[k, 0])] + below[int(z[k, 1])]
        out.append(sorted(below[n + k]))
    return out


def test_dendrogram_of_a_posterior_draws_the_map_tree_with_its_support():
    names = [f"p{i}" for i in range(7)]
    post = trellis.exact_hierarchy(weights(7, 1), beta=2.0, names=names)
    tree = post.map_tree
    ax = plot.dendrogram(post)
    # One ⊓ per merge, at the linkage matrix's heights, between the children's positions.
    z = tree.to_linkage()
    assert len(ax.lines) == 6
    for line, row in zip(ax.lines, z):
        ys = line.get_ydata()
        assert ys[1] == ys[2] == row[2]
    # The leaves along x, named, in an order that draws the tree without
    # crossings: every cluster's leaves are side by side.
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert sorted(labels) == names
    position = {name: x for x, name in enumerate(labels)}
    for members in merges(tree):
        xs = sorted(position[names[i]] for i in members)
        assert xs == list(range(xs[0], xs[0] + len(xs)))
    # Every internal node below the root carries its exact marginal.
    texts = sorted(t.get_text() for t in ax.texts)
    expected = sorted(f"{post.marginal(m):.2f}" for m in merges(tree)[:-1])
    assert texts == expected
    assert len(texts) == 5


def test_support_of_another_tree_comes_from_the_posterior_given():
    d = np.abs(weights(6, 2))
    np.fill_diagonal(d, 0)
    post = trellis.exact_hierarchy(distances=d, model="linkage-average", beta=3.0)
    greedy = trellis.linkage(distances=d, method="average")
    ax = plot.dendrogram(greedy, support=post, decimals=3)
    expected = sorted(f"{post.marginal(m):.3f}" for m in merges(greedy)[:-1])
    assert sorted(t.get_text() for t in ax.texts) == expected
    # A plain tree has no support to show; support=False shows none.
    assert len(plot.dendrogram(greedy).texts) == 0
    assert len(plot.dendrogram(post, support=False).texts) == 0
    other = trellis.exact_hierarchy(weights(5, 3))
    with pytest.raises(ValueError, match="5 points and the tree over 6"):
        plot.dendrogram(greedy, support=other)


def test_pairwise_draws_the_pairwise_marginals_grouped_by_the_map_partition():
    w = weights(8, 4) + 0.3
    post = trellis.exact_partition(w, beta=2.0)
    p = post.pairwise_marginals()
    ax = plot.pairwise(post, names=[f"x{i}" for i in range(8)])
    shown = ax.images[0].get_array()
    order = [int(t.get_text()[1:]) for t in ax.get_xticklabels()]
    assert sorted(order) == list(range(8))
    np.testing.assert_array_equal(np.asarray(shown), p[np.ix_(order, order)])
    labels = post.map_labels[order]
    # Each MAP cluster is one contiguous block.
    changes = sum(1 for a, b in zip(labels, labels[1:]) if a != b)
    assert changes == len(set(labels.tolist())) - 1
    ax = plot.pairwise(post, order="input")
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), p)
    with pytest.raises(ValueError, match="order"):
        plot.pairwise(post, order="size")
    with pytest.raises(ValueError, match="3 names for 8 points"):
        plot.pairwise(post, names=["a", "b", "c"])
    with pytest.raises(TypeError):
        plot.pairwise(trellis.exact_hierarchy(weights(4, 5)))


def test_notebook_displays():
    post = trellis.exact_hierarchy(weights(6, 6), names=list("abcdef"))
    svg = post.map_tree._repr_svg_()
    assert svg is not None and svg.lstrip().startswith("<?xml") and "<svg" in svg
    page = post._repr_html_()
    assert f"{post.log_z:.6g}" in page
    assert "<svg" in page
    # The most probable non-trivial cluster is listed first with its probability.
    clusters = [(c, p) for c, p in post.cluster_marginals() if 1 < len(c) < 6]
    top = max(clusters, key=lambda cp: cp[1])
    assert f"{top[1]:.4f}" in page
    flat = trellis.exact_partition(weights(6, 7))
    page = flat._repr_html_()
    assert f"{flat.log_z:.6g}" in page and "<svg" in page


def test_large_posteriors_show_no_clusters(monkeypatch):
    post = trellis.exact_hierarchy(weights(5, 8))
    monkeypatch.setattr(plot, "DISPLAY_MAX_POINTS", 4)
    page = post._repr_html_()
    assert "<svg" not in page and "most probable clusters" not in page
    assert "cluster_marginals()" in page


def test_without_matplotlib_the_displays_fall_back_and_plot_says_what_to_install():
    code = """
import sys
sys.modules["matplotlib"] = None
import numpy as np, trellis
from trellis import plot
post = trellis.exact_hierarchy(np.ones((4, 4)))
assert post.map_tree._repr_svg_() is None
page = post._repr_html_()
assert "<svg" not in page and "log Z" in page
try:
    plot.dendrogram(post)
except ImportError as e:
    assert "pip install" in str(e), e
else:
    raise AssertionError("no ImportError")
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
