//! An interactive session with a real person (paper §1, §3): the sampler, the
//! current query of a [`Strategy`], the person's answers and undo.
//!
//! [`Simulation`](super::Simulation) answers its own queries from a known target;
//! here the answers come from outside. A [`Session`] shows a [`Query`] (the
//! tree `T|S` induced on a subset `S` of the points by the current tree) and
//! takes an [`Answer`]: accept, or a triplet `({a, b}, c)` over the query's
//! points that the person says holds. A triplet the constraints in force
//! already rule out is refused with a minimal set of the constraints it
//! conflicts with ([`Rejection::Conflict`]); nothing is dropped silently.
//! Undo takes back the last answer (a triplet leaves the constraints; the
//! current tree, which satisfies every remaining one, stays).
//!
//! Answering is split into [`Session::check`] and [`Session::apply`] so that
//! a caller can store the answer durably between the two: `apply` succeeds
//! whenever `check` did.
//!
//! The session also keeps a [`SupportWindow`] of recent trees (one every
//! [`SUPPORT_THIN`] iterations, the last [`SUPPORT_WINDOW`]; restarted, with
//! the current tree, when the constraints change): [`Session::support`] is
//! the support of every cluster of the current tree.
//!
//! The strategies for a person: **simple** shows three random points not all
//! in one constraint already; **random** the tree induced on `|S|` random
//! points; **active** the subset with the highest tree-distance variance
//! (Eq. 2) among `L` random candidates, over the last trees the sampler
//! visited; **interleaved** random and active alternately (random first);
//! **smart** the whole tree. [`Strategy::Vanilla`] asks nothing and is not a
//! session strategy.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::base::tree::Tree;
use crate::error::{Error, Result};

use super::mcmc::Chain;
use super::model::Ddt;
use super::queries::{Strategy, induced_raw, tree_distance_variance};
use super::support::{SUPPORT_THIN, SUPPORT_WINDOW, SupportWindow};
use super::tree::{DdtTree, quote};
use super::triplets::{self, Triplet};

/// Query settings of a [`Session`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryOptions {
    /// Points shown by a random, active or interleaved query `|S|` (the paper: 10).
    pub subset_size: usize,
    /// Candidate subsets of an active query `L` (the paper: 20).
    pub candidates: usize,
    /// Trees kept for the variance of active queries: the last this many
    /// iterations (the paper: the 100 between two queries).
    pub samples: usize,
}

impl QueryOptions {
    /// Checks the options as a person gives them: a shown subset of at
    /// least 3 points and at least one candidate (`naming` spells them).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the option.
    pub fn checked(self, naming: crate::input::Naming) -> Result<QueryOptions> {
        super::queries::check_query_sizes(self.subset_size, self.candidates, naming)?;
        Ok(self)
    }
}

impl Default for QueryOptions {
    fn default() -> QueryOptions {
        QueryOptions {
            subset_size: 10,
            candidates: 20,
            samples: 100,
        }
    }
}

/// A person's answer to the current query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Answer {
    /// The shown tree is right.
    Accept,
    /// `({a, b}, c)` holds: `a` and `b` belong together, apart from `c`.
    Triplet(Triplet),
}

/// Why an answer was refused (nothing changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// There is no query to answer.
    NoQuery,
    /// A triplet needs three different points.
    Repeated,
    /// The triplet names a point the query does not show.
    NotInQuery(usize),
    /// The triplet cannot hold together with these constraints in force (a
    /// minimal such set: without any one of them it could).
    Conflict(Vec<Triplet>),
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::NoQuery => write!(f, "there is no query to answer"),
            Rejection::Repeated => write!(f, "a triplet needs three different points"),
            Rejection::NotInQuery(p) => write!(f, "point {p} is not in the query"),
            Rejection::Conflict(ts) => {
                write!(f, "the triplet conflicts with the constraints")?;
                for t in ts {
                    write!(f, " ({{{}, {}}}, {})", t.a, t.b, t.c)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Rejection {}

/// What the person is shown: the tree induced on some points.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    strategy: Strategy,
    points: Vec<usize>,
    tree: Tree,
    one_minus_times: Vec<f64>,
}

impl Query {
    /// The strategy that chose it.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The shown points, ascending.
    pub fn points(&self) -> &[usize] {
        &self.points
    }

    /// The induced tree `T|S` (canonical: the child with the smaller point first).
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// `1 - t` of the internal nodes of [`Query::tree`] in pre-order: the
    /// divergence times of the corresponding LCAs in the sampler's tree.
    pub fn one_minus_times(&self) -> &[f64] {
        &self.one_minus_times
    }

    /// Newick with point names and branch lengths in time units (leaves at
    /// `t = 1`, the stem from `t = 0`).
    pub fn to_newick(&self, names: &[String]) -> String {
        newick(&self.tree, &self.one_minus_times, names)
    }
}

/// Newick of a topology with `1 - t` of its internal nodes in pre-order.
fn newick(tree: &Tree, oms: &[f64], names: &[String]) -> String {
    fn go(
        t: &Tree,
        up: f64,
        oms: &mut std::slice::Iter<'_, f64>,
        names: &[String],
        s: &mut String,
    ) {
        let om = match t {
            Tree::Leaf(i) => {
                s.push_str(&quote(&names[*i]));
                0.0
            }
            Tree::Node(l, r) => {
                let om = *oms.next().expect("one time per internal node");
                s.push('(');
                go(l, om, oms, names, s);
                s.push(',');
                go(r, om, oms, names, s);
                s.push(')');
                om
            }
        };
        s.push_str(&format!(":{}", fmt_len(up - om)));
    }
    let mut s = String::new();
    go(tree, 1.0, &mut oms.iter(), names, &mut s);
    s.push(';');
    s
}

fn fmt_len(x: f64) -> String {
    if x >= 1e-3 {
        format!("{x:.6}")
    } else {
        format!("{x:.6e}")
    }
}

/// The canonical topology of a sampler tree and `1 - t` of its internal nodes in
/// pre-order: [`DdtTree::with_one_minus_times`] rebuilds the same tree (exactly,
/// also for times close to 1).
pub fn snapshot(tree: &DdtTree) -> (Tree, Vec<f64>) {
    let topo = tree.topology();
    let oms = times_of(tree, &topo);
    (topo, oms)
}

/// `1 - t` of the LCA (in `tree`) of every internal node of `shown`, pre-order.
fn times_of(tree: &DdtTree, shown: &Tree) -> Vec<f64> {
    fn go(tree: &DdtTree, t: &Tree, out: &mut Vec<f64>) -> u32 {
        match t {
            Tree::Leaf(i) => *i as u32,
            Tree::Node(l, r) => {
                let k = out.len();
                out.push(0.0);
                let a = go(tree, l, out);
                let b = go(tree, r, out);
                let v = tree.lca(a, b);
                out[k] = tree.om[v as usize];
                v
            }
        }
    }
    let mut out = Vec::new();
    go(tree, shown, &mut out);
    out
}

/// The interactive loop with a person: sampler, current query, answers, undo.
#[derive(Debug)]
pub struct Session {
    chain: Chain,
    strategy: Strategy,
    options: QueryOptions,
    rng: Xoshiro256PlusPlus,
    seed: u64,
    samples: VecDeque<(Vec<[u32; 2]>, u32)>,
    asked: u64,
    current: Option<Query>,
    answers: Vec<Answer>,
    iterations: u64,
    since_change: u64,
    support: SupportWindow,
    since_support: u64,
}

impl Session {
    /// A session over `model` with the answers in force (oldest first, as left
    /// after any undos), started from `tree` when it is given and satisfies
    /// every triplet among them, else from BUILD's tree.
    ///
    /// # Errors
    ///
    /// [`Strategy::Vanilla`], a subset size below 3, no candidates, a triplet
    /// out of range, or triplets that cannot all hold.
    pub fn new(
        model: Ddt,
        strategy: Strategy,
        options: QueryOptions,
        answers: Vec<Answer>,
        tree: Option<DdtTree>,
        seed: u64,
    ) -> Result<Session> {
        check_strategy(strategy)?;
        if options.subset_size < 3 || options.candidates == 0 {
            return Err(Error::parameter(
                "a shown subset needs at least 3 points and active queries at least 1 candidate",
            ));
        }
        if model.n < 3 {
            return Err(Error::parameter(format!(
                "interactive clustering needs at least 3 points, got {}",
                model.n
            )));
        }
        let constraints = distinct(&answers);
        let chain = match tree {
            Some(t) if t.n == model.n && constraints.iter().all(|c| t.satisfies(c)) => {
                Chain::with_tree(model, t, constraints, seed)?
            }
            _ => Chain::with_constraints(model, constraints, seed)?,
        };
        let mut support = SupportWindow::new(SUPPORT_WINDOW);
        support.push(chain.tree());
        Ok(Session {
            chain,
            strategy,
            options,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x9e55_10e5),
            seed,
            samples: VecDeque::with_capacity(options.samples),
            asked: 0,
            current: None,
            answers,
            iterations: 0,
            since_change: 0,
            support,
            since_support: 0,
        })
    }

    /// The sampler.
    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// The current tree.
    pub fn tree(&self) -> &DdtTree {
        self.chain.tree()
    }

    /// The distinct triplets in force.
    pub fn constraints(&self) -> &[Triplet] {
        self.chain.constraints()
    }

    /// The answers in force, oldest first (undone ones removed).
    pub fn answers(&self) -> &[Answer] {
        &self.answers
    }

    /// The query strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Chain iterations run by this session.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Chain iterations since the last answer, undo or strategy change.
    pub fn iterations_since_change(&self) -> u64 {
        self.since_change
    }

    /// Runs `iters` chain iterations (one SPR and one time proposal each).
    pub fn run(&mut self, iters: usize) {
        let keep = matches!(self.strategy, Strategy::Active | Strategy::Interleaved);
        for _ in 0..iters {
            self.chain.step();
            self.since_support += 1;
            if self.since_support == SUPPORT_THIN {
                self.since_support = 0;
                self.support.push(self.chain.tree());
            }
            if keep && self.options.samples > 0 {
                if self.samples.len() == self.options.samples {
                    let (mut kids, _) = self.samples.pop_front().expect("full");
                    kids.copy_from_slice(&self.chain.tree().kids);
                    self.samples.push_back((kids, self.chain.tree().top));
                } else {
                    let t = self.chain.tree();
                    self.samples.push_back((t.kids.clone(), t.top));
                }
            }
        }
        self.iterations += iters as u64;
        self.since_change += iters as u64;
    }

    /// The support of every internal node of the current tree, in pre-order of
    /// its [`DdtTree::topology`]: the fraction of the trees in the support
    /// window (see the module docs) that hold its cluster.
    pub fn support(&self) -> Vec<f64> {
        self.support
            .support(self.chain.tree())
            .expect("the window holds at least the tree of the last change")
    }

    /// The trees the support window holds now (at most [`SUPPORT_WINDOW`]).
    pub fn support_samples(&self) -> usize {
        self.support.len()
    }

    /// The current query, if one has been chosen since the last change.
    pub fn current(&self) -> Option<&Query> {
        self.current.as_ref()
    }

    /// The current query; chooses one when there is none.
    pub fn query(&mut self) -> &Query {
        if self.current.is_none() {
            let q = self.choose();
            self.current = Some(q);
        }
        self.current.as_ref().expect("set above")
    }

    fn choose(&mut self) -> Query {
        self.asked += 1;
        let n = self.chain.tree().n;
        let strategy = self.strategy;
        let points = match strategy {
            Strategy::Smart | Strategy::Vanilla => (0..n).collect(),
            Strategy::Simple => self.simple_triple(),
            Strategy::Active => self.active_subset(),
            Strategy::Interleaved if self.asked % 2 == 0 => self.active_subset(),
            Strategy::Interleaved | Strategy::Random => self.random_subset(),
        };
        let mut points = points;
        points.sort_unstable();
        let mut mark = vec![false; n];
        for &p in &points {
            mark[p] = true;
        }
        let t = self.chain.tree();
        let tree = induced_raw(&t.kids, t.top, n, &mark)
            .expect("a non-empty subset")
            .canonical();
        let one_minus_times = times_of(t, &tree);
        Query {
            strategy,
            points,
            tree,
            one_minus_times,
        }
    }

    fn random_subset(&mut self) -> Vec<usize> {
        let n = self.chain.tree().n;
        rand::seq::index::sample(&mut self.rng, n, self.options.subset_size.min(n)).into_vec()
    }

    fn simple_triple(&mut self) -> Vec<usize> {
        let n = self.chain.tree().n;
        let mut idx = Vec::new();
        for _ in 0..100 {
            idx = rand::seq::index::sample(&mut self.rng, n, 3).into_vec();
            let known = self.chain.constraints().iter().any(|c| {
                let mut x = [c.a, c.b, c.c];
                let mut y = [idx[0], idx[1], idx[2]];
                x.sort_unstable();
                y.sort_unstable();
                x == y
            });
            if !known {
                break;
            }
        }
        idx
    }

    fn active_subset(&mut self) -> Vec<usize> {
        let n = self.chain.tree().n;
        let samples = self.samples.make_contiguous();
        let mut best: Option<(f64, Vec<usize>)> = None;
        for _ in 0..self.options.candidates {
            let s = rand::seq::index::sample(&mut self.rng, n, self.options.subset_size.min(n))
                .into_vec();
            let v = tree_distance_variance(samples, n, &s);
            if best.as_ref().is_none_or(|b| v > b.0) {
                best = Some((v, s));
            }
        }
        best.expect("at least one candidate").1
    }

    /// Changes the strategy; the current query is dropped.
    ///
    /// # Errors
    ///
    /// [`Strategy::Vanilla`] (it asks nothing).
    pub fn set_strategy(&mut self, strategy: Strategy) -> Result<()> {
        check_strategy(strategy)?;
        self.strategy = strategy;
        self.current = None;
        self.asked = 0;
        Ok(())
    }

    /// The triplets in force that `t` conflicts with (a minimal set: `t` holds
    /// together with all the others), or `None` when it can be added.
    pub fn conflicts(&self, t: Triplet) -> Option<Vec<Triplet>> {
        let n = self.chain.tree().n;
        let mut set: Vec<Triplet> = self.constraints().to_vec();
        let fails = |set: &[Triplet]| {
            let mut all = set.to_vec();
            all.push(t);
            triplets::build(n, &all).is_err()
        };
        if !fails(&set) {
            return None;
        }
        // Deletion filter: drop every constraint the conflict does not need.
        let mut i = set.len();
        while i > 0 {
            i -= 1;
            let removed = set.remove(i);
            if !fails(&set) {
                set.insert(i, removed);
            }
        }
        Some(set)
    }

    /// Whether `answer` may be applied to the current query (nothing changes).
    ///
    /// # Errors
    ///
    /// The reason it may not.
    pub fn check(&self, answer: &Answer) -> std::result::Result<(), Rejection> {
        let Some(q) = &self.current else {
            return Err(Rejection::NoQuery);
        };
        if let Answer::Triplet(t) = answer {
            if t.a == t.b || t.a == t.c || t.b == t.c {
                return Err(Rejection::Repeated);
            }
            for p in [t.a, t.b, t.c] {
                if q.points.binary_search(&p).is_err() {
                    return Err(Rejection::NotInQuery(p));
                }
            }
            if let Some(c) = self.conflicts(*t) {
                return Err(Rejection::Conflict(c));
            }
        }
        Ok(())
    }

    /// Applies an answer to the current query: a new triplet is enforced (the
    /// subtree under `LCA(a, b)` rebuilt when the tree violates it); the query
    /// is dropped. Returns the number of distinct triplets in force.
    ///
    /// # Errors
    ///
    /// As [`Session::check`] (then nothing changes).
    pub fn apply(&mut self, answer: Answer) -> std::result::Result<usize, Rejection> {
        self.check(&answer)?;
        if let Answer::Triplet(t) = answer {
            let t = normal(t);
            if !self.constraints().contains(&t) {
                self.chain
                    .add_constraint(t)
                    .expect("checked by BUILD over the same set");
                self.restart_support();
            }
        }
        self.answers.push(answer);
        self.changed();
        Ok(self.constraints().len())
    }

    /// Takes back the last answer in force and returns it (`None` when there is
    /// none). A triplet leaves the constraints unless an earlier answer gave it
    /// too; the current tree stays. The query is dropped.
    pub fn undo(&mut self) -> Option<Answer> {
        let last = self.answers.pop()?;
        if let Answer::Triplet(_) = last {
            let keep = distinct(&self.answers);
            if keep.len() != self.constraints().len() {
                let model = self.chain.model().clone();
                let tree = self.chain.tree().clone();
                let seed = self.seed ^ self.iterations.wrapping_mul(0x2545_f491_4f6c_dd1d);
                self.chain = Chain::with_tree(model, tree, keep, seed)
                    .expect("the tree satisfies a superset of the remaining triplets");
                self.restart_support();
            }
        }
        self.changed();
        Some(last)
    }

    /// Another posterior: the window restarts from the current tree.
    fn restart_support(&mut self) {
        self.support.clear();
        self.support.push(self.chain.tree());
        self.since_support = 0;
    }

    fn changed(&mut self) {
        self.current = None;
        self.since_change = 0;
    }
}

/// Refuses a session strategy that asks no queries (vanilla), before
/// anything is built or stored.
///
/// # Errors
///
/// [`ErrorKind::Parameter`](crate::ErrorKind::Parameter) for the vanilla strategy.
pub fn check_strategy(strategy: Strategy) -> Result<()> {
    if strategy == Strategy::Vanilla {
        return Err(Error::parameter(
            "the vanilla strategy asks no queries; use simple, random, active, interleaved or smart",
        ));
    }
    Ok(())
}

/// `({a, b}, c)` with `a < b`.
fn normal(t: Triplet) -> Triplet {
    Triplet {
        a: t.a.min(t.b),
        b: t.a.max(t.b),
        c: t.c,
    }
}

/// The distinct triplets of the answers, in order of first appearance.
fn distinct(answers: &[Answer]) -> Vec<Triplet> {
    let mut out: Vec<Triplet> = Vec::new();
    for a in answers {
        if let Answer::Triplet(t) = a {
            let t = normal(*t);
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}
