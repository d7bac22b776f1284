//! Jets files: the JSON format of `shared/data/ginkgo` (read and written).
//!
//! ```text
//! { "meta": {...},
//!   "jets": [ { "id": "...", "N": 5, "leaves": [[E, px, py, pz], ...],
//!               "params": {"lambda": 1.5, "lambda_root": 1.5, "delta_min": 16.0, ...},
//!               "truth": [[0, 1], [2, [3, 4]]],            (optional)
//!               "truth_log_likelihood": -31.2, ... }, ...] }
//! ```
//!
//! # What reading checks
//!
//! The text is UTF-8 JSON (a leading byte-order mark is skipped) holding an
//! object; its `meta` (any JSON, optional) is kept as read, other top-level
//! fields are ignored. `jets` is a non-empty list of objects; each error names
//! the jet (its `id`, else `#k` for the `k`-th, from 0). The fields read, in
//! each jet:
//!
//! - `id`: a string or a number (kept as text); optional.
//! - `N`: optional; when present, a non-negative integer equal to the number
//!   of leaves.
//! - `leaves`: a list of at least 2 four-momenta `[E, px, py, pz]`, each
//!   exactly 4 finite numbers with `E > 0` and `E² ≥ |p|²` (no tachyons; a
//!   relative rounding tolerance of 1e-9 for massless particles).
//! - `params`: an object with `lambda` (or `Lambda`), `lambda_root` (or
//!   `LambdaRoot`) and `delta_min` (or its older name `pt_cut`, the
//!   mass-squared cut `t_cut`), each a finite number `> 0`.
//! - `truth`: optional (`null` is absent); a nested list over the leaf
//!   indices `0..N` (a number is a leaf, a 2-element list a node, a
//!   1-element list its element), every leaf exactly once. It may be nested
//!   as deep as the jet has leaves: it is read with an explicit stack.
//!
//! Every other field of a jet (`params` included, whole) is kept as read in
//! [`Jet::extra`] and written back; such fields are any JSON nested at most
//! 128 levels (`serde_json`'s limit for values).
//!
//! **Numbers.** Every number the library reads must be finite. JSON has no
//! NaN or infinity, but Python's `json` writes the bare tokens `NaN`,
//! `Infinity` and `-Infinity`: they are recognised outside strings so that
//! the error names the jet and the field holding them, and refused in every
//! field, read or not (keeping them would mean writing a different type
//! back; write `null` for a missing number). A number beyond the `f64` range
//! (`1e400`) is refused likewise.

use std::collections::BTreeMap;
use std::path::Path;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::base::tree::{Tree, strip_bom};
use crate::error::{Error, Result};
use crate::ginkgo::likelihood::{SplitParams, mass_squared};

/// Relative tolerance on `E² ≥ |p|²` (rounding of massless particles).
const MASS_TOLERANCE: f64 = 1e-9;

/// Why leaf `i`, the 4-momentum `p = (E, px, py, pz)`, is not a particle, if
/// it is not: a non-finite component, `E <= 0`, or `E² < |p|²` beyond a
/// relative tolerance of 1e-9 (rounding in the files). The one check of
/// every jets reader (the jets file, Python's arrays).
pub fn leaf_problem(i: usize, p: &[f64; 4]) -> Option<String> {
    if p.iter().any(|x| !x.is_finite()) {
        return Some(format!("leaf {i} has a non-finite component"));
    }
    let t = mass_squared(p);
    if p[0] <= 0.0 || t < -MASS_TOLERANCE * p[0] * p[0] {
        return Some(format!(
            "leaf {i} is unphysical: E = {} but |p| = {} (a particle needs E > 0 and E >= |p|)",
            p[0],
            (p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt()
        ));
    }
    None
}

/// The tokens Python writes for non-finite floats, longest first.
const NON_FINITE: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// One jet: its observed particles (the leaves) and model parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Jet {
    /// Identifier, reported with every result.
    pub id: String,
    /// Leaf 4-momenta `(E, px, py, pz)`.
    pub leaves: Vec<[f64; 4]>,
    /// The likelihood parameters.
    pub params: SplitParams,
    /// The generating tree, when known.
    pub truth: Option<Tree>,
    /// Every other field of the jet object (`params` included), kept as read.
    pub extra: Map<String, Value>,
}

impl Jet {
    /// The angle between the 3-momenta of every pair of leaves, row-major
    /// `n × n` (0 for a leaf without momentum): the distances of classic
    /// linkage on jets.
    pub fn angle_distances(&self) -> Vec<f64> {
        let n = self.len();
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (&self.leaves[i], &self.leaves[j]);
                let dot = a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
                let norms = (a[1] * a[1] + a[2] * a[2] + a[3] * a[3]).sqrt()
                    * (b[1] * b[1] + b[2] * b[2] + b[3] * b[3]).sqrt();
                let angle = if norms > 0.0 {
                    (dot / norms).clamp(-1.0, 1.0).acos()
                } else {
                    0.0
                };
                d[i * n + j] = angle;
                d[j * n + i] = angle;
            }
        }
        d
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    /// Whether the jet has no leaves (never true for a validated jet).
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// The jet as a JSON object in the file format. The truth tree becomes
    /// nested arrays, one per level: `serde_json` values are freed
    /// recursively, so for jets with very deep truth trees (tens of thousands
    /// of levels) write the file with [`JetsFile::to_json_string`], which
    /// builds no values for trees.
    pub fn to_json(&self) -> Value {
        let mut m = self.fields();
        if let Some(t) = &self.truth {
            let tree = t.fold(Value::from, |l, r| Value::Array(vec![l, r]));
            m.insert("truth".into(), tree);
        }
        Value::Object(m)
    }

    /// The jet's fields in the file format, without its truth tree.
    fn fields(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("id".into(), Value::from(self.id.clone()));
        m.insert("N".into(), Value::from(self.leaves.len()));
        m.insert(
            "leaves".into(),
            serde_json::to_value(&self.leaves).expect("floats serialize"),
        );
        let mut params = self
            .extra
            .get("params")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        params.insert("lambda".into(), Value::from(self.params.lambda));
        params.insert("lambda_root".into(), Value::from(self.params.lambda_root));
        params.insert("delta_min".into(), Value::from(self.params.t_cut));
        m.insert("params".into(), Value::Object(params));
        for (k, v) in &self.extra {
            if k == "truth" && self.truth.is_some() {
                continue;
            }
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        m
    }
}

/// A jet as written by [`JetsFile::to_json_string`]: its fields in key order,
/// the truth tree serialized by [`Tree`] (any depth) rather than as a value.
struct JetOut<'a> {
    fields: Map<String, Value>,
    truth: Option<&'a Tree>,
}

impl Serialize for JetOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer
            .serialize_map(Some(self.fields.len() + usize::from(self.truth.is_some())))?;
        let mut truth = self.truth;
        for (k, v) in &self.fields {
            if let Some(t) = truth.filter(|_| k.as_str() > "truth") {
                map.serialize_entry("truth", t)?;
                truth = None;
            }
            map.serialize_entry(k, v)?;
        }
        if let Some(t) = truth {
            map.serialize_entry("truth", t)?;
        }
        map.end()
    }
}

/// A jets file: its metadata and jets.
#[derive(Clone, Debug, PartialEq)]
pub struct JetsFile {
    /// The `meta` object, as read.
    pub meta: Value,
    /// The jets, in file order.
    pub jets: Vec<Jet>,
}

/// The fields of a JSON object, each as its text (nested to any depth).
type Fields<'a> = BTreeMap<String, &'a RawValue>;

/// The fields of `raw` if it is an object.
fn fields_of(raw: &RawValue) -> Option<Fields<'_>> {
    serde_json::from_str(raw.get()).ok()
}

/// `raw` as a value; `what` names it in the error (too deep, or a number
/// out of range).
fn value_of(raw: &RawValue, what: &dyn Fn() -> String) -> Result<Value> {
    serde_json::from_str(raw.get()).map_err(|e| {
        // The position is within the field's text: leave it out.
        let e = e.to_string();
        let e = e.rfind(" at line ").map_or(e.as_str(), |k| &e[..k]);
        Error::parse(None, format!("{}: {e}", what()))
    })
}

/// The non-finite token (as written by [`quote_non_finite`]) that `raw` holds.
fn non_finite_in(raw: &RawValue) -> Option<&'static str> {
    NON_FINITE
        .into_iter()
        .find(|t| raw.get().contains(&format!("\"\\u0000{t}\"")))
}

/// A value as shown in an error: a quoted non-finite token as the bare token.
fn shown(v: &Value) -> String {
    match v.as_str().and_then(|s| s.strip_prefix('\0')) {
        Some(t) if NON_FINITE.contains(&t) => t.to_string(),
        _ => v.to_string(),
    }
}

impl JetsFile {
    /// Reads and validates a jets file, or standard input when `path` is `-`,
    /// of at most the memory available (see [`crate::io::input_limit`]).
    pub fn read(path: &Path) -> Result<JetsFile> {
        JetsFile::read_limited(path, crate::io::input_limit(None))
    }

    /// Reads and validates a jets file (`-`: standard input), refusing more
    /// than `max_bytes` bytes (see [`crate::io::read_bytes`]).
    pub fn read_limited(path: &Path, max_bytes: u64) -> Result<JetsFile> {
        let text = crate::io::read_text(path, max_bytes)?;
        JetsFile::parse(&text).map_err(|e| e.with_path(&crate::io::shown(path)))
    }

    /// Parses and validates the text of a jets file (the checks are listed
    /// under "What reading checks" in the docs of [`crate::ginkgo`]'s jets
    /// format).
    pub fn parse(text: &str) -> Result<JetsFile> {
        let text = quote_non_finite(strip_bom(text));
        // The syntax of the whole file, checked without building values (so
        // at any depth); then each field is read on its own.
        let raw: &RawValue = serde_json::from_str(&text)
            .map_err(|e| Error::parse(None, format!("not valid JSON: {e}")))?;
        let top = fields_of(raw)
            .ok_or_else(|| Error::parse(None, "expected a JSON object with a \"jets\" list"))?;
        let jets: Vec<&RawValue> = top
            .get("jets")
            .and_then(|j| serde_json::from_str(j.get()).ok())
            .ok_or_else(|| Error::parse(None, "missing the \"jets\" list"))?;
        if jets.is_empty() {
            return Err(Error::parse(None, "the \"jets\" list is empty"));
        }
        let jets = jets
            .iter()
            .enumerate()
            .map(|(k, j)| parse_jet(k, j))
            .collect::<Result<Vec<_>>>()?;
        let meta = match top.get("meta") {
            None => Value::Null,
            Some(m) => {
                if let Some(t) = non_finite_in(m) {
                    return Err(Error::parse(None, format!("meta {}", non_finite(t))));
                }
                value_of(m, &|| "meta".to_string())?
            }
        };
        Ok(JetsFile { meta, jets })
    }

    /// The file as JSON text. Truth trees are written by [`Tree`]'s
    /// serializer, at any depth.
    pub fn to_json_string(&self) -> String {
        #[derive(serde::Serialize)]
        struct FileOut<'a> {
            jets: Vec<JetOut<'a>>,
            meta: &'a Value,
        }
        let out = FileOut {
            jets: self
                .jets
                .iter()
                .map(|j| JetOut {
                    fields: j.fields(),
                    truth: j.truth.as_ref(),
                })
                .collect(),
            meta: &self.meta,
        };
        serde_json::to_string(&out).expect("values and trees serialize")
    }
}

/// Python's `json` writes NaN and infinities as the bare tokens `NaN`,
/// `Infinity` and `-Infinity`, which are not JSON. Quoting them (outside
/// string literals) as the strings `"\u0000NaN"` ... lets the file parse, so
/// that validation can name the jet and field that hold them instead of
/// failing on the whole file.
fn quote_non_finite(text: &str) -> std::borrow::Cow<'_, str> {
    if !(text.contains("NaN") || text.contains("Infinity")) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else {
            let token = NON_FINITE.into_iter().find(|t| rest.starts_with(t));
            if let Some(t) = token {
                out.push_str("\"\\u0000");
                out.push_str(t);
                out.push('"');
                rest = &rest[t.len()..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// The message for a bare non-finite token.
fn non_finite(token: &str) -> String {
    format!(
        "holds {token}, which is not JSON: every number must be finite (write null for a missing value)"
    )
}

fn bad(id: &str, detail: impl std::fmt::Display) -> Error {
    Error::parse(None, format!("jet {id}: {detail}"))
}

fn parse_jet(index: usize, raw: &RawValue) -> Result<Jet> {
    let fields = fields_of(raw)
        .ok_or_else(|| Error::parse(None, format!("jet #{index} is not a JSON object")))?;
    let id_value = fields
        .get("id")
        .and_then(|v| serde_json::from_str(v.get()).ok());
    let id = match id_value {
        Some(Value::String(s)) => s,
        Some(Value::Number(x)) => x.to_string(),
        _ => format!("#{index}"),
    };
    // Every field but the truth tree as a value.
    let mut obj = Map::new();
    for (k, v) in &fields {
        if k != "truth" {
            let value = value_of(v, &|| format!("jet {id}: field {k:?}"))?;
            obj.insert(k.clone(), value);
        }
    }
    let leaves_v = obj
        .get("leaves")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(&id, "missing the \"leaves\" list"))?;
    let mut leaves = Vec::with_capacity(leaves_v.len());
    for (i, leaf) in leaves_v.iter().enumerate() {
        let comps = leaf
            .as_array()
            .filter(|c| c.len() == 4)
            .ok_or_else(|| bad(&id, format!("leaf {i} is not a 4-momentum [E, px, py, pz]")))?;
        let mut p = [0.0; 4];
        for (slot, c) in p.iter_mut().zip(comps) {
            *slot = c.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                bad(
                    &id,
                    format!("leaf {i} has a non-numeric or non-finite component"),
                )
            })?;
        }
        if let Some(problem) = leaf_problem(i, &p) {
            return Err(bad(&id, problem));
        }
        leaves.push(p);
    }
    if leaves.len() < 2 {
        return Err(bad(
            &id,
            format!("has {} leaf; a hierarchy needs at least 2", leaves.len()),
        ));
    }
    if let Some(v) = obj.get("N") {
        match v.as_u64() {
            Some(k) if usize::try_from(k) == Ok(leaves.len()) => {}
            Some(k) => {
                return Err(bad(
                    &id,
                    format!("N is {k} but the jet has {} leaves", leaves.len()),
                ));
            }
            None => {
                return Err(bad(
                    &id,
                    format!(
                        "N must be the number of leaves ({}), not {}",
                        leaves.len(),
                        shown(v)
                    ),
                ));
            }
        }
    }
    let params_v = obj
        .get("params")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            bad(
                &id,
                "missing the \"params\" object (lambda, lambda_root, delta_min)",
            )
        })?;
    let param = |names: &[&str]| -> Result<f64> {
        let v = names
            .iter()
            .find_map(|n| params_v.get(*n))
            .ok_or_else(|| bad(&id, format!("missing parameter params.{}", names[0])))?;
        v.as_f64()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| {
                bad(
                    &id,
                    format!(
                        "params.{} must be a positive number, not {}",
                        names[0],
                        shown(v)
                    ),
                )
            })
    };
    let params = SplitParams {
        lambda: param(&["lambda", "Lambda"])?,
        lambda_root: param(&["lambda_root", "LambdaRoot"])?,
        t_cut: param(&["delta_min", "pt_cut"])?,
    };
    // Bare NaN or infinities anywhere else (fields read or kept).
    for (k, v) in &fields {
        if let Some(t) = non_finite_in(v) {
            return Err(bad(&id, format!("field {k:?} {}", non_finite(t))));
        }
    }
    let truth = match fields.get("truth") {
        None => None,
        Some(t) if t.get() == "null" => None,
        Some(t) => {
            let tree = Tree::from_json_str(t.get()).map_err(|e| bad(&id, format!("truth: {e}")))?;
            tree.validate(leaves.len(), true)
                .map_err(|e| bad(&id, format!("truth: {e}")))?;
            Some(tree)
        }
    };
    obj.remove("id");
    obj.remove("leaves");
    Ok(Jet {
        id,
        leaves,
        params,
        truth,
        extra: obj,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(jet: &str) -> String {
        format!("{{\"meta\": {{}}, \"jets\": [{jet}]}}")
    }

    const GOOD: &str = r#"{"id": "a", "leaves": [[10, 1, 2, 3], [20, 3, 2, 1]],
        "params": {"lambda": 1.5, "lambda_root": 3.0, "delta_min": 16.0, "M_hard": 30}, "truth": [0, 1], "seed": 7}"#;

    #[test]
    fn reads_and_round_trips() {
        let f = JetsFile::parse(&file(GOOD)).unwrap();
        let j = &f.jets[0];
        assert_eq!(j.id, "a");
        assert_eq!(
            j.params,
            SplitParams {
                lambda: 1.5,
                lambda_root: 3.0,
                t_cut: 16.0
            }
        );
        assert_eq!(j.truth, Some(Tree::parse("[0,1]").unwrap()));
        let again = JetsFile::parse(&f.to_json_string()).unwrap();
        assert_eq!(again.jets[0].leaves, j.leaves);
        assert_eq!(again.jets[0].params, j.params);
        assert_eq!(again.jets[0].extra["seed"], 7);
        assert_eq!(again.jets[0].extra["params"]["M_hard"], 30);
    }

    #[test]
    fn errors_name_the_jet() {
        let cases = [
            (
                GOOD.replace("[10, 1, 2, 3]", "[1, 1, 2, 3]"),
                "jet a: leaf 0 is unphysical",
            ),
            (GOOD.replace("[10, 1, 2, 3], ", ""), "jet a: has 1 leaf"),
            (
                GOOD.replace("\"lambda_root\": 3.0, ", ""),
                "missing parameter params.lambda_root",
            ),
            (
                GOOD.replace("\"delta_min\": 16.0", "\"delta_min\": -1"),
                "params.delta_min must be a positive number",
            ),
            (GOOD.replace("[0, 1]", "[0, 2]"), "jet a: truth"),
            (
                GOOD.replace("[20, 3, 2, 1]", "[20, 3, 2]"),
                "leaf 1 is not a 4-momentum",
            ),
        ];
        for (text, needle) in cases {
            let e = JetsFile::parse(&file(&text)).unwrap_err().to_string();
            assert!(e.contains(needle), "{e:?} lacks {needle:?}");
        }
        assert!(
            JetsFile::parse("{\"jets\": []}")
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
        assert!(JetsFile::parse("[1,2]").is_err());
    }
}
