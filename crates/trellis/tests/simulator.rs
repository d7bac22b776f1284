//! The Ginkgo simulator: exact physics invariants, determinism, the file
//! format, and its distribution against jets of the reference (Python) simulator.
//!
//! # Invariants (exact up to rounding)
//!
//! 4-momentum is conserved at every split (the boost is linear and the two
//! rest-frame children sum to `(m, 0)`), so the leaves sum to the jet
//! 4-momentum; every leaf stopped because `t <= t_cut`; every internal node
//! decayed because `t > t_cut`; and the truth tree is possible under the
//! current likelihood. Masses are recomputed from (sums of) leaf momenta, so
//! they carry rounding: `t = E² - |p|²` of a sum of at most `N` vectors, each
//! the product of at most `D` (depth) boosts, is off by about
//! `4 (D + N) ε E²` (`ε = 2⁻⁵²`); with `D, N <= 60` here a tolerance of
//! `1024 ε E²` (2e-8 for `E ≈ 400`) covers it.
//!
//! # Distribution tests
//!
//! The reference datasets (`shared/data/ginkgo`) were made by ONE simulator
//! call per seed, so their `meta` leaf-count histograms of all tried jets are
//! i.i.d. samples of `N`; the jets kept per `N` are i.i.d. given `N`.
//!
//! **Leaf counts: two-sample chi-square.** Reference counts `a_i` (total `n`),
//! ours `b_i` (total `M`, unconditioned jets). The bins are merged (adjacent
//! leaf counts, from our sample only, so the grouping does not look at the
//! reference) until each has an expected reference count `n b_i / M >= 5`.
//! Under H0 (same distribution),
//! `X² = Σ_i (√(M/n) a_i - √(n/M) b_i)² / (a_i + b_i)` is asymptotically
//! `χ²(B - 1)` for `B` bins; we reject when its p-value is below `α = 1e-6`.
//! The reference histograms lump the counts outside the simulator's window
//! (`-1`); the window is not stored, we take it as the range of the dataset's
//! targets (`4..=12` small, `14..=32` large a, `44..=56` large b): the
//! histogram keys are exactly those ranges.
//!
//! **Truth log-likelihood at fixed `N`: one-sample KS with a reference-CDF
//! slack.** For `N` fixed, let `F_N` be the CDF of the truth tree's current
//! log-likelihood. We estimate it by the empirical `F̂_N` of `M_N` of our jets
//! with that `N`. By the DKW inequality (Massart's constant),
//! `sup |F̂_N - F_N| <= ε_N = √(ln(2/δ) / (2 M_N))` with probability `>= 1 - δ`.
//! The `n` reference values give `D = sup |G_n - F̂_N|` (`G_n` their empirical
//! CDF), and `D >= d` has probability at most `P(D_n >= d - ε_N)` under H0,
//! where `D_n` is the one-sample Kolmogorov statistic, whose exact distribution
//! we compute (Marsaglia, Tsang & Wang 2003). So we reject when
//! `P(D_n >= D - ε_N) < α = 1e-3`; the false-rejection probability is at most
//! `α + δ` (`δ = 1e-6`). This is the two-sample KS test made exact for
//! `M >> n` (the asymptotic two-sample critical value
//! `c(α) √((n + M)/(n M))`, `c(1e-3) = 1.949`, is printed too).
//! Pooling all `N`: under H0 the values `u_i = F_{N_i}(x_i)` of the 100
//! reference jets are i.i.d. uniform (probability integral transform, jets
//! independent, `F_N` continuous); we use `û_i = F̂_{N_i}(x_i)`, off by at most
//! `max_N ε_N` (union bound over the 9 strata, `δ` each), and the same test
//! against the uniform CDF with `n = 100`.
//!
//! **Mean at fixed `N`.** `z = (x̄ - μ_N) / √(σ_N² / n + σ_N² / M_N)`, with
//! `μ_N, σ_N` from our jets; `|z| <= 3.29` (two-sided normal, `α = 1e-3`). With
//! `n = 11` this relies on the central limit theorem (the log-likelihood at
//! fixed `N` has moderate skew), so it is an approximate check; the KS tests
//! are the exact ones.
//!
//! **Power (negative control).** The same tests on jets simulated with the
//! wrong rate `λ = λ_root = 3` (log-likelihoods still evaluated with the
//! reference parameters, so only the generative process differs) must reject.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Instant;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde_json::{Value, json};
use trellis::ginkgo::{
    Ginkgo, Jet, JetsFile, SimulatorParams, SplitParams, Variant, add, generate, generate_jet,
    jet_seed, mass_squared, simulate,
};
use trellis::{Tree, tree_log_potential};

const ALPHA_HIST: f64 = 1e-6;
const ALPHA_KS: f64 = 1e-3;
const DELTA: f64 = 1e-6;
/// Two-sided normal quantile for α = 1e-3.
const Z_CRIT: f64 = 3.2905;

// ---------------------------------------------------------------------------
// Statistics helpers (own implementations; checked against known values below).

/// ln Γ(x), Lanczos (g = 7, 9 coefficients), x > 0.
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let mut s = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        s += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The regularised upper incomplete gamma function Q(a, x) = Γ(a, x)/Γ(a):
/// the series of P for x < a + 1, the continued fraction (modified Lentz) otherwise.
fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let log_prefactor = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        1.0 - sum * log_prefactor.exp()
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        log_prefactor.exp() * h
    }
}

/// P(χ²(df) >= x).
fn chi2_sf(x: f64, df: usize) -> f64 {
    gamma_q(df as f64 / 2.0, x / 2.0)
}

/// P(D_n < d) for the one-sample Kolmogorov statistic D_n = sup |G_n - F| of
/// n i.i.d. draws from a continuous F: Marsaglia, Tsang & Wang (2003),
/// "Evaluating Kolmogorov's distribution", J. Stat. Softw. 8(18). With
/// k = ⌊n d⌋ + 1, m = 2k - 1, h = k - n d, an m × m matrix H (ones on and
/// below the first superdiagonal, the first column and last row corrected by
/// powers of h, entry (i, j) divided by (i - j + 1)!), the probability is
/// n!/nⁿ (Hⁿ)_{k,k}; the power is taken by squaring with a decimal exponent
/// kept aside so nothing overflows.
fn ks_cdf(n: usize, d: f64) -> f64 {
    if d <= 0.0 {
        return 0.0;
    }
    if d >= 1.0 {
        return 1.0;
    }
    let nd = n as f64 * d;
    let k = nd.floor() as usize + 1;
    let m = 2 * k - 1;
    let h = k as f64 - nd;
    let mut hm = vec![vec![0.0f64; m]; m];
    for (i, row) in hm.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            if i + 1 >= j {
                *x = 1.0;
            }
        }
    }
    for (i, row) in hm.iter_mut().enumerate() {
        row[0] -= h.powi(i as i32 + 1);
    }
    for (j, x) in hm[m - 1].iter_mut().enumerate() {
        *x -= h.powi((m - j) as i32);
    }
    if 2.0 * h - 1.0 > 0.0 {
        hm[m - 1][0] += (2.0 * h - 1.0).powi(m as i32);
    }
    for (i, row) in hm.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            if i + 1 > j {
                for g in 1..=(i + 1 - j) {
                    *x /= g as f64;
                }
            }
        }
    }
    type M = (Vec<Vec<f64>>, i32);
    fn mul(a: &M, b: &M) -> M {
        let m = a.0.len();
        let mut c = vec![vec![0.0; m]; m];
        for (c_row, a_row) in c.iter_mut().zip(&a.0) {
            for (&x, b_row) in a_row.iter().zip(&b.0) {
                if x != 0.0 {
                    for (y, &z) in c_row.iter_mut().zip(b_row) {
                        *y += x * z;
                    }
                }
            }
        }
        let mut e = a.1 + b.1;
        let mid = c[m / 2][m / 2];
        if mid.abs() > 1e140 {
            for row in &mut c {
                for x in row {
                    *x *= 1e-140;
                }
            }
            e += 140;
        }
        (c, e)
    }
    fn power(a: &M, n: usize) -> M {
        if n == 1 {
            return a.clone();
        }
        let half = power(a, n / 2);
        let sq = mul(&half, &half);
        if n % 2 == 1 { mul(a, &sq) } else { sq }
    }
    let (q, mut e) = power(&(hm, 0), n);
    let mut s = q[k - 1][k - 1];
    for i in 1..=n {
        s *= i as f64 / n as f64;
        if s < 1e-140 {
            s *= 1e140;
            e -= 140;
        }
    }
    s * 10f64.powi(e)
}

/// P(D_n >= d), conservative for d just below a jump of the exact distribution.
fn ks_sf(n: usize, d: f64) -> f64 {
    (1.0 - ks_cdf(n, d)).clamp(0.0, 1.0)
}

/// DKW (Massart) bound on sup |F̂ - F| for `m` samples, failure probability `delta`.
fn dkw(m: usize, delta: f64) -> f64 {
    ((2.0 / delta).ln() / (2.0 * m as f64)).sqrt()
}

/// sup_x |G_n(x) - F(x)| for the sample `xs` and a CDF `f` (right-continuous
/// step functions: checked just before and at every sample point).
fn ks_statistic(xs: &[f64], f: impl Fn(f64) -> (f64, f64)) -> f64 {
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mut d: f64 = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        // f(x) = (F(x-), F(x)); G jumps from i/n to (i+1)/n at x (ties handled
        // because the largest gap is at the last tied index).
        let (below, at) = f(x);
        d = d.max((i as f64 / n - below).abs());
        d = d.max(((i + 1) as f64 / n - at).abs());
    }
    d
}

/// The empirical CDF of a sorted sample as (F(x-), F(x)).
fn ecdf(sorted: &[f64]) -> impl Fn(f64) -> (f64, f64) + '_ {
    move |x| {
        let m = sorted.len() as f64;
        let lo = sorted.partition_point(|&y| y < x) as f64;
        let hi = sorted.partition_point(|&y| y <= x) as f64;
        (lo / m, hi / m)
    }
}

#[test]
fn statistics_helpers_match_known_values() {
    // Chi-square upper 0.1% points (tables): df 1 -> 10.828, df 10 -> 29.588.
    assert!((chi2_sf(10.828, 1) - 1e-3).abs() < 2e-6);
    assert!((chi2_sf(29.588, 10) - 1e-3).abs() < 2e-6);
    assert!((chi2_sf(2.0, 2) - (-1.0f64).exp()).abs() < 1e-12);
    // Marsaglia, Tsang & Wang's example: K(10, 0.274) = 0.6284796154565043.
    assert!((ks_cdf(10, 0.274) - 0.628_479_615_456_504_3).abs() < 1e-12);
    // D_n >= 1 - 1/(2n)... trivial ends, and the asymptotic Kolmogorov tail at n = 100:
    // P(√n D >= 1.9495) ≈ 1e-3 (small-n correction makes it slightly smaller).
    assert_eq!(ks_cdf(5, 0.0), 0.0);
    assert_eq!(ks_cdf(5, 1.0), 1.0);
    let p = ks_sf(100, 0.19495);
    assert!(p > 5e-4 && p < 1.2e-3, "{p}");
}

// ---------------------------------------------------------------------------
// Simulation helpers.

/// A jet with the given leaves and likelihood parameters (for scoring trees).
fn bare_jet(leaves: Vec<[f64; 4]>, params: SplitParams) -> Jet {
    Jet {
        id: String::new(),
        leaves,
        params,
        truth: None,
        extra: Default::default(),
    }
}

fn truth_ll(leaves: &[[f64; 4]], tree: &Tree, params: SplitParams) -> f64 {
    let jet = bare_jet(leaves.to_vec(), params);
    tree_log_potential(&Ginkgo::new(&jet, Variant::Current), tree).unwrap()
}

/// `m` unconditioned jets as (N, truth log-likelihood under `score`), from 64
/// independent streams (deterministic whatever the number of threads).
/// The log-likelihood is only computed for N in `ll_range` (NaN otherwise).
fn sample_summaries(
    params: &SimulatorParams,
    m: usize,
    seed: u64,
    score: SplitParams,
    ll_range: Option<std::ops::RangeInclusive<usize>>,
) -> Vec<(usize, f64)> {
    const CHUNKS: usize = 64;
    (0..CHUNKS)
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(jet_seed(seed, c));
            let count = m / CHUNKS + usize::from(c < m % CHUNKS);
            let ll_range = ll_range.clone();
            (0..count)
                .map(|_| {
                    let (leaves, tree) = simulate(params, &mut rng);
                    let n = leaves.len();
                    let ll = if ll_range.as_ref().is_some_and(|r| r.contains(&n)) {
                        truth_ll(&leaves, &tree, score)
                    } else {
                        f64::NAN
                    };
                    (n, ll)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Our QCD sample, shared by the tests: 400k jets (N, with log-likelihoods for N in 4..=12).
fn qcd_sample() -> &'static [(usize, f64)] {
    static S: OnceLock<Vec<(usize, f64)>> = OnceLock::new();
    S.get_or_init(|| {
        let t = Instant::now();
        let p = SimulatorParams::qcd();
        let s = sample_summaries(&p, 400_000, 11, p.split_params(), Some(4..=12));
        eprintln!("qcd sample: 400000 jets in {:.2?}", t.elapsed());
        s
    })
}

/// QCD jets with the wrong rate λ = λ_root = 3, scored with the QCD parameters.
fn wrong_lambda_sample() -> &'static [(usize, f64)] {
    static S: OnceLock<Vec<(usize, f64)>> = OnceLock::new();
    S.get_or_init(|| {
        let qcd = SimulatorParams::qcd();
        let wrong = SimulatorParams {
            lambda: 3.0,
            lambda_root: 3.0,
            ..qcd
        };
        sample_summaries(&wrong, 400_000, 12, qcd.split_params(), Some(4..=12))
    })
}

// ---------------------------------------------------------------------------
// Exact invariants, determinism, format.

/// Checks every invariant of the module docs on one simulated jet.
fn check_invariants(params: &SimulatorParams, leaves: &[[f64; 4]], tree: &Tree) {
    let n = leaves.len();
    assert!(n >= 2);
    // Leaves in depth-first order: the tree read left to right is 0..n.
    assert_eq!(tree.leaves(), (0..n).collect::<Vec<_>>());
    let jet = params.jet_4momentum();
    let e2 = jet[0] * jet[0];
    let tol = 1024.0 * f64::EPSILON * e2;
    // Conservation.
    let sum = leaves.iter().fold([0.0; 4], |a, p| add(&a, p));
    for c in 0..4 {
        assert!(
            (sum[c] - jet[c]).abs() <= 1e-9 * jet[0],
            "component {c}: {} vs {}",
            sum[c],
            jet[c]
        );
    }
    for p in leaves {
        let t = mass_squared(p);
        assert!(p[0] > 0.0);
        assert!(t >= -tol && t < params.t_cut + tol, "leaf t = {t}");
    }
    // Internal nodes: t from the summed leaves.
    fn walk(t: &Tree, leaves: &[[f64; 4]], out: &mut Vec<f64>) -> [f64; 4] {
        match t {
            Tree::Leaf(i) => leaves[*i],
            Tree::Node(l, r) => {
                let p = add(&walk(l, leaves, out), &walk(r, leaves, out));
                out.push(mass_squared(&p));
                p
            }
        }
    }
    let mut internal = Vec::new();
    walk(tree, leaves, &mut internal);
    assert_eq!(internal.len(), n - 1);
    for t in internal {
        assert!(t > params.t_cut - tol, "internal t = {t}");
    }
    let ll = truth_ll(leaves, tree, params.split_params());
    assert!(ll.is_finite(), "truth log-likelihood {ll}");
}

#[test]
fn physics_invariants_hold_on_simulated_jets() {
    let t0 = Instant::now();
    let tilted = SimulatorParams {
        jet_momentum: [-50.0, 900.0, 3.0],
        ..SimulatorParams::qcd()
    };
    let at_rest = SimulatorParams {
        jet_momentum: [0.0; 3],
        ..SimulatorParams::w()
    };
    let cases = [
        (SimulatorParams::qcd(), 20_000),
        (SimulatorParams::w(), 2_000),
        (tilted, 2_000),
        (at_rest, 1_000),
    ];
    let mut max_n = 0;
    for (i, (params, count)) in cases.iter().enumerate() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(100 + i as u64);
        for _ in 0..*count {
            let (leaves, tree) = simulate(params, &mut rng);
            max_n = max_n.max(leaves.len());
            check_invariants(params, &leaves, &tree);
        }
    }
    eprintln!(
        "invariants: 25000 jets (max N {max_n}) in {:.2?}",
        t0.elapsed()
    );
}

#[test]
fn generation_is_deterministic_and_per_jet() {
    let p = SimulatorParams::qcd();
    let a = generate(&p, 20, 5, 9, 7).unwrap();
    let b = generate(&p, 20, 5, 9, 7).unwrap();
    assert_eq!(a, b);
    assert!(a.iter().all(|j| (5..=9).contains(&j.len())));
    assert_eq!(a[3].id, "gen_s7_3");
    assert_eq!(a[3].extra["seed"], json!(jet_seed(7, 3)));
    // Jet k does not depend on the number of jets, and regenerates alone.
    let prefix = generate(&p, 5, 5, 9, 7).unwrap();
    assert_eq!(&a[..5], &prefix[..]);
    for k in [0, 11, 19] {
        assert_eq!(generate_jet(&p, 7, k, 5, 9).unwrap(), a[k]);
    }
    // Another seed: other jets (every one differs).
    let c = generate(&p, 20, 5, 9, 8).unwrap();
    for (x, y) in a.iter().zip(&c) {
        assert_ne!(x.leaves, y.leaves);
    }
    // Jets within a run differ too.
    assert_ne!(a[0].leaves, a[1].leaves);
    // simulate is a pure function of the generator's state.
    let run = |s| simulate(&p, &mut Xoshiro256PlusPlus::seed_from_u64(s));
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).0, run(6).0);
}

#[test]
fn generated_jets_follow_the_schema_and_round_trip() {
    let p = SimulatorParams::w();
    let jets = generate(&p, 6, 10, 30, 3).unwrap();
    for j in &jets {
        let truth = j.truth.as_ref().unwrap();
        check_invariants(&p, &j.leaves, truth);
        let ll = j.extra["truth_log_likelihood"].as_f64().unwrap();
        assert_eq!(ll, truth_ll(&j.leaves, truth, p.split_params()));
        assert_eq!(j.extra["N"], json!(j.len()));
        let params = &j.extra["params"];
        assert_eq!(params["root_mass_squared"], json!(6400.0));
        assert_eq!(params["M_hard"], json!(80.0));
        assert_eq!(params["pt_cut"], json!(4.0));
        let m2 = params["jet_mass_squared_from_leaves"].as_f64().unwrap();
        assert!((m2 - 6400.0).abs() < 1e-6, "{m2}");
        assert_eq!(j.extra["generator"]["code"], "trellis ginkgo simulator");
        assert_eq!(j.extra["generator"]["rate"], json!([3.0, 1.5]));
    }
    let file = JetsFile {
        meta: json!({"generator": "test"}),
        jets: jets.clone(),
    };
    let text = file.to_json_string();
    let back = JetsFile::parse(&text).unwrap();
    // serde_json (without its `float_roundtrip` feature) may read a float back
    // one ulp off, so numbers are compared to 4 ulps; everything else exactly.
    assert_eq!(back.meta, file.meta);
    assert_eq!(back.jets.len(), file.jets.len());
    for (b, j) in back.jets.iter().zip(&file.jets) {
        assert_eq!((&b.id, &b.truth, b.params), (&j.id, &j.truth, j.params));
        assert!(json_close(&b.to_json(), &j.to_json()), "{} differs", j.id);
    }
    // The written object has the schema's top-level keys.
    let v: Value = serde_json::from_str(&text).unwrap();
    let j0 = v["jets"][0].as_object().unwrap();
    for key in [
        "id",
        "N",
        "seed",
        "leaves",
        "params",
        "truth",
        "truth_log_likelihood",
        "truth_log_likelihood_from_leaves",
        "generator",
    ] {
        assert!(j0.contains_key(key), "missing {key}");
    }
    for key in ["lambda", "lambda_root", "delta_min", "pt_cut"] {
        assert!(j0["params"].get(key).is_some(), "missing params.{key}");
    }
}

/// Equal JSON values, numbers to 4 ulps (relative).
fn json_close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
            } else {
                x == y
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_close(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_close(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn bad_parameters_and_windows_are_errors() {
    let p = SimulatorParams::qcd();
    let msg = |r: trellis::Result<Vec<Jet>>| r.unwrap_err().to_string();
    assert!(msg(generate(&p, 1, 1, 5, 0)).contains("at least 2 leaves"));
    assert!(msg(generate(&p, 1, 6, 5, 0)).contains("above max_leaves"));
    for bad in [
        SimulatorParams { lambda: 0.0, ..p },
        SimulatorParams {
            lambda_root: f64::NAN,
            ..p
        },
        SimulatorParams { t_cut: -1.0, ..p },
        SimulatorParams {
            jet_momentum: [f64::INFINITY, 0.0, 0.0],
            ..p
        },
        SimulatorParams { t_cut: 900.0, ..p },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
        assert!(generate(&bad, 1, 2, 5, 0).is_err());
    }
    // A cut just below the jet mass: the jet always decays into exactly two
    // leaves (t_L, t_R < 0.999 M² < t_cut), so a window of 3 leaves is impossible.
    let two = SimulatorParams {
        t_cut: 0.9995 * 900.0,
        ..p
    };
    let (leaves, _) = simulate(&two, &mut Xoshiro256PlusPlus::seed_from_u64(0));
    assert_eq!(leaves.len(), 2);
    let t = Instant::now();
    let e = msg(generate(&two, 1, 3, 10, 0));
    assert!(
        e.contains("no jet with 3 to 10 leaves in 1000000 simulations"),
        "{e}"
    );
    eprintln!("impossible window detected in {:.2?}", t.elapsed());
}

#[test]
#[should_panic(expected = "must be below")]
fn simulate_panics_on_invalid_parameters() {
    let p = SimulatorParams {
        t_cut: 1000.0,
        ..SimulatorParams::qcd()
    };
    simulate(&p, &mut Xoshiro256PlusPlus::seed_from_u64(0));
}

// ---------------------------------------------------------------------------
// Distribution against the reference simulator.

/// The leaf-count histogram in a reference `meta` object: counts by N, with
/// key -1 for "outside the window".
fn reference_histogram(meta: &Value) -> BTreeMap<i64, u64> {
    let obj = meta.as_object().unwrap();
    let (_, h) = obj
        .iter()
        .find(|(k, _)| k.starts_with("leaf_count_histogram"))
        .expect("a leaf_count_histogram key in meta");
    h.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect()
}

/// The two-sample chi-square test of the module docs: returns (X², df, p-value).
fn histogram_test(
    reference: &BTreeMap<i64, u64>,
    window: (usize, usize),
    ours: &[usize],
) -> (f64, usize, f64) {
    let (lo, hi) = window;
    for &k in reference.keys() {
        assert!(
            k == -1 || (lo as i64..=hi as i64).contains(&k),
            "key {k} outside the assumed window {lo}..={hi}"
        );
    }
    let n: u64 = reference.values().sum();
    let m = ours.len() as f64;
    // Bins: index 0 = outside the window, then lo..=hi.
    let bin = |k: usize| {
        if (lo..=hi).contains(&k) {
            1 + k - lo
        } else {
            0
        }
    };
    let mut b = vec![0u64; 2 + hi - lo];
    for &k in ours {
        b[bin(k)] += 1;
    }
    let mut a = vec![0u64; b.len()];
    for (&k, &c) in reference {
        a[if k < 0 { 0 } else { bin(k as usize) }] += c;
    }
    // Merge adjacent in-window bins until the expected reference count is >= 5
    // (a leftover tail joins the previous group); the outside bin joins the
    // last group if it alone is too small.
    let expected = |x: u64| n as f64 * x as f64 / m;
    let mut groups: Vec<(u64, u64)> = Vec::new();
    let mut cur = (0, 0);
    for i in 1..b.len() {
        cur = (cur.0 + a[i], cur.1 + b[i]);
        if expected(cur.1) >= 5.0 {
            groups.push(cur);
            cur = (0, 0);
        }
    }
    if cur.1 > 0 || cur.0 > 0 {
        let last = groups.last_mut().expect("some group");
        *last = (last.0 + cur.0, last.1 + cur.1);
    }
    if expected(b[0]) >= 5.0 {
        groups.push((a[0], b[0]));
    } else {
        let last = groups.last_mut().unwrap();
        *last = (last.0 + a[0], last.1 + b[0]);
    }
    let (k1, k2) = ((m / n as f64).sqrt(), (n as f64 / m).sqrt());
    let x2: f64 = groups
        .iter()
        .filter(|(a, b)| a + b > 0)
        .map(|&(a, b)| (k1 * a as f64 - k2 * b as f64).powi(2) / (a + b) as f64)
        .sum();
    let df = groups.len() - 1;
    (x2, df, chi2_sf(x2, df))
}

#[test]
fn leaf_count_distribution_matches_the_reference_qcd() {
    let Some(dir) = crate::data::dir("ginkgo") else {
        return;
    };
    let small = JetsFile::read(&dir.join("ginkgo_small.json")).unwrap();
    let reference = reference_histogram(&small.meta);
    let ours: Vec<usize> = qcd_sample().iter().map(|s| s.0).collect();
    let (x2, df, p) = histogram_test(&reference, (4, 12), &ours);
    eprintln!(
        "QCD leaf counts: X2 = {x2:.2}, df = {df}, p = {p:.3e} (reject below {ALPHA_HIST:e})"
    );
    assert!(p >= ALPHA_HIST, "QCD leaf counts differ: p = {p:e}");
    // Negative control: λ = 3 must be rejected.
    let wrong: Vec<usize> = wrong_lambda_sample().iter().map(|s| s.0).collect();
    let (x2w, dfw, pw) = histogram_test(&reference, (4, 12), &wrong);
    eprintln!(
        "QCD leaf counts, lambda = 3 (negative control): X2 = {x2w:.1}, df = {dfw}, p = {pw:.3e}"
    );
    assert!(
        pw < ALPHA_HIST,
        "the negative control was not rejected: p = {pw:e}"
    );
}

#[test]
fn leaf_count_distribution_matches_the_reference_w() {
    let Some(dir) = crate::data::dir("ginkgo") else {
        return;
    };
    let large = JetsFile::read(&dir.join("ginkgo_large.json")).unwrap();
    let t0 = Instant::now();
    // Part a: W jets with t_cut 4, window 14..=32; 96 tried.
    let ref_a = reference_histogram(&large.meta["parts"]["a"]);
    let w = SimulatorParams::w();
    let ours: Vec<usize> = sample_summaries(&w, 50_000, 21, w.split_params(), None)
        .into_iter()
        .map(|s| s.0)
        .collect();
    let (x2, df, p) = histogram_test(&ref_a, (14, 32), &ours);
    eprintln!("W (t_cut 4) leaf counts: X2 = {x2:.2}, df = {df}, p = {p:.3e}");
    assert!(p >= ALPHA_HIST, "W leaf counts differ: p = {p:e}");
    // Part b: t_cut 1.21, window 44..=56 and only 9 tries: an exact two-sided
    // binomial test of the in-window fraction.
    let ref_b = reference_histogram(&large.meta["parts"]["b"]);
    let tries: u64 = ref_b.values().sum();
    let inside = tries - ref_b.get(&-1).copied().unwrap_or(0);
    let wb = SimulatorParams { t_cut: 1.21, ..w };
    let ours_b: Vec<usize> = sample_summaries(&wb, 10_000, 22, wb.split_params(), None)
        .into_iter()
        .map(|s| s.0)
        .collect();
    let q = ours_b.iter().filter(|&&k| (44..=56).contains(&k)).count() as f64 / ours_b.len() as f64;
    let pmf = |k: u64| {
        (ln_gamma(tries as f64 + 1.0)
            - ln_gamma(k as f64 + 1.0)
            - ln_gamma((tries - k) as f64 + 1.0)
            + k as f64 * q.ln()
            + (tries - k) as f64 * (1.0 - q).ln())
        .exp()
    };
    let observed = pmf(inside);
    let p_b: f64 = (0..=tries)
        .map(pmf)
        .filter(|&x| x <= observed * (1.0 + 1e-9))
        .sum();
    eprintln!(
        "W (t_cut 1.21): {inside}/{tries} in 44..=56 vs our fraction {q:.3}; binomial p = {p_b:.3} ({:.2?} for both parts)",
        t0.elapsed()
    );
    assert!(p_b >= ALPHA_HIST);
}

/// Our log-likelihoods by N, sorted.
fn by_n(sample: &[(usize, f64)]) -> BTreeMap<usize, Vec<f64>> {
    let mut m: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for &(n, ll) in sample {
        if ll.is_finite() {
            m.entry(n).or_default().push(ll);
        }
    }
    for v in m.values_mut() {
        v.sort_by(f64::total_cmp);
    }
    m
}

/// The reference jets' truth log-likelihoods (recomputed from the leaves) by N.
fn reference_by_n(file: &JetsFile) -> BTreeMap<usize, Vec<f64>> {
    let mut m: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for j in &file.jets {
        let ll = truth_ll(&j.leaves, j.truth.as_ref().unwrap(), j.params);
        m.entry(j.len()).or_default().push(ll);
    }
    m
}

/// One fixed-N comparison: KS and mean.
struct PerN {
    n_leaves: usize,
    /// Reference jets with this N.
    n: usize,
    /// Our jets with this N.
    m: usize,
    /// KS distance between the reference values and our empirical CDF.
    d: f64,
    /// DKW slack of our empirical CDF.
    eps: f64,
    /// P(D_n >= d - eps): the (conservative) p-value.
    p: f64,
    /// The asymptotic two-sample KS critical value at α = 1e-3, for comparison.
    crit: f64,
    /// Standardised difference of the means.
    z: f64,
}

/// The log-likelihood comparisons of the module docs.
struct LlTests {
    per_n: Vec<PerN>,
    /// Pooled PIT test over all N: (n, D, slack, p-value).
    pooled_ks: (usize, f64, f64, f64),
    /// Pooled standardised mean difference Σ(x_i - μ_{N_i}) / sd.
    pooled_z: f64,
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let m = xs.len() as f64;
    let mu = xs.iter().sum::<f64>() / m;
    (
        mu,
        xs.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (m - 1.0),
    )
}

fn ll_tests(ours: &BTreeMap<usize, Vec<f64>>, reference: &BTreeMap<usize, Vec<f64>>) -> LlTests {
    let strata = reference.len() as f64;
    let mut per_n = Vec::new();
    let mut pit = Vec::new();
    let mut eps_max: f64 = 0.0;
    let (mut z_num, mut z_var) = (0.0, 0.0);
    for (&n_leaves, xs) in reference {
        let sim = &ours[&n_leaves];
        let f = ecdf(sim);
        eps_max = eps_max.max(dkw(sim.len(), DELTA / strata));
        pit.extend(xs.iter().map(|&x| f(x).1));
        let (n, m) = (xs.len(), sim.len());
        let (mu, var) = mean_var(sim);
        // Var(Σ x_i - n μ̂) = n σ² + n² σ² / M.
        let dev: f64 = xs.iter().map(|x| x - mu).sum();
        let var_dev = n as f64 * var * (1.0 + n as f64 / m as f64);
        z_num += dev;
        z_var += var_dev;
        if n_leaves == 7 || n_leaves == 9 {
            let d = ks_statistic(xs, &f);
            let eps = dkw(m, DELTA);
            per_n.push(PerN {
                n_leaves,
                n,
                m,
                d,
                eps,
                p: ks_sf(n, d - eps),
                crit: 1.9495 * ((n + m) as f64 / (n * m) as f64).sqrt(),
                z: dev / var_dev.sqrt(),
            });
        }
    }
    let n = pit.len();
    let d = ks_statistic(&pit, |u| (u, u));
    LlTests {
        per_n,
        pooled_ks: (n, d, eps_max, ks_sf(n, d - eps_max)),
        pooled_z: z_num / z_var.sqrt(),
    }
}

fn report(label: &str, r: &LlTests) {
    for t in &r.per_n {
        eprintln!(
            "{label} N = {}: {} reference vs {} ours: KS D = {:.3} (slack {:.3}), p = {:.3e} \
             (asymptotic two-sample critical D {:.3}); mean z = {:.2}",
            t.n_leaves, t.n, t.m, t.d, t.eps, t.p, t.crit, t.z
        );
    }
    let (n, d, eps, p) = r.pooled_ks;
    eprintln!(
        "{label} pooled N = 4..12 (PIT): n = {n}, KS D = {d:.3} (slack {eps:.3}), p = {p:.3e}; \
         pooled mean z = {:.2}",
        r.pooled_z
    );
}

fn reference_small() -> Option<BTreeMap<usize, Vec<f64>>> {
    let dir = crate::data::dir("ginkgo")?;
    Some(reference_by_n(
        &JetsFile::read(&dir.join("ginkgo_small.json")).unwrap(),
    ))
}

#[test]
fn truth_log_likelihoods_at_fixed_n_match_the_reference() {
    let Some(reference) = reference_small() else {
        return;
    };
    let t0 = Instant::now();
    let r = ll_tests(&by_n(qcd_sample()), &reference);
    report("QCD", &r);
    for t in &r.per_n {
        assert!(
            t.p >= ALPHA_KS,
            "N = {}: KS rejects, p = {:e}",
            t.n_leaves,
            t.p
        );
        assert!(
            t.z.abs() <= Z_CRIT,
            "N = {}: means differ, z = {}",
            t.n_leaves,
            t.z
        );
    }
    assert!(
        r.pooled_ks.3 >= ALPHA_KS,
        "pooled KS rejects: {:e}",
        r.pooled_ks.3
    );
    assert!(
        r.pooled_z.abs() <= Z_CRIT,
        "pooled means differ: z = {}",
        r.pooled_z
    );
    eprintln!("log-likelihood tests in {:.2?}", t0.elapsed());
}

/// The negative controls of the log-likelihood tests. Given N, the truth
/// log-likelihood depends only weakly on λ (what λ changes most is N itself,
/// which the leaf-count test sees at p ~ 1e-190): with λ = λ_root = 3 the
/// 11-jet KS tests do not reject (p ~ 0.02-0.07) and only the pooled mean does.
/// A wrong jet mass (M² = 1600 instead of 900) shifts the log-likelihood at
/// fixed N, and the pooled KS, the N = 9 KS and the pooled mean all reject.
#[test]
fn log_likelihood_tests_have_power() {
    let Some(reference) = reference_small() else {
        return;
    };
    let t0 = Instant::now();
    let r = ll_tests(&by_n(wrong_lambda_sample()), &reference);
    report("negative control lambda = 3:", &r);
    assert!(r.pooled_z.abs() > Z_CRIT, "pooled mean z = {}", r.pooled_z);

    let qcd = SimulatorParams::qcd();
    let heavy = SimulatorParams {
        root_mass_squared: 1600.0,
        ..qcd
    };
    let s = sample_summaries(&heavy, 400_000, 13, qcd.split_params(), Some(4..=12));
    let r = ll_tests(&by_n(&s), &reference);
    report("negative control M2 = 1600:", &r);
    assert!(
        r.pooled_ks.3 < ALPHA_KS,
        "pooled KS p = {:e}",
        r.pooled_ks.3
    );
    let n9 = r.per_n.iter().find(|t| t.n_leaves == 9).unwrap();
    assert!(n9.p < ALPHA_KS, "N = 9 KS p = {:e}", n9.p);
    assert!(r.pooled_z.abs() > Z_CRIT, "pooled mean z = {}", r.pooled_z);
    eprintln!("negative controls in {:.2?}", t0.elapsed());
}
