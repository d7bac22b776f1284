//! The partitions that cut one hierarchy: the tree-structured sparse flat
//! trellis (flat paper §4, Appendix J).
//!
//! A hierarchy's internal nodes and leaves are the vertices; a partition is
//! consistent with the hierarchy when each of its clusters is a node (a
//! "cut" of the tree). Bottom-up over the nodes,
//!
//! ```text
//! Z(v) = E(v) + Z(left) · Z(right),   M(v) = max(E(v), M(left) · M(right)),   Z(leaf) = E(leaf),
//! ```
//!
//! so `log Z`, the MAP cut and exact samples (keep `v` whole with
//! probability `E(v) / Z(v)`, else cut it and recurse) cost `O(n)` after the
//! nodes' summaries are merged bottom-up. As in the flat trellis, `Z(v)` is
//! kept as its MAP value and a relative part, so that the probabilities of
//! the sampler are exact at any temperature.

use num_bigint::BigUint;
use rand::{Rng, RngExt};

use crate::base::scaled::RelativeSum;
use crate::base::set::Points;
use crate::base::tree::Tree;
use crate::error::{Error, ErrorKind, Result};
use crate::flat::{Partition, ScoredPartition};
use crate::models::{Cluster, Energy};

/// One node of the tree, children before parents.
#[derive(Clone, Debug)]
struct Node {
    points: Vec<usize>,
    children: Option<(usize, usize)>,
    log_energy: f64,
    /// `log Z(v) - map`.
    rel: f64,
    map: f64,
}

impl Node {
    fn log_z(&self) -> f64 {
        self.map + self.rel
    }
}

/// The distribution over the partitions that cut a hierarchy.
#[derive(Clone, Debug)]
pub struct TreeCuts {
    nodes: Vec<Node>,
    map: ScoredPartition,
}

/// The partitions consistent with `tree` (a hierarchy over all the points of
/// `energy`): their `log Z`, MAP partition and samples.
pub fn tree_partitions<E: Energy + ?Sized>(energy: &E, tree: &Tree) -> Result<TreeCuts> {
    tree.validate(energy.num_points(), true)?;
    let mut nodes = Vec::new();
    build(energy, tree, &mut nodes);
    if let Some(v) = nodes
        .iter()
        .find(|v| v.log_energy.is_nan() || v.log_energy == f64::INFINITY)
    {
        return Err(Error::new(ErrorKind::BadPotential {
            detail: format!("log E of cluster {:?} is {}", v.points, v.log_energy),
        }));
    }
    let root = nodes.len() - 1;
    let z = nodes[root].log_z();
    if z.is_nan() || z == f64::INFINITY {
        return Err(Error::new(ErrorKind::BadPotential {
            detail: "the log-energy of some partition overflows".into(),
        }));
    }
    if z == f64::NEG_INFINITY {
        return Err(Error::new(ErrorKind::NoPartition));
    }
    let mut clusters = Vec::new();
    map_cut(&nodes, root, &mut clusters);
    clusters.sort();
    let log_energy = nodes[root].map;
    Ok(TreeCuts {
        nodes,
        map: ScoredPartition {
            clusters,
            log_energy,
        },
    })
}

/// Appends the nodes of `tree`, children first (post-order, so the root is
/// last). Iterative: any depth.
fn build<E: Energy + ?Sized>(energy: &E, tree: &Tree, nodes: &mut Vec<Node>) {
    // The node index and summary of every subtree done, awaiting its parent.
    let mut done: Vec<(usize, E::Summary)> = Vec::new();
    for t in tree.post_order() {
        let (points, summary, children) = match t {
            Tree::Leaf(i) => (vec![*i], energy.leaf(*i), None),
            Tree::Node(..) => {
                let (ri, rs) = done.pop().expect("post-order: right child first");
                let (li, ls) = done.pop().expect("post-order: left child first");
                let summary = energy.merge(
                    Cluster {
                        points: Points::List(&nodes[li].points),
                        summary: &ls,
                    },
                    Cluster {
                        points: Points::List(&nodes[ri].points),
                        summary: &rs,
                    },
                );
                let mut points = nodes[li].points.clone();
                points.extend_from_slice(&nodes[ri].points);
                points.sort_unstable();
                (points, summary, Some((li, ri)))
            }
        };
        let own = energy.log_energy(&summary);
        let (rel, map) = match children {
            None => (0.0, own),
            Some((l, r)) => {
                let mut sum = RelativeSum::new();
                sum.add(own, 0.0);
                sum.add(nodes[l].map + nodes[r].map, nodes[l].rel + nodes[r].rel);
                (sum.rel(), own.max(nodes[l].map + nodes[r].map))
            }
        };
        nodes.push(Node {
            points,
            children,
            log_energy: own,
            rel,
            map,
        });
        done.push((nodes.len() - 1, summary));
    }
}

/// The clusters of the MAP cut below node `v`. Iterative: any depth.
fn map_cut(nodes: &[Node], v: usize, out: &mut Partition) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let node = &nodes[v];
        match node.children {
            Some((l, r)) if node.log_energy < nodes[l].map + nodes[r].map => {
                stack.push(r);
                stack.push(l);
            }
            _ => out.push(node.points.clone()),
        }
    }
}

impl TreeCuts {
    /// `log Z` over the cuts of the tree.
    pub fn log_z(&self) -> f64 {
        self.nodes.last().expect("a root").log_z()
    }

    /// The best cut with its log-energy.
    pub fn map(&self) -> &ScoredPartition {
        &self.map
    }

    /// Number of partitions that cut the tree, exactly, by the recursion
    /// `C(v) = 1 + C(l)·C(r)`, `C(leaf) = 1` (it may be huge: a balanced
    /// tree of 1,024 leaves has about 10^181).
    pub fn num_partitions(&self) -> BigUint {
        let mut c: Vec<BigUint> = Vec::with_capacity(self.nodes.len());
        for v in &self.nodes {
            let x = match v.children {
                None => BigUint::from(1u32),
                Some((l, r)) => &c[l] * &c[r] + 1u32,
            };
            c.push(x);
        }
        c.pop().expect("a root")
    }

    /// One exact sample of a cut.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Partition {
        let mut out = Vec::new();
        let mut stack = vec![self.nodes.len() - 1];
        while let Some(v) = stack.pop() {
            let node = &self.nodes[v];
            match node.children {
                Some((l, r)) => {
                    let u: f64 = rng.random();
                    // P(keep v whole) = E(v) / Z(v), relative to the MAP value.
                    let keep = if node.log_energy == f64::NEG_INFINITY {
                        0.0
                    } else {
                        ((node.log_energy - node.map) - node.rel).min(0.0).exp()
                    };
                    if u < keep {
                        out.push(node.points.clone());
                    } else {
                        stack.push(r);
                        stack.push(l);
                    }
                }
                None => out.push(node.points.clone()),
            }
        }
        out.sort();
        out
    }

    /// `k` exact samples, reproducible from `seed` (see [`crate::random`]).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Partition> {
        let mut rng = crate::random::rng(seed);
        (0..k).map(|_| self.sample(&mut rng)).collect()
    }
}
