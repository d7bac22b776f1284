//! The beam search as it was before the candidate lists (a score cache over
//! every pair of clusters, every pair of every state ranked at every level),
//! kept to test that the new search returns the same results.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use super::{Part, check_points, leaves, merged, score};
use crate::base::tree::{ScoredTree, Tree};
use crate::error::Result;
use crate::models::Model;

/// A cluster built during beam search, shared by every state that holds it.
struct Built<S> {
    part: Part<S>,
    /// Children ids; `None` for a leaf (its id is the point).
    children: Option<(u32, u32)>,
}

/// Clusters and pair scores shared by the beam states.
struct Shared<'m, M: Model + ?Sized> {
    model: &'m M,
    clusters: Vec<Built<M::Summary>>,
    /// `(earlier, later)` in the merging state's list -> merged cluster id.
    by_children: HashMap<(u32, u32), u32>,
    /// `(earlier, later)` -> `log ψ`.
    scores: HashMap<(u32, u32), f64>,
}

impl<M: Model + ?Sized> Shared<'_, M> {
    fn score(&mut self, a: u32, b: u32) -> f64 {
        let clusters = &self.clusters;
        let model = self.model;
        *self.scores.entry((a, b)).or_insert_with(|| {
            score(
                model,
                &clusters[a as usize].part,
                &clusters[b as usize].part,
            )
        })
    }

    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if let Some(&id) = self.by_children.get(&(a, b)) {
            return id;
        }
        let part = merged(
            self.model,
            &self.clusters[a as usize].part,
            &self.clusters[b as usize].part,
        );
        let id = u32::try_from(self.clusters.len()).expect("fewer than 2^32 clusters");
        self.clusters.push(Built {
            part,
            children: Some((a, b)),
        });
        self.by_children.insert((a, b), id);
        id
    }

    fn tree(&self, id: u32) -> Tree {
        match self.clusters[id as usize].children {
            None => Tree::Leaf(id as usize),
            Some((a, b)) => Tree::node(self.tree(a), self.tree(b)),
        }
    }
}

/// A partial clustering: the active clusters in list order and the sum of `log ψ` so far.
struct State {
    active: Vec<u32>,
    log_potential: f64,
}

/// A proposed merge of positions `i < j` of state `state`.
#[derive(Clone, Copy)]
struct Proposal {
    /// `log ψ` of the merge.
    psi: f64,
    /// The state's score plus `psi`.
    value: f64,
    state: usize,
    /// Enumeration index within the state (the greedy order).
    order: usize,
    i: usize,
    j: usize,
}

/// Within a state, better first: higher `log ψ`, then earlier in the greedy
/// order. (Ranking by `psi` rather than by the cumulative value is the same
/// order, except that adding the state's score can round two different `psi`
/// to the same value; this way width 1 is exactly greedy.)
fn better_in_state(a: &Proposal, b: &Proposal) -> Ordering {
    b.psi.total_cmp(&a.psi).then(a.order.cmp(&b.order))
}

/// Across states, better first: higher value, then lower state rank, then
/// earlier in the greedy order.
fn better(a: &Proposal, b: &Proposal) -> Ordering {
    b.value
        .total_cmp(&a.value)
        .then(a.state.cmp(&b.state))
        .then(a.order.cmp(&b.order))
}

/// Beam search with `width` states per level; the final states best first
/// (see the [module docs](self)). A `width` of 0 counts as 1, which gives the
/// greedy tree. At most `width` results; fewer when exact-equal scores were
/// merged or fewer complete trees exist.
///
/// Every merge, the root included, is scored by the model's own potential
/// (unlike StandardHC, which ranks the root merge with the non-root rate).
/// Fails only on a model without points.
pub(super) fn beam_search<M: Model + ?Sized>(model: &M, width: usize) -> Result<Vec<ScoredTree>> {
    let n = model.num_points();
    check_points(n)?;
    let width = width.max(1);
    let mut shared = Shared {
        model,
        clusters: leaves(model)
            .into_iter()
            .map(|part| Built {
                part,
                children: None,
            })
            .collect(),
        by_children: HashMap::new(),
        scores: HashMap::new(),
    };
    let mut states = vec![State {
        active: (0..n as u32).collect(),
        log_potential: 0.0,
    }];
    let mut local: Vec<Proposal> = Vec::new();
    let mut proposals: Vec<Proposal> = Vec::new();
    for _level in 1..n {
        proposals.clear();
        for (s, state) in states.iter().enumerate() {
            local.clear();
            let active = &state.active;
            for j in 1..active.len() {
                for i in 0..j {
                    let psi = shared.score(active[i], active[j]);
                    let mut value = state.log_potential + psi;
                    if value.is_nan() {
                        value = f64::NEG_INFINITY;
                    }
                    local.push(Proposal {
                        psi,
                        value,
                        state: s,
                        order: local.len(),
                        i,
                        j,
                    });
                }
            }
            if local.len() > width {
                local.select_nth_unstable_by(width - 1, better_in_state);
                local.truncate(width);
            }
            proposals.extend_from_slice(&local);
        }
        proposals.sort_unstable_by(better);
        let mut next: Vec<State> = Vec::with_capacity(width);
        let mut kept: HashSet<Vec<u32>> = HashSet::new();
        for p in &proposals {
            if next.len() == width {
                break;
            }
            let parent = &states[p.state].active;
            let id = shared.merge(parent[p.i], parent[p.j]);
            let mut active = Vec::with_capacity(parent.len() - 1);
            active.extend(
                parent
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != p.i && k != p.j)
                    .map(|(_, &c)| c),
            );
            let mut key = active.clone();
            key.push(id);
            key.sort_unstable();
            if !kept.insert(key) {
                continue; // another merge order of a partial clustering already kept
            }
            for &c in &active {
                shared.score(c, id);
            }
            active.push(id);
            next.push(State {
                active,
                log_potential: p.value,
            });
        }
        states = next;
    }
    Ok(states
        .iter()
        .map(|s| ScoredTree {
            tree: shared.tree(s.active[0]).canonical(),
            log_potential: s.log_potential,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::beam_search as reference;
    use crate::baselines::{beam_search, default_beam_width};
    use crate::ginkgo::{Ginkgo, SimulatorParams, Variant, generate};
    use crate::{Dasgupta, Hcc, Matrix, Model, Weights};

    /// Symmetric weights from a seeded xorshift: continuous in [-1, 1], or
    /// few distinct values (many ties, zero-cost merges) when `levels > 0`.
    #[allow(clippy::needless_range_loop)]
    fn weights(n: usize, seed: u64, levels: u32, nonnegative: bool) -> Weights {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut unit = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut rows = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in i + 1..n {
                let mut v = 2.0 * unit() - 1.0;
                if levels > 0 {
                    v = (v * levels as f64).round() / levels as f64;
                }
                if nonnegative {
                    v = v.abs();
                }
                rows[i][j] = v;
                rows[j][i] = v;
            }
        }
        Weights::from_matrix(&Matrix::from_rows(rows).unwrap()).unwrap()
    }

    fn same<M: Model>(model: &M, width: usize, what: &str) {
        let want = reference(model, width).unwrap();
        let got = beam_search(model, width).unwrap();
        assert_eq!(got.len(), want.len(), "{what} width {width}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.tree, w.tree, "{what} width {width}");
            assert_eq!(
                g.log_potential.to_bits(),
                w.log_potential.to_bits(),
                "{what} width {width}"
            );
        }
    }

    /// The candidate lists give exactly the results (trees, values, order)
    /// of ranking every pair of every state, on continuous and tied weights,
    /// at widths from greedy to exhaustive, including widths far below the
    /// number of pairs (lists that run out and are rebuilt).
    #[test]
    fn same_results_as_ranking_every_pair() {
        for seed in 0..6u64 {
            for (n, levels) in [(2, 0), (5, 0), (7, 2), (9, 0), (12, 3), (16, 0), (24, 1)] {
                let w = weights(n, seed, levels, false);
                let hcc = Hcc::new(&w, 1.0).unwrap();
                let das = Dasgupta::new(&weights(n, seed, levels, true), 0.7).unwrap();
                for width in [1, 2, 3, 7, 20, default_beam_width(n), 400] {
                    if n >= 16 && width > 50 {
                        continue; // the reference is slow there
                    }
                    same(&hcc, width, &format!("hcc n {n} seed {seed}"));
                    same(&das, width, &format!("dasgupta n {n} seed {seed}"));
                }
            }
        }
    }

    /// The same on Ginkgo jets (the likelihood the beam was designed for).
    #[test]
    fn same_results_on_jets() {
        let jets = generate(&SimulatorParams::qcd(), 12, 4, 14, 5).unwrap();
        for jet in &jets {
            for variant in [Variant::Current, Variant::Legacy] {
                let model = Ginkgo::new(jet, variant);
                let n = jet.len();
                for width in [1, 3, (3 * n).min(n * (n - 1) / 2), default_beam_width(n)] {
                    same(&model, width, &format!("{} {variant:?}", jet.id));
                }
            }
        }
    }
}
