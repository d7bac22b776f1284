//! Beam search with memory linear in the width: each state keeps a ranked
//! list of its best merges, inherited from its parent state, instead of a
//! score cache over every pair of clusters ever built. See the
//! [module docs](super) for the search itself.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::{Part, check_points, leaves, merged, score};
use crate::base::run::Options;
use crate::base::tree::{ScoredTree, Tree};
use crate::base::{memory, par};
use crate::error::Result;
use crate::models::Model;

/// Widths above this many points of the A* paper's rule are [`LARGE_WIDTH`].
pub const SMALL_POINTS: usize = 40;

/// The A* paper's beam width above [`SMALL_POINTS`] points.
pub const LARGE_WIDTH: usize = 1000;

/// The default beam width, the A* paper's (§5, "Data and Methods": "a beam
/// size given by 1000 for datasets with more than 40 elements or N(N-1)/2 for
/// the others"): `N(N-1)/2` for up to 40 points (at least 1), 1000 above.
///
/// The trellis paper's `N(N-1)/2` at every size makes the width, and with it
/// time and memory, grow as `N²`; the cap keeps 200 points to seconds.
pub fn default_beam_width(n: usize) -> usize {
    if n > SMALL_POINTS {
        LARGE_WIDTH
    } else {
        pairs(n).max(1)
    }
}

/// The beam width for large inputs, `min(3N, N(N-1)/2)`: the width of the
/// reference's experiment pipeline, used to build sparse trellises and the
/// initial trees of approximate A*.
pub fn compact_beam_width(n: usize) -> usize {
    pairs(n).min(3 * n).max(1)
}

/// `N(N-1)/2`, saturating.
fn pairs(n: usize) -> usize {
    n.saturating_mul(n.saturating_sub(1)) / 2
}

/// Candidate merges kept per state: twice the width (so that the merges the
/// levels below remove rarely exhaust the list), at most every pair.
fn list_capacity(n: usize, width: usize) -> usize {
    width.saturating_mul(2).min(pairs(n)).max(1)
}

/// Bytes of a candidate merge ([`Cand`]).
const CAND_BYTES: u64 = 16;
/// Bytes of a state besides its lists (the struct, its stream and heap entry,
/// its entry in the duplicate table).
const STATE_BYTES: u64 = 160;

/// Bytes of a built cluster besides its points: its entry, summary and
/// children, and its entry in the table that finds it by its children.
const CLUSTER_BYTES: u64 = 128;

/// An upper bound of the bytes [`beam_search`] holds at once over `n` points
/// with `width` states per level (`S = width`: fewer states are kept when
/// fewer distinct partial clusterings exist, but a huge width is refused
/// rather than trusted to find few): two levels of `S` states, each with its
/// active clusters (4 bytes each) and up to `min(2·width, N(N-1)/2)` ranked
/// candidate merges (16 bytes each); the clusters built, at most
/// `n + S·(n-1)`; and the points
/// of the clusters alive in the states (each state partitions the `n`
/// points, in two levels); a level's scores of new merges and a list being
/// rebuilt. `O(width · (width + n))`: linear in the width for a fixed list
/// length, and without the `N²` score cache of every pair of clusters.
pub fn beam_memory(n: usize, width: usize) -> u64 {
    let width = width.max(1);
    let states = width as u64;
    let list = list_capacity(n, width) as u64;
    let n = n as u64;
    let per_state = STATE_BYTES + 4 * n + CAND_BYTES * list;
    let clusters = states
        .saturating_mul(n.saturating_sub(1))
        .saturating_add(n)
        .saturating_mul(CLUSTER_BYTES);
    let points = states.saturating_mul(n).saturating_mul(2 * 8);
    // A level's scores of new merges (one per kept state and other cluster)
    // and the buffer of a list being rebuilt (twice the list, 24 bytes each).
    let scratch = states
        .saturating_mul(n)
        .saturating_mul(32)
        .saturating_add(2 * 24 * list);
    states
        .saturating_mul(per_state)
        .saturating_mul(2)
        .saturating_add(clusters)
        .saturating_add(points)
        .saturating_add(scratch)
}

/// A cluster built during beam search, shared by every state that holds it.
struct Built<S> {
    /// Its points and summary; dropped while no state holds the cluster (and
    /// recomputed from its children if a later merge builds it again).
    part: Option<Part<S>>,
    /// Children ids; `None` for a leaf (its id is the point).
    children: Option<(u32, u32)>,
}

/// A candidate merge of a state: clusters `a` (earlier in the state's list)
/// and `b` (later), with `log ψ` of their merge.
#[derive(Clone, Copy)]
struct Cand {
    psi: f64,
    a: u32,
    b: u32,
}

/// A partial clustering.
struct State {
    /// The active clusters in list order.
    active: Vec<u32>,
    /// The sum of `log ψ` of its merges.
    log_potential: f64,
    /// XOR of [`key`] over `active`, to find duplicates.
    hash: u64,
    /// Its best merges in the greedy order (higher `log ψ`, then earlier in
    /// the enumeration of pairs `(i, j)`, `i < j`, by `j` then `i`).
    cands: Vec<Cand>,
    /// `None` when `cands` holds every pair of active clusters. Otherwise
    /// the pairs not in `cands` rank after all of them: their `log ψ` is at
    /// most this, and a pair of this `log ψ` not listed comes later in the
    /// enumeration than every listed one.
    bound: Option<f64>,
}

/// A random-looking 64-bit key of a cluster id (SplitMix64), XORed over a
/// state's clusters to find candidate duplicates (then compared exactly).
fn key(id: u32) -> u64 {
    let mut z = (id as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The cumulative score of a merge (NaN read as `-∞`).
fn value(log_potential: f64, psi: f64) -> f64 {
    let v = log_potential + psi;
    if v.is_nan() { f64::NEG_INFINITY } else { v }
}

/// The merges of one state at one level, in the order the beam ranks them:
/// the first `width` of its list, by cumulative value, then by enumeration
/// order (a run of equal values is re-sorted by enumeration order when the
/// `log ψ` within it differ, as rounding can make them).
#[derive(Default)]
struct Stream {
    /// The list positions of the current run, in output order.
    run: Vec<usize>,
    /// Next in `run`.
    at: usize,
    /// The list position after the current run.
    end: usize,
}

/// The head of a state's stream in the heap: better is greater (higher
/// value, then lower state rank).
struct Head {
    value: f64,
    state: usize,
}

impl PartialEq for Head {
    fn eq(&self, other: &Head) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Head) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Head) -> Ordering {
        self.value
            .total_cmp(&other.value)
            .then(other.state.cmp(&self.state))
    }
}

/// The search's clusters and scratch space.
struct Search<'m, M: Model + ?Sized> {
    model: &'m M,
    n: usize,
    width: usize,
    capacity: usize,
    clusters: Vec<Built<M::Summary>>,
    /// `(earlier, later)` in the merging state's list -> merged cluster id.
    by_children: HashMap<(u32, u32), u32>,
    /// Clusters whose part is held.
    held: Vec<u32>,
    /// Per cluster id: the stamp of the last marking.
    stamp: Vec<u32>,
    epoch: u32,
}

impl<M: Model + ?Sized> Search<'_, M> {
    fn part(&self, id: u32) -> &Part<M::Summary> {
        self.clusters[id as usize]
            .part
            .as_ref()
            .expect("the clusters of live states are held")
    }

    fn psi(&self, a: u32, b: u32) -> f64 {
        score(self.model, self.part(a), self.part(b))
    }

    /// The cluster merging `a` (earlier) and `b` (later): the one built
    /// before from the same children, or a new one.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if let Some(&id) = self.by_children.get(&(a, b)) {
            if self.clusters[id as usize].part.is_none() {
                let part = merged(self.model, self.part(a), self.part(b));
                self.clusters[id as usize].part = Some(part);
                self.held.push(id);
            }
            return id;
        }
        let part = merged(self.model, self.part(a), self.part(b));
        let id = u32::try_from(self.clusters.len()).expect("fewer than 2^32 clusters");
        self.clusters.push(Built {
            part: Some(part),
            children: Some((a, b)),
        });
        self.stamp.push(0);
        self.by_children.insert((a, b), id);
        self.held.push(id);
        id
    }

    fn tree(&self, id: u32) -> Tree {
        match self.clusters[id as usize].children {
            None => Tree::Leaf(id as usize),
            Some((a, b)) => Tree::node(self.tree(a), self.tree(b)),
        }
    }

    /// A new marking epoch (stamps of older epochs read as unmarked).
    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Re-ranks every pair of `state` and keeps the best `max(2·need,
    /// capacity)` (all when fewer). Memory `O(kept)`: the pairs are scored
    /// into a buffer of twice that, cut back to the best whenever it fills.
    fn rebuild(&self, state: &mut State, need: usize) {
        let active = &state.active;
        let total = pairs(active.len());
        let keep = need.saturating_mul(2).max(self.capacity).min(total).max(1);
        let rank =
            |x: &(Cand, usize), y: &(Cand, usize)| y.0.psi.total_cmp(&x.0.psi).then(x.1.cmp(&y.1));
        let mut best: Vec<(Cand, usize)> = Vec::with_capacity((2 * keep).min(total));
        // Once the buffer has been cut, a pair whose log ψ is not above the
        // kept worst cannot enter: it ranks after all kept pairs (its order
        // is later), so it is not scored into the buffer at all.
        let mut floor: Option<f64> = None;
        let mut order = 0;
        for j in 1..active.len() {
            for i in 0..j {
                let (a, b) = (active[i], active[j]);
                let psi = self.psi(a, b);
                order += 1;
                if floor.is_some_and(|f| psi.total_cmp(&f) != Ordering::Greater) {
                    continue;
                }
                best.push((Cand { psi, a, b }, order - 1));
                if best.len() == 2 * keep {
                    best.select_nth_unstable_by(keep - 1, rank);
                    best.truncate(keep);
                    floor = Some(best[keep - 1].0.psi);
                }
            }
        }
        if best.len() > keep {
            best.select_nth_unstable_by(keep - 1, rank);
            best.truncate(keep);
        }
        best.sort_unstable_by(rank);
        state.bound = if keep < total {
            best.last().map(|c| c.0.psi)
        } else {
            None
        };
        // A list of its own size (not the buffer's).
        let mut cands = Vec::with_capacity(best.len());
        cands.extend(best.iter().map(|c| c.0));
        state.cands = cands;
    }

    /// Loads the next run of `state`'s stream; false when the stream ends.
    fn load_run(&self, state: &mut State, stream: &mut Stream) -> bool {
        let start = stream.end;
        if start >= self.width {
            return false;
        }
        if start >= state.cands.len() {
            if state.bound.is_none() {
                return false;
            }
            self.rebuild(state, start + 1);
            if start >= state.cands.len() {
                return false;
            }
        }
        let lp = state.log_potential;
        let first = value(lp, state.cands[start].psi);
        let mut end = start + 1;
        let mut mixed = false;
        while end < self.width {
            if end >= state.cands.len() {
                if state.bound.is_none() {
                    break;
                }
                self.rebuild(state, end + 1);
                if end >= state.cands.len() {
                    break;
                }
            }
            let c = state.cands[end];
            if value(lp, c.psi).total_cmp(&first) != Ordering::Equal {
                break;
            }
            mixed |= c.psi.total_cmp(&state.cands[start].psi) != Ordering::Equal;
            end += 1;
        }
        stream.run.clear();
        stream.run.extend(start..end);
        if mixed {
            // Equal values from different log ψ: the enumeration order decides.
            let pos: HashMap<u32, usize> = state
                .active
                .iter()
                .enumerate()
                .map(|(k, &c)| (c, k))
                .collect();
            let order = |k: usize| {
                let c = state.cands[k];
                let (i, j) = (pos[&c.a], pos[&c.b]);
                j * (j - 1) / 2 + i
            };
            stream.run.sort_by_key(|&k| order(k));
        }
        stream.at = 0;
        stream.end = end;
        true
    }

    /// The state reached from `parent` by merging its candidate `c`
    /// (cluster `id`), without its candidate list (see [`Search::candidates`]).
    fn child(&self, parent: &State, c: Cand, id: u32, value: f64) -> State {
        let mut active = Vec::with_capacity(parent.active.len() - 1);
        active.extend(
            parent
                .active
                .iter()
                .copied()
                .filter(|&x| x != c.a && x != c.b),
        );
        active.push(id);
        State {
            active,
            log_potential: value,
            hash: parent.hash ^ key(c.a) ^ key(c.b) ^ key(id),
            cands: Vec::new(),
            bound: parent.bound,
        }
    }

    /// The candidate list and bound of `child`, reached from `parent` by
    /// merging `c` into the cluster last in the child's list. `cache` holds
    /// `log ψ` of the new cluster with others, shared by the children that
    /// build the same cluster.
    fn candidates(
        &self,
        parent: &State,
        c: Cand,
        child: &State,
        cache: &mut HashMap<u32, f64>,
    ) -> (Vec<Cand>, Option<f64>) {
        let (&id, others) = child.active.split_last().expect("a merged cluster");
        // The new cluster's merges, in list order of the other cluster.
        let mut new: Vec<Cand> = Vec::with_capacity(others.len());
        for &k in others {
            let psi = *cache.entry(k).or_insert_with(|| self.psi(k, id));
            let listed = match parent.bound {
                None => true,
                Some(b) => psi.total_cmp(&b) == Ordering::Greater,
            };
            if listed {
                new.push(Cand { psi, a: k, b: id });
            }
        }
        // Stable: equal log ψ keep the list order.
        new.sort_by(|x, y| y.psi.total_cmp(&x.psi));
        let old = parent
            .cands
            .iter()
            .filter(|x| x.a != c.a && x.a != c.b && x.b != c.a && x.b != c.b);
        // Merge: at equal log ψ the old pairs come first (the new cluster is
        // last in the list, so its pairs are last in the enumeration).
        let capacity = self.capacity.min(parent.cands.len() + new.len());
        let mut cands = Vec::with_capacity(capacity);
        let mut new = new.into_iter().peekable();
        for x in old {
            while cands.len() < capacity {
                match new.next_if(|y| y.psi.total_cmp(&x.psi) == Ordering::Greater) {
                    Some(y) => cands.push(y),
                    None => break,
                }
            }
            if cands.len() == capacity {
                break;
            }
            cands.push(*x);
        }
        let room = capacity - cands.len();
        cands.extend(new.take(room));
        let mut bound = parent.bound;
        if cands.len() == self.capacity && cands.len() < pairs(child.active.len()) {
            bound = cands.last().map(|x| x.psi);
        }
        (cands, bound)
    }
}

/// Beam search with `width` states per level; the final states best first
/// (see the [module docs](super)). A `width` of 0 counts as 1, which gives
/// the greedy tree. At most `width` results; fewer when fewer distinct
/// complete trees were reached.
///
/// Every merge, the root included, is scored by the model's own potential
/// (unlike StandardHC, which ranks the root merge with the non-root rate).
///
/// # Errors
///
/// A model without points, or (checked before anything is allocated) a
/// search whose [`beam_memory`] exceeds the available memory.
pub fn beam_search<M: Model + ?Sized>(model: &M, width: usize) -> Result<Vec<ScoredTree>> {
    beam_search_with(model, width, &Options::default())
}

/// [`beam_search`] with [`Options::memory_limit`] (checked against
/// [`beam_memory`] before anything is allocated; without a limit, against
/// the memory the operating system reports as available).
///
/// # Errors
///
/// A model without points, or a search that needs more memory than the limit.
pub fn beam_search_with<M: Model + ?Sized>(
    model: &M,
    width: usize,
    options: &Options<'_>,
) -> Result<Vec<ScoredTree>> {
    let n = model.num_points();
    check_points(n)?;
    let width = width.max(1);
    memory::check_bytes(
        || format!("beam search over {n} points at width {width}"),
        beam_memory(n, width),
        options.memory_limit,
    )?;
    let capacity = list_capacity(n, width);
    let mut search = Search {
        model,
        n,
        width,
        capacity,
        clusters: leaves(model)
            .into_iter()
            .map(|part| Built {
                part: Some(part),
                children: None,
            })
            .collect(),
        by_children: HashMap::new(),
        held: (0..n as u32).collect(),
        stamp: vec![0; n],
        epoch: 0,
    };
    let active: Vec<u32> = (0..n as u32).collect();
    let mut root = State {
        hash: active.iter().fold(0, |h, &c| h ^ key(c)),
        active,
        log_potential: 0.0,
        cands: Vec::new(),
        bound: Some(f64::INFINITY),
    };
    if n >= 2 {
        search.rebuild(&mut root, 1);
    }
    let mut states = vec![root];
    let mut streams: Vec<Stream> = Vec::new();
    let mut heap: BinaryHeap<Head> = BinaryHeap::new();
    for _level in 1..search.n {
        streams.clear();
        streams.resize_with(states.len(), Stream::default);
        heap.clear();
        // Each state's first run, in parallel (the candidate lists that
        // ran short are rebuilt here, the costly part of a level).
        let mut first: Vec<(&mut State, &mut Stream)> =
            states.iter_mut().zip(&mut streams).collect();
        par::update_each(&mut first, |(state, stream)| {
            search.load_run(state, stream);
        });
        for (s, (state, stream)) in states.iter().zip(&streams).enumerate() {
            // A stream that did not load has no run.
            if !stream.run.is_empty() {
                let c = state.cands[stream.run[0]];
                heap.push(Head {
                    value: value(state.log_potential, c.psi),
                    state: s,
                });
            }
        }
        let mut next: Vec<State> = Vec::new();
        // Per state of `next`: its parent's index and the merge made.
        let mut origin: Vec<(usize, Cand)> = Vec::new();
        // Hash of a kept state -> its indices in `next`.
        let mut kept: HashMap<u64, Vec<usize>> = HashMap::new();
        while let Some(Head { value: v, state: s }) = heap.pop() {
            if next.len() == width {
                break;
            }
            let stream = &mut streams[s];
            let c = states[s].cands[stream.run[stream.at]];
            stream.at += 1;
            if stream.at < stream.run.len() || search.load_run(&mut states[s], stream) {
                let h = states[s].cands[stream.run[stream.at]];
                heap.push(Head {
                    value: value(states[s].log_potential, h.psi),
                    state: s,
                });
            }
            let parent = &states[s];
            let known = search.by_children.get(&(c.a, c.b)).copied();
            let hash = parent.hash ^ key(c.a) ^ key(c.b);
            if let Some(id) = known {
                // A partial clustering already kept (another merge order)?
                if let Some(same) = kept.get(&(hash ^ key(id))) {
                    let epoch = search.next_epoch();
                    for &x in &parent.active {
                        search.stamp[x as usize] = epoch;
                    }
                    search.stamp[c.a as usize] = 0;
                    search.stamp[c.b as usize] = 0;
                    search.stamp[id as usize] = epoch;
                    let size = parent.active.len() - 1;
                    let duplicate = same.iter().any(|&k| {
                        next[k].active.len() == size
                            && next[k]
                                .active
                                .iter()
                                .all(|&x| search.stamp[x as usize] == epoch)
                    });
                    if duplicate {
                        continue;
                    }
                }
            }
            let id = search.merge(c.a, c.b);
            let child = search.child(&states[s], c, id, v);
            kept.entry(child.hash).or_default().push(next.len());
            next.push(child);
            origin.push((s, c));
        }
        // The children's candidate lists, in parallel: one task per new
        // cluster, its children sharing the new cluster's log ψ with others.
        let mut by_cluster: HashMap<u32, Vec<usize>> = HashMap::new();
        for (k, child) in next.iter().enumerate() {
            let id = *child.active.last().expect("a merged cluster");
            by_cluster.entry(id).or_default().push(k);
        }
        let mut groups: Vec<Vec<usize>> = by_cluster.into_values().collect();
        groups.sort_unstable();
        let lists = par::collect_range(groups.len(), true, |g| {
            let mut cache = HashMap::new();
            groups[g]
                .iter()
                .map(|&k| {
                    let (s, c) = origin[k];
                    (k, search.candidates(&states[s], c, &next[k], &mut cache))
                })
                .collect::<Vec<_>>()
        });
        for (k, (cands, bound)) in lists.into_iter().flatten() {
            next[k].cands = cands;
            next[k].bound = bound;
        }
        states = next;
        // Drop the parts of clusters no state holds any more.
        let epoch = search.next_epoch();
        for state in &states {
            for &x in &state.active {
                search.stamp[x as usize] = epoch;
            }
        }
        let Search {
            held,
            clusters,
            stamp,
            ..
        } = &mut search;
        held.retain(|&x| {
            let live = stamp[x as usize] == epoch;
            if !live {
                clusters[x as usize].part = None;
            }
            live
        });
    }
    Ok(states
        .iter()
        .map(|s| ScoredTree {
            tree: search.tree(s.active[0]).canonical(),
            log_potential: s.log_potential,
        })
        .collect())
}
