//! Exact inference over flat clusterings: the flat cluster trellis.
//!
//! A flat clustering (a partition) of the points is scored by an energy per
//! cluster, `P(C) = Π_{c ∈ C} E(c) / Z` (Greenberg et al., *Compact
//! Representation of Uncertainty in Clustering*, Definition 2), over all
//! Bell(n) partitions: 1.4·10⁹ at n = 15, 5.2·10¹³ at n = 20. The trellis over
//! all subsets shares their sub-problems (Fact 1): the partition holding the
//! lowest point `x` of `S` in cluster `C` leaves a partition of `S ∖ C`, so
//!
//! ```text
//! Z(S) = Σ_{C ⊆ S, x ∈ C} E(C) · Z(S ∖ C),      Z(∅) = 1,
//! M(S) = max_{C ⊆ S, x ∈ C} E(C) · M(S ∖ C)      (the MAP clustering, Fact 3)
//! ```
//!
//! bottom-up over all subsets: `Σ_S 2^(|S|-1) ≈ 3^n / 2` terms, `O(2^n)` memory.
//! Because `Z` is tabulated for **every** subset, the marginal of every cluster
//! comes from the same tables in one `O(2^n)` sweep (§3.3):
//!
//! ```text
//! P(c) = E(c) · Z(D ∖ c) / Z(D),        P(i ~ j) = Σ_{c ∋ i, j} P(c),
//! ```
//!
//! the second (the pairwise co-clustering matrix) in `O(n² 2^n)` additions.
//! Exact samples peel the cluster holding the lowest remaining point with
//! probability `E(c) Z(rest) / Z(current)`.
//!
//! Energies are per cluster, so any [`Energy`] is tabulated once (the
//! summaries of all `2^n` subsets, then one `log E` each) and every model
//! runs the same kernels: first the cache-blocked, vectorised kernel of the
//! hierarchical trellis (`dense/blocked.rs`: a MAP pass, then a pass over
//! 8-byte weights scaled by a factor affine in the subset size; there the
//! cluster holds the *highest* point of `S`, which makes every term a
//! product of two blocks), and when the weights leave its range the
//! scaled-arithmetic sweep (one multiply-add and one add per term, no `exp`;
//! see `dense/kernel.rs`), level by level in parallel. `M(S)` and `Z(S)` do
//! not depend on which point fixes the cluster.
//!
//! # Any temperature
//!
//! Scaled arithmetic covers log-values up to `SEPARABLE_LOG_LIMIT` (about
//! 4.6e7). When `n · max |log E| + ln Bell(n)` (a bound on every value of the
//! tables) is beyond it, as at extreme β or with huge weights, a log-space
//! kernel runs instead: one `exp` per term, exact for any finite energy. As
//! in the hierarchical trellis, every subset keeps its MAP value `log M(S)`
//! and the relative part `r(S) = log Z(S) - log M(S)` (between 0 and
//! `ln Bell(|S|)`), and every probability is computed from
//!
//! ```text
//! log p(C | S) = log E(C) + log M(S ∖ C) - log M(S) + r(S ∖ C) - r(S),
//! ```
//!
//! the probability that the partition of `S` puts its lowest point in `C`,
//! whose first difference is the same floating-point sum the MAP pass
//! maximised, so exactly 0 for the MAP cluster. Differences of huge logs
//! (`log E(c) + log Z(D ∖ c) - log Z(D)` is a difference of numbers near
//! 10^300 at β = 10^300) never enter: samples chain these probabilities, and
//! the marginals of the log-space kernel come from a top-down pass over them
//! (`marginals.rs`), `O(3^n)` instead of `O(2^n)`.
//!
//! Beyond `n = 30`: the [sparse trellis](crate::sparse) over a family of
//! clusters closed under recursive complement (Definition 5, Fact 5), and
//! [`tree_partitions`], the partitions that cut a given hierarchy (a
//! linear-time DP). [`perturb_and_map`] is the Perturb-and-MAP approximation
//! the paper compares against.
//!
//! | module | what |
//! |---|---|
//! | this one | [`FlatTrellis`]: `log Z`, MAP and samples |
//! | `marginals.rs` | [`FlatMarginals`]: every cluster's marginal and the co-clustering matrix |
//! | `tree.rs` | [`tree_partitions`]: the partitions cutting one hierarchy |
//! | `perturb.rs` | [`perturb_and_map`] |

mod marginals;
mod perturb;
mod tree;

pub use marginals::FlatMarginals;
pub use perturb::perturb_and_map;
pub use tree::{TreeCuts, tree_partitions};

use num_bigint::BigUint;
use rand::{Rng, RngExt};

use crate::base::count::bell;
use crate::base::memory;
use crate::base::memory::FLAT_BYTES;
use crate::base::par;
use crate::base::run::{Options, Ticker};
use crate::base::scaled::{RelativeSum, Scaled, ZERO_EXP, relative_of};
use crate::base::set::{Mask, for_each_split, full, lowest, members};
use crate::dense::blocked::{self, KernelPath};
use crate::dense::checkpoint::Run;
use crate::dense::kernel::{
    Cell, Factors, Fast, SEPARABLE_LOG_LIMIT, level_max_exp, sweep, sweep_fast,
};
use crate::dense::levels::{solve_level, update_by_size};
use crate::dense::potentials::tabulate;
use crate::error::{Error, ErrorKind, Result};
use crate::models::Energy;

/// A partition as sorted clusters of sorted points, clusters ordered by their
/// smallest point.
pub type Partition = Vec<Vec<usize>>;

/// A partition with its score: the answer of every method that finds one
/// best flat clustering.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredPartition {
    /// The clusters, each sorted, ordered by their smallest point.
    pub clusters: Partition,
    /// Its total log-energy `Σ log E(c)`.
    pub log_energy: f64,
}

/// Refuses a `log E` that is NaN or `+∞` (`log_e(c)` of every cluster `c`).
fn check_log_energies(size: usize, log_e: impl Fn(usize) -> f64 + Sync) -> Result<()> {
    match (1..size).find(|&c| log_e(c).is_nan() || log_e(c) == f64::INFINITY) {
        Some(c) => Err(Error::new(ErrorKind::BadPotential {
            detail: format!(
                "log E of cluster {:?} is {}",
                members(c as Mask).collect::<Vec<_>>(),
                log_e(c)
            ),
        })),
        None => Ok(()),
    }
}

/// The MAP partition of all `n` points from the MAP value `map[S]` of every
/// subset (`map[∅] = 0`) and `log E`: clusters by smallest point.
fn map_clustering(n: usize, log_e: impl Fn(Mask) -> f64, map: &[f64]) -> Partition {
    let mut out = Vec::new();
    let mut s = full(n);
    while s != 0 {
        let c = map_cluster(s, &log_e, map);
        out.push(members(c).collect());
        s ^= c;
    }
    out
}

/// The cluster holding the lowest point of `s` in the MAP partition of `s`
/// (the largest such mask among ties). The inside pass keeps only the MAP
/// values, so the few clusters of one MAP partition are recovered here by a
/// scan of `2^(|s|-1)` candidates each, instead of tracking the argument of
/// every maximum in the hot loop.
fn map_cluster(s: Mask, log_e: impl Fn(Mask) -> f64, map: &[f64]) -> Mask {
    let low = lowest(s);
    let rest = s ^ low;
    let (mut best, mut arg) = (f64::NEG_INFINITY, low);
    let mut sub = rest;
    loop {
        let c = low | sub;
        let v = log_e(c) + map[(s ^ c) as usize];
        if v > best {
            (best, arg) = (v, c);
        }
        if sub == 0 {
            break;
        }
        sub = (sub - 1) & rest;
    }
    arg
}

/// The flat trellis over all subsets, with the partition function and MAP
/// clustering of every subset computed.
pub struct FlatTrellis<E> {
    energy: E,
    n: usize,
    /// `log E(c)` (the key) of every cluster, and `E(c)` in scaled
    /// arithmetic when the scaled kernel runs (zero otherwise).
    cells: Vec<Cell>,
    /// Whether the scaled kernel ran (every value within its range).
    scaled: bool,
    /// `r(S) = log Z(S) - log M(S)` (see the module docs).
    rel: Vec<f64>,
    /// `log M(S)`, the MAP value of every subset.
    map: Vec<f64>,
    map_partition: ScoredPartition,
    /// The partition-function weights of the blocked kernel, when it ran.
    weights: Option<BlockedWeights>,
}

/// `Z(S) = weights[S] · 2^(α|S| + β)` (see `dense/blocked.rs`).
struct BlockedWeights {
    weights: Vec<f64>,
    alpha: i32,
    beta: i32,
}

impl<E> std::fmt::Debug for FlatTrellis<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatTrellis")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

impl<E: Energy> FlatTrellis<E> {
    /// Tabulates the energies and runs the inside pass (`log Z` and the MAP of
    /// every subset), `O(3^n)`.
    pub fn new(energy: E) -> Result<FlatTrellis<E>> {
        FlatTrellis::with_options(energy, &Options::default())
    }

    /// [`FlatTrellis::new`] with a memory limit and a progress callback
    /// (stage `"inside"`, counting terms; it may cancel).
    pub fn with_options(energy: E, options: &Options<'_>) -> Result<FlatTrellis<E>> {
        let n = energy.num_points();
        let summary = std::mem::size_of::<E::Summary>() as u64;
        let per_subset = FLAT_BYTES.max(summary + 24);
        memory::check_dense(n, per_subset << n.min(63), options.memory_limit)?;
        let size = 1usize << n;
        let mut cells = vec![Cell::ZERO; size];
        {
            let summaries = tabulate(&energy);
            let energy = &energy;
            update_by_size(&mut cells, 1..=n, |c| Cell {
                key: energy.log_energy(&summaries[c as usize]),
                ..Cell::ZERO
            });
        }
        check_log_energies(size, |c| cells[c].key)?;
        let scaled = within_scaled_range(n, cells[1..].iter().map(|c| c.key));
        if scaled {
            crate::base::par::update_indexed(&mut cells, |c, cell| {
                if c != 0 {
                    *cell = Cell::new(cell.key, cell.key);
                }
            });
        }
        // The blocked kernel runs two passes (MAP, then the weights).
        let terms = (3u64.pow(n as u32) - 1) / 2;
        let mut ticker = Ticker::new(options, "inside", if scaled { 2 * terms } else { terms })?;
        let mut t = FlatTrellis {
            energy,
            n,
            cells,
            scaled,
            rel: vec![0.0; size],
            map: vec![f64::NEG_INFINITY; size],
            map_partition: ScoredPartition {
                clusters: Vec::new(),
                log_energy: 0.0,
            },
            weights: None,
        };
        if scaled {
            if !t.inside_blocked(options, &mut ticker)? {
                refuse_checkpoint(options, "the level-order flat pass")?;
                t.inside(&mut ticker)?;
            }
        } else {
            refuse_checkpoint(options, "the log-space flat pass")?;
            t.inside_log_space(&mut ticker)?;
        }
        let (log_z, map) = (t.log_z(), t.map[size - 1]);
        if log_z.is_nan() || map.is_nan() || log_z == f64::INFINITY || map == f64::INFINITY {
            return Err(Error::new(ErrorKind::BadPotential {
                detail: "the log-energy of some partition overflows".into(),
            }));
        }
        if log_z == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoPartition));
        }
        t.map_partition = ScoredPartition {
            clusters: t.map_clustering(),
            log_energy: t.map[size - 1],
        };
        Ok(t)
    }

    /// The MAP partition alone, with its log-energy: one max-plus pass of
    /// the blocked kernel over `log E` (8-byte values, see
    /// `dense/blocked.rs`), about half the work and a quarter of the memory
    /// of [`FlatTrellis::new`]; the same partition and value as its
    /// [`FlatTrellis::map`].
    pub fn map_only(energy: &E, options: &Options<'_>) -> Result<ScoredPartition> {
        let n = energy.num_points();
        if n == 0 {
            return Ok(FlatTrellis::with_options(energy, options)?.map().clone());
        }
        memory::check_dense(n, pass_bytes::<E>(n), options.memory_limit)?;
        let size = 1usize << n;
        let log_e = log_energies(energy)?;
        let path = KernelPath::choose(options.kernel)?;
        let mut ticker = Ticker::new(options, "inside", (3u64.pow(n as u32) - 1) / 2)?;
        let run = run_of(options, &log_e, n)?;
        let keys = blocked::flat_keys(n, &log_e, path, run.as_ref(), &mut ticker)?;
        let log_energy = keys[size - 1];
        if log_energy.is_nan() || log_energy == f64::INFINITY {
            return Err(Error::new(ErrorKind::BadPotential {
                detail: "the log-energy of some partition overflows".into(),
            }));
        }
        if log_energy == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoPartition));
        }
        Ok(ScoredPartition {
            clusters: map_clustering(n, |c| log_e[c as usize], &keys),
            log_energy,
        })
    }

    /// `log Z` alone: one weight pass of the blocked kernel (no MAP pass) at
    /// a scale guessed without the MAP values (the line from the single
    /// points' energies to the better of the one-cluster and all-singletons
    /// partitions, widened by half of `n ln n`), about half
    /// the work of [`FlatTrellis::new`], over 16 bytes per subset (the
    /// scaled energies and the weights; the log-energies are freed before
    /// the pass). Where the guess or the energies leave the kernel's window,
    /// the full trellis runs instead (the same answer at its cost, and its
    /// own memory check). Agrees with [`FlatTrellis::log_z`] to rounding.
    pub fn log_z_only(energy: &E, options: &Options<'_>) -> Result<f64> {
        let n = energy.num_points();
        // The blocked pass's own need; the full trellis, its fallback,
        // checks its larger one before it allocates.
        memory::check_dense(n, pass_bytes::<E>(n), options.memory_limit)?;
        if n >= 2 {
            let log_e = log_energies(energy)?;
            let in_range = within_scaled_range(n, log_e[1..].iter().copied());
            if let Some(scale) = guess_scale(n, &log_e).filter(|_| in_range) {
                let path = KernelPath::choose(options.kernel)?;
                let mut ticker = Ticker::new(options, "inside", (3u64.pow(n as u32) - 1) / 2)?;
                let run = run_of(options, &log_e, n)?;
                let floor = two_partitions(n, &log_e);
                let e_hat = scaled_energies(n, |c| Cell::new(log_e[c], log_e[c]), scale);
                // The pass holds the scaled energies and its table only.
                drop(log_e);
                let w = match e_hat {
                    Some(e_hat) => {
                        blocked::flat_weights(n, &e_hat, scale, path, run.as_ref(), &mut ticker)?
                    }
                    None => None,
                };
                if let Some(w) = w {
                    let log_z = w[w.len() - 1].ln() + scale.a * n as f64 + scale.b;
                    if log_z.is_finite() {
                        // Never below a partition's own log-energy (rounding
                        // could put it there: all-impossible clusters).
                        return Ok(log_z.max(floor));
                    }
                }
            }
        }
        let full = FlatTrellis::with_options(energy, options).map_err(|e| {
            if matches!(e.kind(), ErrorKind::OutOfMemory { .. }) {
                e.context(
                    "the energies leave the range of the blocked flat pass, so log Z needs \
                     the full flat trellis",
                )
            } else {
                e
            }
        })?;
        Ok(full.log_z())
    }

    /// The blocked inside pass (see `dense/blocked.rs`): the MAP values, then
    /// the weights at the scale fitted to them, with every cluster holding
    /// the highest point of its subset. False when the weights leave the
    /// blocked kernel's range (then the level-order kernel runs).
    fn inside_blocked(&mut self, options: &Options<'_>, ticker: &mut Ticker<'_>) -> Result<bool> {
        let n = self.n;
        let size = 1usize << n;
        let path = KernelPath::choose(options.kernel)?;
        let cells = &self.cells;
        let log_e = par::collect_range(size, true, |c| if c == 0 { 0.0 } else { cells[c].key });
        let run = run_of(options, &log_e, n)?;
        let run = run.as_ref();
        let keys = blocked::flat_keys(n, &log_e, path, run, ticker)?;
        // ln Bell(k) ≤ k ln k bounds the relative part of log Z.
        let slack = |k: usize| k as f64 * (k.max(1) as f64).ln();
        let Some(scale) = blocked::Scale::from_keys(n, &keys, slack) else {
            return Ok(false);
        };
        drop(log_e);
        let size_of = |c: usize| (c as Mask).count_ones() as f64;
        let (alpha, beta) = scale.exponents();
        let Some(weights) = blocked_weights(n, |c| cells[c], scale, path, run, ticker)? else {
            return Ok(false);
        };
        let (a, b) = (scale.a, scale.b);
        par::update_indexed(&mut self.rel, |s, r| {
            *r = weights[s].ln() + a * size_of(s) + b - keys[s];
        });
        self.map = keys;
        self.weights = Some(BlockedWeights {
            weights,
            alpha,
            beta,
        });
        Ok(true)
    }

    /// The inside pass in scaled arithmetic (see `dense/kernel.rs`).
    fn inside(&mut self, ticker: &mut Ticker<'_>) -> Result<()> {
        let n = self.n;
        let max_e: Vec<i32> = (0..=n)
            .map(|k| {
                if k == 0 {
                    ZERO_EXP
                } else {
                    level_max_exp(&self.cells, n, k, |c| c.exp)
                }
            })
            .collect();
        // Partition-function cells: Z(∅) = 1, filled level by level, with
        // their compact copies for the fast sweep (see `kernel`).
        let mut z = vec![Cell::ZERO; 1 << n];
        z[0] = Cell::ONE;
        let mut max_z = vec![ZERO_EXP; n + 1];
        max_z[0] = Cell::ONE.exp;
        let mut e_fast = vec![Fast::ZERO; 1 << n];
        {
            let cells = &self.cells;
            update_by_size(&mut e_fast, 1..=n, |c| {
                Fast::of(&cells[c as usize], max_e[c.count_ones() as usize])
            });
        }
        let mut z_fast = vec![Fast::ZERO; 1 << n];
        z_fast[0] = Fast::of(&Cell::ONE, max_z[0]);
        self.map[0] = 0.0;
        for k in 1..=n {
            let e_ref = (1..=k)
                .map(|j| max_e[j].saturating_add(max_z[k - j]))
                .max()
                .unwrap_or(ZERO_EXP)
                .saturating_add(2);
            let factors = Factors::new(&max_e, &max_z, k, true);
            let work = 1u64 << (k - 1);
            {
                let (cells, z) = (&self.cells[..], &z[..]);
                let (e_fast, z_fast) = (&e_fast[..], &z_fast[..]);
                let mut tables = (&mut self.rel[..], &mut self.map[..]);
                solve_level(
                    n,
                    k,
                    work,
                    &mut tables,
                    ticker,
                    |_, s| {
                        sweep_fast(s, e_fast, z_fast, &factors, true).unwrap_or_else(|| {
                            let (m, _, g) = sweep(s, cells, z, true, e_ref);
                            (m, g)
                        })
                    },
                    |t, s, (m, g)| {
                        t.1[s as usize] = m;
                        t.0[s as usize] = relative_of(g, m);
                    },
                )?;
            }
            let (rel, map) = (&self.rel, &self.map);
            // Z(S) rebuilt from its MAP value and relative part, as the
            // marginals rebuild it (see `marginals.rs`).
            update_by_size(&mut z, k..=k, |s| {
                let s = s as usize;
                Cell::of(map[s], Scaled::from_relative(map[s], rel[s]))
            });
            max_z[k] = level_max_exp(&z, n, k, |c| c.exp);
            let (z, base) = (&z, max_z[k]);
            update_by_size(&mut z_fast, k..=k, |s| Fast::of(&z[s as usize], base));
        }
        Ok(())
    }

    /// The inside pass in log space, relative to the MAP values (see the
    /// module docs): one `exp` per term, exact for any finite energy.
    fn inside_log_space(&mut self, ticker: &mut Ticker<'_>) -> Result<()> {
        let n = self.n;
        self.map[0] = 0.0;
        for k in 1..=n {
            let cells = &self.cells[..];
            let mut tables = (&mut self.rel[..], &mut self.map[..]);
            solve_level(
                n,
                k,
                1u64 << (k - 1),
                &mut tables,
                ticker,
                |(rel, map), s| {
                    let low = lowest(s);
                    let rest = s ^ low;
                    let mut sum = RelativeSum::new();
                    let mut sub = rest;
                    loop {
                        let c = low | sub;
                        let r = (s ^ c) as usize;
                        sum.add(cells[c as usize].key + map[r], rel[r]);
                        if sub == 0 {
                            break;
                        }
                        sub = (sub - 1) & rest;
                    }
                    (sum.max(), sum.rel())
                },
                |t, s, (m, r)| {
                    t.1[s as usize] = m;
                    t.0[s as usize] = r;
                },
            )?;
        }
        Ok(())
    }

    /// `log p(C | S)`: the log-probability that the partition of `s` puts its
    /// lowest point in cluster `c` (`-∞` if `E(c) = 0` or nothing partitions
    /// the rest), from the MAP values and relative parts (see the module
    /// docs), so exact at any temperature.
    #[inline]
    pub(crate) fn cluster_log_p(&self, s: Mask, c: Mask) -> f64 {
        let r = (s ^ c) as usize;
        let v = self.cells[c as usize].key + self.map[r];
        if v == f64::NEG_INFINITY {
            return v;
        }
        let s = s as usize;
        ((v - self.map[s]) + self.rel[r] - self.rel[s]).min(0.0)
    }

    /// `log Z(S)`.
    #[inline]
    fn log_z_at(&self, s: Mask) -> f64 {
        // The relative part may be a rounding below 0 (see `relative_of`).
        self.map[s as usize] + self.rel[s as usize].max(0.0)
    }

    /// `Z(S)` in scaled arithmetic, exactly as the kernel that ran summed it:
    /// the blocked kernel's weight times its power of two, or rebuilt from
    /// the MAP value and relative part as the scaled kernel rebuilt it.
    #[inline]
    pub(crate) fn z_scaled(&self, s: Mask) -> Scaled {
        match &self.weights {
            Some(w) => Scaled::from_parts(
                w.weights[s as usize],
                w.alpha * s.count_ones() as i32 + w.beta,
            ),
            None => Scaled::from_relative(self.map[s as usize], self.rel[s as usize]),
        }
    }

    /// `E(c)` in scaled arithmetic, as the scaled kernel used it (zero after
    /// the log-space kernel).
    #[inline]
    pub(crate) fn energy_scaled(&self, c: Mask) -> Scaled {
        let cell = &self.cells[c as usize];
        Scaled {
            mant: cell.mant,
            exp: cell.exp,
        }
    }

    /// Whether the scaled kernel ran (else the log-space one, see the module docs).
    pub(crate) fn is_scaled(&self) -> bool {
        self.scaled
    }

    /// The energy model.
    pub fn energy(&self) -> &E {
        &self.energy
    }

    /// Number of points.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// `log Z`, the log partition function over all partitions.
    pub fn log_z(&self) -> f64 {
        self.log_z_at(full(self.n))
    }

    /// `log Z(S)` over the partitions of the points of `subset` alone (0 for
    /// ∅); an error for points outside the trellis.
    pub fn log_z_of(&self, subset: Mask) -> Result<f64> {
        self.check_subset(subset)?;
        Ok(self.log_z_at(subset))
    }

    /// `log E` of a cluster (tabulated); an error for the empty set or points
    /// outside the trellis.
    pub fn log_energy_of(&self, cluster: Mask) -> Result<f64> {
        self.check_subset(cluster)?;
        if cluster == 0 {
            return Err(Error::parameter("the empty set is not a cluster"));
        }
        Ok(self.cells[cluster as usize].key)
    }

    fn check_subset(&self, subset: Mask) -> Result<()> {
        if subset & !full(self.n) != 0 {
            return Err(Error::parameter(format!(
                "{subset:#b} is not a subset of the {} points",
                self.n
            )));
        }
        Ok(())
    }

    /// The MAP clustering (highest energy, clusters by smallest point) with
    /// its log-energy.
    pub fn map(&self) -> &ScoredPartition {
        &self.map_partition
    }

    fn map_clustering(&self) -> Partition {
        map_clustering(self.n, |c| self.cells[c as usize].key, &self.map)
    }

    /// The number of partitions of the points, Bell(n).
    pub fn num_partitions(&self) -> BigUint {
        bell(self.n)
    }

    /// Checks that `partition` is a partition of all the points and returns its clusters' masks.
    fn masks_of(&self, partition: &[Vec<usize>]) -> Result<Vec<Mask>> {
        let mut seen: Mask = 0;
        let mut masks = Vec::with_capacity(partition.len());
        for c in partition {
            if c.is_empty() {
                return Err(Error::tree("a cluster of the partition is empty"));
            }
            let mut m: Mask = 0;
            for &i in c {
                if i >= self.n {
                    return Err(Error::tree(format!(
                        "point {i} is out of range (n = {})",
                        self.n
                    )));
                }
                if (seen | m) >> i & 1 == 1 {
                    return Err(Error::tree(format!("point {i} appears more than once")));
                }
                m |= 1 << i;
            }
            seen |= m;
            masks.push(m);
        }
        if seen != full(self.n) {
            let missing = members(full(self.n) & !seen).next().unwrap_or(0);
            return Err(Error::tree(format!("point {missing} is in no cluster")));
        }
        Ok(masks)
    }

    /// `log P(C)` of a partition of all the points: the sum of `log p(c |
    /// S)` as its clusters are peeled by lowest point (see the module docs),
    /// exact at any temperature (the MAP partition of a model with a unique
    /// MAP has `log P = 0` at β = 10^300, which `Σ log E(c) - log Z` would
    /// lose).
    pub fn log_probability(&self, partition: &[Vec<usize>]) -> Result<f64> {
        let masks = self.masks_of(partition)?;
        let mut s = full(self.n);
        let mut total = 0.0;
        while s != 0 {
            let low = lowest(s);
            let c = *masks
                .iter()
                .find(|&&m| m & low != 0)
                .expect("a partition covers every point");
            total += self.cluster_log_p(s, c);
            s ^= c;
        }
        Ok(total)
    }

    /// One exact sample of a partition from `P(C)`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Partition {
        let mut out = Vec::new();
        let mut s = full(self.n);
        while s != 0 {
            let u: f64 = rng.random();
            let (mut acc, mut chosen, mut last) = (0.0, None, lowest(s));
            let mut visit = |c: Mask, _: Mask| {
                if chosen.is_none() {
                    let w = self.cluster_log_p(s, c).exp();
                    if w > 0.0 {
                        last = c;
                    }
                    acc += w;
                    if acc > u && w > 0.0 {
                        chosen = Some(c);
                    }
                }
            };
            visit(s, 0);
            for_each_split(s, &mut visit);
            let c = chosen.unwrap_or(last);
            out.push(members(c).collect());
            s ^= c;
        }
        out.sort();
        out
    }

    /// `k` exact samples, reproducible from `seed` (see [`crate::random`]).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Partition> {
        let mut rng = crate::random::rng(seed);
        (0..k).map(|_| self.sample(&mut rng)).collect()
    }
}

/// `log E(c)` of every cluster (entry 0 unused), checked: NaN or `+∞` is
/// an error naming the cluster.
/// Bytes of one blocked pass over `n` points ([`FlatTrellis::log_z_only`],
/// [`FlatTrellis::map_only`]): two tables at a time, the summaries of `E`
/// among them at first (see `FLAT_PASS_BYTES`).
fn pass_bytes<E: Energy + ?Sized>(n: usize) -> u64 {
    let summary = std::mem::size_of::<E::Summary>() as u64;
    let per_subset = memory::FLAT_PASS_BYTES.max(summary + 8);
    per_subset.saturating_mul(1u64 << n.min(63))
}

fn log_energies<E: Energy + ?Sized>(energy: &E) -> Result<Vec<f64>> {
    let summaries = tabulate(energy);
    let log_e = par::collect_range(summaries.len(), true, |c| {
        if c == 0 {
            0.0
        } else {
            energy.log_energy(&summaries[c])
        }
    });
    check_log_energies(log_e.len(), |c| log_e[c])?;
    Ok(log_e)
}

/// The flat weight pass of the blocked kernel at `scale`, from each
/// cluster's energy in scaled form (`cell(c)`): the energies of
/// [`scaled_energies`], then the pass; `None` when an energy or a weight
/// leaves the kernel's window.
fn blocked_weights(
    n: usize,
    cell: impl Fn(usize) -> Cell + Sync,
    scale: blocked::Scale,
    path: KernelPath,
    run: Option<&Run>,
    ticker: &mut Ticker<'_>,
) -> Result<Option<Vec<f64>>> {
    match scaled_energies(n, cell, scale) {
        Some(e_hat) => blocked::flat_weights(n, &e_hat, scale, path, run, ticker),
        None => Ok(None),
    }
}

/// The energies `E(c) 2^(-α|c|)` of every cluster at `scale` (exactly the
/// scaled number `cell(c)` times a power of two), or `None` when one leaves
/// the blocked kernel's window.
fn scaled_energies(
    n: usize,
    cell: impl Fn(usize) -> Cell + Sync,
    scale: blocked::Scale,
) -> Option<Vec<f64>> {
    let (alpha, _) = scale.exponents();
    let e_hat = par::collect_range(1usize << n, true, |c| {
        let cell = cell(c);
        if c == 0 || cell.mant == 0.0 {
            0.0
        } else {
            let k = (c as Mask).count_ones() as i32;
            blocked::ldexp(cell.mant, cell.exp.saturating_sub(alpha * k))
        }
    });
    blocked::energies_in_range(&e_hat).then_some(e_hat)
}

/// The checkpoint run of the flat passes over the log-energies `log_e`
/// (entry 0 unused, 0) in the directory of `options`, when it names one.
fn run_of(options: &Options<'_>, log_e: &[f64], n: usize) -> Result<Option<Run>> {
    options
        .checkpoint
        .map(|dir| Run::of_energies(dir, log_e, n, crate::dense::pairs::block_bits(n)))
        .transpose()
}

/// Refuses a checkpoint directory for a flat pass that keeps none.
fn refuse_checkpoint(options: &Options<'_>, what: &str) -> Result<()> {
    match options.checkpoint {
        Some(_) => Err(Error::parameter(format!(
            "this run needs {what} (energies beyond the blocked passes' range), which keeps \
             no checkpoints; run it without a checkpoint directory"
        ))),
        None => Ok(()),
    }
}

/// A scale for the flat weight pass without the MAP values: the line from
/// the centre of the single points' `log Z({i}) = log E({i})` to an estimate
/// of `log Z(X)`, the better of the one-cluster and all-singletons partitions
/// plus half of `n ln n ≥ ln Bell(n)`; both in whole powers of two (see
/// `Scale::fit`). `None` if any of these is not finite.
fn guess_scale(n: usize, log_e: &[f64]) -> Option<blocked::Scale> {
    let singles = || (0..n).map(|i| log_e[1 << i]);
    let lo = singles().fold(f64::INFINITY, f64::min);
    let hi = singles().fold(f64::NEG_INFINITY, f64::max);
    let whole = two_partitions(n, log_e) + 0.5 * n as f64 * (n as f64).ln();
    let first = (lo + hi) / 2.0;
    if !(first.is_finite() && whole.is_finite()) || n < 2 {
        return None;
    }
    let ln2 = std::f64::consts::LN_2;
    let a = ((whole - first) / (n - 1) as f64 / ln2).round() * ln2;
    let b = ((first - a) / ln2).round() * ln2;
    Some(blocked::Scale { a, b })
}

/// The larger log-energy of two partitions of all `n` points, one cluster
/// and all singletons: a lower bound of `log Z`.
fn two_partitions(n: usize, log_e: &[f64]) -> f64 {
    let all_singletons: f64 = (0..n).map(|i| log_e[1 << i]).sum();
    log_e[log_e.len() - 1].max(all_singletons)
}

/// Whether the scaled kernel is safe for these energies: every `log Z(S)`,
/// MAP value and table entry is bounded by `n · max |log E| + ln Bell(n)`
/// (over the finite `log E`; `ln Bell(n) < n ln n`), which must stay below
/// [`SEPARABLE_LOG_LIMIT`]. Otherwise the log-space kernel runs.
fn within_scaled_range(n: usize, log_e: impl Iterator<Item = f64>) -> bool {
    let max_abs = log_e
        .filter(|e| e.is_finite())
        .fold(0.0f64, |m, e| m.max(e.abs()));
    let bound = n as f64 * max_abs + n as f64 * (n.max(1) as f64).ln();
    bound.is_finite() && bound < SEPARABLE_LOG_LIMIT
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{Cluster, Summarize};

    struct Zero(usize);
    impl Summarize for Zero {
        type Summary = ();
        fn num_points(&self) -> usize {
            self.0
        }
        fn leaf(&self, _: usize) {}
        fn merge(&self, _: Cluster<'_, ()>, _: Cluster<'_, ()>) {}
    }
    impl Energy for Zero {
        fn log_energy(&self, _: &()) -> f64 {
            0.0
        }
    }

    #[test]
    fn uniform_energies_count_partitions() {
        for n in 1..=12 {
            let t = FlatTrellis::new(Zero(n)).unwrap();
            let want = bell(n).to_string().parse::<f64>().unwrap().ln();
            assert!((t.log_z() - want).abs() < 1e-12 * want.max(1.0), "n {n}");
            let m = t.marginals();
            // Every point is in exactly one cluster: the cluster marginals through a point sum to 1.
            for i in 0..n {
                let s: f64 = (1..1u32 << n)
                    .filter(|c| c >> i & 1 == 1)
                    .map(|c| m.p(c))
                    .sum();
                assert!((s - 1.0).abs() < 1e-9, "n {n}: {s}");
            }
        }
    }
}
