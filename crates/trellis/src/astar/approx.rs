//! Approximate A* (§4): the same search on a sparse trellis that grows
//! (the algorithm is documented on [`approximate`]).

use std::time::Instant;

use rand::RngExt;
use rand::seq::SliceRandom;

use super::engine::{
    Children, Engine, Outcome, all_splits, check_points, map_bytes, num_splits, search_budget,
    single_point,
};
use super::{Set, is_singleton, points};
use crate::base::random::{self, SeededRng};
use crate::base::run::Options;
use crate::base::set::{Points, SetMap};
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
struct Sparse {
    known: SetMap<Vec<(Set, Set)>>,
    /// How a cluster first appeared in a candidate: from a known cluster
    /// with one point added (`true`) or removed.
    origin: SetMap<(Set, usize, bool)>,
    options: ApproxOptions,
    rng: SeededRng,
    /// New splits added in the current round.
    added: usize,
    /// Bytes of the split lists of `known` (their capacities).
    list_bytes: u64,
}

/// `(left, right)` with the lowest point on the left.
fn normalise(a: Set, b: Set) -> (Set, Set) {
    if a.trailing_zeros() < b.trailing_zeros() {
        (a, b)
    } else {
        (b, a)
    }
}

/// The summary of a set.
fn summary<M: Search + ?Sized>(model: &M, set: Set) -> M::Summary {
    model.summary(Points::Set(set))
}

/// The summary of `set` with point `x` added (`added`) or removed.
fn moved<M: Search + ?Sized>(
    model: &M,
    set: Set,
    s: &M::Summary,
    x: usize,
    added: bool,
) -> M::Summary {
    let cluster = Cluster {
        points: Points::Set(set),
        summary: s,
    };
    if added {
        let leaf = model.leaf(x);
        model.merge(
            cluster,
            Cluster {
                points: Points::Set(1u128 << x),
                summary: &leaf,
            },
        )
    } else {
        model.without(cluster, x)
    }
}

/// A candidate split with the summaries of its sides.
struct Candidate<S> {
    left: Set,
    right: Set,
    ls: S,
    rs: S,
}

impl<S> Candidate<S> {
    fn new(a: Set, b: Set, sa: S, sb: S) -> Candidate<S> {
        if a.trailing_zeros() < b.trailing_zeros() {
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

/// Bytes of one split in a list.
const SPLIT_BYTES: u64 = std::mem::size_of::<(Set, Set)>() as u64;

impl Sparse {
    fn add(&mut self, set: Set, split: (Set, Set)) -> bool {
        let list = self.known.entry(set).or_default();
        if list.contains(&split) {
            false
        } else {
            let before = list.capacity() as u64;
            list.push(split);
            self.list_bytes += (list.capacity() as u64 - before) * SPLIT_BYTES;
            true
        }
    }

    /// Recounts [`Sparse::list_bytes`] (after `known` was changed directly).
    fn recount(&mut self) {
        self.list_bytes = self
            .known
            .values()
            .map(|l| l.capacity() as u64 * SPLIT_BYTES)
            .sum();
    }

    /// Remembers where a new cluster came from (first origin wins).
    fn note(&mut self, new: Set, from: Set, x: usize, added: bool) {
        if !self.known.contains_key(&new) {
            self.origin.entry(new).or_insert((from, x, added));
        }
    }

    /// The candidate splits of `set` (see the module docs).
    fn candidates<M: Search + ?Sized>(
        &mut self,
        model: &M,
        set: Set,
        stats: &M::Summary,
    ) -> Vec<Candidate<M::Summary>> {
        let m = set.count_ones() as usize;
        let members: Vec<usize> = points(set).collect();
        let mut out = Vec::new();
        // Random cuts of a random order.
        let mut order = members.clone();
        for _ in 0..self.options.samples {
            order.shuffle(&mut self.rng);
            let cut = self.rng.random_range(1..m);
            let left: Set = order[..cut].iter().map(|&i| 1u128 << i).sum();
            let right = set ^ left;
            out.push(Candidate::new(
                left,
                right,
                summary(model, left),
                summary(model, right),
            ));
        }
        // One-point moves of the splits the vertex already has.
        let known: Vec<(Set, Set)> = self.known.get(&set).cloned().unwrap_or_default();
        for &(l, r) in &known {
            let (ls, rs) = (summary(model, l), summary(model, r));
            for &x in &members {
                let bit = 1u128 << x;
                let (from, to, fs, ts) = if l & bit != 0 {
                    (l, r, &ls, &rs)
                } else {
                    (r, l, &rs, &ls)
                };
                if from == bit {
                    continue;
                }
                let (a, b) = (from ^ bit, to | bit);
                let (sa, sb) = (
                    moved(model, from, fs, x, false),
                    moved(model, to, ts, x, true),
                );
                self.note(a, from, x, false);
                self.note(b, to, x, true);
                out.push(Candidate::new(a, b, sa, sb));
            }
        }
        // A cluster born from a move inherits the splits of the cluster it
        // was moved from, with the point added or removed.
        if known.is_empty() {
            if let Some(&(y, x, added)) = self.origin.get(&set) {
                let bit = 1u128 << x;
                let parents: Vec<(Set, Set)> = self.known.get(&y).cloned().unwrap_or_default();
                if added {
                    out.push(Candidate::new(
                        bit,
                        y,
                        summary(model, bit),
                        moved(model, set, stats, x, false),
                    ));
                }
                for (a, b) in parents {
                    let (sa, sb) = (summary(model, a), summary(model, b));
                    if added {
                        self.note(a | bit, a, x, true);
                        self.note(b | bit, b, x, true);
                        out.push(Candidate::new(
                            a | bit,
                            b,
                            moved(model, a, &sa, x, true),
                            sb.clone(),
                        ));
                        out.push(Candidate::new(
                            a,
                            b | bit,
                            sa,
                            moved(model, b, &sb, x, true),
                        ));
                    } else {
                        let (from, other, fs, os) = if a & bit != 0 {
                            (a, b, sa, sb)
                        } else {
                            (b, a, sb, sa)
                        };
                        if from != bit {
                            self.note(from ^ bit, from, x, false);
                            out.push(Candidate::new(
                                from ^ bit,
                                other,
                                moved(model, from, &fs, x, false),
                                os,
                            ));
                        }
                    }
                }
            }
        }
        out.sort_unstable_by_key(|c| (c.left, c.right));
        out.dedup_by_key(|c| (c.left, c.right));
        out.retain(|c| !known.contains(&(c.left, c.right)));
        out
    }
}

impl<M: Search + ?Sized> Children<M> for Sparse {
    fn bound(&self, set: Set) -> (u64, u64) {
        let split = SPLIT_BYTES;
        let known = self.known.get(&set).map_or(0, |k| k.len() as u64);
        if set.count_ones() as usize <= self.options.exact_size {
            // Every split, listed twice (the new list and the scratch copy).
            let all = num_splits(set);
            return (all, all.saturating_mul(split));
        }
        // The candidates: the samples, the one-point moves of the known
        // splits, and the splits inherited from the cluster of origin (two
        // per split of that cluster, and one more); each candidate holds two
        // summaries and is scored.
        let m = set.count_ones() as u64;
        let inherited = self
            .origin
            .get(&set)
            .and_then(|o| self.known.get(&o.0))
            .map_or(0, |k| 2 * k.len() as u64 + 1);
        let candidates = (self.options.samples as u64)
            .saturating_add(known.saturating_mul(m))
            .saturating_add(inherited);
        let candidate = std::mem::size_of::<(f64, Candidate<M::Summary>)>() as u64;
        let own = candidates
            .saturating_mul(2 * candidate)
            .saturating_add(known.saturating_mul(split))
            .saturating_add(m * 16);
        let top_k = self.options.top_k as u64;
        (known.saturating_add(top_k), own)
    }

    fn bytes(&self) -> u64 {
        let lists = self.list_bytes;
        let known_entry = std::mem::size_of::<(Set, Vec<(Set, Set)>)>() as u64;
        let origin_entry = std::mem::size_of::<(Set, (Set, usize, bool))>() as u64;
        lists
            .saturating_add(map_bytes(self.known.capacity() as u64, known_entry))
            .saturating_add(map_bytes(self.origin.capacity() as u64, origin_entry))
    }

    fn splits(&mut self, model: &M, set: Set, stats: &M::Summary, out: &mut Vec<(Set, Set)>) {
        let m = set.count_ones() as usize;
        if m <= self.options.exact_size {
            let mut all = Vec::new();
            all_splits(set, &mut all);
            let known = self.known.entry(set).or_default();
            if known.len() < all.len() {
                self.added += all.len() - known.len();
                let before = known.capacity() as u64;
                *known = all;
                self.list_bytes =
                    self.list_bytes - before * SPLIT_BYTES + known.capacity() as u64 * SPLIT_BYTES;
            }
            out.extend_from_slice(known);
            return;
        }
        let candidates = self.candidates(model, set, stats);
        let mut scored: Vec<(f64, Candidate<M::Summary>)> = candidates
            .into_iter()
            .map(|c| {
                let cost = model.split_cost(stats, &c.ls, &c.rs);
                (if cost.is_nan() { f64::INFINITY } else { cost }, c)
            })
            .collect();
        let order = |a: &(f64, Candidate<M::Summary>), b: &(f64, Candidate<M::Summary>)| {
            a.0.total_cmp(&b.0)
                .then((a.1.left, a.1.right).cmp(&(b.1.left, b.1.right)))
        };
        // Rank by split cost, then the best few by the `f` they would enter
        // the heap with, `cost + H(L) + H(R)` (the heuristic is the costlier
        // part to evaluate, so only for a shortlist).
        scored.sort_by(order);
        scored.truncate(self.options.top_k.max(1).saturating_mul(4));
        for (f, c) in scored.iter_mut() {
            for (side, side_stats) in [(c.left, &c.ls), (c.right, &c.rs)] {
                if !is_singleton(side) {
                    *f += model.heuristic(Cluster {
                        points: Points::Set(side),
                        summary: side_stats,
                    });
                }
            }
            if f.is_nan() {
                *f = f64::INFINITY;
            }
        }
        scored.sort_by(order);
        let scored: Vec<(f64, (Set, Set))> = scored
            .into_iter()
            .map(|(f, c)| (f, (c.left, c.right)))
            .collect();
        let k = self.options.top_k.min(scored.len());
        let chosen: Vec<(Set, Set)> = match self.options.candidates {
            Candidates::TopK => scored[..k].iter().map(|s| s.1).collect(),
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
                    picked.push(scored[idx].1);
                    weights[idx] = 0.0;
                }
                picked
            }
        };
        for split in chosen {
            if self.add(set, split) {
                self.added += 1;
            }
        }
        if let Some(list) = self.known.get(&set) {
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
///    than the initialisation. The search stops after `rounds` rounds, when a
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
/// No points or more than 128, no initial tree or an invalid one, no
/// hierarchy of finite cost, or cancelled by the progress callback. The time
/// limit and the memory budget of `run` (per round; by default half the
/// memory available) stop the search with its best tree so far.
pub fn approximate<M: Search + ?Sized>(
    model: &M,
    init: &[Tree],
    options: &ApproxOptions,
    run: &Options<'_>,
) -> Result<Outcome> {
    let n = check_points(model.num_points())?;
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
    let mut sparse = Sparse {
        known: SetMap::default(),
        origin: SetMap::default(),
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
        for (l, r) in tree_splits(tree) {
            sparse.add(l | r, normalise(l, r));
        }
    }
    // The initial trellis: every split of an initial cluster into two
    // initial clusters (the "BS trellis" of the trellis paper), and its best
    // tree by dynamic programming, a free first improvement.
    close_family(n, &mut sparse.known)?;
    sparse.recount();
    if let Some((cost, tree)) =
        family_map(model, &sparse.known, super::full_set(n), options.exact_size)
    {
        if cost < best.0 {
            best = (cost, tree);
        }
    }
    let weight = match options.weight {
        Some(w) if w.is_finite() && w > 0.0 => w,
        Some(w) => {
            return Err(Error::parameter(format!(
                "the heuristic weight must be > 0, not {w}"
            )));
        }
        None => {
            let root = super::full_set(n);
            let h = model.heuristic(Cluster {
                points: Points::Set(root),
                summary: &summary(model, root),
            });
            if h > 0.0 && best.0.is_finite() && best.0 > h {
                best.0 / h
            } else {
                1.0
            }
        }
    };
    let (mut explored, mut splits, mut iterations, mut vertices, mut rounds) = (0, 0, 0, 0, 0);
    for _ in 0..options.rounds.max(1) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        sparse.added = 0;
        let mut search = Engine::new(model, search_budget(run), deadline, weight);
        search.progress = run.progress;
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
    let tree = best.1.canonical();
    let cost = tree_cost(model, &tree)?;
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
    })
}

/// The splits of a tree as `u128` sets, children first; its leaves must be
/// below 128 (a validated tree). Iterative: any depth.
fn tree_splits(tree: &Tree) -> Vec<(Set, Set)> {
    let mut out = Vec::new();
    tree.fold(
        |i| 1u128 << i,
        |a, b| {
            out.push((a, b));
            a | b
        },
    );
    out
}

/// Adds to every cluster of the family (the keys of `known`, plus
/// singletons) every split into two members of the family: the children of
/// the hierarchical [`SparseTrellis`] over the family.
fn close_family(n: usize, known: &mut SetMap<Vec<(Set, Set)>>) -> Result<()> {
    let trellis = SparseTrellis::from_clusters(n, known.keys().copied())?;
    let vertices = trellis.clusters();
    for (k, &v) in vertices.iter().enumerate() {
        if v.count_ones() < 2 {
            continue;
        }
        let list = known.entry(v).or_default();
        for &(l, r) in trellis.children(k) {
            let split = (vertices[l as usize], vertices[r as usize]);
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
fn family_map<M: Search + ?Sized>(
    model: &M,
    known: &SetMap<Vec<(Set, Set)>>,
    root: Set,
    exact_size: usize,
) -> Option<(f64, Tree)> {
    let mut sets: Vec<Set> = known.keys().copied().collect();
    sets.sort_unstable_by_key(|&s| (s.count_ones(), s));
    // Per cluster: its best cost and tree; and the statistics of every
    // cluster met, computed once.
    let mut best: SetMap<(f64, Tree)> = SetMap::default();
    let mut cache: SetMap<M::Summary> = SetMap::default();
    for &v in &sets {
        if v.count_ones() as usize <= exact_size.min(16) {
            if let Some(found) = small_exact(model, v) {
                best.insert(v, found);
            }
            continue;
        }
        let mut here: Option<(f64, Set, Set)> = None;
        for &(l, r) in &known[&v] {
            let side = |s: Set| {
                if is_singleton(s) {
                    Some(0.0)
                } else {
                    best.get(&s).map(|b| b.0)
                }
            };
            let (Some(cl), Some(cr)) = (side(l), side(r)) else {
                continue;
            };
            for s in [v, l, r] {
                cache.entry(s).or_insert_with(|| summary(model, s));
            }
            let c = model.split_cost(&cache[&v], &cache[&l], &cache[&r]) + cl + cr;
            if here.is_none_or(|h| c < h.0) {
                here = Some((c, l, r));
            }
        }
        if let Some((c, l, r)) = here {
            let tree = |s: Set| {
                if is_singleton(s) {
                    Tree::Leaf(s.trailing_zeros() as usize)
                } else {
                    best[&s].1.clone()
                }
            };
            let t = Tree::node(tree(l), tree(r));
            best.insert(v, (c, t));
        }
    }
    best.remove(&root)
}

/// The exact lowest-cost tree over a small cluster by dynamic programming
/// over its `2^m` subsets (`O(3^m)` splits), if any has finite cost.
fn small_exact<M: Search + ?Sized>(model: &M, v: Set) -> Option<(f64, Tree)> {
    let pts: Vec<usize> = points(v).collect();
    let m = pts.len();
    let size = 1usize << m;
    // Local subset -> global set, built by adding the lowest local point.
    let mut global = vec![0u128; size];
    for l in 1..size {
        global[l] = global[l & (l - 1)] | 1u128 << pts[l.trailing_zeros() as usize];
    }
    let stats: Vec<M::Summary> = (0..size)
        .map(|l| summary(model, global[l.max(1)]))
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
