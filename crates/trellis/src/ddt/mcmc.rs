//! Metropolis-Hastings over DDT trees with (constrained) subtree-prune-and-regraft
//! moves and a divergence-time move, the locations integrated out.
//!
//! # The SPR move
//!
//! Pick a node `s` other than the top node uniformly (`2N - 2` choices), remove its
//! parent `p` (the sibling takes `p`'s place) and regraft `s` where a new point
//! would diverge in the DDT's generative process run on the pruned tree: start at
//! `t = 0` on the stem; on a segment `[u, v]` that `m` earlier points traversed,
//! do not diverge with probability `((1 - t_v)/(1 - t_u))^(c/m)`, otherwise
//! diverge at a time drawn exactly (inverse CDF) from the density
//! `(c/m)/(1 - t) · ((1 - t)/(1 - t_u))^(c/m)` truncated to the segment; at a node,
//! follow a child with probability proportional to its leaf count. The new parent
//! must be earlier than `s`: a segment that reaches a leaf or a time `≥ t_s` forces
//! the divergence before `min(t_v, t_s)` (the truncated density, normalised).
//!
//! **Constraints** restrict the walk exactly to the regrafts that keep every
//! triplet `({a, b}, c)` satisfied (paper §3.3). Only triplets with exactly one
//! point in the pruned subtree matter (two points in it are either always
//! satisfied or impossible in a valid tree). With `x = LCA(a, b)` and `y = LCA(b, c)`
//! in the pruned tree:
//!
//! - `c` in the subtree: the walk may diverge on the segment into `x` but must not
//!   go below `x`;
//! - `a` in the subtree (or `b`, symmetric): the walk must go through every node
//!   from the top to `y` without diverging (at their parents the other child is
//!   excluded), and must not enter the child of `y` that holds `c`.
//!
//! A child that allows neither diverging nor descending is excluded and the
//! branch choice is renormalised over the other. The proposal density `q` of a
//! regraft is the product of the choice, no-divergence and divergence terms along
//! the path; the reverse move prunes the same `s` from the same pruned tree and
//! regrafts at the old place, so the acceptance ratio is
//! `π(T') q(old) / (π(T) q(new))` with both `q` evaluated by the same constrained
//! walk (the old place's `q` by following its path).
//!
//! # The time move
//!
//! Pick an internal node, map its `1 - t` to `y ∈ (0, 1)` between its latest child
//! and its parent, and take a Gaussian random-walk step on `logit(y)`; the
//! acceptance ratio includes the Jacobian `y (1 - y)`.
//!
//! # Adding a constraint
//!
//! A new triplet that the current tree violates is enforced as in the paper: the
//! subtree under `LCA(a, b)` is replaced by a BUILD tree of its leaves under every
//! constraint inside them. BUILD leaves the bipartition of its components free;
//! this implementation takes, at every level, the bipartition closest to the
//! current tree's split (each component goes where most of its points are) and the
//! current tree's divergence times, so the rebuilt subtree changes only what the
//! constraints force. (A random or size-balanced bipartition, as in the reference
//! code, discards the data fit of the whole subtree, which the sampler then needs
//! many iterations to recover.)
//!
//! # Cost
//!
//! Every node caches its Gaussian message and the log density of its subtree. A
//! move changes the subtrees of the ancestors of at most two nodes, so an SPR
//! proposal costs `O(depth · d)` for the likelihood plus the walk, `O(depth)`, plus
//! `O(|s| + K_s · depth)` for the `K_s` triplets touching the pruned subtree; a
//! rejected move is undone the same way. No allocation happens in the loop.

use std::collections::HashMap;

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::{Error, Result};

use super::model::{Ddt, LN_TWO_PI};
use super::tree::{DdtTree, NONE};
use super::triplets::{self, Triplet};

/// Flags of the constrained walk, per node of the pruned tree.
const NO_DESCEND: u8 = 1;
const FORCE: u8 = 2;
const BANNED: u8 = 4;

/// How [`Chain::add_constraint`] chooses the BUILD tree that replaces the
/// subtree under `LCA(a, b)` (BUILD may split its components in any way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rebuild {
    /// Follow the current tree's split at every level and keep its times (the default).
    #[default]
    Guided,
    /// Size-balanced splits of the components in random order, times halving
    /// downwards from the LCA's (the reference code's choice).
    Balanced,
}

impl crate::Named for Rebuild {
    const WHAT: &'static str = "rebuild";
    const CHOICES: &'static [(&'static str, Rebuild, &'static str)] = &[
        ("guided", Rebuild::Guided, "Follow the current tree"),
        (
            "balanced",
            Rebuild::Balanced,
            "Size-balanced, random order (the reference code)",
        ),
    ];
}

/// Acceptance counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// SPR moves proposed.
    pub spr_proposed: u64,
    /// SPR moves accepted.
    pub spr_accepted: u64,
    /// Time moves proposed.
    pub time_proposed: u64,
    /// Time moves accepted.
    pub time_accepted: u64,
}

/// A Metropolis-Hastings sampler of the DDT posterior over trees given the data
/// and a set of triplet constraints.
#[derive(Clone, Debug)]
pub struct Chain {
    model: Ddt,
    tree: DdtTree,
    mu: Vec<f64>,
    var: Vec<f64>,
    sub: Vec<f64>,
    total: f64,
    constraints: Vec<Triplet>,
    by_leaf: Vec<Vec<u32>>,
    rng: Xoshiro256PlusPlus,
    stats: Stats,
    time_step: f64,
    rebuild: Rebuild,
    // Scratch.
    flags: Vec<u8>,
    touched: Vec<u32>,
    in_s: Vec<bool>,
    s_leaves: Vec<u32>,
    path: Vec<u32>,
    stamp: Vec<u32>,
    stamp_id: u32,
}

impl Chain {
    /// A sampler without constraints, started from a balanced tree over the points
    /// in a random order (times by depth, see [`DdtTree::with_depth_times`]).
    pub fn new(model: Ddt, seed: u64) -> Chain {
        Chain::with_constraints(model, Vec::new(), seed).expect("no constraints, no conflict")
    }

    /// A sampler under `constraints`, started from BUILD's tree over the points in
    /// a random order.
    ///
    /// # Errors
    ///
    /// A triplet naming a point out of range, or an unrealisable set.
    pub fn with_constraints(model: Ddt, constraints: Vec<Triplet>, seed: u64) -> Result<Chain> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let n = model.n;
        triplets::check(n, &constraints)?;
        let leaves: Vec<usize> = (0..n).collect();
        let topo = triplets::build_random(n, &leaves, &constraints, &mut rng)?;
        let tree = DdtTree::with_depth_times(&topo)?;
        Chain::start(model, tree, constraints, rng)
    }

    /// A sampler started from a given tree.
    ///
    /// # Errors
    ///
    /// A tree over a different number of points, a triplet out of range, or a
    /// triplet the tree violates.
    pub fn with_tree(
        model: Ddt,
        tree: DdtTree,
        constraints: Vec<Triplet>,
        seed: u64,
    ) -> Result<Chain> {
        if tree.n != model.n {
            return Err(Error::tree(format!(
                "the tree has {} leaves but the model {} points",
                tree.n, model.n
            )));
        }
        triplets::check(model.n, &constraints)?;
        if let Some(t) = constraints.iter().find(|t| !tree.satisfies(t)) {
            return Err(Error::tree(format!(
                "the starting tree violates the triplet ({{{}, {}}}, {})",
                t.a, t.b, t.c
            )));
        }
        Chain::start(
            model,
            tree,
            constraints,
            Xoshiro256PlusPlus::seed_from_u64(seed),
        )
    }

    fn start(
        model: Ddt,
        tree: DdtTree,
        constraints: Vec<Triplet>,
        rng: Xoshiro256PlusPlus,
    ) -> Result<Chain> {
        let (n, d) = (model.n, model.d);
        let m = 2 * n - 1;
        let mut mu = vec![0.0; m * d];
        let mut var = vec![0.0; m * d];
        mu[..n * d].copy_from_slice(&model.x);
        for i in 0..n {
            var[i * d..(i + 1) * d].copy_from_slice(&model.leaf_var);
        }
        let mut s = Chain {
            model,
            tree,
            mu,
            var,
            sub: vec![0.0; m],
            total: 0.0,
            constraints: Vec::new(),
            by_leaf: vec![Vec::new(); n],
            rng,
            stats: Stats::default(),
            time_step: 1.0,
            rebuild: Rebuild::Guided,
            flags: vec![0; m],
            touched: Vec::new(),
            in_s: vec![false; n],
            s_leaves: Vec::with_capacity(n),
            path: Vec::with_capacity(m),
            stamp: vec![0; m],
            stamp_id: 0,
        };
        for t in constraints {
            s.push_constraint(t);
        }
        s.refresh_all();
        Ok(s)
    }

    fn push_constraint(&mut self, t: Triplet) {
        let id = self.constraints.len() as u32;
        self.constraints.push(t);
        for p in [t.a, t.b, t.c] {
            self.by_leaf[p].push(id);
        }
    }

    /// The model.
    pub fn model(&self) -> &Ddt {
        &self.model
    }

    /// The current tree.
    pub fn tree(&self) -> &DdtTree {
        &self.tree
    }

    /// The constraints in force.
    pub fn constraints(&self) -> &[Triplet] {
        &self.constraints
    }

    /// Chooses how a violated new triplet rebuilds the tree (default [`Rebuild::Guided`]).
    pub fn set_rebuild(&mut self, rebuild: Rebuild) {
        self.rebuild = rebuild;
    }

    /// Acceptance counts so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The log joint density `ln p(T, t) + ln p(X | T, t)` of the current state
    /// (maintained incrementally; equals [`Ddt::log_joint`] up to rounding).
    pub fn log_joint(&self) -> f64 {
        self.total
    }

    /// The random number generator (for callers that draw in the same stream).
    pub fn rng(&mut self) -> &mut Xoshiro256PlusPlus {
        &mut self.rng
    }

    /// One iteration: an SPR proposal, then a time proposal.
    pub fn step(&mut self) {
        self.spr();
        self.time_move();
    }

    /// Runs `iters` iterations.
    pub fn run(&mut self, iters: usize) {
        for _ in 0..iters {
            self.step();
        }
    }

    /// Runs `iters` iterations with a time limit and a progress callback
    /// (stage `"mcmc"`, counting iterations, called every 1024 of them; it may
    /// cancel). Stopped early, the chain keeps the iterations it made.
    pub fn run_with(&mut self, iters: usize, options: &crate::Options<'_>) -> Result<()> {
        let mut ticker = crate::base::run::Ticker::new(options, "mcmc", iters as u64)?;
        let mut done = 0;
        while done < iters {
            let batch = (iters - done).min(1024);
            self.run(batch);
            done += batch;
            ticker.advance(batch as u64)?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- messages

    /// Recomputes the message and subtree density of internal node `v` from its children.
    #[inline]
    fn refresh(&mut self, v: usize) {
        let d = self.model.d;
        let t = &self.tree;
        let [a, b] = t.kids[v];
        let (a, b) = (a as usize, b as usize);
        let ta = t.om[v] - t.om[a];
        let tb = t.om[v] - t.om[b];
        let mut quad = 0.0;
        let mut ln_prod = 0.0;
        let mut prod = 1.0;
        for j in 0..d {
            let sig = self.model.sigma[j];
            let sa = self.var[a * d + j] + sig * ta;
            let sb = self.var[b * d + j] + sig * tb;
            let s = sa + sb;
            let inv = 1.0 / s;
            let (ma, mb) = (self.mu[a * d + j], self.mu[b * d + j]);
            let diff = ma - mb;
            quad += diff * diff * inv;
            prod *= s;
            if j % 8 == 7 {
                ln_prod += prod.ln();
                prod = 1.0;
            }
            self.var[v * d + j] = sa * sb * inv;
            self.mu[v * d + j] = (ma * sb + mb * sa) * inv;
        }
        ln_prod += prod.ln();
        let mut sub = self.sub[a] + self.sub[b] - 0.5 * (d as f64 * LN_TWO_PI + ln_prod + quad);
        let lom_v = t.lom[v];
        for k in [a, b] {
            if k >= t.n {
                let [ka, kb] = t.kids[k];
                sub += self.model.segment(
                    t.lom[k],
                    lom_v,
                    t.count[k] as usize,
                    t.count[ka as usize] as usize,
                    t.count[kb as usize] as usize,
                );
            }
        }
        self.sub[v] = sub;
    }

    fn refresh_path(&mut self, mut v: u32) {
        while v != NONE {
            self.refresh(v as usize);
            v = self.tree.parent[v as usize];
        }
    }

    fn refresh_all(&mut self) {
        // Children before parents: reverse pre-order.
        let mut order = Vec::with_capacity(self.tree.n);
        let mut stack = vec![self.tree.top];
        while let Some(v) = stack.pop() {
            if (v as usize) >= self.tree.n {
                order.push(v);
                stack.extend(self.tree.kids[v as usize]);
            }
        }
        for &v in order.iter().rev() {
            self.refresh(v as usize);
        }
        self.total = self.compute_total();
    }

    fn compute_total(&self) -> f64 {
        let t = &self.tree;
        let d = self.model.d;
        let top = t.top as usize;
        let [a, b] = t.kids[top];
        let mut total = self.sub[top]
            + self.model.segment(
                t.lom[top],
                0.0,
                t.count[top] as usize,
                t.count[a as usize] as usize,
                t.count[b as usize] as usize,
            );
        let t_top = 1.0 - t.om[top];
        let mut quad = 0.0;
        let mut ln_s = 0.0;
        for j in 0..d {
            let s = self.var[top * d + j] + self.model.sigma0[j] + self.model.sigma[j] * t_top;
            let diff = self.mu[top * d + j] - self.model.mu0[j];
            quad += diff * diff / s;
            ln_s += s.ln();
        }
        total -= 0.5 * (d as f64 * LN_TWO_PI + ln_s + quad);
        total
    }

    // ---------------------------------------------------------------- structure

    /// Removes `s`'s parent `p` from the tree (the sibling takes its place).
    fn detach(&mut self, s: u32) {
        let t = &mut self.tree;
        let p = t.parent[s as usize];
        let [k0, k1] = t.kids[p as usize];
        let w = if k0 == s { k1 } else { k0 };
        let g = t.parent[p as usize];
        t.parent[w as usize] = g;
        if g == NONE {
            t.top = w;
        } else {
            let kg = &mut t.kids[g as usize];
            if kg[0] == p {
                kg[0] = w;
            } else {
                kg[1] = w;
            }
            let ms = t.count[s as usize];
            let mut x = g;
            while x != NONE {
                t.count[x as usize] -= ms;
                x = t.parent[x as usize];
            }
        }
        t.parent[p as usize] = NONE;
        t.kids[p as usize] = [s, NONE];
    }

    /// Puts `p` (parent of `s`) back into the tree above `v`, at `1 - t = om`.
    fn attach(&mut self, s: u32, p: u32, v: u32, om: f64, lom: f64) {
        let t = &mut self.tree;
        let u = t.parent[v as usize];
        t.kids[p as usize] = [s, v];
        t.parent[v as usize] = p;
        t.parent[s as usize] = p;
        t.count[p as usize] = t.count[s as usize] + t.count[v as usize];
        t.om[p as usize] = om;
        t.lom[p as usize] = lom;
        t.parent[p as usize] = u;
        if u == NONE {
            t.top = p;
        } else {
            let ku = &mut t.kids[u as usize];
            if ku[0] == v {
                ku[0] = p;
            } else {
                ku[1] = p;
            }
            let ms = t.count[s as usize];
            let mut x = u;
            while x != NONE {
                t.count[x as usize] += ms;
                x = t.parent[x as usize];
            }
        }
    }

    fn lca(&mut self, a: u32, b: u32) -> u32 {
        self.stamp_id = self.stamp_id.wrapping_add(1);
        if self.stamp_id == 0 {
            self.stamp.fill(0);
            self.stamp_id = 1;
        }
        let id = self.stamp_id;
        let mut x = a;
        while x != NONE {
            self.stamp[x as usize] = id;
            x = self.tree.parent[x as usize];
        }
        let mut y = b;
        while self.stamp[y as usize] != id {
            y = self.tree.parent[y as usize];
        }
        y
    }

    fn flag(&mut self, v: u32, f: u8) {
        if self.flags[v as usize] == 0 {
            self.touched.push(v);
        }
        self.flags[v as usize] |= f;
    }

    /// Sets the walk's flags for the triplets with exactly one point below `s`
    /// (the tree is pruned).
    fn mark_constraints(&mut self, s: u32) {
        if self.constraints.is_empty() {
            return;
        }
        let mut leaves = std::mem::take(&mut self.s_leaves);
        // The leaves below s, with the path buffer as the stack (no allocation).
        leaves.clear();
        let mut stack = std::mem::take(&mut self.path);
        stack.clear();
        stack.push(s);
        while let Some(v) = stack.pop() {
            if (v as usize) < self.tree.n {
                leaves.push(v);
            } else {
                stack.extend(self.tree.kids[v as usize]);
            }
        }
        self.path = stack;
        for &l in &leaves {
            self.in_s[l as usize] = true;
        }
        for &l in &leaves {
            for idx in 0..self.by_leaf[l as usize].len() {
                let t = self.constraints[self.by_leaf[l as usize][idx] as usize];
                let inside = self.in_s[t.a] as u8 + self.in_s[t.b] as u8 + self.in_s[t.c] as u8;
                if inside != 1 {
                    continue;
                }
                if t.c == l as usize {
                    let x = self.lca(t.a as u32, t.b as u32);
                    self.flag(x, NO_DESCEND);
                } else {
                    let other = if t.a == l as usize { t.b } else { t.a } as u32;
                    let c = t.c as u32;
                    let y = self.lca(other, c);
                    let mut z = y;
                    while z != NONE && self.flags[z as usize] & FORCE == 0 {
                        self.flag(z, FORCE);
                        z = self.tree.parent[z as usize];
                    }
                    let mut yc = c;
                    while self.tree.parent[yc as usize] != y {
                        yc = self.tree.parent[yc as usize];
                    }
                    self.flag(yc, BANNED);
                }
            }
        }
        for &l in &leaves {
            self.in_s[l as usize] = false;
        }
        self.s_leaves = leaves;
    }

    fn clear_marks(&mut self) {
        for &v in &self.touched {
            self.flags[v as usize] = 0;
        }
        self.touched.clear();
    }

    /// (may descend into `v`, may diverge on the segment into `v`), given the
    /// pruned subtree's `1 - t_s = om_s`.
    #[inline]
    fn modes(&self, v: u32, om_s: f64) -> (bool, bool) {
        let f = self.flags[v as usize];
        if f & BANNED != 0 {
            return (false, false);
        }
        let descend =
            (v as usize) >= self.tree.n && self.tree.om[v as usize] > om_s && f & NO_DESCEND == 0;
        let diverge = f & FORCE == 0;
        (descend, diverge)
    }

    /// Whether the walk may enter child `v` whose sibling is `sib`: `v` must allow
    /// diverging or descending, and the sibling must not be required (a node on
    /// the way to some `y` forces the choice).
    #[inline]
    fn allowed(&self, v: u32, sib: u32, om_s: f64) -> bool {
        let (a, b) = self.modes(v, om_s);
        (a || b) && self.flags[sib as usize] & FORCE == 0
    }

    /// Simulates the constrained regraft walk: `(branch node, 1 - t, ln(1 - t), ln q)`.
    fn propose(&mut self, om_s: f64, lom_s: f64) -> Option<(u32, f64, f64, f64)> {
        let c = self.model.c;
        let mut lq = 0.0;
        let mut lom_u = 0.0;
        let mut v = self.tree.top;
        loop {
            let (desc, div) = self.modes(v, om_s);
            let m = self.tree.count[v as usize] as f64;
            let r = c / m;
            let lom_v = self.tree.lom[v as usize];
            let mut descend = false;
            if div {
                let lom_end = if desc { lom_v } else { lom_v.max(lom_s) };
                let ln_stay = r * (lom_end - lom_u);
                if desc {
                    let u: f64 = self.rng.random();
                    if u < ln_stay.exp() {
                        lq += ln_stay;
                        descend = true;
                    }
                }
                if !descend {
                    // Divergence at a time drawn from the density truncated to the segment.
                    let f_end = -ln_stay.exp_m1();
                    let u: f64 = self.rng.random();
                    let lom = lom_u + (-(u * f_end)).ln_1p() / r;
                    if !(lom < lom_u && lom > lom_end) {
                        return None;
                    }
                    lq += r.ln() - lom + r * (lom - lom_u);
                    if !desc {
                        lq -= f_end.ln();
                    }
                    return Some((v, lom.exp(), lom, lq));
                }
            } else if !desc {
                return None;
            }
            // Descend into v and choose a child.
            lom_u = lom_v;
            let [a, b] = self.tree.kids[v as usize];
            let (oa, ob) = (self.allowed(a, b, om_s), self.allowed(b, a, om_s));
            v = match (oa, ob) {
                (true, true) => {
                    let (ma, mb) = (
                        self.tree.count[a as usize] as f64,
                        self.tree.count[b as usize] as f64,
                    );
                    let u: f64 = self.rng.random();
                    if u * (ma + mb) < ma {
                        lq += (ma / (ma + mb)).ln();
                        a
                    } else {
                        lq += (mb / (ma + mb)).ln();
                        b
                    }
                }
                (true, false) => a,
                (false, true) => b,
                (false, false) => return None,
            };
        }
    }

    /// `ln q` of regrafting onto the segment into `w` at `ln(1 - t) = lom_p`
    /// (`-∞` when the walk cannot produce it).
    fn eval(&mut self, w: u32, lom_p: f64, om_s: f64, lom_s: f64) -> f64 {
        let c = self.model.c;
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let mut x = w;
        while x != NONE {
            path.push(x);
            x = self.tree.parent[x as usize];
        }
        let mut lq = 0.0;
        let mut lom_u = 0.0;
        let mut ok = true;
        for i in (0..path.len()).rev() {
            let v = path[i];
            let (desc, div) = self.modes(v, om_s);
            let r = c / self.tree.count[v as usize] as f64;
            let lom_v = self.tree.lom[v as usize];
            if i > 0 {
                if !desc {
                    ok = false;
                    break;
                }
                if div {
                    lq += r * (lom_v - lom_u);
                }
                let next = path[i - 1];
                let [a, b] = self.tree.kids[v as usize];
                let other = if a == next { b } else { a };
                if !self.allowed(next, other, om_s) {
                    ok = false;
                    break;
                }
                if self.allowed(other, next, om_s) {
                    let mn = self.tree.count[next as usize] as f64;
                    let mo = self.tree.count[other as usize] as f64;
                    lq += (mn / (mn + mo)).ln();
                }
                lom_u = lom_v;
            } else {
                if !div {
                    ok = false;
                    break;
                }
                let lom_end = if desc { lom_v } else { lom_v.max(lom_s) };
                if !(lom_p < lom_u && lom_p > lom_end) {
                    ok = false;
                    break;
                }
                lq += r.ln() - lom_p + r * (lom_p - lom_u);
                if !desc {
                    lq -= (-(r * (lom_end - lom_u)).exp_m1()).ln();
                }
            }
        }
        self.path = path;
        if ok { lq } else { f64::NEG_INFINITY }
    }

    /// One SPR Metropolis-Hastings proposal; returns whether it was accepted.
    pub fn spr(&mut self) -> bool {
        self.stats.spr_proposed += 1;
        let n_nodes = self.tree.parent.len() as u32;
        let k = self.rng.random_range(0..n_nodes - 1);
        let s = if k >= self.tree.top { k + 1 } else { k };
        let p = self.tree.parent[s as usize];
        let [k0, k1] = self.tree.kids[p as usize];
        let w = if k0 == s { k1 } else { k0 };
        let g = self.tree.parent[p as usize];
        let (om_p, lom_p) = (self.tree.om[p as usize], self.tree.lom[p as usize]);
        let (om_s, lom_s) = (self.tree.om[s as usize], self.tree.lom[s as usize]);
        let old_total = self.total;

        self.detach(s);
        self.mark_constraints(s);
        let back = self.eval(w, lom_p, om_s, lom_s);
        let fwd = self.propose(om_s, lom_s);
        self.clear_marks();
        let Some((v, om, lom, lq_fwd)) = fwd else {
            self.attach(s, p, w, om_p, lom_p);
            return false;
        };
        debug_assert!(back.is_finite(), "the current place must be reachable");
        self.attach(s, p, v, om, lom);
        if g != NONE {
            self.refresh_path(g);
        }
        self.refresh_path(p);
        let new_total = self.compute_total();
        let log_alpha = new_total - old_total + back - lq_fwd;
        let u: f64 = self.rng.random();
        if log_alpha >= 0.0 || u.ln() < log_alpha {
            self.total = new_total;
            self.stats.spr_accepted += 1;
            true
        } else {
            let u_new = self.tree.parent[p as usize];
            self.detach(s);
            self.attach(s, p, w, om_p, lom_p);
            if u_new != NONE {
                self.refresh_path(u_new);
            }
            self.refresh_path(p);
            self.total = old_total;
            false
        }
    }

    /// One divergence-time Metropolis-Hastings proposal; returns whether it was accepted.
    pub fn time_move(&mut self) -> bool {
        self.stats.time_proposed += 1;
        let n = self.tree.n as u32;
        let v = self.rng.random_range(n..2 * n - 1) as usize;
        let [a, b] = self.tree.kids[v];
        let lo = self.tree.om[a as usize].max(self.tree.om[b as usize]);
        let hi = match self.tree.parent[v] {
            NONE => 1.0,
            p => self.tree.om[p as usize],
        };
        let (om_old, lom_old) = (self.tree.om[v], self.tree.lom[v]);
        let y = (om_old - lo) / (hi - lo);
        let z =
            (y / (1.0 - y)).ln() + self.time_step * crate::random::standard_normal(&mut self.rng);
        let y_new = 1.0 / (1.0 + (-z).exp());
        let om_new = lo + y_new * (hi - lo);
        if !(om_new > lo && om_new < hi && y_new > 0.0 && y_new < 1.0) {
            return false;
        }
        let old_total = self.total;
        self.tree.om[v] = om_new;
        self.tree.lom[v] = om_new.ln();
        self.refresh_path(v as u32);
        let new_total = self.compute_total();
        let log_alpha = new_total - old_total + (y_new * (1.0 - y_new)).ln() - (y * (1.0 - y)).ln();
        let u: f64 = self.rng.random();
        if log_alpha >= 0.0 || u.ln() < log_alpha {
            self.total = new_total;
            self.stats.time_accepted += 1;
            true
        } else {
            self.tree.om[v] = om_old;
            self.tree.lom[v] = lom_old;
            self.refresh_path(v as u32);
            self.total = old_total;
            false
        }
    }

    // ---------------------------------------------------------------- constraints

    /// Adds the triplet `t` to the constraints. If the current tree violates it, the
    /// subtree under `LCA(a, b)` is replaced by BUILD's tree over its leaves and the
    /// constraints inside them (paper §3.3). BUILD may split the components of its
    /// Aho graph in any way; here each level follows the current tree's split as far
    /// as the constraints allow, and keeps the current times (see the module docs).
    /// `O(|leaves| · depth)` per level. Returns whether the tree was rebuilt.
    ///
    /// # Errors
    ///
    /// A point out of range or repeated, or a triplet that conflicts with the
    /// constraints already in force (then nothing changes).
    pub fn add_constraint(&mut self, t: Triplet) -> Result<bool> {
        triplets::check(self.model.n, &[t])?;
        if self.tree.satisfies(&t) {
            self.push_constraint(t);
            return Ok(false);
        }
        let z = self.tree.lca(t.a as u32, t.b as u32);
        let mut leaves = Vec::new();
        self.tree.leaves_below(z, &mut leaves);
        let mut inside = vec![false; self.model.n];
        for &l in &leaves {
            inside[l as usize] = true;
        }
        let mut local: Vec<Triplet> = self
            .constraints
            .iter()
            .copied()
            .filter(|x| inside[x.a] && inside[x.b] && inside[x.c])
            .collect();
        local.push(t);
        let om_up = match self.tree.parent[z as usize] {
            NONE => 1.0,
            p => self.tree.om[p as usize],
        };
        let mut oms = Vec::with_capacity(leaves.len());
        let topo = match self.rebuild {
            Rebuild::Guided => self.guided_build(leaves, local, om_up, &mut oms)?,
            Rebuild::Balanced => {
                let ls: Vec<usize> = leaves.iter().map(|&l| l as usize).collect();
                let topo = triplets::build_random(self.model.n, &ls, &local, &mut self.rng)?;
                // Times by halving from z's: pre-order, each node half its parent's 1 - t.
                fn halve(t: &crate::base::tree::Tree, om: f64, out: &mut Vec<f64>) {
                    if let crate::base::tree::Tree::Node(l, r) = t {
                        out.push(om);
                        halve(l, om / 2.0, out);
                        halve(r, om / 2.0, out);
                    }
                }
                halve(&topo, self.tree.om[z as usize], &mut oms);
                topo
            }
        };
        // Reuse the internal node ids under z, z itself for the new subtree's root.
        let mut internal = Vec::new();
        let mut stack = vec![z];
        while let Some(v) = stack.pop() {
            if (v as usize) >= self.tree.n {
                internal.push(v);
                stack.extend(self.tree.kids[v as usize]);
            }
        }
        let mut ids = internal.into_iter();
        let mut oms = oms.into_iter();
        fn lay(
            tree: &mut DdtTree,
            topo: &crate::base::tree::Tree,
            id: Option<u32>,
            ids: &mut dyn Iterator<Item = u32>,
            oms: &mut dyn Iterator<Item = f64>,
        ) -> u32 {
            match topo {
                crate::base::tree::Tree::Leaf(i) => *i as u32,
                crate::base::tree::Tree::Node(l, r) => {
                    let v = id.unwrap_or_else(|| ids.next().expect("as many internal nodes"));
                    let om = oms.next().expect("one time per internal node");
                    tree.om[v as usize] = om;
                    tree.lom[v as usize] = om.ln();
                    let a = lay(tree, l, None, ids, oms);
                    let b = lay(tree, r, None, ids, oms);
                    tree.kids[v as usize] = [a, b];
                    tree.parent[a as usize] = v;
                    tree.parent[b as usize] = v;
                    tree.count[v as usize] = tree.count[a as usize] + tree.count[b as usize];
                    v
                }
            }
        }
        // z is popped first, so it is not in the remaining ids.
        let _ = ids.next();
        let root = lay(&mut self.tree, &topo, Some(z), &mut ids, &mut oms);
        debug_assert_eq!(root, z);
        self.push_constraint(t);
        self.refresh_all();
        debug_assert!(self.constraints.iter().all(|c| self.tree.satisfies(c)));
        Ok(true)
    }

    /// BUILD over `leaves` and `trips` (all inside them), choosing at every level the
    /// bipartition of the Aho graph's components that follows the current tree: each
    /// component goes to the side of the current split (at the LCA of `leaves`) that
    /// holds most of its points. Any bipartition of the components is valid for
    /// BUILD; this one keeps what the constraints do not force to change. The
    /// times (as `1 - t`, pushed to `oms` in pre-order) are those of the current
    /// LCAs, lowered where needed to stay below the parent.
    fn guided_build(
        &self,
        leaves: Vec<u32>,
        trips: Vec<Triplet>,
        om_parent: f64,
        oms: &mut Vec<f64>,
    ) -> Result<crate::base::tree::Tree> {
        use crate::base::tree::Tree;
        if leaves.len() == 1 {
            return Ok(Tree::Leaf(leaves[0] as usize));
        }
        let t = &self.tree;
        // Components of the Aho graph.
        let mut pos: HashMap<usize, usize> = HashMap::with_capacity(leaves.len());
        for (i, &l) in leaves.iter().enumerate() {
            pos.insert(l as usize, i);
        }
        let as_usize: Vec<usize> = leaves.iter().map(|&l| l as usize).collect();
        let comps: Vec<Vec<u32>> = super::triplets::aho_components(&as_usize, &trips, |x| pos[&x])?
            .into_iter()
            .map(|c| c.into_iter().map(|l| l as u32).collect())
            .collect();
        // The current tree's split of these leaves.
        let g = leaves[1..].iter().fold(leaves[0], |g, &l| t.lca(g, l));
        let first = t.kids[g as usize][0];
        let side_of = |l: u32| -> bool {
            let mut x = l;
            while t.parent[x as usize] != g {
                x = t.parent[x as usize];
            }
            x == first
        };
        let mut left: Vec<u32> = Vec::new();
        let mut right: Vec<u32> = Vec::new();
        let mut lean: Vec<(usize, f64)> = Vec::with_capacity(comps.len());
        for (k, c) in comps.iter().enumerate() {
            let on_left = c.iter().filter(|&&l| side_of(l)).count();
            lean.push((k, on_left as f64 / c.len() as f64));
        }
        let mut to_left = vec![false; comps.len()];
        for &(k, f) in &lean {
            to_left[k] = f > 0.5 || (f == 0.5 && comps[k].len() % 2 == 0);
        }
        if to_left.iter().all(|&x| x) || to_left.iter().all(|&x| !x) {
            // Everything leans one way: move the component leaning least that way.
            let all_left = to_left[0];
            let k = lean
                .iter()
                .min_by(|a, b| {
                    let (fa, fb) = if all_left { (a.1, b.1) } else { (-a.1, -b.1) };
                    fa.total_cmp(&fb)
                })
                .map(|x| x.0)
                .expect("two components");
            to_left[k] = !all_left;
        }
        for (k, c) in comps.into_iter().enumerate() {
            if to_left[k] {
                left.extend(c);
            } else {
                right.extend(c);
            }
        }
        let mut side = HashMap::with_capacity(right.len());
        for &l in &right {
            side.insert(l as usize, ());
        }
        let (mut tl, mut tr) = (Vec::new(), Vec::new());
        for x in trips {
            let r = [x.a, x.b, x.c]
                .iter()
                .filter(|p| side.contains_key(p))
                .count();
            if r == 0 {
                tl.push(x);
            } else if r == 3 {
                tr.push(x);
            }
        }
        let om_g = t.om[g as usize];
        let om = if om_g < om_parent {
            om_g
        } else {
            om_parent * 0.9
        };
        oms.push(om);
        let l = self.guided_build(left, tl, om, oms)?;
        let r = self.guided_build(right, tr, om, oms)?;
        Ok(Tree::node(l, r))
    }
}
