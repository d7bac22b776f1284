//! Readable output: dendrograms, cluster lists, large numbers.

use trellis::{Mask, Tree};

/// Labels a leaf by its 0-based point index.
pub fn leaf_index(i: usize) -> String {
    i.to_string()
}

/// Draws a tree sideways, one line per node, with an optional note on each
/// internal node (given its two children):
///
/// ```text
/// ● cost 1.2000
/// ├─● cost 0.5000
/// │ ├─ 0
/// │ └─ 1
/// └─ 2
/// ```
pub fn dendrogram(
    tree: &Tree,
    label: &dyn Fn(usize) -> String,
    note: &dyn Fn(&Tree, &Tree) -> Option<String>,
) -> String {
    fn go(
        t: &Tree,
        line: &str,
        next: &str,
        out: &mut String,
        label: &dyn Fn(usize) -> String,
        note: &dyn Fn(&Tree, &Tree) -> Option<String>,
    ) {
        match t {
            Tree::Leaf(i) => {
                out.push_str(&format!("{line} {}\n", label(*i)));
            }
            Tree::Node(l, r) => {
                match note(l, r) {
                    Some(s) => out.push_str(&format!("{line}● {s}\n")),
                    None => out.push_str(&format!("{line}●\n")),
                }
                go(
                    l,
                    &format!("{next}├─"),
                    &format!("{next}│ "),
                    out,
                    label,
                    note,
                );
                go(
                    r,
                    &format!("{next}└─"),
                    &format!("{next}  "),
                    out,
                    label,
                    note,
                );
            }
        }
    }
    let mut out = String::new();
    go(tree, "", "", &mut out, label, note);
    out
}

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
