//! Pairwise weights (similarities) between points, validated once.
//!
//! A [`Weights`] is a symmetric `n × n` matrix of finite values whose diagonal is
//! ignored (stored as 0). It comes from a matrix ([`Weights::from_matrix`]) or
//! from points and a similarity ([`Weights::from_points`]). Both trellis papers
//! get positive *and* negative weights by centring: subtracting the mean
//! off-diagonal similarity, so that "more similar than average" attracts.
//!
//! Both constructors check, before allocating, that the `n × n` matrix fits
//! in the memory available ([`Weights::check_memory`] checks it against any
//! other limit, e.g. a user's cap, and should be called first).

use crate::base::range;
use crate::error::{Error, ErrorKind, Result};

/// A dense row-major matrix of `f64`, as read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// `rows * cols` values, row after row.
    pub data: Vec<f64>,
}

impl Matrix {
    /// A matrix from rows, which must all have the same length.
    pub fn from_rows(rows: Vec<Vec<f64>>) -> Result<Matrix> {
        let cols = rows.first().map_or(0, |r| r.len());
        if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != cols) {
            return Err(Error::shape(format!(
                "row {i} has {} values but row 0 has {cols}",
                r.len()
            )));
        }
        Ok(Matrix {
            rows: rows.len(),
            cols,
            data: rows.into_iter().flatten().collect(),
        })
    }

    /// Entry `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Checks that `data` holds `rows * cols` values (the fields are public).
    fn check_len(&self) -> Result<()> {
        if self.rows.checked_mul(self.cols) != Some(self.data.len()) {
            return Err(Error::shape(format!(
                "the matrix holds {} values, not {} rows x {} columns",
                self.data.len(),
                self.rows,
                self.cols
            )));
        }
        Ok(())
    }

    fn check_finite(&self) -> Result<()> {
        match self.data.iter().position(|v| !v.is_finite()) {
            Some(k) => Err(Error::new(ErrorKind::NonFinite {
                row: k / self.cols.max(1),
                col: k % self.cols.max(1),
            })),
            None => Ok(()),
        }
    }
}

/// Relative tolerance (to the largest |weight|) under which `w[i][j]` and
/// `w[j][i]` count as equal; such pairs are averaged.
pub const SYMMETRY_TOLERANCE: f64 = 1e-6;

/// How to turn points into pairwise similarities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Similarity {
    /// `x·y / (|x| |y|)`; every point must be non-zero.
    Cosine,
    /// `exp(-γ |x - y|²)`.
    Rbf {
        /// γ > 0.
        gamma: f64,
    },
    /// `x·y`.
    Dot,
    /// `exp(-|x - y|)`, the flat trellis paper's similarity (§5.2; centre it to
    /// get positive and negative weights).
    ExpNeg,
}

/// A validated symmetric weight matrix with a zero diagonal. Its entries are
/// shared: cloning it (as every model built from it does) is cheap.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    n: usize,
    w: std::sync::Arc<[f64]>,
}

/// Weight matrices of at most this many bytes (`n <= 362`) are always
/// allowed: they cost less than the program itself, and a small memory cap
/// meant for a computation (such as a search budget) should not refuse them.
const ALWAYS_ALLOWED_BYTES: u64 = 1 << 20;

impl Weights {
    /// Bytes of the `n × n` weight matrix (saturated at `u64::MAX`).
    pub fn memory_needed(n: usize) -> u64 {
        (n as u64).saturating_mul(n as u64).saturating_mul(8)
    }

    /// Checks, before anything is allocated, that the `n × n` weight matrix
    /// fits in `limit` bytes (`None`: the memory the operating system reports
    /// as available). Matrices of at most 1 MiB always fit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::TooLarge`], saying how much the matrix would need.
    pub fn check_memory(n: usize, limit: Option<u64>) -> Result<()> {
        let needed = Weights::memory_needed(n);
        if needed <= ALWAYS_ALLOWED_BYTES {
            return Ok(());
        }
        match limit.or_else(crate::available_memory) {
            Some(limit) if needed > limit => Err(Error::new(ErrorKind::TooLarge {
                what: format!("the {n} x {n} weight matrix"),
                needed,
                limit,
            })),
            _ => Ok(()),
        }
    }

    /// Validates a square matrix: finite values, symmetric up to
    /// [`SYMMETRY_TOLERANCE`] (near-equal pairs are averaged); the diagonal is ignored.
    ///
    /// # Errors
    ///
    /// An empty, non-square or inconsistent matrix, a non-finite or asymmetric
    /// entry, or a copy that would not fit in the memory available
    /// ([`Weights::check_memory`]).
    pub fn from_matrix(m: &Matrix) -> Result<Weights> {
        m.check_len()?;
        if m.rows == 0 || m.cols == 0 {
            return Err(Error::new(ErrorKind::Empty));
        }
        if m.rows != m.cols {
            return Err(Error::shape(format!(
                "a weight matrix must be square, but this one has {} rows and {} columns",
                m.rows, m.cols
            )));
        }
        m.check_finite()?;
        let n = m.rows;
        Weights::check_memory(n, None)?;
        let max_abs = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m.get(i, j).abs())
            .fold(0.0, f64::max);
        let tol = SYMMETRY_TOLERANCE * max_abs;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (m.get(i, j), m.get(j, i));
                if (a - b).abs() > tol {
                    return Err(Error::new(ErrorKind::Asymmetric {
                        i,
                        j,
                        wij: a,
                        wji: b,
                    }));
                }
                // (Halves first where the sum overflows: near-equal entries near f64::MAX.)
                let v = if a == b {
                    a
                } else if (a + b).is_finite() {
                    0.5 * (a + b)
                } else {
                    0.5 * a + 0.5 * b
                };
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        Ok(Weights { n, w: w.into() })
    }

    /// Similarities between the rows of `points` (one point per row), optionally
    /// centred by subtracting the mean off-diagonal similarity.
    ///
    /// Takes `O(n² d)` time for `n` points of `d` coordinates, and `8 n²` bytes.
    ///
    /// # Errors
    ///
    /// No points or no coordinates, an inconsistent matrix, a non-finite
    /// coordinate, an invalid similarity parameter, similarities that
    /// overflow, or a matrix that would not fit in the memory available
    /// ([`Weights::check_memory`], checked before anything is computed).
    pub fn from_points(points: &Matrix, similarity: Similarity, center: bool) -> Result<Weights> {
        points.check_len()?;
        if points.rows == 0 {
            return Err(Error::new(ErrorKind::Empty));
        }
        if points.cols == 0 {
            return Err(Error::shape("the points have no coordinates (0 columns)"));
        }
        points.check_finite()?;
        let n = points.rows;
        Weights::check_memory(n, None)?;
        let mut w = vec![0.0; n * n];
        match similarity {
            Similarity::Cosine => {
                // Cosine does not depend on scale: each point is divided by
                // its largest |coordinate| first, so that a point of tiny
                // (1e-200) or huge (1e200) norm neither underflows nor
                // overflows in its squared norm.
                let mut unit = Vec::with_capacity(n * points.cols);
                for i in 0..n {
                    let row = points.row(i);
                    let largest = row.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                    if largest == 0.0 {
                        return Err(Error::parameter(format!(
                            "point {i} (0-based) is all zeros, so its cosine similarity is undefined"
                        )));
                    }
                    let scaled = row.iter().map(|x| x / largest);
                    let norm = scaled.clone().map(|x| x * x).sum::<f64>().sqrt();
                    unit.extend(scaled.map(|x| x / norm));
                }
                let d = points.cols;
                for i in 0..n {
                    for j in i + 1..n {
                        let (a, b) = (&unit[i * d..(i + 1) * d], &unit[j * d..(j + 1) * d]);
                        let v = a.iter().zip(b).map(|(x, y)| x * y).sum();
                        w[i * n + j] = v;
                        w[j * n + i] = v;
                    }
                }
            }
            Similarity::Rbf { gamma } => {
                if !(gamma.is_finite() && gamma > 0.0) {
                    return Err(Error::parameter(format!(
                        "the RBF gamma must be a positive number, not {gamma}"
                    )));
                }
                for i in 0..n {
                    for j in i + 1..n {
                        let d2 = squared_distance(points.row(i), points.row(j));
                        let v = if d2.is_finite() && d2 >= f64::MIN_POSITIVE {
                            (-gamma * d2).exp()
                        } else {
                            // The squared distance overflows (or is subnormal):
                            // γ |x - y|² as (γ |x - y|) |x - y|.
                            let d = range::euclidean(points.row(i), points.row(j)).value();
                            (-(gamma * d) * d).exp()
                        };
                        w[i * n + j] = v;
                        w[j * n + i] = v;
                    }
                }
            }
            Similarity::ExpNeg => {
                for i in 0..n {
                    for j in i + 1..n {
                        let d2 = squared_distance(points.row(i), points.row(j));
                        let d = if d2.is_finite() && d2 >= f64::MIN_POSITIVE {
                            d2.sqrt()
                        } else {
                            range::euclidean(points.row(i), points.row(j)).value()
                        };
                        let v = (-d).exp();
                        w[i * n + j] = v;
                        w[j * n + i] = v;
                    }
                }
            }
            Similarity::Dot => {
                // Each point divided by the power of two at its largest
                // |coordinate|, and each product multiplied back: no product or
                // partial sum overflows (points near 1e200), and where the
                // direct sum neither overflows nor underflows it is the same
                // number to the bit.
                let d = points.cols;
                let mut unit = Vec::with_capacity(n * d);
                let mut exps = Vec::with_capacity(n);
                for i in 0..n {
                    let row = points.row(i);
                    let largest = row.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                    let e = if largest == 0.0 {
                        0
                    } else {
                        range::exponent(largest)
                    };
                    exps.push(e);
                    unit.extend(row.iter().map(|&x| range::mul_pow2(x, -e)));
                }
                let mut over: Option<(usize, usize, range::Magnitude, range::Magnitude)> = None;
                for i in 0..n {
                    for j in i + 1..n {
                        let (a, b) = (&unit[i * d..(i + 1) * d], &unit[j * d..(j + 1) * d]);
                        let s: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
                        let m = range::Magnitude {
                            mant: s.abs(),
                            exp: exps[i] + exps[j],
                        };
                        let v = range::mul_pow2(s, exps[i] + exps[j]);
                        if v.is_infinite() {
                            over = Some(match over {
                                None => (i, j, m, m),
                                Some((a, b, first, top)) => {
                                    (a, b, first, if m.log10() > top.log10() { m } else { top })
                                }
                            });
                        }
                        w[i * n + j] = v;
                        w[j * n + i] = v;
                    }
                }
                if let Some((i, j, first, top)) = over {
                    return Err(Error::parameter(format!(
                        "the dot product of points {i} and {j} (0-based) overflows: it is {} \
                         in absolute value, more than the largest floating-point number \
                         ({:.1e}); dot products scale with the square of the coordinates, so \
                         divide them by at least {}",
                        first.about(),
                        f64::MAX,
                        range::fmt3(top.divisor(f64::MAX, 2)),
                    )));
                }
            }
        }
        if w.iter().any(|v| !v.is_finite()) {
            return Err(Error::parameter(
                "the similarities overflowed (the coordinates are too large for f64)",
            ));
        }
        if center {
            center_in_place(&mut w, n);
            if let Some(k) = w.iter().position(|v| !v.is_finite()) {
                return Err(Error::parameter(format!(
                    "the centred similarity of points {} and {} (0-based) overflows: the \
                     similarities span more than the largest floating-point number ({:.1e}); \
                     divide the coordinates by at least 2 (4 for dot products)",
                    k / n,
                    k % n,
                    f64::MAX
                )));
            }
        }
        Ok(Weights { n, w: w.into() })
    }

    /// Subtracts the mean off-diagonal weight from every off-diagonal weight.
    pub fn center(&mut self) {
        let mut w = self.w.to_vec();
        center_in_place(&mut w, self.n);
        self.w = w.into();
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `w[i][j]` (0 on the diagonal).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.w[i * self.n + j]
    }

    /// Row `i` of the matrix.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.w[i * self.n..(i + 1) * self.n]
    }

    /// The first negative off-diagonal weight, if any, as `(i, j, w)`.
    pub fn first_negative(&self) -> Option<(usize, usize, f64)> {
        (0..self.n)
            .flat_map(|i| (i + 1..self.n).map(move |j| (i, j)))
            .map(|(i, j)| (i, j, self.get(i, j)))
            .find(|&(_, _, w)| w < 0.0)
    }
}

/// Subtracts the mean off-diagonal entry of the `n × n` matrix `w` from
/// every off-diagonal entry.
fn center_in_place(w: &mut [f64], n: usize) {
    if n < 2 {
        return;
    }
    let pairs = (n as f64) * (n as f64 - 1.0) / 2.0;
    let upper = || {
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| w[i * n + j])
    };
    let mut mean = upper().sum::<f64>() / pairs;
    if !mean.is_finite() {
        // The sum overflows (similarities near 1e306): sum them divided by
        // the power of two at the largest, and multiply the mean back.
        let top = upper().fold(0.0f64, |m, v| m.max(v.abs()));
        if top.is_finite() && top > 0.0 {
            let e = range::exponent(top);
            mean = range::mul_pow2(
                upper().map(|v| range::mul_pow2(v, -e)).sum::<f64>() / pairs,
                e,
            );
        }
    }
    for i in 0..n {
        for j in 0..n {
            if i != j {
                w[i * n + j] -= mean;
            }
        }
    }
}

/// `Σ (a_k - b_k)²`, directly (it may overflow or underflow: see
/// [`range::euclidean`] for the safe form).
fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: &[&[f64]]) -> Matrix {
        Matrix::from_rows(rows.iter().map(|r| r.to_vec()).collect()).unwrap()
    }

    #[test]
    fn rejects_bad_matrices() {
        let e = Weights::from_matrix(&m(&[&[0.0, 1.0, 2.0], &[1.0, 0.0, 3.0]])).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Shape { .. }), "{e}");
        let e = Weights::from_matrix(&m(&[&[0.0, 1.0], &[1.5, 0.0]])).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Asymmetric { i: 0, j: 1, .. }),
            "{e}"
        );
        let e = Weights::from_matrix(&m(&[&[0.0, f64::NAN], &[1.0, 0.0]])).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::NonFinite { row: 0, col: 1 }),
            "{e}"
        );
        let e = Weights::from_matrix(&Matrix {
            rows: 0,
            cols: 0,
            data: vec![],
        })
        .unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Empty));
    }

    #[test]
    fn ignores_diagonal_and_rounding_asymmetry() {
        let w = Weights::from_matrix(&m(&[&[5.0, 1.0], &[1.0 + 1e-12, -7.0]])).unwrap();
        assert_eq!(w.get(0, 0), 0.0);
        assert!((w.get(0, 1) - w.get(1, 0)).abs() == 0.0);
    }

    #[test]
    fn centring_subtracts_mean_off_diagonal() {
        let pts = m(&[&[1.0, 0.0], &[0.0, 1.0], &[1.0, 1.0]]);
        let w = Weights::from_points(&pts, Similarity::Cosine, true).unwrap();
        let s = 1.0 / 2f64.sqrt();
        let mean = (0.0 + s + s) / 3.0;
        assert!((w.get(0, 1) - (0.0 - mean)).abs() < 1e-15);
        assert!((w.get(0, 2) - (s - mean)).abs() < 1e-15);
        let total: f64 = (0..3)
            .flat_map(|i| (i + 1..3).map(move |j| (i, j)))
            .map(|(i, j)| w.get(i, j))
            .sum();
        assert!(total.abs() < 1e-15);
    }

    #[test]
    fn rbf_and_dot() {
        let pts = m(&[&[0.0, 0.0], &[1.0, 2.0]]);
        let w = Weights::from_points(&pts, Similarity::Rbf { gamma: 0.5 }, false).unwrap();
        assert!((w.get(0, 1) - (-2.5f64).exp()).abs() < 1e-15);
        let w = Weights::from_points(&pts, Similarity::Dot, false).unwrap();
        assert_eq!(w.get(0, 1), 0.0);
        assert!(Weights::from_points(&pts, Similarity::Cosine, false).is_err());
    }
}
