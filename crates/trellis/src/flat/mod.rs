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
//! Energies are per cluster, so any [`Energy`] is tabulated once (`2^n`
//! calls) and every model runs the same kernel: the scaled-arithmetic sweep
//! of the hierarchical trellis (one multiply-add and one add per term, no
//! `exp`; see `kernel.rs`), level by level in parallel.
//!
//! Beyond `n = 30`: [`SparseFlat`], a sparse trellis whose clusters are closed
//! under recursive complement (Definition 5, Fact 5), and [`tree_partitions`],
//! the partitions consistent with a given hierarchy (a linear-time DP).

use std::collections::HashMap;

use num_bigint::BigUint;
use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::base::memory;
use crate::base::scaled::{LogSumExp, ZERO_EXP};
use crate::base::set::{Mask, for_each_level_batch, for_each_split, full, lowest, members};
use crate::base::set::{Set, full_set};
use crate::base::tree::Tree;
use crate::base::weights::Weights;
use crate::dense::kernel::{Cell, Factors, Fast, level_max_exp, sweep, sweep_fast};
use crate::dense::{BATCH, Options, Ticker, fill_by_size, map_batch};
use crate::error::{Error, ErrorKind, Result};
use crate::models::cost::{check_beta, pair_sums};

/// A cluster energy `E(c) > 0`, given as `log E(c)` for a non-empty cluster.
///
/// `-∞` (a forbidden cluster) is allowed; NaN and `+∞` are errors reported by
/// the inference. The energy of every subset is evaluated once, so it may be
/// expensive.
pub trait Energy: Sync {
    /// Number of points.
    fn num_points(&self) -> usize;

    /// `log E(cluster)`.
    fn log_energy(&self, cluster: Mask) -> f64;
}

impl<E: Energy + ?Sized> Energy for &E {
    fn num_points(&self) -> usize {
        (**self).num_points()
    }
    fn log_energy(&self, cluster: Mask) -> f64 {
        (**self).log_energy(cluster)
    }
}

/// Correlation clustering (the flat paper's model): `log E(c) = β Σ_{i<j ∈ c} w_ij`,
/// so singletons have energy 1 and a partition's log-energy is β times the
/// weight it keeps inside its clusters.
#[derive(Clone, Debug)]
pub struct CorrelationClustering {
    weights: Weights,
    beta: f64,
    inside: Vec<f64>,
}

impl CorrelationClustering {
    /// Tabulates the weight inside every subset (`O(n · 2^n)`).
    pub fn new(weights: &Weights, beta: f64) -> Result<CorrelationClustering> {
        check_beta(beta)?;
        memory::check_dense(weights.n(), 8u64 << weights.n().min(63), None)?;
        Ok(CorrelationClustering {
            weights: weights.clone(),
            beta,
            inside: pair_sums(weights, |v| v),
        })
    }

    /// `log E` of a cluster given by its points (any number of points).
    pub fn log_energy_of(weights: &Weights, beta: f64, points: &[usize]) -> f64 {
        let mut total = 0.0;
        for (a, &i) in points.iter().enumerate() {
            for &j in &points[a + 1..] {
                total += weights.get(i, j);
            }
        }
        beta * total
    }

    /// The weights.
    pub fn weights(&self) -> &Weights {
        &self.weights
    }

    /// The inverse temperature β.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Energy for CorrelationClustering {
    fn num_points(&self) -> usize {
        self.weights.n()
    }

    #[inline]
    fn log_energy(&self, cluster: Mask) -> f64 {
        self.beta * self.inside[cluster as usize]
    }
}

/// Bytes per subset of the flat trellis: energy and partition-function cells
/// (24 each) and their compact copies (16 each), log Z and MAP value (8 each).
const FLAT_BYTES: u64 = 24 + 24 + 16 + 16 + 8 + 8;

/// The flat trellis over all subsets, with the partition function and MAP
/// clustering of every subset computed.
pub struct FlatTrellis<E> {
    energy: E,
    n: usize,
    /// `log E(c)` and `E(c)` of every cluster.
    cells: Vec<Cell>,
    log_z: Vec<f64>,
    map: Vec<f64>,
}

impl<E> std::fmt::Debug for FlatTrellis<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatTrellis")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

/// A partition as sorted clusters of sorted points, clusters ordered by their
/// smallest point.
pub type Partition = Vec<Vec<usize>>;

impl<E: Energy> FlatTrellis<E> {
    /// Tabulates the energies and runs the inside pass (`log Z` and the MAP of
    /// every subset), `O(3^n)`.
    pub fn new(energy: E) -> Result<FlatTrellis<E>> {
        FlatTrellis::with_options(energy, &Options::default())
    }

    /// [`FlatTrellis::new`] with a memory limit and a progress callback.
    pub fn with_options(energy: E, options: &Options<'_>) -> Result<FlatTrellis<E>> {
        let n = energy.num_points();
        memory::check_dense(n, FLAT_BYTES << n.min(63), options.memory_limit)?;
        let size = 1usize << n;
        let mut cells = vec![Cell::ZERO; size];
        {
            let energy = &energy;
            fill_by_size(&mut cells, 1..=n, |c| {
                let e = energy.log_energy(c);
                // NaN and +∞ are reported below; keep them out of the scaled value.
                Cell::new(
                    e,
                    if e.is_nan() || e == f64::INFINITY {
                        f64::NEG_INFINITY
                    } else {
                        e
                    },
                )
            });
        }
        if let Some(c) = (1..size).find(|&c| cells[c].key.is_nan() || cells[c].key == f64::INFINITY)
        {
            return Err(Error::new(ErrorKind::BadPotential {
                detail: format!(
                    "log E of cluster {:?} is {}",
                    members(c as Mask).collect::<Vec<_>>(),
                    cells[c].key
                ),
            }));
        }
        let mut t = FlatTrellis {
            energy,
            n,
            cells,
            log_z: vec![f64::NEG_INFINITY; size],
            map: vec![f64::NEG_INFINITY; size],
        };
        t.inside(&mut Ticker::new(
            options.progress,
            "inside",
            (3u64.pow(n as u32) - 1) / 2,
        ));
        if t.log_z() == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoTree));
        }
        Ok(t)
    }

    fn inside(&mut self, ticker: &mut Ticker<'_>) {
        let n = self.n;
        let max_e: Vec<i32> = (0..=n)
            .map(|k| {
                if k == 0 {
                    ZERO_EXP
                } else {
                    level_max_exp(&self.cells, n, k)
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
            fill_by_size(&mut e_fast, 1..=n, |c| {
                Fast::of(&cells[c as usize], max_e[c.count_ones() as usize])
            });
        }
        let mut z_fast = vec![Fast::ZERO; 1 << n];
        z_fast[0] = Fast::of(&Cell::ONE, max_z[0]);
        self.log_z[0] = 0.0;
        self.map[0] = 0.0;
        let mut out = Vec::new();
        for k in 1..=n {
            let e_ref = (1..=k)
                .map(|j| max_e[j].saturating_add(max_z[k - j]))
                .max()
                .unwrap_or(ZERO_EXP)
                .saturating_add(2);
            let factors = Factors::new(&max_e, &max_z, k, true);
            let work = 1u64 << (k - 1);
            for_each_level_batch(n, k, BATCH, |batch| {
                let (cells, z) = (&self.cells[..], &z[..]);
                let (e_fast, z_fast) = (&e_fast[..], &z_fast[..]);
                let solve = |s| {
                    sweep_fast(s, e_fast, z_fast, &factors, true).unwrap_or_else(|| {
                        let (m, _, g) = sweep(s, cells, z, true, e_ref);
                        (m, g)
                    })
                };
                map_batch(batch, work, solve, &mut out);
                for (&s, &(m, g)) in batch.iter().zip(&out) {
                    self.map[s as usize] = m;
                    self.log_z[s as usize] = g.ln();
                }
                ticker.advance(batch.len() as u64 * work);
            });
            let (log_z, map) = (&self.log_z, &self.map);
            fill_by_size(&mut z, k..=k, |s| {
                Cell::new(map[s as usize], log_z[s as usize])
            });
            max_z[k] = level_max_exp(&z, n, k);
            let (z, base) = (&z, max_z[k]);
            fill_by_size(&mut z_fast, k..=k, |s| Fast::of(&z[s as usize], base));
        }
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
        self.log_z[full(self.n) as usize]
    }

    /// `log Z(S)` over the partitions of the points of `subset` alone (0 for ∅).
    pub fn log_z_of(&self, subset: Mask) -> f64 {
        self.log_z[subset as usize]
    }

    /// `log E` of a cluster (tabulated).
    pub fn log_energy_of(&self, cluster: Mask) -> f64 {
        self.cells[cluster as usize].key
    }

    /// The total log-energy of the MAP clustering.
    pub fn map_log_energy(&self) -> f64 {
        self.map[full(self.n) as usize]
    }

    /// The MAP clustering (highest energy), clusters by smallest point.
    pub fn map_clustering(&self) -> Partition {
        let mut out = Vec::new();
        let mut s = full(self.n);
        while s != 0 {
            let c = self.map_cluster(s);
            out.push(members(c).collect());
            s ^= c;
        }
        out
    }

    /// The cluster holding the lowest point of `s` in the MAP partition of
    /// `s` (the largest such mask among ties). The inside pass keeps only the
    /// MAP values, so the few clusters of one MAP partition are recovered here
    /// by a scan of `2^(|s|-1)` candidates each, instead of tracking the
    /// argument of every maximum in the hot loop.
    fn map_cluster(&self, s: Mask) -> Mask {
        let low = lowest(s);
        let rest = s ^ low;
        let (mut best, mut arg) = (f64::NEG_INFINITY, low);
        let mut sub = rest;
        loop {
            let c = low | sub;
            let v = self.cells[c as usize].key + self.map[(s ^ c) as usize];
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

    /// `log P(C)` of a partition of all the points.
    pub fn log_probability(&self, partition: &[Vec<usize>]) -> Result<f64> {
        let masks = self.masks_of(partition)?;
        Ok(masks
            .iter()
            .map(|&m| self.cells[m as usize].key)
            .sum::<f64>()
            - self.log_z())
    }

    /// The marginal of every cluster and the pairwise co-clustering matrix.
    pub fn marginals(&self) -> FlatMarginals {
        let root = full(self.n);
        let log_z = self.log_z();
        let log_p: Vec<f64> = (0..1usize << self.n)
            .into_par_iter()
            .map(|c| {
                if c == 0 {
                    f64::NEG_INFINITY
                } else {
                    (self.cells[c].key + self.log_z[(root ^ c as Mask) as usize] - log_z).min(0.0)
                }
            })
            .collect();
        let n = self.n;
        // P(i ~ j) = Σ over clusters holding both; per-thread accumulators.
        let pairwise = (1..1usize << n)
            .into_par_iter()
            .with_min_len(1 << 10)
            .fold(
                || vec![0.0f64; n * n],
                |mut acc, c| {
                    let p = log_p[c].exp();
                    if p > 0.0 && c.count_ones() >= 2 {
                        let pts: Vec<usize> = members(c as Mask).collect();
                        for (a, &i) in pts.iter().enumerate() {
                            for &j in &pts[a + 1..] {
                                acc[i * n + j] += p;
                            }
                        }
                    }
                    acc
                },
            )
            .reduce(
                || vec![0.0f64; n * n],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        let mut matrix = vec![0.0; n * n];
        for i in 0..n {
            matrix[i * n + i] = 1.0;
            for j in i + 1..n {
                let p = pairwise[i * n + j].min(1.0);
                matrix[i * n + j] = p;
                matrix[j * n + i] = p;
            }
        }
        FlatMarginals {
            n,
            log_z,
            log_p,
            pairwise: matrix,
        }
    }

    /// One exact sample of a partition from `P(C)`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Partition {
        let mut out = Vec::new();
        let mut s = full(self.n);
        while s != 0 {
            let u: f64 = rng.random();
            let z = self.log_z[s as usize];
            let (mut acc, mut chosen, mut last) = (0.0, None, lowest(s));
            let mut visit = |c: Mask, r: Mask| {
                if chosen.is_none() {
                    let w = (self.cells[c as usize].key + self.log_z[r as usize] - z).exp();
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

    /// `k` exact samples, reproducible from `seed` (xoshiro256++).
    pub fn samples(&self, k: usize, seed: u64) -> Vec<Partition> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..k).map(|_| self.sample(&mut rng)).collect()
    }
}

/// Every cluster's marginal and the pairwise co-clustering matrix of a [`FlatTrellis`].
#[derive(Clone, Debug)]
pub struct FlatMarginals {
    n: usize,
    log_z: f64,
    log_p: Vec<f64>,
    pairwise: Vec<f64>,
}

impl FlatMarginals {
    /// `log P(c)`: the log-probability that `cluster` is a cluster of the partition.
    pub fn log_p(&self, cluster: Mask) -> f64 {
        self.log_p
            .get(cluster as usize)
            .copied()
            .unwrap_or(f64::NEG_INFINITY)
    }

    /// `P(c)`.
    pub fn p(&self, cluster: Mask) -> f64 {
        self.log_p(cluster).exp()
    }

    /// `log Z`.
    pub fn log_z(&self) -> f64 {
        self.log_z
    }

    /// `P(i ~ j)`: the probability that points `i` and `j` share a cluster (1 on the diagonal).
    pub fn pairwise(&self, i: usize, j: usize) -> f64 {
        self.pairwise[i * self.n + j]
    }

    /// The `n × n` co-clustering matrix, row by row.
    pub fn pairwise_matrix(&self) -> Vec<Vec<f64>> {
        self.pairwise.chunks(self.n).map(<[f64]>::to_vec).collect()
    }

    /// Every cluster (singletons included) with probability `> 0` and `>= min_p`,
    /// most probable first (ties by mask).
    pub fn clusters(&self, min_p: f64) -> Vec<(Mask, f64)> {
        let mut out: Vec<(Mask, f64)> = (1..self.log_p.len())
            .map(|c| (c as Mask, self.log_p[c].exp()))
            .filter(|&(_, p)| p > 0.0 && p >= min_p)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// Bell(n), the number of partitions of `n` points (Bell triangle).
pub fn bell(n: usize) -> BigUint {
    let mut row = vec![BigUint::from(1u32)];
    for _ in 1..n.max(1) {
        let mut next = Vec::with_capacity(row.len() + 1);
        next.push(row.last().expect("non-empty").clone());
        for x in &row {
            let v = next.last().expect("non-empty") + x;
            next.push(v);
        }
        row = next;
    }
    if n == 0 {
        BigUint::from(1u32)
    } else {
        row.last().expect("non-empty").clone()
    }
}

/// A sparse flat trellis: a family of clusters closed under recursive
/// complement (Definition 5; for `x ⊂ y` both in the family, `y ∖ x` is too),
/// containing the whole set. Its partitions are those made of its clusters.
#[derive(Clone, Debug)]
pub struct SparseFlat {
    n: usize,
    /// Vertices by increasing size, the root (all points) last.
    vertices: Vec<Set>,
    index: HashMap<Set, usize>,
    /// For every vertex, the vertices inside it holding its lowest point.
    candidates: Vec<Vec<usize>>,
}

impl SparseFlat {
    /// The trellis of a family of clusters over `n ≤ 128` points; the whole
    /// set is added. Fails, naming the two clusters, if the family is not
    /// closed under recursive complement.
    pub fn new(n: usize, clusters: impl IntoIterator<Item = Set>) -> Result<SparseFlat> {
        if n == 0 {
            return Err(Error::new(ErrorKind::Empty));
        }
        if n > 128 {
            return Err(Error::parameter(format!(
                "a sparse trellis holds at most 128 points; this problem has {n}"
            )));
        }
        let all = full_set(n);
        let mut vertices: Vec<Set> = vec![all];
        for c in clusters {
            if c == 0 || c & !all != 0 {
                return Err(Error::tree(format!(
                    "cluster {c:#b} is not a non-empty subset of the {n} points"
                )));
            }
            vertices.push(c);
        }
        vertices.sort_by_key(|c| (c.count_ones(), *c));
        vertices.dedup();
        let index: HashMap<Set, usize> =
            vertices.iter().enumerate().map(|(k, &c)| (c, k)).collect();
        let bits = |c: Set| -> Vec<usize> { (0..n).filter(|&i| c >> i & 1 == 1).collect() };
        let mut candidates = Vec::with_capacity(vertices.len());
        for &y in &vertices {
            let mut inside = Vec::new();
            for (k, &x) in vertices.iter().enumerate() {
                if x != y && x & !y == 0 {
                    if !index.contains_key(&(y ^ x)) {
                        return Err(Error::parameter(format!(
                            "the clusters are not closed under recursive complement: {:?} is inside {:?} \
                             but their difference {:?} is not a cluster, so some partitions of {:?} \
                             could not be completed",
                            bits(x),
                            bits(y),
                            bits(y ^ x),
                            bits(y)
                        )));
                    }
                    if x.trailing_zeros() == y.trailing_zeros() {
                        inside.push(k);
                    }
                }
            }
            candidates.push(inside);
        }
        Ok(SparseFlat {
            n,
            vertices,
            index,
            candidates,
        })
    }

    /// Number of clusters (vertices), the whole set included.
    pub fn num_vertices(&self) -> usize {
        self.vertices.len()
    }

    /// `(log Z, MAP log-energy, MAP partition)` over the partitions made of
    /// the trellis's clusters, with `log_energy` of a cluster: `O(|T|^log 3)`.
    pub fn infer(&self, log_energy: impl Fn(Set) -> f64) -> Result<(f64, f64, Partition)> {
        let m = self.vertices.len();
        let mut log_z = vec![f64::NEG_INFINITY; m];
        let mut map = vec![f64::NEG_INFINITY; m];
        let mut best: Vec<Option<usize>> = vec![None; m];
        let energies: Vec<f64> = self.vertices.iter().map(|&c| log_energy(c)).collect();
        if let Some(v) = energies
            .iter()
            .position(|e| e.is_nan() || *e == f64::INFINITY)
        {
            let c = self.vertices[v];
            return Err(Error::new(ErrorKind::BadPotential {
                detail: format!(
                    "log E of cluster {:?} is {}",
                    (0..self.n).filter(|&i| c >> i & 1 == 1).collect::<Vec<_>>(),
                    energies[v]
                ),
            }));
        }
        for v in 0..m {
            let y = self.vertices[v];
            let mut lse = LogSumExp::new();
            let (mut bv, mut arg) = (f64::NEG_INFINITY, None);
            // The cluster is the whole of `y`, or a smaller vertex with the rest partitioned.
            let whole = energies[v];
            lse.add(whole);
            if whole > bv {
                bv = whole;
                arg = Some(v);
            }
            for &c in &self.candidates[v] {
                let r = self.index[&(y ^ self.vertices[c])];
                let e = energies[c];
                lse.add(e + log_z[r]);
                if e + map[r] > bv {
                    bv = e + map[r];
                    arg = Some(c);
                }
            }
            log_z[v] = lse.ln();
            map[v] = bv;
            best[v] = arg;
        }
        if log_z[m - 1].is_nan() || map[m - 1].is_nan() {
            return Err(Error::new(ErrorKind::BadPotential {
                detail: "a cluster's log-energy is NaN".into(),
            }));
        }
        if log_z[m - 1] == f64::NEG_INFINITY {
            return Err(Error::new(ErrorKind::NoTree));
        }
        let mut partition = Vec::new();
        let mut v = m - 1;
        loop {
            let c = best[v].expect("a MAP cluster");
            let y = self.vertices[v];
            let cluster = self.vertices[c];
            partition.push((0..self.n).filter(|&i| cluster >> i & 1 == 1).collect());
            if c == v {
                break;
            }
            v = self.index[&(y ^ cluster)];
        }
        partition.sort();
        Ok((log_z[m - 1], map[m - 1], partition))
    }
}

/// `(log Z, MAP log-energy, MAP partition)` over the partitions consistent with
/// a hierarchy: those whose clusters are nodes of `tree` (a "cut" of the tree).
/// `Z(v) = E(v) + Z(left) Z(right)`, `Z(leaf) = E(leaf)`: linear time.
pub fn tree_partitions(tree: &Tree, log_energy: impl Fn(&[usize]) -> f64) -> (f64, f64, Partition) {
    fn go(t: &Tree, e: &dyn Fn(&[usize]) -> f64) -> (f64, f64, Partition) {
        let points = {
            let mut p = t.leaves();
            p.sort_unstable();
            p
        };
        let own = e(&points);
        match t {
            Tree::Leaf(_) => (own, own, vec![points]),
            Tree::Node(l, r) => {
                let (zl, ml, pl) = go(l, e);
                let (zr, mr, pr) = go(r, e);
                let mut lse = LogSumExp::new();
                lse.add(own);
                lse.add(zl + zr);
                if own >= ml + mr {
                    (lse.ln(), own, vec![points])
                } else {
                    let mut p = pl;
                    p.extend(pr);
                    (lse.ln(), ml + mr, p)
                }
            }
        }
    }
    let (z, m, mut p) = go(tree, &log_energy);
    p.sort();
    (z, m, p)
}

/// The Perturb-and-MAP approximation of the pairwise co-clustering matrix
/// (Papandreou & Yuille; flat paper §5.3.1): `k` times, add Gumbel(0, 1) noise
/// to every pairwise log-energy `β w_ij`, find the MAP partition of the
/// perturbed model, and count how often each pair shares a cluster.
/// Reproducible from `seed` (sample `i` uses its own xoshiro256++ stream).
pub fn perturb_and_map(weights: &Weights, beta: f64, k: usize, seed: u64) -> Result<Vec<Vec<f64>>> {
    check_beta(beta)?;
    let n = weights.n();
    let counts = (0..k)
        .into_par_iter()
        .map(|s| {
            let mut rng = crate::random::rng(crate::random::stream_seed(seed, s));
            let mut w = vec![0.0; n * n];
            for i in 0..n {
                for j in i + 1..n {
                    let u: f64 = rng.random();
                    let gumbel = -(-(u.max(f64::MIN_POSITIVE)).ln()).ln();
                    let v = beta * weights.get(i, j) + gumbel;
                    w[i * n + j] = v;
                    w[j * n + i] = v;
                }
            }
            let perturbed = Weights::from_matrix(&crate::base::weights::Matrix {
                rows: n,
                cols: n,
                data: w,
            })?;
            let t = FlatTrellis::new(CorrelationClustering::new(&perturbed, 1.0)?)?;
            let mut together = vec![0u32; n * n];
            for c in t.map_clustering() {
                for (a, &i) in c.iter().enumerate() {
                    for &j in &c[a + 1..] {
                        together[i * n + j] += 1;
                    }
                }
            }
            Ok(together)
        })
        .collect::<Result<Vec<_>>>()?;
    let frequency = |i: usize, j: usize| {
        let (a, b) = (i.min(j), i.max(j));
        counts.iter().map(|c| c[a * n + b] as f64).sum::<f64>() / k.max(1) as f64
    };
    Ok((0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { 1.0 } else { frequency(i, j) })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bell_numbers() {
        let known = [1u64, 1, 2, 5, 15, 52, 203, 877, 4140, 21147, 115975];
        for (n, &b) in known.iter().enumerate() {
            assert_eq!(bell(n), BigUint::from(b), "Bell({n})");
        }
    }

    struct Zero(usize);
    impl Energy for Zero {
        fn num_points(&self) -> usize {
            self.0
        }
        fn log_energy(&self, _: Mask) -> f64 {
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
