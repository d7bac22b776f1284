//! Approximate A* (§4): the same search on a sparse trellis that grows.
//!
//! 1. **Initialisation.** The splits of the initial trees (beam search,
//!    greedy, average linkage: the caller's choice) are the first children
//!    of their clusters.
//! 2. **Extension at exploration time.** When a vertex `X` of `m` points is
//!    explored: if `m ≤ exact_size` it gets all its splits; otherwise
//!    `samples` candidate splits are drawn (a random order of `X` cut at a
//!    random position), joined by every one-point move of each split `X`
//!    already has, and the `top_k` candidates with the lowest
//!    `cost(L, R) + H(L) + H(R)` (the `f` they would enter the heap with) are
//!    added to `X`'s children, or `top_k` drawn with probability
//!    `∝ exp(-(cost + H))` ([`Candidates::Importance`]).
//! 3. **Rounds.** A* runs to its goal on the current sparse trellis; then
//!    the heaps are cleared and it runs again, re-extending each vertex it
//!    explores. Children are never removed, so each round searches a superset
//!    of the previous trellis; the result is the best tree over the initial
//!    trees and every round, so it is never worse than the initialisation.
//!    The search stops after `rounds` rounds, at the time limit (returning
//!    the best tree so far), or when a round adds no new split.
//!
//! With an admissible heuristic each round returns the best tree of its
//! sparse trellis; it is not the global optimum unless the trellis happens
//! to hold it, so [`Outcome::exact`] is false.

use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::engine::{Children, Outcome, Search, SetMap, all_splits, check_points, outcome, single_point};
use super::{SearchModel, Set, points};
use crate::error::{Error, ErrorKind, Result};
use crate::tree::Tree;

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
    /// Wall-clock limit for all rounds.
    pub time_limit: Option<Duration>,
    /// Memory budget of one round's search, in bytes.
    pub max_bytes: u64,
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
            time_limit: None,
            max_bytes: super::Options::default().max_bytes,
        }
    }
}

/// The growing sparse trellis: the children every vertex has so far.
struct Sparse {
    known: SetMap<Vec<(Set, Set)>>,
    options: ApproxOptions,
    rng: Xoshiro256PlusPlus,
    /// New splits added in the current round.
    added: usize,
}

/// `(left, right)` with the lowest point on the left.
fn normalise(a: Set, b: Set) -> (Set, Set) {
    if a.trailing_zeros() < b.trailing_zeros() { (a, b) } else { (b, a) }
}

impl Sparse {
    fn add(&mut self, set: Set, split: (Set, Set)) -> bool {
        let list = self.known.entry(set).or_default();
        if list.contains(&split) {
            false
        } else {
            list.push(split);
            true
        }
    }
}

impl<M: SearchModel> Children<M> for Sparse {
    fn splits(&mut self, model: &M, set: Set, stats: &M::Stats, out: &mut Vec<(Set, Set)>) {
        let m = set.count_ones() as usize;
        if m <= self.options.exact_size {
            let mut all = Vec::new();
            all_splits(set, &mut all);
            let known = self.known.entry(set).or_default();
            if known.len() < all.len() {
                self.added += all.len() - known.len();
                *known = all;
            }
            out.extend_from_slice(known);
            return;
        }
        let members: Vec<usize> = points(set).collect();
        let mut candidates: Vec<(Set, Set)> = Vec::new();
        let mut order = members.clone();
        for _ in 0..self.options.samples {
            order.shuffle(&mut self.rng);
            let cut = self.rng.random_range(1..m);
            let left: Set = order[..cut].iter().map(|&i| 1u128 << i).sum();
            candidates.push(normalise(left, set ^ left));
        }
        for &(l, _) in self.known.get(&set).map(Vec::as_slice).unwrap_or(&[]) {
            for i in &members {
                let bit = 1u128 << i;
                let moved = if l & bit != 0 { l ^ bit } else { l | bit };
                if moved != 0 && moved != set {
                    candidates.push(normalise(moved, set ^ moved));
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let known = self.known.get(&set);
        candidates.retain(|c| known.is_none_or(|k| !k.contains(c)));
        let mut scored: Vec<(f64, (Set, Set))> = candidates
            .into_iter()
            .map(|(l, r)| {
                let (ls, rs) = (model.stats(l), model.stats(r));
                let hl = if l & (l - 1) == 0 { 0.0 } else { model.heuristic(l, &ls) };
                let hr = if r & (r - 1) == 0 { 0.0 } else { model.heuristic(r, &rs) };
                let f = model.split_cost((set, stats), (l, &ls), (r, &rs)) + hl + hr;
                (if f.is_nan() { f64::INFINITY } else { f }, (l, r))
            })
            .collect();
        scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let k = self.options.top_k.min(scored.len());
        let chosen: Vec<(Set, Set)> = match self.options.candidates {
            Candidates::TopK => scored[..k].iter().map(|s| s.1).collect(),
            Candidates::Importance => {
                let mut picked = Vec::with_capacity(k);
                let best = scored.first().map_or(0.0, |s| s.0);
                let mut weights: Vec<f64> = scored.iter().map(|s| (-(s.0 - best)).exp()).collect();
                for _ in 0..k {
                    let total: f64 = weights.iter().sum();
                    if !(total > 0.0) {
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

/// Approximate A* from initial trees (see the module docs). Every initial
/// tree must be a complete hierarchy over the model's points; at least one
/// is needed.
///
/// # Errors
///
/// No points or more than 128, no initial tree or an invalid one, or no
/// hierarchy of finite cost.
pub fn approximate<M: SearchModel>(model: &M, init: &[Tree], options: &ApproxOptions) -> Result<Outcome> {
    let n = check_points(model.num_points())?;
    if n == 1 {
        return Ok(single_point(model));
    }
    if options.top_k == 0 {
        return Err(Error::parameter("top-k must be at least 1"));
    }
    let Some(first) = init.first() else {
        return Err(Error::parameter("approximate A* needs at least one initial tree"));
    };
    let start = Instant::now();
    let deadline = options.time_limit.map(|d| start + d);
    let mut sparse = Sparse {
        known: SetMap::default(),
        options: options.clone(),
        rng: Xoshiro256PlusPlus::seed_from_u64(options.seed),
        added: 0,
    };
    let mut best = (f64::INFINITY, first.clone());
    for tree in init {
        tree.validate(n, true)?;
        let cost = model.tree_cost(tree);
        if cost < best.0 {
            best = (cost, tree.clone());
        }
        for (l, r) in tree_splits(tree) {
            sparse.add(l | r, normalise(l, r));
        }
    }
    let (mut explored, mut splits, mut iterations, mut vertices, mut rounds) = (0, 0, 0, 0, 0);
    for _ in 0..options.rounds.max(1) {
        sparse.added = 0;
        let mut search = Search::new(model, options.max_bytes, deadline);
        let result = search.run(&mut sparse);
        explored += search.explored;
        splits += search.splits;
        iterations += search.iterations;
        let found = match result {
            Ok(Some(tree)) => outcome(model, tree, &search),
            // Out of time, or out of memory: keep the best tree so far.
            Ok(None) => break,
            Err(e) if matches!(e.kind(), ErrorKind::SearchBudget { .. }) => break,
            Err(e) => return Err(e),
        };
        vertices = found.vertices;
        rounds += 1;
        if found.cost < best.0 {
            best = (found.cost, found.tree);
        }
        if sparse.added == 0 {
            break;
        }
    }
    let tree = best.1.canonical();
    let cost = model.tree_cost(&tree);
    Ok(Outcome {
        log_potential: model.log_potential(cost),
        cost,
        tree,
        exact: false,
        explored,
        splits,
        vertices,
        iterations,
        rounds,
    })
}

/// The splits of a tree as `u128` sets.
fn tree_splits(tree: &Tree) -> Vec<(Set, Set)> {
    fn go(t: &Tree, out: &mut Vec<(Set, Set)>) -> Set {
        match t {
            Tree::Leaf(i) => 1u128 << i,
            Tree::Node(l, r) => {
                let (a, b) = (go(l, out), go(r, out));
                out.push((a, b));
                a | b
            }
        }
    }
    let mut out = Vec::new();
    go(tree, &mut out);
    out
}
