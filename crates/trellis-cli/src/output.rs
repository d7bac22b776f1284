//! Readable output: dendrograms, cluster lists, large numbers.

use trellis::Mask;

/// `{a, b, c}` for the points of a cluster.
pub fn members(cluster: Mask, label: &dyn Fn(usize) -> String) -> String {
    let names: Vec<String> = trellis::members(cluster).map(label).collect();
    format!("{{{}}}", names.join(", "))
}

/// A large integer (given by its decimal digits) in scientific notation, e.g. `6.32e21`.
pub fn approx(x: &impl std::fmt::Display) -> String {
    let digits = x.to_string();
    if digits.len() <= 6 {
        return digits;
    }
    format!("{}.{}e{}", &digits[..1], &digits[1..3], digits.len() - 1)
}

/// `{a, b, c}` for a list of points.
pub fn points(points: &[usize]) -> String {
    let names: Vec<String> = points.iter().map(usize::to_string).collect();
    format!("{{{}}}", names.join(", "))
}

/// A matrix of probabilities, one row per line.
pub fn matrix(rows: &[Vec<f64>]) -> String {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|p| format!("{p:5.3}"))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect()
}

/// The first `top` clusters with their marginals, one per line.
pub fn clusters(clusters: &[crate::commands::ClusterJson], top: usize) -> String {
    labelled_clusters(clusters, top, &|i| i.to_string())
}

/// The first `top` clusters with their marginals, one per line, point `i`
/// shown as `label(i)`.
pub fn labelled_clusters(
    clusters: &[crate::commands::ClusterJson],
    top: usize,
    label: &dyn Fn(usize) -> String,
) -> String {
    clusters
        .iter()
        .take(top)
        .map(|c| {
            let names: Vec<String> = c.members.iter().map(|&i| label(i)).collect();
            format!("  {:.6}  {{{}}}\n", c.p, names.join(", "))
        })
        .collect()
}
