//! Exact posterior summaries: the maximum-clade-credibility tree, the
//! majority-rule consensus and the Binder-optimal partition.
//!
//! People who work with posteriors over trees and clusterings rarely report
//! the mode: under the cost models the MAP hierarchy is often a caterpillar
//! even when the marginals say which groups are certain. They report a
//! summary built from the marginals, usually estimated from MCMC samples.
//! The trellises have the exact marginal of every cluster and of every pair,
//! so each summary here is computed **exactly**.
//!
//! # The maximum-clade-credibility (MCC) tree
//!
//! The binary tree `T` whose clusters are jointly the best supported: it
//! maximises the *clade credibility* `Π_{C ∈ T} P(C)`, or its log
//! `Σ_{C ∈ T} log P(C)`, over all `(2n-3)!!` trees (BEAST's TreeAnnotator
//! maximises it over the sampled trees only). Singletons and the root have
//! marginal 1, so only the `n - 2` non-trivial clusters count. The score is a
//! sum over the tree's splits of `log ψ(L, R) = log P(L) + log P(R)`, a split
//! potential of the separable form `f · (P(S) + C(L) + C(R))` with `f = 1`,
//! `P ≡ 0` and `C(T) = log P(T)` ([`CladeCredibility`]), so the MCC tree is
//! the MAP tree of that model: one max-plus pass over the trellis, on the
//! cache-blocked, vectorised kernel ([`Trellis::map_only`]), `O(3^n)` time
//! (`(3^n - 2^(n+1) + 1)/2` additions) and `O(2^n)` memory, after the outside
//! pass that gave the marginals (also `O(3^n)`). Ties go to the kernel's
//! deterministic rule (the first best split in its enumeration order).
//!
//! Clusters of marginal 0 have `log P = -∞`. The MAP tree `H*` of the model
//! has `P(H*) ≥ 1 / (2n-3)!!`, and each of its clusters at least that
//! marginal, so the MCC tree's credibility is at least `-(n-2) ln (2n-3)!!`:
//! every `log P` below that floor (`-∞` included) can be raised to it
//! without changing the answer (a tree holding such a cluster scores below
//! the floor, hence below `H*`), which keeps every value finite and in the
//! range of the blocked kernel. On a sparse trellis the same recursion runs
//! over its vertices and child pairs, `O(splits)`: the MCC tree among the
//! trees it realises, by the marginals of the distribution restricted to
//! them.
//!
//! # The majority-rule consensus
//!
//! The tree of every cluster whose marginal exceeds one half (MrBayes'
//! `sumt`), generally multifurcating. Two clusters that are neither nested nor
//! disjoint never occur in one tree, so their marginals sum to at most 1:
//! clusters with `P > 1/2` are pairwise compatible and form a tree. At a
//! threshold `t > 1/2` the consensus holds the clusters with `P ≥ t` (at
//! `t = 1`, the clusters in every tree of positive probability: the strict
//! consensus); at `t = 1/2` those with `P > 1/2`. (Should rounding put two
//! incompatible clusters above the threshold, which can only happen when
//! both are within rounding of 1/2, the more probable one is kept.) It costs
//! one pass over the marginals, `O(2^n)` on the dense trellis.
//!
//! # The Binder-optimal partition
//!
//! Binder's loss of an estimate `ĉ` against the true partition `c` counts
//! the pairs the estimate gets wrong, with a cost for each kind of error:
//!
//! ```text
//! L(ĉ, c) = Σ_{i<j} [ a · 1(i ~ j in c, i ≁ j in ĉ) + b · 1(i ≁ j in c, i ~ j in ĉ) ]
//! ```
//!
//! `a` (`cost_split`) is the cost of **splitting** a pair that belongs
//! together, `b` (`cost_join`) the cost of **joining** a pair that belongs
//! apart (mcclust and salso use the same two costs). Under the posterior,
//! with `p_ij = P(i ~ j)` the exact pairwise co-clustering probabilities,
//!
//! ```text
//! E[L(ĉ)] = Σ_{i<j} [ 1(i ~ j in ĉ) · b · (1 - p_ij) + 1(i ≁ j in ĉ) · a · p_ij ]
//!         = Σ_{i<j} a · p_ij  -  Σ_{i<j, i ~ j in ĉ} w_ij,      w_ij = a · p_ij - b · (1 - p_ij),
//! ```
//!
//! so the Binder-optimal partition maximises the weight kept inside its
//! clusters: the MAP partition of correlation clustering on `w` (at β = 1),
//! solved exactly by the flat trellis's max-plus pass
//! ([`FlatTrellis::map_only`], `O(3^n)`). With equal costs a pair is joined
//! when `p_ij > 1/2` wherever that is consistent. The expected loss is then
//! recomputed from the partition and `p` directly.

use std::fmt;

use serde::Serialize;

use crate::base::run::Options;
use crate::base::set::{Mask, full};
use crate::base::tree::{Tree, newick_label};
use crate::base::weights::{Matrix, Weights};
use crate::dense::blocked::log_double_factorial;
use crate::dense::{Marginals, Trellis};
use crate::error::{Error, Result};
use crate::flat::{FlatMarginals, FlatTrellis, Partition};
use crate::models::{Cluster, CorrelationClustering, Model, Separable, Summarize};

/// A cluster of a summary tree with its posterior marginal (its support).
/// It serializes as `{"members": [..], "p": ..}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Clade {
    /// The cluster's points, sorted.
    pub members: Vec<usize>,
    /// Its posterior marginal.
    pub p: f64,
}

/// A rooted tree over the points `0..n` given by its non-trivial clusters
/// (those of 2 to `n - 1` points), binary or not, each with its support: the
/// answer of [`mcc_tree`](crate::posterior::Posterior::mcc_tree) and
/// [`consensus_tree`](crate::posterior::Posterior::consensus_tree).
///
/// Its nested-list form (`Display`, `Serialize`) writes each node's children
/// ordered by their smallest point, e.g. `[[0,1],2,[3,4]]` for a root with
/// three children.
#[derive(Clone, Debug, PartialEq)]
pub struct SupportTree {
    n: usize,
    /// Non-trivial clusters, most probable first (ties: larger first, then
    /// by members).
    clades: Vec<Clade>,
    /// `Σ log P(C)` over the clusters, for the MCC tree.
    log_credibility: Option<f64>,
}

/// A node's child in [`SupportTree::children`]: a point, or a clade by its
/// index in [`SupportTree::clades`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Child {
    Leaf(usize),
    Clade(usize),
}

impl SupportTree {
    /// The tree of `clades` over `n` points: each of 2 to `n - 1` distinct
    /// points in range, pairwise nested or disjoint (an error otherwise).
    pub fn new(n: usize, clades: Vec<Clade>) -> Result<SupportTree> {
        if n == 0 {
            return Err(Error::parameter("a tree needs at least one point"));
        }
        let mut clades = clades;
        for c in &mut clades {
            c.members.sort_unstable();
            if c.members.len() < 2 || c.members.len() >= n {
                return Err(Error::tree(format!(
                    "cluster {:?} is not a non-trivial cluster of {n} points (2 to {} points)",
                    c.members,
                    n.saturating_sub(1)
                )));
            }
            if c.members.windows(2).any(|w| w[0] == w[1]) || c.members[c.members.len() - 1] >= n {
                return Err(Error::tree(format!(
                    "cluster {:?} repeats a point or has a point beyond the {n} points",
                    c.members
                )));
            }
            if c.p.is_nan() {
                return Err(Error::parameter("a support value is NaN"));
            }
        }
        clades.sort_by(|a, b| {
            b.p.total_cmp(&a.p)
                .then(b.members.len().cmp(&a.members.len()))
                .then(a.members.cmp(&b.members))
        });
        let tree = SupportTree {
            n,
            clades,
            log_credibility: None,
        };
        tree.children()?;
        Ok(tree)
    }

    /// The binary tree `tree` (over all `n` points) whose non-trivial
    /// clusters, in the order of [`nontrivial`], have the marginals `support`.
    pub(crate) fn of_binary(
        n: usize,
        clusters: Vec<Vec<usize>>,
        support: &[f64],
        log_credibility: f64,
    ) -> Result<SupportTree> {
        let clades = clusters
            .into_iter()
            .zip(support)
            .map(|(members, &p)| Clade { members, p })
            .collect();
        let mut t = SupportTree::new(n, clades)?;
        t.log_credibility = Some(log_credibility);
        Ok(t)
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The non-trivial clusters with their support, most probable first
    /// (ties: larger first, then by members).
    pub fn clades(&self) -> &[Clade] {
        &self.clades
    }

    /// `Σ log P(C)` over the non-trivial clusters of an MCC tree (`None`
    /// for a consensus tree).
    pub fn log_credibility(&self) -> Option<f64> {
        self.log_credibility
    }

    /// Whether every internal node has two children (`n - 2` clusters).
    pub fn is_binary(&self) -> bool {
        self.clades.len() + 2 == self.n.max(2)
    }

    /// The same tree carrying `log_credibility` (as an MCC tree does).
    pub fn with_log_credibility(mut self, log_credibility: f64) -> SupportTree {
        self.log_credibility = Some(log_credibility);
        self
    }

    /// The tree as a binary [`Tree`] (children ordered by their smallest
    /// point), or `None` when it is multifurcating.
    pub fn to_binary(&self) -> Option<Tree> {
        self.is_binary().then(|| self.resolved())
    }

    /// One binary resolution of the tree: every node of `k > 2` children
    /// (ordered by their smallest point) becomes a left-leaning caterpillar
    /// `(((c1, c2), c3), ...)`. Its clusters include all of this tree's; for
    /// a binary tree it is the tree itself.
    pub fn resolved(&self) -> Tree {
        let kids = self.children().expect("checked when built");
        let mut built: Vec<Option<Tree>> = vec![None; self.clades.len() + 1];
        // Clades by increasing size: children before parents; the root last.
        let mut order: Vec<usize> = (0..self.clades.len()).collect();
        order.sort_by_key(|&k| self.clades[k].members.len());
        order.push(self.clades.len());
        for k in order {
            let subtrees = kids[k].iter().map(|c| match *c {
                Child::Leaf(i) => Tree::Leaf(i),
                Child::Clade(j) => built[j].take().expect("children first"),
            });
            built[k] = subtrees.reduce(Tree::node);
        }
        built.pop().flatten().expect("a tree has a root")
    }

    /// The children of every clade and (last) of the root, each ordered by
    /// smallest point; an error when two clades are neither nested nor
    /// disjoint. `O(n · clades)`.
    fn children(&self) -> Result<Vec<Vec<Child>>> {
        let root = self.clades.len();
        // Largest first: each clade's parent is placed before it.
        let mut order: Vec<usize> = (0..root).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&self.clades[a].members, &self.clades[b].members);
            b.len().cmp(&a.len()).then(a.cmp(b))
        });
        let mut owner = vec![root; self.n];
        let mut parent = vec![root; root];
        for &k in &order {
            let m = &self.clades[k].members;
            let p = owner[m[0]];
            if let Some(&x) = m.iter().find(|&&x| owner[x] != p) {
                // The clade holding m[0] but not x, or the one holding x.
                let other = if p != root { p } else { owner[x] };
                return Err(Error::tree(format!(
                    "clusters {m:?} and {:?} overlap without one holding the other",
                    self.clades[other].members
                )));
            }
            if p != root && self.clades[p].members.len() == m.len() {
                return Err(Error::tree(format!("cluster {m:?} is given twice")));
            }
            parent[k] = p;
            for &x in m {
                owner[x] = k;
            }
        }
        let mut kids: Vec<Vec<(usize, Child)>> = vec![Vec::new(); root + 1];
        for (i, &o) in owner.iter().enumerate() {
            kids[o].push((i, Child::Leaf(i)));
        }
        for k in 0..root {
            kids[parent[k]].push((self.clades[k].members[0], Child::Clade(k)));
        }
        Ok(kids
            .into_iter()
            .map(|mut v| {
                v.sort_by_key(|&(lowest, _)| lowest);
                v.into_iter().map(|(_, c)| c).collect()
            })
            .collect())
    }

    /// Writes the tree depth-first: `open` before a node's children,
    /// `close(clade)` after them (`None` for the root), `leaf(i)` for a
    /// point, `sep` between siblings. Iterative: any depth.
    fn write(
        &self,
        out: &mut impl fmt::Write,
        leaf: &dyn Fn(usize, &mut dyn fmt::Write) -> fmt::Result,
        open: char,
        close: &dyn Fn(Option<&Clade>, &mut dyn fmt::Write) -> fmt::Result,
    ) -> fmt::Result {
        let kids = self.children().map_err(|_| fmt::Error)?;
        let root = self.clades.len();
        enum Token {
            Node(usize),
            Leaf(usize),
            Comma,
            Close(usize),
        }
        if self.n == 1 {
            return leaf(0, out);
        }
        let mut stack = vec![Token::Node(root)];
        while let Some(token) = stack.pop() {
            match token {
                Token::Leaf(i) => leaf(i, out)?,
                Token::Comma => out.write_char(',')?,
                Token::Close(k) => close((k < root).then(|| &self.clades[k]), out)?,
                Token::Node(k) => {
                    out.write_char(open)?;
                    stack.push(Token::Close(k));
                    for (j, c) in kids[k].iter().enumerate().rev() {
                        stack.push(match *c {
                            Child::Leaf(i) => Token::Leaf(i),
                            Child::Clade(c) => Token::Node(c),
                        });
                        if j > 0 {
                            stack.push(Token::Comma);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Rooted Newick (`[&R] ((a,b)0.93,c,d);`) without branch lengths, each
    /// non-trivial cluster labelled with its support; leaves by `names`
    /// (quoted when Newick needs it) or by their 0-based indices.
    pub fn to_newick(&self, names: Option<&[String]>) -> String {
        self.to_newick_with(names, true, true)
    }

    /// Newick without branch lengths: with the support labels when
    /// `support`, with the rooted-tree mark `[&R]` when `rooted`.
    pub fn to_newick_with(&self, names: Option<&[String]>, support: bool, rooted: bool) -> String {
        let mut s = String::from(if rooted { "[&R] " } else { "" });
        let leaf = |i: usize, out: &mut dyn fmt::Write| match names.and_then(|v| v.get(i)) {
            Some(name) => out.write_str(&newick_label(name)),
            None => write!(out, "{i}"),
        };
        let close = |c: Option<&Clade>, out: &mut dyn fmt::Write| {
            out.write_char(')')?;
            match c {
                Some(c) if support => write!(out, "{:?}", c.p),
                _ => Ok(()),
            }
        };
        self.write(&mut s, &leaf, '(', &close)
            .expect("writing to a String cannot fail");
        s.push(';');
        s
    }
}

impl fmt::Display for SupportTree {
    /// The nested lists, e.g. `[[0,1],2,[3,4]]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let leaf = |i: usize, out: &mut dyn fmt::Write| write!(out, "{i}");
        let close = |_: Option<&Clade>, out: &mut dyn fmt::Write| out.write_char(']');
        self.write(f, &leaf, '[', &close)
    }
}

impl Serialize for SupportTree {
    /// The nested lists of [`Display`](fmt::Display), as JSON.
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        serde_json::value::RawValue::from_string(self.to_string())
            .map_err(S::Error::custom)?
            .serialize(serializer)
    }
}

/// The non-trivial clusters of a binary tree over `n` points, in post-order.
pub(crate) fn nontrivial(tree: &Tree, n: usize) -> Vec<Vec<usize>> {
    tree.clusters()
        .into_iter()
        .filter(|c| c.len() >= 2 && c.len() < n)
        .collect()
}

/// The clade-credibility model over a table of log cluster marginals:
/// `log ψ(L, R) = log P(L) + log P(R)` (0 for a single point), so that the
/// MAP tree is the MCC tree and its log-potential the tree's log clade
/// credibility (see the module docs). Separable with a constant factor, so
/// the dense trellis runs it on the blocked kernel.
///
/// Its summary of a cluster is the cluster's mask. Values of `log P` below
/// the floor `-(n-2) ln (2n-3)!! - 1` (and `-∞`) are raised to it, which
/// does not change the MAP tree (see the module docs).
#[derive(Clone, Debug)]
pub struct CladeCredibility<'a> {
    n: usize,
    log_p: &'a [f64],
    floor: f64,
}

impl<'a> CladeCredibility<'a> {
    /// The model over `log_p[S] = log P(S)` of every subset mask `S` of `n`
    /// points (`2^n` entries; the empty set, singletons and the whole set
    /// are not read). An error for a table of the wrong length, more than
    /// [`MAX_POINTS`](crate::MAX_POINTS) points, or a NaN or `+∞` entry.
    pub fn new(n: usize, log_p: &'a [f64]) -> Result<CladeCredibility<'a>> {
        if n == 0 || n > crate::MAX_POINTS {
            return Err(Error::parameter(format!(
                "the clade-credibility model takes 1 to {} points, not {n}",
                crate::MAX_POINTS
            )));
        }
        if log_p.len() != 1usize << n {
            return Err(Error::parameter(format!(
                "a table of log marginals over {n} points has {} entries, not {}",
                1usize << n,
                log_p.len()
            )));
        }
        if let Some(s) = log_p.iter().position(|x| x.is_nan() || *x == f64::INFINITY) {
            return Err(Error::parameter(format!(
                "the log marginal of cluster {:?} is {}",
                crate::members(s as Mask).collect::<Vec<_>>(),
                log_p[s]
            )));
        }
        let floor = if n <= 2 {
            -1.0
        } else {
            -((n - 2) as f64) * log_double_factorial(n) - 1.0
        };
        Ok(CladeCredibility { n, log_p, floor })
    }

    /// `C(S)`: `log P(S)` raised to the floor, 0 for a single point and for
    /// the whole set.
    #[inline]
    fn term(&self, s: Mask) -> f64 {
        if s.count_ones() <= 1 || s == full(self.n) {
            0.0
        } else {
            self.log_p[s as usize].max(self.floor)
        }
    }
}

impl Summarize for CladeCredibility<'_> {
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

impl Model for CladeCredibility<'_> {
    fn log_potential(&self, _: &Mask, left: &Mask, right: &Mask) -> f64 {
        self.term(*left) + self.term(*right)
    }
    fn separable(&self) -> Option<Separable<'_, Mask>> {
        Some(Separable {
            factors: vec![1.0; self.n + 1],
            terms: Box::new(move |&s| (0.0, self.term(s))),
            pairs: None,
        })
    }
}

/// The MCC tree of a dense trellis's posterior from its [`Marginals`]
/// (one max-plus pass, see the module docs), each non-trivial cluster with
/// its marginal, and its log clade credibility.
/// [`Posterior::mcc_tree`](crate::posterior::Posterior::mcc_tree) is the
/// same for any engine.
///
/// # Errors
///
/// Those of the max-plus pass (memory, cancelling).
pub fn mcc_tree<M: Model>(marginals: &Marginals<M>, options: &Options<'_>) -> Result<SupportTree> {
    let n = marginals.num_points();
    let (tree, log_credibility) = mcc_dense(n, marginals.log_p_table(), options)?;
    let tree = tree.canonical();
    let clusters = nontrivial(&tree, n);
    let support: Vec<f64> = clusters
        .iter()
        .map(|c| marginals.p(crate::mask_of(c.iter().copied())))
        .collect();
    SupportTree::of_binary(n, clusters, &support, log_credibility)
}

/// The majority-rule consensus tree of a dense trellis's posterior at
/// `threshold` in `[0.5, 1]` (see the module docs), `O(2^n)`.
///
/// # Errors
///
/// A threshold outside `[0.5, 1]` or NaN.
pub fn consensus_tree<M: Model>(marginals: &Marginals<M>, threshold: f64) -> Result<SupportTree> {
    check_threshold(threshold)?;
    let n = marginals.num_points();
    let clusters = marginals
        .clusters(threshold)
        .into_iter()
        .map(|(s, p)| (crate::members(s).collect(), p))
        .collect();
    consensus(n, clusters, threshold)
}

/// The MCC tree of a dense table of log marginals with its log clade
/// credibility (the unraised `Σ log P` of its non-trivial clusters).
pub(crate) fn mcc_dense(n: usize, log_p: &[f64], options: &Options<'_>) -> Result<(Tree, f64)> {
    if n == 1 {
        return Ok((Tree::Leaf(0), 0.0));
    }
    let model = CladeCredibility::new(n, log_p)?;
    let tree = Trellis::map_only(&model, options)?.tree;
    let masks = tree.mask_splits()?;
    let root = full(n);
    let mut credibility = 0.0;
    for (a, b) in masks {
        for s in [a, b] {
            if s.count_ones() >= 2 && s != root {
                credibility += log_p[s as usize];
            }
        }
    }
    Ok((tree, credibility))
}

/// Checks a consensus threshold: in `[0.5, 1]`.
pub(crate) fn check_threshold(threshold: f64) -> Result<()> {
    if !(0.5..=1.0).contains(&threshold) {
        return Err(Error::parameter(format!(
            "the consensus threshold must be between 0.5 and 1, not {threshold}"
        )));
    }
    Ok(())
}

/// Whether a cluster of marginal `p` enters the consensus at `threshold`
/// (`p > 1/2` at one half, `p ≥ t` above).
pub(crate) fn in_consensus(p: f64, threshold: f64) -> bool {
    if threshold == 0.5 {
        p > 0.5
    } else {
        p >= threshold
    }
}

/// Two sorted clusters are nested or disjoint.
fn compatible(a: &[usize], b: &[usize]) -> bool {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common == 0 || common == a.len() || common == b.len()
}

/// The consensus tree of `clusters` (non-trivial clusters with their
/// marginals, any order) at `threshold` (see the module docs).
pub(crate) fn consensus(
    n: usize,
    clusters: Vec<(Vec<usize>, f64)>,
    threshold: f64,
) -> Result<SupportTree> {
    check_threshold(threshold)?;
    let mut candidates: Vec<(Vec<usize>, f64)> = clusters
        .into_iter()
        .filter(|(m, p)| in_consensus(*p, threshold) && m.len() >= 2 && m.len() < n)
        .map(|(mut m, p)| {
            m.sort_unstable();
            (m, p)
        })
        .collect();
    candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut kept: Vec<Clade> = Vec::new();
    for (members, p) in candidates {
        if kept.iter().all(|c| compatible(&c.members, &members)) {
            kept.push(Clade { members, p });
        }
    }
    SupportTree::new(n, kept)
}

/// The Binder-optimal partition of a flat posterior (see the module docs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BinderPartition {
    /// The clusters, each sorted, ordered by their smallest point.
    pub clusters: Partition,
    /// The posterior expected Binder loss of the partition.
    pub expected_loss: f64,
}

impl BinderPartition {
    /// The cluster label of every point: clusters numbered `0, 1, ...` in
    /// order of their smallest point.
    pub fn labels(&self) -> Vec<usize> {
        let n = self.clusters.iter().map(Vec::len).sum();
        let mut labels = vec![0; n];
        for (k, c) in self.clusters.iter().enumerate() {
            for &i in c {
                labels[i] = k;
            }
        }
        labels
    }
}

/// Checks the two Binder costs: finite and positive.
fn check_costs(cost_split: f64, cost_join: f64) -> Result<()> {
    for (name, c) in [("cost_split", cost_split), ("cost_join", cost_join)] {
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::parameter(format!(
                "the Binder loss's {name} must be a finite number > 0, not {c}"
            )));
        }
    }
    Ok(())
}

/// The posterior expected Binder loss of `partition` given the
/// co-clustering probabilities `p(i, j)` of `n` points: `Σ_{i<j}` of
/// `cost_join · (1 - p_ij)` for the pairs it joins and `cost_split · p_ij`
/// for those it splits. The partition must cover the points once.
pub fn binder_loss(
    marginals: &FlatMarginals,
    partition: &[Vec<usize>],
    cost_split: f64,
    cost_join: f64,
) -> Result<f64> {
    check_costs(cost_split, cost_join)?;
    let n = marginals.num_points();
    let mut label = vec![usize::MAX; n];
    for (k, c) in partition.iter().enumerate() {
        for &i in c {
            if i >= n || label[i] != usize::MAX {
                return Err(Error::parameter(format!(
                    "the partition must hold each of the {n} points once (point {i})"
                )));
            }
            label[i] = k;
        }
    }
    if let Some(i) = label.iter().position(|&l| l == usize::MAX) {
        return Err(Error::parameter(format!(
            "the partition does not hold point {i}"
        )));
    }
    let mut loss = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            let p = marginals.pairwise(i, j)?;
            loss += if label[i] == label[j] {
                cost_join * (1.0 - p)
            } else {
                cost_split * p
            };
        }
    }
    Ok(loss)
}

/// The partition minimising the posterior expected Binder loss, exactly: the
/// MAP partition of correlation clustering on `w_ij = cost_split · p_ij -
/// cost_join · (1 - p_ij)` by the flat trellis's max-plus pass (see the
/// module docs), `O(3^n)`.
///
/// # Errors
///
/// A cost that is not finite and positive, and those of the flat trellis's
/// pass (memory, cancelling).
pub fn binder_partition(
    marginals: &FlatMarginals,
    cost_split: f64,
    cost_join: f64,
    options: &Options<'_>,
) -> Result<BinderPartition> {
    check_costs(cost_split, cost_join)?;
    let n = marginals.num_points();
    let mut rows = vec![vec![0.0; n]; n];
    for (i, row) in rows.iter_mut().enumerate() {
        for (j, w) in row.iter_mut().enumerate() {
            if i != j {
                let p = marginals.pairwise(i.min(j), i.max(j))?;
                *w = cost_split * p - cost_join * (1.0 - p);
            }
        }
    }
    let weights = Weights::from_matrix(&Matrix::from_rows(rows)?)?;
    let energy = CorrelationClustering::new(&weights, 1.0)?;
    let clusters = FlatTrellis::map_only(&energy, options)?.clusters;
    let expected_loss = binder_loss(marginals, &clusters, cost_split, cost_join)?;
    Ok(BinderPartition {
        clusters,
        expected_loss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::potentials::Potentials;

    #[test]
    fn the_clade_model_runs_on_the_blocked_kernel() {
        // A table with -inf and very small entries still gives tables the
        // blocked kernel takes (separable, constant factor, in range).
        let n = 6;
        let mut log_p: Vec<f64> = (0..1usize << n).map(|s| -((s % 7) as f64) * 3.0).collect();
        log_p[0b000111] = f64::NEG_INFINITY;
        log_p[0b011000] = -1e300;
        let model = CladeCredibility::new(n, &log_p).unwrap();
        let potentials = Potentials::new(&model);
        let sep = potentials.scaled().expect("in the scaled range");
        assert!(sep.constant_factor());
    }

    #[test]
    fn support_tree_layout_and_forms() {
        let t = SupportTree::new(
            5,
            vec![
                Clade {
                    members: vec![3, 4],
                    p: 0.7,
                },
                Clade {
                    members: vec![1, 0],
                    p: 0.9,
                },
            ],
        )
        .unwrap();
        assert_eq!(t.to_string(), "[[0,1],2,[3,4]]");
        assert_eq!(t.to_newick(None), "[&R] ((0,1)0.9,2,(3,4)0.7);");
        assert!(!t.is_binary());
        assert!(t.to_binary().is_none());
        assert!(
            SupportTree::new(
                4,
                vec![
                    Clade {
                        members: vec![0, 1],
                        p: 0.6
                    },
                    Clade {
                        members: vec![1, 2],
                        p: 0.6
                    }
                ]
            )
            .is_err()
        );
        let b = SupportTree::new(
            3,
            vec![Clade {
                members: vec![1, 2],
                p: 1.0,
            }],
        )
        .unwrap();
        assert_eq!(b.to_binary().unwrap().to_string(), "[0,[1,2]]");
        assert_eq!(serde_json::to_string(&b).unwrap(), "[0,[1,2]]");
    }
}
