//! A user-defined split potential: hierarchical segmentation of a sequence.
//!
//! The points are readings in time order. A cluster must be a contiguous
//! segment, so a split of a segment is a cut point: `log ψ(L, R) = -∞` unless
//! `L` and `R` are adjacent segments. Allowed cuts pay Dasgupta's cost with
//! similarities `exp(-(x_i - x_j)²)`: `log ψ = -β · |L ∪ R| · Σ_{i∈L, j∈R} sim`,
//! so cutting similar readings high in the tree (in a big cluster) is expensive.
//!
//! A cluster's summary is its mask of points. The similarity inside every
//! subset, `W(S) = Σ_{i<j∈S} sim`, is tabulated once, so a split costs O(1):
//! `Σ_{i∈L, j∈R} sim = W(L∪R) - W(L) - W(R)`. That is what the trellis needs
//! (`3^n / 2` calls). With β = 0 every allowed tree
//! has potential 1, so `Z` counts the segment hierarchies: the Catalan number
//! `C(n-1)`, which `trellis::count::num_trees_within` confirms.
//!
//! Run with `cargo run --release -p trellis --example segments`.

use trellis::{Cluster, Mask, Model, Summarize, Trellis, count};

struct Segments {
    n: usize,
    beta: f64,
    /// Similarity inside every subset, indexed by mask.
    inside: Vec<f64>,
}

impl Segments {
    fn new(x: &[f64], beta: f64) -> Segments {
        let n = x.len();
        let sim = |i: usize, j: usize| (-(x[i] - x[j]).powi(2)).exp();
        let mut inside = vec![0.0; 1 << n];
        for s in 1..inside.len() {
            // Add the lowest point `i` to the rest of the subset.
            let i = s.trailing_zeros() as usize;
            let rest = s & (s - 1);
            inside[s] = inside[rest]
                + trellis::members(rest as Mask)
                    .map(|j| sim(i, j))
                    .sum::<f64>();
        }
        Segments { n, beta, inside }
    }
}

/// Whether the points of `m` are consecutive.
fn is_segment(m: Mask) -> bool {
    let s = m >> m.trailing_zeros();
    s & (s + 1) == 0
}

impl Summarize for Segments {
    type Summary = Mask;

    fn num_points(&self) -> usize {
        self.n
    }

    fn leaf(&self, i: usize) -> Mask {
        1 << i
    }

    fn merge(&self, a: Cluster<'_, Mask>, b: Cluster<'_, Mask>) -> Mask {
        a.summary | b.summary
    }
}

impl Model for Segments {
    fn log_potential(&self, parent: &Mask, left: &Mask, right: &Mask) -> f64 {
        let (s, left, right) = (*parent, *left, *right);
        if !(is_segment(left) && is_segment(right) && is_segment(s)) {
            return f64::NEG_INFINITY;
        }
        let cut =
            self.inside[s as usize] - self.inside[left as usize] - self.inside[right as usize];
        -self.beta * s.count_ones() as f64 * cut
    }
}

fn main() -> Result<(), trellis::Error> {
    let readings = [0.1, 0.2, 0.15, 2.0, 2.1, 1.9, 5.0, 5.2, 4.9, 5.1];
    let n = readings.len();

    let trellis = Trellis::new(Segments::new(&readings, 3.0))?;
    println!("readings: {readings:?}");
    println!("MAP segmentation tree: {}", trellis.map().tree);
    println!("log Z = {:.4}", trellis.log_z());
    let marginals = trellis.marginals()?;
    for (cluster, p) in marginals.clusters(0.5) {
        let points: Vec<usize> = trellis::members(cluster).collect();
        println!("  segment {points:?}: p = {p:.3}");
    }

    // With beta = 0 every allowed tree has potential 1: Z counts them.
    let uniform = Trellis::new(Segments::new(&readings, 0.0))?;
    let segments: Vec<Mask> = (1..1u32 << n).filter(|&m| is_segment(m)).collect();
    let catalan = count::num_trees_within(trellis::full(n), &segments);
    println!(
        "segment hierarchies over {n} points: Z = {:.1}, exact count {catalan} (Catalan number C({}))",
        uniform.log_z().exp(),
        n - 1
    );
    assert_eq!(catalan.to_string(), "4862");
    assert!((uniform.log_z().exp() - 4862.0).abs() < 1e-6);
    Ok(())
}
