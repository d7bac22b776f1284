//! A* as a person asks for it: the model, the Ginkgo heuristic, exact or
//! approximate search with its options, initial trees and beam width, and
//! the memory budget. Every door checks and builds its search here:
//!
//! 1. [`AstarJob::check`]: combinations that ask for nothing sensible (a
//!    Ginkgo heuristic for a cost model, no children, no rounds, a beam of
//!    width 0, a heuristic weight that is not a positive number);
//! 2. [`AstarJob::check_points`] and [`AstarJob::check_jets`]: exact A*'s
//!    point limit, and the memory of the approximate search's initial trees
//!    and sampled candidates, before the data is built or a jet searched;
//! 3. [`AstarJob::request`]: the [`Request`] of [`super::solve`] and
//!    [`super::solve_jet`] over `n` points, with the defaults filled in.
//!
//! Cost: `O(1)` per check, `O(jets)` for a jets file.

use super::{ApproxOptions, MAX_ASTAR_POINTS, Request, Start, default_starts};
use crate::error::{Error, Result};
use crate::ginkgo::{Heuristic, JetsFile};
use crate::input::{Naming, ginkgo_variant};
use crate::models::ModelName;

/// An A* search as a door describes it; unset fields take their defaults
/// (the h0 heuristic, [`default_starts`], the compact beam width).
#[derive(Clone, Debug)]
pub struct AstarJob {
    /// The model, by its registry name.
    pub model: ModelName,
    /// The heuristic of the Ginkgo models (`None`: h0); the cost models
    /// use their own admissible bounds.
    pub heuristic: Option<Heuristic>,
    /// `Some`: approximate A* with these options; `None`: exact A*.
    pub approx: Option<ApproxOptions>,
    /// The approximate search's initial trees (empty: [`default_starts`]).
    pub init: Vec<Start>,
    /// The width of the beam-search initial trees (`None`:
    /// [`crate::baselines::compact_beam_width`]).
    pub beam_width: Option<usize>,
    /// The person's memory limit in bytes (`None`: the memory available).
    pub memory_limit: Option<u64>,
    /// How messages spell the options.
    pub naming: Naming,
}

impl AstarJob {
    /// Step 1 (module docs).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`](crate::ErrorKind::Input) naming the option.
    pub fn check(&self) -> Result<()> {
        let name = |k: &str| self.naming.name(k);
        if self.heuristic.is_some() && ginkgo_variant(self.model).is_none() {
            return Err(Error::input(format!(
                "{} chooses between the Ginkgo heuristics (h0, h1); hcc and dasgupta use their own",
                name("heuristic")
            )));
        }
        let Some(options) = &self.approx else {
            return Ok(());
        };
        let at_least_one = |k: &str| Error::input(format!("{} must be at least 1", name(k)));
        if options.top_k == 0 {
            return Err(at_least_one("top-k"));
        }
        if self.beam_width == Some(0) {
            return Err(at_least_one("beam-width"));
        }
        if let Some(w) = options.weight.filter(|w| !(w.is_finite() && *w > 0.0)) {
            return Err(Error::input(format!(
                "{} must be a positive number, not {}",
                name("weight"),
                crate::report::number(w)
            )));
        }
        if options.rounds == 0 {
            return Err(at_least_one("rounds"));
        }
        Ok(())
    }

    /// The Ginkgo heuristic (default h0).
    pub fn heuristic(&self) -> Heuristic {
        self.heuristic.unwrap_or(Heuristic::H0)
    }

    /// The name of the heuristic the search uses (see [`super::heuristic_name`]).
    pub fn heuristic_name(&self) -> &'static str {
        super::heuristic_name(self.model, self.heuristic())
    }

    /// Step 3 (module docs): the search over `n` points (`jets`: of a jets
    /// file, whose default initial trees differ).
    pub fn request(&self, n: usize, jets: bool) -> Request {
        let Some(options) = &self.approx else {
            return Request::Exact;
        };
        let starts = if self.init.is_empty() {
            default_starts(jets, self.beam_width.is_some())
        } else {
            self.init.clone()
        };
        Request::Approximate {
            options: options.clone(),
            starts,
            beam_width: self
                .beam_width
                .unwrap_or_else(|| crate::baselines::compact_beam_width(n)),
        }
    }

    /// Step 2 (module docs) for `n` points of pairwise data, before the
    /// data is built.
    ///
    /// # Errors
    ///
    /// Too many points for exact A*, and the memory of the approximate
    /// search (see [`Request::check_memory`]).
    pub fn check_points(&self, n: usize) -> Result<()> {
        if self.approx.is_none() && n > MAX_ASTAR_POINTS {
            return Err(Error::input(format!(
                "{n} points is too many for exact A*: it supports at most {MAX_ASTAR_POINTS}; \
                 use {} (approximate A*, any number of points)",
                self.naming.name("approx")
            )));
        }
        self.check_sizes(n, 1, false)
    }

    /// Step 2 (module docs) for a jets file, searched a jet per thread.
    ///
    /// # Errors
    ///
    /// A jet with too many leaves for exact A* (the first, named), and the
    /// memory of the approximate search over the largest jet.
    pub fn check_jets(&self, file: &JetsFile) -> Result<()> {
        let too_many =
            |j: &&crate::ginkgo::Jet| self.approx.is_none() && j.len() > MAX_ASTAR_POINTS;
        if let Some(jet) = file.jets.iter().find(too_many) {
            return Err(Error::input(format!(
                "jet {} has {} leaves; exact A* supports at most {MAX_ASTAR_POINTS}: use {} for more",
                jet.id,
                jet.len(),
                self.naming.name("approx")
            )));
        }
        let n = file.jets.iter().map(|j| j.len()).max().unwrap_or(0);
        self.check_sizes(n, crate::base::par::threads(), true)
    }

    /// The memory of the approximate search over `n` points with
    /// `parallel` searches at once, naming the options that ask for it.
    fn check_sizes(&self, n: usize, parallel: usize, jets: bool) -> Result<()> {
        let name = |k: &str| self.naming.name(k);
        let samples = self.approx.as_ref().map_or(0, |o| o.samples);
        self.request(n, jets)
            .check_memory(n, parallel, self.memory_limit)
            .map_err(|e| {
                Error::input(format!(
                    "{e} (asked by {} {samples}, {}, {})",
                    name("samples"),
                    name("init"),
                    name("beam-width")
                ))
            })
    }
}
