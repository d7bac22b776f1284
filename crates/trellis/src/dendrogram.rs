//! Dendrograms: a hierarchy with a height at every merge, and the formats
//! other tools read (SciPy's linkage matrix and Newick with names, branch
//! lengths and support values).
//!
//! The methods of this crate find trees scored by a model, not by a distance,
//! so a tree has no heights of its own. [`Dendrogram`] attaches them:
//!
//! - [`Dendrogram::by_cost`]: the cumulative cost of the subtree (the sum of
//!   [`Search::split_cost`] over its splits). For costs `>= 0` (hierarchical
//!   correlation clustering, Dasgupta) it grows from the leaves to the root, so
//!   a well-separated group merges low and the expensive splits sit high.
//! - [`Dendrogram::by_rank`]: `1 +` the larger child's rank (leaves 0), the
//!   number of merges on the longest path down.
//! - [`Dendrogram::new`]: any heights, e.g. the divergence times of a
//!   Dirichlet diffusion tree.
//!
//! Heights are always made **monotone**: a node is at least as high as its
//! children (leaves at 0), by taking the maximum up the tree. Costs that can
//! be negative (a jet's negative log-likelihood) are thereby kept as they are
//! where they already rise and flattened where they would fall.
//!
//! # SciPy's linkage matrix
//!
//! [`Dendrogram::linkage`] gives the `(n - 1) x 4` rows `[a, b, height,
//! size]` that `scipy.cluster.hierarchy` consumes: ids below `n` are points,
//! row `i` creates cluster `n + i`, children come before their parents and
//! the heights are non-decreasing (rows sorted by height; ties keep the tree's
//! post-order, which puts children first). [`Dendrogram::from_linkage`] reads
//! such a matrix back, checking every rule. A dendrogram made by
//! [`Dendrogram::from_scipy`] (as [`linkage_dendrogram`](crate::baselines::linkage_dendrogram)
//! makes them) keeps the matrix it was made from and gives it back as it is:
//! SciPy's order of rows and of ties, and the decreasing heights (inversions)
//! of centroid and median linkage.
//!
//! # Newick
//!
//! [`Dendrogram::to_newick`] writes `[&R] ((a:0.5,b:0.5)0.93:1.5,c:2);` with
//! [`Newick`] options: leaf names (quoted as [`newick_label`] says; point
//! indices without names), branch lengths (parent height − child height), the support of
//! each internal node below the root as its label (the phylogenetics
//! convention for posterior or bootstrap support), and the rooted-tree mark.
//!
//! Every operation is `O(n log n)` and iterative (any depth).

use crate::base::tree::{Tree, newick_label};
use crate::error::{Error, Result};
use crate::models::Search;
use std::fmt::Write;

/// A binary hierarchy with a height at each internal node.
#[derive(Clone, Debug, PartialEq)]
pub struct Dendrogram {
    tree: Tree,
    /// The height of each internal node, in the tree's post-order.
    heights: Vec<f64>,
    /// The SciPy linkage matrix it was made from by
    /// [`Dendrogram::from_scipy`], given back as it is.
    scipy: Option<Vec<[f64; 4]>>,
}

/// What [`Dendrogram::to_newick`] writes besides the shape.
#[derive(Clone, Copy, Debug)]
pub struct Newick<'a> {
    /// Leaf labels, one per point (indexed by point); point indices when `None`.
    pub names: Option<&'a [String]>,
    /// Write branch lengths (`:length`, the parent's height minus the child's).
    pub lengths: bool,
    /// The support of each internal node, in the tree's post-order (as
    /// [`Dendrogram::clusters`]); written as the label of every internal node
    /// but the root.
    pub support: Option<&'a [f64]>,
    /// Start with the rooted-tree mark `[&R] `.
    pub rooted: bool,
}

impl Default for Newick<'_> {
    /// Lengths and the rooted mark, no names, no support.
    fn default() -> Self {
        Newick {
            names: None,
            lengths: true,
            support: None,
            rooted: true,
        }
    }
}

/// Number of internal nodes of a tree.
fn num_internal(tree: &Tree) -> usize {
    tree.post_order()
        .filter(|t| matches!(t, Tree::Node(..)))
        .count()
}

impl Dendrogram {
    /// A dendrogram with the given heights of the internal nodes, in the
    /// tree's post-order (children before parents, left before right). The
    /// heights must be finite; they are made monotone (see the module docs).
    pub fn new(tree: Tree, heights: Vec<f64>) -> Result<Dendrogram> {
        let internal = num_internal(&tree);
        if heights.len() != internal {
            return Err(Error::tree(format!(
                "{} heights were given for a tree with {internal} internal nodes",
                heights.len()
            )));
        }
        if let Some(h) = heights.iter().find(|h| !h.is_finite()) {
            return Err(Error::tree(format!(
                "a merge height must be a finite number, not {h}"
            )));
        }
        let mut monotone = Vec::with_capacity(internal);
        let mut next = heights.into_iter();
        tree.fold(
            |_| 0.0f64,
            |l, r| {
                let h = next.next().expect("one height per internal node");
                let h = h.max(l).max(r);
                monotone.push(h);
                h
            },
        );
        Ok(Dendrogram {
            tree,
            heights: monotone,
            scipy: None,
        })
    }

    /// Heights by rank: leaves 0, a node `1 +` its larger child's rank.
    pub fn by_rank(tree: Tree) -> Dendrogram {
        let mut heights = Vec::new();
        tree.fold(
            |_| 0.0f64,
            |l, r| {
                let h = 1.0 + l.max(r);
                heights.push(h);
                h
            },
        );
        Dendrogram {
            tree,
            heights,
            scipy: None,
        }
    }

    /// Heights by cost: the total [`Search::split_cost`] of each subtree
    /// (made monotone). The tree's leaves must be points of the model.
    pub fn by_cost<M: Search + ?Sized>(model: &M, tree: Tree) -> Result<Dendrogram> {
        let costs = crate::models::tree_split_costs(model, &tree)?;
        // Cumulative: a node's cost plus its children's cumulative costs.
        let mut heights = Vec::with_capacity(costs.len());
        let mut next = costs.into_iter();
        tree.fold(
            |_| 0.0f64,
            |l, r| {
                let c = l + r + next.next().expect("one cost per internal node");
                heights.push(c);
                c
            },
        );
        if heights.iter().any(|h| !h.is_finite()) {
            return Err(Error::tree(
                "the tree's cost is not finite, so it gives no merge heights",
            ));
        }
        Dendrogram::new(tree, heights)
    }

    /// The same dendrogram with its tree in canonical form
    /// ([`Tree::canonical`]): each cluster keeps its height.
    pub fn canonical(self) -> Dendrogram {
        // A cluster of a hierarchy is identified by its smallest point and size.
        let mut height_of = std::collections::HashMap::with_capacity(self.heights.len());
        let mut next = self.heights.iter();
        self.tree.fold(
            |i| (i, 1usize),
            |(lm, ls), (rm, rs)| {
                let key = (lm.min(rm), ls + rs);
                height_of.insert(key, *next.next().expect("one height per internal node"));
                key
            },
        );
        let tree = self.tree.canonical();
        let mut heights = Vec::with_capacity(height_of.len());
        tree.fold(
            |i| (i, 1usize),
            |(lm, ls), (rm, rs)| {
                let key = (lm.min(rm), ls + rs);
                heights.push(height_of[&key]);
                key
            },
        );
        Dendrogram {
            tree,
            heights,
            scipy: self.scipy,
        }
    }

    /// The tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The tree, without the heights.
    pub fn into_tree(self) -> Tree {
        self.tree
    }

    /// The height of each internal node, in the tree's post-order.
    pub fn heights(&self) -> &[f64] {
        &self.heights
    }

    /// The points under each internal node (sorted), in the tree's
    /// post-order: the order of [`Dendrogram::heights`] and of
    /// [`Newick::support`].
    pub fn clusters(&self) -> Vec<Vec<usize>> {
        let mut out = Vec::with_capacity(self.heights.len());
        self.tree.fold(
            |i| vec![i],
            |mut l, r| {
                l.extend(r);
                l.sort_unstable();
                out.push(l.clone());
                l
            },
        );
        out
    }

    /// The SciPy linkage matrix (see the module docs), or for a dendrogram
    /// made by [`Dendrogram::from_scipy`], the matrix it was made from. The
    /// tree must cover the points `0..n` exactly, as every hierarchy this
    /// crate returns does.
    pub fn linkage(&self) -> Result<Vec<[f64; 4]>> {
        if let Some(rows) = &self.scipy {
            return Ok(rows.clone());
        }
        let n = self.tree.num_leaves();
        self.tree.validate(n, true)?;
        // Post-order ids of the internal nodes with their children (as
        // point ids or `n + post-order index`) and sizes.
        enum Child {
            Point(usize),
            Node(usize),
        }
        let mut nodes: Vec<(Child, Child, usize)> = Vec::with_capacity(n.saturating_sub(1));
        self.tree.fold(
            |i| (Child::Point(i), 1usize),
            |(l, ls), (r, rs)| {
                nodes.push((l, r, ls + rs));
                (Child::Node(nodes.len() - 1), ls + rs)
            },
        );
        // Rows by height; ties keep post-order (children first).
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_by(|&a, &b| self.heights[a].total_cmp(&self.heights[b]).then(a.cmp(&b)));
        let mut row_of = vec![0usize; nodes.len()];
        for (row, &k) in order.iter().enumerate() {
            row_of[k] = row;
        }
        let id = |c: &Child| match *c {
            Child::Point(i) => i,
            Child::Node(k) => n + row_of[k],
        };
        Ok(order
            .iter()
            .map(|&k| {
                let (l, r, size) = &nodes[k];
                let (a, b) = (id(l), id(r));
                [
                    a.min(b) as f64,
                    a.max(b) as f64,
                    self.heights[k],
                    *size as f64,
                ]
            })
            .collect())
    }

    /// Reads a SciPy linkage matrix (`n - 1` rows over `n` points): ids
    /// must be whole numbers below `n + row`, each used once, sizes must
    /// match, heights finite and `>= 0`. Heights are kept as given (made
    /// monotone, see the module docs).
    pub fn from_linkage(rows: &[[f64; 4]]) -> Result<Dendrogram> {
        if rows.is_empty() {
            return Err(Error::tree(
                "a linkage matrix needs at least one row (two points)",
            ));
        }
        let n = rows.len() + 1;
        let mut built: Vec<Option<(Tree, f64, usize)>> = Vec::with_capacity(n - 1);
        let mut point_used = vec![false; n];
        // Heights in the post-order of the tree being built: collected per
        // row, then re-ordered after the tree is complete.
        for (row, r) in rows.iter().enumerate() {
            let mut take = |x: f64| -> Result<(Tree, f64, usize)> {
                let limit = n + row;
                if !(x >= 0.0 && x.fract() == 0.0 && x < limit as f64) {
                    return Err(Error::tree(format!(
                        "linkage row {row}: {x} is not a cluster id (a whole number below {limit})"
                    )));
                }
                let id = x as usize;
                if id < n {
                    if std::mem::replace(&mut point_used[id], true) {
                        return Err(Error::tree(format!(
                            "linkage row {row}: point {id} is merged twice"
                        )));
                    }
                    Ok((Tree::Leaf(id), 0.0, 1))
                } else {
                    built[id - n].take().ok_or_else(|| {
                        Error::tree(format!("linkage row {row}: cluster {id} is merged twice"))
                    })
                }
            };
            let (l, _, ls) = take(r[0])?;
            let (rt, _, rs) = take(r[1])?;
            let h = r[2];
            if !(h.is_finite() && h >= 0.0) {
                return Err(Error::tree(format!(
                    "linkage row {row}: the height {h} is not a finite number >= 0"
                )));
            }
            if r[3] != (ls + rs) as f64 {
                return Err(Error::tree(format!(
                    "linkage row {row}: the size is {} but the merged clusters hold {} points",
                    r[3],
                    ls + rs
                )));
            }
            built.push(Some((Tree::node(l, rt), h, ls + rs)));
        }
        let (tree, _, _) = built
            .pop()
            .flatten()
            .expect("the last row is the root, never taken");
        if let Some(k) = built.iter().position(|b| b.is_some()) {
            return Err(Error::tree(format!(
                "linkage row {k}: its cluster is never merged into the root"
            )));
        }
        // Heights in post-order: a node's height is its row's; find rows by
        // the cluster each row created (the set of its points' minimum and size
        // identify it uniquely within one hierarchy).
        let mut row_height = std::collections::HashMap::with_capacity(n);
        let mut sizes = vec![1usize; n];
        let mut mins: Vec<usize> = (0..n).collect();
        for r in rows {
            let (a, b) = (r[0] as usize, r[1] as usize);
            let m = mins[a].min(mins[b]);
            let s = sizes[a] + sizes[b];
            mins.push(m);
            sizes.push(s);
            row_height.insert((m, s), r[2]);
        }
        let mut heights = Vec::with_capacity(n - 1);
        tree.fold(
            |i| (i, 1usize),
            |(lm, ls), (rm, rs)| {
                let key = (lm.min(rm), ls + rs);
                heights.push(row_height[&key]);
                key
            },
        );
        Dendrogram::new(tree, heights)
    }

    /// A dendrogram that keeps a linkage matrix as it is: its tree and
    /// heights are those of [`Dendrogram::from_linkage`] (left child from
    /// column 0; heights made monotone), and [`Dendrogram::linkage`] gives
    /// `rows` back unchanged: their row order, column order and heights,
    /// even where they decrease (SciPy's centroid and median linkage) or
    /// where the rows are not in the order of their heights. Kept through
    /// [`Dendrogram::canonical`].
    ///
    /// # Errors
    ///
    /// As [`Dendrogram::from_linkage`].
    pub fn from_scipy(rows: Vec<[f64; 4]>) -> Result<Dendrogram> {
        let d = Dendrogram::from_linkage(&rows)?;
        Ok(Dendrogram {
            scipy: Some(rows),
            ..d
        })
    }

    /// The Newick text (see the module docs and [`Newick`]).
    pub fn to_newick(&self, options: &Newick<'_>) -> Result<String> {
        let internal = self.heights.len();
        if let Some(s) = options.support.filter(|s| s.len() != internal) {
            return Err(Error::tree(format!(
                "{} support values were given for a tree with {internal} internal nodes",
                s.len()
            )));
        }
        if let Some(names) = options.names {
            for t in self.tree.post_order() {
                match t {
                    Tree::Leaf(i) if *i >= names.len() => {
                        return Err(Error::tree(format!(
                            "point {i} has no name ({} names were given)",
                            names.len()
                        )));
                    }
                    _ => {}
                }
            }
        }
        // Each internal node's post-order index, in pre-order of writing:
        // compute post-order indices first.
        let mut index_of: std::collections::HashMap<*const Tree, usize> =
            std::collections::HashMap::with_capacity(internal);
        let mut k = 0;
        for t in self.tree.post_order() {
            if let Tree::Node(..) = t {
                index_of.insert(t as *const Tree, k);
                k += 1;
            }
        }
        let height = |t: &Tree| match t {
            Tree::Leaf(_) => 0.0,
            Tree::Node(..) => self.heights[index_of[&(t as *const Tree)]],
        };
        enum Token<'a> {
            Open(&'a Tree, f64),
            Comma,
            Close(&'a Tree, f64),
        }
        let mut out = String::new();
        if options.rooted {
            out.push_str("[&R] ");
        }
        let root: *const Tree = &self.tree;
        let mut stack = vec![Token::Open(&self.tree, height(&self.tree))];
        let write_length = |out: &mut String, t: &Tree, parent: f64| {
            if options.lengths && !std::ptr::eq(t, root) {
                let _ = write!(out, ":{:?}", (parent - height(t)).max(0.0));
            }
        };
        while let Some(token) = stack.pop() {
            match token {
                Token::Open(t @ Tree::Leaf(i), parent) => {
                    match options.names {
                        Some(names) => out.push_str(&newick_label(&names[*i])),
                        None => {
                            let _ = write!(out, "{i}");
                        }
                    }
                    write_length(&mut out, t, parent);
                }
                Token::Open(t @ Tree::Node(l, r), parent) => {
                    out.push('(');
                    let h = height(t);
                    stack.push(Token::Close(t, parent));
                    stack.push(Token::Open(r, h));
                    stack.push(Token::Comma);
                    stack.push(Token::Open(l, h));
                }
                Token::Comma => out.push(','),
                Token::Close(t, parent) => {
                    out.push(')');
                    match options.support {
                        Some(s) if !std::ptr::eq(t, root) => {
                            let _ = write!(out, "{:?}", s[index_of[&(t as *const Tree)]]);
                        }
                        _ => {}
                    }
                    write_length(&mut out, t, parent);
                }
            }
        }
        out.push(';');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Tree {
        Tree::parse(s).unwrap()
    }

    #[test]
    fn rank_heights_and_linkage() {
        let d = Dendrogram::by_rank(t("[[0,1],[2,[3,4]]]"));
        assert_eq!(d.heights(), &[1.0, 1.0, 2.0, 3.0]);
        let z = d.linkage().unwrap();
        assert_eq!(
            z,
            vec![
                [0.0, 1.0, 1.0, 2.0],
                [3.0, 4.0, 1.0, 2.0],
                [2.0, 6.0, 2.0, 3.0],
                [5.0, 7.0, 3.0, 5.0]
            ]
        );
        let back = Dendrogram::from_linkage(&z).unwrap();
        assert_eq!(
            back.tree().clone().canonical(),
            d.tree().clone().canonical()
        );
        assert_eq!(back.linkage().unwrap(), z);
    }

    #[test]
    fn canonical_keeps_each_clusters_height() {
        let d = Dendrogram::new(t("[2,[1,0]]"), vec![0.5, 2.0]).unwrap();
        let c = d.clone().canonical();
        assert_eq!(c.tree().to_string(), "[[0,1],2]");
        assert_eq!(c.heights(), &[0.5, 2.0]);
        assert_eq!(c.linkage().unwrap(), d.linkage().unwrap());
    }

    #[test]
    fn heights_are_made_monotone() {
        let d = Dendrogram::new(t("[[0,1],2]"), vec![2.0, -1.0]).unwrap();
        assert_eq!(d.heights(), &[2.0, 2.0]);
        assert!(Dendrogram::new(t("[[0,1],2]"), vec![1.0]).is_err());
        assert!(Dendrogram::new(t("[[0,1],2]"), vec![1.0, f64::NAN]).is_err());
    }

    #[test]
    fn newick_with_names_lengths_and_support() {
        let d = Dendrogram::new(t("[[0,1],2]"), vec![0.5, 2.0]).unwrap();
        let names = ["a b".to_string(), "x".to_string(), "it's".to_string()];
        let s = d
            .to_newick(&Newick {
                names: Some(&names),
                support: Some(&[0.93, 1.0]),
                ..Newick::default()
            })
            .unwrap();
        assert_eq!(s, "[&R] (('a b':0.5,x:0.5)0.93:1.5,'it''s':2.0);");
        let plain = d
            .to_newick(&Newick {
                lengths: false,
                rooted: false,
                ..Newick::default()
            })
            .unwrap();
        assert_eq!(plain, "((0,1),2);");
        // Lengths, support and the rooting comment read back.
        let full = d
            .to_newick(&Newick {
                support: Some(&[0.93, 1.0]),
                ..Newick::default()
            })
            .unwrap();
        assert_eq!(Tree::parse(&full).unwrap(), *d.tree());
        let h = crate::ddt::Hierarchy::parse_newick(&s).unwrap();
        assert_eq!(h.to_tree(&names).unwrap(), *d.tree());
    }

    #[test]
    fn bad_linkage_is_refused() {
        let bad: [&[[f64; 4]]; 5] = [
            &[[0.0, 0.0, 1.0, 2.0]],
            &[[0.0, 1.0, 1.0, 3.0]],
            &[[0.0, 2.0, 1.0, 2.0]],
            &[[0.0, 1.0, f64::NAN, 2.0]],
            &[[0.0, 1.0, 1.0, 2.0], [0.0, 2.0, 1.0, 2.0]],
        ];
        for z in bad {
            assert!(Dendrogram::from_linkage(z).is_err(), "{z:?}");
        }
    }
}
