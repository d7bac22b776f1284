//! The search itself: lazily created vertices with one min-heap each
//! (Algorithm 1; see the [module docs](super)).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;
use std::time::Instant;

use super::Set;
use crate::base::run::{Options, Progress, ProgressFn};
use crate::base::set::{SetMapOf, SetRepr};
use crate::base::tree::{ScoredTree, Tree};
use crate::error::{Error, ErrorKind, Result};
use crate::models::{Cluster, Search, tree_cost};

/// The result of a search. It serializes with the fields of `best` (`tree`,
/// `log_potential`) at the top level.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome {
    /// The best hierarchy found (canonical form) with `log φ(H)`
    /// ([`Search::log_potential_of_cost`] of its cost).
    #[serde(flatten)]
    pub best: ScoredTree,
    /// Its cost, summed split by split ([`tree_cost`](crate::tree_cost)).
    pub cost: f64,
    /// True only for a complete search of the full trellis with an
    /// admissible heuristic: then `tree` is a MAP hierarchy.
    pub exact: bool,
    /// Vertices explored (their heaps filled), over all rounds.
    pub explored: u64,
    /// Splits scored and pushed onto heaps, over all rounds.
    pub splits: u64,
    /// Trellis vertices created (in the last round).
    pub vertices: u64,
    /// Search iterations (walks of the current partial hierarchy), over all rounds.
    pub iterations: u64,
    /// Rounds completed (1 for the exact search).
    pub rounds: usize,
    /// How clusters were stored: `"u128"` (up to 128 points) or `"wide"`
    /// (a [`WideSet`](crate::WideSet) of `⌈n/64⌉` words).
    pub sets: &'static str,
    /// Bytes one trellis vertex costs: its record (cluster, summary,
    /// bounds), its entry in the hash index (a second copy of the cluster)
    /// and the clusters' heap words, at the load of a full index.
    pub bytes_per_vertex: u64,
    /// Bytes one split costs: its heap entry, plus (approximate search)
    /// the pair of clusters the growing sparse trellis keeps for it.
    pub bytes_per_split: u64,
    /// The most bytes the search held (as accounted against the memory
    /// budget), over all rounds.
    pub peak_bytes: u64,
}

/// Exact A* on the full trellis: every split of an explored vertex enters its
/// heap. Returns a lowest-cost hierarchy; [`Outcome::exact`] tells whether the
/// model's heuristic is proven admissible (and so whether the tree is
/// guaranteed optimal).
///
/// # Errors
///
/// No points, more than 128, the memory budget (by default half the memory
/// available) or the time limit exceeded, cancelled by the progress callback
/// (stage `"search"`, counting explored vertices), or no hierarchy of finite
/// cost.
///
/// # Example
///
/// ```
/// use trellis::astar::exact;
/// use trellis::{Hcc, Matrix, Options, Weights};
///
/// let w = Weights::from_matrix(&Matrix::from_rows(vec![
///     vec![0.0, 0.9, -0.5, -0.6],
///     vec![0.9, 0.0, -0.4, -0.5],
///     vec![-0.5, -0.4, 0.0, 0.8],
///     vec![-0.6, -0.5, 0.8, 0.0],
/// ])?)?;
/// let found = exact(&Hcc::new(&w, 1.0)?, &Options::default())?;
/// assert!(found.exact);
/// assert_eq!(found.best.tree.to_newick(), "((0,1),(2,3));");
/// # Ok::<(), trellis::Error>(())
/// ```
pub fn exact<M: Search + ?Sized>(model: &M, options: &Options<'_>) -> Result<Outcome> {
    let n = check_points(model.num_points())?;
    if n == 1 {
        return Ok(single_point(model));
    }
    let deadline = options
        .time_limit
        .and_then(|d| crate::base::run::deadline(Instant::now(), d));
    let mut search = Engine::<M, Set>::new(model, search_budget(options), deadline, 1.0);
    search.progress = options.progress;
    match search.run(&mut AllSplits)? {
        Some(tree) => {
            let mut out = outcome(model, tree, &search);
            out.exact = model.admissible();
            Ok(out)
        }
        None => Err(Error::new(ErrorKind::TimeLimit {
            seconds: options.time_limit.map_or(0.0, |d| d.as_secs_f64()),
            done: search.explored,
        })),
    }
}

/// The memory budget of a search: the limit given, or half the memory
/// available (4 GiB when unknown).
pub(super) fn search_budget(options: &Options<'_>) -> u64 {
    options
        .memory_limit
        .unwrap_or_else(|| crate::base::memory::available_memory().unwrap_or(8 << 30) / 2)
}

pub(super) fn check_points(n: usize) -> Result<usize> {
    check_points_of(
        n,
        super::MAX_ASTAR_POINTS,
        "exact A* search (clusters are 128-bit sets)",
    )
}

pub(super) fn check_points_of(n: usize, max: usize, method: &'static str) -> Result<usize> {
    if n == 0 {
        return Err(Error::new(ErrorKind::Empty));
    }
    if n > max {
        return Err(Error::new(ErrorKind::TooManyPoints { n, max, method }));
    }
    Ok(n)
}

pub(super) fn single_point<M: Search + ?Sized>(model: &M) -> Outcome {
    Outcome {
        best: ScoredTree {
            tree: Tree::Leaf(0),
            log_potential: model.log_potential_of_cost(0.0),
        },
        cost: 0.0,
        exact: model.admissible(),
        explored: 0,
        splits: 0,
        vertices: 1,
        iterations: 0,
        rounds: 1,
        sets: "u128",
        bytes_per_vertex: 0,
        bytes_per_split: 0,
        peak_bytes: 0,
    }
}

pub(super) fn outcome<M: Search + ?Sized>(
    model: &M,
    tree: Tree,
    search: &Engine<'_, M, Set>,
) -> Outcome {
    let tree = tree.canonical();
    let cost = tree_cost(model, &tree).unwrap_or(f64::NAN);
    Outcome {
        best: ScoredTree {
            log_potential: model.log_potential_of_cost(cost),
            tree,
        },
        cost,
        exact: false,
        explored: search.explored,
        splits: search.splits,
        vertices: search.vertices.len() as u64,
        iterations: search.iterations,
        rounds: 1,
        sets: "u128",
        bytes_per_vertex: Engine::<M, Set>::bytes_per_vertex(search.model),
        bytes_per_split: Engine::<M, Set>::ENTRY_BYTES,
        peak_bytes: search.peak,
    }
}

/// Where a vertex's splits come from when it is explored.
pub(super) trait Children<M: Search + ?Sized, S: SetRepr> {
    /// Appends the splits `(left, right)` of `set` to `out` (no duplicates).
    fn splits(&mut self, model: &M, set: &S, summary: &M::Summary, out: &mut Vec<(S, S)>);

    /// An upper bound on the number of splits [`Children::splits`] appends
    /// for `set`, and on the bytes it allocates for itself while doing so
    /// (checked against the budget before it runs).
    fn bound(&self, set: &S) -> (u64, u64);

    /// Bytes the generator holds between explorations (counted in the budget).
    fn bytes(&self) -> u64 {
        0
    }
}

/// Every split: the full trellis.
pub(super) struct AllSplits;

impl<M: Search + ?Sized> Children<M, Set> for AllSplits {
    fn splits(&mut self, _: &M, set: &Set, _: &M::Summary, out: &mut Vec<(Set, Set)>) {
        set.all_splits(0, out);
    }

    fn bound(&self, set: &Set) -> (u64, u64) {
        (num_splits(set), 0)
    }
}

/// `2^(m-1) - 1`, the number of splits of a set of `m` points (saturating).
pub(super) fn num_splits<S: SetRepr>(set: &S) -> u64 {
    let m = set.len();
    if m < 2 {
        0
    } else if m > 64 {
        u64::MAX
    } else {
        (1u64 << (m - 1)) - 1
    }
}

/// Bytes of a `SetMap` (hashbrown) able to hold `items` entries of `entry`
/// bytes: a power-of-two number of buckets at most 7/8 full, each with its
/// entry and one control byte.
pub(super) fn map_bytes(items: u64, entry: u64) -> u64 {
    if items == 0 {
        return 0;
    }
    let buckets = if items < 4 {
        4
    } else if items < 8 {
        8
    } else {
        items
            .saturating_mul(8)
            .div_ceil(7)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
    };
    buckets.saturating_mul(entry + 1)
}

/// The capacity a `Vec` (or hash map) of capacity `cap` grows to when it
/// must hold `len` items: at least double.
fn grown(cap: u64, len: u64) -> u64 {
    if len <= cap {
        cap
    } else {
        len.max(cap.saturating_mul(2))
    }
}

/// A heap entry: one split `(left, right)` of a vertex with its `f = g + h`.
#[derive(Clone, Copy, Debug)]
struct Entry {
    f: f64,
    g: f64,
    h: f64,
    left: u32,
    right: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the smallest `f`;
    /// ties go to the smaller `h` (the more complete hierarchy), then to the
    /// smaller vertex ids, so the search is deterministic.
    fn cmp(&self, other: &Entry) -> Ordering {
        other
            .f
            .total_cmp(&self.f)
            .then(other.h.total_cmp(&self.h))
            .then(other.left.cmp(&self.left))
            .then(other.right.cmp(&self.right))
    }
}

struct Vertex<S, T> {
    set: S,
    summary: T,
    /// `w · H(set)`; 0 for a singleton.
    h: f64,
    /// `None` until explored.
    heap: Option<BinaryHeap<Entry>>,
    /// The cost of the best complete hierarchy over `set` seen so far (an
    /// upper bound on its optimum; 0 for a singleton, `+∞` if none yet).
    ub: f64,
    /// The root split of that hierarchy.
    ub_split: Option<(u32, u32)>,
}

/// One A* search over a trellis whose vertices are created on demand.
///
/// Its memory is accounted for from what it allocates: the vertex records
/// (with their summaries) at the vertex vector's capacity, the hash map from
/// sets to vertices at its bucket count, every heap at its capacity and the
/// scratch list of splits. Before a vertex is explored, the bytes it may need
/// (its splits, their heap entries, two new vertices per split and the
/// growth of the vector and map, plus what the split generator allocates)
/// are checked against the budget, so the search stops with
/// [`ErrorKind::SearchBudget`] before allocating past it.
pub(super) struct Engine<'m, M: Search + ?Sized, S: SetRepr> {
    model: &'m M,
    n: usize,
    vertices: Vec<Vertex<S, M::Summary>>,
    index: SetMapOf<S, u32>,
    root: u32,
    /// Bytes of the heaps (their capacities).
    heap_bytes: u64,
    max_bytes: u64,
    deadline: Option<Instant>,
    /// The heuristic's weight `w` (1: plain A*).
    weight: f64,
    /// Stop (like the deadline) after exploring this many vertices.
    max_explored: u64,
    pub(super) explored: u64,
    pub(super) splits: u64,
    pub(super) iterations: u64,
    /// The most bytes held so far (checked after each exploration).
    pub(super) peak: u64,
    scratch: Vec<(S, S)>,
    /// Called every [`PROGRESS_EVERY`] explored vertices; may cancel.
    pub(super) progress: Option<ProgressFn<'m>>,
    /// Explored vertices of earlier rounds and the total budget, for the
    /// progress reports of a search in rounds.
    pub(super) progress_base: u64,
    pub(super) progress_total: Option<u64>,
}

/// Explored vertices between progress reports.
const PROGRESS_EVERY: u64 = 256;

impl<'m, M: Search + ?Sized, S: SetRepr> Engine<'m, M, S> {
    /// A search whose vertices use the heuristic `weight · H` (1: plain A*).
    pub(super) fn new(
        model: &'m M,
        max_bytes: u64,
        deadline: Option<Instant>,
        weight: f64,
    ) -> Engine<'m, M, S> {
        let n = model.num_points();
        let mut search = Engine {
            model,
            n,
            vertices: Vec::new(),
            index: SetMapOf::default(),
            root: 0,
            heap_bytes: 0,
            max_bytes,
            deadline,
            weight,
            max_explored: u64::MAX,
            explored: 0,
            splits: 0,
            iterations: 0,
            peak: 0,
            scratch: Vec::new(),
            progress: None,
            progress_base: 0,
            progress_total: None,
        };
        search.root = search.vertex(S::full(n));
        search
    }

    /// The id of `set`'s vertex, created (with its statistics and heuristic)
    /// on first sight.
    fn vertex(&mut self, set: S) -> u32 {
        if let Some(&id) = self.index.get(&set) {
            return id;
        }
        let summary = self.model.summary(set.points());
        let singleton = set.is_singleton();
        let h = if singleton {
            0.0
        } else {
            let h = self.weight
                * self.model.heuristic(Cluster {
                    points: set.points(),
                    summary: &summary,
                });
            if h.is_nan() { f64::NEG_INFINITY } else { h }
        };
        let id = self.vertices.len() as u32;
        self.index.insert(set.clone(), id);
        self.vertices.push(Vertex {
            set,
            summary,
            h,
            heap: None,
            ub: if singleton { 0.0 } else { f64::INFINITY },
            ub_split: None,
        });
        id
    }

    /// Bytes of one vertex record (its summary included).
    const VERTEX_BYTES: u64 = std::mem::size_of::<Vertex<S, M::Summary>>() as u64;
    /// Bytes of one entry of the vertex index.
    const INDEX_ENTRY_BYTES: u64 = std::mem::size_of::<(S, u32)>() as u64;
    /// Bytes of one split in the scratch list.
    const SPLIT_BYTES: u64 = std::mem::size_of::<(S, S)>() as u64;
    /// Bytes of one heap entry.
    pub(super) const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

    /// Bytes one vertex costs for `model`: its record, its index entry (the
    /// map at 7/8 load, with its control byte), the heap words of its two
    /// copies of the cluster and its summary's heap bytes.
    pub(super) fn bytes_per_vertex(model: &M) -> u64 {
        Self::VERTEX_BYTES
            + (Self::INDEX_ENTRY_BYTES + 1) * 8 / 7
            + 2 * S::heap_bytes(model.num_points())
            + model.summary_heap_bytes()
    }

    /// Bytes the search holds now, or would hold with `more_vertices` more
    /// vertices, `more_splits` splits in the scratch list and as many more
    /// heap entries (the growth of the vector and the map at their peak,
    /// while the old and new tables both exist).
    fn bytes_with(&self, more_vertices: u64, more_splits: u64) -> u64 {
        let len = self.vertices.len() as u64;
        let cap = self.vertices.capacity() as u64;
        let new_cap = grown(cap, len.saturating_add(more_vertices));
        let vertices = if new_cap > cap {
            cap.saturating_add(new_cap)
        } else {
            cap
        }
        .saturating_mul(Self::VERTEX_BYTES)
        .saturating_add(
            len.saturating_add(more_vertices)
                .saturating_mul(self.model.summary_heap_bytes()),
        );
        let map_cap = self.index.capacity() as u64;
        let new_map_cap = grown(map_cap, len.saturating_add(more_vertices));
        let index = map_bytes(new_map_cap, Self::INDEX_ENTRY_BYTES).saturating_add(
            if new_map_cap > map_cap {
                map_bytes(map_cap, Self::INDEX_ENTRY_BYTES)
            } else {
                0
            },
        );
        let scratch = (self.scratch.capacity() as u64)
            .max(more_splits)
            .saturating_mul(Self::SPLIT_BYTES);
        let entries = more_splits.saturating_mul(Self::ENTRY_BYTES);
        // The clusters' heap words (none for `u128`): two copies per vertex
        // (record and index) and two sets per split in the scratch list.
        let words = S::heap_bytes(self.n).saturating_mul(
            2u64.saturating_mul(len.saturating_add(more_vertices))
                .saturating_add(2u64.saturating_mul(more_splits.max(self.scratch.len() as u64))),
        );
        let words = if S::heap_bytes(self.n) == 0 { 0 } else { words };
        vertices
            .saturating_add(index)
            .saturating_add(words)
            .saturating_add(scratch)
            .saturating_add(entries)
            .saturating_add(self.heap_bytes)
    }

    /// Bytes the search holds now.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes_with(0, 0)
    }

    fn over_budget(&self) -> Error {
        Error::new(ErrorKind::SearchBudget {
            bytes: self.max_bytes,
            explored: self.explored,
        })
    }

    fn is_singleton(&self, id: u32) -> bool {
        self.vertices[id as usize].set.is_singleton()
    }

    /// `(g, h)` that a vertex contributes to a parent's entry.
    fn value(&self, id: u32) -> (f64, f64) {
        let v = &self.vertices[id as usize];
        if v.set.is_singleton() {
            return (0.0, 0.0);
        }
        match &v.heap {
            None => (0.0, v.h),
            Some(heap) => heap.peek().map_or((f64::INFINITY, 0.0), |e| (e.g, e.h)),
        }
    }

    /// The heap entry of a split, and the cost of the best complete
    /// hierarchy through it known so far.
    fn entry(&self, parent: u32, left: u32, right: u32) -> (Entry, f64) {
        let (p, l, r) = (
            &self.vertices[parent as usize],
            &self.vertices[left as usize],
            &self.vertices[right as usize],
        );
        let cost = self.model.split_cost(&p.summary, &l.summary, &r.summary);
        let cost = if cost.is_nan() { f64::INFINITY } else { cost };
        let (gl, hl) = self.value(left);
        let (gr, hr) = self.value(right);
        let g = cost + gl + gr;
        let h = hl + hr;
        let entry = Entry {
            f: g + h,
            g,
            h,
            left,
            right,
        };
        (entry, cost + l.ub + r.ub)
    }

    /// Lowers a vertex's upper bound to `ub` via the split `(l, r)` if that is better.
    fn offer(&mut self, id: u32, ub: f64, l: u32, r: u32) {
        let v = &mut self.vertices[id as usize];
        if ub < v.ub {
            v.ub = ub;
            v.ub_split = Some((l, r));
        }
    }

    /// Registers a complete hierarchy (e.g. an initial tree): its clusters
    /// become vertices whose upper bounds include the costs of its sub-trees.
    /// Returns the vertex of the tree's root. The tree's leaves must be below
    /// the number of points (a validated tree). Iterative (post-order): any depth.
    pub(super) fn seed_tree(&mut self, tree: &Tree) -> u32 {
        // The vertices of the subtrees done, awaiting their parent.
        let mut done: Vec<u32> = Vec::new();
        for t in tree.post_order() {
            let id = match t {
                Tree::Leaf(i) => self.vertex(S::singleton(*i, self.n)),
                Tree::Node(..) => {
                    let lb = done.pop().expect("post-order: right child first");
                    let la = done.pop().expect("post-order: left child first");
                    let set = self.vertices[la as usize]
                        .set
                        .union(&self.vertices[lb as usize].set);
                    let id = self.vertex(set);
                    let (p, l, r) = (
                        &self.vertices[id as usize],
                        &self.vertices[la as usize],
                        &self.vertices[lb as usize],
                    );
                    let cost = self.model.split_cost(&p.summary, &l.summary, &r.summary);
                    let ub = cost + l.ub + r.ub;
                    self.offer(id, ub, la, lb);
                    id
                }
            };
            done.push(id);
        }
        done.pop().expect("post-order ends with the root")
    }

    /// Stops the search, like the deadline, after `max` explored vertices.
    pub(super) fn set_max_explored(&mut self, max: u64) {
        self.max_explored = max;
    }

    /// Number of vertices created.
    pub(super) fn vertices_len(&self) -> u64 {
        self.vertices.len() as u64
    }

    /// The best complete hierarchy seen so far (following the upper-bound
    /// splits from the root), if any.
    pub(super) fn best_tree(&self) -> Option<Tree> {
        fn go<S: SetRepr, T>(vs: &[Vertex<S, T>], id: u32) -> Option<Tree> {
            let v = &vs[id as usize];
            if v.set.is_singleton() {
                return Some(Tree::Leaf(v.set.lowest()));
            }
            let (l, r) = v.ub_split?;
            Some(Tree::node(go(vs, l)?, go(vs, r)?))
        }
        go(&self.vertices, self.root)
    }

    fn explore<C: Children<M, S>>(&mut self, id: u32, children: &mut C) -> Result<()> {
        let (set, summary) = {
            let v = &self.vertices[id as usize];
            (v.set.clone(), v.summary.clone())
        };
        // Everything this exploration may allocate, checked first.
        let (max_splits, own) = children.bound(&set);
        let peak = self
            .bytes_with(max_splits.saturating_mul(2), max_splits)
            .saturating_add(own)
            .saturating_add(children.bytes());
        if peak > self.max_bytes {
            return Err(self.over_budget());
        }
        let mut splits = std::mem::take(&mut self.scratch);
        splits.clear();
        children.splits(self.model, &set, &summary, &mut splits);
        let mut entries = Vec::with_capacity(splits.len());
        for (l, r) in splits.drain(..) {
            let (li, ri) = (self.vertex(l), self.vertex(r));
            let (entry, ub) = self.entry(id, li, ri);
            entries.push(entry);
            self.offer(id, ub, li, ri);
        }
        self.explored += 1;
        self.splits += entries.len() as u64;
        self.heap_bytes += (entries.capacity() as u64) * Self::ENTRY_BYTES;
        self.vertices[id as usize].heap = Some(BinaryHeap::from(entries));
        self.scratch = splits;
        let held = self.bytes().saturating_add(children.bytes());
        self.peak = self.peak.max(held);
        if held > self.max_bytes {
            return Err(self.over_budget());
        }
        if let Some(f) = self.progress {
            if self.explored % PROGRESS_EVERY == 0 {
                let p = Progress {
                    stage: "search",
                    done: self.progress_base + self.explored,
                    total: self.progress_total.unwrap_or(self.max_explored),
                    resumed: 0,
                };
                if f(p) == ControlFlow::Break(()) {
                    return Err(Error::new(ErrorKind::Cancelled));
                }
            }
        }
        Ok(())
    }

    /// Runs to the goal. `Ok(None)`: the deadline passed first.
    pub(super) fn run<C: Children<M, S>>(&mut self, children: &mut C) -> Result<Option<Tree>> {
        // The explored vertices of the walked hierarchy, parents first.
        let mut walked: Vec<u32> = Vec::new();
        let mut frontier: Vec<u32> = Vec::new();
        let mut stack: Vec<u32> = Vec::new();
        loop {
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    return Ok(None);
                }
            }
            if self.explored >= self.max_explored {
                return Ok(None);
            }
            self.iterations += 1;
            // 1. Walk the partial hierarchy of the heap tops.
            walked.clear();
            frontier.clear();
            stack.push(self.root);
            while let Some(v) = stack.pop() {
                if self.is_singleton(v) {
                    continue;
                }
                match &self.vertices[v as usize].heap {
                    None => frontier.push(v),
                    Some(heap) => {
                        walked.push(v);
                        if let Some(e) = heap.peek() {
                            stack.push(e.right);
                            stack.push(e.left);
                        }
                    }
                }
            }
            if let Some(heap) = &self.vertices[self.root as usize].heap {
                if heap.peek().is_none_or(|e| e.f == f64::INFINITY) {
                    return Err(Error::new(ErrorKind::NoTree));
                }
            }
            // 2. Explore its unexplored leaves.
            let complete = frontier.is_empty();
            for &v in &frontier {
                if self.explored >= self.max_explored {
                    return Ok(None);
                }
                self.explore(v, children)?;
            }
            // 3. Refresh the walked vertices, children before parents.
            let mut stayed = true;
            for &v in walked.iter().rev() {
                let Some(&top) = self.vertices[v as usize]
                    .heap
                    .as_ref()
                    .and_then(|h| h.peek())
                else {
                    continue;
                };
                let (fresh, ub) = self.entry(v, top.left, top.right);
                self.offer(v, ub, top.left, top.right);
                let heap = self.vertices[v as usize].heap.as_mut().expect("explored");
                // Replacing the top in place sifts it down only as far as it
                // must go: O(1) when it stays on top, the common case.
                *heap.peek_mut().expect("non-empty") = fresh;
                let now = heap.peek().expect("non-empty");
                if (now.left, now.right) != (top.left, top.right) {
                    stayed = false;
                }
            }
            if complete && stayed {
                let root = self.vertices[self.root as usize].heap.as_ref();
                if root.and_then(|h| h.peek()).is_some_and(|e| e.h == 0.0) {
                    return Ok(Some(self.tree(self.root)));
                }
            }
        }
    }

    /// The hierarchy of heap tops below a vertex.
    fn tree(&self, id: u32) -> Tree {
        let v = &self.vertices[id as usize];
        if v.set.is_singleton() {
            return Tree::Leaf(v.set.lowest());
        }
        let top = v.heap.as_ref().and_then(|h| h.peek()).expect("complete");
        Tree::node(self.tree(top.left), self.tree(top.right))
    }
}
