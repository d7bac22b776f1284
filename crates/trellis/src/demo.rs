//! Every exact inference on a built-in dataset, as a readable tour (the
//! command line's `trellis demo`).
//!
//! Twelve iris flowers from Fisher's data (rows 0-3, 50-53 and 100-103 of the
//! usual 150: four per species; the same rows as `examples/iris12.csv`), with
//! centred RBF similarities (γ = 1/4) as hierarchical-correlation-clustering
//! weights.

use std::time::Instant;

use crate::{Hcc, Matrix, Result, Trellis, tree_cost};

/// Sepal length, sepal width, petal length, petal width (cm).
const IRIS: [(&str, [f64; 4]); 12] = [
    ("setosa-0", [5.1, 3.5, 1.4, 0.2]),
    ("setosa-1", [4.9, 3.0, 1.4, 0.2]),
    ("setosa-2", [4.7, 3.2, 1.3, 0.2]),
    ("setosa-3", [4.6, 3.1, 1.5, 0.2]),
    ("versicolor-50", [7.0, 3.2, 4.7, 1.4]),
    ("versicolor-51", [6.4, 3.2, 4.5, 1.5]),
    ("versicolor-52", [6.9, 3.1, 4.9, 1.5]),
    ("versicolor-53", [5.5, 2.3, 4.0, 1.3]),
    ("virginica-100", [6.3, 3.3, 6.0, 2.5]),
    ("virginica-101", [5.8, 2.7, 5.1, 1.9]),
    ("virginica-102", [7.1, 3.0, 5.9, 2.1]),
    ("virginica-103", [6.3, 2.9, 5.6, 1.8]),
];

/// Inverse temperature of the demo: the library's default recipe.
const BETA: f64 = crate::models::RECIPE_BETA;

fn points() -> Matrix {
    Matrix {
        rows: IRIS.len(),
        cols: 4,
        data: IRIS.iter().flat_map(|r| r.1).collect(),
    }
}

/// The tour: the MAP tree with each split's cost, log Z, the most probable
/// clusters and three exact posterior samples of the twelve flowers, with
/// the time each took.
///
/// # Errors
///
/// None in practice (the dataset is fixed).
pub fn run() -> Result<String> {
    let label = |i: usize| IRIS[i].0.to_string();
    let n = IRIS.len();
    // The library's default recipe (centred RBF, gamma = 1/4 for 4 features).
    let weights = crate::models::recipe_weights(&points())?;
    let mut s = String::new();
    s += &format!(
        "Trellis demo: {n} iris flowers (4 per species), centred RBF similarities,\n\
         hierarchical correlation clustering at beta = {BETA}. The same from files:\n  \
         trellis marginals --model hcc --points examples/iris12.csv --similarity rbf --center --beta {BETA}\n\
         There are {} binary hierarchies over {n} points; the trellis has {} subsets.\n\n",
        crate::count::num_trees(n),
        (1u64 << n) - 1,
    );

    let t = Instant::now();
    let map_trellis = Trellis::new(Hcc::new(&weights, 1.0)?)?;
    let tree = map_trellis.map().tree.clone();
    let model = map_trellis.model();
    let cost = tree_cost(model, &tree)?;
    let map_time = t.elapsed();
    s += &format!("MAP hierarchy (lowest cost {cost:.4}; found in {map_time:.2?}):\n");
    s += &tree.draw(&label, &|l, r| {
        Some(format!("cost {:.3}", crate::print::split_cost(model, l, r)))
    });

    let t = Instant::now();
    let trellis = Trellis::new(Hcc::new(&weights, BETA)?)?;
    let marginals = trellis.marginals()?;
    let time = t.elapsed();
    s += &format!(
        "\nlog Z = {:.6} at beta = {BETA}; the MAP tree has probability {:.3e}\n",
        trellis.log_z(),
        trellis.log_probability(&tree)?.exp()
    );
    s += &format!(
        "Most probable clusters (all {} marginals in {time:.2?}):\n",
        (1u64 << n) - 1
    );
    for (c, p) in marginals.clusters(0.0).into_iter().take(8) {
        s += &format!("  p = {p:.4}  {}\n", crate::print::members(c, &label));
    }
    s += "\nThree exact posterior samples (seed 7):\n";
    for t in trellis.samples(3, 7) {
        s += &format!("  {t}   log P = {:.3}\n", trellis.log_probability(&t)?);
    }
    Ok(s)
}
