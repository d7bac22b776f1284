//! Agglomerative baselines: greedy and beam search on any [`Model`], and
//! classic linkage clustering on a dissimilarity matrix.
//!
//! The exact trellis finds the best of all `(2n-3)!!` hierarchies. The
//! baselines it is compared with build *one* hierarchy bottom-up: start from
//! the `n` singletons and merge two clusters at a time until one is left. They
//! differ only in how they pick the pair to merge.
//!
//! # Greedy ([`greedy`])
//!
//! Merge the pair of active clusters `(A, B)` with the largest split
//! log-potential `log ψ(A, B)`, a purely local choice: the value of the
//! subtrees below and the merges still to come play no part. The result's
//! [`ScoredTree::log_potential`] is the sum of the chosen `log ψ`, i.e. the
//! tree's `log φ(H)`. This is StandardHC's greedy baseline for Ginkgo jets
//! (trellis paper, §4.2).
//!
//! *Tie-breaking* (and the order the reference implementation uses). The
//! active clusters are kept in a list: the leaves `0..n` in order, each merged
//! cluster removed, the new cluster appended at the end. Among the pairs at
//! list positions `i < j` with the largest score, the one with the smallest
//! `j`, then the smallest `i`, is merged. StandardHC keeps, for every node, its
//! best partner among the nodes before it in its list (the first maximum) and
//! merges at the first node holding the overall maximum, which is this same
//! rule. A pair scored `-∞` (a forbidden split) is still merged when no pair
//! scores more, so the result is always a complete tree, possibly with
//! `log_potential = -∞`. A NaN score counts as `-∞`.
//!
//! *Complexity.* The scores of all pairs are computed once, `n(n-1)/2`
//! evaluations of `log ψ`, and after each merge only the new cluster's scores
//! against the `m - 2` remaining clusters: `O(n²)` evaluations of
//! [`Model::log_potential`], each after a [`Summarize::merge`](crate::Summarize::merge)
//! of the pair. Finding the best pair scans the cached scores, `O(m²)` at `m`
//! active clusters, so `O(n³)` comparisons in total; `O(n²)` memory. (For the
//! pairwise-weight models one merge costs `O(|A|·|B|)`.)
//! Well below a second for `n ≤ 200`.
//!
//! # Beam search ([`beam_search`])
//!
//! Keeps the `width` best *partial* clusterings instead of one. A beam state is
//! a list of active clusters (the order above), its merge history and its
//! cumulative log-potential (the sum of `log ψ` of its merges so far). Each of
//! the `n - 1` levels:
//!
//! 1. every state proposes its `width` best merges (largest `log ψ(A, B)`,
//!    ties in the greedy order above), each with the cumulative score
//!    `score(state) + log ψ(A, B)`;
//! 2. all proposals are ranked by cumulative score (ties: the better-ranked
//!    parent state first, then the proposal order within it);
//! 3. a proposal that reaches a partial clustering already kept is dropped:
//!    merging `{a, b}` then `{c, d}`, or `{c, d}` then `{a, b}`, reaches the
//!    same partial clustering, and without this rule such reorderings fill the
//!    beam with copies (paper §4.2 keeps "only one of them");
//! 4. the best `width` proposals survive.
//!
//! The final states (at most `width`, complete trees) are returned best first.
//! The default width ([`default_beam_width`]) is the A* paper's (§5, "Data
//! and Methods"): `N(N-1)/2` for up to 40 points, 1000 above. (The trellis
//! paper used `N(N-1)/2` at every size, which grows time and memory as `N²`
//! with the width; StandardHC's experiment scripts use `min(3N, N(N-1)/2)`,
//! [`compact_beam_width`].) With `width = 1`
//! beam search is greedy (same order, same ties). A wider beam is usually
//! better but not always: the greedy path itself can be pruned when other
//! partial clusterings score higher early on, so the result can be worse than
//! greedy's, and a larger width can give a worse result than a smaller one.
//! Only an unbounded width (every partial clustering kept) is exact.
//!
//! *Duplicates are found by structure, not by score.* Merged clusters are
//! shared between states and identified by their two children, so a partial
//! clustering is the set of its active cluster ids, and two merge orders of
//! the same clusters give the same set. The reference instead drops proposals
//! whose cumulative scores are *exactly equal* (the paper's wording:
//! "identical likelihood value"). Cumulative scores are running sums in merge
//! order, so two orderings of the same merges can differ in the last bit and
//! both survive, while two different clusterings can tie and one is lost:
//! which duplicates collapse then depends on rounding, and on the reference's
//! Ginkgo jets the returned tree differs between two correct implementations
//! in about 3% of the runs, in either direction (see `tests/baselines.rs`).
//! Deduplicating by structure does what the paper intends without depending on
//! rounding.
//!
//! *Deliberate difference from the reference.* StandardHC scores every merge,
//! the final (root) merge included, with the non-root rate `λ` while ranking
//! the beams, and only re-scores the chosen tree with `λ_root`. Here every
//! merge is scored by the model's true potential: [`Ginkgo`](crate::ginkgo::Ginkgo)
//! uses `λ_root` for the merge that forms the root. The final ranking (and so
//! the returned best tree) can therefore differ from the reference's when
//! `λ_root ≠ λ`; when they are equal the two agree.
//!
//! *How the levels are computed.* Ranking every pair of every state at every
//! level costs `O(width · n³)` score reads over the run, and caching the
//! scores of every pair of clusters ever built holds `O(width · n²)` of them
//! (1.2 GB at 100 points with `width = N(N-1)/2`). Instead each state keeps a
//! *candidate list*: its best merges in the greedy order, at most
//! `2 · width` of them, complete down to a bound (every pair not listed ranks
//! after every listed one). A child state inherits its parent's list without
//! the pairs of the two merged clusters, plus the merges of the new cluster
//! that rank above the bound (scored once per level and pair); a list that
//! runs out before `width` merges were taken from it is rebuilt from all the
//! state's pairs. The best proposals over all states are taken lazily from a
//! heap of the states' list heads, and only until `width` states are kept,
//! so most lists are read only at their head. Clusters that no state holds
//! any more are dropped (rebuilt from their children if merged again). The
//! result is the same as ranking everything at every level: the same
//! proposals in the same order, the same duplicates dropped (this is tested
//! against the direct implementation).
//!
//! *Complexity.* Per level, each kept state costs `O(list + m·c)` to build
//! (its inherited list and `m` new scores, each a [`Summarize::merge`](crate::Summarize::merge)
//! of cost `c`; `O(|A|·|B|)` for the pairwise-weight models), and each
//! proposal taken `O(log width)`; a rebuild costs `O(m²·c)` (about a fifth
//! of the time on 200 points of random `hcc` weights at width 1000).
//! Memory is `O(width · (width + n))` ([`beam_memory`], checked before
//! anything is allocated): an estimate of 96 MiB at width 1000 and 200 points
//! (84 MB measured), where ranking with a cache of every pair's score took
//! 9.8 GB and more at the width `N(N-1)/2` (see `docs/benchmarks.md`).
//!
//! # Linkage clustering ([`linkage`])
//!
//! Classic hierarchical agglomerative clustering on a dissimilarity matrix,
//! SciPy's `scipy.cluster.hierarchy.linkage` exactly: merge the two closest
//! clusters, then update the distances from the new cluster `i ∪ j` to every
//! other cluster `k` by the Lance–Williams recurrence (`n_x` = size of
//! cluster `x`):
//!
//! | method | `d(k, i ∪ j)` |
//! |---|---|
//! | [`Linkage::Single`] | `min(d(k,i), d(k,j))` |
//! | [`Linkage::Complete`] | `max(d(k,i), d(k,j))` |
//! | [`Linkage::Average`] (UPGMA) | `(n_i d(k,i) + n_j d(k,j)) / (n_i + n_j)` |
//! | [`Linkage::Weighted`] (WPGMA) | `(d(k,i) + d(k,j)) / 2` |
//! | [`Linkage::Centroid`] (UPGMC) | `√((n_i d(k,i)² + n_j d(k,j)² - n_i n_j d(i,j)² / (n_i+n_j)) / (n_i+n_j))` |
//! | [`Linkage::Median`] (WPGMC) | `√(d(k,i)²/2 + d(k,j)²/2 - d(i,j)²/4)` |
//! | [`Linkage::Ward`] | `√(((n_i+n_k) d(k,i)² + (n_j+n_k) d(k,j)² - n_k d(i,j)²) / (n_i+n_j+n_k))` |
//!
//! Centroid, median and Ward are applied to the distances given, as SciPy
//! does (they are the distances of centroids, of midpoints and Ward's
//! minimum-variance criterion when the distances are Euclidean). Each
//! update is SciPy's expression, operation for operation.
//!
//! *The algorithms and their ties* are SciPy's, since on tied distances the
//! algorithm decides which pairs merge and in which order; the result is
//! SciPy's linkage matrix entry for entry ([`linkage_steps`],
//! [`linkage_matrix`]), tested against SciPy on its fixtures and on
//! hundreds of integer-grid data sets (`crates/trellis-py/tests/test_scipy_linkage.py`):
//!
//! - **Single**: Prim's minimum spanning tree from point 0. Each step adds
//!   the point nearest to the tree, the smallest index among equals; the
//!   merge is recorded with the point added the step before (SciPy's
//!   convention; the labelling below turns it into the right clusters).
//! - **Complete, average, weighted, Ward** (the reducible methods):
//!   the nearest-neighbour chain. A chain starts at the lowest live slot and
//!   grows by the nearest cluster of its end; the previous link wins a tie
//!   (so the chain ends at two reciprocal nearest neighbours), then the
//!   lowest slot. The two are merged into the higher of their two slots.
//! - Both then sort the merges by height, *stably* (ties keep the order in
//!   which the algorithm made them), and label them: each slot stands for
//!   the current cluster of its point, cluster ids are `n + row`, and each
//!   row names the smaller id first.
//! - **Centroid, median**: Müllner's generic algorithm. Every slot keeps a
//!   candidate nearest neighbour above it and a lower bound of its
//!   distance, in a binary heap with SciPy's layout and sift rules; the
//!   heap's minimum is merged once its bound is current (its candidate is
//!   searched again otherwise; the lowest slot wins ties), into the higher
//!   slot. Rows are kept in merge order, not sorted: these two methods are
//!   not monotone, and a merge can be lower than an earlier one (an
//!   *inversion*). The linkage matrix keeps the heights as they are, as
//!   SciPy's does; a [`Dendrogram`]'s heights are made monotone, but
//!   [`Dendrogram::linkage`] of [`linkage_dendrogram`] gives the matrix
//!   back unchanged.
//!
//! *Complexity.* Single linkage `O(n²)` time; the nearest-neighbour chain
//! `O(n²)` time; the generic algorithm `O(n²)` typically and `O(n³)` in
//! the worst case. The matrix is validated `n × n` (`8 n²` bytes), and the
//! algorithms work on condensed copies of it (`4 n²` bytes each, two of
//! them, three when the distances are divided by a power of two).
//!
//! *Optimal leaf ordering* ([`optimal_leaf_ordering`], or
//! `optimal_ordering` of [`linkage_matrix`]) exchanges the children of
//! some merges so that neighbouring leaves of the dendrogram are close,
//! SciPy's `optimal_leaf_ordering` exactly (Bar-Joseph et al. 2001's
//! dynamic programme, in single precision as SciPy's). Note that SciPy's
//! result is not always the optimum it aims at: each merge decides the
//! order of its children from its own best end leaves rather than from
//! those its parent chose, so from three levels of merges down the sum of
//! adjacent distances can exceed the least possible (on random small
//! integer distances, in a quarter to a third of the cases), and can even
//! exceed the unordered tree's. The result here is SciPy's, not the optimum.
//!
//! *Range.* Every height is homogeneous of degree 1 in the distances,
//! `heights(c · D) = c · heights(D)`, and is computed so over the whole range
//! of `f64`: the squares of Ward's, centroid's and median's updates
//! overflow near `1e154` and underflow near `1e-162`, average linkage
//! multiplies distances by cluster sizes (overflow near `1e307`) and
//! weighted adds two of them, so each update works on its distances divided
//! by the power of two at the largest of them and multiplies the result
//! back. Multiplying by a power of two is exact and changes no comparison,
//! so where SciPy's form neither overflows nor underflows the heights and
//! the merges are SciPy's to the bit; beyond, they are the scaled answer
//! where SciPy gives `inf`, or heights of 0 for distances near `1e-300`.
//! Ward's distances can grow past the largest input distance (by at most
//! `√n` on Euclidean distances), so Ward on distances above `2^959 ≈
//! 1e289` runs on the distances divided by a power of two, and its heights
//! are multiplied back at the end; a height that then exceeds `f64::MAX`
//! has no `f64` value, and the clustering is refused, naming the merge and
//! by how much to divide the distances. The heights of the other six
//! methods never exceed the largest distance. Euclidean distances from
//! points ([`euclidean_distances`]) are computed the same way.
//!
//! The A* paper's greedy baseline for hierarchical correlation clustering is
//! average linkage on `max(sim) - sim` ([`distances_from_similarities`]).
//!
//! # Example
//!
//! ```
//! use trellis::baselines::{beam_search, greedy, linkage, distances_from_similarities, Linkage};
//! use trellis::{Hcc, Matrix, Weights};
//!
//! let w = Weights::from_matrix(&Matrix::from_rows(vec![
//!     vec![0.0, 0.9, 0.8, -0.5],
//!     vec![0.9, 0.0, 0.7, -0.4],
//!     vec![0.8, 0.7, 0.0, -0.3],
//!     vec![-0.5, -0.4, -0.3, 0.0],
//! ])?)?;
//! let model = Hcc::new(&w, 1.0)?;
//! let g = greedy(&model)?;
//! let beams = beam_search(&model, 3)?;
//! assert!(beams[0].log_potential >= g.log_potential);
//!
//! let tree = linkage(&distances_from_similarities(&w), 4, Linkage::Average)?;
//! assert!(tree.clusters().contains(&vec![0, 1, 2]));
//! # Ok::<(), trellis::Error>(())
//! ```

use crate::base::range;
use crate::base::set::Points;
use crate::base::tree::{ScoredTree, Tree};
use crate::base::weights::{SYMMETRY_TOLERANCE, Weights};
use crate::dendrogram::Dendrogram;
use crate::error::{Error, ErrorKind, Result};
use crate::models::{Cluster, Model};

mod beam;
#[cfg(test)]
mod beam_reference;
mod leaf_order;
mod method;
mod scipy;

pub use leaf_order::optimal_leaf_ordering;
pub use method::{LinkageRun, Method, Metric, Problem, linkage_input};

pub use beam::{
    LARGE_WIDTH, SMALL_POINTS, beam_memory, beam_search, beam_search_with, compact_beam_width,
    default_beam_width,
};

/// A cluster being agglomerated: its points (sorted) and summary.
#[derive(Clone, Debug)]
struct Part<S> {
    points: Vec<usize>,
    summary: S,
}

impl<S> Part<S> {
    fn view(&self) -> Cluster<'_, S> {
        Cluster {
            points: Points::List(&self.points),
            summary: &self.summary,
        }
    }
}

/// `log ψ` of splitting `parent` into two clusters (NaN read as `-∞`, an
/// impossible merge); the part holding the lowest point is the left one.
#[inline]
fn psi<M: Model + ?Sized>(
    model: &M,
    parent: &M::Summary,
    a: &Part<M::Summary>,
    b: &Part<M::Summary>,
) -> f64 {
    let (l, r) = if a.points[0] < b.points[0] {
        (a, b)
    } else {
        (b, a)
    };
    let s = model.log_potential(parent, &l.summary, &r.summary);
    if s.is_nan() { f64::NEG_INFINITY } else { s }
}

/// The union of two clusters.
fn merged<M: Model + ?Sized>(
    model: &M,
    a: &Part<M::Summary>,
    b: &Part<M::Summary>,
) -> Part<M::Summary> {
    let summary = model.merge(a.view(), b.view());
    let mut points = Vec::with_capacity(a.points.len() + b.points.len());
    points.extend_from_slice(&a.points);
    points.extend_from_slice(&b.points);
    points.sort_unstable();
    Part { points, summary }
}

/// Whether the model allows a tree holding the clusters after merging
/// those at positions `i` and `j`.
fn extendable_after<M: Model + ?Sized>(
    model: &M,
    parts: &[Part<M::Summary>],
    i: usize,
    j: usize,
) -> bool {
    let merged = model.merge(parts[i].view(), parts[j].view());
    let clusters: Vec<&M::Summary> = (parts.iter().enumerate())
        .filter(|&(k, _)| k != i && k != j)
        .map(|(_, p)| &p.summary)
        .chain(std::iter::once(&merged))
        .collect();
    model.extendable(&clusters)
}

/// `log ψ` of merging two clusters.
#[inline]
fn score<M: Model + ?Sized>(model: &M, a: &Part<M::Summary>, b: &Part<M::Summary>) -> f64 {
    psi(model, &model.merge(a.view(), b.view()), a, b)
}

fn check_points(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    Ok(())
}

fn leaves<M: Model + ?Sized>(model: &M) -> Vec<Part<M::Summary>> {
    (0..model.num_points())
        .map(|i| Part {
            points: vec![i],
            summary: model.leaf(i),
        })
        .collect()
}

/// Greedy agglomeration: always merge the pair with the largest `log ψ` (see
/// the [module docs](self) for the tie-breaking and the complexity). Fails
/// only on a model without points.
pub fn greedy<M: Model + ?Sized>(model: &M) -> Result<ScoredTree> {
    let n = model.num_points();
    check_points(n)?;
    // Active clusters in list order, and for the cluster at position j its
    // scores against the clusters at positions 0..j.
    let mut summaries: Vec<Part<M::Summary>> = leaves(model);
    let mut trees: Vec<Tree> = (0..n).map(Tree::Leaf).collect();
    let mut rows: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            (0..j)
                .map(|i| score(model, &summaries[i], &summaries[j]))
                .collect()
        })
        .collect();
    let mut total = 0.0;
    while summaries.len() > 1 {
        // First maximum in the order (j, i).
        let (mut bi, mut bj, mut best) = (0, 1, rows[1][0]);
        for (j, row) in rows.iter().enumerate().skip(1) {
            for (i, &s) in row.iter().enumerate() {
                if s > best {
                    (bi, bj, best) = (i, j, s);
                }
            }
        }
        // A restricted model may know that this merge leads to no tree
        // (`Model::extendable`): then the best merge that does not, in the
        // same order.
        if !extendable_after(model, &summaries, bi, bj) {
            let mut order: Vec<(usize, usize)> = (1..rows.len())
                .flat_map(|j| (0..j).map(move |i| (i, j)))
                .collect();
            order.sort_by(|&(i, j), &(k, l)| rows[l][k].total_cmp(&rows[j][i]));
            if let Some(&(i, j)) = order
                .iter()
                .find(|&&(i, j)| extendable_after(model, &summaries, i, j))
            {
                (bi, bj, best) = (i, j, rows[j][i]);
            }
        }
        total += best;
        // Remove positions bj then bi (bi < bj) everywhere.
        for row in rows.iter_mut().skip(bj + 1) {
            row.remove(bj);
        }
        for row in rows.iter_mut().skip(bi + 1) {
            row.remove(bi);
        }
        rows.remove(bj);
        rows.remove(bi);
        let (b, tb) = (summaries.remove(bj), trees.remove(bj));
        let (a, ta) = (summaries.remove(bi), trees.remove(bi));
        let merged = merged(model, &a, &b);
        rows.push(summaries.iter().map(|c| score(model, c, &merged)).collect());
        summaries.push(merged);
        trees.push(Tree::node(ta, tb));
    }
    Ok(ScoredTree {
        tree: trees.pop().expect("one cluster left").canonical(),
        log_potential: total,
    })
}

/// A linkage method: the cluster-distance update and SciPy's algorithm for
/// it (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// Nearest neighbour: `min` of the two distances.
    Single,
    /// Size-weighted mean distance (UPGMA).
    Average,
    /// Farthest neighbour: `max` of the two distances.
    Complete,
    /// Ward's minimum-variance update, applied to the given distances as SciPy does.
    Ward,
    /// WPGMA: the plain mean of the two distances.
    Weighted,
    /// UPGMC: the distance between centroids (on Euclidean distances); heights can decrease.
    Centroid,
    /// WPGMC: the distance between the midpoints of the merged clusters; heights can decrease.
    Median,
}

impl Linkage {
    /// The seven methods, in SciPy's order of its documentation.
    pub const ALL: [Linkage; 7] = [
        Linkage::Single,
        Linkage::Complete,
        Linkage::Average,
        Linkage::Weighted,
        Linkage::Centroid,
        Linkage::Median,
        Linkage::Ward,
    ];

    /// Whether its heights never decrease (all but centroid and median).
    pub fn is_monotone(self) -> bool {
        !matches!(self, Linkage::Centroid | Linkage::Median)
    }
}

impl crate::Named for Linkage {
    const WHAT: &'static str = "linkage method";
    // SciPy's names.
    const CHOICES: &'static [(&'static str, Linkage, &'static str)] = &[
        ("single", Linkage::Single, "Nearest neighbour"),
        (
            "average",
            Linkage::Average,
            "Mean distance (UPGMA); the A* paper's greedy baseline",
        ),
        ("complete", Linkage::Complete, "Farthest neighbour"),
        ("ward", Linkage::Ward, "Ward's minimum variance"),
        (
            "weighted",
            Linkage::Weighted,
            "WPGMA: the plain mean of the two clusters' distances",
        ),
        (
            "centroid",
            Linkage::Centroid,
            "UPGMC: distance between centroids; heights can decrease (a linkage matrix keeps \
             them, as SciPy's; tree heights are made monotone)",
        ),
        (
            "median",
            Linkage::Median,
            "WPGMC: distance between midpoints; heights can decrease, as centroid's",
        ),
    ];
}

/// One merge of a linkage clustering: a row of SciPy's linkage matrix.
/// Clusters `0..n` are the points, the `k`-th row creates cluster `n + k`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkageStep {
    /// The smaller of the two merged clusters' ids (SciPy's column 0).
    pub left: usize,
    /// The larger id (column 1).
    pub right: usize,
    /// The distance between them when merged (column 2).
    pub height: f64,
    /// Number of points in the new cluster (column 3).
    pub size: usize,
}

/// Validates a row-major `n × n` dissimilarity matrix: finite, symmetric up to
/// [`SYMMETRY_TOLERANCE`] relative to its largest entry (the upper triangle is used).
fn check_distances(dist: &[f64], n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    if dist.len() != n * n {
        return Err(Error::shape(format!(
            "a distance matrix over {n} points needs {} values (n × n, row-major), got {}",
            n * n,
            dist.len()
        )));
    }
    if let Some(k) = dist.iter().position(|d| !d.is_finite()) {
        return Err(Error::new(ErrorKind::NonFinite {
            row: k / n,
            col: k % n,
        }));
    }
    let max_abs = dist.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (dist[i * n + j], dist[j * n + i]);
            if (a - b).abs() > SYMMETRY_TOLERANCE * max_abs {
                return Err(Error::new(ErrorKind::Asymmetric {
                    i,
                    j,
                    wij: a,
                    wji: b,
                }));
            }
        }
    }
    Ok(())
}

/// The merges of a linkage clustering of `n` points with dissimilarities
/// `dist` (row-major `n × n`, symmetric; the diagonal is ignored, the upper
/// triangle is read): the rows of SciPy's linkage matrix
/// `scipy.cluster.hierarchy.linkage(y, method)` for the condensed `y` of
/// the same distances, in its order, ties included (see the
/// [module docs](self) for the algorithms, their tie rules and costs).
///
/// The heights are those of the recurrences in the [module docs](self),
/// computed without overflow or underflow (see "Range" there): they are
/// homogeneous in the distances, `heights(c · D) = c · heights(D)`, over the
/// whole range of `f64`.
///
/// # Errors
///
/// No points, a matrix of the wrong size, a non-finite or an asymmetric
/// entry; a height beyond `f64::MAX` ([`ErrorKind::Parameter`], saying
/// by how much to divide the distances; only Ward's heights can exceed the
/// largest distance); centroid or median updates that take the square root
/// of a negative number (SciPy gives NaN).
pub fn linkage_steps(dist: &[f64], n: usize, method: Linkage) -> Result<Vec<LinkageStep>> {
    check_distances(dist, n)?;
    if n == 1 {
        return Ok(Vec::new());
    }
    let condensed: Vec<f64> = (0..n)
        .flat_map(|i| dist[i * n + i + 1..(i + 1) * n].iter().copied())
        .collect();
    let largest = condensed.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    if largest == 0.0 {
        return Ok(scipy::run(&condensed, n, method)?.expect("zero distances stay finite"));
    }
    // Only Ward's distances can exceed the largest input distance (by at
    // most √2 per update; by at most √n on Euclidean distances): for Ward,
    // huge inputs are first divided by a power of two that leaves 64 bits
    // of headroom. If an update still overflows (any method: rounding at
    // the very top of the range), the distances are divided by the power of
    // two that brings the largest to 1. A power of two changes no
    // comparison, so the merges are the same.
    let top = range::exponent(largest);
    let first = if method == Linkage::Ward {
        (top - (1023 - 64)).max(0)
    } else {
        0
    };
    let mut tried = Vec::new();
    for shift in [first, top.max(0)] {
        if tried.contains(&shift) {
            continue;
        }
        tried.push(shift);
        let scaled: Vec<f64>;
        let d = if shift > 0 {
            scaled = condensed
                .iter()
                .map(|&x| range::mul_pow2(x, -shift))
                .collect();
            &scaled
        } else {
            &condensed
        };
        let Ok(mut steps) = scipy::run(d, n, method)? else {
            continue;
        };
        let highest = steps.iter().fold(0.0f64, |m, s| m.max(s.height));
        let over = range::Magnitude {
            mant: highest,
            exp: shift,
        };
        if let Some((k, s)) = steps
            .iter()
            .enumerate()
            .find(|(_, s)| range::mul_pow2(s.height, shift).is_infinite())
        {
            let divisor = over.divisor(f64::MAX, 1);
            return Err(Error::parameter(format!(
                "{} linkage's merge height of clusters {} and {} (merge {k}, 0-based) \
                 overflows: it is {}, more than the largest floating-point number ({:.1e}); \
                 the heights scale with the distances, so divide them by at least {} (the \
                 largest distance, {}, to at most {})",
                title(method),
                s.left,
                s.right,
                range::Magnitude {
                    mant: s.height,
                    exp: shift
                }
                .about(),
                f64::MAX,
                range::fmt3(divisor),
                range::fmt3(largest),
                range::fmt3(range::round_down_3(largest / divisor)),
            )));
        }
        for s in &mut steps {
            s.height = range::mul_pow2(s.height, shift);
        }
        return Ok(steps);
    }
    Err(Error::parameter(format!(
        "{} linkage's Lance-Williams distances overflow floating-point numbers even with \
         the distances divided by 2^{}; these dissimilarities are far from Euclidean",
        title(method),
        top.max(0)
    )))
}

/// `Ward`, `Single`, …: the method's name in a sentence's first word.
fn title(method: Linkage) -> String {
    let name = crate::Named::name(method);
    name[..1].to_uppercase() + &name[1..]
}

/// SciPy's linkage matrix `scipy.cluster.hierarchy.linkage(y, method,
/// optimal_ordering=optimal_ordering)` for the distances `dist` (row-major
/// `n × n`, as [`linkage_steps`]): rows `[a, b, height, size]`, equal to
/// SciPy's entry for entry (ids, their column order, heights, sizes), and
/// with `optimal_ordering`, the children of some rows exchanged as SciPy's
/// [`optimal_leaf_ordering`] does. No rows for one point.
///
/// # Errors
///
/// As [`linkage_steps`].
pub fn linkage_matrix(
    dist: &[f64],
    n: usize,
    method: Linkage,
    optimal_ordering: bool,
) -> Result<Vec<[f64; 4]>> {
    let rows: Vec<[f64; 4]> = linkage_steps(dist, n, method)?
        .iter()
        .map(|s| [s.left as f64, s.right as f64, s.height, s.size as f64])
        .collect();
    if optimal_ordering {
        optimal_leaf_ordering(&rows, dist)
    } else {
        Ok(rows)
    }
}

/// The tree of a linkage clustering (see [`linkage_steps`]), canonical.
///
/// # Errors
///
/// As [`linkage_steps`].
pub fn linkage(dist: &[f64], n: usize, method: Linkage) -> Result<Tree> {
    Ok(linkage_dendrogram(dist, n, method)?.into_tree())
}

/// The dendrogram of a linkage clustering (see [`linkage_steps`]): its
/// canonical tree with each merge at the distance of its clusters (made
/// monotone: centroid and median heights can decrease), and
/// [`Dendrogram::linkage`] is SciPy's linkage matrix exactly
/// ([`linkage_matrix`], inversions included).
///
/// # Errors
///
/// As [`linkage_steps`].
pub fn linkage_dendrogram(dist: &[f64], n: usize, method: Linkage) -> Result<Dendrogram> {
    let rows = linkage_matrix(dist, n, method, false)?;
    if rows.is_empty() {
        return Dendrogram::new(Tree::Leaf(0), Vec::new());
    }
    Ok(Dendrogram::from_scipy(rows)?.canonical())
}

/// Euclidean distances between the rows of `points` (row-major `n × n`),
/// the input SciPy's `linkage` computes from observations. Each distance is
/// computed without overflow or underflow (the differences are divided by
/// the power of two at the largest of them before they are squared), so
/// points near `1e200` or `1e-200` get their finite distances; where the
/// direct `sqrt(Σ (x_k - y_k)²)` neither overflows nor underflows, the
/// distances are the same to the bit. `O(n² d)` time.
///
/// # Errors
///
/// No points, a non-finite coordinate, or a distance beyond `f64::MAX`
/// ([`ErrorKind::Parameter`], naming the pair and by how much to divide the
/// coordinates).
pub fn euclidean_distances(points: &crate::Matrix) -> Result<Vec<f64>> {
    let n = points.rows;
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    for i in 0..n {
        if let Some(j) = points.row(i).iter().position(|x| !x.is_finite()) {
            return Err(Error::new(ErrorKind::NonFinite { row: i, col: j }));
        }
    }
    let mut d = vec![0.0; n * n];
    // The first pair whose distance overflows, and the largest such distance.
    let mut over: Option<(usize, usize, range::Magnitude, range::Magnitude)> = None;
    for i in 0..n {
        for j in i + 1..n {
            let m = range::euclidean(points.row(i), points.row(j));
            let dij = m.value();
            if dij.is_infinite() {
                over = Some(match over {
                    None => (i, j, m, m),
                    Some((a, b, first, top)) => {
                        (a, b, first, if m.log10() > top.log10() { m } else { top })
                    }
                });
            }
            d[i * n + j] = dij;
            d[j * n + i] = dij;
        }
    }
    if let Some((i, j, first, top)) = over {
        return Err(Error::parameter(format!(
            "the Euclidean distance between points {i} and {j} (0-based) overflows: it is {}, \
             more than the largest floating-point number ({:.1e}); the distances scale with \
             the coordinates, so divide them by at least {}",
            first.about(),
            f64::MAX,
            range::fmt3(top.divisor(f64::MAX, 1)),
        )));
    }
    Ok(d)
}

/// Dissimilarities from similarities, `d_ij = max_{k≠l} w_kl - w_ij` with a
/// zero diagonal (row-major `n × n`): the A* paper's recipe for running
/// linkage clustering on correlation-clustering weights. The shift makes
/// every distance non-negative and does not change average-linkage trees.
pub fn distances_from_similarities(w: &Weights) -> Vec<f64> {
    let n = w.n();
    let max = (0..n)
        .flat_map(|i| w.row(i).iter().enumerate().filter(move |&(j, _)| j != i))
        .map(|(_, &v)| v)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                d[i * n + j] = max - w.get(i, j);
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hcc, Matrix};

    fn weights(rows: Vec<Vec<f64>>) -> Weights {
        Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
    }

    #[test]
    fn one_and_two_points() {
        let w1 = weights(vec![vec![0.0]]);
        let m1 = Hcc::new(&w1, 1.0).unwrap();
        assert_eq!(greedy(&m1).unwrap().tree, Tree::Leaf(0));
        assert_eq!(greedy(&m1).unwrap().log_potential, 0.0);
        let b = beam_search(&m1, 5).unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].tree, Tree::Leaf(0));
        assert_eq!(linkage(&[0.0], 1, Linkage::Ward).unwrap(), Tree::Leaf(0));
        assert!(
            linkage_steps(&[0.0], 1, Linkage::Single)
                .unwrap()
                .is_empty()
        );
        assert_eq!(distances_from_similarities(&w1), vec![0.0]);

        let w2 = weights(vec![vec![0.0, 0.5], vec![0.5, 0.0]]);
        let m2 = Hcc::new(&w2, 2.0).unwrap();
        let g = greedy(&m2).unwrap();
        assert_eq!(g.tree, Tree::parse("[0,1]").unwrap());
        assert_eq!(g.log_potential, -1.0);
        let b = beam_search(&m2, default_beam_width(2)).unwrap();
        assert_eq!(b, vec![g]);
        let d = distances_from_similarities(&w2);
        assert_eq!(d, vec![0.0, 0.0, 0.0, 0.0]);
        for method in [
            Linkage::Single,
            Linkage::Average,
            Linkage::Complete,
            Linkage::Ward,
        ] {
            assert_eq!(
                linkage(&d, 2, method).unwrap(),
                Tree::parse("[0,1]").unwrap()
            );
        }
    }

    #[test]
    fn default_width() {
        assert_eq!(default_beam_width(0), 1);
        assert_eq!(default_beam_width(1), 1);
        assert_eq!(default_beam_width(2), 1);
        assert_eq!(default_beam_width(10), 45);
    }

    #[test]
    fn linkage_rejects_bad_matrices() {
        assert!(matches!(
            linkage(&[], 0, Linkage::Single).unwrap_err().kind(),
            ErrorKind::Empty
        ));
        assert!(matches!(
            linkage(&[0.0; 3], 2, Linkage::Single).unwrap_err().kind(),
            ErrorKind::Shape { .. }
        ));
        assert!(matches!(
            linkage(&[0.0, f64::NAN, f64::NAN, 0.0], 2, Linkage::Single)
                .unwrap_err()
                .kind(),
            ErrorKind::NonFinite { row: 0, col: 1 }
        ));
        assert!(matches!(
            linkage(&[0.0, 1.0, 2.0, 0.0], 2, Linkage::Single)
                .unwrap_err()
                .kind(),
            ErrorKind::Asymmetric { .. }
        ));
    }

    #[test]
    fn linkage_known_example() {
        // Points on a line at 0, 1, 3, 7: single linkage joins by gaps 1, 2, 4.
        let x = [0.0f64, 1.0, 3.0, 7.0];
        let d: Vec<f64> = x
            .iter()
            .flat_map(|a| x.iter().map(move |b| (a - b).abs()))
            .collect();
        let steps = linkage_steps(&d, 4, Linkage::Single).unwrap();
        let heights: Vec<f64> = steps.iter().map(|s| s.height).collect();
        assert_eq!(heights, vec![1.0, 2.0, 4.0]);
        assert_eq!(
            linkage(&d, 4, Linkage::Average).unwrap().to_string(),
            "[[[0,1],2],3]"
        );
        let complete = linkage_steps(&d, 4, Linkage::Complete).unwrap();
        assert_eq!(complete[1].height, 3.0);
        assert_eq!(complete[2].height, 7.0);
        // Ward on 1-d points: merging {0,1} (centroid 0.5) with {3} costs
        // sqrt(2 * 2/3 * 2.5^2) by the Lance-Williams form.
        let ward = linkage_steps(&d, 4, Linkage::Ward).unwrap();
        assert!((ward[1].height - (2.0f64 * 2.0 / 3.0 * 6.25).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn linkage_dendrogram_has_the_merge_distances() {
        let x = [7.0f64, 0.0, 3.0, 1.0];
        let d: Vec<f64> = x
            .iter()
            .flat_map(|a| x.iter().map(move |b| (a - b).abs()))
            .collect();
        let dg = linkage_dendrogram(&d, 4, Linkage::Complete).unwrap();
        assert_eq!(dg.tree(), &linkage(&d, 4, Linkage::Complete).unwrap());
        let z = dg.linkage().unwrap();
        assert_eq!(
            z,
            vec![
                [1.0, 3.0, 1.0, 2.0],
                [2.0, 4.0, 3.0, 3.0],
                [0.0, 5.0, 7.0, 4.0]
            ]
        );
    }

    #[test]
    fn condensed_vectors_give_the_square_matrix_and_its_linkage() {
        use crate::Distances;
        use crate::models::condensed_points;
        for (len, n) in [(0, 1), (1, 2), (3, 3), (6, 4), (10, 5), (4950, 100)] {
            assert_eq!(condensed_points(len).unwrap(), n);
        }
        for len in [2, 4, 5, 7, 9, 11, 4949, 4951] {
            let e = condensed_points(len).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::Shape { .. }));
            assert!(
                e.to_string().contains(&format!("this one has {len}")),
                "{e}"
            );
        }
        assert!(Distances::from_condensed_vector(&[1.0; 5]).is_err());
        // Tied whole numbers: the condensed vector and the square matrix
        // built from it by hand give the same matrix, for every method.
        let mut state = 0x1234_5678_9abc_def1u64;
        for round in 0..200 {
            let n = 1 + round % 12;
            let y: Vec<f64> = (0..n * (n - 1) / 2)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 4) as f64
                })
                .collect();
            let mut square = vec![0.0; n * n];
            let mut k = 0;
            for i in 0..n {
                for j in i + 1..n {
                    square[i * n + j] = y[k];
                    square[j * n + i] = y[k];
                    k += 1;
                }
            }
            let d = Distances::from_condensed_vector(&y).unwrap();
            assert_eq!(d.n(), n);
            assert_eq!(d.to_vec(), square);
            for method in Linkage::ALL {
                let z = linkage_matrix(&square, n, method, false).unwrap();
                assert_eq!(z.len(), n - 1);
                assert_eq!(linkage_matrix(&d.to_vec(), n, method, false).unwrap(), z);
                // The dendrogram gives the matrix back, whatever its tree.
                let dg = linkage_dendrogram(&square, n, method).unwrap();
                if n > 1 {
                    assert_eq!(dg.linkage().unwrap(), z);
                    assert_eq!(
                        dg.tree(),
                        &Dendrogram::from_linkage(&z)
                            .unwrap()
                            .canonical()
                            .into_tree()
                    );
                }
            }
        }
    }

    #[test]
    fn ties_merge_the_first_pair() {
        // All weights equal: every merge ties; greedy takes positions (0, 1),
        // then the new cluster is last: (2, 3), then the two pairs.
        let w = weights(vec![vec![0.0; 4]; 4]);
        let m = Hcc::new(&w, 1.0).unwrap();
        assert_eq!(greedy(&m).unwrap().tree.to_string(), "[[0,1],[2,3]]");
        // SciPy's chain: 0 and 1 (its first reciprocal pair), then the
        // chain restarts at the merged cluster's slot 1 and takes point 2,
        // then 3; rows name clusters, the smaller id first.
        let d = vec![1.0; 16];
        let steps = linkage_steps(&d, 4, Linkage::Average).unwrap();
        let pairs: Vec<_> = steps.iter().map(|s| (s.left, s.right, s.size)).collect();
        assert_eq!(pairs, vec![(0, 1, 2), (2, 4, 3), (3, 5, 4)]);
    }
}
