//! Exact inference under a person's constraints: triplets on hierarchies,
//! must-links and cannot-links on flat clusterings.
//!
//! # Triplets
//!
//! A triplet `({a, b}, c)` holds in a binary tree when `a` and `b` meet below
//! the point where `c` joins them. In the trellis recursion
//! `Z(S) = Σ ψ(L, S∖L) Z(L) Z(S∖L)` it removes the splits of every set
//! `S ⊇ {a, b, c}` that separate `a` from `b`. The same trees are removed by
//! a rule on **clusters**: a tree breaks the triplet exactly when one of its
//! clusters holds `c` and just one of `a`, `b` (the side of the separating
//! split that holds `c`; conversely such a cluster's parents hold `c` and one
//! of `a`, `b` until one also holds the other, and that parent's split
//! separates them). So [`Constrained`] gives every split with a forbidden
//! child `log ψ = -∞`: the restricted distribution is again a trellis
//! distribution, and log Z, the MAP tree, every cluster marginal, exact
//! samples and A* (a forbidden split costs `+∞`; the model's heuristic stays
//! admissible, since constraints only remove trees) carry over unchanged.
//!
//! The rule is checked once per cluster summary, `O(T)` for `T` triplets.
//! The restriction keeps a separable model separable: a forbidden cluster's
//! two terms become the infinity that the factor turns into `-∞` (`P(S) =
//! C(S) = +∞` when `f < 0`), so every split with a forbidden child or
//! parent has `log ψ = -∞` and the fast kernels run unchanged — the blocked
//! kernel's weight of such a cluster is an exact zero, its MAP key `-∞`.
//! The cost is the tabulation's larger summaries (a 128-bit mask per
//! subset); the `3^n` splits cost what they cost without triplets. A
//! general model calls `log ψ` per split as before, with two flag tests more.
//!
//! A tree may hold a set of clusters only if the clusters are allowed and
//! the triplets across them are consistent
//! ([`crate::Model::extendable`]): greedy agglomeration
//! asks before each merge, so it never reaches a dead end (clusters every
//! pair of which is forbidden to merge).
//!
//! A set of triplets that no tree satisfies (BUILD, Aho et al., fails) is
//! refused up front, naming a triplet of the conflict, rather than giving
//! `Z = 0`.
//!
//! # Must-links and cannot-links
//!
//! The flat trellis sums over clusters: a must-link pair forbids a cluster
//! holding exactly one of its points, a cannot-link pair a cluster holding
//! both. [`ConstrainedEnergy`] gives such clusters `log E = -∞`. A cannot-link
//! pair whose points the must-links join (directly or through others) is a
//! contradiction and is refused naming the chain.
//!
//! # Any number of points
//!
//! Both wrappers hold each cluster's points as a set of the crate's one set
//! abstraction ([`SetRepr`]), the rule's `Mask` type: a `u128`
//! ([`Constrained`], [`ConstrainedEnergy`], at most
//! [`MAX_CONSTRAINED_POINTS`] points), or a [`WideSet`] of `⌈n/64⌉` words
//! ([`WideConstrained`], any number). The dense trellises (at most 30
//! points) use the `u128` masks; the sparse trellises and approximate A*
//! pick the mask type with their clusters' set type, from the number of
//! points, so the wide path is the `u128` path with bigger words and gives
//! the same answers on the same input (tested). A wide mask costs one
//! allocation per merged summary, as the engines' wide clusters do.

use crate::base::set::{Points, Set, SetRepr, WideSet};
use crate::ddt::{Triplet, build};
use crate::error::{Error, Result};
use crate::models::{Cluster, Energy, Model, PairSums, Search, Separable, Summarize};

/// The most points a constrained problem on `u128` masks ([`Constrained`],
/// [`ConstrainedEnergy`]) may have; [`WideConstrained`] takes any number.
pub const MAX_CONSTRAINED_POINTS: usize = <Set as SetRepr>::MAX_POINTS;

/// A cluster's summary under constraints: the model's own, its points (as a
/// `K`: `u128` or [`WideSet`]), and whether a constraint forbids it.
#[derive(Clone, Debug)]
pub struct ConstrainedSummary<S, K = Set> {
    inner: S,
    mask: K,
    forbidden: bool,
}

fn check_size<K: SetRepr>(n: usize, what: &str) -> Result<()> {
    if n > K::MAX_POINTS {
        return Err(Error::parameter(format!(
            "{what} on {max}-bit masks apply to at most {max} points, not {n} \
             (wide masks take any number)",
            max = K::MAX_POINTS
        )));
    }
    Ok(())
}

/// Which clusters a set of constraints forbids (see the module docs).
pub trait Rule: Clone + Sync {
    /// How a cluster's points are held: `u128` (at most 128 points) or
    /// [`WideSet`].
    type Mask: SetRepr;

    /// The number of points.
    fn num_points(&self) -> usize;

    /// Whether the cluster of the points of `mask` is forbidden.
    fn forbids(&self, mask: &Self::Mask) -> bool;

    /// The rule as triplets `[a, b, c]` (a cluster holding `c` and exactly
    /// one of `a`, `b` is forbidden), when it is one: the pair form of a
    /// restricted model ([`PairSums::forbidden`](crate::models::PairSums)).
    fn triplets(&self) -> Option<Vec<[usize; 3]>> {
        None
    }
}

/// Triplets as a cluster rule: a cluster holding `c` and exactly one of
/// `a`, `b` is forbidden. Clusters are held as `K` (`u128` by default).
#[derive(Clone, Debug)]
pub struct TripletRule<K = Set> {
    n: usize,
    triplets: Vec<Triplet>,
    mask: std::marker::PhantomData<fn() -> K>,
}

impl<K: SetRepr> Rule for TripletRule<K> {
    type Mask = K;

    fn num_points(&self) -> usize {
        self.n
    }

    #[inline]
    fn forbids(&self, m: &K) -> bool {
        self.triplets
            .iter()
            .any(|t| m.contains(t.c) && (m.contains(t.a) != m.contains(t.b)))
    }

    fn triplets(&self) -> Option<Vec<[usize; 3]>> {
        Some(self.triplets.iter().map(|t| [t.a, t.b, t.c]).collect())
    }
}

/// A model (or flat energy) restricted by a [`Rule`]: the clusters the rule
/// forbids get `log ψ = -∞` as a child of any split (`log E = -∞` in a
/// partition).
#[derive(Clone, Debug)]
pub struct Restricted<M, R> {
    inner: M,
    rule: R,
}

/// A model restricted to the trees that satisfy every triplet (`u128`
/// masks: at most [`MAX_CONSTRAINED_POINTS`] points).
pub type Constrained<M> = Restricted<M, TripletRule>;

/// [`Constrained`] with [`WideSet`] masks: any number of points (the
/// sparse trellises and approximate A* beyond 128 points).
pub type WideConstrained<M> = Restricted<M, TripletRule<WideSet>>;

/// A flat energy restricted to the partitions that keep every must-link
/// pair together and every cannot-link pair apart.
pub type ConstrainedEnergy<E> = Restricted<E, PairRule>;

impl<M, R: Rule> Restricted<M, R> {
    /// The unconstrained model or energy.
    pub fn model(&self) -> &M {
        &self.inner
    }

    fn wrap<S>(&self, inner: S, mask: R::Mask) -> ConstrainedSummary<S, R::Mask> {
        ConstrainedSummary {
            forbidden: self.rule.forbids(&mask),
            inner,
            mask,
        }
    }
}

impl<M: Summarize, K: SetRepr> Restricted<M, TripletRule<K>> {
    /// `model` restricted to the trees in which every triplet holds.
    ///
    /// # Errors
    ///
    /// More points than `K` holds ([`MAX_CONSTRAINED_POINTS`] for `u128`
    /// masks); a triplet naming a point out of range or a point twice;
    /// triplets that no tree satisfies
    /// ([`ErrorKind::UnrealisableTriplets`](crate::ErrorKind::UnrealisableTriplets),
    /// naming one of the conflict).
    pub fn new(model: M, triplets: Vec<Triplet>) -> Result<Self> {
        let n = model.num_points();
        check_size::<K>(n, "triplet constraints")?;
        build(n, &triplets)?;
        Ok(Restricted {
            inner: model,
            rule: TripletRule {
                n,
                triplets,
                mask: std::marker::PhantomData,
            },
        })
    }

    /// The triplets.
    pub fn triplets(&self) -> &[Triplet] {
        &self.rule.triplets
    }
}

impl<M: Search, K: SetRepr> Restricted<M, TripletRule<K>> {
    /// Starting trees for a search under the triplets (the sparse trellis's
    /// trees, approximate A*'s initial trees): those of `trees` in which
    /// every triplet holds (a finite cost under the restriction), then the
    /// greedy tree under the triplets, which always satisfies them (greedy
    /// asks [`Model::extendable`] before each merge). So the result holds at
    /// least one tree, and only trees that satisfy the triplets.
    ///
    /// Cost: `O(T · n)` per given tree for `T` triplets, plus one greedy
    /// agglomeration.
    ///
    /// # Errors
    ///
    /// Those of greedy agglomeration (none on a model with points).
    pub fn satisfying_starts(&self, mut trees: Vec<crate::Tree>) -> Result<Vec<crate::Tree>> {
        trees.retain(|t| crate::tree_cost(self, t).is_ok_and(f64::is_finite));
        trees.push(crate::baselines::greedy(self)?.tree);
        Ok(trees)
    }
}

/// The model's cluster under its own summary.
fn inner<'a, S, K>(c: Cluster<'a, ConstrainedSummary<S, K>>) -> Cluster<'a, S> {
    Cluster {
        points: c.points,
        summary: &c.summary.inner,
    }
}

impl<M: Summarize, R: Rule> Summarize for Restricted<M, R> {
    type Summary = ConstrainedSummary<M::Summary, R::Mask>;

    fn num_points(&self) -> usize {
        self.inner.num_points()
    }

    fn leaf(&self, i: usize) -> Self::Summary {
        self.wrap(
            self.inner.leaf(i),
            R::Mask::singleton(i, self.rule.num_points()),
        )
    }

    fn merge(&self, a: Cluster<'_, Self::Summary>, b: Cluster<'_, Self::Summary>) -> Self::Summary {
        let mask = a.summary.mask.union(&b.summary.mask);
        self.wrap(self.inner.merge(inner(a), inner(b)), mask)
    }

    fn summary_heap_bytes(&self) -> u64 {
        self.inner.summary_heap_bytes()
    }

    fn summary(&self, points: Points<'_>) -> Self::Summary {
        self.wrap(
            self.inner.summary(points),
            R::Mask::from_points(points.iter(), self.rule.num_points()),
        )
    }
}

impl<M: Model, K: SetRepr> Model for Restricted<M, TripletRule<K>> {
    #[inline]
    fn log_potential(&self, p: &Self::Summary, l: &Self::Summary, r: &Self::Summary) -> f64 {
        if p.forbidden || l.forbidden || r.forbidden {
            return f64::NEG_INFINITY;
        }
        self.inner.log_potential(&p.inner, &l.inner, &r.inner)
    }

    fn log_potential_bound(&self, p: &Self::Summary, l: &Self::Summary, r: &Self::Summary) -> f64 {
        if p.forbidden || l.forbidden || r.forbidden {
            return f64::NEG_INFINITY;
        }
        self.inner.log_potential_bound(&p.inner, &l.inner, &r.inner)
    }

    /// Whether the triplets allow a tree holding every one of `clusters`
    /// (disjoint, covering the points): no cluster is forbidden, and the
    /// triplets over three different clusters, read on the clusters, are
    /// consistent (BUILD). A triplet with two points in one cluster is then
    /// settled: `a`, `b` together with `c` outside holds in every such tree,
    /// `c` with one of `a`, `b` makes the cluster forbidden, and one with
    /// all three inside is settled by the cluster's own tree (which the
    /// caller built by allowed merges). `O(T + m)` for `m` clusters plus
    /// BUILD on at most `T` triplets.
    fn extendable(&self, clusters: &[&Self::Summary]) -> bool {
        if clusters.iter().any(|c| c.forbidden) {
            return false;
        }
        let owner = |i: usize| clusters.iter().position(|c| c.mask.contains(i));
        let mut contracted = Vec::new();
        for t in &self.rule.triplets {
            let (Some(a), Some(b), Some(c)) = (owner(t.a), owner(t.b), owner(t.c)) else {
                return false;
            };
            if a != b && a != c && b != c {
                match Triplet::new(a, b, c) {
                    Ok(t) => contracted.push(t),
                    Err(_) => return false,
                }
            }
        }
        contracted.is_empty() || build(clusters.len(), &contracted).is_ok()
    }

    /// The model's separable form with both terms of a forbidden cluster
    /// set to the infinity `m` that every factor turns into `-∞`
    /// (`f(k) · m = -∞`, so `m = -∞` when every factor is positive, `+∞`
    /// when every one is negative): a split with a forbidden child or parent
    /// gets `f · (P + C + C) = -∞`, the terms of a split never being
    /// infinities of opposite signs. Factors of mixed signs, or a zero or
    /// non-finite one, have no such `m`: then no separable form.
    fn separable(&self) -> Option<Separable<'_, Self::Summary>> {
        let Separable {
            factors,
            terms,
            pairs,
        } = self.inner.separable()?;
        let used = factors.get(1..)?;
        let marker = if used.iter().all(|&f| f > 0.0 && f.is_finite()) {
            f64::NEG_INFINITY
        } else if used.iter().all(|&f| f < 0.0 && f.is_finite()) {
            f64::INFINITY
        } else {
            return None;
        };
        Some(Separable {
            factors,
            terms: Box::new(move |s: &Self::Summary| {
                if s.forbidden {
                    (marker, marker)
                } else {
                    terms(&s.inner)
                }
            }),
            // Pair sums but for the forbidden clusters, when the rule is
            // made of triplets.
            pairs: pairs
                .zip(self.rule.triplets())
                .map(|(p, triplets)| PairSums {
                    forbidden: p.forbidden.into_iter().chain(triplets).collect(),
                    forbidden_term: marker,
                    ..p
                }),
        })
    }
}

impl<M: Search, K: SetRepr> Search for Restricted<M, TripletRule<K>> {
    fn split_cost(&self, p: &Self::Summary, l: &Self::Summary, r: &Self::Summary) -> f64 {
        if l.forbidden || r.forbidden {
            return f64::INFINITY;
        }
        self.inner.split_cost(&p.inner, &l.inner, &r.inner)
    }

    fn log_potential_of_cost(&self, cost: f64) -> f64 {
        self.inner.log_potential_of_cost(cost)
    }

    fn heuristic(&self, cluster: Cluster<'_, Self::Summary>) -> f64 {
        self.inner.heuristic(inner(cluster))
    }

    fn admissible(&self) -> bool {
        self.inner.admissible()
    }

    fn without(&self, cluster: Cluster<'_, Self::Summary>, x: usize) -> Self::Summary {
        let mask = cluster.summary.mask.without(x);
        self.wrap(self.inner.without(inner(cluster), x), mask)
    }
}

/// Must-link and cannot-link pairs as a cluster rule: a cluster holding
/// exactly one point of a must-link pair, or both of a cannot-link pair, is
/// forbidden. Clusters are held as `K` (`u128` by default).
#[derive(Clone, Debug)]
pub struct PairRule<K = Set> {
    n: usize,
    must: Vec<(usize, usize)>,
    cannot: Vec<(usize, usize)>,
    mask: std::marker::PhantomData<fn() -> K>,
}

impl<K: SetRepr> Rule for PairRule<K> {
    type Mask = K;

    fn num_points(&self) -> usize {
        self.n
    }

    #[inline]
    fn forbids(&self, m: &K) -> bool {
        self.must
            .iter()
            .any(|&(i, j)| m.contains(i) != m.contains(j))
            || self
                .cannot
                .iter()
                .any(|&(i, j)| m.contains(i) && m.contains(j))
    }
}

/// Checks pairs of points `0..n` (`what`: "must-link" or "cannot-link").
fn check_pairs(n: usize, pairs: &[(usize, usize)], what: &str) -> Result<()> {
    for &(i, j) in pairs {
        if i >= n || j >= n {
            return Err(Error::parameter(format!(
                "the {what} pair ({i}, {j}) names point {} but there are only {n} points",
                i.max(j)
            )));
        }
        if i == j {
            return Err(Error::parameter(format!(
                "the {what} pair ({i}, {j}) names one point twice"
            )));
        }
    }
    Ok(())
}

/// The chain of must-links from `from` to `to` (a path in their graph), if any.
fn must_chain(n: usize, must: &[(usize, usize)], from: usize, to: usize) -> Option<Vec<usize>> {
    let mut previous = vec![usize::MAX; n];
    previous[from] = from;
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(x) = queue.pop_front() {
        if x == to {
            let mut path = vec![to];
            while *path.last().expect("not empty") != from {
                path.push(previous[*path.last().expect("not empty")]);
            }
            path.reverse();
            return Some(path);
        }
        for &(i, j) in must {
            for (u, v) in [(i, j), (j, i)] {
                if u == x && previous[v] == usize::MAX {
                    previous[v] = x;
                    queue.push_back(v);
                }
            }
        }
    }
    None
}

impl<E: Summarize, K: SetRepr> Restricted<E, PairRule<K>> {
    /// `energy` restricted to the partitions that keep every `must_link` pair
    /// in one cluster and every `cannot_link` pair in two.
    ///
    /// # Errors
    ///
    /// More points than `K` holds ([`MAX_CONSTRAINED_POINTS`] for `u128`
    /// masks); a pair naming a point out of range or one point twice; a
    /// cannot-link pair that the must-links join (the message gives the
    /// chain).
    pub fn new(
        energy: E,
        must_link: &[(usize, usize)],
        cannot_link: &[(usize, usize)],
    ) -> Result<Self> {
        let n = energy.num_points();
        check_size::<K>(n, "must-link and cannot-link constraints")?;
        check_pairs(n, must_link, "must-link")?;
        check_pairs(n, cannot_link, "cannot-link")?;
        for &(i, j) in cannot_link {
            if let Some(chain) = must_chain(n, must_link, i, j) {
                let chain: Vec<String> = chain.iter().map(usize::to_string).collect();
                return Err(Error::parameter(format!(
                    "the constraints contradict each other: cannot-link ({i}, {j}) but \
                     must-link joins them ({})",
                    chain.join(" - ")
                )));
            }
        }
        Ok(Restricted {
            inner: energy,
            rule: PairRule {
                n,
                must: must_link.to_vec(),
                cannot: cannot_link.to_vec(),
                mask: std::marker::PhantomData,
            },
        })
    }
}

impl<E: Energy, K: SetRepr> Energy for Restricted<E, PairRule<K>> {
    fn log_energy(&self, cluster: &Self::Summary) -> f64 {
        if cluster.forbidden {
            return f64::NEG_INFINITY;
        }
        self.inner.log_energy(&cluster.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hcc, Matrix, Trellis, Weights};

    /// Whether `({a, b}, c)` holds in `tree`: no cluster holds `c` and just
    /// one of `a`, `b` (checked on the tree's clusters, by brute force).
    fn holds(tree: &crate::Tree, t: &Triplet) -> bool {
        fn leaves(tree: &crate::Tree, out: &mut Vec<Vec<usize>>) -> Vec<usize> {
            let mine = match tree {
                crate::Tree::Leaf(i) => vec![*i],
                crate::Tree::Node(l, r) => {
                    let mut v = leaves(l, out);
                    v.extend(leaves(r, out));
                    v
                }
            };
            out.push(mine.clone());
            mine
        }
        let mut clusters = Vec::new();
        leaves(tree, &mut clusters);
        !clusters
            .iter()
            .any(|c| c.contains(&t.c) && (c.contains(&t.a) != c.contains(&t.b)))
    }

    /// The starts keep exactly the given trees that satisfy the triplets,
    /// in order, and end with a tree that satisfies them.
    #[test]
    fn satisfying_starts_keep_only_trees_that_satisfy() {
        use crate::Tree;
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|i| {
                (0..5)
                    .map(|j| {
                        if i == j {
                            0.0
                        } else {
                            ((i + 2 * j) % 3) as f64 - 1.0
                        }
                    })
                    .collect()
            })
            .collect();
        let rows: Vec<Vec<f64>> = (0..5)
            .map(|i| (0..5).map(|j| rows[i][j] + rows[j][i]).collect())
            .collect();
        let w = Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
        let triplets = vec![
            Triplet::new(0, 1, 2).unwrap(),
            Triplet::new(3, 4, 0).unwrap(),
        ];
        let c = Constrained::new(Hcc::new(&w, 1.0).unwrap(), triplets.clone()).unwrap();
        let leaf = Tree::Leaf;
        let good = Tree::node(
            Tree::node(Tree::node(leaf(0), leaf(1)), leaf(2)),
            Tree::node(leaf(3), leaf(4)),
        );
        let bad = Tree::node(
            Tree::node(Tree::node(leaf(0), leaf(2)), leaf(1)),
            Tree::node(leaf(3), leaf(4)),
        );
        let given = vec![bad.clone(), good.clone(), bad];
        let expected: Vec<&Tree> = given
            .iter()
            .filter(|t| triplets.iter().all(|x| holds(t, x)))
            .collect();
        let starts = c.satisfying_starts(given.clone()).unwrap();
        assert_eq!(starts.len(), expected.len() + 1);
        assert_eq!(starts[0], good);
        assert!(triplets.iter().all(|x| holds(starts.last().unwrap(), x)));
    }

    /// Triplets keep hcc on the blocked kernel (the weight pass holds the
    /// forbidden clusters' zeros), at every block width.
    #[test]
    fn triplets_keep_the_blocked_kernel() {
        for n in [5usize, 9, 13] {
            let rows: Vec<Vec<f64>> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| {
                            if i == j {
                                0.0
                            } else {
                                ((i * 7 + j * 7) % 5) as f64 / 5.0 - 0.4
                            }
                        })
                        .collect()
                })
                .collect();
            let w = Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap();
            let triplets = vec![
                Triplet::new(0, 1, 2).unwrap(),
                Triplet::new(3, 4, 0).unwrap(),
            ];
            let model = Constrained::new(Hcc::new(&w, 1.0).unwrap(), triplets).unwrap();
            let t = Trellis::new(&model).unwrap();
            assert!(t.inside().blocked_scale().is_some(), "n = {n}");
        }
    }
}
