//! From command-line arguments to the library's loader (`trellis::input`):
//! the flags become its `Sources` and `Load`, its messages spell the inputs
//! as flags. What is checked, in which order, and how much is read is the
//! library's (see its module docs); this module checks the flags that no
//! input carries (`--beta`, `--max-memory`, `--time-limit`).

use std::path::Path;

use anyhow::{Result, bail};
use trellis::Workload;
use trellis::ginkgo::Variant;
use trellis::input::{Load, Naming, Sources};
use trellis::io::NamesColumn;
use trellis::models::{InputKind, ModelName, Structure};

pub use trellis::input::{Input, NamedWeights, ginkgo_variant};

use crate::{BudgetArgs, DataArgs, ModelArgs};

/// What to use instead of the dense trellis over too many points for the
/// cost models (hcc, Dasgupta). Greedy and beam search are poor on hcc (their
/// myopic split cost is 0 for negative weights), so they are not suggested.
const DENSE_ALTERNATIVES: &str = "for the lowest-cost tree over more points, use \
     `trellis astar --approx` (approximate A* from linkage trees, any number of points, \
     never worse than average linkage); for approximate log Z, marginals and samples, \
     --sparse beam (any number of points, within the memory of its beam search)";

/// The library's view of the data flags.
pub fn sources<'a>(data: &'a DataArgs, distances: Option<&'a Path>) -> Sources<'a> {
    Sources {
        weights: data.weights.as_deref(),
        points: data.points.as_deref(),
        distances,
        jets: None,
        names_column: data.names_column,
        similarity: data.similarity,
        gamma: data.gamma,
        center: data.center,
    }
}

/// How to load for `model` (messages spell the inputs as flags).
fn request(
    model: ModelName,
    beta: f64,
    limit: Option<u64>,
    dense: Option<Workload>,
) -> Load<'static> {
    Load {
        model,
        beta,
        memory_limit: limit,
        dense,
        naming: Naming::Flags,
        alternatives: DENSE_ALTERNATIVES,
    }
}

/// Parses `--model` of the hierarchical commands: a hierarchical model of
/// the library's registry.
pub fn hierarchy_model(s: &str) -> Result<ModelName, String> {
    model_of(s, Structure::Hierarchy)
}

/// Parses `--model` of `trellis flat`: a flat model of the library's registry.
pub fn flat_model(s: &str) -> Result<ModelName, String> {
    model_of(s, Structure::Partition)
}

/// A model of the registry that scores `structure`, or the command that takes it.
fn model_of(s: &str, structure: Structure) -> Result<ModelName, String> {
    let name: ModelName = s.parse().map_err(|e: trellis::Error| e.to_string())?;
    match name.info().structure {
        found if found == structure => Ok(name),
        Structure::Partition => Err(format!(
            "{name} scores flat partitions: use `trellis flat ... --model {name}`"
        )),
        Structure::Hierarchy => Err(format!(
            "{name} scores hierarchies: use `trellis map ... --model {name}` (or logz, \
             marginals, sample)"
        )),
    }
}

/// Parses `--names-column`: a 0-based column index, or `none`.
pub fn names_column(s: &str) -> Result<NamesColumn, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(NamesColumn::None);
    }
    s.parse::<usize>()
        .map(NamesColumn::Column)
        .map_err(|_| format!("must be a 0-based column index or `none`, not {s:?}"))
}

/// The variant of a jets command's model (checked by `load_checked`).
pub fn variant(args: &ModelArgs) -> Variant {
    ginkgo_variant(args.model).expect("a jet model")
}

/// Reads and validates the input of a command. With `dense = Some(workload)`
/// the exact trellis will run: the number of points (checked on the rows read,
/// before any similarity is computed) and the trellis tables must fit.
/// `check_points(n)` is called on the number of points of a weight matrix
/// or points file as soon as it is known, before the `N x N` weights are
/// built (a command's point limit refuses first).
pub fn load_checked(
    args: &ModelArgs,
    dense: Option<Workload>,
    check_points: &dyn Fn(usize) -> Result<()>,
) -> Result<Input> {
    args.budget.check()?;
    trellis::job::time_limit(args.time_limit, Naming::Flags)?;
    let sources = Sources {
        jets: args.jets.as_deref(),
        ..sources(&args.data, args.distances.as_deref())
    };
    let load = request(args.model, args.budget.beta, memory_limit(args), dense);
    trellis::input::load(&sources, &load, check_points)
}

impl BudgetArgs {
    /// Checks `--beta` and `--max-memory`.
    pub fn check(&self) -> Result<()> {
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            bail!("--beta must be a finite number >= 0, not {}", self.beta);
        }
        if let Some(g) = self.max_memory
            && !(g.is_finite() && g > 0.0)
        {
            bail!("--max-memory must be a positive number of GiB, not {g}");
        }
        Ok(())
    }

    /// `--max-memory` in bytes (`None`: the memory available).
    pub fn memory_limit(&self) -> Option<u64> {
        self.max_memory.map(|g| (g * (1u64 << 30) as f64) as u64)
    }
}

/// Reads `--weights`, or `--points` and their similarity (`kind` =
/// weights); or `--distances`, or the Euclidean distances between `--points`
/// (`kind` = distances), with the library's checks (`trellis::input::read_pairwise`).
pub fn read_input(
    data: &DataArgs,
    distances: Option<&Path>,
    limit: Option<u64>,
    dense: Option<Workload>,
    check_points: &dyn Fn(usize) -> Result<()>,
    kind: InputKind,
) -> Result<NamedWeights> {
    // The model is not consulted by `read_pairwise`.
    let load = request(ModelName::Hcc, 1.0, limit, dense);
    trellis::input::read_pairwise(&sources(data, distances), &load, check_points, kind)
}

/// Refuses `--time-limit` where nothing would honour it (`what`: the
/// command or engine), rather than ignoring it.
pub fn refuse_time_limit(args: &ModelArgs, what: &str) -> Result<()> {
    if args.time_limit.is_some() {
        bail!(
            "--time-limit applies to the exact trellis (map, logz, marginals, sample, infer) \
             and to astar, not to {what}"
        );
    }
    Ok(())
}

/// `--time-limit` as the library's time limit (checked by [`load_checked`];
/// one too long for a `Duration` is no limit).
pub fn time_limit(args: &ModelArgs) -> Option<std::time::Duration> {
    trellis::job::time_limit(args.time_limit, Naming::Flags).unwrap_or_default()
}

/// `--max-memory` in bytes (`None`: the memory available).
pub fn memory_limit(args: &ModelArgs) -> Option<u64> {
    args.budget.memory_limit()
}

/// The clap parser of a choice the library names ([`trellis::Named`]):
/// its names, their help and the order they are listed in are the
/// library's; an unknown name is clap's error with the possible values.
#[derive(Clone)]
pub struct Choice<T>(std::marker::PhantomData<T>);

/// [`Choice`] of `T`, for `#[arg(value_parser = choice::<T>())]`.
pub fn choice<T: trellis::Named>() -> Choice<T> {
    Choice(std::marker::PhantomData)
}

impl<T: trellis::Named> clap::builder::TypedValueParser for Choice<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let names = T::CHOICES.iter().map(|c| c.0);
        let name = clap::builder::PossibleValuesParser::new(names).parse_ref(cmd, arg, value)?;
        Ok(T::from_name(&name).expect("a listed name"))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let values = T::CHOICES
            .iter()
            .map(|(name, _, help)| clap::builder::PossibleValue::new(*name).help(*help));
        Some(Box::new(values))
    }
}
