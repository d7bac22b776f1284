"""trellis.jets against the CLI built from this checkout, awkward input, bad
input, pickling and Dask."""

import json
import pickle

import numpy as np
import pytest

import trellis
from trellis import jets

COMMANDS = {"exact": "map", "greedy": "greedy", "beam": "beam", "astar": "astar"}
MODELS = {"current": "ginkgo", "legacy": "ginkgo-legacy"}


def lines(text):
    return [json.loads(x) for x in text.splitlines() if x.strip()]


@pytest.fixture(scope="module")
def small(ginkgo_dir):
    return ginkgo_dir / "ginkgo_small.json"


@pytest.mark.parametrize("likelihood", ["current", "legacy"])
@pytest.mark.parametrize("method", ["exact", "greedy", "beam", "astar"])
def test_equals_cli(run_cli, small, method, likelihood):
    cli = lines(run_cli(COMMANDS[method], "--jets", small, "--model", MODELS[likelihood]))
    ours = jets.cluster(jets.load(small), method=method, likelihood=likelihood)
    assert len(ours) == len(cli) == 100
    for r, c in zip(ours, cli):
        assert r.id == c["id"]
        assert r.log_likelihood == c["log_potential"]
        assert r.tree == trellis.Tree.from_nested(c["tree"])
        assert r.tree.to_nested() == c["tree"]
        assert (r.log_z is None) == (method != "exact")


def test_log_z_equals_cli(run_cli, small):
    cli = lines(run_cli("logz", "--jets", small, "--model", "ginkgo"))
    ours = jets.cluster(small, method="exact")
    assert [r.log_z for r in ours] == [c["log_z"] for c in cli]


def test_greedy_on_large_jets_equals_cli(run_cli, ginkgo_dir):
    path = ginkgo_dir / "ginkgo_large.json"
    cli = lines(run_cli("greedy", "--jets", path, "--model", "ginkgo"))
    ours = jets.cluster(jets.load(path), method="greedy", n_jobs=2)
    assert [r.log_likelihood for r in ours] == [c["log_potential"] for c in cli]
    assert [r.tree.to_nested() for r in ours] == [c["tree"] for c in cli]


def test_simulate_equals_cli_generate(run_cli, tmp_path):
    path = tmp_path / "gen.json"
    path.write_text(run_cli("ginkgo", "generate", "--n-jets", 30, "--min-leaves", 4,
                            "--max-leaves", 8, "--seed", 5, "--preset", "w"))
    a, b = jets.simulate(30, 4, 8, seed=5, preset="w"), jets.load(path)
    assert a.ids == b.ids
    # JSON text loses the last bit of some numbers (serde_json's parser is
    # not correctly rounded), so the file's leaves may differ by an ulp.
    np.testing.assert_allclose(a.leaves, b.leaves, rtol=4e-16, atol=0)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.params, b.params)
    assert a.truth == b.truth
    counts = np.diff(a.offsets)
    assert counts.min() >= 4 and counts.max() <= 8


def test_arrays_default_params_and_slicing(small):
    js = jets.load(small)
    assert np.all(js.params == [1.5, 1.5, 16.0])  # the qcd preset, as DEFAULT_PARAMS
    from_file = jets.cluster(js[10:30])
    from_arrays = jets.cluster([js[k] for k in range(10, 30)])
    explicit = jets.cluster(list(js)[10:30], params={"lambda": 1.5, "lambda_root": 1.5, "delta_min": 16.0})
    assert [r.id for r in from_arrays] == [str(k) for k in range(20)]
    for a, b, c in zip(from_file, from_arrays, explicit):
        assert a.log_likelihood == b.log_likelihood == c.log_likelihood
        assert a.log_z == b.log_z == c.log_z
        assert a.tree == b.tree == c.tree
    # Other parameters change the answer.
    other = jets.cluster(list(js)[10:30], params={"lambda": 3.0, "lambda_root": 1.5, "delta_min": 16.0})
    assert [a.log_z for a in other] != [a.log_z for a in from_file]


def test_awkward_both_coords(small):
    ak = pytest.importorskip("awkward")
    js = jets.load(small)[:40]
    ref = jets.cluster(js)
    epxpypz = ak.Array([[{"E": p[0], "px": p[1], "py": p[2], "pz": p[3]} for p in jet] for jet in js])
    got = jets.cluster(epxpypz, coords="EPxPyPz")
    for a, b in zip(ref, got):
        assert a.log_likelihood == b.log_likelihood and a.log_z == b.log_z and a.tree == b.tree
    records = []
    for jet in js:
        e, px, py, pz = jet.T
        pt = np.hypot(px, py)
        m = np.sqrt(np.maximum(e * e - px * px - py * py - pz * pz, 0.0))
        records.append([{"pt": a, "eta": b, "phi": c, "mass": d}
                        for a, b, c, d in zip(pt, np.arcsinh(pz / pt), np.arctan2(py, px), m)])
    got = jets.cluster(ak.Array(records), coords="PtEtaPhiM")
    for a, b in zip(ref, got):
        # The round trip through (pt, eta, phi, m) changes the momenta in the last digits.
        assert b.log_likelihood == pytest.approx(a.log_likelihood, rel=1e-6, abs=1e-6)
        assert b.log_z == pytest.approx(a.log_z, rel=1e-6, abs=1e-6)
        assert a.tree == b.tree
    # Without coords, awkward input is refused: the coordinates are never guessed.
    with pytest.raises(trellis.InputError, match="coords"):
        jets.cluster(epxpypz)
    with pytest.raises(trellis.InputError, match="field"):
        jets.cluster(epxpypz, coords="PtEtaPhiM")


def good():
    return [np.array([[30.3, 11.2, 12.9, 20.0], [22.5, 6.1, 10.0, 14.9], [40.6, 20.0, 17.8, 27.1]])]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: jets.cluster(good(), method="best"), "method"),
        (lambda: jets.cluster(good(), likelihood="new"), "likelihood"),
        (lambda: jets.cluster([np.ones((3, 3))]), r"\(n, 4\)"),
        (lambda: jets.cluster([np.ones((1, 4))]), "at least 2"),
        (lambda: jets.cluster([np.array([[1.0, 2, 0, 0], [5, 1, 1, 1]])]), "unphysical"),
        (lambda: jets.cluster([np.array([[np.nan, 0, 0, 0], [5, 1, 1, 1]])]), "non-finite"),
        (lambda: jets.cluster(good(), params={"lambda": 1.5}), "missing"),
        (lambda: jets.cluster(good(), params={"lambda": 1.5, "lambda_root": 1.5, "delta_min": -1}), "delta_min"),
        (lambda: jets.cluster(good(), coords="XYZ"), "coords"),
        (lambda: jets.cluster({"leaves": 1}), "jets must be"),
        (lambda: jets.cluster([]), "no jets"),
        (lambda: jets.cluster(jets.simulate(2, 4, 5, seed=0), params={"lambda": 1}), "carry their own"),
        (lambda: jets.simulate(3, 6, 5, seed=0), "min_leaves"),
        (lambda: jets.simulate(3, 1, 5, seed=0), "min_leaves"),
        (lambda: jets.simulate(3, 4, 5, seed=0, preset="top"), "preset"),
        (lambda: jets.cluster_many(good(), client=object(), chunk_size=0), "chunk_size"),
        (lambda: jets.cluster(good(), n_jobs=0), "n_jobs"),
    ],
)
def test_bad_input_raises_input_error(call, match):
    with pytest.raises(trellis.InputError, match=match):
        call()


def test_bad_files_and_sizes(tmp_path, ginkgo_dir):
    bad = tmp_path / "bad.json"
    bad.write_text('{"jets": [{"id": "x", "leaves": [[1, 2, 0, 0], [5, 1, 1, 1]], '
                   '"params": {"lambda": 1, "lambda_root": 1, "delta_min": 1}}]}')
    with pytest.raises(trellis.InputError, match="jet x: leaf 0 is unphysical"):
        jets.load(bad)
    bad.write_text("{not json")
    with pytest.raises(trellis.InputError):
        jets.load(bad)
    with pytest.raises(trellis.TrellisError):
        jets.load(tmp_path / "missing.json")
    large = jets.load(ginkgo_dir / "ginkgo_large.json")
    with pytest.raises(trellis.TooLargeError, match="at most 30"):
        jets.cluster(large, method="exact")


def test_results_pickle(small):
    res = jets.cluster(jets.load(small)[:5])
    back = pickle.loads(pickle.dumps(res))
    assert back == res
    for a, b in zip(res, back):
        assert a.tree.heights == b.tree.heights and a.tree.names == b.tree.names
    t = trellis.Tree.from_newick("((a,b),c);")
    u = pickle.loads(pickle.dumps(t))
    assert u == t and u.names == ["a", "b", "c"]
    js = jets.load(small)[:3]
    js2 = pickle.loads(pickle.dumps(js))
    assert js2.ids == js.ids and js2.truth == js.truth


def test_dask_local_cluster_matches_cluster():
    distributed = pytest.importorskip("dask.distributed")
    js = jets.simulate(300, 4, 9, seed=11)
    ref = jets.cluster(js)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as lc, distributed.Client(lc) as client:
        got = jets.cluster_many(js, client=client, chunk_size=37)
        greedy = jets.cluster_many(js, client=client, chunk_size=100, method="greedy")
    assert got == ref
    assert [r.id for r in got] == js.ids
    assert greedy == jets.cluster(js, method="greedy")
    assert jets.cluster_many(js[:20]) == ref[:20]
