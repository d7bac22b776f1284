//! Rooted trees with named leaves and any number of children per node: the
//! target hierarchies of the interactive experiments (a flat class tree is a root
//! with one clade per class), read from Newick.

use std::collections::HashMap;

use crate::base::tree::NewickParser;
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
    /// read and ignored; labels may be quoted with `'...'`.
    ///
    /// # Errors
    ///
    /// Malformed Newick, an empty leaf name, or a leaf name used twice.
    pub fn parse_newick(text: &str) -> Result<Hierarchy> {
        let mut p = Parser {
            cursor: NewickParser {
                s: text.as_bytes(),
                pos: 0,
            },
            h: Hierarchy {
                children: Vec::new(),
                names: Vec::new(),
                root: 0,
            },
        };
        p.skip_ws();
        let root = p.node()?;
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

    /// The LCA depths over `names` (index `i` is the point called `names[i]`).
    ///
    /// # Errors
    ///
    /// A name that is not a leaf of the tree, or a leaf that is not in `names`.
    pub fn lca_depths(&self, names: &[String]) -> Result<LcaDepths> {
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
    fn node(&mut self) -> Result<usize> {
        self.skip_ws();
        let v = self.h.children.len();
        self.h.children.push(Vec::new());
        self.h.names.push(None);
        if self.peek() == Some(b'(') {
            self.pos += 1;
            loop {
                let c = self.node()?;
                self.h.children[v].push(c);
                self.skip_ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.error("expected ',' or ')'")),
                }
            }
            self.label()?;
        } else {
            let name = self.label()?;
            if name.is_empty() {
                return Err(self.error("expected a leaf name"));
            }
            self.h.names[v] = Some(name);
        }
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
        Ok(v)
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
