//! Triplet constraints, BUILD (Aho et al. 1981) and the triplet distance.
//!
//! A triplet `({a, b}, c)` holds in a tree when the lowest common ancestor (LCA) of
//! `a` and `b` lies strictly below that of `a`, `b` and `c`: some cluster holds
//! `a` and `b` but not `c`.
//!
//! **BUILD** decides whether a set of triplets fits in one tree and builds one: on
//! the current leaf set, join `a` and `b` for every triplet whose three points are
//! all in the set (the Aho graph); if the graph is connected no tree exists;
//! otherwise the top split may be any bipartition of its connected components, and
//! BUILD recurses into both sides with the triplets inside each. This
//! implementation balances the two sides greedily by size (largest component
//! first, into the lighter side), so the output is binary. `O(N (N + K) α)` for `K`
//! triplets.
//!
//! **Triplet distance** (Vikram & Dasgupta, Eq. 1): the fraction of the triplets
//! resolved by a target `T*` that a tree `T` does not satisfy. With the depth of
//! the LCA of every pair tabulated (`O(N²)`), the resolved pair of `{i, j, k}` is
//! the one with the deepest LCA (strictly deeper than the other two; a fully
//! unresolved triple has three equal depths), so all `C(N, 3)` triples cost
//! `O(N³)` with `O(1)` work each: a few milliseconds at `N = 150`.

use rand::Rng;
use rand::seq::SliceRandom;

use crate::base::tree::Tree;
use crate::error::{Error, ErrorKind, Result};

/// The constraint `({a, b}, c)` over point indices: `a` and `b` are closer to each
/// other than to `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Triplet {
    /// One point of the close pair.
    pub a: usize,
    /// The other point of the close pair.
    pub b: usize,
    /// The odd one out.
    pub c: usize,
}

impl Triplet {
    /// The triplet `({a, b}, c)`.
    ///
    /// # Errors
    ///
    /// Two equal points.
    pub fn new(a: usize, b: usize, c: usize) -> Result<Triplet> {
        if a == b || a == c || b == c {
            return Err(Error::parameter(format!(
                "a triplet needs three different points, got ({{{a}, {b}}}, {c})"
            )));
        }
        Ok(Triplet { a, b, c })
    }

    /// The largest point index.
    pub fn max(&self) -> usize {
        self.a.max(self.b).max(self.c)
    }
}

/// BUILD: a binary tree over points `0..n` that satisfies every triplet.
///
/// # Errors
///
/// `n == 0`, a triplet with a point `>= n` or repeated points, or an unrealisable
/// set ([`ErrorKind::UnrealisableTriplets`], naming one triplet of the conflict).
pub fn build(n: usize, triplets: &[Triplet]) -> Result<Tree> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    check(n, triplets)?;
    let leaves: Vec<usize> = (0..n).collect();
    build_on(n, &leaves, triplets)
}

pub(crate) fn check(n: usize, triplets: &[Triplet]) -> Result<()> {
    for t in triplets {
        Triplet::new(t.a, t.b, t.c)?;
        if t.max() >= n {
            return Err(Error::parameter(format!(
                "triplet ({{{}, {}}}, {}) names point {} but there are only {n} points",
                t.a,
                t.b,
                t.c,
                t.max()
            )));
        }
    }
    Ok(())
}

/// Parses triplets given by point names, one `a b c` per line (`({a, b}, c)`;
/// fields separated by whitespace or commas; `#` starts a comment; a leading
/// UTF-8 byte-order mark is skipped). Errors name the line.
pub fn parse_triplets(text: &str, names: &[String]) -> Result<Vec<Triplet>> {
    crate::base::io::parse_point_rows(text, names, 3)?
        .into_iter()
        .map(|r| Triplet::new(r[0], r[1], r[2]))
        .collect()
}

/// An error's message with point names instead of indices (for triplet
/// conflicts); other errors unchanged.
pub fn named_message(e: &Error, names: &[String]) -> String {
    match e.kind() {
        ErrorKind::UnrealisableTriplets { a, b, c, points } => format!(
            "the triplet constraints cannot all hold in one tree: ({{{}, {}}}, {}) conflicts \
             with the others among the same {points} points",
            names[*a], names[*b], names[*c]
        ),
        _ => e.to_string(),
    }
}

/// BUILD on a subset of `0..n` in the given leaf order (the order breaks ties).
pub(crate) fn build_on(n: usize, leaves: &[usize], triplets: &[Triplet]) -> Result<Tree> {
    let mut pos = vec![usize::MAX; n];
    rec(leaves.to_vec(), triplets.to_vec(), &mut pos)
}

/// BUILD on `leaves` after shuffling them (a random resolution of the freedom BUILD has).
pub(crate) fn build_random<R: Rng>(
    n: usize,
    leaves: &[usize],
    triplets: &[Triplet],
    rng: &mut R,
) -> Result<Tree> {
    let mut order = leaves.to_vec();
    order.shuffle(rng);
    build_on(n, &order, triplets)
}

/// The connected components of the Aho graph of `triplets` over `leaves`
/// (an edge `a - b` for every triplet `({a, b}, c)`), each in the order of
/// `leaves`, the components in order of first appearance; `position(x)` is
/// the index of leaf `x` in `leaves`. With more than one leaf, a single
/// component means no tree satisfies the triplets: the error names one.
pub(crate) fn aho_components(
    leaves: &[usize],
    triplets: &[Triplet],
    position: impl Fn(usize) -> usize,
) -> Result<Vec<Vec<usize>>> {
    fn find(uf: &mut [usize], mut x: usize) -> usize {
        while uf[x] != x {
            uf[x] = uf[uf[x]];
            x = uf[x];
        }
        x
    }
    let mut uf: Vec<usize> = (0..leaves.len()).collect();
    for t in triplets {
        let (x, y) = (find(&mut uf, position(t.a)), find(&mut uf, position(t.b)));
        if x != y {
            uf[x] = y;
        }
    }
    let mut comp_of = vec![usize::MAX; leaves.len()];
    let mut comps: Vec<Vec<usize>> = Vec::new();
    for (i, &leaf) in leaves.iter().enumerate() {
        let r = find(&mut uf, i);
        if comp_of[r] == usize::MAX {
            comp_of[r] = comps.len();
            comps.push(Vec::new());
        }
        comps[comp_of[r]].push(leaf);
    }
    if comps.len() == 1 && leaves.len() > 1 {
        let t = triplets[0];
        return Err(Error::new(ErrorKind::UnrealisableTriplets {
            a: t.a,
            b: t.b,
            c: t.c,
            points: leaves.len(),
        }));
    }
    Ok(comps)
}

/// BUILD on `leaves` with the triplets among them, using `pos` (one slot
/// per point) as scratch. The pending sides are kept on an explicit stack
/// (left before right, as a recursion would): a caterpillar over every point
/// is as deep as there are points.
fn rec(leaves: Vec<usize>, trips: Vec<Triplet>, pos: &mut [usize]) -> Result<Tree> {
    enum Task {
        Build(Vec<usize>, Vec<Triplet>),
        Join,
    }
    let mut tasks = vec![Task::Build(leaves, trips)];
    let mut done: Vec<Tree> = Vec::new();
    while let Some(task) = tasks.pop() {
        let (leaves, trips) = match task {
            Task::Join => {
                let r = done.pop().expect("the right side before its join");
                let l = done.pop().expect("the left side before its join");
                done.push(Tree::node(l, r));
                continue;
            }
            Task::Build(leaves, trips) => (leaves, trips),
        };
        if leaves.len() == 1 {
            done.push(Tree::Leaf(leaves[0]));
            continue;
        }
        for (i, &l) in leaves.iter().enumerate() {
            pos[l] = i;
        }
        let mut comps = aho_components(&leaves, &trips, |x| pos[x])?;
        comps.sort_by_key(|c| std::cmp::Reverse(c.len()));
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for c in comps {
            if left.len() <= right.len() {
                left.extend(c);
            } else {
                right.extend(c);
            }
        }
        let mut side = vec![0u8; pos.len()];
        for &l in &right {
            side[l] = 1;
        }
        let (mut tl, mut tr) = (Vec::new(), Vec::new());
        for t in trips {
            let s = [side[t.a], side[t.b], side[t.c]];
            if s == [0, 0, 0] {
                tl.push(t);
            } else if s == [1, 1, 1] {
                tr.push(t);
            }
        }
        tasks.push(Task::Join);
        tasks.push(Task::Build(right, tr));
        tasks.push(Task::Build(left, tl));
    }
    Ok(done.pop().expect("the root"))
}

/// The most points an [`LcaDepths`] is built for from a user's tree: its
/// depths are `u16`, and a tree over `n` leaves has depths below `n`.
pub(crate) const MAX_LCA_POINTS: usize = 1 << 16;

/// The depth of the lowest common ancestor of every pair of leaves of a rooted
/// tree (binary or not), the root at depth 0 and unary nodes not counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LcaDepths {
    n: usize,
    depth: Vec<u16>,
}

impl LcaDepths {
    /// From a list of children per node: `children[v]` (empty for a leaf),
    /// `leaf_of[v]` the point of leaf `v`, `root` the root node; `n` points.
    ///
    /// A depth counts the *branching* ancestors (nodes with two or more
    /// children) above the LCA: unary nodes, which a Newick target may nest
    /// without limit, are skipped. Every LCA of two leaves is a branching
    /// node, so the order of the depths of LCAs on one root path (all that
    /// triplets compare) is that of the plain depths, and a tree over `n`
    /// leaves has depths below `n`: `u16` holds them up to
    /// [`MAX_LCA_POINTS`] points (the public constructors check it; beyond,
    /// depths saturate).
    /// Post-order over an explicit stack: any depth.
    pub(crate) fn from_children(
        n: usize,
        children: &[Vec<usize>],
        leaf_of: &[Option<usize>],
        root: usize,
    ) -> LcaDepths {
        let mut depth = vec![0u16; n * n];
        // The leaves below each finished node, awaiting its parent.
        let mut done: Vec<Vec<usize>> = Vec::new();
        // (node, its depth, whether its children are done)
        let mut stack = vec![(root, 0u16, false)];
        while let Some((v, d, expanded)) = stack.pop() {
            if let Some(p) = leaf_of[v] {
                done.push(vec![p]);
                continue;
            }
            let kids = &children[v];
            if !expanded {
                let below = if kids.len() >= 2 {
                    d.saturating_add(1)
                } else {
                    d
                };
                stack.push((v, d, true));
                stack.extend(kids.iter().rev().map(|&c| (c, below, false)));
                continue;
            }
            let parts = done.split_off(done.len() - kids.len());
            for x in 0..parts.len() {
                for y in x + 1..parts.len() {
                    for &i in &parts[x] {
                        for &j in &parts[y] {
                            depth[i * n + j] = d;
                            depth[j * n + i] = d;
                        }
                    }
                }
            }
            done.push(parts.concat());
        }
        LcaDepths { n, depth }
    }

    /// From a binary [`Tree`] over `0..n`.
    ///
    /// # Errors
    ///
    /// A tree that is not over `0..n`, or more than 65,536 points (depths are `u16`).
    pub fn from_tree(tree: &Tree, n: usize) -> Result<LcaDepths> {
        check_lca_points(n)?;
        tree.validate(n, true)?;
        let mut children = Vec::new();
        let mut leaf_of = Vec::new();
        // Post-order numbering; the nodes awaiting their parent.
        let mut done: Vec<usize> = Vec::new();
        for t in tree.post_order() {
            let v = children.len();
            match t {
                Tree::Leaf(i) => {
                    children.push(Vec::new());
                    leaf_of.push(Some(*i));
                }
                Tree::Node(..) => {
                    let b = done.pop().expect("post-order: right child first");
                    let a = done.pop().expect("post-order: left child first");
                    children.push(vec![a, b]);
                    leaf_of.push(None);
                }
            }
            done.push(v);
        }
        let root = done.pop().expect("post-order ends with the root");
        Ok(LcaDepths::from_children(n, &children, &leaf_of, root))
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Depth of the LCA of points `i != j`.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> u16 {
        self.depth[i * self.n + j]
    }

    /// The triplet this tree asserts on three different points, or `None` when it
    /// leaves them unresolved (a multifurcation).
    pub fn resolve(&self, i: usize, j: usize, k: usize) -> Option<Triplet> {
        let (ij, ik, jk) = (self.get(i, j), self.get(i, k), self.get(j, k));
        if ij > ik {
            Some(Triplet { a: i, b: j, c: k })
        } else if ik > ij {
            Some(Triplet { a: i, b: k, c: j })
        } else if jk > ij {
            Some(Triplet { a: j, b: k, c: i })
        } else {
            None
        }
    }

    /// Whether this tree satisfies `({a, b}, c)`.
    #[inline]
    pub fn satisfies(&self, t: &Triplet) -> bool {
        let ab = self.get(t.a, t.b);
        ab > self.get(t.a, t.c)
    }

    /// Every triplet this tree resolves, `O(N³)`.
    pub fn triplets(&self) -> Vec<Triplet> {
        let n = self.n;
        let mut out = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                for k in j + 1..n {
                    if let Some(t) = self.resolve(i, j, k) {
                        out.push(t);
                    }
                }
            }
        }
        out
    }
}

/// Refuses more than [`MAX_LCA_POINTS`] points for an [`LcaDepths`].
pub(crate) fn check_lca_points(n: usize) -> Result<()> {
    if n > MAX_LCA_POINTS {
        return Err(Error::parameter(format!(
            "{n} points: tree depths are compared for at most {MAX_LCA_POINTS} points"
        )));
    }
    Ok(())
}

/// The triplet distance `TD(T*, T)` (Eq. 1): among the triplets resolved by the
/// target `T*`, the fraction that `T` does not satisfy, with the count of
/// resolved triplets. `O(N³)`. A target that resolves nothing gives distance 0.
///
/// # Panics
///
/// If the two trees are over different numbers of points.
pub fn triplet_distance(target: &LcaDepths, tree: &LcaDepths) -> (f64, u64) {
    assert_eq!(target.n, tree.n, "both trees must be over the same points");
    let n = target.n;
    let (mut resolved, mut wrong) = (0u64, 0u64);
    for i in 0..n {
        let ti = &target.depth[i * n..(i + 1) * n];
        let si = &tree.depth[i * n..(i + 1) * n];
        for j in i + 1..n {
            let tij = ti[j];
            let sij = si[j];
            let tj = &target.depth[j * n..(j + 1) * n];
            let sj = &tree.depth[j * n..(j + 1) * n];
            for k in j + 1..n {
                let (tik, tjk) = (ti[k], tj[k]);
                let ok = if tij > tik {
                    sij > si[k]
                } else if tik > tij {
                    si[k] > sij
                } else if tjk > tij {
                    sj[k] > sij
                } else {
                    continue;
                };
                resolved += 1;
                wrong += u64::from(!ok);
            }
        }
    }
    if resolved == 0 {
        (0.0, 0)
    } else {
        (wrong as f64 / resolved as f64, resolved)
    }
}
