//! Data parallelism, switched by the `parallel` cargo feature (default on).
//!
//! With the feature, these helpers run on rayon's thread pool (so a caller
//! sets the number of threads with `rayon::ThreadPool::install`); without
//! it, they are plain loops and the crate has no threads at all. Every
//! parallel computation of the crate goes through them, and each item's
//! result depends only on the item, so answers are the same either way.

#[cfg(feature = "parallel")]
use rayon::prelude::*;

/// `out = items.map(f)`, in parallel when `parallel` is true.
pub(crate) fn map_into<I: Copy + Sync, T: Send>(
    items: &[I],
    parallel: bool,
    f: impl Fn(I) -> T + Sync + Send,
    out: &mut Vec<T>,
) {
    #[cfg(feature = "parallel")]
    if parallel {
        items.par_iter().map(|&x| f(x)).collect_into_vec(out);
        return;
    }
    let _ = parallel;
    out.clear();
    out.extend(items.iter().map(|&x| f(x)));
}

/// `table[i] = f(i, table[i])` for every index, in parallel chunks.
pub(crate) fn update_indexed<T: Send>(table: &mut [T], f: impl Fn(usize, &mut T) + Sync + Send) {
    #[cfg(feature = "parallel")]
    {
        const CHUNK: usize = 1 << 12;
        table
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(ci, chunk)| {
                for (j, slot) in chunk.iter_mut().enumerate() {
                    f(ci * CHUNK + j, slot);
                }
            });
    }
    #[cfg(not(feature = "parallel"))]
    for (i, slot) in table.iter_mut().enumerate() {
        f(i, slot);
    }
}

/// `f(i, chunk)` for the chunks of `chunk` entries of `table`, in parallel.
pub(crate) fn update_chunks<T: Send>(
    table: &mut [T],
    chunk: usize,
    f: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    #[cfg(feature = "parallel")]
    table
        .par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(i, c)| f(i, c));
    #[cfg(not(feature = "parallel"))]
    for (i, c) in table.chunks_mut(chunk).enumerate() {
        f(i, c);
    }
}

/// `f(item)` for every item, each its own parallel task (for few, costly
/// items).
pub(crate) fn update_each<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync + Send) {
    #[cfg(feature = "parallel")]
    items.par_iter_mut().for_each(f);
    #[cfg(not(feature = "parallel"))]
    items.iter_mut().for_each(f);
}

/// `(0..len).map(f).collect()`, in parallel when `parallel` is true.
pub(crate) fn collect_range<T: Send>(
    len: usize,
    parallel: bool,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    #[cfg(feature = "parallel")]
    if parallel {
        return (0..len).into_par_iter().map(f).collect();
    }
    let _ = parallel;
    (0..len).map(f).collect()
}

/// Folds `f(acc, i)` over `0..len` into per-thread accumulators made by
/// `init`, then combines them with `combine`.
pub(crate) fn fold_range<A: Send>(
    len: usize,
    init: impl Fn() -> A + Sync + Send,
    f: impl Fn(A, usize) -> A + Sync + Send,
    combine: impl Fn(A, A) -> A + Sync + Send,
) -> A {
    #[cfg(feature = "parallel")]
    {
        (0..len)
            .into_par_iter()
            .with_min_len(1 << 10)
            .fold(&init, &f)
            .reduce(&init, &combine)
    }
    #[cfg(not(feature = "parallel"))]
    {
        let _ = &combine;
        (0..len).fold(init(), f)
    }
}

/// The number of threads parallel work runs on (1 without the feature).
pub(crate) fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}
