//! Issue 22, class 5: finite inputs are not refused with internal messages.
//! Linkage heights are homogeneous in the distances over the whole range of
//! `f64` (Ward and average near 1e306 used to fail with "the height inf");
//! Euclidean distances of points near 1e200 are finite (they were reported as
//! "non-finite value at row 0, column 1"); approximate A* runs on the weights
//! `map` accepts (its Ward initial tree overflowed). Where the true answer
//! exceeds `f64`, the refusal names the quantity and by how much to divide.

use std::path::PathBuf;

use trellis::astar::{ApproxOptions, approximate};
use trellis::baselines::{Linkage, euclidean_distances, linkage_steps};
use trellis::{Dasgupta, ErrorKind, Hcc, Matrix, Options, Similarity, Trellis, Weights, tree_cost};

const METHODS: [Linkage; 7] = Linkage::ALL;

fn temp_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("issue22_range_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A deterministic uniform generator in [0, 1).
struct Gen(u64);

impl Gen {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` random points in `d` dimensions, coordinates in [-1, 1).
fn points(n: usize, d: usize, seed: u64) -> Matrix {
    let mut g = Gen(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let rows = (0..n)
        .map(|_| (0..d).map(|_| 2.0 * g.unit() - 1.0).collect())
        .collect();
    Matrix::from_rows(rows).unwrap()
}

/// The textbook Lance-Williams recurrences (SciPy's expressions), without
/// any scaling, in SciPy's nearest-neighbour chain (which all four methods
/// use but single linkage, whose heights are the same input distances
/// either way): the reference heights for ordinary magnitudes, sorted.
fn textbook(dist: &[f64], n: usize, method: Linkage) -> Vec<f64> {
    let mut d = dist.to_vec();
    let mut size = vec![1usize; n];
    let mut chain: Vec<usize> = Vec::new();
    let mut heights = Vec::new();
    for _ in 0..n - 1 {
        if chain.is_empty() {
            chain.push(size.iter().position(|&s| s > 0).unwrap());
        }
        let (x, y, dxy) = loop {
            let x = *chain.last().unwrap();
            let prev = (chain.len() > 1).then(|| chain[chain.len() - 2]);
            // (Without a previous link, the first live cluster: the same
            // choice as SciPy's start at infinity, and one also when the
            // distances overflowed.)
            let start = prev.unwrap_or_else(|| (0..n).find(|&i| size[i] > 0 && i != x).unwrap());
            let (mut y, mut best) = (start, d[x * n + start]);
            for i in (0..n).filter(|&i| size[i] > 0 && i != x) {
                if d[x * n + i] < best {
                    (y, best) = (i, d[x * n + i]);
                }
            }
            if prev == Some(y) {
                break (x.min(y), x.max(y), best);
            }
            chain.push(y);
        };
        chain.truncate(chain.len() - 2);
        let (nx, ny) = (size[x] as f64, size[y] as f64);
        size[y] += size[x];
        size[x] = 0;
        for i in (0..n).filter(|&i| size[i] > 0 && i != y) {
            let (dxi, dyi, ni) = (d[i * n + x], d[i * n + y], size[i] as f64);
            let v = match method {
                Linkage::Single => dxi.min(dyi),
                Linkage::Complete => dxi.max(dyi),
                Linkage::Average => (nx * dxi + ny * dyi) / (nx + ny),
                Linkage::Ward => {
                    let t = 1.0 / (nx + ny + ni);
                    ((ni + nx) * t * dxi * dxi + (ni + ny) * t * dyi * dyi - ni * t * dxy * dxy)
                        .sqrt()
                }
                other => unreachable!("{other:?}"),
            };
            d[i * n + y] = v;
            d[y * n + i] = v;
        }
        heights.push(dxy);
    }
    heights.sort_by(|a, b| a.partial_cmp(b).unwrap());
    heights
}

fn heights(dist: &[f64], n: usize, method: Linkage) -> Vec<f64> {
    linkage_steps(dist, n, method)
        .unwrap_or_else(|e| panic!("{method:?}: {e}"))
        .iter()
        .map(|s| s.height)
        .collect()
}

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!(x.is_finite() && y.is_finite(), "{what}: {a:?} vs {b:?}");
        assert!(
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
            "{what}: {a:?} vs {b:?}"
        );
    }
}

#[test]
fn issue22_linkage_heights_are_homogeneous_over_the_range_of_f64() {
    for seed in 0..12u64 {
        let n = 5 + (seed as usize % 8);
        let p = points(n, 3, seed);
        let d = euclidean_distances(&p).unwrap();
        for method in METHODS {
            let base = heights(&d, n, method);
            // Ordinary magnitudes: SciPy's recurrence, to the bit (the
            // other three methods' updates are checked against SciPy's
            // expressions in the library's unit tests).
            if matches!(
                method,
                Linkage::Single | Linkage::Average | Linkage::Complete | Linkage::Ward
            ) {
                assert_eq!(base, textbook(&d, n, method), "{method:?} seed {seed}");
            }
            for c in [1e300, 3e306, 1e307, 1e-300, 1e-310, 1e160, 1e-160] {
                let scaled: Vec<f64> = d.iter().map(|v| v * c).collect();
                let expected: Vec<f64> = base.iter().map(|h| h * c).collect();
                let got = heights(&scaled, n, method);
                // Subnormal inputs (1e-310) keep only a few digits.
                if c < 1e-307 {
                    for (g, e) in got.iter().zip(&expected) {
                        assert!(
                            (g - e).abs() <= 1e-3 * e.abs(),
                            "{method:?} c {c}: {g} vs {e}"
                        );
                    }
                } else {
                    assert_close(&got, &expected, &format!("{method:?} c {c} seed {seed}"));
                }
                // And the same merges (but for subnormal inputs, whose few
                // bits can tie distances).
                if c < 1e-307 {
                    continue;
                }
                let a: Vec<_> = linkage_steps(&scaled, n, method)
                    .unwrap()
                    .iter()
                    .map(|s| (s.left, s.right))
                    .collect();
                let b: Vec<_> = linkage_steps(&d, n, method)
                    .unwrap()
                    .iter()
                    .map(|s| (s.left, s.right))
                    .collect();
                assert_eq!(a, b, "{method:?} c {c} seed {seed}");
            }
        }
    }
}

#[test]
fn issue22_average_linkage_of_many_points_near_1e307() {
    // Clusters of 20 and more: n_i d_mi overflowed in the textbook form.
    let n = 60;
    let p = points(n, 2, 7);
    let d = euclidean_distances(&p).unwrap();
    let big: Vec<f64> = d.iter().map(|v| v * 5e306).collect();
    assert!(
        textbook(&big, n, Linkage::Average)
            .iter()
            .any(|h| !h.is_finite())
    );
    let expected: Vec<f64> = heights(&d, n, Linkage::Average)
        .iter()
        .map(|h| h * 5e306)
        .collect();
    assert_close(&heights(&big, n, Linkage::Average), &expected, "average");
}

#[test]
fn issue22_ward_heights_beyond_f64_are_refused_with_the_divisor() {
    // Two groups of five on a line: Ward's root height is √5 times the
    // largest distance.
    let x = [0.0f64, 0.01, 0.02, 0.03, 0.04, 1.0, 1.01, 1.02, 1.03, 1.04];
    let n = x.len();
    let d: Vec<f64> = x
        .iter()
        .flat_map(|a| x.iter().map(move |b| (a - b).abs() * 1e308))
        .collect();
    let e = linkage_steps(&d, n, Linkage::Ward).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Parameter { .. }), "{e}");
    let text = e.to_string();
    for needle in [
        "Ward linkage's merge height of clusters 16 and 17 (merge 8, 0-based) overflows",
        "about 2.24e308",
        "divide them by at least 1.25",
        "to at most 8.31e307",
    ] {
        assert!(text.contains(needle), "{text}");
    }
    // Divided by the suggested factor, it runs, and its root is finite.
    let ok: Vec<f64> = d.iter().map(|v| v / 1.25).collect();
    let h = heights(&ok, n, Linkage::Ward);
    assert!(h[n - 2] > 1.7e308 && h[n - 2].is_finite(), "{h:?}");
    // The other methods never exceed the largest distance.
    for method in [Linkage::Single, Linkage::Average, Linkage::Complete] {
        assert!(heights(&d, n, method).iter().all(|h| h.is_finite()));
    }
}

#[test]
fn issue22_euclidean_distances_of_points_near_1e200_and_1e300() {
    let p = points(7, 4, 3);
    let base = euclidean_distances(&p).unwrap();
    for c in [1e200, 1e300, 1e-200, 1e-300] {
        let scaled = Matrix {
            rows: p.rows,
            cols: p.cols,
            data: p.data.iter().map(|v| v * c).collect(),
        };
        let expected: Vec<f64> = base.iter().map(|v| v * c).collect();
        assert_close(
            &euclidean_distances(&scaled).unwrap(),
            &expected,
            "euclidean",
        );
        // Their linkage is the unscaled one, times c.
        for method in METHODS {
            let d = euclidean_distances(&scaled).unwrap();
            let want: Vec<f64> = heights(&base, 7, method).iter().map(|h| h * c).collect();
            assert_close(&heights(&d, 7, method), &want, &format!("{method:?} {c}"));
        }
    }
    // Read from a file, as the command does.
    let dir = temp_dir("points");
    let path = dir.join("p200.csv");
    let text: String = (0..p.rows)
        .map(|i| {
            p.row(i)
                .iter()
                .map(|v| format!("{:e}", v * 1e200))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    let m = trellis::io::read_matrix(&path, true).unwrap();
    assert!(
        euclidean_distances(&m)
            .unwrap()
            .iter()
            .all(|v| v.is_finite())
    );
    // A true distance beyond f64::MAX: named, with the divisor.
    let far = Matrix::from_rows(vec![vec![1.5e308], vec![0.0], vec![-1.5e308]]).unwrap();
    let e = euclidean_distances(&far).unwrap_err().to_string();
    assert!(
        e.contains("the Euclidean distance between points 0 and 2 (0-based) overflows"),
        "{e}"
    );
    assert!(
        e.contains("about 3e308") && e.contains("divide them by at least 1.67"),
        "{e}"
    );
    let ok =
        Matrix::from_rows(vec![vec![1.5e308 / 1.67], vec![0.0], vec![-1.5e308 / 1.67]]).unwrap();
    assert!(euclidean_distances(&ok).unwrap()[2] > 1.79e308);
}

#[test]
fn issue22_similarities_of_points_near_1e200() {
    let p = points(5, 3, 11);
    let big = Matrix {
        rows: p.rows,
        cols: p.cols,
        data: p.data.iter().map(|v| v * 1e200).collect(),
    };
    // RBF and exp(-|x - y|) vanish (their true values underflow), no error.
    for s in [Similarity::Rbf { gamma: 1e-300 }, Similarity::ExpNeg] {
        let w = Weights::from_points(&big, s, false).unwrap();
        assert!((0..5).all(|i| w.row(i).iter().all(|v| *v == 0.0)), "{s:?}");
    }
    // The smallest γ on points near 1e162: |x - y|² overflows, but
    // γ |x - y|² is near 1, a similarity strictly between 0 and 1.
    let mid = Matrix {
        rows: p.rows,
        cols: p.cols,
        data: p.data.iter().map(|v| v * 1e162).collect(),
    };
    let gamma = f64::from_bits(1);
    let w = Weights::from_points(&mid, Similarity::Rbf { gamma }, false).unwrap();
    let d = euclidean_distances(&mid).unwrap();
    assert!((d[1] * d[1]).is_infinite());
    let want = (-(gamma * d[1]) * d[1]).exp();
    assert!(want > 0.0 && want < 1.0, "{want}");
    assert!(
        (w.get(0, 1) - want).abs() <= 1e-12,
        "{} vs {want}",
        w.get(0, 1)
    );
    // Dot products near 1e306 do not overflow in their partial sums.
    let near = Matrix::from_rows(vec![vec![1e200, 1e200], vec![1e200, -1e200]]).unwrap();
    let w = Weights::from_points(&near, Similarity::Dot, false).unwrap();
    assert_eq!(w.get(0, 1), 0.0);
    // Beyond f64: named, with the divisor of the coordinates (a square root).
    let e = Weights::from_points(&big, Similarity::Dot, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the dot product of points") && e.contains("overflows"),
        "{e}"
    );
    assert!(e.contains("divide them by at least"), "{e}");
}

#[test]
fn issue22_model_range_refusals_say_how_far_to_divide() {
    let n = 6;
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| if i == j { 0.0 } else { 1e306 }).collect())
        .collect();
    let w = Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
    let e = Dasgupta::new(&w, 1.0).unwrap_err().to_string();
    assert!(e.contains("divide the weights by at least"), "{e}");
    let small =
        Weights::from_matrix(&Matrix::from_rows(vec![vec![0.0, 1e300], vec![1e300, 0.0]]).unwrap())
            .unwrap();
    let e = Hcc::new(&small, 1e10).unwrap_err().to_string();
    assert!(e.contains("use a beta of at most"), "{e}");
}

/// Weights `map` accepts, from 1e-300 to 1e300: approximate A* runs on them
/// (its Ward initial tree overflowed at 1e200) and never does worse than
/// the initial trees; its costs scale with the weights.
#[allow(clippy::needless_range_loop)]
#[test]
fn issue22_approximate_astar_on_the_weights_map_accepts() {
    let n = 9;
    let mut g = Gen(99);
    let mut rows = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let v = 2.0 * g.unit() - 1.0;
            rows[i][j] = v;
            rows[j][i] = v;
        }
    }
    for c in [1e-300, 1e200, 1e300] {
        let scaled: Vec<Vec<f64>> = rows
            .iter()
            .map(|r| r.iter().map(|v| v * c).collect())
            .collect();
        let w = Weights::from_matrix(&Matrix::from_rows(scaled).unwrap()).unwrap();
        for beta in [1e-300, 1.0] {
            let model = Hcc::new(&w, beta).unwrap();
            // The MAP tree at β = 1 (at β = 1e-300 all log-potentials of
            // tiny weights round to 0 and every tree ties).
            let unit = Hcc::new(&w, 1.0).unwrap();
            let map = Trellis::new(&unit).unwrap().map().tree.clone();
            let best = tree_cost(&model, &map).unwrap();
            assert!(best.is_finite());
            let d = trellis::baselines::distances_from_similarities(&w);
            let init: Vec<_> = METHODS
                .iter()
                .map(|&m| trellis::baselines::linkage(&d, n, m).unwrap())
                .collect();
            let out = approximate(
                &model,
                &init,
                &ApproxOptions::default(),
                &Options::default(),
            )
            .unwrap_or_else(|e| panic!("c {c} beta {beta}: {e}"));
            assert!(out.cost.is_finite() && out.cost >= best * (1.0 - 1e-12));
            for t in &init {
                assert!(out.cost <= tree_cost(&model, t).unwrap());
            }
        }
        // A heuristic weight whose product with H(root) overflows: refused,
        // with the largest weight that works, which runs.
        let model = Hcc::new(&w, 1.0).unwrap();
        let d = trellis::baselines::distances_from_similarities(&w);
        let init = vec![trellis::baselines::linkage(&d, n, Linkage::Average).unwrap()];
        let big = ApproxOptions {
            weight: Some(1e300),
            ..ApproxOptions::default()
        };
        if c >= 1e200 {
            let e = approximate(&model, &init, &big, &Options::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains("use a weight of at most"), "{e}");
            let at_most: f64 = e.rsplit("at most ").next().unwrap().parse().unwrap();
            let ok = ApproxOptions {
                weight: Some(at_most),
                ..ApproxOptions::default()
            };
            assert!(approximate(&model, &init, &ok, &Options::default()).is_ok());
        } else {
            assert!(approximate(&model, &init, &big, &Options::default()).is_ok());
        }
    }
}
