//! From the inputs a person names to a validated problem, the same at every
//! door: a weight matrix (for the weight models), a distance matrix (for the
//! linkage potentials), with the points' names when a points file gives
//! them, or a jets file (for the Ginkgo likelihood). Which model takes which
//! input is the registry's ([`ModelInfo::takes`](crate::models::ModelInfo::takes)).
//!
//! # The rules
//!
//! - Exactly the inputs the model takes: weights or points (with a
//!   similarity) for the weight models, distances or points (their Euclidean
//!   distances) for the linkage potentials, jets for the Ginkgo likelihood;
//!   the options of one input (similarity, γ, centring, the names column)
//!   are refused with another. Dasgupta's cost refuses a negative weight.
//! - Files are read with the library's readers ([`crate::io`]): `-` is
//!   standard input, and no more bytes are read than
//!   [`input_limit`](crate::io::input_limit) of the memory limit (the
//!   limit's owner is named when it refuses), leaving room to parse them; a
//!   square matrix for the dense trellis (at most
//!   [`MAX_POINTS`](crate::MAX_POINTS) points) is read up to 1 MiB.
//! - Sizes are checked before work: the door's own point limit
//!   (`check_points(n)`), then with `dense = Some(workload)` the dense
//!   trellis's tables, then the `N x N` matrix against the memory limit, and
//!   only then are similarities or distances computed.
//!
//! Messages name the inputs as the door spells them ([`Naming`]: `--points`
//! on the command line, `points=` in Python).
//!
//! Cost: reading is linear in the input's bytes; the similarity or distance
//! matrix is `O(N² d)` for `N` points of `d` features.

use std::ops::Deref;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result};
use crate::ginkgo::{JetsFile, Variant};
use crate::io::{NamesColumn, ReadOptions, Table};
use crate::models::{InputKind, ModelName, PairwiseData};
use crate::{Distances, Similarity, Tree, Weights, Workload};

/// How a door spells the names of its inputs in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// Command-line flags: `--points`, `--names-column`.
    Flags,
    /// Keyword arguments: `points=`, `names_column=`.
    Keywords,
}

impl Naming {
    /// The input `key` (kebab-case, e.g. `names-column`) as the door spells it.
    pub fn name(self, key: &str) -> String {
        match self {
            Naming::Flags => format!("--{key}"),
            Naming::Keywords => format!("{}=", key.replace('-', "_")),
        }
    }
}

/// The similarity that turns points into weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SimilarityKind {
    /// Cosine similarity (the default).
    #[default]
    Cosine,
    /// Gaussian (RBF) kernel `exp(-γ |x-y|²)`, γ by default `1 / features`.
    Rbf,
    /// Dot product.
    Dot,
    /// `exp(-|x-y|)`.
    Expneg,
}

impl crate::Named for SimilarityKind {
    const WHAT: &'static str = "similarity";
    const CHOICES: &'static [(&'static str, SimilarityKind, &'static str)] = &[
        ("cosine", SimilarityKind::Cosine, "Cosine similarity"),
        ("rbf", SimilarityKind::Rbf, "Gaussian (RBF) kernel"),
        ("dot", SimilarityKind::Dot, "Dot product"),
        (
            "expneg",
            SimilarityKind::Expneg,
            "exp(-|x-y|), the flat trellis paper's similarity (centre it)",
        ),
    ];
}

/// The inputs a person named (paths; `-` is standard input) and the
/// options of the points.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sources<'a> {
    /// An `N x N` weight matrix (CSV or `.npy`).
    pub weights: Option<&'a Path>,
    /// Points, one per row (CSV or `.npy`), with an optional names column.
    pub points: Option<&'a Path>,
    /// An `N x N` distance matrix (CSV or `.npy`).
    pub distances: Option<&'a Path>,
    /// A jets file (JSON).
    pub jets: Option<&'a Path>,
    /// The names column of the points (default: the reader's rule).
    pub names_column: Option<NamesColumn>,
    /// The points' similarity (default: cosine).
    pub similarity: Option<SimilarityKind>,
    /// γ of the RBF similarity.
    pub gamma: Option<f64>,
    /// Subtract the mean off-diagonal similarity.
    pub center: bool,
}

impl Sources<'_> {
    /// Whether an option of the points was given.
    fn point_options(&self) -> bool {
        self.similarity_options() || self.names_column.is_some()
    }

    /// Whether an option of the points' similarity was given.
    fn similarity_options(&self) -> bool {
        self.similarity.is_some() || self.gamma.is_some() || self.center
    }
}

/// How to load: the model, the memory limit and the door's spelling.
#[derive(Clone, Copy, Debug)]
pub struct Load<'a> {
    /// The model the input is for.
    pub model: ModelName,
    /// Its β (the Ginkgo likelihood takes none: it must be 1).
    pub beta: f64,
    /// The person's memory limit in bytes (`None`: the memory available).
    pub memory_limit: Option<u64>,
    /// `Some(workload)` when the dense trellis will run: its point and
    /// memory limits are checked on the number of rows first.
    pub dense: Option<Workload>,
    /// How messages spell the inputs.
    pub naming: Naming,
    /// What a refusal of the dense trellis suggests instead (door's words).
    pub alternatives: &'a str,
}

/// What the commands run on.
pub enum Input {
    /// One dataset of pairwise weights or distances.
    Weights(NamedWeights),
    /// Many jets, each its own problem.
    Jets(JetsFile),
}

/// The pairwise data of a dataset: weights (the weight models) or distances
/// (the linkage potentials).
pub enum Pairwise {
    /// Validated pairwise weights.
    Weights(Weights),
    /// Validated pairwise distances.
    Distances(Distances),
}

impl Pairwise {
    /// The library's view of the data, to build a model on.
    pub fn view(&self) -> PairwiseData<'_> {
        match self {
            Pairwise::Weights(w) => PairwiseData::Weights(w),
            Pairwise::Distances(d) => PairwiseData::Distances(d),
        }
    }

    /// The number of points.
    pub fn n(&self) -> usize {
        self.view().n()
    }

    /// Distances for the classic linkages (see
    /// [`PairwiseData::linkage_distances`]).
    pub fn linkage_distances(&self) -> Vec<f64> {
        self.view().linkage_distances()
    }
}

/// Pairwise data (weights or distances) with the names of their points,
/// when the input names them. Dereferences to the data.
pub struct NamedWeights {
    /// The validated weights or distances.
    pub data: Pairwise,
    /// One name per point, when the input has a names column.
    pub names: Option<Vec<String>>,
}

impl NamedWeights {
    /// The weights (the input of a weight model).
    ///
    /// # Panics
    ///
    /// On distances.
    pub fn into_weights(self) -> Weights {
        match self.data {
            Pairwise::Weights(w) => w,
            Pairwise::Distances(_) => panic!("distances were read, not weights"),
        }
    }

    /// The points' names, when the input gives them.
    pub fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    /// How point `i` is shown in readable output: its name, or its index.
    pub fn label(&self, i: usize) -> String {
        crate::report::label(self.names(), i)
    }

    /// The Newick form of a tree over these points, with their names when
    /// they have names.
    pub fn newick(&self, tree: &Tree) -> String {
        match self.names() {
            Some(names) => tree.to_newick_named(names),
            None => tree.to_newick(),
        }
    }

    /// A JSON result with a `"names"` field after its own when the points
    /// have names (unchanged otherwise).
    pub fn with_names<T: serde::Serialize>(&self, result: T) -> crate::report::Named<'_, T> {
        crate::report::with_names(result, self.names())
    }
}

impl Deref for NamedWeights {
    type Target = Pairwise;

    fn deref(&self) -> &Pairwise {
        &self.data
    }
}

/// The most bytes of a square matrix read for the dense trellis: its
/// [`crate::MAX_POINTS`]` x `[`crate::MAX_POINTS`] matrix with up to
/// 1 KiB of text per value fits in 1 MiB.
const DENSE_MATRIX_BYTES: u64 = 1 << 20;

/// The Ginkgo likelihood variant of a model, if it is one.
pub fn ginkgo_variant(model: ModelName) -> Option<Variant> {
    match model {
        ModelName::Ginkgo => Some(Variant::Current),
        ModelName::GinkgoLegacy => Some(Variant::Legacy),
        _ => None,
    }
}

/// Reads and validates the input of `load.model` (see the module docs).
/// `check_points(n)` (the door's own point limit) is called on the number of
/// points of a matrix or points file as soon as it is known, before anything
/// else is checked or built. A jets file is read but its jets are not checked
/// against the dense trellis.
///
/// # Errors
///
/// Inputs the model does not take or that conflict ([`ErrorKind::Input`]),
/// the readers' errors (with the input named as context), the size checks,
/// and whatever `check_points` returns.
pub fn load<E: From<Error>>(
    sources: &Sources<'_>,
    load: &Load<'_>,
    check_points: &dyn Fn(usize) -> std::result::Result<(), E>,
) -> std::result::Result<Input, E> {
    let name = |k: &str| load.naming.name(k);
    let model = load.model;
    if let Some(path) = sources.jets {
        if ginkgo_variant(model).is_none() {
            return Err(Error::input(format!(
                "{} needs a jet model: {} ginkgo or {} ginkgo-legacy, not {model}",
                name("jets"),
                name("model"),
                name("model")
            ))
            .into());
        }
        if load.beta != 1.0 {
            return Err(Error::input(format!(
                "{} applies to the cost models (hcc, dasgupta, linkage-*), not to the Ginkgo likelihood",
                name("beta")
            ))
            .into());
        }
        if sources.point_options() {
            return Err(point_options_elsewhere(load.naming, "jets").into());
        }
        let limit = load.memory_limit;
        let file = JetsFile::read_limited(path, crate::io::input_limit(limit))
            .map_err(|e| explain_limit(e, limit, load.naming))?;
        return Ok(Input::Jets(file));
    }
    if ginkgo_variant(model).is_some() {
        return Err(Error::input(format!(
            "{} {model} scores jets: give them with {} FILE",
            name("model"),
            name("jets")
        ))
        .into());
    }
    let kind = if model.info().takes(InputKind::Distances) {
        if sources.weights.is_some() {
            return Err(Error::input(format!(
                "{} {model} runs on distances: give {} FILE or {} FILE \
                 (Euclidean distances between the rows), not {}",
                name("model"),
                name("distances"),
                name("points"),
                name("weights")
            ))
            .into());
        }
        InputKind::Distances
    } else {
        if sources.distances.is_some() {
            return Err(Error::input(format!(
                "{} {model} runs on weights (similarities): give {} or {}; \
                 {} is for the linkage potentials ({m} linkage-average, \
                 linkage-complete, linkage-single)",
                name("model"),
                name("weights"),
                name("points"),
                name("distances"),
                m = name("model")
            ))
            .into());
        }
        InputKind::Weights
    };
    let named = read_pairwise(sources, load, check_points, kind)?;
    if let (ModelName::Dasgupta, Pairwise::Weights(w)) = (model, &named.data) {
        if let Some((i, j, w)) = w.first_negative() {
            return Err(Error::input(format!(
                "negative weight w[{i}][{j}] = {w}: Dasgupta's cost needs non-negative \
                 similarities (do not use {} with it, or use {} hcc)",
                name("center"),
                name("model")
            ))
            .into());
        }
    }
    Ok(Input::Weights(named))
}

/// The refusal of the points' options (similarity, γ, centring, names
/// column) with another input, `other`.
fn point_options_elsewhere(naming: Naming, other: &str) -> Error {
    let name = |k: &str| naming.name(k);
    Error::input(format!(
        "{}, {}, {} and {} apply to {}, not to {}",
        name("similarity"),
        name("gamma"),
        name("center"),
        name("names-column"),
        name("points"),
        name(other)
    ))
}

/// Reads the weights, or the points (with their names) and their
/// similarity (`kind` = weights); or the distances, or the Euclidean
/// distances between the points (`kind` = distances). `load.model` is not
/// consulted; the size checks are those of [`load`].
///
/// # Errors
///
/// As [`load`].
pub fn read_pairwise<E: From<Error>>(
    sources: &Sources<'_>,
    load: &Load<'_>,
    check_points: &dyn Fn(usize) -> std::result::Result<(), E>,
    kind: InputKind,
) -> std::result::Result<NamedWeights, E> {
    let (limit, naming) = (load.memory_limit, load.naming);
    let name = |k: &str| naming.name(k);
    let check_size = |n: usize| -> std::result::Result<(), E> {
        check_points(n)?;
        if let Some(workload) = load.dense {
            crate::check_memory(n, workload, limit)
                .map_err(|e| Error::input(format!("{e} ({})", load.alternatives)))?;
        }
        Weights::check_memory(n, limit).map_err(|e| {
            Error::input(match limit {
                Some(_) => format!("{e} ({})", name("max-memory")),
                None => format!("{e} (the memory available)"),
            })
        })?;
        Ok(())
    };
    let in_input = |key: &str, path: &Path| format!("in {} {}", name(key), path.display());
    if kind == InputKind::Distances {
        if sources.similarity_options() {
            return Err(Error::input(format!(
                "{}, {} and {} make weights; the linkage potentials run on \
                 distances ({}, or the Euclidean distances between {})",
                name("similarity"),
                name("gamma"),
                name("center"),
                name("distances"),
                name("points")
            ))
            .into());
        }
        if let Some(path) = sources.distances {
            if sources.names_column.is_some() {
                return Err(Error::input(format!(
                    "{} applies to {}, not to {}",
                    name("names-column"),
                    name("points"),
                    name("distances")
                ))
                .into());
            }
            let m = read_square(path, load, &check_size)?;
            let d = if m.rows != m.cols && (m.rows == 1 || m.cols == 1) {
                // SciPy's condensed vector: the upper triangle, row by row.
                check_size(crate::models::condensed_points(m.data.len())?)?;
                Distances::from_condensed_vector(&m.data)
            } else {
                Distances::from_matrix(&m)
            };
            let d = d.map_err(|e| e.context(in_input("distances", path)))?;
            return Ok(NamedWeights {
                data: Pairwise::Distances(d),
                names: None,
            });
        }
        let path = sources.points.ok_or_else(|| {
            Error::input(format!(
                "give the distances with {} FILE or {} FILE",
                name("distances"),
                name("points")
            ))
        })?;
        let Table { names, matrix, .. } = read_points(path, sources.names_column, limit, naming)?;
        check_size(matrix.rows)?;
        let d = Distances::from_points(&matrix).map_err(|e| e.context(in_input("points", path)))?;
        return Ok(NamedWeights {
            data: Pairwise::Distances(d),
            names,
        });
    }
    if sources.distances.is_some() {
        return Err(Error::input(format!(
            "{} is for the linkage potentials ({} linkage-average, \
             linkage-complete, linkage-single) and `trellis linkage`; this model runs on \
             weights: give {} or {}",
            name("distances"),
            name("model"),
            name("weights"),
            name("points")
        ))
        .into());
    }
    if let Some(path) = sources.weights {
        if sources.point_options() {
            return Err(point_options_elsewhere(naming, "weights").into());
        }
        let m = read_square(path, load, &check_size)?;
        let weights = Weights::from_matrix(&m).map_err(|e| e.context(in_input("weights", path)))?;
        return Ok(NamedWeights {
            data: Pairwise::Weights(weights),
            names: None,
        });
    }
    let path = sources.points.ok_or_else(|| {
        Error::input(format!(
            "give the weights with {} FILE or {} FILE",
            name("weights"),
            name("points")
        ))
    })?;
    let Table { names, matrix, .. } = read_points(path, sources.names_column, limit, naming)?;
    check_size(matrix.rows)?;
    let weights = similarity_weights(sources, &matrix, naming)?;
    Ok(NamedWeights {
        data: Pairwise::Weights(weights),
        names,
    })
}

/// Reads an `N x N` matrix of at most the input limit under the memory
/// limit (for the dense trellis, at most 1 MiB: its 30 points need less),
/// checking `check_size(N)` on a square matrix before anything else (a
/// non-square one is reported by the matrix's validation).
fn read_square<E: From<Error>>(
    path: &Path,
    load: &Load<'_>,
    check_size: &dyn Fn(usize) -> std::result::Result<(), E>,
) -> std::result::Result<crate::Matrix, E> {
    let limit = load.memory_limit;
    let mut max_bytes = crate::io::input_limit(limit);
    let mut why = None;
    if load.dense.is_some() && max_bytes > DENSE_MATRIX_BYTES {
        max_bytes = DENSE_MATRIX_BYTES;
        why = Some(format!(
            "the dense trellis takes at most {} points, whose matrix needs less; \
             for more points, see {}",
            crate::MAX_POINTS,
            load.naming.name("sparse")
        ));
    }
    let table = crate::io::read_table(path, &ReadOptions::weights().with_max_bytes(max_bytes))
        .map_err(|e| match &why {
            Some(why) if is_too_large(&e) => Error::input(format!("{e} ({why})")),
            _ => explain_limit(e, limit, load.naming),
        })?;
    let m = table.matrix;
    if m.rows == m.cols {
        check_size(m.rows)?;
    }
    Ok(m)
}

/// Reads points (with their names, see [`NamesColumn`]), at most the input
/// limit under the memory limit `limit`.
///
/// # Errors
///
/// The reader's, with the limit's owner named when the input is too large.
pub fn read_points(
    path: &Path,
    names_column: Option<NamesColumn>,
    limit: Option<u64>,
    naming: Naming,
) -> Result<Table> {
    let options = ReadOptions::points()
        .with_names(names_column.unwrap_or_default())
        .with_max_bytes(crate::io::input_limit(limit));
    crate::io::read_table(path, &options).map_err(|e| explain_limit(e, limit, naming))
}

/// The weights of points: their pairwise similarity (the similarity, γ and
/// centring of `sources`).
///
/// # Errors
///
/// γ without the RBF similarity, and the similarity's own errors (with the
/// points named as context).
pub fn similarity_weights(
    sources: &Sources<'_>,
    m: &crate::Matrix,
    naming: Naming,
) -> Result<Weights> {
    let similarity = match sources.similarity.unwrap_or_default() {
        SimilarityKind::Cosine => Similarity::Cosine,
        SimilarityKind::Dot => Similarity::Dot,
        SimilarityKind::Expneg => Similarity::ExpNeg,
        SimilarityKind::Rbf => Similarity::Rbf {
            gamma: sources.gamma.unwrap_or(1.0 / m.cols.max(1) as f64),
        },
    };
    if sources.gamma.is_some() && !matches!(similarity, Similarity::Rbf { .. }) {
        return Err(Error::input(format!(
            "{} only applies to {} rbf",
            naming.name("gamma"),
            naming.name("similarity")
        )));
    }
    let path = sources.points.unwrap_or(Path::new("-"));
    Weights::from_points(m, similarity, sources.center)
        .map_err(|e| e.context(format!("in {} {}", naming.name("points"), path.display())))
}

/// Reads a text file (`-`: standard input: triplets, trees, clusters) of at
/// most the input limit under the memory limit `limit` (`None`: the memory
/// available); a larger input is refused naming the limit.
///
/// # Errors
///
/// The reader's.
pub fn read_text(path: &Path, limit: Option<u64>, naming: Naming) -> Result<String> {
    crate::io::read_text(path, crate::io::input_limit(limit))
        .map_err(|e| explain_limit(e, limit, naming))
}

/// Whether a reader's error is an input over its byte limit.
fn is_too_large(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Io { source, .. } if source.kind() == std::io::ErrorKind::FileTooLarge
    )
}

/// An error of the library's readers, with where the byte limit comes from
/// when the input was too large (`limit`: the person's memory limit).
pub fn explain_limit(e: Error, limit: Option<u64>, naming: Naming) -> Error {
    match (is_too_large(&e), limit) {
        (true, Some(_)) => Error::input(format!(
            "{e} (1/{} of {}, and at least 1 MiB, leaving room to parse it)",
            crate::io::INPUT_SHARE,
            naming.name("max-memory")
        )),
        (true, None) => Error::input(format!(
            "{e} (1/{} of the memory available, leaving room to parse it)",
            crate::io::INPUT_SHARE
        )),
        (false, _) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` to `name` in `dir`, removed with it when the test ends.
    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn request(model: ModelName) -> Load<'static> {
        Load {
            model,
            beta: 1.0,
            memory_limit: None,
            dense: None,
            naming: Naming::Flags,
            alternatives: "",
        }
    }

    fn run(sources: &Sources<'_>, model: ModelName) -> Result<Input> {
        load(sources, &request(model), &|_| Ok(()))
    }

    #[test]
    fn each_model_takes_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let pts = write(&dir, "p.csv", "name,x,y\na,1,0\nb,3,4\nc,0,1\n");
        let src = Sources {
            points: Some(&pts),
            ..Sources::default()
        };
        let Input::Weights(w) = run(&src, ModelName::LinkageAverage).unwrap() else {
            panic!("points give a dataset")
        };
        assert_eq!(w.names().unwrap(), ["a", "b", "c"]);
        assert!(matches!(w.data, Pairwise::Distances(_)));
        assert_eq!(w.label(1), "b");
        let Input::Weights(w) = run(&src, ModelName::Hcc).unwrap() else {
            panic!("points give a dataset")
        };
        assert!(matches!(w.data, Pairwise::Weights(_)));
        // Another input's options, or an input the model does not take.
        let e = run(
            &Sources {
                center: true,
                ..src
            },
            ModelName::LinkageSingle,
        )
        .err()
        .unwrap();
        assert!(matches!(e.kind(), ErrorKind::Input { .. }));
        assert!(
            e.to_string()
                .starts_with("--similarity, --gamma and --center")
        );
        let e = run(&src, ModelName::Ginkgo).err().unwrap();
        assert_eq!(
            e.to_string(),
            "--model ginkgo scores jets: give them with --jets FILE"
        );
        let w = write(&dir, "w.csv", "0,-1\n-1,0\n");
        let e = run(
            &Sources {
                weights: Some(&w),
                ..Sources::default()
            },
            ModelName::Dasgupta,
        )
        .err()
        .unwrap();
        assert!(e.to_string().starts_with("negative weight w[0][1] = -1"));
    }

    #[test]
    fn the_door_checks_points_first_and_names_its_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let pts = write(&dir, "q.csv", "1,2\n3,4\n5,6\n");
        let src = Sources {
            points: Some(&pts),
            gamma: Some(1.0),
            ..Sources::default()
        };
        let r: std::result::Result<Input, Error> = load(&src, &request(ModelName::Hcc), &|n| {
            Err(Error::input(format!("{n} rows")))
        });
        assert_eq!(r.err().unwrap().to_string(), "3 rows");
        let e = load(
            &src,
            &Load {
                naming: Naming::Keywords,
                ..request(ModelName::Hcc)
            },
            &|_| Ok::<(), Error>(()),
        )
        .err()
        .unwrap();
        assert_eq!(e.to_string(), "gamma= only applies to similarity= rbf");
        assert_eq!(Naming::Flags.name("names-column"), "--names-column");
        assert_eq!(Naming::Keywords.name("names-column"), "names_column=");
    }

    #[test]
    fn a_context_goes_before_the_message_and_keeps_the_kind() {
        let dir = tempfile::tempdir().unwrap();
        let bad = write(&dir, "bad.csv", "0,1\n2,0\n");
        let e = run(
            &Sources {
                weights: Some(&bad),
                ..Sources::default()
            },
            ModelName::Hcc,
        )
        .err()
        .unwrap();
        assert!(matches!(e.kind(), ErrorKind::Asymmetric { .. }));
        assert!(
            e.to_string()
                .starts_with(&format!("in --weights {}: ", bad.display()))
        );
    }
}
