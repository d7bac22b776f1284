//! Binary hierarchies over points `0..n`.
//!
//! A [`Tree`] is either a leaf (a 0-based point index) or an internal node with
//! two children. Its text forms are the nested JSON list `[[0,1],[2,[3,4]]]`
//! (also its `Display`) and Newick `((0,1),(2,(3,4)));`, whose leaves can
//! also carry the points' names ([`Tree::to_newick_named`],
//! [`Tree::to_newick_with`]). Trees are unordered:
//! [`Tree::canonical`] puts the child holding the smaller point first, which is
//! how every tree this crate returns is ordered.
//!
//! # Depth
//!
//! Trees come from users (a `--tree` argument, a jet's truth, an initial tree
//! of A*) and may be nested as deep as they have leaves: a caterpillar over
//! 200,000 points has 199,999 levels. Every walk over a tree here uses an
//! explicit stack on the heap, never the call stack: parsing both text forms,
//! printing them, [`Tree::canonical`], [`Tree::relabel`], [`Tree::validate`],
//! [`Tree::splits`], [`Tree::mask_splits`], the traversals [`Tree::post_order`]
//! and [`Tree::fold`], and the trait implementations `Clone`, `PartialEq`,
//! `Hash`, `Debug` and `Drop` (the compiler's drop glue for nested boxes
//! would recurse once per level). Serialization nests serde sequences up to
//! 512 levels, which works with every serde format; a deeper tree
//! is handed to the serializer as raw JSON text (see [`Tree`]'s `Serialize`).
//!
//! A text form may start with a UTF-8 byte-order mark, which is skipped.

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::ser::{Error as _, Serialize, SerializeSeq, Serializer};
use serde_json::value::RawValue;

use crate::base::set::Mask;
use crate::error::{Error, Result};

/// The deepest tree that serializes as nested serde sequences (understood by
/// every serde format, `serde_json::to_value` included). A deeper tree is
/// serialized as a [`RawValue`] holding its JSON text, so that no serializer
/// recurses once per level: `serde_json`'s writers (`to_string`, `to_writer`)
/// copy that text as is; `serde_json::to_value` parses it back and, like
/// every `serde_json` parse into a value, refuses more than 128 levels; other
/// formats see a one-field struct. 512 levels of serde calls need well under
/// 256 KiB of stack.
pub(crate) const SERDE_NESTING: usize = 512;

/// The UTF-8 byte-order mark some editors and spreadsheet exports put at the
/// start of a text file.
pub(crate) const BOM: char = '\u{feff}';

/// `text` without a leading UTF-8 byte-order mark.
pub(crate) fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// How [`Tree::to_newick_with`] writes a tree. The default writes leaves as
/// their 0-based point indices, like [`Tree::to_newick`].
#[derive(Clone, Copy, Debug, Default)]
pub struct NewickOptions<'a> {
    /// The points' names: leaf `i` is labelled `names[i]` (quoted when
    /// needed, see [`newick_label`]), or its index beyond the slice.
    pub names: Option<&'a [String]>,
}

/// A Newick leaf label: `name` as it is, or in single quotes (a quote
/// doubled) when it holds a character that Newick reserves (blanks,
/// `()[]',:;`, and `_`, which unquoted labels read as a blank), a control
/// character, or is empty.
pub fn newick_label(name: &str) -> std::borrow::Cow<'_, str> {
    let reserved = |c: char| "()[]',:;_".contains(c) || c.is_whitespace() || c.is_control();
    if name.is_empty() || name.chars().any(reserved) {
        std::borrow::Cow::Owned(format!("'{}'", name.replace('\'', "''")))
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

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
///
/// `Clone`, `PartialEq`, `Eq`, `Hash`, `Debug`, `Display`, `Serialize` and
/// `Drop` are implemented with explicit stacks: a tree of any depth can be
/// copied, compared, printed and dropped on a thread with a small stack. A
/// consequence of the `Drop` implementation is that a `Tree` cannot be
/// destructured by value; match on a reference (children are `&Box<Tree>`) or
/// take the children with [`Tree::into_children`].
pub enum Tree {
    /// A single point (0-based index).
    Leaf(usize),
    /// An internal node: the union of its two children.
    Node(Box<Tree>, Box<Tree>),
}

/// The nodes of a tree in post-order (children before their parent, left
/// before right), from [`Tree::post_order`].
pub struct PostOrder<'a> {
    /// Nodes still to visit, with whether their children were already pushed.
    stack: Vec<(&'a Tree, bool)>,
}

impl<'a> Iterator for PostOrder<'a> {
    type Item = &'a Tree;

    fn next(&mut self) -> Option<&'a Tree> {
        while let Some((t, expanded)) = self.stack.pop() {
            match t {
                Tree::Node(l, r) if !expanded => {
                    self.stack.push((t, true));
                    self.stack.push((r, false));
                    self.stack.push((l, false));
                }
                _ => return Some(t),
            }
        }
        None
    }
}

impl Tree {
    /// An internal node over two subtrees.
    pub fn node(left: Tree, right: Tree) -> Tree {
        Tree::Node(Box::new(left), Box::new(right))
    }

    /// The two children of an internal node, taken by value (`None` for a leaf).
    pub fn into_children(mut self) -> Option<(Tree, Tree)> {
        match &mut self {
            Tree::Leaf(_) => None,
            Tree::Node(l, r) => Some((
                std::mem::replace(&mut **l, Tree::Leaf(0)),
                std::mem::replace(&mut **r, Tree::Leaf(0)),
            )),
        }
    }

    /// Every node, children before their parent and left before right (the
    /// leaves come in left-to-right order). Iterative: any depth.
    pub fn post_order(&self) -> PostOrder<'_> {
        PostOrder {
            stack: vec![(self, false)],
        }
    }

    /// Folds the tree bottom-up: `leaf(i)` at every leaf, `node(left, right)`
    /// at every internal node over its children's values, in post-order.
    /// Iterative: any depth.
    pub fn fold<T>(&self, mut leaf: impl FnMut(usize) -> T, mut node: impl FnMut(T, T) -> T) -> T {
        let mut values: Vec<T> = Vec::new();
        for t in self.post_order() {
            match t {
                Tree::Leaf(i) => values.push(leaf(*i)),
                Tree::Node(..) => {
                    let r = values
                        .pop()
                        .expect("post-order: right child before its parent");
                    let l = values
                        .pop()
                        .expect("post-order: left child before its parent");
                    values.push(node(l, r));
                }
            }
        }
        values.pop().expect("post-order ends with the root")
    }

    /// The leaves in left-to-right order, without collecting them.
    fn leaf_iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.post_order().filter_map(|t| match t {
            Tree::Leaf(i) => Some(*i),
            Tree::Node(..) => None,
        })
    }

    /// The points under this tree, in left-to-right order.
    pub fn leaves(&self) -> Vec<usize> {
        self.leaf_iter().collect()
    }

    /// Number of leaves.
    pub fn num_leaves(&self) -> usize {
        self.leaf_iter().count()
    }

    /// The smallest point under this tree.
    pub fn min_leaf(&self) -> usize {
        self.leaf_iter().min().expect("a tree has a leaf")
    }

    /// The number of internal nodes on the longest path from the root to a
    /// leaf (0 for a leaf).
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 0usize)];
        while let Some((t, d)) = stack.pop() {
            match t {
                Tree::Leaf(_) => deepest = deepest.max(d),
                Tree::Node(l, r) => {
                    stack.push((r, d + 1));
                    stack.push((l, d + 1));
                }
            }
        }
        deepest
    }

    /// The same tree with, at every node, the child holding the smaller point first.
    pub fn canonical(self) -> Tree {
        self.fold(
            |i| (Tree::Leaf(i), i),
            |(l, a), (r, b)| {
                if a <= b {
                    (Tree::node(l, r), a)
                } else {
                    (Tree::node(r, l), b)
                }
            },
        )
        .0
    }

    /// Every binary tree over the points `0..n` (`(2n-3)!!` of them, canonical),
    /// by inserting point `k` on every edge of every tree over `0..k`, and
    /// above its root. For brute-force checks: at most 9 points (2,027,025 trees).
    pub fn all(n: usize) -> Vec<Tree> {
        assert!((1..=9).contains(&n), "Tree::all is for 1 to 9 points");
        // Recursion depth at most 8: trees over at most 9 points.
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
        self.fold(|i| Tree::Leaf(f(i)), Tree::node)
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
        let mut mask: Mask = 0;
        for i in self.leaf_iter() {
            if i >= 32 {
                return Err(Error::tree(format!(
                    "leaf {i} does not fit a 32-point mask"
                )));
            }
            mask |= 1 << i;
        }
        Ok(mask)
    }

    /// Every internal node as `(left mask, right mask)`, parents before
    /// children; an error if a leaf is 32 or more.
    pub fn mask_splits(&self) -> Result<Vec<(Mask, Mask)>> {
        self.mask()?;
        // Pre-order slots; each slot's parent slot and side. A leaf adds its
        // bit to its parent's side at once; an internal node's side is filled
        // after the walk, children (later slots) before parents.
        let mut out: Vec<(Mask, Mask)> = Vec::new();
        let mut up: Vec<Option<(usize, bool)>> = Vec::new();
        let mut stack: Vec<(&Tree, Option<(usize, bool)>)> = vec![(self, None)];
        while let Some((t, parent)) = stack.pop() {
            match t {
                Tree::Leaf(i) => {
                    if let Some((p, right)) = parent {
                        let side = if right { &mut out[p].1 } else { &mut out[p].0 };
                        *side |= 1 << i;
                    }
                }
                Tree::Node(l, r) => {
                    let slot = out.len();
                    out.push((0, 0));
                    up.push(parent);
                    stack.push((r, Some((slot, true))));
                    stack.push((l, Some((slot, false))));
                }
            }
        }
        for slot in (0..out.len()).rev() {
            if let Some((p, right)) = up[slot] {
                let mask = out[slot].0 | out[slot].1;
                let side = if right { &mut out[p].1 } else { &mut out[p].0 };
                *side |= mask;
            }
        }
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
        for i in self.leaf_iter() {
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
        self.to_newick_with(&NewickOptions::default())
    }

    /// The Newick form with the points' names as leaf labels, e.g.
    /// `((cat,dog),'sea lion');`: leaf `i` is labelled `names[i]`, quoted
    /// when Newick needs it (see [`newick_label`]). A leaf beyond `names` is
    /// labelled by its index.
    pub fn to_newick_named(&self, names: &[String]) -> String {
        self.to_newick_with(&NewickOptions { names: Some(names) })
    }

    /// The Newick form as `options` say (any depth: the walk is iterative).
    pub fn to_newick_with(&self, options: &NewickOptions<'_>) -> String {
        let label = |i: usize| match options.names.and_then(|names| names.get(i)) {
            Some(name) => newick_label(name),
            None => std::borrow::Cow::Owned(i.to_string()),
        };
        let mut s = String::new();
        self.write_nested(&mut s, '(', ')', &label)
            .expect("writing to a String cannot fail");
        s.push(';');
        s
    }

    /// Writes the tree as nested `open left,right close` groups, leaf `i` as
    /// `label(i)`.
    fn write_nested<'n>(
        &self,
        out: &mut impl fmt::Write,
        open: char,
        close: char,
        label: &dyn Fn(usize) -> std::borrow::Cow<'n, str>,
    ) -> fmt::Result {
        enum Token<'a> {
            Tree(&'a Tree),
            Comma,
            Close,
        }
        let mut stack = vec![Token::Tree(self)];
        while let Some(token) = stack.pop() {
            match token {
                Token::Tree(Tree::Leaf(i)) => out.write_str(&label(*i))?,
                Token::Tree(Tree::Node(l, r)) => {
                    out.write_char(open)?;
                    stack.push(Token::Close);
                    stack.push(Token::Tree(r));
                    stack.push(Token::Comma);
                    stack.push(Token::Tree(l));
                }
                Token::Comma => out.write_char(',')?,
                Token::Close => out.write_char(close)?,
            }
        }
        Ok(())
    }

    /// Parses a tree written as a nested JSON list (`[[0,1],2]`) or in Newick
    /// (`((0,1),2);`, leaf labels must be 0-based point indices; branch lengths,
    /// internal labels such as support values and a leading comment such as
    /// the rooted-tree mark `[&R]` are ignored). A leading byte-order mark and
    /// surrounding whitespace are skipped.
    pub fn parse(text: &str) -> Result<Tree> {
        let t = strip_bom(text).trim();
        if t.starts_with("[&") {
            // A Newick comment such as the rooted-tree mark `[&R]`.
            Tree::from_newick(t)
        } else if t.starts_with('[') {
            Tree::from_json_str(t)
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

    /// A tree from the text of a nested JSON list (a number is a leaf, a
    /// 2-element list a node, a 1-element list its element), at any depth: the
    /// JSON syntax is checked by `serde_json` without building values, then
    /// the lists are read with an explicit stack.
    pub fn from_json_str(text: &str) -> Result<Tree> {
        let text = strip_bom(text);
        serde_json::from_str::<&RawValue>(text)
            .map_err(|e| Error::tree(format!("not valid JSON: {e}")))?;
        let s = text.as_bytes();
        let mut pos = 0;
        // The children read so far of every open list.
        let mut open: Vec<Vec<Tree>> = Vec::new();
        loop {
            while s.get(pos).is_some_and(u8::is_ascii_whitespace) {
                pos += 1;
            }
            let mut done = match s.get(pos) {
                Some(b'[') => {
                    pos += 1;
                    open.push(Vec::new());
                    // `[]` (valid JSON) closes at once.
                    while s.get(pos).is_some_and(u8::is_ascii_whitespace) {
                        pos += 1;
                    }
                    if s.get(pos) != Some(&b']') {
                        continue;
                    }
                    None
                }
                Some(c) if *c == b'-' || c.is_ascii_digit() => {
                    let start = pos;
                    while s
                        .get(pos)
                        .is_some_and(|c| c.is_ascii_digit() || b"+-.eE".contains(c))
                    {
                        pos += 1;
                    }
                    let number = &text[start..pos];
                    let leaf = number
                        .parse::<u64>()
                        .ok()
                        .and_then(|i| usize::try_from(i).ok());
                    Some(Tree::Leaf(leaf.ok_or_else(|| {
                        Error::tree(format!("leaf {number} is not a non-negative integer"))
                    })?))
                }
                _ => {
                    let mut values =
                        serde_json::Deserializer::from_str(&text[pos..]).into_iter::<&RawValue>();
                    let found = match values.next() {
                        Some(Ok(v)) => v.get(),
                        _ => &text[pos..],
                    };
                    return Err(Error::tree(format!(
                        "expected a number or a list, found {}",
                        truncate(found)
                    )));
                }
            };
            // Close every list that ends here.
            loop {
                if let Some(tree) = done.take() {
                    match open.last_mut() {
                        Some(children) => children.push(tree),
                        None => return Ok(tree),
                    }
                }
                while s.get(pos).is_some_and(u8::is_ascii_whitespace) {
                    pos += 1;
                }
                match s.get(pos) {
                    Some(b',') => {
                        pos += 1;
                        break;
                    }
                    Some(b']') => {
                        pos += 1;
                        let mut children = open.pop().expect("a list is open at ']'");
                        done = Some(match children.len() {
                            2 => {
                                let r = children.pop().expect("two children");
                                let l = children.pop().expect("two children");
                                Tree::node(l, r)
                            }
                            1 => children.pop().expect("one child"),
                            k => {
                                return Err(Error::tree(format!(
                                    "a node must have exactly 2 children (binary hierarchy), found {k}"
                                )));
                            }
                        });
                    }
                    _ => return Err(Error::tree("not valid JSON")),
                }
            }
        }
    }

    /// A tree from a nested JSON list: a number is a leaf, a 2-element list a
    /// node (a 1-element list is its element). Iterative: any depth.
    pub fn from_json(v: &serde_json::Value) -> Result<Tree> {
        use serde_json::Value;
        enum Step<'a> {
            Visit(&'a Value),
            Join,
        }
        let mut todo = vec![Step::Visit(v)];
        let mut done: Vec<Tree> = Vec::new();
        while let Some(step) = todo.pop() {
            match step {
                Step::Visit(Value::Number(x)) => done.push(
                    x.as_u64()
                        .and_then(|i| usize::try_from(i).ok())
                        .map(Tree::Leaf)
                        .ok_or_else(|| {
                            Error::tree(format!("leaf {x} is not a non-negative integer"))
                        })?,
                ),
                Step::Visit(Value::Array(items)) => match items.as_slice() {
                    [l, r] => {
                        todo.push(Step::Join);
                        todo.push(Step::Visit(r));
                        todo.push(Step::Visit(l));
                    }
                    [only] => todo.push(Step::Visit(only)),
                    _ => {
                        return Err(Error::tree(format!(
                            "a node must have exactly 2 children (binary hierarchy), found {}",
                            items.len()
                        )));
                    }
                },
                Step::Visit(other) => {
                    return Err(Error::tree(format!(
                        "expected a number or a list, found {}",
                        truncate(&other.to_string())
                    )));
                }
                Step::Join => {
                    let r = done.pop().expect("a right child before its join");
                    let l = done.pop().expect("a left child before its join");
                    done.push(Tree::node(l, r));
                }
            }
        }
        Ok(done.pop().expect("a root"))
    }

    /// A tree from Newick with 0-based point indices as leaf labels, read
    /// with an explicit stack (any depth). Errors name the byte offset in
    /// `text` (after a byte-order mark, which is skipped).
    pub fn from_newick(text: &str) -> Result<Tree> {
        let mut p = NewickParser {
            s: text.as_bytes(),
            pos: if text.starts_with(BOM) {
                BOM.len_utf8()
            } else {
                0
            },
        };
        p.skip_comments();
        // The children read so far of every open parenthesis.
        let mut open: Vec<Vec<Tree>> = Vec::new();
        let tree = 'tree: loop {
            p.skip_ws();
            if p.peek() == Some(b'(') {
                p.pos += 1;
                open.push(Vec::new());
                continue;
            }
            let start = p.pos;
            let label = p.label();
            let mut done = label.parse::<usize>().map(Tree::Leaf).map_err(|_| {
                p.pos = start;
                p.error(&format!(
                    "leaf label {label:?} is not a 0-based point index"
                ))
            })?;
            p.branch_length();
            // Close every parenthesis that ends here.
            loop {
                let Some(children) = open.last_mut() else {
                    break 'tree done;
                };
                children.push(done);
                p.skip_ws();
                match p.peek() {
                    Some(b',') => {
                        p.pos += 1;
                        break;
                    }
                    Some(b')') => {
                        p.pos += 1;
                        p.label(); // internal label, ignored
                        let mut children = open.pop().expect("a parenthesis is open");
                        done = match children.len() {
                            2 => {
                                let r = children.pop().expect("two children");
                                let l = children.pop().expect("two children");
                                Tree::node(l, r)
                            }
                            1 => children.pop().expect("one child"),
                            k => {
                                return Err(p.error(&format!(
                                    "a node has {k} children; only binary hierarchies are supported"
                                )));
                            }
                        };
                        p.branch_length();
                    }
                    _ => return Err(p.error("expected ',' or ')'")),
                }
            }
        };
        p.skip_ws();
        if p.peek() == Some(b';') {
            p.pos += 1;
            p.skip_ws();
        }
        if p.pos != p.s.len() {
            return Err(p.error("unexpected text after the tree"));
        }
        Ok(tree)
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

    /// Skips whitespace and leading bracketed comments such as the
    /// rooted-tree mark `[&R]` (an unclosed `[` is left for the error).
    pub(crate) fn skip_comments(&mut self) {
        loop {
            self.skip_ws();
            if self.peek() != Some(b'[') {
                return;
            }
            match self.s[self.pos..].iter().position(|&c| c == b']') {
                Some(end) => self.pos += end + 1,
                None => return,
            }
        }
    }

    /// Skips an optional `:length` (read as a label and ignored).
    fn branch_length(&mut self) {
        self.skip_ws();
        if self.peek() == Some(b':') {
            self.pos += 1;
            self.label();
        }
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

impl Clone for Tree {
    fn clone(&self) -> Tree {
        self.fold(Tree::Leaf, Tree::node)
    }
}

impl PartialEq for Tree {
    fn eq(&self, other: &Tree) -> bool {
        let mut stack = vec![(self, other)];
        while let Some(pair) = stack.pop() {
            match pair {
                (Tree::Leaf(a), Tree::Leaf(b)) if a == b => {}
                (Tree::Node(a, b), Tree::Node(c, d)) => {
                    stack.push((b, d));
                    stack.push((a, c));
                }
                _ => return false,
            }
        }
        true
    }
}

impl Eq for Tree {}

impl Hash for Tree {
    /// Hashes the pre-order sequence of nodes (a tag per node, the point of
    /// each leaf), which determines the tree.
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            match t {
                Tree::Leaf(i) => {
                    state.write_u8(0);
                    i.hash(state);
                }
                Tree::Node(l, r) => {
                    state.write_u8(1);
                    stack.push(r);
                    stack.push(l);
                }
            }
        }
    }
}

impl fmt::Debug for Tree {
    /// As the derived form, on one line: `Node(Leaf(0), Node(Leaf(1), Leaf(2)))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Token<'a> {
            Tree(&'a Tree),
            Text(&'static str),
        }
        let mut stack = vec![Token::Tree(self)];
        while let Some(token) = stack.pop() {
            match token {
                Token::Tree(Tree::Leaf(i)) => write!(f, "Leaf({i})")?,
                Token::Tree(Tree::Node(l, r)) => {
                    f.write_str("Node(")?;
                    stack.push(Token::Text(")"));
                    stack.push(Token::Tree(r));
                    stack.push(Token::Text(", "));
                    stack.push(Token::Tree(l));
                }
                Token::Text(s) => f.write_str(s)?,
            }
        }
        Ok(())
    }
}

impl Drop for Tree {
    /// Frees the nodes with an explicit stack: the compiler's drop glue
    /// would recurse once per level of nesting.
    fn drop(&mut self) {
        let Tree::Node(l, r) = self else { return };
        if matches!((&**l, &**r), (Tree::Leaf(_), Tree::Leaf(_))) {
            return;
        }
        let mut stack = vec![
            std::mem::replace(&mut **l, Tree::Leaf(0)),
            std::mem::replace(&mut **r, Tree::Leaf(0)),
        ];
        while let Some(mut t) = stack.pop() {
            if let Tree::Node(l, r) = &mut t {
                stack.push(std::mem::replace(&mut **l, Tree::Leaf(0)));
                stack.push(std::mem::replace(&mut **r, Tree::Leaf(0)));
            }
            // `t` now has leaves for children: dropping it goes one level down.
        }
    }
}

impl fmt::Display for Tree {
    /// The nested JSON list, e.g. `[[0,1],2]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_nested(f, '[', ']', &|i| std::borrow::Cow::Owned(i.to_string()))
    }
}

/// A subtree serialized as nested sequences, below a root whose depth was
/// checked against [`SERDE_NESTING`].
struct Nested<'a>(&'a Tree);

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            Tree::Leaf(i) => serializer.serialize_u64(*i as u64),
            Tree::Node(l, r) => {
                let mut seq = serializer.serialize_seq(Some(2))?;
                seq.serialize_element(&Nested(l))?;
                seq.serialize_element(&Nested(r))?;
                seq.end()
            }
        }
    }
}

impl Serialize for Tree {
    /// The nested list `[[0,1],2]`: serde sequences for a tree at most
    /// 512 levels deep, else its JSON text as a [`RawValue`]
    /// (the same output with `serde_json`'s writers, without recursion).
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        if self.depth() <= SERDE_NESTING {
            return Nested(self).serialize(serializer);
        }
        RawValue::from_string(self.to_string())
            .map_err(S::Error::custom)?
            .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newick_with_rooted_mark_lengths_and_support_parses() {
        let t = Tree::parse("[&R] ((0:0.5,1:0.5)0.93:1.5,2:2.0);").unwrap();
        assert_eq!(t.to_string(), "[[0,1],2]");
        let u = Tree::parse(" [&U][other] ((0,1),2);").unwrap();
        assert_eq!(u, t);
        assert!(Tree::parse("[&R ((0,1),2);").is_err());
    }

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
