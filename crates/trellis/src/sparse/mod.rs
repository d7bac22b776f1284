//! Sparse trellises: exact inference restricted to a family of clusters
//! (hierarchical trellis paper §3; flat trellis paper §4).
//!
//! The full trellis has a vertex for every subset, `2^n` of them. A sparse
//! trellis keeps only a chosen family of clusters, typically those that occur
//! in a sample of good trees (from beam search, or from a simulator), and
//! gives every vertex `V` as children **every** split `(L, R)` of it into two
//! members of the family, `L` holding `V`'s lowest point. One structure
//! serves both kinds of clustering:
//!
//! - **Hierarchies** ([`SparseTrellis::from_clusters`], [`from_trees`]): the
//!   family plus every singleton and the whole set. It realises every tree
//!   all of whose clusters are in the family, usually far more trees than
//!   were put in. Exactly as on the full trellis but over the family only,
//!
//!   ```text
//!   Z(V) = Σ_{(L,R)} ψ(L,R) Z(L) Z(R),    M(V) = max_{(L,R)} ψ(L,R) M(L) M(R),
//!   O(V) = Σ_{P ⊃ V, (V,W) a child pair of P} O(P) ψ(V,W) Z(W),   P(V) = O(V) Z(V) / Z,
//!   ```
//!
//!   so `log Z`, the MAP tree, exact samples and the marginal of every
//!   vertex ([`SparseInference::marginals`]) are those of the distribution
//!   restricted to the realised trees. The number of realised trees is
//!   counted exactly, and the **sparsity index** is `realised / (2n-3)!!`.
//! - **Partitions** ([`SparseTrellis::flat`]): the family plus the whole
//!   set, which must be *closed under recursive complement* (for `x ⊂ y`
//!   both in it, `y ∖ x` is too; flat paper Definition 5 and Fact 5), so that
//!   every partial partition can be completed:
//!
//!   ```text
//!   Z(V) = E(V) + Σ_{(C,R)} E(C) Z(R),    M(V) = max(E(V), max_{(C,R)} E(C) M(R)),
//!   ```
//!
//!   over the partitions made of the family's clusters.
//!
//! As in the dense trellises, every vertex keeps its MAP value `log M(V)` and
//! the relative part `r(V) = log Z(V) - log M(V)`, and every probability is
//! computed from `log ψ(L, R) + log M(L) + log M(R) - log M(V)` (exactly 0
//! for the MAP split) and the relative parts, never as a difference of huge
//! logs: exact at any temperature.
//!
//! Vertices are sets of either representation ([`SetRepr`]): `u128` up to
//! 128 points (the default type parameter, [`Set`]), [`WideSet`](crate::WideSet)
//! beyond, with the same results on the same clusters. Building costs
//! `O(|V|²/n)` set tests (the left part of a split shares the vertex's
//! lowest point); inference costs one `log ψ` (or `log E`) per child pair
//! (vertex) and `O(E)` for `E` child pairs.
//!
//! [`from_trees`]: SparseTrellis::from_trees

use std::sync::Arc;

use num_bigint::BigUint;
use rand::{Rng, RngExt};

use crate::base::count::{self, bell, num_trees};
use crate::base::scaled::{LogSumExp, RelativeSum};
use crate::base::set::{MAX_SET_POINTS, Set, SetMapOf, SetRepr};
use crate::base::tree::{ScoredTree, Tree};
use crate::error::{Error, ErrorKind, Result};
use crate::flat::{Partition, ScoredPartition};
use crate::models::{Cluster, Energy, Model};

/// Largest number of points of a sparse trellis over `u128` sets
/// ([`Set`]); a `SparseTrellis<WideSet>` takes any number.
pub const MAX_SPARSE_POINTS: usize = MAX_SET_POINTS;

/// Which clusterings a sparse trellis describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Binary hierarchies: every singleton is a vertex.
    Hierarchical,
    /// Partitions: the family is closed under recursive complement.
    Flat,
}

/// A sparse trellis: a family of clusters with all their splits into two
/// members of the family (see the module docs). Cloning it is cheap, and the
/// inferences made on it share it. Its clusters are `u128` sets ([`Set`],
/// up to 128 points) or [`WideSet`](crate::WideSet)s (any number).
#[derive(Clone, Debug)]
pub struct SparseTrellis<S: SetRepr = Set> {
    inner: Arc<Family<S>>,
}

#[derive(Debug)]
struct Family<S> {
    n: usize,
    kind: Kind,
    /// Vertices by increasing size (then value); the root last.
    vertices: Vec<S>,
    index: SetMapOf<S, u32>,
    /// For every vertex, its child pairs `(left, right)` as vertex indices,
    /// `left` holding the vertex's lowest point.
    children: Vec<Vec<(u32, u32)>>,
}

fn check_n<S: SetRepr>(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    if n > S::MAX_POINTS {
        return Err(Error::new(ErrorKind::TooManyPoints {
            n,
            max: S::MAX_POINTS,
            method: "a sparse trellis over 128-bit sets (use wide sets beyond)",
        }));
    }
    Ok(())
}

fn points_of<S: SetRepr>(c: &S) -> Vec<usize> {
    c.points().iter().collect()
}

/// The indices of `vertices` (sorted by size) grouped by their lowest
/// point, each group in increasing size.
fn by_lowest<S: SetRepr>(n: usize, vertices: &[S]) -> Vec<Vec<u32>> {
    let mut groups: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (k, c) in vertices.iter().enumerate() {
        groups[c.lowest()].push(k as u32);
    }
    groups
}

/// The most subset tests a family may need to be built and checked
/// (about a few seconds): beyond, it is refused before any is made.
const MAX_SUBSET_TESTS: u128 = 4_000_000_000;

/// Refuses a family whose build (and, for a flat trellis, closedness check)
/// would take more than [`MAX_SUBSET_TESTS`] subset tests, counted from the
/// group sizes in `O(Σ |cluster|)`.
fn check_subset_tests<S: SetRepr>(kind: Kind, vertices: &[S], groups: &[Vec<u32>]) -> Result<()> {
    let mut tests = 0u128;
    for v in vertices {
        tests += groups[v.lowest()].len() as u128;
        if kind == Kind::Flat {
            tests += v
                .points()
                .iter()
                .map(|p| groups[p].len() as u128)
                .sum::<u128>();
        }
    }
    if tests > MAX_SUBSET_TESTS {
        return Err(Error::parameter(format!(
            "a family of {} clusters needs up to {tests} subset tests to build its trellis{} \
             (the limit is {MAX_SUBSET_TESTS}): give fewer or smaller clusters",
            vertices.len(),
            if kind == Kind::Flat {
                " and check that it is closed under recursive complement"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

fn cluster_error<S: SetRepr>(c: &S, n: usize) -> Error {
    Error::tree(format!(
        "cluster {:?} is not a non-empty subset of the {n} points",
        points_of(c)
    ))
}

/// The clusters of a tree (internal nodes) as sets, children first; its
/// leaves must be below `n` (checked by the caller). Iterative: any depth.
fn tree_clusters<S: SetRepr>(tree: &Tree, n: usize, out: &mut Vec<S>) -> S {
    tree.fold(
        |i| S::singleton(i, n),
        |l, r| {
            let u = l.union(&r);
            out.push(u.clone());
            u
        },
    )
}

impl SparseTrellis<Set> {
    /// The hierarchical trellis of the clusters of the given trees (each over
    /// all `n ≤ 128` points), over `u128` sets;
    /// [`from_trees_as`](SparseTrellis::from_trees_as) for any number.
    pub fn from_trees<'a>(
        n: usize,
        trees: impl IntoIterator<Item = &'a Tree>,
    ) -> Result<SparseTrellis<Set>> {
        SparseTrellis::from_trees_as(n, trees)
    }

    /// The hierarchical trellis of a family of `u128` clusters over `n ≤
    /// 128` points (singletons and the root are always included; clusters
    /// outside the points are an error);
    /// [`from_clusters_as`](SparseTrellis::from_clusters_as) for any set type.
    pub fn from_clusters(
        n: usize,
        clusters: impl IntoIterator<Item = Set>,
    ) -> Result<SparseTrellis<Set>> {
        SparseTrellis::from_clusters_as(n, clusters)
    }

    /// The flat trellis of a family of `u128` clusters over `n ≤ 128` points
    /// (the whole set is added). Fails, naming the clusters, if the family
    /// is not closed under recursive complement; [`flat_as`](SparseTrellis::flat_as)
    /// for any set type.
    pub fn flat(n: usize, clusters: impl IntoIterator<Item = Set>) -> Result<SparseTrellis<Set>> {
        SparseTrellis::flat_as(n, clusters)
    }
}

impl<S: SetRepr> SparseTrellis<S> {
    /// The hierarchical trellis of the clusters of the given trees (each over
    /// all `n` points), with clusters stored as `S`.
    pub fn from_trees_as<'a>(
        n: usize,
        trees: impl IntoIterator<Item = &'a Tree>,
    ) -> Result<SparseTrellis<S>> {
        check_n::<S>(n)?;
        let mut clusters = Vec::new();
        for tree in trees {
            tree.validate(n, true)?;
            tree_clusters(tree, n, &mut clusters);
        }
        SparseTrellis::from_clusters_as(n, clusters)
    }

    /// The hierarchical trellis of a family of clusters over `n` points
    /// (singletons and the root are always included; clusters outside the
    /// points are an error).
    pub fn from_clusters_as(
        n: usize,
        clusters: impl IntoIterator<Item = S>,
    ) -> Result<SparseTrellis<S>> {
        check_n::<S>(n)?;
        let singletons = (0..n).map(|i| S::singleton(i, n));
        SparseTrellis::build(n, Kind::Hierarchical, singletons.chain(clusters))
    }

    /// The flat trellis of a family of clusters over `n` points (the whole
    /// set is added). Fails, naming the clusters, if the family is not closed
    /// under recursive complement.
    pub fn flat_as(n: usize, clusters: impl IntoIterator<Item = S>) -> Result<SparseTrellis<S>> {
        check_n::<S>(n)?;
        let t = SparseTrellis::build(n, Kind::Flat, clusters)?;
        t.check_closed()?;
        Ok(t)
    }

    fn build(
        n: usize,
        kind: Kind,
        clusters: impl IntoIterator<Item = S>,
    ) -> Result<SparseTrellis<S>> {
        let all = S::full(n);
        let mut vertices: Vec<S> = vec![all.clone()];
        for c in clusters {
            if c.is_empty() || !c.fits(n) {
                return Err(cluster_error(&c, n));
            }
            vertices.push(c);
        }
        vertices.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
        vertices.dedup();
        let index: SetMapOf<S, u32> = vertices
            .iter()
            .enumerate()
            .map(|(k, c)| (c.clone(), k as u32))
            .collect();
        // Candidate left parts of V hold V's lowest point, so their own lowest
        // point is V's: group the vertices by lowest point. Each group is in
        // increasing size, so a vertex's scan stops at its own size.
        let by_lowest = by_lowest(n, &vertices);
        check_subset_tests(kind, &vertices, &by_lowest)?;
        let children = vertices
            .iter()
            .map(|v| {
                if v.len() < 2 {
                    return Vec::new();
                }
                by_lowest[v.lowest()]
                    .iter()
                    .map(|&l| (l, &vertices[l as usize]))
                    .take_while(|(_, lc)| lc.len() < v.len())
                    .filter_map(|(l, lc)| {
                        if lc.is_subset(v) {
                            index.get(&v.minus(lc)).map(|&r| (l, r))
                        } else {
                            None
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(SparseTrellis {
            inner: Arc::new(Family {
                n,
                kind,
                vertices,
                index,
                children,
            }),
        })
    }

    /// Fails, naming two clusters, unless the family is closed under
    /// recursive complement.
    ///
    /// A cluster `x ⊊ y` has its lowest point in `y` and fewer points, so
    /// the candidates of `y` are the smaller clusters whose lowest point is
    /// one of `y`'s: `Σ_y Σ_{p ∈ y}` of a group's smaller part, not `V²`.
    fn check_closed(&self) -> Result<()> {
        let f = &self.inner;
        let bits = |c: &S| points_of(c);
        let groups = by_lowest(f.n, &f.vertices);
        for y in &f.vertices {
            let smaller = |p: usize| {
                groups[p]
                    .iter()
                    .map(|&k| &f.vertices[k as usize])
                    .take_while(|x| x.len() < y.len())
            };
            for x in y.points().iter().flat_map(smaller) {
                if x.is_subset(y) && !f.index.contains_key(&y.minus(x)) {
                    return Err(Error::parameter(format!(
                        "the clusters are not closed under recursive complement: {:?} is inside \
                         {:?} but their difference {:?} is not a cluster, so some partitions of \
                         {:?} could not be completed",
                        bits(x),
                        bits(y),
                        bits(&y.minus(x)),
                        bits(y)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Number of points.
    pub fn num_points(&self) -> usize {
        self.inner.n
    }

    /// Which clusterings the trellis describes.
    pub fn kind(&self) -> Kind {
        self.inner.kind
    }

    /// Number of vertices (clusters), singletons (if any) and root included.
    pub fn num_vertices(&self) -> usize {
        self.inner.vertices.len()
    }

    /// Number of child pairs (splits) over all vertices.
    pub fn num_splits(&self) -> usize {
        self.inner.children.iter().map(Vec::len).sum()
    }

    /// The vertices, by increasing size.
    pub fn clusters(&self) -> &[S] {
        &self.inner.vertices
    }

    /// The child pairs `(left, right)` of vertex `k` (indices into
    /// [`clusters`](SparseTrellis::clusters)), `left` holding its lowest point.
    pub(crate) fn children(&self, k: usize) -> &[(u32, u32)] {
        &self.inner.children[k]
    }

    /// The exact number of binary trees the trellis realises (all of whose
    /// clusters are vertices); 0 for a flat trellis without its singletons.
    pub fn num_trees_realised(&self) -> BigUint {
        let f = &self.inner;
        let mut count: Vec<BigUint> = Vec::with_capacity(f.vertices.len());
        for (v, kids) in f.vertices.iter().zip(&f.children) {
            let c = if v.len() == 1 {
                BigUint::from(1u32)
            } else {
                kids.iter()
                    .map(|&(l, r)| &count[l as usize] * &count[r as usize])
                    .sum()
            };
            count.push(c);
        }
        count.pop().unwrap_or_default()
    }

    /// The exact number of partitions made of the trellis's clusters.
    pub fn num_partitions_realised(&self) -> BigUint {
        let f = &self.inner;
        let mut count: Vec<BigUint> = Vec::with_capacity(f.vertices.len());
        for kids in &f.children {
            let c = BigUint::from(1u32)
                + kids
                    .iter()
                    .map(|&(_, r)| count[r as usize].clone())
                    .sum::<BigUint>();
            count.push(c);
        }
        count.pop().unwrap_or_default()
    }

    /// The sparsity index: realised trees / `(2n-3)!!` (hierarchical), or
    /// realised partitions / Bell(n) (flat). It underflows to 0 beyond a few
    /// hundred points; [`log10_sparsity`](SparseTrellis::log10_sparsity) does not.
    pub fn sparsity(&self) -> f64 {
        10f64.powf(self.log10_sparsity())
    }

    /// `log10` of the [sparsity index](SparseTrellis::sparsity), finite for
    /// any number of points (e.g. about -2,570 for 10 trees of 1,000 points).
    pub fn log10_sparsity(&self) -> f64 {
        let n = self.inner.n;
        let (realised, all) = match self.inner.kind {
            Kind::Hierarchical => (self.num_trees_realised(), num_trees(n)),
            Kind::Flat => (self.num_partitions_realised(), bell(n)),
        };
        count::log10(&realised) - count::log10(&all)
    }

    fn check_model_points(&self, m: usize) -> Result<()> {
        if m != self.inner.n {
            return Err(Error::parameter(format!(
                "the model has {m} points but the trellis {}",
                self.inner.n
            )));
        }
        Ok(())
    }

    /// Runs the inside pass of a hierarchical trellis with a model: `log Z`
    /// and the MAP of every vertex.
    pub fn infer<M: Model + ?Sized>(&self, model: &M) -> Result<SparseInference<S>> {
        self.check_model_points(model.num_points())?;
        let f = &self.inner;
        if f.kind != Kind::Hierarchical {
            return Err(Error::parameter(
                "this sparse trellis describes partitions, not hierarchies",
            ));
        }
        let m = f.vertices.len();
        let mut summaries: Vec<M::Summary> = Vec::with_capacity(m);
        let mut log_psi: Vec<Vec<f64>> = Vec::with_capacity(m);
        let mut rel = Vec::with_capacity(m);
        let mut map = Vec::with_capacity(m);
        let mut best = Vec::with_capacity(m);
        for (v, kids) in f.vertices.iter().zip(&f.children) {
            if v.len() == 1 {
                summaries.push(model.leaf(v.lowest()));
                log_psi.push(Vec::new());
                rel.push(0.0);
                map.push(0.0);
                best.push(None);
                continue;
            }
            let summary = match kids.first() {
                Some(&(l, r)) => model.merge(
                    Cluster {
                        points: f.vertices[l as usize].points(),
                        summary: &summaries[l as usize],
                    },
                    Cluster {
                        points: f.vertices[r as usize].points(),
                        summary: &summaries[r as usize],
                    },
                ),
                // A vertex without children: its summary from its points.
                None => model.summary(v.points()),
            };
            let mut sum = RelativeSum::new();
            let (mut best_v, mut arg) = (f64::NEG_INFINITY, None);
            let mut psis = Vec::with_capacity(kids.len());
            for (k, &(l, r)) in kids.iter().enumerate() {
                let psi =
                    model.log_potential(&summary, &summaries[l as usize], &summaries[r as usize]);
                if psi.is_nan() || psi == f64::INFINITY {
                    return Err(Error::new(ErrorKind::BadPotential {
                        detail: format!(
                            "log ψ of the split {:?} | {:?} is {psi}",
                            points_of(&f.vertices[l as usize]),
                            points_of(&f.vertices[r as usize])
                        ),
                    }));
                }
                psis.push(psi);
                let value = psi + map[l as usize] + map[r as usize];
                sum.add(value, rel[l as usize] + rel[r as usize]);
                if value > best_v {
                    best_v = value;
                    arg = Some(k);
                }
            }
            summaries.push(summary);
            log_psi.push(psis);
            rel.push(sum.rel());
            map.push(best_v);
            best.push(arg);
        }
        let root = m - 1;
        let (z, top) = (map[root] + rel[root], map[root]);
        if z.is_nan() || z == f64::INFINITY || top == f64::INFINITY {
            return Err(Error::new(ErrorKind::BadPotential {
                detail: "the log-potential of some tree overflows".into(),
            }));
        }
        if z == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoTree));
        }
        Ok(SparseInference {
            family: Arc::clone(&self.inner),
            weights: log_psi,
            rel,
            map,
            best,
        })
    }

    /// Runs the inside pass of a flat trellis with an energy: `log Z` and the
    /// MAP partition of every vertex, over the partitions made of its clusters.
    pub fn infer_flat<E: Energy + ?Sized>(&self, energy: &E) -> Result<SparseFlatInference<S>> {
        self.check_model_points(energy.num_points())?;
        let f = &self.inner;
        if f.kind != Kind::Flat {
            return Err(Error::parameter(
                "this sparse trellis describes hierarchies, not partitions",
            ));
        }
        let m = f.vertices.len();
        let mut energies = Vec::with_capacity(m);
        for v in &f.vertices {
            let e = energy.log_energy(&energy.summary(v.points()));
            if e.is_nan() || e == f64::INFINITY {
                return Err(Error::new(ErrorKind::BadPotential {
                    detail: format!("log E of cluster {:?} is {e}", points_of(v)),
                }));
            }
            energies.push(e);
        }
        let mut rel = vec![0.0; m];
        let mut map = vec![f64::NEG_INFINITY; m];
        // The cluster holding the vertex's lowest point in its MAP partition:
        // `None` for the whole vertex, else the child pair.
        let mut best: Vec<Option<usize>> = vec![None; m];
        for v in 0..m {
            let mut sum = RelativeSum::new();
            sum.add(energies[v], 0.0);
            let mut bv = energies[v];
            for (k, &(c, r)) in f.children[v].iter().enumerate() {
                let value = energies[c as usize] + map[r as usize];
                sum.add(value, rel[r as usize]);
                if value > bv {
                    bv = value;
                    best[v] = Some(k);
                }
            }
            rel[v] = sum.rel();
            map[v] = bv;
        }
        let z = map[m - 1] + rel[m - 1];
        if z.is_nan() || z == f64::INFINITY {
            return Err(Error::new(ErrorKind::BadPotential {
                detail: "the log-energy of some partition overflows".into(),
            }));
        }
        if z == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoPartition));
        }
        let mut clusters = Vec::new();
        let mut v = m - 1;
        loop {
            match best[v] {
                None => {
                    clusters.push(points_of(&f.vertices[v]));
                    break;
                }
                Some(k) => {
                    let (c, r) = f.children[v][k];
                    clusters.push(points_of(&f.vertices[c as usize]));
                    v = r as usize;
                }
            }
        }
        clusters.sort();
        Ok(SparseFlatInference {
            family: Arc::clone(&self.inner),
            map: ScoredPartition {
                clusters,
                log_energy: map[m - 1],
            },
            energies,
            values: map,
            rel,
        })
    }
}

/// `log p` of an option whose value (the floating-point sum the MAP pass
/// maximised) is `value` and whose parts' relative parts sum to `rel_parts`,
/// at a vertex of MAP value `map` and relative part `rel` (see the module
/// docs): `-∞` for an option of zero weight.
#[inline]
fn option_log_p(value: f64, rel_parts: f64, map: f64, rel: f64) -> f64 {
    if value == f64::NEG_INFINITY {
        return value;
    }
    ((value - map) + rel_parts - rel).min(0.0)
}

/// Draws child pair `k` of a vertex with probability `exp(log_p(k))`
/// (`None`: keep the vertex whole, with log-probability `whole`; flat
/// trellises), never an option of probability zero.
fn draw<R: Rng + ?Sized>(
    rng: &mut R,
    whole: Option<f64>,
    log_p: impl Iterator<Item = f64>,
) -> Option<usize> {
    let u: f64 = rng.random();
    let mut acc = 0.0;
    let mut last = None;
    let options = whole
        .map(|w| (None, w))
        .into_iter()
        .chain(log_p.enumerate().map(|(k, w)| (Some(k), w)));
    for (choice, w) in options {
        let p = w.exp();
        if p > 0.0 {
            last = Some(choice);
            acc += p;
            if acc > u {
                return choice;
            }
        }
    }
    // Rounding left the running sum at or below u: take the last possible option.
    last.unwrap_or(if whole.is_some() { None } else { Some(0) })
}

/// `log Z`, MAP, samples and marginals of a model on a hierarchical
/// [`SparseTrellis`]. It shares the trellis.
#[derive(Clone, Debug)]
pub struct SparseInference<S: SetRepr = Set> {
    family: Arc<Family<S>>,
    /// `log ψ` of every child pair of every vertex.
    weights: Vec<Vec<f64>>,
    /// `r(V) = log Z(V) - log M(V)` (see the module docs).
    rel: Vec<f64>,
    /// `log M(V)`.
    map: Vec<f64>,
    best: Vec<Option<usize>>,
}

impl<S: SetRepr> SparseInference<S> {
    /// `log Z` over the realised trees.
    pub fn log_z(&self) -> f64 {
        let root = self.map.len() - 1;
        self.map[root] + self.rel[root]
    }

    /// `log p` of the child pair `(l, r)` (with `log ψ` `psi`) of vertex `k`.
    #[inline]
    fn split_log_p(&self, k: usize, (l, r): (u32, u32), psi: f64) -> f64 {
        let (l, r) = (l as usize, r as usize);
        let value = psi + self.map[l] + self.map[r];
        option_log_p(value, self.rel[l] + self.rel[r], self.map[k], self.rel[k])
    }

    /// The best realised tree with its log-potential.
    pub fn map(&self) -> ScoredTree {
        ScoredTree {
            tree: self.tree_at(self.map.len() - 1, &mut |k| {
                self.best[k].expect("a MAP split")
            }),
            log_potential: *self.map.last().expect("root"),
        }
    }

    /// An exact sample from the distribution restricted to the realised trees.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Tree {
        self.tree_at(self.map.len() - 1, &mut |k| {
            let kids = &self.family.children[k];
            let log_p = kids
                .iter()
                .zip(&self.weights[k])
                .map(|(&pair, &psi)| self.split_log_p(k, pair, psi));
            draw(rng, None, log_p).unwrap_or(0)
        })
    }

    /// `k` samples, reproducible from `seed` (see [`crate::random`]).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Tree> {
        let mut rng = crate::random::rng(seed);
        (0..k).map(|_| self.sample(&mut rng)).collect()
    }

    /// The marginal of every vertex: one top-down pass over the child pairs,
    /// `O(E)`, `P(V) = Σ P(U) p(V, W | U)` over the parents `U` of `V`
    /// (exact at any temperature, see the module docs).
    pub fn marginals(&self) -> SparseMarginals<S> {
        let f = &self.family;
        let m = f.vertices.len();
        let mut parents: Vec<LogSumExp> = vec![LogSumExp::new(); m];
        let mut log_p = vec![f64::NEG_INFINITY; m];
        log_p[m - 1] = 0.0;
        for v in (0..m).rev() {
            if v != m - 1 {
                log_p[v] = parents[v].ln().min(0.0);
            }
            let o = log_p[v];
            if o == f64::NEG_INFINITY {
                continue;
            }
            for (&(l, r), &psi) in f.children[v].iter().zip(&self.weights[v]) {
                let p = o + self.split_log_p(v, (l, r), psi);
                parents[l as usize].add(p);
                parents[r as usize].add(p);
            }
        }
        SparseMarginals {
            family: Arc::clone(&self.family),
            log_p,
        }
    }

    /// The tree below vertex `k`, choosing each split with `choose(vertex)`.
    fn tree_at(&self, k: usize, choose: &mut dyn FnMut(usize) -> usize) -> Tree {
        let v = &self.family.vertices[k];
        if v.len() == 1 {
            return Tree::Leaf(v.lowest());
        }
        let (l, r) = self.family.children[k][choose(k)];
        let left = self.tree_at(l as usize, choose);
        let right = self.tree_at(r as usize, choose);
        Tree::node(left, right)
    }
}

/// The marginal of every vertex of a hierarchical sparse trellis: the
/// probability, under the distribution restricted to the realised trees,
/// that a tree holds the cluster.
#[derive(Clone, Debug)]
pub struct SparseMarginals<S: SetRepr = Set> {
    family: Arc<Family<S>>,
    log_p: Vec<f64>,
}

impl<S: SetRepr> SparseMarginals<S> {
    /// `log P(S)`: `-∞` for a set that is not a vertex (it is in no realised tree).
    pub fn log_p(&self, cluster: S) -> f64 {
        self.family
            .index
            .get(&cluster)
            .map_or(f64::NEG_INFINITY, |&k| self.log_p[k as usize])
    }

    /// `P(S)`.
    pub fn p(&self, cluster: S) -> f64 {
        self.log_p(cluster).exp()
    }

    /// The maximum-clade-credibility tree among the realised trees: the one
    /// maximising `Σ log P(C)` over its non-trivial clusters (see
    /// [`crate::summary`]), with that sum. One max-plus pass over the child
    /// pairs, `O(E)`: `M(V) = max_{(L,R)} [M(L) + c(L) + M(R) + c(R)]`, `c`
    /// being `log P` (0 for a single point). Ties: the first child pair.
    pub fn mcc(&self) -> (Tree, f64) {
        let f = &self.family;
        let m = f.vertices.len();
        let c = |k: usize| {
            if f.vertices[k].len() == 1 {
                0.0
            } else {
                self.log_p[k]
            }
        };
        let mut best = vec![f64::NEG_INFINITY; m];
        let mut arg = vec![0usize; m];
        for v in 0..m {
            if f.vertices[v].len() == 1 {
                best[v] = 0.0;
                continue;
            }
            for (k, &(l, r)) in f.children[v].iter().enumerate() {
                let (l, r) = (l as usize, r as usize);
                let value = best[l] + c(l) + best[r] + c(r);
                if value > best[v] {
                    best[v] = value;
                    arg[v] = k;
                }
            }
        }
        fn build<S: SetRepr>(f: &Family<S>, arg: &[usize], k: usize) -> Tree {
            let v = &f.vertices[k];
            if v.len() == 1 {
                return Tree::Leaf(v.lowest());
            }
            let (l, r) = f.children[k][arg[k]];
            Tree::node(build(f, arg, l as usize), build(f, arg, r as usize))
        }
        (build(f, &arg, m - 1), best[m - 1])
    }

    /// Every non-singleton proper cluster with probability `> 0` and `>= min_p`,
    /// most probable first (ties by set).
    pub fn clusters(&self, min_p: f64) -> Vec<(S, f64)> {
        let m = self.family.vertices.len();
        let mut out: Vec<(S, f64)> = self.family.vertices[..m - 1]
            .iter()
            .zip(&self.log_p)
            .filter(|(v, _)| v.len() >= 2)
            .map(|(v, lp)| (v.clone(), lp.exp()))
            .filter(|&(_, p)| p > 0.0 && p >= min_p)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// `log Z`, MAP and samples of an energy on a flat [`SparseTrellis`]. It
/// shares the trellis.
#[derive(Clone, Debug)]
pub struct SparseFlatInference<S: SetRepr = Set> {
    family: Arc<Family<S>>,
    map: ScoredPartition,
    energies: Vec<f64>,
    /// `log M(V)` of every vertex.
    values: Vec<f64>,
    /// `r(V) = log Z(V) - log M(V)`.
    rel: Vec<f64>,
}

impl<S: SetRepr> SparseFlatInference<S> {
    /// `log Z` over the partitions made of the family's clusters.
    pub fn log_z(&self) -> f64 {
        let root = self.values.len() - 1;
        self.values[root] + self.rel[root]
    }

    /// The best such partition with its log-energy.
    pub fn map(&self) -> &ScoredPartition {
        &self.map
    }

    /// An exact sample of a partition made of the family's clusters.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Partition {
        let f = &self.family;
        let mut out = Vec::new();
        let mut v = f.vertices.len() - 1;
        loop {
            let (map, rel) = (self.values[v], self.rel[v]);
            let whole = option_log_p(self.energies[v], 0.0, map, rel);
            let log_p = f.children[v].iter().map(|&(c, r)| {
                let r = r as usize;
                option_log_p(
                    self.energies[c as usize] + self.values[r],
                    self.rel[r],
                    map,
                    rel,
                )
            });
            match draw(rng, Some(whole), log_p) {
                None => {
                    out.push(points_of(&f.vertices[v]));
                    break;
                }
                Some(k) => {
                    let (c, r) = f.children[v][k];
                    out.push(points_of(&f.vertices[c as usize]));
                    v = r as usize;
                }
            }
        }
        out.sort();
        out
    }

    /// `k` samples, reproducible from `seed` (see [`crate::random`]).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Partition> {
        let mut rng = crate::random::rng(seed);
        (0..k).map(|_| self.sample(&mut rng)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_family_realises_every_tree() {
        for n in 1..=7 {
            let all: Vec<Set> = (1..1u128 << n).collect();
            let t = SparseTrellis::from_clusters(n, all).unwrap();
            assert_eq!(t.num_trees_realised(), num_trees(n));
            assert!((t.sparsity() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn full_flat_family_realises_every_partition() {
        for n in 1..=7 {
            let all: Vec<Set> = (1..1u128 << n).collect();
            let t = SparseTrellis::flat(n, all).unwrap();
            assert_eq!(t.num_partitions_realised(), bell(n));
            assert!((t.sparsity() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn one_tree_realises_itself() {
        let tree = Tree::parse("[[0,1],[2,[3,4]]]").unwrap();
        let t = SparseTrellis::from_trees(5, [&tree]).unwrap();
        assert_eq!(t.num_trees_realised(), BigUint::from(1u32));
        assert!((t.sparsity() - 1.0 / 105.0).abs() < 1e-15);
        // Two trees share the root; together they realise more than 2 trees
        // when their clusters combine: [[0,1],[2,[3,4]]] and [[0,1],[[2,3],4]]
        // give 2 trees; adding [[[0,1],2],[3,4]] gives the vertex {3,4} a new parent.
        let more = [
            Tree::parse("[[0,1],[2,[3,4]]]").unwrap(),
            Tree::parse("[[[0,1],2],[3,4]]").unwrap(),
        ];
        let t = SparseTrellis::from_trees(5, &more).unwrap();
        assert_eq!(t.num_trees_realised(), BigUint::from(2u32));
        assert!(SparseTrellis::from_clusters(3, [0b1000]).is_err());
    }

    #[test]
    fn flat_families_must_be_closed() {
        // {0, 1} inside the whole set {0, 1, 2} needs {2}.
        assert!(SparseTrellis::flat(3, [0b011]).is_err());
        let t = SparseTrellis::flat(3, [0b011, 0b100]).unwrap();
        assert_eq!(t.kind(), Kind::Flat);
        assert_eq!(t.num_partitions_realised(), BigUint::from(2u32));
    }
}
