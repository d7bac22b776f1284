//! Rooted trees with named leaves and any number of children per node: the
//! target hierarchies of the interactive experiments (a flat class tree is a root
//! with one clade per class), read from Newick.
//!
//! The tree is stored as flat arrays (children lists per node), so copying,
//! comparing and dropping it never recurses; the Newick reader keeps the open
//! parentheses on an explicit stack, so a target nested 100,000 levels deep
//! reads like any other. A leading UTF-8 byte-order mark is skipped.

use std::collections::HashMap;

use crate::base::tree::{BOM, NewickParser};
use crate::error::{Error, Result};

use super::triplets::LcaDepths;

/// A rooted tree whose leaves carry names; internal nodes may have any number
/// (at least one) of children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    children: Vec<Vec<usize>>,
    names: Vec<Option<String>>,
    root: usize,
}

impl Hierarchy {
    /// Parses Newick: `((a,b,c)x,(d,e));`. Internal labels and branch lengths are
    /// read and ignored; labels may be quoted with `'...'`. Any depth; a
    /// leading byte-order mark and a rooting comment (`[&R]`, `[&U]`) are
    /// skipped. Errors name the byte offset in
    /// `text`.
    ///
    /// # Errors
    ///
    /// Malformed Newick, an empty leaf name, or a leaf name used twice.
    pub fn parse_newick(text: &str) -> Result<Hierarchy> {
        let mut p = Parser {
            cursor: NewickParser {
                s: text.as_bytes(),
                pos: if text.starts_with(BOM) {
                    BOM.len_utf8()
                } else {
                    0
                },
            },
            h: Hierarchy {
                children: Vec::new(),
                names: Vec::new(),
                root: 0,
            },
        };
        p.skip_comments();
        let root = p.tree()?;
        p.skip_ws();
        if p.peek() == Some(b';') {
            p.pos += 1;
            p.skip_ws();
        }
        if p.pos != p.s.len() {
            return Err(p.error("unexpected text after the tree"));
        }
        p.h.root = root;
        let mut seen = HashMap::new();
        for name in p.h.names.iter().flatten() {
            if seen.insert(name.as_str(), ()).is_some() {
                return Err(Error::tree(format!(
                    "Newick: the leaf {name:?} appears twice"
                )));
            }
        }
        Ok(p.h)
    }

    /// The leaf names, in the order they appear.
    pub fn leaf_names(&self) -> Vec<&str> {
        self.names.iter().flatten().map(String::as_str).collect()
    }

    /// The tree as a binary [`Tree`](crate::Tree) over `names` (leaf `i` is the point
    /// called `names[i]`; every name must be a leaf and every leaf a name).
    /// Nodes with one child are skipped. Iterative: any depth.
    ///
    /// # Errors
    ///
    /// A node with more than two children, a leaf name not in `names`, or a
    /// name that is not a leaf.
    pub fn to_tree(&self, names: &[String]) -> Result<crate::Tree> {
        self.binary_over(names, true)
    }

    /// [`Hierarchy::to_tree`], or with `whole == false` a tree over some of
    /// `names` (each at most once).
    fn binary_over(&self, names: &[String], whole: bool) -> Result<crate::Tree> {
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i))
            .collect();
        let mut found = vec![false; names.len()];
        let mut built: Vec<Option<crate::Tree>> = (0..self.children.len()).map(|_| None).collect();
        // Post-order over the flat arrays with an explicit stack.
        let mut stack = vec![(self.root, false)];
        while let Some((v, expanded)) = stack.pop() {
            let kids = &self.children[v];
            if kids.is_empty() {
                let name = self.names[v].as_deref().unwrap_or("");
                let i = *index.get(name).ok_or_else(|| {
                    Error::tree(format!(
                        "the tree has a leaf {name:?} that is not among the points' names \
                         (when the points have names, Newick leaf labels are their names)"
                    ))
                })?;
                found[i] = true;
                built[v] = Some(crate::Tree::Leaf(i));
            } else if kids.len() > 2 {
                return Err(Error::tree(format!(
                    "a node has {} children: a hierarchy here is binary",
                    kids.len()
                )));
            } else if !expanded {
                stack.push((v, true));
                stack.extend(kids.iter().rev().map(|&c| (c, false)));
            } else {
                let mut sub = kids
                    .iter()
                    .map(|&c| built[c].take().expect("children first"));
                let first = sub.next().expect("a node has a child");
                built[v] = Some(match sub.next() {
                    Some(second) => crate::Tree::node(first, second),
                    None => first,
                });
            }
        }
        if whole && let Some(i) = found.iter().position(|f| !f) {
            return Err(Error::tree(format!(
                "the name {:?} is not a leaf of the tree",
                names[i]
            )));
        }
        Ok(built[self.root].take().expect("the root is built"))
    }

    /// The LCA depths over `names` (index `i` is the point called `names[i]`).
    ///
    /// # Errors
    ///
    /// A name that is not a leaf of the tree, a leaf that is not in `names`,
    /// or more than 65,536 names (depths are `u16`).
    pub fn lca_depths(&self, names: &[String]) -> Result<LcaDepths> {
        super::triplets::check_lca_points(names.len())?;
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.as_str(), i))
            .collect();
        let mut leaf_of = vec![None; self.children.len()];
        let mut found = vec![false; names.len()];
        for (v, name) in self.names.iter().enumerate() {
            if let Some(name) = name {
                let i = *index.get(name.as_str()).ok_or_else(|| {
                    Error::tree(format!(
                        "the target tree has a leaf {name:?} that is not among the points"
                    ))
                })?;
                leaf_of[v] = Some(i);
                found[i] = true;
            }
        }
        if let Some(i) = found.iter().position(|f| !f) {
            return Err(Error::tree(format!(
                "the point {:?} is not a leaf of the target tree",
                names[i]
            )));
        }
        Ok(LcaDepths::from_children(
            names.len(),
            &self.children,
            &leaf_of,
            self.root,
        ))
    }
}

/// Reads a binary tree over the points, the one rule every door uses: with
/// `names` (the points have names), Newick leaf labels are those names (a
/// label that is not one of them is an error naming it); without, they are
/// 0-based point indices. A nested JSON list (`[[0,1],2]`) always holds
/// indices. The tree may cover some of the points (each at most once);
/// callers that need every point check it with [`crate::Tree::validate`].
///
/// # Errors
///
/// Malformed text, a node with more than two children, a label that is
/// not a name (or not an index), a leaf used twice.
pub fn read_tree(text: &str, names: Option<&[String]>) -> Result<crate::Tree> {
    let t = text.strip_prefix(BOM).unwrap_or(text).trim_start();
    let tree = match names {
        Some(names) if !t.starts_with('[') || t.starts_with("[&") => {
            Hierarchy::parse_newick(text)?.binary_over(names, false)?
        }
        _ => crate::Tree::parse(text)?,
    };
    // Indices: each at most once, and within the names when there are some.
    let n = names.map_or_else(|| tree.fold(|i| i + 1, usize::max), <[String]>::len);
    tree.validate(n, false)?;
    Ok(tree)
}

/// The Newick cursor of [`crate::Tree`]'s parser, building a [`Hierarchy`].
struct Parser<'a> {
    cursor: NewickParser<'a>,
    h: Hierarchy,
}

impl<'a> std::ops::Deref for Parser<'a> {
    type Target = NewickParser<'a>;
    fn deref(&self) -> &NewickParser<'a> {
        &self.cursor
    }
}

impl std::ops::DerefMut for Parser<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cursor
    }
}

impl Parser<'_> {
    /// Reads one tree (a leaf or a parenthesised group with its label and
    /// branch length) and returns its root node. Nodes are numbered in
    /// pre-order; the open groups are on an explicit stack.
    fn tree(&mut self) -> Result<usize> {
        let mut open: Vec<usize> = Vec::new();
        loop {
            self.skip_ws();
            let v = self.h.children.len();
            self.h.children.push(Vec::new());
            self.h.names.push(None);
            if let Some(&parent) = open.last() {
                self.h.children[parent].push(v);
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
                open.push(v);
                continue;
            }
            let name = self.label()?;
            if name.is_empty() {
                return Err(self.error("expected a leaf name"));
            }
            self.h.names[v] = Some(name);
            self.branch_length()?;
            // Close every group that ends here.
            loop {
                if open.is_empty() {
                    return Ok(0);
                }
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        break;
                    }
                    Some(b')') => {
                        self.pos += 1;
                        open.pop();
                        self.label()?;
                        self.branch_length()?;
                    }
                    _ => return Err(self.error("expected ',' or ')'")),
                }
            }
        }
    }

    /// Checks an optional `:length`.
    fn branch_length(&mut self) -> Result<()> {
        self.skip_ws();
        if self.peek() == Some(b':') {
            self.pos += 1;
            self.skip_ws();
            let start = self.pos;
            while matches!(self.peek(), Some(c) if c.is_ascii_digit() || b"+-.eE".contains(&c)) {
                self.pos += 1;
            }
            let len = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
            if len.parse::<f64>().is_err() {
                return Err(self.error("expected a branch length after ':'"));
            }
        }
        Ok(())
    }

    fn label(&mut self) -> Result<String> {
        self.skip_ws();
        if self.peek() == Some(b'\'') {
            self.pos += 1;
            let mut out = Vec::new();
            loop {
                match self.peek() {
                    None => return Err(self.error("unterminated quoted label")),
                    Some(b'\'') if self.s.get(self.pos + 1) == Some(&b'\'') => {
                        out.push(b'\'');
                        self.pos += 2;
                    }
                    Some(b'\'') => {
                        self.pos += 1;
                        break;
                    }
                    Some(c) => {
                        out.push(c);
                        self.pos += 1;
                    }
                }
            }
            return String::from_utf8(out).map_err(|_| self.error("label is not UTF-8"));
        }
        let start = self.pos;
        while matches!(self.peek(), Some(c) if !b"(),:;'[]".contains(&c) && !c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .map(str::to_string)
            .map_err(|_| self.error("label is not UTF-8"))
    }
}
