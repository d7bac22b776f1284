//! The split-potential trait of the dense trellis and its separable form
//! (documented on the [`crate::models`] module).

use crate::base::set::Mask;

/// A split potential `ψ(L, R) > 0` over `n` points, given as `log ψ`.
///
/// # Contract
/// - `log_potential(left, right)` is called only with disjoint, non-empty masks
///   inside the `n` points. The trellis always passes as `left` the part that
///   holds the lowest-indexed point of `left ∪ right`, so a model need not be
///   symmetric to be well defined (trees are unordered).
/// - It must be deterministic; `-∞` (a forbidden split) is allowed, NaN and `+∞`
///   are errors reported by the inference.
/// - If [`separable`](Potential::separable) returns tables, they must describe
///   the same function as `log_potential`.
pub trait Potential: Sync {
    /// Number of points `n` (the leaves of every hierarchy).
    fn num_points(&self) -> usize;

    /// `log ψ(left, right)`.
    fn log_potential(&self, left: Mask, right: Mask) -> f64;

    /// The separable form of the potential, if it has one (see the module docs).
    fn separable(&self) -> Option<Separable<'_>> {
        None
    }
}

/// Tables of a separable potential:
/// `log ψ(L, R) = scale · size_factor[|S|] · (parent[S] + child[L] + child[R])`.
#[derive(Clone, Copy, Debug)]
pub struct Separable<'a> {
    /// Global factor (for Gibbs models, `-β`).
    pub scale: f64,
    /// σ(k) for k = 0..=n (index by cluster size).
    pub size_factor: &'a [f64],
    /// P(S) for every mask `S` (length `2^n`).
    pub parent: &'a [f64],
    /// C(T) for every mask `T` (length `2^n`).
    pub child: &'a [f64],
}

/// Largest magnitude, in nats, that any log-value of the separable kernels may
/// reach: their scaled numbers keep a power of two in an `i32`, and sums of
/// three exponents must stay clear of `i32` overflow. About `2^26 · ln 2`.
const SEPARABLE_LOG_LIMIT: f64 = 4.6e7;

impl Separable<'_> {
    /// Whether the scaled-arithmetic kernels are safe for these tables: every
    /// `log Z(S)`, MAP value, outside value and table entry is bounded by
    /// `(n + 2) · max |log ψ| + ln((2n-3)!!)`, which must stay below
    /// [`SEPARABLE_LOG_LIMIT`]. Otherwise (|log ψ| beyond about 10^6) the trellis
    /// uses the log-space kernels, which are exact for any finite potential.
    pub(crate) fn within_scaled_range(&self, n: usize) -> bool {
        let max_abs = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let sigma = max_abs(self.size_factor);
        let bound_psi =
            self.scale.abs() * sigma * (max_abs(self.parent) + 2.0 * max_abs(self.child));
        let log_trees = (n as f64) * (2.0 * n as f64).ln();
        let bound = (n as f64 + 2.0) * bound_psi + log_trees;
        bound.is_finite() && bound < SEPARABLE_LOG_LIMIT
    }

    /// Whether σ is the same for every size (then per-level tables can be shared).
    pub(crate) fn constant_size_factor(&self) -> bool {
        self.size_factor.windows(2).skip(1).all(|w| w[0] == w[1])
    }

    /// `log ψ(L, R)` from the tables.
    #[inline]
    pub fn log_potential(&self, left: Mask, right: Mask) -> f64 {
        let s = left | right;
        self.scale
            * self.size_factor[s.count_ones() as usize]
            * (self.parent[s as usize] + self.child[left as usize] + self.child[right as usize])
    }
}

impl<P: Potential + ?Sized> Potential for &P {
    fn num_points(&self) -> usize {
        (**self).num_points()
    }
    fn log_potential(&self, left: Mask, right: Mask) -> f64 {
        (**self).log_potential(left, right)
    }
    fn separable(&self) -> Option<Separable<'_>> {
        (**self).separable()
    }
}

/// Hides the separable form of a model, forcing the general kernels.
///
/// Useful to cross-check the two kernels against each other, and to measure
/// what the separable form buys.
#[derive(Clone, Debug)]
pub struct General<P>(pub P);

impl<P: Potential> Potential for General<P> {
    fn num_points(&self) -> usize {
        self.0.num_points()
    }
    fn log_potential(&self, left: Mask, right: Mask) -> f64 {
        self.0.log_potential(left, right)
    }
}
