//! The sparse hierarchical trellis (trellis paper §3).
//!
//! The full trellis has a vertex for every subset, `2^n` of them. A sparse
//! trellis keeps only a chosen family of clusters, typically those that occur
//! in a sample of good trees (from beam search, or from a simulator), and
//! gives every vertex as children **every** split of it into two vertices of
//! the family. It therefore realises every tree all of whose clusters are in
//! the family: usually far more trees than were put in. On it, exactly as on
//! the full trellis but over the family only:
//!
//! ```text
//! Z(V) = Σ_{(L,R) child of V} ψ(L,R) Z(L) Z(R),     M(V) = max_{(L,R)} ψ(L,R) M(L) M(R)
//! ```
//!
//! so `log Z`, the MAP tree and exact samples are those of the distribution
//! restricted to the realised trees: approximations of the full ones. The
//! number of realised trees is counted exactly, and the **sparsity index** is
//! `realised / (2n-3)!!`.
//!
//! Vertices are `u128` masks, so up to 128 points. The model is any
//! [`MergeModel`]: a vertex's summary is built by merging its leaves, and
//! every child pair costs one `log ψ` evaluation. Building costs
//! `O(|V|²/n)` mask tests (a vertex's left children share its lowest point),
//! inference `O(E)` for `E` child pairs.

use std::collections::HashMap;

use num_bigint::BigUint;
use rand::{Rng, RngExt};

use crate::base::count::num_trees;
use crate::base::scaled::LogSumExp;
use crate::base::set::full_set;
use crate::base::tree::Tree;
use crate::error::{Error, ErrorKind, Result};
use crate::models::merge::MergeModel;

pub use crate::base::set::Set;

/// Largest number of points of a sparse trellis.
pub const MAX_SPARSE_POINTS: usize = crate::base::set::MAX_SET_POINTS;

/// A sparse trellis: a family of clusters with all their splits into two
/// members of the family.
#[derive(Clone, Debug)]
pub struct SparseTrellis {
    n: usize,
    /// Vertices by increasing size (singletons first, the root last).
    vertices: Vec<Set>,
    /// For every vertex, its child pairs `(left, right)` as vertex indices,
    /// `left` holding the vertex's lowest point.
    children: Vec<Vec<(u32, u32)>>,
}

impl SparseTrellis {
    /// The trellis of the clusters of the given trees (each over all `n` points).
    pub fn from_trees<'a>(
        n: usize,
        trees: impl IntoIterator<Item = &'a Tree>,
    ) -> Result<SparseTrellis> {
        let mut clusters = Vec::new();
        for tree in trees {
            tree.validate(n, true)?;
            fn go(t: &Tree, out: &mut Vec<Set>) -> Set {
                match t {
                    Tree::Leaf(i) => 1u128 << i,
                    Tree::Node(l, r) => {
                        let c = go(l, out) | go(r, out);
                        out.push(c);
                        c
                    }
                }
            }
            go(tree, &mut clusters);
        }
        SparseTrellis::from_clusters(n, clusters)
    }

    /// The trellis of a family of clusters over `n` points (singletons and the
    /// root are always included; clusters outside the points are an error).
    pub fn from_clusters(
        n: usize,
        clusters: impl IntoIterator<Item = Set>,
    ) -> Result<SparseTrellis> {
        if n == 0 {
            return Err(Error::new(ErrorKind::Empty));
        }
        if n > MAX_SPARSE_POINTS {
            return Err(Error::parameter(format!(
                "a sparse trellis holds at most {MAX_SPARSE_POINTS} points (clusters are u128 masks); \
                 this problem has {n}"
            )));
        }
        let all = full_set(n);
        let mut vertices: Vec<Set> = (0..n).map(|i| 1u128 << i).collect();
        vertices.push(all);
        for c in clusters {
            if c == 0 || c & !all != 0 {
                return Err(Error::tree(format!(
                    "cluster {c:#b} is not a non-empty subset of the {n} points"
                )));
            }
            vertices.push(c);
        }
        vertices.sort_by_key(|c| (c.count_ones(), *c));
        vertices.dedup();
        let index: HashMap<Set, u32> = vertices
            .iter()
            .enumerate()
            .map(|(k, &c)| (c, k as u32))
            .collect();
        // Candidate left parts of V hold V's lowest point, so their own lowest
        // point is V's: group the vertices by lowest point.
        let mut by_lowest: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (k, &c) in vertices.iter().enumerate() {
            by_lowest[c.trailing_zeros() as usize].push(k as u32);
        }
        let children = vertices
            .iter()
            .map(|&v| {
                if v.count_ones() < 2 {
                    return Vec::new();
                }
                by_lowest[v.trailing_zeros() as usize]
                    .iter()
                    .filter_map(|&l| {
                        let lc = vertices[l as usize];
                        if lc != v && lc & !v == 0 {
                            index.get(&(v ^ lc)).map(|&r| (l, r))
                        } else {
                            None
                        }
                    })
                    .collect()
            })
            .collect();
        Ok(SparseTrellis {
            n,
            vertices,
            children,
        })
    }

    /// Number of points.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// Number of vertices (clusters), singletons and root included.
    pub fn num_vertices(&self) -> usize {
        self.vertices.len()
    }

    /// Number of child pairs (splits) over all vertices.
    pub fn num_splits(&self) -> usize {
        self.children.iter().map(Vec::len).sum()
    }

    /// The vertices, by increasing size.
    pub fn clusters(&self) -> &[Set] {
        &self.vertices
    }

    /// The exact number of binary trees the trellis realises (all of whose
    /// clusters are vertices).
    pub fn num_trees_realised(&self) -> BigUint {
        let mut count: Vec<BigUint> = Vec::with_capacity(self.vertices.len());
        for (v, kids) in self.vertices.iter().zip(&self.children) {
            let c = if v.count_ones() == 1 {
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

    /// The sparsity index: realised trees / `(2n-3)!!`.
    pub fn sparsity(&self) -> f64 {
        10f64.powf(log10_big(&self.num_trees_realised()) - log10_big(&num_trees(self.n)))
    }

    /// Runs the inside pass with a model: `log Z` and the MAP of every vertex.
    pub fn infer<'t, M: MergeModel>(&'t self, model: &M) -> Result<SparseInference<'t>> {
        if model.num_points() != self.n {
            return Err(Error::parameter(format!(
                "the model has {} points but the trellis {}",
                model.num_points(),
                self.n
            )));
        }
        let mut summaries: Vec<M::Cluster> = Vec::with_capacity(self.vertices.len());
        let mut log_psi: Vec<Vec<f64>> = Vec::with_capacity(self.vertices.len());
        let mut log_z = Vec::with_capacity(self.vertices.len());
        let mut map = Vec::with_capacity(self.vertices.len());
        let mut best = Vec::with_capacity(self.vertices.len());
        for (&v, kids) in self.vertices.iter().zip(&self.children) {
            if v.count_ones() == 1 {
                summaries.push(model.leaf(v.trailing_zeros() as usize));
                log_psi.push(Vec::new());
                log_z.push(0.0);
                map.push(0.0);
                best.push(None);
                continue;
            }
            let summary = match kids.first() {
                Some(&(l, r)) => model.merge(&summaries[l as usize], &summaries[r as usize]),
                None => {
                    // A vertex without children: its summary from its points.
                    let mut points = (0..self.n).filter(|&i| v >> i & 1 == 1);
                    let first = model.leaf(points.next().expect("non-empty"));
                    points.fold(first, |acc, i| model.merge(&acc, &model.leaf(i)))
                }
            };
            let mut lse = LogSumExp::new();
            let (mut best_v, mut arg) = (f64::NEG_INFINITY, None);
            let mut psis = Vec::with_capacity(kids.len());
            for (k, &(l, r)) in kids.iter().enumerate() {
                let psi = model.log_potential(&summaries[l as usize], &summaries[r as usize]);
                let psi = if psi.is_nan() { f64::NEG_INFINITY } else { psi };
                psis.push(psi);
                lse.add(psi + log_z[l as usize] + log_z[r as usize]);
                let m = psi + map[l as usize] + map[r as usize];
                if m > best_v {
                    best_v = m;
                    arg = Some(k);
                }
            }
            summaries.push(summary);
            log_psi.push(psis);
            log_z.push(lse.ln());
            map.push(best_v);
            best.push(arg);
        }
        if *log_z.last().expect("root") == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoTree));
        }
        Ok(SparseInference {
            trellis: self,
            log_psi,
            log_z,
            map,
            best,
        })
    }
}

/// `log10` of a big integer (to about 1e-15 relative).
fn log10_big(x: &BigUint) -> f64 {
    let digits = x.to_string();
    let lead: f64 = digits[..digits.len().min(17)].parse().unwrap_or(0.0);
    lead.log10() + (digits.len() - digits.len().min(17)) as f64
}

/// `log Z`, MAP and samples of a model on a [`SparseTrellis`].
#[derive(Clone, Debug)]
pub struct SparseInference<'t> {
    trellis: &'t SparseTrellis,
    log_psi: Vec<Vec<f64>>,
    log_z: Vec<f64>,
    map: Vec<f64>,
    best: Vec<Option<usize>>,
}

impl SparseInference<'_> {
    /// `log Z` over the realised trees.
    pub fn log_z(&self) -> f64 {
        *self.log_z.last().expect("root")
    }

    /// Total log-potential of the best realised tree.
    pub fn map_log_potential(&self) -> f64 {
        *self.map.last().expect("root")
    }

    /// The best realised tree.
    pub fn map_tree(&self) -> Tree {
        self.tree_at(self.log_z.len() - 1, &mut |k| {
            self.best[k].expect("a MAP split")
        })
    }

    /// An exact sample from the distribution restricted to the realised trees.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Tree {
        self.tree_at(self.log_z.len() - 1, &mut |k| {
            let u: f64 = rng.random();
            let kids = &self.trellis.children[k];
            let mut acc = 0.0;
            let mut last = 0;
            for (i, &(l, r)) in kids.iter().enumerate() {
                let w = (self.log_psi[k][i] + self.log_z[l as usize] + self.log_z[r as usize]
                    - self.log_z[k])
                    .exp();
                if w > 0.0 {
                    last = i;
                }
                acc += w;
                if acc > u && w > 0.0 {
                    return i;
                }
            }
            last
        })
    }

    /// `k` samples, reproducible from `seed` (xoshiro256++).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Tree> {
        use rand::SeedableRng;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..k).map(|_| self.sample(&mut rng)).collect()
    }

    /// The tree below vertex `k`, choosing each split with `choose(vertex, _)`.
    fn tree_at(&self, k: usize, choose: &mut dyn FnMut(usize) -> usize) -> Tree {
        let v = self.trellis.vertices[k];
        if v.count_ones() == 1 {
            return Tree::Leaf(v.trailing_zeros() as usize);
        }
        let (l, r) = self.trellis.children[k][choose(k)];
        let left = self.tree_at(l as usize, choose);
        let right = self.tree_at(r as usize, choose);
        Tree::node(left, right)
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
}
