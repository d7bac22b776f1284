//! Clade support: how sure the sampler is of each cluster of a tree.
//!
//! The sampler's current tree is one draw from the posterior; alone it does
//! not say which of its clusters (clades: the set of points below an internal
//! node) the posterior agrees on. The **support** of a clade is the fraction
//! of a window of recent sampled trees that contain it as a cluster: near 1,
//! almost every recent tree has it; near 0, the chain keeps changing it.
//!
//! [`SupportWindow`] keeps the clades of the last `capacity` trees pushed into
//! it, and a count of how many of them hold each distinct clade (clades are
//! bitsets of the points, interned once: the trees of a chain share most of
//! theirs). Pushing a tree computes its `N - 1` clades bottom-up (`O(N²/64)`
//! word operations) and updates the counts of its clades and of the tree it
//! evicts (`O(N · N/64)` to hash them); the support of a shown tree's clades is
//! one lookup each. [`clade_support`] is the same count over a slice of trees.
//!
//! [`Session`](super::Session) pushes its current tree every
//! [`SUPPORT_THIN`] chain iterations (thinning: successive states of an MH
//! chain are strongly correlated, and most proposals are rejected, so only
//! every 50th state is kept) into a window of the last [`SUPPORT_WINDOW`]
//! such samples, i.e. the last 10,000 iterations. The window restarts when
//! the constraints change (a new triplet, or an undo that removes one): the
//! trees before belong to another posterior.

use std::collections::{HashMap, VecDeque};

use crate::error::{Error, Result};

use super::tree::DdtTree;

/// Trees in a [`Session`](super::Session)'s support window.
pub const SUPPORT_WINDOW: usize = 200;

/// Chain iterations between two trees a [`Session`](super::Session) pushes into
/// its support window.
pub const SUPPORT_THIN: u64 = 50;

/// A set of points as a bitset (`N/64` words, rounded up).
type Clade = Box<[u64]>;

/// The clade of every internal node of `tree`, in pre-order of
/// [`DdtTree::topology`].
fn clades(tree: &DdtTree) -> Vec<Clade> {
    let n = tree.n;
    let words = n.div_ceil(64);
    let order = tree.preorder_internal();
    let mut bits = vec![0u64; tree.parent.len() * words];
    for i in 0..n {
        bits[i * words + i / 64] |= 1u64 << (i % 64);
    }
    // Reversed pre-order: children before parents.
    for &v in order.iter().rev() {
        let [a, b] = tree.kids[v as usize];
        for w in 0..words {
            bits[v as usize * words + w] =
                bits[a as usize * words + w] | bits[b as usize * words + w];
        }
    }
    order
        .iter()
        .map(|&v| bits[v as usize * words..][..words].into())
        .collect()
}

/// The clades of the last `capacity` trees and how many of them hold each
/// distinct clade (see the module docs).
#[derive(Clone, Debug)]
pub struct SupportWindow {
    capacity: usize,
    n: Option<usize>,
    /// Each tree's clades, as ids into `counts`.
    trees: VecDeque<Vec<u32>>,
    ids: HashMap<Clade, u32>,
    /// Per id: the clade and the trees of the window that hold it.
    counts: Vec<(Clade, u32)>,
    free: Vec<u32>,
}

impl SupportWindow {
    /// An empty window of `capacity` trees (at least 1).
    pub fn new(capacity: usize) -> SupportWindow {
        SupportWindow {
            capacity: capacity.max(1),
            n: None,
            trees: VecDeque::new(),
            ids: HashMap::new(),
            counts: Vec::new(),
            free: Vec::new(),
        }
    }

    /// How many trees the window holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many trees it holds.
    pub fn len(&self) -> usize {
        self.trees.len()
    }

    /// Whether it holds no tree.
    pub fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }

    /// Forgets every tree.
    pub fn clear(&mut self) {
        self.trees.clear();
        self.ids.clear();
        self.counts.clear();
        self.free.clear();
        self.n = None;
    }

    /// Adds a tree, evicting the oldest when the window is full.
    ///
    /// # Panics
    ///
    /// When `tree` is over another number of points than the trees before.
    pub fn push(&mut self, tree: &DdtTree) {
        assert!(
            self.n.is_none_or(|n| n == tree.n),
            "the trees of a support window are over the same points"
        );
        self.n = Some(tree.n);
        if self.trees.len() == self.capacity {
            let old = self.trees.pop_front().expect("full");
            for id in old {
                let entry = &mut self.counts[id as usize];
                entry.1 -= 1;
                if entry.1 == 0 {
                    let clade = std::mem::take(&mut entry.0);
                    self.ids.remove(&clade);
                    self.free.push(id);
                }
            }
        }
        let mut held = Vec::with_capacity(tree.n - 1);
        for c in clades(tree) {
            let id = match self.ids.get(&c) {
                Some(&id) => id,
                None => {
                    let id = match self.free.pop() {
                        Some(id) => {
                            self.counts[id as usize] = (c.clone(), 0);
                            id
                        }
                        None => {
                            self.counts.push((c.clone(), 0));
                            (self.counts.len() - 1) as u32
                        }
                    };
                    self.ids.insert(c, id);
                    id
                }
            };
            self.counts[id as usize].1 += 1;
            held.push(id);
        }
        self.trees.push_back(held);
    }

    /// The support of every internal node of `tree` in pre-order of
    /// [`DdtTree::topology`] (the order of [`DdtTree::times`]): the fraction of
    /// the window's trees that have its clade.
    ///
    /// # Errors
    ///
    /// An empty window; a tree over another number of points.
    pub fn support(&self, tree: &DdtTree) -> Result<Vec<f64>> {
        let k = self.trees.len();
        if k == 0 {
            return Err(Error::parameter(
                "clade support needs at least one tree in the window",
            ));
        }
        if self.n != Some(tree.n) {
            return Err(Error::parameter(format!(
                "the tree has {} points, the window's trees {}",
                tree.n,
                self.n.unwrap_or(0)
            )));
        }
        Ok(clades(tree)
            .iter()
            .map(|c| {
                let count = self.ids.get(c).map_or(0, |&id| self.counts[id as usize].1);
                count as f64 / k as f64
            })
            .collect())
    }
}

/// The support of every internal node of `shown` (pre-order of
/// [`DdtTree::topology`]) in `window`: the fraction of its trees that have
/// the node's clade as a cluster.
///
/// # Errors
///
/// An empty window, or trees over different numbers of points.
pub fn clade_support(window: &[DdtTree], shown: &DdtTree) -> Result<Vec<f64>> {
    let mut w = SupportWindow::new(window.len());
    for t in window {
        if t.n != shown.n {
            return Err(Error::parameter(format!(
                "a tree of the window has {} points, the shown tree {}",
                t.n, shown.n
            )));
        }
        w.push(t);
    }
    w.support(shown)
}
