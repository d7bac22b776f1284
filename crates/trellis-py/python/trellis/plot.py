"""Pictures of trees and posteriors, drawn with matplotlib.

matplotlib is an optional dependency: ``pip install "trellis-clustering[plot]"``
(from a checkout: ``pip install "./crates/trellis-py[plot]"``). Importing this
module does not need it; calling a function does.

- :func:`dendrogram` draws a tree (or a posterior's MAP tree) with its leaves'
  names and its merge heights, and labels each internal node with its
  **support**: the exact posterior probability of the cluster below it.
- :func:`pairwise` draws the exact pairwise marginals of a flat posterior,
  ``P(i and j in the same cluster)``, as a heat map with the points ordered by
  the MAP partition (the flat paper's Fig. 5).

The notebook displays of :class:`trellis.Tree`, :class:`trellis.HierarchyPosterior`
and :class:`trellis.PartitionPosterior` (``_repr_svg_``, ``_repr_html_``) are
made here too; without matplotlib a tree shows as its text form, and a
posterior's summary shows without its picture.
"""

from __future__ import annotations

import html
import io
from typing import Any, Literal

from ._core import HierarchyPosterior, PartitionPosterior, Tree

__all__ = ["dendrogram", "pairwise"]

#: Posteriors over at most this many points show their top clusters and a
#: picture in a notebook (the outside pass over 20 points takes well under a
#: second; over 25 it takes tens of seconds, which a display must not cost).
DISPLAY_MAX_POINTS = 20

#: How many clusters a posterior's notebook summary lists.
DISPLAY_TOP_CLUSTERS = 10


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "trellis.plot draws with matplotlib, which is not installed: "
            'pip install "trellis-clustering[plot]" (or pip install matplotlib)'
        ) from e
    return plt


def _layout(z: Any, n: int) -> tuple[list[float], list[int], list[list[int]]]:
    """The x position of every node (leaves ``0..n``, merges ``n + k``) with
    the leaves in the order that draws the tree without crossings, that
    order, and the members of every merge."""
    children = {n + k: (int(z[k, 0]), int(z[k, 1])) for k in range(n - 1)}
    order: list[int] = []
    stack = [2 * n - 2] if n > 1 else [0]
    while stack:
        node = stack.pop()
        if node < n:
            order.append(node)
        else:
            a, b = children[node]
            stack.extend((b, a))
    x = [0.0] * (2 * n - 1)
    for position, leaf in enumerate(order):
        x[leaf] = float(position)
    members: list[list[int]] = []
    below: dict[int, list[int]] = {i: [i] for i in range(n)}
    for k in range(n - 1):
        a, b = children[n + k]
        x[n + k] = (x[a] + x[b]) / 2
        below[n + k] = below[a] + below[b]
        members.append(sorted(below[n + k]))
    return x, order, members


def dendrogram(
    tree: Tree | HierarchyPosterior,
    ax: Any = None,
    support: bool | HierarchyPosterior = True,
    heights: Literal["cost", "rank"] | None = None,
    decimals: int = 2,
) -> Any:
    """Draws a tree as a dendrogram, each internal node labelled with its support.

    Parameters
    ----------
    tree : Tree or HierarchyPosterior
        The tree to draw; a posterior draws its MAP tree (``map_tree``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes by default.
    support : bool or HierarchyPosterior, default True
        Label every internal node below the root with the exact posterior
        probability of its cluster. ``True`` takes it from ``tree`` when
        ``tree`` is a posterior (a plain tree then has no labels); a
        :class:`HierarchyPosterior` over the same points labels any tree, for
        example SciPy's greedy tree, by that posterior. ``False``: no labels.
    heights : {"cost", "rank"}, optional
        The merge heights (see :meth:`Tree.to_linkage`): the tree's own heights
        (cumulative costs for a tree from a model) when it has them, else ranks.
    decimals : int, default 2
        Decimals of the support labels.

    Returns
    -------
    matplotlib Axes
        The axes drawn on: leaves along x with their names (or indices),
        merge heights on y.
    """
    posterior = None
    if isinstance(tree, HierarchyPosterior):
        posterior = tree if support is True else None
        tree = tree.map_tree
    if isinstance(support, HierarchyPosterior):
        posterior = support
    if not isinstance(tree, Tree):
        raise TypeError(f"dendrogram draws a Tree or a HierarchyPosterior, not {type(tree).__name__}")
    if posterior is not None and posterior.n != tree.n:
        raise ValueError(
            f"the posterior is over {posterior.n} points and the tree over {tree.n}: "
            "support needs the same points"
        )
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 0.35 * tree.n + 1.5), 3.5))
    n = tree.n
    z = tree.to_linkage(heights)
    x, order, members = _layout(z, n)
    height = [0.0] * n + [float(z[k, 2]) for k in range(n - 1)]
    for k in range(n - 1):
        node, (a, b) = n + k, (int(z[k, 0]), int(z[k, 1]))
        ax.plot(
            [x[a], x[a], x[b], x[b]],
            [height[a], height[node], height[node], height[b]],
            color="0.2",
            linewidth=1.0,
        )
    if posterior is not None:
        for k in range(n - 2):
            p = posterior.marginal(members[k])
            ax.annotate(
                f"{p:.{decimals}f}",
                (x[n + k], height[n + k]),
                textcoords="offset points",
                xytext=(0, 3),
                ha="center",
                fontsize=8,
                color="tab:blue",
            )
    names = tree.names or [str(i) for i in range(n)]
    ax.set_xticks(range(n))
    ax.set_xticklabels([names[i] for i in order], rotation=90 if n > 8 else 0)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylabel("height")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def pairwise(
    posterior: PartitionPosterior,
    ax: Any = None,
    names: list[str] | None = None,
    order: str = "map",
) -> Any:
    """Draws the exact pairwise marginals of a flat posterior as a heat map.

    Parameters
    ----------
    posterior : PartitionPosterior
        The posterior; its :meth:`~PartitionPosterior.pairwise_marginals` are drawn.
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes by default.
    names : list of str, optional
        The points' names for the axes (default: their indices).
    order : {"map", "input"}, default "map"
        ``"map"`` groups the points by the MAP partition's clusters (largest
        first), so that its blocks show on the diagonal; ``"input"`` keeps the
        points in their order.

    Returns
    -------
    matplotlib Axes
        The axes, with a colour bar of ``P(i, j together)`` from 0 to 1.
    """
    if not isinstance(posterior, PartitionPosterior):
        raise TypeError(f"pairwise draws a PartitionPosterior, not {type(posterior).__name__}")
    n = posterior.n
    if names is not None and len(names) != n:
        raise ValueError(f"{len(names)} names for {n} points")
    if order not in ("map", "input"):
        raise ValueError(f'order must be "map" or "input", not {order!r}')
    plt = _pyplot()
    p = posterior.pairwise_marginals()
    index = list(range(n))
    if order == "map":
        labels = [int(v) for v in posterior.map_labels]
        size = {c: labels.count(c) for c in set(labels)}
        index.sort(key=lambda i: (-size[labels[i]], labels[i], i))
    if ax is None:
        _, ax = plt.subplots(figsize=(max(3.5, 0.3 * n + 2), max(3.0, 0.3 * n + 1.5)))
    image = ax.imshow(p[index][:, index], vmin=0.0, vmax=1.0, cmap="viridis")
    ax.figure.colorbar(image, ax=ax, label="P(i, j in one cluster)")
    labels_text = [(names[i] if names else str(i)) for i in index]
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels(labels_text, rotation=90 if n > 8 else 0)
    ax.set_yticklabels(labels_text)
    return ax


def _svg(draw: Any) -> str | None:
    """The SVG text of a figure drawn by ``draw(ax)``, or None without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    # A figure without pyplot: no backend is chosen, no window opens.
    figure = Figure()
    ax = figure.subplots()
    draw(ax)
    n = len(ax.get_xticks())
    figure.set_size_inches(max(4.0, 0.35 * n + 1.5), max(3.5, 0.3 * n + 1.0))
    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    return buffer.getvalue()


def tree_svg(tree: Tree) -> str | None:
    """``Tree._repr_svg_``: the dendrogram (no support: a tree alone has none)."""
    if tree.n < 2:
        return None
    return _svg(lambda ax: dendrogram(tree, ax=ax, support=False))


def _cluster_rows(clusters: list[tuple[tuple[int, ...], float]], n: int, names: list[str] | None) -> str:
    shown = [(c, p) for c, p in clusters if 1 < len(c) < n]
    shown.sort(key=lambda cp: (-cp[1], len(cp[0]), cp[0]))
    rows = []
    for members, p in shown[:DISPLAY_TOP_CLUSTERS]:
        label = ", ".join(names[i] if names else str(i) for i in members)
        rows.append(f"<tr><td>{p:.4f}</td><td>{html.escape(label)}</td></tr>")
    return "".join(rows)


def _table(facts: list[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{html.escape(v)}</td></tr>" for k, v in facts)
    return f"<table>{cells}</table>"


def hierarchy_html(posterior: HierarchyPosterior) -> str:
    """``HierarchyPosterior._repr_html_``: its size, log Z and MAP tree, and (at
    most :data:`DISPLAY_MAX_POINTS` points) the most probable clusters and the
    MAP tree drawn with support."""
    tree = posterior.map_tree
    facts = [
        ("points", str(posterior.n)),
        ("log Z", f"{posterior.log_z:.6g}"),
        ("hierarchies", f"{posterior.num_trees:.3e}" if posterior.num_trees > 10**6 else str(posterior.num_trees)),
        ("MAP cost", f"{posterior.map_cost:.6g}"),
        ("MAP log potential", f"{posterior.map_log_potential:.6g}"),
        ("MAP tree", tree.to_newick(lengths=False)),
    ]
    parts = ["<div><strong>HierarchyPosterior</strong>", _table(facts)]
    if posterior.n <= DISPLAY_MAX_POINTS:
        rows = _cluster_rows(posterior.cluster_marginals(min_p=0.0), posterior.n, tree.names)
        if rows:
            parts.append(f"<table><tr><th>p</th><th>most probable clusters</th></tr>{rows}</table>")
        if posterior.n >= 2:
            svg = _svg(lambda ax: dendrogram(posterior, ax=ax))
            if svg is not None:
                parts.append(svg[svg.index("<svg") :])
    else:
        parts.append(
            f"<p>(over {DISPLAY_MAX_POINTS} points the summary leaves out the clusters: "
            "call cluster_marginals() and trellis.plot.dendrogram(posterior))</p>"
        )
    return "".join(parts) + "</div>"


def partition_html(posterior: PartitionPosterior) -> str:
    """``PartitionPosterior._repr_html_``: its size, log Z and MAP partition,
    and (at most :data:`DISPLAY_MAX_POINTS` points) the most probable clusters
    and the pairwise heat map."""
    labels = [int(v) for v in posterior.map_labels]
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(labels):
        groups.setdefault(c, []).append(i)
    partition = " | ".join(" ".join(map(str, g)) for g in groups.values())
    facts = [
        ("points", str(posterior.n)),
        ("log Z", f"{posterior.log_z:.6g}"),
        ("partitions", str(posterior.num_partitions)),
        ("MAP log energy", f"{posterior.map_log_energy:.6g}"),
        ("MAP partition", partition),
    ]
    parts = ["<div><strong>PartitionPosterior</strong>", _table(facts)]
    if posterior.n <= DISPLAY_MAX_POINTS:
        rows = _cluster_rows(posterior.cluster_marginals(min_p=0.0), posterior.n, None)
        if rows:
            parts.append(f"<table><tr><th>p</th><th>most probable clusters</th></tr>{rows}</table>")
        svg = _svg(lambda ax: pairwise(posterior, ax=ax))
        if svg is not None:
            parts.append(svg[svg.index("<svg") :])
    return "".join(parts) + "</div>"
