//! The three agglomeration algorithms of SciPy's `linkage`
//! (`scipy.cluster.hierarchy`), with its tie rules, row order and labels:
//! Prim's minimum spanning tree for single linkage, the nearest-neighbour
//! chain for complete, average, weighted and Ward, and the generic algorithm
//! (a heap of lower bounds on each cluster's nearest neighbour) for centroid
//! and median. See the [module docs](super) for the rules themselves.
//!
//! All three work on the condensed vector (the upper triangle, row by row).
//! A distance update that is not finite stops the run (`Err(Overflow)`): the
//! caller then runs again on the distances divided by a power of two.

use super::{Linkage, LinkageStep};
use crate::base::range;
use crate::error::{Error, Result};

/// An update left the finite numbers (only Ward's can, on distances beyond
/// about `1e289`; see [`super::linkage_steps`]).
#[derive(Debug)]
pub(super) struct Overflow;

/// Position of the pair `{i, j}`, `i != j`, in the condensed vector over `n` points.
#[inline]
pub(super) fn condensed_index(n: usize, i: usize, j: usize) -> usize {
    let (i, j) = if i < j { (i, j) } else { (j, i) };
    n * i - i * (i + 1) / 2 + (j - i - 1)
}

/// The merges of `method` on the condensed distances `d` of `n >= 2`
/// points: SciPy's linkage matrix as steps (ids `n + k` for the cluster of
/// row `k`, the smaller id first; rows by height, ties in the algorithm's
/// merge order; for centroid and median, merge order, where heights can
/// decrease).
pub(super) fn run(
    d: &[f64],
    n: usize,
    method: Linkage,
) -> Result<std::result::Result<Vec<LinkageStep>, Overflow>> {
    debug_assert!(n >= 2 && d.len() == n * (n - 1) / 2);
    match method {
        Linkage::Single => label(n, sorted(prim(d, n))).map(Ok),
        Linkage::Complete | Linkage::Average | Linkage::Weighted | Linkage::Ward => {
            match nn_chain(d, n, method)? {
                Ok(merges) => label(n, sorted(merges)).map(Ok),
                Err(o) => Ok(Err(o)),
            }
        }
        Linkage::Centroid | Linkage::Median => generic(d, n, method),
    }
}

/// A merge of two slots (each named by a point of its cluster) at a height.
type Merge = (usize, usize, f64);

/// Prim's algorithm from point 0. Each step joins the point nearest to the
/// tree (the first such point on ties), recorded with the point added in
/// the step before, as SciPy does: after the stable sort by height, the
/// union-find labelling turns these pairs into the single-linkage merges.
fn prim(d: &[f64], n: usize) -> Vec<Merge> {
    let mut merged = vec![false; n];
    // Distance from each point to the tree so far.
    let mut to_tree = vec![f64::INFINITY; n];
    let mut merges = Vec::with_capacity(n - 1);
    let (mut x, mut y) = (0, 0);
    for _ in 0..n - 1 {
        let mut nearest = f64::INFINITY;
        merged[x] = true;
        for i in 0..n {
            if merged[i] {
                continue;
            }
            let dist = d[condensed_index(n, x, i)];
            if to_tree[i] > dist {
                to_tree[i] = dist;
            }
            if to_tree[i] < nearest {
                y = i;
                nearest = to_tree[i];
            }
        }
        merges.push((x, y, nearest));
        x = y;
    }
    merges
}

/// The nearest-neighbour chain. The chain grows from the first live slot;
/// each link is the nearest live cluster of the chain's end, the previous
/// link winning ties (so the chain stops at two reciprocal nearest
/// neighbours), then the smallest slot. The merged cluster takes the larger
/// of the two slots.
fn nn_chain(
    d: &[f64],
    n: usize,
    method: Linkage,
) -> Result<std::result::Result<Vec<Merge>, Overflow>> {
    let mut d = d.to_vec();
    let mut size = vec![1usize; n];
    let mut chain: Vec<usize> = Vec::with_capacity(n);
    let mut merges = Vec::with_capacity(n - 1);
    for _ in 0..n - 1 {
        if chain.is_empty() {
            let first = size.iter().position(|&s| s > 0).expect("a live cluster");
            chain.push(first);
        }
        let (x, y, nearest) = loop {
            let x = chain[chain.len() - 1];
            let previous = (chain.len() > 1).then(|| chain[chain.len() - 2]);
            let (mut y, mut nearest) = match previous {
                Some(p) => (Some(p), d[condensed_index(n, x, p)]),
                None => (None, f64::INFINITY),
            };
            for i in 0..n {
                if size[i] == 0 || i == x {
                    continue;
                }
                let dist = d[condensed_index(n, x, i)];
                if dist < nearest {
                    nearest = dist;
                    y = Some(i);
                }
            }
            let y = y.ok_or_else(|| internal("the chain found no neighbour"))?;
            if previous == Some(y) {
                break (x, y, nearest);
            }
            if chain.len() >= n {
                return Err(internal("the nearest-neighbour chain did not close"));
            }
            chain.push(y);
        };
        chain.truncate(chain.len() - 2);
        let (x, y) = (x.min(y), x.max(y));
        let (nx, ny) = (size[x], size[y]);
        merges.push((x, y, nearest));
        size[x] = 0;
        size[y] = nx + ny;
        if let Err(o) = merge_distances(method, &mut d, &size, x, y, nearest, nx, ny)? {
            return Ok(Err(o));
        }
    }
    Ok(Ok(merges))
}

/// The merges by height, ties in merge order (a stable sort; `-0` and `0`
/// are equal, as for NumPy).
fn sorted(mut merges: Vec<Merge>) -> Vec<Merge> {
    merges.sort_by(|a, b| a.2.partial_cmp(&b.2).unwrap_or(std::cmp::Ordering::Equal));
    merges
}

/// Cluster ids for merges of slots: each slot is replaced by the current
/// cluster of its point (a union-find over ids `0..2n-1`, the cluster of
/// row `k` being `n + k`), the smaller id first.
fn label(n: usize, merges: Vec<Merge>) -> Result<Vec<LinkageStep>> {
    let mut parent: Vec<usize> = (0..2 * n - 1).collect();
    let mut size = vec![1usize; 2 * n - 1];
    let find = |parent: &mut Vec<usize>, x: usize| {
        let mut root = x;
        while parent[root] != root {
            root = parent[root];
        }
        let mut p = x;
        while parent[p] != root {
            let next = parent[p];
            parent[p] = root;
            p = next;
        }
        root
    };
    let mut steps = Vec::with_capacity(merges.len());
    for (k, (x, y, height)) in merges.into_iter().enumerate() {
        let (a, b) = (find(&mut parent, x), find(&mut parent, y));
        if a == b {
            return Err(internal("a merge joins a cluster with itself"));
        }
        let id = n + k;
        parent[a] = id;
        parent[b] = id;
        size[id] = size[a] + size[b];
        steps.push(LinkageStep {
            left: a.min(b),
            right: a.max(b),
            height,
            size: size[id],
        });
    }
    Ok(steps)
}

/// The nearest live slot above `x` and its distance (the first on ties).
fn nearest_above(n: usize, d: &[f64], size: &[usize], x: usize) -> Result<(usize, f64)> {
    let mut nearest = f64::INFINITY;
    let mut y = None;
    for i in x + 1..n {
        if size[i] == 0 {
            continue;
        }
        let dist = d[condensed_index(n, x, i)];
        if dist < nearest {
            nearest = dist;
            y = Some(i);
        }
    }
    y.map(|y| (y, nearest))
        .ok_or_else(|| internal("a cluster has no neighbour above it"))
}

/// Müllner's generic algorithm as SciPy implements it: every slot `x < n-1`
/// keeps a candidate nearest neighbour above it and a lower bound of that
/// distance, in a binary heap; the heap's minimum is merged once its bound
/// is the current distance (else its neighbour is searched again). The
/// merged cluster takes the larger slot; rows are in merge order.
fn generic(
    d: &[f64],
    n: usize,
    method: Linkage,
) -> Result<std::result::Result<Vec<LinkageStep>, Overflow>> {
    let mut d = d.to_vec();
    let mut size = vec![1usize; n];
    let mut id: Vec<usize> = (0..n).collect();
    let mut neighbor = vec![0usize; n - 1];
    let mut min_dist = vec![0.0f64; n - 1];
    for x in 0..n - 1 {
        let (y, dist) = nearest_above(n, &d, &size, x)?;
        neighbor[x] = y;
        min_dist[x] = dist;
    }
    let mut heap = Heap::new(min_dist.clone());
    let mut steps = Vec::with_capacity(n - 1);
    for k in 0..n - 1 {
        let (mut x, mut y, mut dist) = (0, 0, 0.0);
        for _ in 0..n - k {
            (x, dist) = heap.min();
            y = neighbor[x];
            if dist == d[condensed_index(n, x, y)] {
                break;
            }
            (y, dist) = nearest_above(n, &d, &size, x)?;
            neighbor[x] = y;
            min_dist[x] = dist;
            heap.change_value(x, dist);
        }
        heap.remove_min();
        let (nx, ny) = (size[x], size[y]);
        let (a, b) = (id[x].min(id[y]), id[x].max(id[y]));
        steps.push(LinkageStep {
            left: a,
            right: b,
            height: dist,
            size: nx + ny,
        });
        size[x] = 0;
        size[y] = nx + ny;
        id[y] = n + k;
        if let Err(o) = merge_distances(method, &mut d, &size, x, y, dist, nx, ny)? {
            return Ok(Err(o));
        }
        // Candidates that pointed at x now point at the merged cluster.
        for z in 0..x {
            if size[z] > 0 && neighbor[z] == x {
                neighbor[z] = y;
            }
        }
        // The merged cluster may be nearer than a slot's bound.
        for z in 0..y {
            if size[z] == 0 {
                continue;
            }
            let v = d[condensed_index(n, z, y)];
            if v < min_dist[z] {
                neighbor[z] = y;
                min_dist[z] = v;
                heap.change_value(z, v);
            }
        }
        if y < n - 1 {
            let (z, v) = nearest_above(n, &d, &size, y)?;
            neighbor[y] = z;
            min_dist[y] = v;
            heap.change_value(y, v);
        }
    }
    Ok(Ok(steps))
}

/// A binary min-heap of values with keys `0..len`, laid out and sifted as
/// SciPy's (children of `i` at `2i + 1` and `2i + 2`; a value moves only
/// past a strictly larger parent or strictly smaller child, the right child
/// only when strictly smaller than the left), since its ties decide merges.
struct Heap {
    index_by_key: Vec<usize>,
    key_by_index: Vec<usize>,
    values: Vec<f64>,
    size: usize,
}

impl Heap {
    fn new(values: Vec<f64>) -> Heap {
        let size = values.len();
        let mut heap = Heap {
            index_by_key: (0..size).collect(),
            key_by_index: (0..size).collect(),
            values,
            size,
        };
        for i in (0..size / 2).rev() {
            heap.sift_down(i);
        }
        heap
    }

    fn min(&self) -> (usize, f64) {
        (self.key_by_index[0], self.values[0])
    }

    fn remove_min(&mut self) {
        self.swap(0, self.size - 1);
        self.size -= 1;
        self.sift_down(0);
    }

    fn change_value(&mut self, key: usize, value: f64) {
        let index = self.index_by_key[key];
        let old = self.values[index];
        self.values[index] = value;
        if value < old {
            self.sift_up(index);
        } else {
            self.sift_down(index);
        }
    }

    fn sift_up(&mut self, mut index: usize) {
        while index > 0 {
            let parent = (index - 1) / 2;
            if self.values[parent] > self.values[index] {
                self.swap(index, parent);
                index = parent;
            } else {
                break;
            }
        }
    }

    fn sift_down(&mut self, mut index: usize) {
        loop {
            let mut child = 2 * index + 1;
            if child >= self.size {
                break;
            }
            if child + 1 < self.size && self.values[child + 1] < self.values[child] {
                child += 1;
            }
            if self.values[index] > self.values[child] {
                self.swap(index, child);
                index = child;
            } else {
                break;
            }
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.values.swap(i, j);
        self.key_by_index.swap(i, j);
        self.index_by_key[self.key_by_index[i]] = i;
        self.index_by_key[self.key_by_index[j]] = j;
    }
}

/// An updated distance: finite, too large (`Overflow`), or NaN, the square
/// root of a negative number (an error: SciPy's matrix would hold NaN).
/// After clusters `x` (now empty) and `y` (now their union, `size[y] =
/// nx + ny`) merged at `height`: the distance of every other live cluster to
/// `y` by the method's update, in place in the condensed `d`.
#[allow(clippy::too_many_arguments)]
fn merge_distances(
    method: Linkage,
    d: &mut [f64],
    size: &[usize],
    x: usize,
    y: usize,
    height: f64,
    nx: usize,
    ny: usize,
) -> Result<std::result::Result<(), Overflow>> {
    let n = size.len();
    for (z, &nz) in size.iter().enumerate() {
        if nz == 0 || z == y {
            continue;
        }
        let (zx, zy) = (condensed_index(n, z, x), condensed_index(n, z, y));
        match checked(method, update(method, d[zx], d[zy], height, nx, ny, nz))? {
            Ok(v) => d[zy] = v,
            Err(o) => return Ok(Err(o)),
        }
    }
    Ok(Ok(()))
}

fn checked(method: Linkage, v: f64) -> Result<std::result::Result<f64, Overflow>> {
    if v.is_finite() {
        Ok(Ok(v))
    } else if v.is_nan() {
        Err(Error::parameter(format!(
            "{} linkage's distance update took the square root of a negative number (SciPy \
             would give NaN heights); the dissimilarities are far from Euclidean",
            crate::Named::name(method)
        )))
    } else {
        Ok(Err(Overflow))
    }
}

fn internal(what: &str) -> Error {
    Error::parameter(format!(
        "internal error in the linkage algorithm ({what}); please report it with the input"
    ))
}

/// The Lance–Williams update of `method`: the distance from cluster `i`
/// (`ni` points) to the union of `x` and `y` (`nx`, `ny` points), from
/// `d_xi`, `d_yi` and `d_xy`. SciPy's expressions, operation for operation,
/// evaluated on the three distances divided by the power of two at the
/// largest of them and multiplied back: each is homogeneous of degree 1, so
/// where SciPy's form neither overflows nor underflows the result is the
/// same to the bit, and elsewhere it is the scaled answer.
pub(super) fn update(
    method: Linkage,
    dxi: f64,
    dyi: f64,
    dxy: f64,
    nx: usize,
    ny: usize,
    ni: usize,
) -> f64 {
    // Average and weighted linkage do not read d_xy.
    let top = match method {
        Linkage::Single => return dxi.min(dyi),
        Linkage::Complete => return dxi.max(dyi),
        Linkage::Average | Linkage::Weighted => dxi.abs().max(dyi.abs()),
        Linkage::Centroid | Linkage::Median | Linkage::Ward => {
            dxi.abs().max(dyi.abs()).max(dxy.abs())
        }
    };
    if top == 0.0 || !top.is_finite() {
        return textbook(method, dxi, dyi, dxy, nx, ny, ni);
    }
    let e = range::exponent(top);
    let [a, b, c] = [dxi, dyi, dxy].map(|v| range::mul_pow2(v, -e));
    range::mul_pow2(textbook(method, a, b, c, nx, ny, ni), e)
}

/// SciPy's update expressions as they are (sizes are whole numbers, exact in
/// `f64`; `size_x * size_y` is an integer product in SciPy too).
pub(super) fn textbook(
    method: Linkage,
    dxi: f64,
    dyi: f64,
    dxy: f64,
    nx: usize,
    ny: usize,
    ni: usize,
) -> f64 {
    let (fx, fy, fi) = (nx as f64, ny as f64, ni as f64);
    match method {
        Linkage::Single => dxi.min(dyi),
        Linkage::Complete => dxi.max(dyi),
        Linkage::Average => (fx * dxi + fy * dyi) / (nx + ny) as f64,
        Linkage::Weighted => 0.5 * (dxi + dyi),
        Linkage::Centroid => {
            let nxy = (nx + ny) as f64;
            let s = ((fx * dxi * dxi) + (fy * dyi * dyi)) - ((nx * ny) as f64 * dxy * dxy) / nxy;
            (s / nxy).sqrt()
        }
        Linkage::Median => (0.5 * (dxi * dxi + dyi * dyi) - 0.25 * dxy * dxy).sqrt(),
        Linkage::Ward => {
            let t = 1.0 / (nx + ny + ni) as f64;
            ((ni + nx) as f64 * t * dxi * dxi + (ni + ny) as f64 * t * dyi * dyi
                - fi * t * dxy * dxy)
                .sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic uniform generator in [0, 1).
    struct Gen(u64);

    impl Gen {
        fn unit(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn below(&mut self, k: usize) -> usize {
            (self.unit() * k as f64) as usize
        }
        fn point(&mut self) -> [f64; 3] {
            [self.unit() - 0.5, self.unit() - 0.5, self.unit() - 0.5]
        }
    }

    fn norm(a: &[f64; 3], b: &[f64; 3]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    }

    fn centroid(c: &[[f64; 3]]) -> [f64; 3] {
        let mut s = [0.0; 3];
        for p in c {
            for k in 0..3 {
                s[k] += p[k] / c.len() as f64;
            }
        }
        s
    }

    type Points = [[f64; 3]];

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn condensed_index_enumerates_the_upper_triangle_row_by_row() {
        for n in 2..9 {
            let mut k = 0;
            for i in 0..n {
                for j in i + 1..n {
                    assert_eq!(condensed_index(n, i, j), k);
                    assert_eq!(condensed_index(n, j, i), k);
                    k += 1;
                }
            }
            assert_eq!(k, n * (n - 1) / 2);
        }
    }

    /// Each update, from the distances of the merged clusters x and y to a
    /// cluster i, equals the method's distance computed from scratch: the
    /// min, max and mean over the pairs of points, the distance of the
    /// centroids (Euclidean), Ward's criterion, and for median (WPGMC) the
    /// distance of the midpoints, `m(x ∪ y) = (m(x) + m(y)) / 2`.
    #[test]
    fn updates_are_the_methods_distances() {
        let mut g = Gen(0x2545_f491_4f6c_dd1d);
        for _ in 0..500 {
            let sizes = [1 + g.below(5), 1 + g.below(5), 1 + g.below(5)];
            let [x, y, i]: [Vec<[f64; 3]>; 3] = sizes.map(|s| (0..s).map(|_| g.point()).collect());
            let (nx, ny, ni) = (x.len(), y.len(), i.len());
            let cross = |a: &[[f64; 3]], b: &[[f64; 3]]| -> Vec<f64> {
                a.iter()
                    .flat_map(|p| b.iter().map(move |q| norm(p, q)))
                    .collect()
            };
            let xy: Vec<[f64; 3]> = x.iter().chain(&y).copied().collect();
            let min = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
            let max = |v: Vec<f64>| v.into_iter().fold(0.0, f64::max);
            let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
            let args = |f: &dyn Fn(&Points, &Points) -> f64| (f(&x, &i), f(&y, &i), f(&x, &y));

            let (a, b, c) = args(&|p, q| min(cross(p, q)));
            assert_eq!(
                update(Linkage::Single, a, b, c, nx, ny, ni),
                min(cross(&xy, &i))
            );
            let (a, b, c) = args(&|p, q| max(cross(p, q)));
            assert_eq!(
                update(Linkage::Complete, a, b, c, nx, ny, ni),
                max(cross(&xy, &i))
            );
            let (a, b, c) = args(&|p, q| mean(cross(p, q)));
            let v = update(Linkage::Average, a, b, c, nx, ny, ni);
            assert!(close(v, mean(cross(&xy, &i))), "average");
            let (a, b, c) = args(&|p, q| norm(&centroid(p), &centroid(q)));
            let v = update(Linkage::Centroid, a, b, c, nx, ny, ni);
            assert!(close(v, norm(&centroid(&xy), &centroid(&i))), "centroid");
            let ward = |p: &[[f64; 3]], q: &[[f64; 3]]| {
                let (np, nq) = (p.len() as f64, q.len() as f64);
                (2.0 * np * nq / (np + nq)).sqrt() * norm(&centroid(p), &centroid(q))
            };
            let (a, b, c) = args(&ward);
            let v = update(Linkage::Ward, a, b, c, nx, ny, ni);
            assert!(close(v, ward(&xy, &i)), "ward: {v} vs {}", ward(&xy, &i));
            // Median and weighted: the clusters' points play no part.
            let (mx, my, mi) = (g.point(), g.point(), g.point());
            let mid: [f64; 3] = std::array::from_fn(|k| (mx[k] + my[k]) / 2.0);
            let v = update(
                Linkage::Median,
                norm(&mx, &mi),
                norm(&my, &mi),
                norm(&mx, &my),
                nx,
                ny,
                ni,
            );
            assert!(close(v, norm(&mid, &mi)), "median");
            let (a, b) = (g.unit(), g.unit());
            assert_eq!(
                update(Linkage::Weighted, a, b, g.unit(), nx, ny, ni),
                (a + b) / 2.0
            );
        }
    }

    /// The scaled updates are SciPy's expressions to the bit at ordinary
    /// magnitudes, and homogeneous: multiplying the three distances by a
    /// power of two multiplies the result by it exactly, up to `2^±1000`,
    /// where SciPy's squares overflow or vanish.
    #[test]
    fn scaled_updates_are_scipys_and_homogeneous() {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let (nx, ny, ni) = (1 + g.below(9), 1 + g.below(9), 1 + g.below(9));
            // Reciprocal nearest neighbours: d_xy is the smallest.
            let c = g.unit();
            let (a, b) = (c + g.unit(), c + g.unit());
            for method in Linkage::ALL {
                let v = update(method, a, b, c, nx, ny, ni);
                assert_eq!(v.to_bits(), textbook(method, a, b, c, nx, ny, ni).to_bits());
                assert!(v.is_finite() && v >= 0.0, "{method:?}");
                for k in [-1000, -600, -100, 100, 500, 1000] {
                    let s = |x: f64| range::mul_pow2(x, k);
                    let scaled = update(method, s(a), s(b), s(c), nx, ny, ni);
                    assert_eq!(scaled, s(v), "{method:?} 2^{k}");
                }
            }
        }
        // SciPy's form overflows where the scaled one does not.
        assert!(!textbook(Linkage::Ward, 1e200, 2e200, 1e200, 1, 1, 1).is_finite());
        assert!(update(Linkage::Ward, 1e200, 2e200, 1e200, 1, 1, 1).is_finite());
        assert!(textbook(Linkage::Weighted, 1.5e308, 1.5e308, 1.0, 1, 1, 1).is_infinite());
        assert_eq!(
            update(Linkage::Weighted, 1.5e308, 1.5e308, 1.0, 1, 1, 1),
            1.5e308
        );
    }

    /// The heap gives a minimum after every operation, and each key's value.
    #[test]
    fn heap_keeps_the_minimum() {
        let mut g = Gen(77);
        for _ in 0..200 {
            let len = 1 + g.below(20);
            let mut values: Vec<f64> = (0..len).map(|_| g.below(5) as f64).collect();
            let mut heap = Heap::new(values.clone());
            let mut alive = vec![true; len];
            let mut left = len;
            for _ in 0..40 {
                let (k, v) = heap.min();
                assert!(alive[k] && v == values[k]);
                let smallest = (0..len)
                    .filter(|&i| alive[i])
                    .map(|i| values[i])
                    .fold(f64::INFINITY, f64::min);
                assert_eq!(v, smallest);
                if g.below(3) == 0 && left > 1 {
                    heap.remove_min();
                    alive[k] = false;
                    left -= 1;
                } else {
                    let keys: Vec<usize> = (0..len).filter(|&i| alive[i]).collect();
                    let key = keys[g.below(keys.len())];
                    values[key] = g.below(5) as f64;
                    heap.change_value(key, values[key]);
                }
                for key in (0..len).filter(|&i| alive[i]) {
                    assert_eq!(heap.values[heap.index_by_key[key]], values[key]);
                }
            }
        }
    }
}
