//! Binary hierarchies over points `0..n`.
//!
//! A [`Tree`] is either a leaf (a 0-based point index) or an internal node with
//! two children. Its text forms are the nested JSON list `[[0,1],[2,[3,4]]]`
//! (also its `Display`) and Newick `((0,1),(2,(3,4)));`. Trees are unordered:
//! [`Tree::canonical`] puts the child holding the smaller point first, which is
//! how every tree this crate returns is ordered.

use std::fmt;

use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::base::set::Mask;
use crate::error::{Error, Result};

/// A tree with its score: the answer of every method that finds one best
/// hierarchy (the MAP of a trellis, A*, greedy and beam search). It
/// serializes as `{"tree": [[0,1],2], "log_potential": -1.5}` (`null` for `-∞`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ScoredTree {
    /// The hierarchy, children ordered by their smallest point.
    pub tree: Tree,
    /// Its total log-potential `log φ(H) = Σ log ψ` (`-∞` when the model
    /// gives it zero potential).
    pub log_potential: f64,
}

/// A binary hierarchy: a leaf holding a point index, or a node with two children.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tree {
    /// A single point (0-based index).
    Leaf(usize),
    /// An internal node: the union of its two children.
    Node(Box<Tree>, Box<Tree>),
}

impl Tree {
    /// An internal node over two subtrees.
    pub fn node(left: Tree, right: Tree) -> Tree {
        Tree::Node(Box::new(left), Box::new(right))
    }

    /// The points under this tree, in left-to-right order.
    pub fn leaves(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves(&self, out: &mut Vec<usize>) {
        match self {
            Tree::Leaf(i) => out.push(*i),
            Tree::Node(l, r) => {
                l.collect_leaves(out);
                r.collect_leaves(out);
            }
        }
    }

    /// Number of leaves.
    pub fn num_leaves(&self) -> usize {
        match self {
            Tree::Leaf(_) => 1,
            Tree::Node(l, r) => l.num_leaves() + r.num_leaves(),
        }
    }

    /// The smallest point under this tree.
    pub fn min_leaf(&self) -> usize {
        match self {
            Tree::Leaf(i) => *i,
            Tree::Node(l, r) => l.min_leaf().min(r.min_leaf()),
        }
    }

    /// The same tree with, at every node, the child holding the smaller point first.
    pub fn canonical(self) -> Tree {
        match self {
            Tree::Leaf(i) => Tree::Leaf(i),
            Tree::Node(l, r) => {
                let (l, r) = (l.canonical(), r.canonical());
                if l.min_leaf() <= r.min_leaf() {
                    Tree::node(l, r)
                } else {
                    Tree::node(r, l)
                }
            }
        }
    }

    /// Every binary tree over the points `0..n` (`(2n-3)!!` of them, canonical),
    /// by inserting point `k` on every edge of every tree over `0..k`, and
    /// above its root. For brute-force checks: at most 9 points (2,027,025 trees).
    pub fn all(n: usize) -> Vec<Tree> {
        assert!((1..=9).contains(&n), "Tree::all is for 1 to 9 points");
        fn insert(t: &Tree, k: usize, out: &mut Vec<Tree>) {
            out.push(Tree::node(t.clone(), Tree::Leaf(k)));
            if let Tree::Node(l, r) = t {
                let mut below = Vec::new();
                insert(l, k, &mut below);
                out.extend(below.drain(..).map(|l2| Tree::node(l2, (**r).clone())));
                insert(r, k, &mut below);
                out.extend(below.into_iter().map(|r2| Tree::node((**l).clone(), r2)));
            }
        }
        let mut trees = vec![Tree::Leaf(0)];
        for k in 1..n {
            let mut next = Vec::new();
            for t in &trees {
                insert(t, k, &mut next);
            }
            trees = next;
        }
        trees.into_iter().map(Tree::canonical).collect()
    }

    /// The same tree with every leaf `i` replaced by `f(i)`.
    pub fn relabel(&self, f: impl Fn(usize) -> usize + Copy) -> Tree {
        match self {
            Tree::Leaf(i) => Tree::Leaf(f(*i)),
            Tree::Node(l, r) => Tree::node(l.relabel(f), r.relabel(f)),
        }
    }

    /// Every internal node as `(left leaves, right leaves)`, parents before children.
    pub fn splits(&self) -> Vec<(Vec<usize>, Vec<usize>)> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            if let Tree::Node(l, r) = t {
                out.push((l.leaves(), r.leaves()));
                stack.push(r);
                stack.push(l);
            }
        }
        out
    }

    /// The tree drawn sideways as text, one line per node, each leaf by
    /// `label` and each internal node by `note` of its two children (or a
    /// bare `●`):
    ///
    /// ```text
    /// ● cost 1.2000
    /// ├─● cost 0.5000
    /// │ ├─ 0
    /// │ └─ 1
    /// └─ 2
    /// ```
    pub fn draw(
        &self,
        label: &dyn Fn(usize) -> String,
        note: &dyn Fn(&Tree, &Tree) -> Option<String>,
    ) -> String {
        let mut out = String::new();
        // (node, the line's prefix, the prefix of its children's lines)
        let mut stack: Vec<(&Tree, String, String)> = vec![(self, String::new(), String::new())];
        while let Some((t, line, next)) = stack.pop() {
            match t {
                Tree::Leaf(i) => out.push_str(&format!("{line} {}\n", label(*i))),
                Tree::Node(l, r) => {
                    match note(l, r) {
                        Some(s) => out.push_str(&format!("{line}● {s}\n")),
                        None => out.push_str(&format!("{line}●\n")),
                    }
                    stack.push((r, format!("{next}└─"), format!("{next}  ")));
                    stack.push((l, format!("{next}├─"), format!("{next}│ ")));
                }
            }
        }
        out
    }

    /// The cluster (as a mask) of this tree; an error if a leaf is 32 or more
    /// (masks hold 32 points).
    pub fn mask(&self) -> Result<Mask> {
        let leaves = self.leaves();
        if let Some(&big) = leaves.iter().find(|&&i| i >= 32) {
            return Err(Error::tree(format!(
                "leaf {big} does not fit a 32-point mask"
            )));
        }
        Ok(leaves.into_iter().fold(0, |m, i| m | (1 << i)))
    }

    /// Every internal node as `(left mask, right mask)`, parents before
    /// children; an error if a leaf is 32 or more.
    pub fn mask_splits(&self) -> Result<Vec<(Mask, Mask)>> {
        self.mask()?;
        fn go(t: &Tree, out: &mut Vec<(Mask, Mask)>) -> Mask {
            match t {
                Tree::Leaf(i) => 1 << i,
                Tree::Node(l, r) => {
                    let slot = out.len();
                    out.push((0, 0));
                    let (a, b) = (go(l, out), go(r, out));
                    out[slot] = (a, b);
                    a | b
                }
            }
        }
        let mut out = Vec::new();
        go(self, &mut out);
        Ok(out)
    }

    /// Every non-singleton cluster of the tree (root included) as sorted point lists.
    pub fn clusters(&self) -> Vec<Vec<usize>> {
        self.splits()
            .into_iter()
            .map(|(mut l, r)| {
                l.extend(r);
                l.sort_unstable();
                l
            })
            .collect()
    }

    /// Checks that the leaves are distinct points below `n`; with `complete`,
    /// also that every point `0..n` appears.
    pub fn validate(&self, n: usize, complete: bool) -> Result<()> {
        let mut seen = vec![false; n];
        for i in self.leaves() {
            if i >= n {
                return Err(Error::tree(format!(
                    "leaf {i} is out of range: there are {n} points (0-based indices 0..{})",
                    n.saturating_sub(1)
                )));
            }
            if seen[i] {
                return Err(Error::tree(format!("leaf {i} appears more than once")));
            }
            seen[i] = true;
        }
        if complete {
            if let Some(i) = seen.iter().position(|s| !s) {
                return Err(Error::tree(format!(
                    "point {i} is missing: a hierarchy over {n} points needs every point as a leaf"
                )));
            }
        }
        Ok(())
    }

    /// The Newick form, e.g. `((0,1),(2,(3,4)));`.
    pub fn to_newick(&self) -> String {
        let mut s = String::new();
        self.write_newick(&mut s);
        s.push(';');
        s
    }

    fn write_newick(&self, s: &mut String) {
        match self {
            Tree::Leaf(i) => s.push_str(&i.to_string()),
            Tree::Node(l, r) => {
                s.push('(');
                l.write_newick(s);
                s.push(',');
                r.write_newick(s);
                s.push(')');
            }
        }
    }

    /// Parses a tree written as a nested JSON list (`[[0,1],2]`) or in Newick
    /// (`((0,1),2);`, leaf labels must be 0-based point indices; branch lengths
    /// and internal labels are ignored).
    pub fn parse(text: &str) -> Result<Tree> {
        let t = text.trim();
        if t.starts_with('[') {
            let v: serde_json::Value =
                serde_json::from_str(t).map_err(|e| Error::tree(format!("not valid JSON: {e}")))?;
            Tree::from_json(&v)
        } else if t.starts_with('(') {
            Tree::from_newick(t)
        } else if let Ok(i) = t.trim_end_matches(';').parse::<usize>() {
            Ok(Tree::Leaf(i))
        } else {
            Err(Error::tree(format!(
                "expected a nested JSON list like [[0,1],2] or Newick like ((0,1),2); but got {:?}",
                truncate(t)
            )))
        }
    }

    /// A tree from a nested JSON list: a number is a leaf, a 2-element list a node.
    pub fn from_json(v: &serde_json::Value) -> Result<Tree> {
        match v {
            serde_json::Value::Number(x) => x
                .as_u64()
                .map(|i| Tree::Leaf(i as usize))
                .ok_or_else(|| Error::tree(format!("leaf {x} is not a non-negative integer"))),
            serde_json::Value::Array(items) => match items.as_slice() {
                [l, r] => Ok(Tree::node(Tree::from_json(l)?, Tree::from_json(r)?)),
                [only] => Tree::from_json(only),
                _ => Err(Error::tree(format!(
                    "a node must have exactly 2 children (binary hierarchy), found {}",
                    items.len()
                ))),
            },
            other => Err(Error::tree(format!(
                "expected a number or a list, found {}",
                truncate(&other.to_string())
            ))),
        }
    }

    /// A tree from Newick with 0-based point indices as leaf labels.
    pub fn from_newick(text: &str) -> Result<Tree> {
        let mut p = NewickParser {
            s: text.as_bytes(),
            pos: 0,
        };
        p.skip_ws();
        let t = p.subtree()?;
        p.skip_ws();
        if p.peek() == Some(b';') {
            p.pos += 1;
            p.skip_ws();
        }
        if p.pos != p.s.len() {
            return Err(p.error("unexpected text after the tree"));
        }
        Ok(t)
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A cursor over Newick text, shared with the named-leaf parser of
/// [`crate::ddt`].
pub(crate) struct NewickParser<'a> {
    pub(crate) s: &'a [u8],
    pub(crate) pos: usize,
}

impl NewickParser<'_> {
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    pub(crate) fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(c) if c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    pub(crate) fn error(&self, what: &str) -> Error {
        Error::tree(format!("Newick: {what} at byte {}", self.pos))
    }

    fn subtree(&mut self) -> Result<Tree> {
        self.skip_ws();
        let t = if self.peek() == Some(b'(') {
            self.pos += 1;
            let mut children = vec![self.subtree()?];
            self.skip_ws();
            while self.peek() == Some(b',') {
                self.pos += 1;
                children.push(self.subtree()?);
                self.skip_ws();
            }
            if self.peek() != Some(b')') {
                return Err(self.error("expected ',' or ')'"));
            }
            self.pos += 1;
            self.label(); // internal label, ignored
            match children.len() {
                2 => {
                    let r = children.pop().unwrap();
                    let l = children.pop().unwrap();
                    Tree::node(l, r)
                }
                1 => children.pop().unwrap(),
                k => {
                    return Err(self.error(&format!(
                        "a node has {k} children; only binary hierarchies are supported"
                    )));
                }
            }
        } else {
            let start = self.pos;
            let label = self.label();
            label.parse::<usize>().map(Tree::Leaf).map_err(|_| {
                self.pos = start;
                self.error(&format!(
                    "leaf label {label:?} is not a 0-based point index"
                ))
            })?
        };
        self.skip_ws();
        if self.peek() == Some(b':') {
            self.pos += 1;
            self.label(); // branch length, ignored
        }
        Ok(t)
    }

    fn label(&mut self) -> String {
        self.skip_ws();
        let start = self.pos;
        while matches!(self.peek(), Some(c) if !b"(),:;".contains(&c) && !c.is_ascii_whitespace()) {
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.pos]).into_owned()
    }
}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tree::Leaf(i) => write!(f, "{i}"),
            Tree::Node(l, r) => write!(f, "[{l},{r}]"),
        }
    }
}

impl Serialize for Tree {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Tree::Leaf(i) => serializer.serialize_u64(*i as u64),
            Tree::Node(l, r) => {
                let mut seq = serializer.serialize_seq(Some(2))?;
                seq.serialize_element(l.as_ref())?;
                seq.serialize_element(r.as_ref())?;
                seq.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_newick_round_trip() {
        let t = Tree::parse("[[0,1],[2,[3,4]]]").unwrap();
        assert_eq!(t.to_string(), "[[0,1],[2,[3,4]]]");
        assert_eq!(t.to_newick(), "((0,1),(2,(3,4)));");
        assert_eq!(Tree::parse(&t.to_newick()).unwrap(), t);
        assert_eq!(serde_json::to_string(&t).unwrap(), "[[0,1],[2,[3,4]]]");
        let with_lengths = Tree::parse("((0:1.5,1:2)x:0.1, (2,(3,4)inner):3);").unwrap();
        assert_eq!(with_lengths, t);
    }

    #[test]
    fn rejects_non_binary_and_bad_leaves() {
        assert!(Tree::parse("[0,1,2]").is_err());
        assert!(Tree::parse("(0,1,2);").is_err());
        assert!(Tree::parse("(a,b);").is_err());
        assert!(Tree::parse("[0,-1]").is_err());
        assert!(Tree::parse("((0,1),2));").is_err());
        let t = Tree::parse("[0,[1,1]]").unwrap();
        assert!(t.validate(3, false).is_err());
        let t = Tree::parse("[0,[1,5]]").unwrap();
        assert!(t.validate(3, false).is_err());
        let t = Tree::parse("[0,2]").unwrap();
        assert!(t.validate(3, false).is_ok());
        assert!(t.validate(3, true).is_err());
    }

    #[test]
    fn all_trees_are_distinct_and_counted() {
        for n in 1..=7 {
            let trees = Tree::all(n);
            assert_eq!(
                trees.len().to_string(),
                crate::base::count::num_trees(n).to_string()
            );
            let set: std::collections::HashSet<String> =
                trees.iter().map(|t| t.to_string()).collect();
            assert_eq!(set.len(), trees.len());
            assert!(trees.iter().all(|t| t.validate(n, true).is_ok()));
        }
    }

    #[test]
    fn canonical_orders_children_by_smallest_leaf() {
        let t = Tree::parse("[[4,3],[[2,1],0]]").unwrap().canonical();
        assert_eq!(t.to_string(), "[[0,[1,2]],[3,4]]");
        assert_eq!(t.mask().unwrap(), 0b11111);
        assert_eq!(t.mask_splits().unwrap()[0], (0b00111, 0b11000));
        assert_eq!(t.clusters().len(), 4);
    }
}
