//! Running one computation on every jet of a jets file, with the results in
//! input order as JSON Lines: one object per jet, its `"id"` first and then
//! the fields of the single-problem result ([`crate::report::JetLine`]).
//!
//! Scheduling: jets whose work is at most [`BIG_WORK`] splits run in
//! parallel over jets (the `parallel` feature; a plain loop without it);
//! larger ones (more than 16 leaves for the exact trellis) one at a time,
//! each with the trellis's own parallelism, so that at most one set of large
//! tables is alive. A failing jet fails the whole batch, before any line is
//! written, with the error of the first failing jet in input order.
//!
//! Cost: the jets' own computations plus `O(output)` to write the lines.

use serde::Serialize;

use crate::error::Error;
use crate::ginkgo::{Jet, JetsFile};
use crate::{MAX_POINTS, total_splits};

/// Jets whose work exceeds this many splits (more than 16 leaves for the
/// exact trellis) run one at a time.
pub const BIG_WORK: u64 = 20_000_000;

/// The splits the exact trellis of a jet evaluates (a progress or
/// scheduling weight; 0 for a jet beyond the dense trellis).
pub fn dense_work(jet: &Jet) -> u64 {
    if jet.len() > MAX_POINTS {
        0
    } else {
        total_splits(jet.len()) as u64
    }
}

/// Runs `f(index, jet)` on every jet and returns the JSON Lines. `work`
/// estimates a jet's cost in splits (scheduling); `done()` is called after
/// each jet (a progress bar); `failed(jet, error)` dresses a jet's error
/// (e.g. naming the jet).
///
/// # Errors
///
/// The first failing jet's error (in input order), dressed by `failed`.
pub fn per_jet<T, E>(
    file: &JetsFile,
    work: impl Fn(&Jet) -> u64 + Sync,
    done: &(dyn Fn() + Sync),
    failed: impl Fn(&Jet, E) -> E + Sync,
    f: impl Fn(usize, &Jet) -> Result<T, E> + Sync,
) -> Result<String, E>
where
    T: Serialize + Send,
    E: From<Error> + Send,
{
    let run = |k: usize| {
        let jet = &file.jets[k];
        let r = f(k, jet).map_err(|e| failed(jet, e));
        done();
        r
    };
    let (big, small): (Vec<usize>, Vec<usize>) =
        (0..file.jets.len()).partition(|&k| work(&file.jets[k]) > BIG_WORK);
    let mut results: Vec<Option<Result<T, E>>> = (0..file.jets.len()).map(|_| None).collect();
    let mut small_results = Vec::new();
    crate::base::par::map_into(&small, true, run, &mut small_results);
    for (k, r) in small.into_iter().zip(small_results) {
        results[k] = Some(r);
    }
    for k in big {
        results[k] = Some(run(k));
    }
    let mut out = String::new();
    for (jet, r) in file.jets.iter().zip(results) {
        let result = r.expect("every jet ran")?;
        out += &crate::report::to_json(&crate::report::JetLine {
            id: &jet.id,
            result,
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(sizes: &[usize]) -> JetsFile {
        let leaf = "[30.3, 11.2, 12.9, 20.0]";
        let jets: Vec<String> = sizes
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                format!(
                    r#"{{"id": "j{k}", "leaves": [{}],
                    "params": {{"lambda": 1.5, "lambda_root": 1.5, "delta_min": 4.0}}}}"#,
                    vec![leaf; n].join(",")
                )
            })
            .collect();
        JetsFile::parse(&format!(r#"{{"jets": [{}]}}"#, jets.join(","))).unwrap()
    }

    #[test]
    fn lines_in_input_order_and_the_first_failure() {
        let f = file(&[3, 2, 4]);
        let count = std::sync::atomic::AtomicUsize::new(0);
        let done = || {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let out = per_jet(
            &f,
            |j| if j.len() == 4 { BIG_WORK + 1 } else { 1 },
            &done,
            |_, e: Error| e,
            |k, j| Ok(serde_json::json!({"k": k, "n": j.len()})),
        )
        .unwrap();
        assert_eq!(
            out,
            "{\"id\":\"j0\",\"k\":0,\"n\":3}\n{\"id\":\"j1\",\"k\":1,\"n\":2}\n\
             {\"id\":\"j2\",\"k\":2,\"n\":4}\n"
        );
        assert_eq!(count.into_inner(), 3);
        let e = per_jet(
            &f,
            |_| 1,
            &|| {},
            |j, e: Error| e.context(format!("jet {}", j.id)),
            |k, _| -> Result<serde_json::Value, Error> {
                if k >= 1 {
                    Err(Error::input(format!("fails {k}")))
                } else {
                    Ok(serde_json::json!({ "k": k }))
                }
            },
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "jet j1: fails 1");
        assert_eq!(dense_work(&f.jets[0]), total_splits(3) as u64);
    }
}
