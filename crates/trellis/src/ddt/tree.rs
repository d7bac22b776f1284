//! The sampler's tree: an arena of `2N - 1` nodes with divergence times.
//!
//! Leaves are nodes `0..N` (the points), internal nodes `N..2N-1`. Each node
//! stores its parent, its two children, its leaf count and `1 - t` together with
//! `ln(1 - t)` (leaves sit at `t = 1`): keeping `1 - t` rather than `t` keeps the
//! short branches near the leaves exact. An SPR move relinks `O(1)` nodes and
//! updates the leaf counts of their ancestors.
//!
//! Every walk over the tree (building it from a [`Tree`], reading its
//! topology, times and Newick form) uses an explicit stack: a caterpillar over
//! all the points is as deep as there are points.

use crate::base::tree::Tree;
use crate::error::{Error, Result};

use super::triplets::{LcaDepths, Triplet};

/// No node (the parent of the top node).
pub(crate) const NONE: u32 = u32::MAX;

/// A binary tree over points `0..N` with a divergence time in `(0, 1)` at every
/// internal node, increasing from the top node down.
#[derive(Clone, Debug, PartialEq)]
pub struct DdtTree {
    pub(crate) n: usize,
    pub(crate) parent: Vec<u32>,
    pub(crate) kids: Vec<[u32; 2]>,
    pub(crate) count: Vec<u32>,
    pub(crate) om: Vec<f64>,
    pub(crate) lom: Vec<f64>,
    pub(crate) top: u32,
}

impl DdtTree {
    /// A tree with the topology of `tree` (leaves `0..N`, each once) and the given
    /// divergence times of its internal nodes, listed in pre-order (parent before
    /// children, left before right).
    ///
    /// # Errors
    ///
    /// A tree that is not over `0..N`, fewer than 2 leaves, the wrong number of
    /// times, or times that are not in `(0, 1)` and increasing downwards.
    pub fn new(tree: &Tree, times: &[f64]) -> Result<DdtTree> {
        let om: Vec<f64> = times.iter().map(|t| 1.0 - t).collect();
        DdtTree::with_one_minus_times(tree, &om)
    }

    /// As [`DdtTree::new`] with `1 - t` given instead of `t` (exact for times close to 1).
    ///
    /// # Errors
    ///
    /// As [`DdtTree::new`].
    pub fn with_one_minus_times(tree: &Tree, one_minus_times: &[f64]) -> Result<DdtTree> {
        let times = one_minus_times;
        let n = tree.num_leaves();
        if n < 2 {
            return Err(Error::tree("a DDT tree needs at least 2 leaves"));
        }
        tree.validate(n, true)?;
        if times.len() != n - 1 {
            return Err(Error::tree(format!(
                "{} times for {} internal nodes",
                times.len(),
                n - 1
            )));
        }
        let mut t = DdtTree::empty(n);
        let mut next = n;
        let mut k = 0;
        let top = t.build(tree, &mut next, &mut |_| {
            let v = times[k];
            k += 1;
            v
        });
        t.top = top;
        t.parent[top as usize] = NONE;
        for v in n..2 * n - 1 {
            let up = match t.parent[v] {
                NONE => 1.0,
                p => t.om[p as usize],
            };
            if !(t.om[v] > 0.0 && t.om[v] < up) {
                return Err(Error::tree(format!(
                    "divergence times must lie in (0, 1) and increase from parent to child, \
                     got t = {} below t = {}",
                    1.0 - t.om[v],
                    1.0 - up
                )));
            }
        }
        Ok(t)
    }

    /// A tree with the topology of `tree` and times `t = 1 - 2^-(depth+1)` (the top
    /// node at 1/2, its children at 3/4, ...).
    ///
    /// # Errors
    ///
    /// A tree that is not over `0..N` or has fewer than 2 leaves.
    pub fn with_depth_times(tree: &Tree) -> Result<DdtTree> {
        let n = tree.num_leaves();
        if n < 2 {
            return Err(Error::tree("a DDT tree needs at least 2 leaves"));
        }
        tree.validate(n, true)?;
        let mut t = DdtTree::empty(n);
        let mut next = n;
        let top = t.build(tree, &mut next, &mut |_| f64::NAN);
        t.top = top;
        t.parent[top as usize] = NONE;
        t.set_depth_times(top, 1.0);
        Ok(t)
    }

    pub(crate) fn empty(n: usize) -> DdtTree {
        let m = 2 * n - 1;
        let mut count = vec![0; m];
        count[..n].fill(1);
        let mut om = vec![0.0; m];
        let mut lom = vec![f64::NEG_INFINITY; m];
        for v in n..m {
            om[v] = 0.5;
            lom[v] = 0.5f64.ln();
        }
        DdtTree {
            n,
            parent: vec![NONE; m],
            kids: vec![[NONE, NONE]; m],
            count,
            om,
            lom,
            top: NONE,
        }
    }

    /// Lays out `tree` below a new node id, pre-order ids (reading `om` of
    /// each internal node in pre-order); returns the node. Iterative: any depth.
    fn build(&mut self, tree: &Tree, next: &mut usize, om: &mut dyn FnMut(usize) -> f64) -> u32 {
        // (subtree, its parent and side); the internal nodes in pre-order.
        let mut stack: Vec<(&Tree, Option<(usize, usize)>)> = vec![(tree, None)];
        let mut internal = Vec::new();
        let mut top = 0;
        while let Some((t, up)) = stack.pop() {
            let v = match t {
                Tree::Leaf(i) => *i,
                Tree::Node(l, r) => {
                    let v = *next;
                    *next += 1;
                    self.om[v] = om(v);
                    self.lom[v] = self.om[v].ln();
                    internal.push(v);
                    stack.push((r, Some((v, 1))));
                    stack.push((l, Some((v, 0))));
                    v
                }
            };
            match up {
                Some((p, side)) => {
                    self.kids[p][side] = v as u32;
                    self.parent[v] = p as u32;
                }
                None => top = v,
            }
        }
        // Pre-order numbers children after their parent: counts bottom-up.
        for &v in internal.iter().rev() {
            let [a, b] = self.kids[v];
            self.count[v] = self.count[a as usize] + self.count[b as usize];
        }
        top as u32
    }

    /// Sets `1 - t` of the internal nodes below `v` (inclusive) by halving from
    /// `om_parent`.
    pub(crate) fn set_depth_times(&mut self, v: u32, om_parent: f64) {
        let mut stack = vec![(v, om_parent)];
        while let Some((v, up)) = stack.pop() {
            if (v as usize) < self.n {
                continue;
            }
            let om = up / 2.0;
            self.om[v as usize] = om;
            self.lom[v as usize] = om.ln();
            for k in self.kids[v as usize] {
                stack.push((k, om));
            }
        }
    }

    /// Number of leaves (points).
    pub fn num_leaves(&self) -> usize {
        self.n
    }

    /// The topology, canonical (the child with the smaller point first).
    pub fn topology(&self) -> Tree {
        self.subtree(self.top).canonical()
    }

    /// The topology below node `v`. Iterative: any depth.
    pub(crate) fn subtree(&self, v: u32) -> Tree {
        let mut done: Vec<Tree> = Vec::new();
        let mut stack = vec![(v, false)];
        while let Some((v, expanded)) = stack.pop() {
            if (v as usize) < self.n {
                done.push(Tree::Leaf(v as usize));
                continue;
            }
            if !expanded {
                let [a, b] = self.kids[v as usize];
                stack.push((v, true));
                stack.push((b, false));
                stack.push((a, false));
            } else {
                let r = done.pop().expect("post-order: right child first");
                let l = done.pop().expect("post-order: left child first");
                done.push(Tree::node(l, r));
            }
        }
        done.pop().expect("a subtree")
    }

    /// The divergence times of the internal nodes in pre-order of [`DdtTree::topology`]
    /// (the order [`DdtTree::new`] takes).
    pub fn times(&self) -> Vec<f64> {
        self.preorder_internal()
            .iter()
            .map(|&v| 1.0 - self.om[v as usize])
            .collect()
    }

    /// The internal nodes (arena indices) in pre-order of [`DdtTree::topology`]:
    /// parent before children, the child holding the smaller point first.
    pub(crate) fn preorder_internal(&self) -> Vec<u32> {
        // The smallest leaf below every node, bottom-up; then a pre-order
        // walk with the child holding the smaller leaf first.
        let mut min_leaf: Vec<u32> = (0..self.parent.len() as u32).collect();
        let mut order = Vec::with_capacity(self.n.saturating_sub(1));
        let mut stack = vec![self.top];
        while let Some(v) = stack.pop() {
            if (v as usize) >= self.n {
                order.push(v);
                stack.extend(self.kids[v as usize]);
            }
        }
        for &v in order.iter().rev() {
            let [a, b] = self.kids[v as usize];
            min_leaf[v as usize] = min_leaf[a as usize].min(min_leaf[b as usize]);
        }
        let mut out = Vec::with_capacity(self.n.saturating_sub(1));
        let mut stack = vec![self.top];
        while let Some(v) = stack.pop() {
            if (v as usize) < self.n {
                continue;
            }
            out.push(v);
            let [a, b] = self.kids[v as usize];
            let (a, b) = if min_leaf[a as usize] <= min_leaf[b as usize] {
                (a, b)
            } else {
                (b, a)
            };
            stack.push(b);
            stack.push(a);
        }
        out
    }

    /// The leaves below node `v`.
    pub(crate) fn leaves_below(&self, v: u32, out: &mut Vec<u32>) {
        out.clear();
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            if (v as usize) < self.n {
                out.push(v);
            } else {
                stack.extend(self.kids[v as usize]);
            }
        }
    }

    /// The lowest common ancestor of two nodes.
    pub(crate) fn lca(&self, a: u32, b: u32) -> u32 {
        let mut anc = Vec::new();
        let mut x = a;
        while x != NONE {
            anc.push(x);
            x = self.parent[x as usize];
        }
        let mut y = b;
        while !anc.contains(&y) {
            y = self.parent[y as usize];
        }
        y
    }

    /// The depths of the lowest common ancestors of every pair of leaves
    /// (to compare with a target hierarchy, see
    /// [`triplet_distance`](super::triplet_distance)).
    pub fn lca_depths(&self) -> LcaDepths {
        let n = self.n;
        let children: Vec<Vec<usize>> = (0..self.parent.len())
            .map(|v| {
                if v < n {
                    Vec::new()
                } else {
                    self.kids[v].iter().map(|&k| k as usize).collect()
                }
            })
            .collect();
        let leaf_of: Vec<Option<usize>> = (0..self.parent.len())
            .map(|v| (v < n).then_some(v))
            .collect();
        LcaDepths::from_children(n, &children, &leaf_of, self.top as usize)
    }

    /// Whether the tree satisfies the triplet `({a, b}, c)`: the lowest common
    /// ancestor of `a` and `b` lies strictly below that of `a`, `b` and `c`.
    pub fn satisfies(&self, t: &Triplet) -> bool {
        let ab = self.lca(t.a as u32, t.b as u32);
        self.lca(ab, t.c as u32) != ab
    }

    /// Newick with the given leaf names and branch lengths in time units (the top
    /// node's branch is the stem from `t = 0`). Iterative: any depth.
    pub fn to_newick(&self, names: &[String]) -> String {
        self.newick(names, None)
    }

    /// As [`DdtTree::to_newick`], with every internal node labelled by its
    /// support (`support` in pre-order of [`DdtTree::topology`], as
    /// [`clade_support`](super::clade_support) gives it), three decimals:
    /// `(a:0.1,b:0.1)0.850:0.2`.
    ///
    /// # Panics
    ///
    /// When `support` does not have one value per internal node.
    pub fn to_newick_with_support(&self, names: &[String], support: &[f64]) -> String {
        assert_eq!(support.len(), self.n - 1, "one support per internal node");
        let mut by_node = vec![f64::NAN; self.parent.len()];
        for (&v, &s) in self.preorder_internal().iter().zip(support) {
            by_node[v as usize] = s;
        }
        self.newick(names, Some(&by_node))
    }

    fn newick(&self, names: &[String], labels: Option<&[f64]>) -> String {
        enum Token {
            Node(u32),
            Comma,
            /// The closing parenthesis of a node and its branch length.
            Close(u32),
        }
        let branch = |v: u32| {
            let up = match self.parent[v as usize] {
                NONE => 1.0,
                p => self.om[p as usize],
            };
            format!(":{}", fmt_len(up - self.om[v as usize]))
        };
        let mut s = String::new();
        let mut stack = vec![Token::Node(self.top)];
        while let Some(token) = stack.pop() {
            match token {
                Token::Node(v) if (v as usize) < self.n => {
                    s.push_str(&quote(&names[v as usize]));
                    s.push_str(&branch(v));
                }
                Token::Node(v) => {
                    let [a, b] = self.kids[v as usize];
                    s.push('(');
                    stack.push(Token::Close(v));
                    stack.push(Token::Node(b));
                    stack.push(Token::Comma);
                    stack.push(Token::Node(a));
                }
                Token::Comma => s.push(','),
                Token::Close(v) => {
                    s.push(')');
                    if let Some(l) = labels {
                        s.push_str(&format!("{:.3}", l[v as usize]));
                    }
                    s.push_str(&branch(v));
                }
            }
        }
        s.push(';');
        s
    }

    /// Checks the internal invariants (links, counts, time order). For tests.
    #[doc(hidden)]
    pub fn check(&self) -> std::result::Result<(), String> {
        let m = self.parent.len();
        if self.parent[self.top as usize] != NONE {
            return Err("the top node has a parent".into());
        }
        let mut seen = 0;
        let mut stack = vec![self.top];
        while let Some(v) = stack.pop() {
            seen += 1;
            let vu = v as usize;
            if vu < self.n {
                if self.count[vu] != 1 {
                    return Err(format!("leaf {v} has count {}", self.count[vu]));
                }
                continue;
            }
            let [a, b] = self.kids[vu];
            for k in [a, b] {
                if self.parent[k as usize] != v {
                    return Err(format!("node {k} does not point to its parent {v}"));
                }
                if self.om[k as usize] >= self.om[vu] {
                    return Err(format!("node {k} is not later than its parent {v}"));
                }
                stack.push(k);
            }
            if self.count[vu] != self.count[a as usize] + self.count[b as usize] {
                return Err(format!("wrong count at node {v}"));
            }
            if !(self.om[vu] > 0.0 && self.om[vu] < 1.0) {
                return Err(format!("time of node {v} outside (0, 1)"));
            }
            if (self.lom[vu] - self.om[vu].ln()).abs() > 1e-9 {
                return Err(format!("stale ln(1 - t) at node {v}"));
            }
        }
        if seen != m {
            return Err(format!("{seen} nodes reachable of {m}"));
        }
        Ok(())
    }
}

/// A Newick label, quoted when it holds characters Newick reserves.
pub(crate) fn quote(name: &str) -> String {
    if name
        .chars()
        .any(|c| matches!(c, '(' | ')' | ',' | ':' | ';' | '\'' | '[' | ']') || c.is_whitespace())
    {
        format!("'{}'", name.replace('\'', "''"))
    } else {
        name.to_string()
    }
}

fn fmt_len(x: f64) -> String {
    let s = format!("{x:.6e}");
    // Shorter plain form when it is exact enough.
    let plain = format!("{x:.6}");
    if x >= 1e-3 { plain } else { s }
}
