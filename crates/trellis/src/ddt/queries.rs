//! Queries to a (simulated) user and the interactive loop of the paper's §4.
//!
//! Every `I` sampler iterations the loop shows the user part of the current tree
//! and receives at most one triplet, which the sampler then enforces
//! ([`Chain::add_constraint`]). The strategies ([`Strategy`]):
//!
//! - **simple**: three random points; the user names the odd one out (a triplet
//!   the target resolves and that was not given before);
//! - **random**: the tree induced on `|S|` random points;
//! - **active**: among `L` random subsets, the one whose tree-distance variance
//!   over the samples since the last query (Eq. 2) is highest; the subsets are
//!   tried in decreasing variance until the user finds a violated triplet;
//! - **interleaved**: random and active queries alternately (random first);
//! - **smart**: the whole tree.
//!
//! The simulated user ([`user_answer`]) looks at the root split of the shown tree
//! first: a pair on one side and a point on the other is a triplet the shown tree
//! asserts; the first one the target resolves differently is answered with the
//! target's triplet; otherwise the user recurses into the children.
//!
//! Costs per query: the triplet distance `O(N³)`; an active query
//! `O(L · |samples| · N)` for the induced trees plus `O(L · |samples| · |S|²)`.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::base::tree::Tree;
use crate::error::{Error, Result};

use super::mcmc::Chain;
use super::tree::{DdtTree, NONE};
use super::triplets::{LcaDepths, Triplet, triplet_distance};

/// How the loop chooses what to show the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// No queries: the unconstrained DDT sampler (the paper's "vanilla DDT" baseline).
    Vanilla,
    /// Three random points.
    Simple,
    /// The tree induced on a random subset.
    Random,
    /// The subset of highest tree-distance variance among random candidates.
    Active,
    /// Random and active alternately.
    Interleaved,
    /// The whole tree.
    Smart,
}

impl crate::Named for Strategy {
    const WHAT: &'static str = "query strategy";
    const CHOICES: &'static [(&'static str, Strategy, &'static str)] = &[
        (
            "vanilla",
            Strategy::Vanilla,
            "No queries (the vanilla DDT baseline)",
        ),
        (
            "simple",
            Strategy::Simple,
            "Three random points; the user names the odd one out",
        ),
        (
            "random",
            Strategy::Random,
            "The tree induced on a random subset of points",
        ),
        (
            "active",
            Strategy::Active,
            "The subset of highest tree-distance variance among random candidate subsets",
        ),
        (
            "interleaved",
            Strategy::Interleaved,
            "Random and active alternately",
        ),
        ("smart", Strategy::Smart, "The whole tree"),
    ];
}

/// Settings of the interactive loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopOptions {
    /// The query strategy.
    pub strategy: Strategy,
    /// Chain iterations between queries (the paper: 100).
    pub iters_per_query: usize,
    /// Size of a shown subset `|S|` (the paper: 10).
    pub subset_size: usize,
    /// Candidate subsets of an active query `L` (the paper: 20).
    pub candidates: usize,
}

impl LoopOptions {
    /// The paper's settings for a strategy: 100 iterations per query, `|S| = 10`, `L = 20`.
    pub fn paper(strategy: Strategy) -> LoopOptions {
        LoopOptions {
            strategy,
            iters_per_query: 100,
            subset_size: 10,
            candidates: 20,
        }
    }

    /// Checks the options as a person gives them: a shown subset of at
    /// least 3 points and at least one candidate (`naming` spells them).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the option.
    pub fn checked(self, naming: crate::input::Naming) -> Result<LoopOptions> {
        check_query_sizes(self.subset_size, self.candidates, naming)?;
        Ok(self)
    }
}

/// The sizes of a query as a person gives them: a shown subset of at least
/// 3 points and at least one candidate subset (`naming` spells them).
pub(crate) fn check_query_sizes(
    subset_size: usize,
    candidates: usize,
    naming: crate::input::Naming,
) -> Result<()> {
    if subset_size < 3 {
        return Err(Error::input(format!(
            "{} must be at least 3, got {subset_size}",
            naming.name("subset-size"),
        )));
    }
    if candidates == 0 {
        let name = naming.name("candidates");
        return Err(Error::input(format!("{name} must be at least 1")));
    }
    Ok(())
}

/// The state after a query.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Number of queries asked so far (0 before the first).
    pub query: usize,
    /// `TD(T*, T)` of the current tree.
    pub triplet_distance: f64,
    /// Number of constraints in force.
    pub constraints: usize,
    /// `ln p(T, t) + ln p(X | T, t)` of the current state.
    pub log_likelihood: f64,
    /// The triplet the user gave at this query, if any.
    pub triplet: Option<Triplet>,
}

/// The interactive loop with a simulated user who knows the target tree.
#[derive(Debug)]
pub struct Simulation {
    sampler: Chain,
    target: LcaDepths,
    options: LoopOptions,
    rng: Xoshiro256PlusPlus,
    samples: Vec<(Vec<[u32; 2]>, u32)>,
    queries: usize,
}

impl Simulation {
    /// A loop over `sampler` (usually without constraints) and the target's LCA depths.
    ///
    /// # Errors
    ///
    /// A target over a different number of points, or a zero subset size or
    /// candidate count.
    pub fn new(
        sampler: Chain,
        target: LcaDepths,
        options: LoopOptions,
        seed: u64,
    ) -> Result<Simulation> {
        if target.len() != sampler.tree().num_leaves() {
            return Err(Error::parameter(format!(
                "the target has {} points but the sampler {}",
                target.len(),
                sampler.tree().num_leaves()
            )));
        }
        if options.subset_size < 3 || options.candidates == 0 {
            return Err(Error::parameter(
                "a shown subset needs at least 3 points and active queries at least 1 candidate",
            ));
        }
        // What an active query holds at once, checked before any is asked:
        // the chain's trees between two queries and the scored candidates.
        if matches!(options.strategy, Strategy::Active | Strategy::Interleaved) {
            let n = target.len() as u64;
            let k = options.subset_size.min(target.len()) as u64;
            let tree = (2 * n).saturating_mul(8).saturating_add(32);
            let candidate = k.saturating_mul(8).saturating_add(32);
            let needed = (options.iters_per_query as u64)
                .saturating_mul(tree)
                .saturating_add((options.candidates as u64).saturating_mul(candidate));
            crate::base::memory::check_bytes(
                || {
                    format!(
                        "an active query with {} candidate subsets of {k} points after {} \
                         iterations",
                        options.candidates, options.iters_per_query
                    )
                },
                needed,
                None,
            )?;
        }
        Ok(Simulation {
            sampler,
            target,
            options,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5eed_0f0a_e1e5),
            samples: Vec::new(),
            queries: 0,
        })
    }

    /// Runs `queries` queries: the record of the state before the first, then
    /// one per query.
    pub fn run(&mut self, queries: usize) -> Result<Vec<Record>> {
        let mut records = vec![self.record(None)];
        for _ in 0..queries {
            records.push(self.next_query()?);
        }
        Ok(records)
    }

    /// The sampler.
    pub fn sampler(&self) -> &Chain {
        &self.sampler
    }

    /// The current state.
    pub fn record(&self, triplet: Option<Triplet>) -> Record {
        let (td, _) = triplet_distance(&self.target, &self.sampler.tree().lca_depths());
        Record {
            query: self.queries,
            triplet_distance: td,
            constraints: self.sampler.constraints().len(),
            log_likelihood: self.sampler.log_joint(),
            triplet,
        }
    }

    /// Runs the sampler for the iterations between two queries, asks one query,
    /// enforces the answer and returns the new state.
    ///
    /// # Errors
    ///
    /// A user triplet that conflicts with the constraints (impossible when the
    /// target is a tree, since all its triplets fit in it).
    pub fn next_query(&mut self) -> Result<Record> {
        let keep = matches!(
            self.options.strategy,
            Strategy::Active | Strategy::Interleaved
        );
        self.samples.clear();
        for _ in 0..self.options.iters_per_query {
            self.sampler.step();
            if keep {
                let t = self.sampler.tree();
                self.samples.push((t.kids.clone(), t.top));
            }
        }
        self.queries += 1;
        let active = match self.options.strategy {
            Strategy::Interleaved => self.queries % 2 == 0,
            s => s == Strategy::Active,
        };
        let answer = match self.options.strategy {
            Strategy::Vanilla => None,
            Strategy::Simple => self.simple(),
            Strategy::Smart => {
                let t = self.sampler.tree().topology();
                user_answer(&self.target, &t, &mut self.rng)
            }
            _ if active => self.active(),
            _ => {
                let s = self.random_subset();
                let t = induced(self.sampler.tree(), &s);
                user_answer(&self.target, &t, &mut self.rng)
            }
        };
        if let Some(t) = answer {
            self.sampler.add_constraint(t)?;
        }
        Ok(self.record(answer))
    }

    fn random_subset(&mut self) -> Vec<usize> {
        let n = self.target.len();
        let k = self.options.subset_size.min(n);
        rand::seq::index::sample(&mut self.rng, n, k).into_vec()
    }

    fn simple(&mut self) -> Option<Triplet> {
        let n = self.target.len();
        if n < 3 {
            return None;
        }
        for _ in 0..10_000 {
            let idx = rand::seq::index::sample(&mut self.rng, n, 3).into_vec();
            if let Some(t) = self.target.resolve(idx[0], idx[1], idx[2]) {
                let known = self.sampler.constraints().iter().any(|c| {
                    c.c == t.c && ((c.a == t.a && c.b == t.b) || (c.a == t.b && c.b == t.a))
                });
                if !known {
                    return Some(t);
                }
            }
        }
        None
    }

    fn active(&mut self) -> Option<Triplet> {
        let mut scored: Vec<(f64, Vec<usize>)> = (0..self.options.candidates)
            .map(|_| {
                let s = self.random_subset();
                (
                    tree_distance_variance(&self.samples, self.target.len(), &s),
                    s,
                )
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, s) in scored {
            let t = induced(self.sampler.tree(), &s);
            if let Some(answer) = user_answer(&self.target, &t, &mut self.rng) {
                return Some(answer);
            }
        }
        None
    }
}

/// The tree `T|S` induced on the points `S` (unary nodes suppressed).
pub fn induced(tree: &DdtTree, subset: &[usize]) -> Tree {
    let mut mark = vec![false; tree.n];
    for &i in subset {
        mark[i] = true;
    }
    induced_raw(&tree.kids, tree.top, tree.n, &mark).expect("a non-empty subset")
}

pub(crate) fn induced_raw(kids: &[[u32; 2]], v: u32, n: usize, mark: &[bool]) -> Option<Tree> {
    if (v as usize) < n {
        return mark[v as usize].then_some(Tree::Leaf(v as usize));
    }
    let [a, b] = kids[v as usize];
    debug_assert!(a != NONE && b != NONE);
    match (induced_raw(kids, a, n, mark), induced_raw(kids, b, n, mark)) {
        (Some(l), Some(r)) => Some(Tree::node(l, r)),
        (x, None) | (None, x) => x,
    }
}

/// Edge counts between the leaves of a binary tree, for the leaves listed in
/// `pos` (point → index in the subset): a `k × k` row-major matrix.
fn pair_distances(t: &Tree, pos: &[usize], k: usize, out: &mut [u32]) {
    fn go(t: &Tree, pos: &[usize], k: usize, out: &mut [u32]) -> Vec<(usize, u32)> {
        match t {
            Tree::Leaf(i) => vec![(pos[*i], 0)],
            Tree::Node(l, r) => {
                let mut a = go(l, pos, k, out);
                let mut b = go(r, pos, k, out);
                for x in a.iter_mut().chain(b.iter_mut()) {
                    x.1 += 1;
                }
                for &(i, di) in &a {
                    for &(j, dj) in &b {
                        out[i * k + j] = di + dj;
                        out[j * k + i] = di + dj;
                    }
                }
                a.extend(b);
                a
            }
        }
    }
    go(t, pos, k, out);
}

/// Tree-distance variance (Eq. 2): over the sampled trees, the largest variance of
/// the edge distance between two points of `subset` in the induced trees.
pub(crate) fn tree_distance_variance(
    samples: &[(Vec<[u32; 2]>, u32)],
    n: usize,
    subset: &[usize],
) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let k = subset.len();
    let mut pos = vec![usize::MAX; n];
    let mut mark = vec![false; n];
    for (i, &p) in subset.iter().enumerate() {
        pos[p] = i;
        mark[p] = true;
    }
    let mut sum = vec![0.0; k * k];
    let mut sq = vec![0.0; k * k];
    let mut d = vec![0u32; k * k];
    for (kids, top) in samples {
        let t = induced_raw(kids, *top, n, &mark).expect("non-empty");
        pair_distances(&t, &pos, k, &mut d);
        for (i, &x) in d.iter().enumerate() {
            let x = x as f64;
            sum[i] += x;
            sq[i] += x * x;
        }
    }
    let m = samples.len() as f64;
    sum.iter()
        .zip(&sq)
        .map(|(s, q)| q / m - (s / m) * (s / m))
        .fold(0.0, f64::max)
}

/// The simulated user: a triplet of the target violated by the shown tree, looking
/// at the root split first and then recursing (pre-order); `None` when the shown
/// tree agrees with the target. Candidates at a split are scanned in random order.
pub fn user_answer<R: rand::Rng>(target: &LcaDepths, shown: &Tree, rng: &mut R) -> Option<Triplet> {
    let mut stack = vec![shown];
    while let Some(t) = stack.pop() {
        let Tree::Node(l, r) = t else { continue };
        let mut left = l.leaves();
        let mut right = r.leaves();
        left.shuffle(rng);
        right.shuffle(rng);
        for (one, other) in [(&left, &right), (&right, &left)] {
            for x in 0..one.len() {
                for y in x + 1..one.len() {
                    for &k in other.iter() {
                        let (i, j) = (one[x], one[y]);
                        if let Some(tr) = target.resolve(i, j, k) {
                            if tr.c != k {
                                return Some(tr);
                            }
                        }
                    }
                }
            }
        }
        stack.push(r);
        stack.push(l);
    }
    None
}
