//! A* as every door asks for it: a model of the registry (a cost model over
//! pairwise data, or a jet's Ginkgo likelihood), optionally restricted by
//! triplets, searched exactly or approximately from the requested initial
//! trees. The command line and Python call [`solve`] and [`solve_jet`]; the
//! engines below ([`exact`], [`approximate`]) stay generic over any
//! [`Search`] model.
//!
//! # Initial trees under triplets
//!
//! Approximate A* never leaves the trees its initial trees span, so under
//! triplets it starts only from trees that satisfy them: those of the
//! requested starts in which every triplet holds, plus greedy agglomeration
//! under the triplets, which always satisfies them
//! ([`crate::constraints::Constrained::satisfying_starts`]). The initial trees rank merges at
//! β = 1 (the choices of a cost model do not depend on β > 0). The
//! triplets' cluster masks are of the search's set type: `u128` up to 128
//! points, [`WideSet`] beyond ([`crate::constraints::WideConstrained`]);
//! [`solve_as`] forces the type.
//!
//! Cost: that of the search (see the [module docs](super)) plus the initial
//! trees (see [`start_trees`]) for the approximate search.

use super::{ApproxOptions, Outcome, Start, approximate_with, exact, start_trees};
use crate::base::set::{MAX_SET_POINTS, Set, SetRepr, WideSet};
use crate::constraints::{Restricted, TripletRule};
use crate::ddt::Triplet;
use crate::error::{Error, Result};
use crate::ginkgo::{Ginkgo, Heuristic, Jet, Variant};
use crate::models::CostModel;
use crate::{Options, Search};

/// The search a door asks for.
#[derive(Clone, Debug)]
pub enum Request {
    /// Exact A* on the full trellis (at most
    /// [`MAX_ASTAR_POINTS`](super::MAX_ASTAR_POINTS) points).
    Exact,
    /// Approximate A* on a sparse trellis grown from the trees of `starts`
    /// (beam search of width `beam_width` when `starts` holds
    /// [`Start::Beam`]).
    Approximate {
        /// The search's options (candidates, rounds, budget, seed).
        options: ApproxOptions,
        /// The initial trees.
        starts: Vec<Start>,
        /// The width of the beam-search start.
        beam_width: usize,
    },
}

/// The best hierarchy of a cost model, restricted to the trees in which every
/// triplet holds when `triplets` is not empty.
///
/// # Errors
///
/// Those of the search (a memory budget or time limit reached by exact A*,
/// too many points for exact A*), of the triplets (a point out of range,
/// contradictions) and of the initial trees.
pub fn solve(
    model: &CostModel,
    triplets: &[Triplet],
    request: &Request,
    run: &Options<'_>,
) -> Result<Outcome> {
    if model.data().n() <= MAX_SET_POINTS {
        solve_as::<Set>(model, triplets, request, run)
    } else {
        solve_as::<WideSet>(model, triplets, request, run)
    }
}

/// [`solve`] with the approximate search's clusters and the triplets'
/// cluster masks as `S` (`u128` up to 128 points, [`WideSet`] for any
/// number): the same answer on both types. Exact A* runs on `u128`
/// whatever `S` is.
///
/// # Errors
///
/// Those of [`solve`], and more points than `S` holds.
pub fn solve_as<S: SetRepr>(
    model: &CostModel,
    triplets: &[Triplet],
    request: &Request,
    run: &Options<'_>,
) -> Result<Outcome> {
    // Linkage starts run on the data's distances, computed only when asked.
    let distances = || model.data().linkage_distances();
    crate::with_cost_model!(model, |m| search::<S, _, _>(
        m,
        &m.with_beta(1.0)?,
        &distances,
        triplets,
        request,
        run
    ))
}

/// The best hierarchy of a jet under the Ginkgo likelihood `variant` with
/// `heuristic` (exact only with [`Heuristic::H0`]).
///
/// # Errors
///
/// A linkage start (jets have no pairwise distances), and those of the
/// search.
pub fn solve_jet(
    jet: &Jet,
    variant: Variant,
    heuristic: Heuristic,
    request: &Request,
    run: &Options<'_>,
) -> Result<Outcome> {
    if let Request::Approximate { starts, .. } = request {
        if let Some(kind) = starts.iter().find(|k| k.is_linkage()) {
            return Err(Error::parameter(format!(
                "the {kind:?} start is a linkage of pairwise distances; jets take beam and greedy"
            )));
        }
    }
    let model = Ginkgo::new(jet, variant).with_heuristic(heuristic);
    if jet.len() <= MAX_SET_POINTS {
        search::<Set, _, _>(&model, &model, &|| Vec::new(), &[], request, run)
    } else {
        search::<WideSet, _, _>(&model, &model, &|| Vec::new(), &[], request, run)
    }
}

/// [`solve`] on a concrete model, approximate A* on clusters `S`; `unit`
/// is the same model at β = 1 (the initial trees' ranking).
fn search<S: SetRepr, M: Search, U: Search>(
    model: &M,
    unit: &U,
    distances: &dyn Fn() -> Vec<f64>,
    triplets: &[Triplet],
    request: &Request,
    run: &Options<'_>,
) -> Result<Outcome> {
    let Request::Approximate {
        options,
        starts,
        beam_width,
    } = request
    else {
        return if triplets.is_empty() {
            exact(model, run)
        } else {
            // Masks of `S`: beyond 128 points exact A* refuses with its own limit.
            exact(
                &Restricted::<_, TripletRule<S>>::new(model, triplets.to_vec())?,
                run,
            )
        };
    };
    let d = starts.iter().any(|s| s.is_linkage()).then(distances);
    let init = start_trees(unit, d.as_deref(), starts, *beam_width)?;
    if triplets.is_empty() {
        approximate_with::<S, _>(model, &init, options, run)
    } else {
        let init = Restricted::<_, TripletRule<S>>::new(unit, triplets.to_vec())?
            .satisfying_starts(init)?;
        approximate_with::<S, _>(
            &Restricted::<_, TripletRule<S>>::new(model, triplets.to_vec())?,
            &init,
            options,
            run,
        )
    }
}

impl Request {
    /// Checks the memory that the approximate search's initial trees (beam
    /// search, classic linkages) and the sampled candidates of one vertex
    /// need over `n` points with `parallel` searches at once, against the
    /// memory available, or `max_memory` when that is larger (`max_memory`
    /// is the search's budget: the search stops at it with its best tree,
    /// so a smaller cap does not refuse the initial trees). Exact A* is
    /// bounded by its budget as it runs.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge), naming the part and the bytes it needs.
    pub fn check_memory(&self, n: usize, parallel: usize, max_memory: Option<u64>) -> Result<()> {
        use crate::plan::{approx_candidates_bytes, beam_bytes, check_bytes, linkage_bytes};
        let Request::Approximate {
            options,
            starts,
            beam_width,
        } = self
        else {
            return Ok(());
        };
        let limit = max_memory.filter(|&cap| Some(cap) > crate::available_memory());
        let parallel = parallel as u128;
        if starts.contains(&Start::Beam) {
            check_bytes(
                &format!("beam search of width {beam_width} over {n} points"),
                beam_bytes(n, *beam_width).saturating_mul(parallel),
                limit,
            )?;
        }
        if starts.iter().any(|k| k.is_linkage()) {
            check_bytes(
                &format!("the linkage initial trees over {n} points"),
                linkage_bytes(n).saturating_mul(parallel),
                limit,
            )?;
        }
        check_bytes(
            &format!(
                "approximate A* with {} sampled candidates over {n} points",
                options.samples
            ),
            approx_candidates_bytes(n, options.samples).saturating_mul(parallel),
            limit,
        )
    }
}

/// The name of the heuristic A* uses for `model`: `hcc` and `dasgupta`
/// (their own bounds), `mst` (the linkage potentials' spanning-tree
/// bound), or the Ginkgo likelihood's `h0`/`h1` as `jet` says.
pub fn heuristic_name(model: crate::models::ModelName, jet: Heuristic) -> &'static str {
    use crate::models::ModelName;
    match (model, jet) {
        (ModelName::Hcc, _) => "hcc",
        (ModelName::Dasgupta, _) => "dasgupta",
        (m, _) if m.linkage_kind().is_some() => "mst",
        (_, Heuristic::H0) => "h0",
        (_, Heuristic::H1) => "h1",
    }
}
