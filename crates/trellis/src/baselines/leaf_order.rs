//! SciPy's optimal leaf ordering (`scipy.cluster.hierarchy.optimal_leaf_ordering`,
//! Bar-Joseph, Gifford and Jaakkola 2001): the children of each merge are
//! flipped so that the sum of the distances between adjacent leaves of the
//! dendrogram is smallest. Reproduces SciPy's result exactly, its arithmetic
//! included: the dynamic programme's sums are single-precision floats, with
//! `2^30` as "no value yet" (see [`optimal_leaf_ordering`]).

use crate::dendrogram::Dendrogram;
use crate::error::{Error, Result};

/// `2^30`, SciPy's starting value of every minimum of the programme.
const START: f32 = 1_073_741_824.0;

/// `Z` with the two children of some of its rows exchanged, so that the
/// leaves of its dendrogram (read left to right, column 0 before column 1)
/// minimise the sum of `dist` between neighbours, as SciPy's
/// `optimal_leaf_ordering(Z, y)` computes it: the same rows, heights and
/// sizes, the same columns exchanged.
///
/// `z` is a linkage matrix over `n = z.len() + 1` points (as
/// [`Dendrogram::from_linkage`] checks it) and `dist` the row-major `n × n`
/// distances it was built from. Time `O(n⁴)` in the worst case (`O(n³)`
/// typically), memory about `14 n²` bytes.
///
/// Faithful to SciPy's arithmetic: the partial sums are `f32` (the
/// distances are added in `f64` and rounded), and a sum that reaches `2^30`
/// is no better than none, so for distances whose sums reach about `1e9`
/// the order is SciPy's but not necessarily the optimum (divide the
/// distances first: the order is then the same for every power-of-two
/// scale below that).
///
/// # Errors
///
/// An invalid linkage matrix, or `dist` of the wrong length.
pub fn optimal_leaf_ordering(z: &[[f64; 4]], dist: &[f64]) -> Result<Vec<[f64; 4]>> {
    if z.is_empty() {
        return Ok(Vec::new());
    }
    Dendrogram::from_linkage(z)?;
    let n = z.len() + 1;
    if dist.len() != n * n {
        return Err(Error::shape(format!(
            "a linkage matrix of {} rows is over {n} points, whose distance matrix has {} \
             values (n × n), not {}",
            z.len(),
            n * n,
            dist.len()
        )));
    }
    // Rows as (left, right) ids; the tree's leaves in order (pre-order,
    // column 0 first).
    let rows: Vec<(usize, usize)> = z.iter().map(|r| (r[0] as usize, r[1] as usize)).collect();
    let mut leaves = Vec::with_capacity(n);
    let mut stack = vec![2 * n - 2];
    while let Some(v) = stack.pop() {
        if v < n {
            leaves.push(v);
        } else {
            let (l, r) = rows[v - n];
            stack.push(r);
            stack.push(l);
        }
    }
    let mut position = vec![0usize; n];
    for (p, &leaf) in leaves.iter().enumerate() {
        position[leaf] = p;
    }
    // The same rows over leaf positions; distances between positions.
    let relabel = |v: usize| if v < n { position[v] } else { v };
    let sorted: Vec<(usize, usize)> = rows
        .iter()
        .map(|&(l, r)| (relabel(l), relabel(r)))
        .collect();
    let sorted_d: Vec<f64> = (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .map(|(a, b)| dist[leaves[a] * n + leaves[b]])
        .collect();
    // Each cluster's leaves are the positions [lo, hi).
    let mut range = vec![(0usize, 0usize); 2 * n - 1];
    for (p, r) in range.iter_mut().enumerate().take(n) {
        *r = (p, p + 1);
    }
    for (k, &(l, r)) in sorted.iter().enumerate() {
        range[n + k] = (range[l].0, range[r].1);
    }
    let must_swap = identify_swaps(&sorted, &sorted_d, &range, n);
    // A row's children are exchanged when an odd number of the rows at or
    // above it must swap (a swap turns the whole subtree).
    let mut flip = vec![false; n - 1];
    for k in (0..n - 1).rev() {
        let f = flip[k] ^ must_swap[k];
        flip[k] = f;
        let (l, r) = rows[k];
        for c in [l, r] {
            if c >= n {
                flip[c - n] = f;
            }
        }
    }
    Ok(z.iter()
        .zip(&flip)
        .map(|(r, &f)| if f { [r[1], r[0], r[2], r[3]] } else { *r })
        .collect())
}

/// The dynamic programme: `m[u][w]` (single precision) is the smallest sum
/// of adjacent distances of an ordering of the current cluster starting at
/// leaf `u` and ending at leaf `w`; for each row, which of its children must
/// swap for the best ordering of its parent.
fn identify_swaps(
    sorted: &[(usize, usize)],
    d: &[f64],
    range: &[(usize, usize)],
    n: usize,
) -> Vec<bool> {
    let mut m = vec![0.0f32; n * n];
    // For each (u, w): whether the best ordering swaps the left, the right child.
    let mut status = vec![[false; 2]; n * n];
    let mut must_swap = vec![false; n - 1];
    let (mut best_u, mut best_w) = (0usize, 0usize);
    let mut m_vals: Vec<f32> = Vec::with_capacity(n);
    let mut m_idx: Vec<usize> = Vec::with_capacity(n);
    let mut k_vals: Vec<f32> = Vec::with_capacity(n);
    let mut k_idx: Vec<usize> = Vec::with_capacity(n);
    for &(v_l, v_r) in sorted {
        // The outer leaf u comes from one child of the left cluster and m,
        // next to the right cluster, from the other; likewise w and k.
        let (u_clusters, m_clusters): (Vec<usize>, Vec<usize>) = if v_l < n {
            (vec![v_l], vec![v_l])
        } else {
            let (a, b) = sorted[v_l - n];
            (vec![a, b], vec![b, a])
        };
        let (w_clusters, k_clusters): (Vec<usize>, Vec<usize>) = if v_r < n {
            (vec![v_r], vec![v_r])
        } else {
            let (a, b) = sorted[v_r - n];
            (vec![b, a], vec![a, b])
        };
        for swap_l in 0..u_clusters.len() {
            for swap_r in 0..w_clusters.len() {
                let (u_lo, u_hi) = range[u_clusters[swap_l]];
                let (m_lo, m_hi) = range[m_clusters[swap_l]];
                let (w_lo, w_hi) = range[w_clusters[swap_r]];
                let (k_lo, k_hi) = range[k_clusters[swap_r]];
                let mut min_km = START;
                for mm in m_lo..m_hi {
                    for kk in k_lo..k_hi {
                        if d[mm * n + kk] < f64::from(min_km) {
                            min_km = d[mm * n + kk] as f32;
                        }
                    }
                }
                for u in u_lo..u_hi {
                    sorted_column(&m, n, m_lo, m_hi, u, &mut m_vals, &mut m_idx);
                    for w in w_lo..w_hi {
                        sorted_column(&m, n, k_lo, k_hi, w, &mut k_vals, &mut k_idx);
                        let mut best = START;
                        for &mm in &m_idx {
                            let mum = m[u * n + mm];
                            if mum + m[w * n + k_idx[0]] + min_km >= best {
                                break;
                            }
                            for &kk in &k_idx {
                                let mwk = m[w * n + kk];
                                if mum + mwk + min_km >= best {
                                    break;
                                }
                                let current = (f64::from(mum + mwk) + d[mm * n + kk]) as f32;
                                if current < best {
                                    best = current;
                                }
                            }
                        }
                        m[u * n + w] = best;
                        m[w * n + u] = best;
                        let s = [swap_l == 1, swap_r == 1];
                        status[u * n + w] = s;
                        status[w * n + u] = s;
                    }
                }
            }
        }
        let mut best = START;
        for u in range[v_l].0..range[v_l].1 {
            for w in range[v_r].0..range[v_r].1 {
                if m[u * n + w] < best {
                    best = m[u * n + w];
                    best_u = u;
                    best_w = w;
                }
            }
        }
        if v_l >= n {
            must_swap[v_l - n] = status[best_u * n + best_w][0];
        }
        if v_r >= n {
            must_swap[v_r - n] = status[best_u * n + best_w][1];
        }
    }
    must_swap
}

/// The rows `lo..hi` of column `col` of `m`, and their indices, sorted by
/// value with SciPy's quicksort (its order of ties decides which candidates
/// the programme's early exits skip).
fn sorted_column(
    m: &[f32],
    n: usize,
    lo: usize,
    hi: usize,
    col: usize,
    vals: &mut Vec<f32>,
    idx: &mut Vec<usize>,
) {
    vals.clear();
    idx.clear();
    for i in lo..hi {
        vals.push(m[i * n + col]);
        idx.push(i);
    }
    simultaneous_sort(vals, idx);
}

/// Quicksort of `vals`, applying the same exchanges to `idx`: three or
/// fewer values by comparisons, else the median of the first, middle and
/// last as pivot, moved to the end, and a Lomuto partition (SciPy's; the
/// part after the pivot is sorted by the loop, not a recursion, so that
/// equal values do not recurse once per value).
fn simultaneous_sort(mut vals: &mut [f32], mut idx: &mut [usize]) {
    let swap = |vals: &mut [f32], idx: &mut [usize], i: usize, j: usize| {
        vals.swap(i, j);
        idx.swap(i, j);
    };
    loop {
        let size = vals.len();
        match size {
            0 | 1 => return,
            2 => {
                if vals[0] > vals[1] {
                    swap(vals, idx, 0, 1);
                }
                return;
            }
            3 => {
                if vals[0] > vals[1] {
                    swap(vals, idx, 0, 1);
                }
                if vals[1] > vals[2] {
                    swap(vals, idx, 1, 2);
                    if vals[0] > vals[1] {
                        swap(vals, idx, 0, 1);
                    }
                }
                return;
            }
            _ => {}
        }
        let mid = size / 2;
        if vals[0] > vals[size - 1] {
            swap(vals, idx, 0, size - 1);
        }
        if vals[size - 1] > vals[mid] {
            swap(vals, idx, size - 1, mid);
            if vals[0] > vals[size - 1] {
                swap(vals, idx, 0, size - 1);
            }
        }
        let pivot = vals[size - 1];
        let mut store = 0;
        for i in 0..size - 1 {
            if vals[i] < pivot {
                swap(vals, idx, i, store);
                store += 1;
            }
        }
        swap(vals, idx, store, size - 1);
        if store > 1 {
            simultaneous_sort(&mut vals[..store], &mut idx[..store]);
        }
        if store + 2 >= size {
            return;
        }
        vals = &mut vals[store + 1..];
        idx = &mut idx[store + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::{Linkage, linkage_matrix};

    struct Gen(u64);

    impl Gen {
        fn below(&mut self, k: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) % k
        }
    }

    /// The leaves of a linkage matrix, column 0 first.
    fn leaves(z: &[[f64; 4]]) -> Vec<usize> {
        let n = z.len() + 1;
        let mut out = Vec::new();
        let mut stack = vec![2 * n - 2];
        while let Some(v) = stack.pop() {
            if v < n {
                out.push(v);
            } else {
                stack.push(z[v - n][1] as usize);
                stack.push(z[v - n][0] as usize);
            }
        }
        out
    }

    fn cost(order: &[usize], d: &[f64], n: usize) -> f64 {
        order.windows(2).map(|w| d[w[0] * n + w[1]]).sum()
    }

    /// The order by a direct statement of SciPy's rule: `m[u][w]`, the least
    /// cost of an ordering of a merge's leaves from `u` to `w`, over the
    /// inner leaves `m`, `k` on the far sides of the two children (no
    /// sorting, no early exits, `f64`); each merge takes its first best
    /// `(u, w)` (by `u`, then `w`) and decides from it whether its two
    /// children swap. Exact on small whole numbers, so the programme's
    /// single precision, sorting and early exits must change nothing.
    fn reference(z: &[[f64; 4]], d: &[f64]) -> Vec<[f64; 4]> {
        let n = z.len() + 1;
        let order = leaves(z);
        let pos: Vec<usize> = (0..n)
            .map(|p| order.iter().position(|&l| l == p).unwrap())
            .collect();
        let dd = |a: usize, b: usize| d[order[a] * n + order[b]];
        let kids = |v: usize| -> (usize, usize) {
            let (l, r) = (z[v - n][0] as usize, z[v - n][1] as usize);
            (
                if l < n { pos[l] } else { l },
                if r < n { pos[r] } else { r },
            )
        };
        let mut range = vec![(0, 0); 2 * n - 1];
        for (p, r) in range.iter_mut().enumerate().take(n) {
            *r = (p, p + 1);
        }
        for v in n..2 * n - 1 {
            let (l, r) = kids(v);
            range[v] = (range[l].0, range[r].1);
        }
        let inside = |c: usize, x: usize| range[c].0 <= x && x < range[c].1;
        let mut m = vec![0.0f64; n * n];
        let mut swap = vec![false; n - 1];
        for v in n..2 * n - 1 {
            let (l, r) = kids(v);
            let mut best = (f64::INFINITY, false, false);
            let mut rows = Vec::new();
            for u in range[l].0..range[l].1 {
                for w in range[r].0..range[r].1 {
                    // u in the left child's second part swaps it; w in the
                    // right child's first part swaps that one.
                    let (m_side, swap_l) = if l < n {
                        (l, false)
                    } else {
                        let (a, b) = kids(l);
                        if inside(a, u) { (b, false) } else { (a, true) }
                    };
                    let (k_side, swap_r) = if r < n {
                        (r, false)
                    } else {
                        let (a, b) = kids(r);
                        if inside(b, w) { (a, false) } else { (b, true) }
                    };
                    let mut value = f64::INFINITY;
                    for mm in range[m_side].0..range[m_side].1 {
                        for kk in range[k_side].0..range[k_side].1 {
                            value = value.min(m[u * n + mm] + m[kk * n + w] + dd(mm, kk));
                        }
                    }
                    rows.push((u, w, value));
                    if value < best.0 {
                        best = (value, swap_l, swap_r);
                    }
                }
            }
            for (u, w, value) in rows {
                m[u * n + w] = value;
                m[w * n + u] = value;
            }
            if l >= n {
                swap[l - n] = best.1;
            }
            if r >= n {
                swap[r - n] = best.2;
            }
        }
        let mut flip = vec![false; n - 1];
        for k in (0..n - 1).rev() {
            flip[k] ^= swap[k];
            for c in [z[k][0] as usize, z[k][1] as usize] {
                if c >= n {
                    flip[c - n] = flip[k];
                }
            }
        }
        z.iter()
            .zip(&flip)
            .map(|(r, &f)| if f { [r[1], r[0], r[2], r[3]] } else { *r })
            .collect()
    }

    /// SciPy's programme, checked against the direct statement of its rule
    /// on small whole-number distances; only columns move. Where no merge
    /// lies three levels below another, the order is the optimum over all
    /// `2^(n-1)` flips (by brute force). Deeper, SciPy's rule (each merge's
    /// own best ends, not those its parent chose) can miss the optimum: on
    /// random distances this happens, and the tests keep SciPy's result.
    #[test]
    fn the_order_is_scipys_rule_and_optimal_on_shallow_trees() {
        let mut g = Gen(0xdead_beef_1234_5678);
        let (mut shallow, mut missed) = (0, 0);
        for round in 0..600 {
            let n = 2 + round % 9;
            let mut d = vec![0.0; n * n];
            for i in 0..n {
                for j in i + 1..n {
                    let v = g.below(6) as f64;
                    d[i * n + j] = v;
                    d[j * n + i] = v;
                }
            }
            let method = Linkage::ALL[round % 7];
            let z = linkage_matrix(&d, n, method, false).unwrap();
            let o = optimal_leaf_ordering(&z, &d).unwrap();
            assert_eq!(linkage_matrix(&d, n, method, true).unwrap(), o);
            assert_eq!(o, reference(&z, &d), "round {round}: {z:?}");
            for (a, b) in z.iter().zip(&o) {
                assert_eq!(a[2..], b[2..]);
                assert!((a[0], a[1]) == (b[0], b[1]) || (a[0], a[1]) == (b[1], b[0]));
            }
            let mut best = f64::INFINITY;
            for mask in 0..1u32 << (n - 1) {
                let flipped: Vec<[f64; 4]> = z
                    .iter()
                    .enumerate()
                    .map(|(k, r)| {
                        if mask >> k & 1 == 1 {
                            [r[1], r[0], r[2], r[3]]
                        } else {
                            *r
                        }
                    })
                    .collect();
                best = best.min(cost(&leaves(&flipped), &d, n));
            }
            let got = cost(&leaves(&o), &d, n);
            assert!(got >= best);
            // Depth: merges on the longest path from the root to a leaf.
            let mut depth = vec![0usize; 2 * n - 1];
            for (k, r) in z.iter().enumerate() {
                depth[n + k] = 1 + depth[r[0] as usize].max(depth[r[1] as usize]);
            }
            if depth[2 * n - 2] <= 2 {
                shallow += 1;
                assert_eq!(got, best, "round {round}: {z:?}");
            } else if got > best {
                missed += 1;
            }
        }
        assert!(
            shallow > 50 && missed > 0,
            "{shallow} shallow, {missed} missed"
        );
    }

    #[test]
    fn sort_orders_values_and_indices_together() {
        let mut g = Gen(99);
        for len in 0..40 {
            let mut vals: Vec<f32> = (0..len).map(|_| g.below(4) as f32).collect();
            let orig = vals.clone();
            let mut idx: Vec<usize> = (0..len).collect();
            simultaneous_sort(&mut vals, &mut idx);
            assert!(vals.windows(2).all(|w| w[0] <= w[1]));
            for (v, &i) in vals.iter().zip(&idx) {
                assert_eq!(*v, orig[i]);
            }
            let mut seen = idx.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..len).collect::<Vec<_>>());
        }
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(optimal_leaf_ordering(&[[0.0, 0.0, 1.0, 2.0]], &[0.0; 4]).is_err());
        let e = optimal_leaf_ordering(&[[0.0, 1.0, 1.0, 2.0]], &[0.0; 3]).unwrap_err();
        assert!(e.to_string().contains("not 3"), "{e}");
        assert_eq!(
            optimal_leaf_ordering(&[], &[0.0]).unwrap(),
            Vec::<[f64; 4]>::new()
        );
    }
}
