//! Approximate A* (§4): the same search on a sparse trellis that grows
//! (the algorithm is documented on [`approximate`]).

use std::time::Instant;

use rand::RngExt;
use rand::seq::SliceRandom;

use super::Set;
use super::engine::{
    Children, Engine, Outcome, check_points_of, map_bytes, num_splits, search_budget, single_point,
};
use crate::base::random::{self, SeededRng};
use crate::base::run::Options;
use crate::base::set::{Points, SetMapOf, SetRepr, WideSet};
use crate::base::tree::{ScoredTree, Tree};
use crate::error::{Error, ErrorKind, Result};
use crate::models::{Cluster, Search, tree_cost};
use crate::sparse::SparseTrellis;

/// How the sampled candidates become children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidates {
    /// The `top_k` best by `cost + H` (the paper's "best K sampling").
    TopK,
    /// `top_k` drawn without replacement with probability `∝ exp(-(cost + H))`.
    Importance,
}

/// Parameters of [`approximate`].
#[derive(Clone, Debug)]
pub struct ApproxOptions {
    /// Children added per explored vertex.
    pub top_k: usize,
    /// Random candidate splits drawn per explored vertex.
    pub samples: usize,
    /// Vertices of at most this many points get all their splits.
    pub exact_size: usize,
    /// Maximum number of rounds.
    pub rounds: usize,
    /// How candidates are chosen.
    pub candidates: Candidates,
    /// Seed of the candidate sampler.
    pub seed: u64,
    /// Weight `w` of the heuristic, searching with `f = g + w · H` (weighted
    /// A*): `w > 1` trades optimality on the sparse trellis for a smaller
    /// search when `H` is loose. `None`: `w = cost(best initial tree) /
    /// H(root)` when both are positive (`H` scaled to the cost of a known
    /// tree), else 1.
    pub weight: Option<f64>,
    /// Stop after exploring this many vertices in all (a deterministic
    /// budget, unlike the time limit); the best tree so far is returned.
    pub max_explored: Option<u64>,
}

impl Default for ApproxOptions {
    fn default() -> ApproxOptions {
        ApproxOptions {
            top_k: 5,
            samples: 15,
            exact_size: 7,
            rounds: 5,
            candidates: Candidates::TopK,
            seed: 0,
            weight: Some(1.0),
            max_explored: Some(50_000),
        }
    }
}

/// The growing sparse trellis: the children every vertex has so far.
struct Sparse<S> {
    n: usize,
    known: SetMapOf<S, Vec<(S, S)>>,
    /// How a cluster first appeared in a candidate: from a known cluster
    /// with one point added (`true`) or removed.
    origin: SetMapOf<S, (S, usize, bool)>,
    options: ApproxOptions,
    rng: SeededRng,
    /// New splits added in the current round.
    added: usize,
    /// Bytes of the split lists of `known` (their capacities).
    list_bytes: u64,
}

/// `(left, right)` with the lowest point on the left.
fn normalise<S: SetRepr>(a: S, b: S) -> (S, S) {
    if a.lowest() < b.lowest() {
        (a, b)
    } else {
        (b, a)
    }
}

/// The summary of a set.
fn summary<M: Search + ?Sized, S: SetRepr>(model: &M, set: &S) -> M::Summary {
    model.summary(set.points())
}

/// The summary of `set` with point `x` added (`added`) or removed.
fn moved<M: Search + ?Sized, S: SetRepr>(
    model: &M,
    set: &S,
    s: &M::Summary,
    x: usize,
    added: bool,
) -> M::Summary {
    let cluster = Cluster {
        points: set.points(),
        summary: s,
    };
    if added {
        let leaf = model.leaf(x);
        let one = [x];
        model.merge(
            cluster,
            Cluster {
                points: Points::List(&one),
                summary: &leaf,
            },
        )
    } else {
        model.without(cluster, x)
    }
}

/// A candidate split with the summaries of its sides.
struct Candidate<S, T> {
    left: S,
    right: S,
    ls: T,
    rs: T,
}

impl<S: SetRepr, T> Candidate<S, T> {
    fn new(a: S, b: S, sa: T, sb: T) -> Candidate<S, T> {
        if a.lowest() < b.lowest() {
            Candidate {
                left: a,
                right: b,
                ls: sa,
                rs: sb,
            }
        } else {
            Candidate {
                left: b,
                right: a,
                ls: sb,
                rs: sa,
            }
        }
    }
}

impl<S: SetRepr> Sparse<S> {
    /// Bytes of one split in a list: the pair and its clusters' heap words.
    fn split_bytes(&self) -> u64 {
        std::mem::size_of::<(S, S)>() as u64 + 2 * S::heap_bytes(self.n)
    }

    fn add(&mut self, set: S, split: (S, S)) -> bool {
        let split_bytes = self.split_bytes();
        let list = self.known.entry(set).or_default();
        if list.contains(&split) {
            false
        } else {
            let before = list.capacity() as u64;
            list.push(split);
            self.list_bytes += (list.capacity() as u64 - before) * split_bytes;
            true
        }
    }

    /// Recounts [`Sparse::list_bytes`] (after `known` was changed directly).
    fn recount(&mut self) {
        let split_bytes = self.split_bytes();
        self.list_bytes = self
            .known
            .values()
            .map(|l| l.capacity() as u64 * split_bytes)
            .sum();
    }

    /// Remembers where a new cluster came from (first origin wins).
    fn note(&mut self, new: &S, from: &S, x: usize, added: bool) {
        if !self.known.contains_key(new) && !self.origin.contains_key(new) {
            self.origin.insert(new.clone(), (from.clone(), x, added));
        }
    }

    /// The candidate splits of `set` (see the module docs).
    fn candidates<M: Search + ?Sized>(
        &mut self,
        model: &M,
        set: &S,
        stats: &M::Summary,
    ) -> Vec<Candidate<S, M::Summary>> {
        let n = self.n;
        let m = set.len();
        let members: Vec<usize> = set.points().iter().collect();
        let mut out = Vec::new();
        // Random cuts of a random order.
        let mut order = members.clone();
        for _ in 0..self.options.samples {
            order.shuffle(&mut self.rng);
            let cut = self.rng.random_range(1..m);
            let left = S::from_points(order[..cut].iter().copied(), n);
            let right = set.minus(&left);
            let (sl, sr) = (summary(model, &left), summary(model, &right));
            out.push(Candidate::new(left, right, sl, sr));
        }
        // One-point moves of the splits the vertex already has.
        let known: Vec<(S, S)> = self.known.get(set).cloned().unwrap_or_default();
        for (l, r) in &known {
            let (ls, rs) = (summary(model, l), summary(model, r));
            for &x in &members {
                let (from, to, fs, ts) = if l.contains(x) {
                    (l, r, &ls, &rs)
                } else {
                    (r, l, &rs, &ls)
                };
                if from.is_singleton() {
                    continue;
                }
                let (a, b) = (from.without(x), to.with(x));
                let (sa, sb) = (
                    moved(model, from, fs, x, false),
                    moved(model, to, ts, x, true),
                );
                self.note(&a, from, x, false);
                self.note(&b, to, x, true);
                out.push(Candidate::new(a, b, sa, sb));
            }
        }
        // A cluster born from a move inherits the splits of the cluster it
        // was moved from, with the point added or removed.
        if known.is_empty() {
            if let Some((y, x, added)) = self.origin.get(set).cloned() {
                let bit = S::singleton(x, n);
                let parents: Vec<(S, S)> = self.known.get(&y).cloned().unwrap_or_default();
                if added {
                    let sy = moved(model, set, stats, x, false);
                    out.push(Candidate::new(bit.clone(), y, summary(model, &bit), sy));
                }
                for (a, b) in parents {
                    let (sa, sb) = (summary(model, &a), summary(model, &b));
                    if added {
                        let (ax, bx) = (a.with(x), b.with(x));
                        self.note(&ax, &a, x, true);
                        self.note(&bx, &b, x, true);
                        let sax = moved(model, &a, &sa, x, true);
                        let sbx = moved(model, &b, &sb, x, true);
                        out.push(Candidate::new(ax, b.clone(), sax, sb.clone()));
                        out.push(Candidate::new(a, bx, sa, sbx));
                    } else {
                        let (from, other, fs, os) = if a.contains(x) {
                            (a, b, sa, sb)
                        } else {
                            (b, a, sb, sa)
                        };
                        if !from.is_singleton() {
                            let fx = from.without(x);
                            self.note(&fx, &from, x, false);
                            let sfx = moved(model, &from, &fs, x, false);
                            out.push(Candidate::new(fx, other, sfx, os));
                        }
                    }
                }
            }
        }
        out.sort_unstable_by(|a, b| (&a.left, &a.right).cmp(&(&b.left, &b.right)));
        out.dedup_by(|a, b| (&a.left, &a.right) == (&b.left, &b.right));
        out.retain(|c| !known.iter().any(|(l, r)| *l == c.left && *r == c.right));
        out
    }
}

impl<M: Search + ?Sized, S: SetRepr> Children<M, S> for Sparse<S> {
    fn bound(&self, set: &S) -> (u64, u64) {
        let split = self.split_bytes();
        let known = self.known.get(set).map_or(0, |k| k.len() as u64);
        if set.len() <= self.options.exact_size {
            // Every split, listed twice (the new list and the scratch copy).
            let all = num_splits(set);
            return (all, all.saturating_mul(split));
        }
        // The candidates: the samples, the one-point moves of the known
        // splits, and the splits inherited from the cluster of origin (two
        // per split of that cluster, and one more); each candidate holds two
        // summaries and is scored.
        let m = set.len() as u64;
        let inherited = self
            .origin
            .get(set)
            .and_then(|o| self.known.get(&o.0))
            .map_or(0, |k| 2 * k.len() as u64 + 1);
        let candidates = (self.options.samples as u64)
            .saturating_add(known.saturating_mul(m))
            .saturating_add(inherited);
        let candidate = std::mem::size_of::<(f64, Candidate<S, M::Summary>)>() as u64
            + 2 * S::heap_bytes(self.n);
        let own = candidates
            .saturating_mul(2 * candidate)
            .saturating_add(known.saturating_mul(split))
            .saturating_add(m * 16);
        // At most `top_k` of the candidates become children.
        let top_k = (self.options.top_k as u64).min(candidates);
        (known.saturating_add(top_k), own)
    }

    fn bytes(&self) -> u64 {
        let lists = self.list_bytes;
        let known_entry = std::mem::size_of::<(S, Vec<(S, S)>)>() as u64;
        let origin_entry = std::mem::size_of::<(S, (S, usize, bool))>() as u64;
        // The keys' (and origins') heap words; none for `u128`.
        let words = S::heap_bytes(self.n)
            .saturating_mul((self.known.len() as u64).saturating_add(2 * self.origin.len() as u64));
        let words = if S::heap_bytes(self.n) == 0 { 0 } else { words };
        lists
            .saturating_add(words)
            .saturating_add(map_bytes(self.known.capacity() as u64, known_entry))
            .saturating_add(map_bytes(self.origin.capacity() as u64, origin_entry))
    }

    fn splits(&mut self, model: &M, set: &S, stats: &M::Summary, out: &mut Vec<(S, S)>) {
        let m = set.len();
        if m <= self.options.exact_size {
            let mut all = Vec::new();
            set.all_splits(self.n, &mut all);
            let split_bytes = self.split_bytes();
            let known = self.known.entry(set.clone()).or_default();
            if known.len() < all.len() {
                self.added += all.len() - known.len();
                let before = known.capacity() as u64;
                *known = all;
                self.list_bytes =
                    self.list_bytes - before * split_bytes + known.capacity() as u64 * split_bytes;
            }
            out.extend_from_slice(known);
            return;
        }
        let candidates = self.candidates(model, set, stats);
        let mut scored: Vec<(f64, Candidate<S, M::Summary>)> = candidates
            .into_iter()
            .map(|c| {
                let cost = model.split_cost(stats, &c.ls, &c.rs);
                (if cost.is_nan() { f64::INFINITY } else { cost }, c)
            })
            .collect();
        let order = |a: &(f64, Candidate<S, M::Summary>), b: &(f64, Candidate<S, M::Summary>)| {
            a.0.total_cmp(&b.0)
                .then((&a.1.left, &a.1.right).cmp(&(&b.1.left, &b.1.right)))
        };
        // Rank by split cost, then the best few by the `f` they would enter
        // the heap with, `cost + H(L) + H(R)` (the heuristic is the costlier
        // part to evaluate, so only for a shortlist).
        scored.sort_by(order);
        scored.truncate(self.options.top_k.max(1).saturating_mul(4));
        for (f, c) in scored.iter_mut() {
            for (side, side_stats) in [(&c.left, &c.ls), (&c.right, &c.rs)] {
                if !side.is_singleton() {
                    *f += model.heuristic(Cluster {
                        points: side.points(),
                        summary: side_stats,
                    });
                }
            }
            if f.is_nan() {
                *f = f64::INFINITY;
            }
        }
        scored.sort_by(order);
        let scored: Vec<(f64, (S, S))> = scored
            .into_iter()
            .map(|(f, c)| (f, (c.left, c.right)))
            .collect();
        let k = self.options.top_k.min(scored.len());
        let chosen: Vec<(S, S)> = match self.options.candidates {
            Candidates::TopK => scored[..k].iter().map(|s| s.1.clone()).collect(),
            Candidates::Importance => {
                let mut picked = Vec::with_capacity(k);
                let best = scored.first().map_or(0.0, |s| s.0);
                let mut weights: Vec<f64> = scored.iter().map(|s| (-(s.0 - best)).exp()).collect();
                for _ in 0..k {
                    let total: f64 = weights.iter().sum();
                    if total.is_nan() || total <= 0.0 {
                        break;
                    }
                    let mut u = self.rng.random::<f64>() * total;
                    let mut idx = weights.len() - 1;
                    for (j, &w) in weights.iter().enumerate() {
                        if u < w {
                            idx = j;
                            break;
                        }
                        u -= w;
                    }
                    picked.push(scored[idx].1.clone());
                    weights[idx] = 0.0;
                }
                picked
            }
        };
        for split in chosen {
            if self.add(set.clone(), split) {
                self.added += 1;
            }
        }
        if let Some(list) = self.known.get(set) {
            out.extend_from_slice(list);
        }
    }
}

/// Approximate A* from initial trees: the same search on a sparse trellis
/// that grows. Every initial tree must be a complete hierarchy over the
/// model's points; at least one is needed.
///
/// 1. **Initialisation.** The clusters of the initial trees (beam search,
///    greedy, average linkage: the caller's choice) form the first sparse
///    trellis, with every split of a cluster into two of them (the "BS
///    trellis" of the trellis paper) and every split of a cluster of at most
///    `exact_size` points. Its best tree, found by dynamic programming over
///    the family (and over all subsets of each small cluster, `O(3^m)`),
///    is the first improvement on the initial trees.
/// 2. **Extension at exploration time.** When a vertex `X` of `m` points is
///    explored: if `m ≤ exact_size` it gets all its splits. Otherwise the
///    candidates are `samples` random splits (a random order of `X` cut at a
///    random position), every one-point move of each split `X` already has,
///    and, for a cluster that was born from such a move, the splits of the
///    cluster it came from with that point added or removed (so a moved point
///    can travel down the tree). The `4·top_k` cheapest by split cost are
///    ranked by `cost(L, R) + H(L) + H(R)`, the `f` they would enter the heap
///    with, and the best `top_k` are added to `X`'s children; or `top_k` are
///    drawn with probability `∝ exp(-(cost + H))` ([`Candidates::Importance`]).
/// 3. **Rounds.** A* runs to its goal on the current sparse trellis; then
///    the heaps are cleared and it runs again, re-extending each vertex it
///    explores. Children are never removed, so each round searches a superset
///    of the previous trellis.
/// 4. **Anytime result.** Every vertex keeps the cost of the best complete
///    sub-hierarchy seen below it, so a round stopped by a budget still
///    yields the best complete tree it met. The result is the best tree over
///    the initial trees, the initial trellis and every round: never worse
///    than the initialisation (costs compared on canonical trees, whose sums
///    run in one order, so to the last bit). The search stops after `rounds` rounds, when a
///    round adds no new split (the trellis is full under this generator),
///    after `max_explored` vertices (deterministic) or at the time limit.
///
/// With an admissible heuristic and weight 1, a completed round returns the
/// best tree of its sparse trellis; it is not the global optimum unless the
/// trellis happens to hold it, so [`Outcome::exact`] is false.
///
/// # Example
///
/// ```
/// use trellis::astar::{ApproxOptions, approximate};
/// use trellis::{Hcc, Matrix, Options, Tree, Weights, tree_cost};
///
/// let w = Weights::from_matrix(&Matrix::from_rows(vec![
///     vec![0.0, 0.9, -0.5, -0.6],
///     vec![0.9, 0.0, -0.4, -0.5],
///     vec![-0.5, -0.4, 0.0, 0.8],
///     vec![-0.6, -0.5, 0.8, 0.0],
/// ])?)?;
/// let model = Hcc::new(&w, 1.0)?;
/// // A poor initial tree: a caterpillar ((((0,2),1),3)).
/// let init = Tree::parse("(((0,2),1),3)")?;
/// let found = approximate(&model, &[init.clone()], &ApproxOptions::default(), &Options::default())?;
/// assert!(found.cost <= tree_cost(&model, &init)?);
/// assert!(!found.exact);
/// assert_eq!(found.best.tree.to_newick(), "((0,1),(2,3));");
/// # Ok::<(), trellis::Error>(())
/// ```
///
/// # Errors
///
/// No points, no initial tree or an invalid one, no hierarchy of finite
/// cost, or cancelled by the progress callback. The time limit and the
/// memory budget of `run` (per round; by default half the memory available)
/// stop the search with its best tree so far.
///
/// # Any number of points
///
/// Up to 128 points the clusters are `u128` sets; beyond, [`WideSet`]s
/// (see [`crate::base::set`](crate::SetRepr)). [`approximate_with`] runs
/// the same search on a chosen representation: both give the same result
/// on the same input.
pub fn approximate<M: Search + ?Sized>(
    model: &M,
    init: &[Tree],
    options: &ApproxOptions,
    run: &Options<'_>,
) -> Result<Outcome> {
    if model.num_points() <= crate::base::set::MAX_SET_POINTS {
        approximate_with::<Set, M>(model, init, options, run)
    } else {
        approximate_with::<WideSet, M>(model, init, options, run)
    }
}

/// [`approximate`] with clusters stored as `S`: `u128` ([`Set`], up to 128
/// points) or [`WideSet`] (any number). The result does not depend on `S`
/// (only [`Outcome::sets`] and the memory figures do).
///
/// # Errors
///
/// Those of [`approximate`], and more points than `S` holds.
pub fn approximate_with<S: SetRepr, M: Search + ?Sized>(
    model: &M,
    init: &[Tree],
    options: &ApproxOptions,
    run: &Options<'_>,
) -> Result<Outcome> {
    let n = check_points_of(
        model.num_points(),
        S::MAX_POINTS,
        "approximate A* on 128-bit sets (wide sets take any number)",
    )?;
    if n == 1 {
        return Ok(Outcome {
            exact: false,
            ..single_point(model)
        });
    }
    if options.top_k == 0 {
        return Err(Error::parameter("top-k must be at least 1"));
    }
    let Some(first) = init.first() else {
        return Err(Error::parameter(
            "approximate A* needs at least one initial tree",
        ));
    };
    let start = Instant::now();
    let deadline = run
        .time_limit
        .and_then(|d| crate::base::run::deadline(start, d));
    let mut sparse = Sparse::<S> {
        n,
        known: SetMapOf::default(),
        origin: SetMapOf::default(),
        options: options.clone(),
        rng: random::rng(options.seed),
        added: 0,
        list_bytes: 0,
    };
    let mut best = (f64::INFINITY, first.clone());
    for tree in init {
        tree.validate(n, true)?;
        let cost = tree_cost(model, tree)?;
        if cost < best.0 {
            best = (cost, tree.clone());
        }
        for (l, r) in tree_splits::<S>(tree, n) {
            sparse.add(l.union(&r), normalise(l, r));
        }
    }
    // The initial trellis: every split of an initial cluster into two
    // initial clusters (the "BS trellis" of the trellis paper), and its best
    // tree by dynamic programming, a free first improvement.
    close_family(n, &mut sparse.known)?;
    sparse.recount();
    if let Some((cost, tree)) = family_map(model, &sparse.known, &S::full(n), options.exact_size) {
        if cost < best.0 {
            best = (cost, tree);
        }
    }
    let root = S::full(n);
    let h_root = model.heuristic(Cluster {
        points: root.points(),
        summary: &summary(model, &root),
    });
    let weight = match options.weight {
        Some(w) if w.is_finite() && w > 0.0 => w,
        Some(w) => {
            return Err(Error::parameter(format!(
                "the heuristic weight must be > 0, not {w}"
            )));
        }
        None if h_root > 0.0 && best.0.is_finite() && best.0 > h_root => {
            let w = best.0 / h_root;
            if w.is_finite() { w } else { 1.0 }
        }
        None => 1.0,
    };
    // The search ranks vertices by g + w · H: w · H must stay finite (and
    // leave room for g, at most a hierarchy's cost), or every vertex would
    // rank at +∞ and the search would find no tree.
    let weighted_limit = f64::MAX / 4.0;
    if h_root.is_finite() && h_root > 0.0 && weight * h_root > weighted_limit {
        return Err(Error::parameter(format!(
            "the heuristic weight {} is too large for this model: the weighted heuristic at \
             the root, {} x {}, overflows (beyond {:.1e}); use a weight of at most {}",
            crate::base::range::fmt3(weight),
            crate::base::range::fmt3(weight),
            crate::base::range::fmt3(h_root),
            weighted_limit,
            crate::base::range::fmt3(crate::base::range::round_down_3(weighted_limit / h_root)),
        )));
    }
    let (mut explored, mut splits, mut iterations, mut vertices, mut rounds) = (0, 0, 0, 0, 0);
    let mut peak = 0u64;
    for _ in 0..options.rounds.max(1) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        sparse.added = 0;
        let mut search = Engine::<M, S>::new(model, search_budget(run), deadline, weight);
        search.progress = run.progress;
        search.progress_base = explored;
        search.progress_total = options.max_explored;
        if let Some(max) = options.max_explored {
            if explored >= max {
                break;
            }
            search.set_max_explored(max - explored);
        }
        for tree in init.iter().chain(std::iter::once(&best.1)) {
            search.seed_tree(tree);
        }
        let result = search.run(&mut sparse);
        explored += search.explored;
        splits += search.splits;
        iterations += search.iterations;
        vertices = search.vertices_len();
        peak = peak.max(search.peak);
        let finished = match result {
            Ok(Some(_)) => true,
            // Out of time, or out of memory: keep the best tree so far.
            Ok(None) => false,
            Err(e) if matches!(e.kind(), ErrorKind::SearchBudget { .. }) => false,
            Err(e) => return Err(e),
        };
        if let Some(tree) = search.best_tree() {
            let cost = tree_cost(model, &tree)?;
            if cost < best.0 {
                best = (cost, tree);
            }
        }
        if !finished {
            break;
        }
        rounds += 1;
        if sparse.added == 0 {
            break;
        }
    }
    let mut tree = best.1.canonical();
    let mut cost = tree_cost(model, &tree)?;
    // Never worse than an initial tree, to the last bit: a tree's cost
    // depends on the order of its sum by an ulp, so compare canonical forms.
    for t in init {
        let t = t.clone().canonical();
        let c = tree_cost(model, &t)?;
        if c < cost {
            (tree, cost) = (t, c);
        }
    }
    Ok(Outcome {
        best: ScoredTree {
            log_potential: model.log_potential_of_cost(cost),
            tree,
        },
        cost,
        exact: false,
        explored,
        splits,
        vertices,
        iterations,
        rounds,
        sets: if S::heap_bytes(n) == 0 {
            "u128"
        } else {
            "wide"
        },
        bytes_per_vertex: Engine::<M, S>::bytes_per_vertex(model),
        bytes_per_split: Engine::<M, S>::ENTRY_BYTES + sparse.split_bytes(),
        peak_bytes: peak,
    })
}

/// The splits of a tree as sets, children first; its leaves must be below
/// `n` (a validated tree). Iterative: any depth.
fn tree_splits<S: SetRepr>(tree: &Tree, n: usize) -> Vec<(S, S)> {
    let mut out = Vec::new();
    tree.fold(
        |i| S::singleton(i, n),
        |a, b| {
            let u = a.union(&b);
            out.push((a, b));
            u
        },
    );
    out
}

/// Adds to every cluster of the family (the keys of `known`, plus
/// singletons) every split into two members of the family: the children of
/// the hierarchical [`SparseTrellis`] over the family.
fn close_family<S: SetRepr>(n: usize, known: &mut SetMapOf<S, Vec<(S, S)>>) -> Result<()> {
    let trellis = SparseTrellis::from_clusters_as(n, known.keys().cloned())?;
    let vertices = trellis.clusters();
    for (k, v) in vertices.iter().enumerate() {
        if v.len() < 2 {
            continue;
        }
        let list = known.entry(v.clone()).or_default();
        for &(l, r) in trellis.children(k) {
            let split = (vertices[l as usize].clone(), vertices[r as usize].clone());
            if !list.contains(&split) {
                list.push(split);
            }
        }
    }
    Ok(())
}

/// The lowest-cost tree over `root` in the initial sparse trellis: the
/// splits in `known`, and every split below a cluster of at most
/// `exact_size` points (dynamic programming over the family by size, and
/// over all subsets of each small cluster), with its cost.
fn family_map<M: Search + ?Sized, S: SetRepr>(
    model: &M,
    known: &SetMapOf<S, Vec<(S, S)>>,
    root: &S,
    exact_size: usize,
) -> Option<(f64, Tree)> {
    let mut sets: Vec<&S> = known.keys().collect();
    sets.sort_unstable_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
    // Per cluster: its best cost and tree; and the statistics of every
    // cluster met, computed once.
    let mut best: SetMapOf<S, (f64, Tree)> = SetMapOf::default();
    let mut cache: SetMapOf<S, M::Summary> = SetMapOf::default();
    for v in sets {
        if v.len() <= exact_size.min(16) {
            if let Some(found) = small_exact(model, v) {
                best.insert(v.clone(), found);
            }
            continue;
        }
        let mut here: Option<(f64, &S, &S)> = None;
        for (l, r) in &known[v] {
            let side = |s: &S| {
                if s.is_singleton() {
                    Some(0.0)
                } else {
                    best.get(s).map(|b| b.0)
                }
            };
            let (Some(cl), Some(cr)) = (side(l), side(r)) else {
                continue;
            };
            for s in [v, l, r] {
                if !cache.contains_key(s) {
                    cache.insert(s.clone(), summary(model, s));
                }
            }
            let c = model.split_cost(&cache[v], &cache[l], &cache[r]) + cl + cr;
            if here.is_none_or(|h| c < h.0) {
                here = Some((c, l, r));
            }
        }
        if let Some((c, l, r)) = here {
            let tree = |s: &S| {
                if s.is_singleton() {
                    Tree::Leaf(s.lowest())
                } else {
                    best[s].1.clone()
                }
            };
            let t = Tree::node(tree(l), tree(r));
            best.insert(v.clone(), (c, t));
        }
    }
    best.remove(root)
}

/// The exact lowest-cost tree over a small cluster by dynamic programming
/// over its `2^m` subsets (`O(3^m)` splits), if any has finite cost.
fn small_exact<M: Search + ?Sized, S: SetRepr>(model: &M, v: &S) -> Option<(f64, Tree)> {
    let pts: Vec<usize> = v.points().iter().collect();
    let m = pts.len();
    let size = 1usize << m;
    // The summary of every local subset (subset 0 stands for subset 1).
    let stats: Vec<M::Summary> = (0..size)
        .map(|l| {
            let l = l.max(1);
            let list: Vec<usize> = (0..m).filter(|k| l >> k & 1 == 1).map(|k| pts[k]).collect();
            model.summary(Points::List(&list))
        })
        .collect();
    let mut cost = vec![f64::INFINITY; size];
    let mut arg = vec![0usize; size];
    for l in 0..m {
        cost[1 << l] = 0.0;
    }
    let mut order: Vec<usize> = (1..size).filter(|x| x.count_ones() >= 2).collect();
    order.sort_unstable_by_key(|x| x.count_ones());
    for s in order {
        let low = s & s.wrapping_neg();
        let rest = s ^ low;
        let mut sub = rest;
        let (mut best, mut best_arg) = (f64::INFINITY, 0);
        loop {
            sub = (sub.wrapping_sub(1)) & rest;
            let (a, b) = (low | sub, rest ^ sub);
            // No pruning on `cost[a] + cost[b]`: a split may cost less than
            // zero (a Ginkgo split likelihood above 1).
            let total = cost[a] + cost[b] + model.split_cost(&stats[s], &stats[a], &stats[b]);
            if total < best {
                best = total;
                best_arg = a;
            }
            if sub == 0 {
                break;
            }
        }
        cost[s] = best;
        arg[s] = best_arg;
    }
    let all = size - 1;
    if !cost[all].is_finite() {
        return None;
    }
    fn build(arg: &[usize], pts: &[usize], s: usize) -> Tree {
        if s & (s - 1) == 0 {
            return Tree::Leaf(pts[s.trailing_zeros() as usize]);
        }
        let a = arg[s];
        Tree::node(build(arg, pts, a), build(arg, pts, s ^ a))
    }
    Some((cost[all], build(&arg, &pts, all)))
}
