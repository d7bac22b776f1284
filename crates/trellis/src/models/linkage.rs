//! Linkage potentials: Gibbs models whose split cost is a classic
//! cluster-linkage distance (the trellis paper, §2: "ψ has the signature of
//! a linkage function").
//!
//! # The models
//!
//! Over a validated distance matrix ([`Distances`]: symmetric, finite,
//! `d_ij >= 0`, the diagonal ignored), a [`LinkagePotential`] scores the
//! split of `S = L ∪ R` by
//!
//! ```text
//! log ψ(L, R) = -β · d(L, R),   β >= 0,
//! ```
//!
//! with `d` one of three linkage functions ([`LinkageKind`]):
//!
//! | kind | name | `d(L, R)` |
//! |---|---|---|
//! | [`LinkageKind::Average`] | `linkage-average` | `Σ_{i∈L, j∈R} d_ij / (\|L\|·\|R\|)` |
//! | [`LinkageKind::Complete`] | `linkage-complete` | `max_{i∈L, j∈R} d_ij` |
//! | [`LinkageKind::Single`] | `linkage-single` | `min_{i∈L, j∈R} d_ij` |
//!
//! A hierarchy's probability is `P(H) ∝ exp(-β · Σ_{(L,R)∈H} d(L, R))`: the
//! MAP tree minimises the sum of the linkage distances at which its clusters
//! are merged (the sum of the heights of its dendrogram). As for
//! [`Hcc`](crate::Hcc), the [`Search`] cost of a split is `d(L, R)` itself,
//! independent of β, so A* finds the same tree at every β > 0. None of the
//! three is separable (the `1/(|L|·|R|)` factor of the average and the max
//! and min of the others are not sums of per-cluster terms):
//! [`Model::separable`] is `None` and the dense trellis runs its general
//! kernel.
//!
//! # Summaries
//!
//! One summary type, [`LinkageSummary`], with one variant per family:
//!
//! - **Average**: [`LinkageSummary::Sum`], the size `|T|` and the sum
//!   `W(T) = Σ_{i<j∈T} d_ij` of the distances inside the cluster (16 bytes).
//!   Two clusters merge by adding their sums and the `|A|·|B|` distances
//!   across them; a split's cross sum is `W(S) - W(L) - W(R)`, O(1). The
//!   subtraction cancels: its absolute error is a few ulps of `W(S)`, so the
//!   relative error of `d(L, R)` is about `ε · W(S) / Σ_{L×R} d_ij`, large
//!   only when the distances inside `L` and `R` dwarf those across them by
//!   many orders of magnitude (a difference that rounds below zero is read
//!   as 0). This is the trade of the built-in weight models too, and it keeps
//!   the dense trellis's table at 16 bytes per subset.
//! - **Complete and single**: the cross max (min) is not a function of
//!   aggregates inside `L` and `R`, so the summary is
//!   [`LinkageSummary::Extremes`], one number per point of the model:
//!   `m_T[j] = max_{i∈T} d_ij` for complete linkage (`min` for single) at the
//!   points `j ∉ T`, and `+∞` (complete) or `-∞` (single) at the points of
//!   `T`. The infinity is the cluster's membership mask, and it makes the
//!   merge one element-wise `max` (`min`) of the two vectors, `O(n)`: a
//!   point of either cluster stays infinite, and the others get the extreme
//!   over the union. A split then costs
//!   `d(L, R) = max_{j∈R} m_L[j]` (`min` for single), the points of `R` being
//!   those where `m_R` is infinite, `O(n)`. The vector is on the heap:
//!   `8 n` bytes per cluster (plus a 16-byte pointer and the allocator's
//!   overhead), so a dense trellis over `n` points holds `2^n · 8 n` bytes of
//!   summaries (160 MiB at `n = 20`, 6.25 GiB at `n = 25`). The model says
//!   so through [`Summarize::summary_heap_bytes`], and the memory checks of
//!   the dense trellis and of exact A* count it before they allocate.
//!   Sparse trellises and the baselines hold one per cluster they create.
//!
//! # Complexity per split
//!
//! | kind | merge | split cost |
//! |---|---|---|
//! | average | `O(\|A\|·\|B\|)` | `O(1)` |
//! | complete, single | `O(n)` | `O(n)` |
//!
//! The dense trellis tabulates `2^n` summaries (one merge each) and evaluates
//! `(3^n - 2^(n+1) + 1)/2` splits.
//!
//! # The A* heuristic
//!
//! [`Search::heuristic`] is the weight of a minimum spanning tree of the
//! cluster's points under `d` (Prim's algorithm, `O(k²)` for `k` points), for
//! all three kinds, and it is admissible ([`Search::admissible`] is true):
//! see [`LinkagePotential::mst_weight`] for the proof. For single linkage it
//! is exact, the cost of the cheapest hierarchy.
//!
//! # Relation to linkage clustering
//!
//! - **Single linkage.** The tree that SciPy's single linkage builds
//!   (from a minimum spanning tree, by Prim's algorithm: each merge at the
//!   length of the MST edge that joins the two clusters) costs exactly the MST weight, the lower bound
//!   above, so it is a MAP tree of `linkage-single` at every β > 0. It is in
//!   general not the only one: every tree whose splits each cut an MST edge
//!   of minimum cross distance costs the same (for three points on a line at
//!   0, 1 and 3, both `((0,1),2)` and `((1,2),0)` cost 3), and the posterior
//!   spreads over them.
//! - **Average and complete linkage.** SciPy's UPGMA and complete linkage
//!   are greedy: they merge the closest pair of clusters first, which is
//!   what [`baselines::greedy`](crate::baselines::greedy) does with these
//!   models at any β > 0. The exact MAP tree minimises the *total* merge
//!   distance over all `(2n-3)!!` trees and can be strictly cheaper than the
//!   greedy tree under the same cost: a cheap merge early can force
//!   expensive merges later.
//!
//! # Range
//!
//! With `d_max` the largest distance, a hierarchy costs at most
//! `(n - 1) d_max`, and the sums inside the average's summaries reach at
//! most `n² d_max / 2`. [`LinkagePotential::new`] refuses distances or a β
//! for which these (or β times the first) could exceed the `f64::MAX / 64`
//! that inference keeps finite, as the weight models do.
//!
//! # Example
//!
//! ```
//! use trellis::{Distances, LinkageKind, LinkagePotential, Matrix, Trellis, tree_cost};
//! use trellis::baselines::{Linkage, linkage};
//!
//! // Four points on a line: 0, 1, 5, 6.
//! let points = Matrix::from_rows(vec![vec![0.0], vec![1.0], vec![5.0], vec![6.0]])?;
//! let d = Distances::from_points(&points)?;
//! let model = LinkagePotential::new(&d, LinkageKind::Single, 2.0)?;
//! let trellis = Trellis::new(&model)?;
//! let map = &trellis.map().tree;
//! assert!(map.clusters().contains(&vec![0, 1]));
//! // The MST of the line has weight 1 + 4 + 1 = 6, the cost of the MAP tree
//! // and of the single-linkage tree.
//! assert_eq!(tree_cost(&model, map)?, 6.0);
//! let scipy_like = linkage(&d.to_vec(), 4, Linkage::Single)?;
//! assert_eq!(tree_cost(&model, &scipy_like)?, 6.0);
//! # Ok::<(), trellis::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use crate::base::set::Points;
use crate::base::weights::{Matrix, Weights};
use crate::baselines::{Linkage, distances_from_similarities, euclidean_distances};
use crate::error::{Error, ErrorKind, Result};
use crate::models::pairwise::{MAX_MAGNITUDE, check_beta, divide_hint};
use crate::models::{Cluster, Model, Search, Summarize};

/// A validated symmetric `n × n` matrix of distances: finite, `>= 0`, with a
/// zero diagonal (the diagonal given is ignored). Cloning is cheap (the
/// entries are shared).
#[derive(Clone, Debug, PartialEq)]
pub struct Distances {
    /// The validated entries (a [`Weights`] checks the shape, finiteness
    /// and symmetry; the distances add `>= 0`).
    d: Weights,
}

impl Distances {
    /// Validates a square matrix of distances: finite, symmetric up to
    /// [`SYMMETRY_TOLERANCE`](crate::SYMMETRY_TOLERANCE) relative to the
    /// largest entry (near-equal pairs are averaged, as by
    /// [`Weights::from_matrix`]), and `>= 0`; the diagonal is ignored.
    ///
    /// # Errors
    ///
    /// An empty, non-square or inconsistent matrix ([`ErrorKind::Empty`],
    /// [`ErrorKind::Shape`]), a NaN or infinite entry
    /// ([`ErrorKind::NonFinite`]), an asymmetric pair
    /// ([`ErrorKind::Asymmetric`]), a negative distance
    /// ([`ErrorKind::Parameter`]), or a matrix that would not fit in memory.
    pub fn from_matrix(m: &Matrix) -> Result<Distances> {
        let d = Weights::from_matrix(m)?;
        if let Some((i, j, v)) = d.first_negative() {
            return Err(Error::parameter(format!(
                "distances must be >= 0, but d[{i}][{j}] = {v} (0-based)"
            )));
        }
        Ok(Distances { d })
    }

    /// Euclidean distances between the rows of `points` (one point per row),
    /// as [`baselines::euclidean_distances`](crate::baselines::euclidean_distances)
    /// computes them: without overflow or underflow (each pair's differences
    /// are divided by the power of two at the largest of them before they are
    /// squared), so points with coordinates near `1e200` or `1e-200` get
    /// their finite distances, and where the direct computation neither
    /// overflows nor underflows the distances are the same to the bit.
    /// `O(n² d)` time, `8 n²` bytes (twice that while validating).
    ///
    /// # Errors
    ///
    /// No points or no coordinates, an inconsistent matrix, a non-finite
    /// coordinate, a distance beyond `f64::MAX` (coordinates near `1e308`;
    /// the message says by how much to divide them), or a matrix that would
    /// not fit in memory.
    pub fn from_points(points: &Matrix) -> Result<Distances> {
        if points.rows.checked_mul(points.cols) != Some(points.data.len()) {
            return Err(Error::shape(format!(
                "the matrix holds {} values, not {} rows x {} columns",
                points.data.len(),
                points.rows,
                points.cols
            )));
        }
        if points.rows == 0 {
            return Err(Error::new(ErrorKind::Empty));
        }
        if points.cols == 0 {
            return Err(Error::shape("the points have no coordinates (0 columns)"));
        }
        let n = points.rows;
        Weights::check_memory(n, None)?;
        // Exactly symmetric with a zero diagonal: both halves are the same value.
        let d = euclidean_distances(points)?;
        Distances::from_dense(n, d)
    }

    /// Distances from a condensed vector, SciPy's `pdist` layout: the
    /// `n (n - 1) / 2` entries `d_01, d_02, …, d_0(n-1), d_12, …` of the
    /// upper triangle, row by row.
    ///
    /// # Errors
    ///
    /// `n = 0`, a vector of the wrong length, a non-finite or a negative
    /// distance (reported at its position `(i, j)` in the square matrix).
    pub fn from_condensed(condensed: &[f64], n: usize) -> Result<Distances> {
        if n == 0 {
            return Err(Error::new(ErrorKind::Empty));
        }
        let pairs = n.checked_mul(n - 1).map(|p| p / 2);
        if pairs != Some(condensed.len()) {
            return Err(Error::shape(format!(
                "a condensed distance vector over {n} points needs n (n - 1) / 2 = {} values, \
                 got {}",
                pairs.map_or_else(|| "too many".to_string(), |p| p.to_string()),
                condensed.len()
            )));
        }
        Weights::check_memory(n, None)?;
        let mut d = vec![0.0; n * n];
        let mut k = 0;
        for i in 0..n {
            for j in i + 1..n {
                d[i * n + j] = condensed[k];
                d[j * n + i] = condensed[k];
                k += 1;
            }
        }
        Distances::from_dense(n, d)
    }

    /// Distances from a condensed vector alone, as SciPy's `linkage(y)`
    /// takes them: its length must be `n (n - 1) / 2` for a number of points
    /// `n >= 1` ([`condensed_points`]; an empty vector is one point), the
    /// layout and checks are those of [`Distances::from_condensed`].
    ///
    /// # Errors
    ///
    /// A length that is not `n (n - 1) / 2` ([`ErrorKind::Shape`], naming the
    /// length and the nearest valid ones), and the errors of
    /// [`Distances::from_condensed`].
    pub fn from_condensed_vector(condensed: &[f64]) -> Result<Distances> {
        let n = condensed_points(condensed.len())?;
        Distances::from_condensed(condensed, n)
    }

    /// Distances from similarities, `d_ij = max_{k≠l} w_kl - w_ij`
    /// ([`baselines::distances_from_similarities`](crate::baselines::distances_from_similarities),
    /// the A* paper's recipe for running linkage on correlation-clustering
    /// weights).
    ///
    /// # Errors
    ///
    /// A distance that overflows (similarities of both signs near `f64::MAX`).
    pub fn from_similarities(w: &Weights) -> Result<Distances> {
        let d = distances_from_similarities(w);
        if d.iter().any(|v| !v.is_finite()) {
            return Err(Error::parameter(
                "the distances max(w) - w overflow floating-point numbers; rescale the weights",
            ));
        }
        Distances::from_dense(w.n(), d)
    }

    /// Validates a row-major `n × n` matrix (any diagonal).
    fn from_dense(n: usize, data: Vec<f64>) -> Result<Distances> {
        Distances::from_matrix(&Matrix {
            rows: n,
            cols: n,
            data,
        })
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.d.n()
    }

    /// `d_ij` (0 on the diagonal).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.d.get(i, j)
    }

    /// Row `i` of the matrix.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        self.d.row(i)
    }

    /// The largest distance (0 for fewer than two points).
    pub fn max(&self) -> f64 {
        (0..self.n())
            .flat_map(|i| self.row(i).iter().copied())
            .fold(0.0, f64::max)
    }

    /// The matrix, row-major `n × n`: the input of
    /// [`baselines::linkage`](crate::baselines::linkage).
    pub fn to_vec(&self) -> Vec<f64> {
        (0..self.n())
            .flat_map(|i| self.row(i).iter().copied())
            .collect()
    }
}

/// The number of points `n >= 1` of a condensed distance vector of `len`
/// values, `len = n (n - 1) / 2` (0 values: one point).
///
/// # Errors
///
/// A length that is no such number ([`ErrorKind::Shape`]): the message names
/// it and the valid lengths on either side, as SciPy refuses a `y` whose
/// length is not a binomial coefficient.
pub fn condensed_points(len: usize) -> Result<usize> {
    let pairs = |n: usize| n.checked_mul(n.saturating_sub(1)).map(|p| p / 2);
    // The root of n² - n - 2 len = 0, then exact integers around it.
    let mut n = ((1.0 + (1.0 + 8.0 * len as f64).sqrt()) / 2.0) as usize;
    n = n.max(1);
    while n > 1 && pairs(n).is_none_or(|p| p > len) {
        n -= 1;
    }
    while pairs(n + 1).is_some_and(|p| p <= len) {
        n += 1;
    }
    if pairs(n) == Some(len) {
        return Ok(n);
    }
    Err(Error::shape(format!(
        "a condensed distance vector holds n (n - 1) / 2 values for n points (0, 1, 3, 6, \
         10, ...), but this one has {len}: {} values are {n} points, {} are {}",
        pairs(n).map_or_else(|| "?".to_string(), |p| p.to_string()),
        pairs(n + 1).map_or_else(|| "?".to_string(), |p| p.to_string()),
        n + 1
    )))
}

/// Which linkage distance a [`LinkagePotential`] scores splits with (see
/// the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkageKind {
    /// `linkage-average`: the mean distance across the split (UPGMA's).
    Average,
    /// `linkage-complete`: the largest distance across the split.
    Complete,
    /// `linkage-single`: the smallest distance across the split.
    Single,
}

impl LinkageKind {
    /// The three kinds.
    pub const ALL: [LinkageKind; 3] = [
        LinkageKind::Average,
        LinkageKind::Complete,
        LinkageKind::Single,
    ];

    /// The model's name: `linkage-average`, `linkage-complete` or `linkage-single`.
    pub fn name(self) -> &'static str {
        match self {
            LinkageKind::Average => "linkage-average",
            LinkageKind::Complete => "linkage-complete",
            LinkageKind::Single => "linkage-single",
        }
    }

    /// The classic agglomerative method with the same cluster distance
    /// ([`baselines::linkage`](crate::baselines::linkage)).
    pub fn linkage(self) -> Linkage {
        match self {
            LinkageKind::Average => Linkage::Average,
            LinkageKind::Complete => Linkage::Complete,
            LinkageKind::Single => Linkage::Single,
        }
    }
}

impl fmt::Display for LinkageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LinkageKind {
    type Err = Error;

    /// Parses `linkage-average`, `linkage-complete`, `linkage-single` (or
    /// `average`, `complete`, `single`).
    fn from_str(s: &str) -> Result<LinkageKind> {
        let key = s.strip_prefix("linkage-").unwrap_or(s);
        match key {
            "average" => Ok(LinkageKind::Average),
            "complete" => Ok(LinkageKind::Complete),
            "single" => Ok(LinkageKind::Single),
            _ => Err(Error::parameter(format!(
                "unknown linkage {s:?}: expected linkage-average, linkage-complete or \
                 linkage-single"
            ))),
        }
    }
}

/// The summary of a cluster under a [`LinkagePotential`] (see the
/// [module docs](self) for why two forms, and their memory).
#[derive(Clone, Debug, PartialEq)]
pub enum LinkageSummary {
    /// Average linkage: the size and the sum of the distances inside.
    Sum {
        /// `|T|`.
        size: usize,
        /// `W(T) = Σ_{i<j∈T} d_ij`.
        inside: f64,
    },
    /// Complete (single) linkage: for every point `j` of the model,
    /// `max_{i∈T} d_ij` (`min`) if `j ∉ T`, `+∞` (`-∞`) if `j ∈ T`.
    Extremes(Box<[f64]>),
}

/// A linkage potential: `log ψ(L, R) = -β · d(L, R)` with `d` the average,
/// complete or single linkage distance (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct LinkagePotential {
    distances: Distances,
    kind: LinkageKind,
    beta: f64,
}

impl LinkagePotential {
    /// The model over `distances` at inverse temperature `beta >= 0`.
    ///
    /// # Errors
    ///
    /// β NaN, infinite or negative, or distances and β whose costs could
    /// overflow (see the module docs' range).
    pub fn new(distances: &Distances, kind: LinkageKind, beta: f64) -> Result<LinkagePotential> {
        check_beta(beta)?;
        let n = distances.n().max(1) as f64;
        let d_max = distances.max();
        let (quantity, bound) = match kind {
            // The summaries' sums reach n²/2 · d_max, more than a hierarchy's cost.
            LinkageKind::Average => ("the sum of the distances inside a cluster", n * n * d_max),
            _ => ("the cost of a hierarchy", n * d_max),
        };
        if bound.is_nan() || bound > MAX_MAGNITUDE {
            return Err(Error::parameter(format!(
                "the distances are too large for {kind}: {quantity} could reach {bound:.3e}, \
                 beyond the {MAX_MAGNITUDE:.1e} that inference can represent; {}",
                divide_hint(bound, "distances")
            )));
        }
        let scaled = beta * n * d_max;
        if scaled.is_nan() || scaled > MAX_MAGNITUDE {
            return Err(Error::parameter(format!(
                "beta = {beta:e} is too large for these distances: under {kind} a hierarchy's \
                 log-potential could reach -{scaled:.3e}, beyond the {MAX_MAGNITUDE:.1e} that \
                 inference can represent; use a beta of at most {} or rescale the distances",
                crate::base::range::fmt3(crate::base::range::round_down_3(
                    MAX_MAGNITUDE / (n * d_max)
                ))
            )));
        }
        Ok(LinkagePotential {
            distances: distances.clone(),
            kind,
            beta,
        })
    }

    /// The same model at another β.
    pub fn with_beta(&self, beta: f64) -> Result<LinkagePotential> {
        LinkagePotential::new(&self.distances, self.kind, beta)
    }

    /// The distances.
    pub fn distances(&self) -> &Distances {
        &self.distances
    }

    /// The linkage distance the model scores splits with.
    pub fn kind(&self) -> LinkageKind {
        self.kind
    }

    /// The inverse temperature β.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// `d(L, R)` straight from the distances, `O(|L|·|R|)`, for two
    /// disjoint non-empty lists of points (`NaN` if one is empty).
    pub fn linkage_distance(&self, left: &[usize], right: &[usize]) -> f64 {
        if left.is_empty() || right.is_empty() {
            return f64::NAN;
        }
        let cross = left
            .iter()
            .flat_map(|&i| right.iter().map(move |&j| (i, j)))
            .map(|(i, j)| self.distances.get(i, j));
        match self.kind {
            LinkageKind::Average => cross.sum::<f64>() / (left.len() as f64 * right.len() as f64),
            LinkageKind::Complete => cross.fold(f64::NEG_INFINITY, f64::max),
            LinkageKind::Single => cross.fold(f64::INFINITY, f64::min),
        }
    }

    /// The weight of a minimum spanning tree over `points` under the
    /// distances (Prim's algorithm, `O(k²)`; 0 for fewer than two points):
    /// the A* heuristic of all three kinds.
    ///
    /// *Admissible:* every split `(L, R)` of a hierarchy costs at least the
    /// smallest distance across it (a mean or a maximum of distances is at
    /// least their minimum), and the `k - 1` edges realising these minima
    /// form a spanning tree of the `k` points (by induction, the edges below
    /// each node span its cluster, and the node's edge joins its two
    /// children's components), so every hierarchy costs at least the MST
    /// weight. For single linkage the bound is attained (the single-linkage
    /// tree's merges are the MST's edges), so it is exact.
    pub fn mst_weight(&self, points: &[usize]) -> f64 {
        let k = points.len();
        if k < 2 {
            return 0.0;
        }
        // key[u]: the distance from the tree (so far) to points[u].
        let first = self.distances.row(points[0]);
        let mut key: Vec<f64> = points.iter().map(|&p| first[p]).collect();
        let mut in_tree = vec![false; k];
        in_tree[0] = true;
        let mut total = 0.0;
        for _ in 1..k {
            let (t, d) = (0..k)
                .filter(|&u| !in_tree[u])
                .map(|u| (u, key[u]))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .expect("a point is left");
            total += d;
            in_tree[t] = true;
            let row = self.distances.row(points[t]);
            for (u, &p) in points.iter().enumerate() {
                if !in_tree[u] && row[p] < key[u] {
                    key[u] = row[p];
                }
            }
        }
        total
    }

    /// The element-wise extreme of two `Extremes` vectors.
    #[inline]
    fn merge_extremes(&self, a: &[f64], b: &[f64]) -> Box<[f64]> {
        match self.kind {
            LinkageKind::Single => a.iter().zip(b).map(|(x, y)| x.min(*y)).collect(),
            _ => a.iter().zip(b).map(|(x, y)| x.max(*y)).collect(),
        }
    }
}

impl Summarize for LinkagePotential {
    type Summary = LinkageSummary;

    fn num_points(&self) -> usize {
        self.distances.n()
    }

    /// Complete and single linkage keep `n` floats per summary on the heap
    /// (and the allocator's 16 bytes of bookkeeping); average linkage none.
    fn summary_heap_bytes(&self) -> u64 {
        match self.kind {
            LinkageKind::Average => 0,
            LinkageKind::Complete | LinkageKind::Single => 8 * self.distances.n() as u64 + 16,
        }
    }

    fn leaf(&self, i: usize) -> LinkageSummary {
        match self.kind {
            LinkageKind::Average => LinkageSummary::Sum {
                size: 1,
                inside: 0.0,
            },
            LinkageKind::Complete | LinkageKind::Single => {
                let member = if self.kind == LinkageKind::Complete {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                };
                let mut m: Box<[f64]> = self.distances.row(i).into();
                m[i] = member;
                LinkageSummary::Extremes(m)
            }
        }
    }

    #[inline]
    fn merge(
        &self,
        a: Cluster<'_, LinkageSummary>,
        b: Cluster<'_, LinkageSummary>,
    ) -> LinkageSummary {
        match (a.summary, b.summary) {
            (
                LinkageSummary::Sum {
                    size: na,
                    inside: wa,
                },
                LinkageSummary::Sum {
                    size: nb,
                    inside: wb,
                },
            ) => {
                let (small, large) = if b.points.len() <= a.points.len() {
                    (b.points, a.points)
                } else {
                    (a.points, b.points)
                };
                let mut inside = wa + wb;
                for i in small.iter() {
                    let row = self.distances.row(i);
                    for j in large.iter() {
                        inside += row[j];
                    }
                }
                LinkageSummary::Sum {
                    size: na + nb,
                    inside,
                }
            }
            (LinkageSummary::Extremes(ma), LinkageSummary::Extremes(mb)) => {
                LinkageSummary::Extremes(self.merge_extremes(ma, mb))
            }
            // Summaries of different kinds (not this model's): every split
            // of the result is NaN, which inference reports.
            _ => LinkageSummary::Sum {
                size: 0,
                inside: f64::NAN,
            },
        }
    }
}

impl Model for LinkagePotential {
    #[inline]
    fn log_potential(&self, p: &LinkageSummary, l: &LinkageSummary, r: &LinkageSummary) -> f64 {
        -self.beta * self.split_cost(p, l, r)
    }
}

impl Search for LinkagePotential {
    /// `d(L, R)`; NaN for summaries of mismatched kinds.
    #[inline]
    fn split_cost(&self, p: &LinkageSummary, l: &LinkageSummary, r: &LinkageSummary) -> f64 {
        match (p, l, r) {
            (
                LinkageSummary::Sum { inside: ws, .. },
                LinkageSummary::Sum {
                    size: nl,
                    inside: wl,
                },
                LinkageSummary::Sum {
                    size: nr,
                    inside: wr,
                },
            ) => (ws - wl - wr).max(0.0) / (*nl as f64 * *nr as f64),
            (_, LinkageSummary::Extremes(ml), LinkageSummary::Extremes(mr)) => match self.kind {
                // The points of R are where m_R is +∞ (complete) or -∞ (single).
                LinkageKind::Single => ml
                    .iter()
                    .zip(mr.iter())
                    .filter(|&(_, &y)| y == f64::NEG_INFINITY)
                    .fold(f64::INFINITY, |acc, (&x, _)| acc.min(x)),
                _ => ml
                    .iter()
                    .zip(mr.iter())
                    .filter(|&(_, &y)| y == f64::INFINITY)
                    .fold(f64::NEG_INFINITY, |acc, (&x, _)| acc.max(x)),
            },
            _ => f64::NAN,
        }
    }

    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        -self.beta * cost
    }

    /// The MST weight of the cluster's points ([`LinkagePotential::mst_weight`]).
    fn heuristic(&self, cluster: Cluster<'_, LinkageSummary>) -> f64 {
        let points: Vec<usize> = cluster.points.iter().collect();
        self.mst_weight(&points)
    }

    fn admissible(&self) -> bool {
        true
    }

    fn without(&self, cluster: Cluster<'_, LinkageSummary>, x: usize) -> LinkageSummary {
        match cluster.summary {
            LinkageSummary::Sum { size, inside } => {
                let row = self.distances.row(x);
                let across: f64 = cluster
                    .points
                    .iter()
                    .filter(|&j| j != x)
                    .map(|j| row[j])
                    .sum();
                LinkageSummary::Sum {
                    size: size - 1,
                    inside: inside - across,
                }
            }
            // A max (min) cannot be undone: rebuilt from the other points.
            LinkageSummary::Extremes(_) => {
                let rest: Vec<usize> = cluster.points.iter().filter(|&i| i != x).collect();
                self.summary(Points::List(&rest))
            }
        }
    }
}
