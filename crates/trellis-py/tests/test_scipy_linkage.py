"""Issue 23, item 2: ``trellis.linkage`` is SciPy's ``linkage``, matrix for matrix.

Every comparison is exact equality of the whole linkage matrix (ids, their
column order, heights, sizes, row order) with ``scipy.cluster.hierarchy``
computed live: the seven methods on SciPy's own test fixtures (``ytdist``
and ``X`` of scipy/cluster/tests/hierarchy_test_data.py), and on hundreds of
small integer-grid data sets whose distances tie often, where the order of
merges depends on the tie rules of SciPy's three algorithms. Heights are
compared bit for bit too: the library evaluates SciPy's update expressions
operation for operation (divided by a power of two, which changes no bit).
"""

import pickle

import numpy as np
import pytest

import trellis

hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
distance = pytest.importorskip("scipy.spatial.distance")

METHODS = ["single", "complete", "average", "weighted", "centroid", "median", "ward"]

# SciPy's fixtures (scipy/cluster/tests/hierarchy_test_data.py): a condensed
# vector over 6 points, and 6 points in the plane.
YTDIST = np.array([662.0, 877.0, 255.0, 412.0, 996.0, 295.0, 468.0, 268.0,
                   400.0, 754.0, 564.0, 138.0, 219.0, 869.0, 669.0])
X = np.array([[1.43054825, -7.5693489],
              [6.95887839, 6.82293382],
              [2.87137846, -9.68248579],
              [7.87974764, -6.05485803],
              [8.24018364, -6.09495602],
              [7.39020262, 8.54004355]])

# The matrices SciPy's own tests expect for them (to their printed digits).
EXPECTED_YTDIST = {
    "single": [[2, 5, 138, 2], [3, 4, 219, 2], [0, 7, 255, 3], [1, 8, 268, 4], [6, 9, 295, 6]],
    "complete": [[2, 5, 138, 2], [3, 4, 219, 2], [1, 6, 400, 3], [0, 7, 412, 3], [8, 9, 996, 6]],
    "average": [[2, 5, 138, 2], [3, 4, 219, 2], [0, 7, 333.5, 3], [1, 6, 347.5, 3],
                [8, 9, 680.77777778, 6]],
    "weighted": [[2, 5, 138, 2], [3, 4, 219, 2], [0, 7, 333.5, 3], [1, 6, 347.5, 3],
                 [8, 9, 670.125, 6]],
}
EXPECTED_YTDIST_SINGLE_OLO = [[5, 2, 138, 2], [4, 3, 219, 2], [7, 0, 255, 3], [1, 8, 268, 4],
                              [6, 9, 295, 6]]
EXPECTED_X = {
    "centroid": [[3, 4, 0.36265956, 2], [1, 5, 1.77045373, 2], [0, 2, 2.55760419, 2],
                 [6, 8, 6.43614494, 4], [7, 9, 15.17363237, 6]],
    "median": [[3, 4, 0.36265956, 2], [1, 5, 1.77045373, 2], [0, 2, 2.55760419, 2],
               [6, 8, 6.43614494, 4], [7, 9, 15.17363237, 6]],
    "ward": [[3, 4, 0.36265956, 2], [1, 5, 1.77045373, 2], [0, 2, 2.55760419, 2],
             [6, 8, 9.10208346, 4], [7, 9, 24.7784379, 6]],
}
EXPECTED_X_WARD_OLO = [[4, 3, 0.36265956, 2], [5, 1, 1.77045373, 2], [2, 0, 2.55760419, 2],
                       [6, 8, 9.10208346, 4], [7, 9, 24.7784379, 6]]


def assert_same(ours, scipys, what):
    """The whole matrix, exactly (NumPy's == on float64: bit-equal but the sign of 0)."""
    assert ours.shape == scipys.shape and ours.dtype == np.float64, what
    if not np.array_equal(ours, scipys):
        raise AssertionError(f"{what}:\ntrellis\n{ours}\nscipy\n{scipys}")


@pytest.mark.parametrize("method", METHODS)
def test_scipys_fixtures(method):
    square = distance.squareform(YTDIST)
    expected = hierarchy.linkage(YTDIST, method)
    for given in ({"distances": YTDIST}, {"distances": square}, {"distances": list(YTDIST)}):
        assert_same(trellis.linkage(method=method, **given).to_linkage(), expected, method)
    expected_x = hierarchy.linkage(X, method)
    assert_same(trellis.linkage(points=X, method=method).to_linkage(), expected_x, f"X {method}")
    for ordered in (True,):
        assert_same(
            trellis.linkage(distances=YTDIST, method=method, optimal_ordering=ordered).to_linkage(),
            hierarchy.linkage(YTDIST, method, optimal_ordering=ordered), f"olo {method}")
        assert_same(
            trellis.linkage(points=X, method=method, optimal_ordering=ordered).to_linkage(),
            hierarchy.linkage(X, method, optimal_ordering=ordered), f"X olo {method}")
    # And the values SciPy's tests pin down.
    if method in EXPECTED_YTDIST:
        np.testing.assert_allclose(trellis.linkage(distances=YTDIST, method=method).to_linkage(),
                                   EXPECTED_YTDIST[method], rtol=1e-10)
    if method in EXPECTED_X:
        np.testing.assert_allclose(trellis.linkage(points=X, method=method).to_linkage(),
                                   EXPECTED_X[method], rtol=1e-8)


def test_scipys_optimal_ordering_fixtures():
    np.testing.assert_allclose(
        trellis.linkage(distances=YTDIST, method="single", optimal_ordering=True).to_linkage(),
        EXPECTED_YTDIST_SINGLE_OLO, rtol=1e-10)
    np.testing.assert_allclose(
        trellis.linkage(points=X, method="ward", optimal_ordering=True).to_linkage(),
        EXPECTED_X_WARD_OLO, rtol=1e-8)


def grid_data(seed, max_n=30):
    """Small integer points and a distance with many ties: cityblock,
    squared Euclidean, Chebyshev (whole numbers) or Euclidean (square roots
    of whole numbers, equal exactly when the whole numbers are)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, max_n + 1))
    dim = int(rng.integers(1, 4))
    x = rng.integers(0, 4, size=(n, dim)).astype(np.float64)
    metric = ["cityblock", "sqeuclidean", "chebyshev", "euclidean"][seed % 4]
    return x, distance.pdist(x, metric), metric


SEEDS = range(160)


def has_ties(y):
    return len(np.unique(y)) < len(y)


@pytest.mark.parametrize("method", METHODS)
def test_tied_integer_grids_give_scipys_matrix(method):
    tied_rows = 0
    for seed in SEEDS:
        x, y, metric = grid_data(seed)
        expected = hierarchy.linkage(y, method)
        what = f"{method} seed {seed} ({metric}, n {len(x)})"
        tree = trellis.linkage(distances=y, method=method)
        assert_same(tree.to_linkage(), expected, what)
        # The square matrix gives the same, and so do the points (Euclidean).
        assert_same(trellis.linkage(distances=distance.squareform(y), method=method).to_linkage(),
                    expected, what + " square")
        if metric == "euclidean":
            assert_same(trellis.linkage(points=x, method=method).to_linkage(),
                        hierarchy.linkage(x, method), what + " points")
        # The tree is the matrix's.
        if len(x) > 1:
            assert trellis.Tree.from_linkage(expected) == tree, what
        tied_rows += len(np.unique(expected[:, 2])) < len(expected)
    # The data do exercise the tie rules: most matrices have tied heights.
    assert tied_rows > 0.6 * len(SEEDS), tied_rows


@pytest.mark.parametrize("method", METHODS)
def test_optimal_ordering_is_scipys(method):
    count = 0
    for seed in range(1000, 1000 + 160):
        x, y, metric = grid_data(seed, max_n=18)
        count += 1
        what = f"{method} seed {seed} ({metric}, n {len(x)})"
        expected = hierarchy.linkage(y, method, optimal_ordering=True)
        tree = trellis.linkage(distances=y, method=method, optimal_ordering=True)
        assert_same(tree.to_linkage(), expected, what)
        if len(x) > 1:
            z = trellis.linkage(distances=y, method=method).to_linkage()
            assert_same(tree.to_linkage(), hierarchy.optimal_leaf_ordering(z, y), what)
            # The tree keeps the order of the leaves.
            nested = tree.to_nested()
            flat = []

            def walk(t):
                if isinstance(t, int):
                    flat.append(t)
                else:
                    walk(t[0])
                    walk(t[1])

            walk(nested)
            assert flat == list(hierarchy.leaves_list(expected)), what
    assert count >= 150, count


def test_random_continuous_data_and_the_three_new_methods_inversions():
    inversions = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 40))
        x = rng.normal(size=(n, 3))
        for method in METHODS:
            expected = hierarchy.linkage(x, method)
            tree = trellis.linkage(points=x, method=method)
            assert_same(tree.to_linkage(), expected, f"{method} seed {seed}")
            if not hierarchy.is_monotonic(expected):
                inversions += 1
                assert method in ("centroid", "median")
                # The tree's own heights are made monotone; the matrix is SciPy's.
                assert all(h >= 0 for h in tree.heights)
    assert inversions > 0


def test_condensed_input_checks():
    with pytest.raises(trellis.InputError, match="condensed distance vector .* has 4"):
        trellis.linkage(distances=np.ones(4))
    with pytest.raises(trellis.InputError, match="1-D vector or an \\(n, n\\) matrix, not 3-D"):
        trellis.linkage(distances=np.ones((2, 2, 2)))
    with pytest.raises(trellis.InputError, match=">= 0"):
        trellis.linkage(distances=np.array([1.0, -2.0, 3.0]))
    with pytest.raises(trellis.InputError):
        trellis.linkage(distances=np.array([1.0, np.nan, 3.0]))
    with pytest.raises(trellis.InputError, match="exactly one"):
        trellis.linkage(points=np.ones((3, 2)), distances=np.ones(3))
    with pytest.raises(trellis.InputError, match="optimal_ordering"):
        trellis.linkage(distances=np.ones(3), optimal_ordering="yes")
    with pytest.raises(trellis.InputError, match="weighted"):
        trellis.linkage(distances=np.ones(3), method="medoid")
    # An empty vector is one point; float32 and lists are read as float64.
    one = trellis.linkage(distances=np.array([]))
    assert one.n == 1 and one.to_linkage().shape == (0, 4)
    y = np.array([3, 1, 2], dtype=np.float32)
    assert_same(trellis.linkage(distances=y, method="centroid").to_linkage(),
                hierarchy.linkage(y.astype(np.float64), "centroid"), "float32")


def test_the_matrix_survives_pickling_and_other_heights():
    x, y, _ = grid_data(7)
    tree = trellis.linkage(distances=y, method="median", names=[f"p{i}" for i in range(len(x))])
    back = pickle.loads(pickle.dumps(tree))
    assert_same(back.to_linkage(), tree.to_linkage(), "pickle")
    assert_same(tree.to_linkage(heights="cost"), hierarchy.linkage(y, "median"), "cost")
    ranks = tree.to_linkage(heights="rank")
    assert hierarchy.is_valid_linkage(ranks) and hierarchy.is_monotonic(ranks)
    assert trellis.Tree.from_linkage(ranks) == tree


def test_the_command_prints_scipys_matrix(run_cli, tmp_path):
    """`trellis linkage --linkage` on a condensed vector (one CSV row) and on
    the square matrix: SciPy's matrix, the JSON numbers read back exactly."""
    import json

    for seed in range(2000, 2030):
        x, y, metric = grid_data(seed, max_n=12)
        if len(x) < 3:
            continue  # (one number is the 1 x 1 matrix of one point, not two points)
        condensed = tmp_path / f"y{seed}.csv"
        condensed.write_text(",".join(repr(float(v)) for v in y) + "\n")
        square = tmp_path / f"d{seed}.csv"
        np.savetxt(square, distance.squareform(y), delimiter=",", fmt="%.17g")
        for method in METHODS:
            expected = hierarchy.linkage(y, method)
            for path in (condensed, square):
                out = run_cli("linkage", "--distances", path, "--method", method, "--linkage")
                assert_same(np.array(json.loads(out), dtype=np.float64), expected,
                            f"{method} seed {seed} {path.name}")


def test_the_command_refuses_a_bad_condensed_vector(cli, tmp_path):
    import subprocess

    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,3,4\n")
    out = subprocess.run([cli, "linkage", "--distances", str(bad), "--method", "median"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert "condensed distance vector" in out.stderr and "has 4" in out.stderr, out.stderr
