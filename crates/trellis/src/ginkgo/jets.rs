//! Jets files: the JSON format of `shared/data/ginkgo` (read and written).
//!
//! ```text
//! { "meta": {...},
//!   "jets": [ { "id": "...", "leaves": [[E, px, py, pz], ...],
//!               "params": {"lambda": 1.5, "lambda_root": 1.5, "delta_min": 16.0, ...},
//!               "truth": [[0, 1], [2, [3, 4]]],            (optional)
//!               "truth_log_likelihood": -31.2, ... }, ...] }
//! ```
//!
//! `params.delta_min` (or its older name `pt_cut`) is the mass-squared cut
//! `t_cut`. Every field this crate does not use is kept and written back.
//! Reading validates every jet and names the jet in each error: at least 2
//! leaves, finite momenta with `E ≥ |p|` (no tachyons), positive rates and cut.

use std::path::Path;

use serde_json::{Map, Value};

use crate::base::tree::Tree;
use crate::error::{Error, ErrorKind, Result};
use crate::ginkgo::likelihood::{SplitParams, mass_squared};

/// Relative tolerance on `E² ≥ |p|²` (rounding of massless particles).
const MASS_TOLERANCE: f64 = 1e-9;

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

    /// The jet as a JSON object in the file format.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::from(self.id.clone()));
        m.insert("N".into(), Value::from(self.leaves.len()));
        m.insert(
            "leaves".into(),
            serde_json::to_value(&self.leaves).expect("finite floats"),
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
        if let Some(t) = &self.truth {
            m.insert("truth".into(), serde_json::to_value(t).expect("tree"));
        }
        for (k, v) in &self.extra {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(m)
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

impl JetsFile {
    /// Reads and validates a jets file.
    pub fn read(path: &Path) -> Result<JetsFile> {
        let text = std::fs::read_to_string(path).map_err(|source| {
            Error::new(ErrorKind::Io {
                path: path.to_path_buf(),
                source,
            })
        })?;
        JetsFile::parse(&text).map_err(|e| match e.kind() {
            ErrorKind::Parse { path: None, detail } => Error::parse(Some(path), detail.clone()),
            _ => e,
        })
    }

    /// Parses and validates the text of a jets file.
    pub fn parse(text: &str) -> Result<JetsFile> {
        let text = quote_non_finite(text);
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| Error::parse(None, format!("not valid JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| Error::parse(None, "expected a JSON object with a \"jets\" list"))?;
        let jets = obj
            .get("jets")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::parse(None, "missing the \"jets\" list"))?;
        if jets.is_empty() {
            return Err(Error::parse(None, "the \"jets\" list is empty"));
        }
        let jets = jets
            .iter()
            .enumerate()
            .map(|(k, j)| parse_jet(k, j))
            .collect::<Result<Vec<_>>>()?;
        Ok(JetsFile {
            meta: obj.get("meta").cloned().unwrap_or(Value::Null),
            jets,
        })
    }

    /// The file as JSON text.
    pub fn to_json_string(&self) -> String {
        let v = serde_json::json!({
            "meta": self.meta,
            "jets": self.jets.iter().map(Jet::to_json).collect::<Vec<_>>(),
        });
        serde_json::to_string(&v).expect("serialisable")
    }
}

/// Python's `json` writes NaN and infinities as the bare tokens `NaN`,
/// `Infinity` and `-Infinity`, which are not JSON. Quoting them (outside
/// string literals) lets the file parse, so that validation can name the jet
/// that holds them instead of failing on the whole file.
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
            let token = ["-Infinity", "Infinity", "NaN"]
                .into_iter()
                .find(|t| rest.starts_with(t));
            if let Some(t) = token {
                out.push('"');
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

fn bad(id: &str, detail: impl std::fmt::Display) -> Error {
    Error::parse(None, format!("jet {id}: {detail}"))
}

fn parse_jet(index: usize, v: &Value) -> Result<Jet> {
    let obj = v
        .as_object()
        .ok_or_else(|| Error::parse(None, format!("jet #{index} is not a JSON object")))?;
    let id = match obj.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(x)) => x.to_string(),
        _ => format!("#{index}"),
    };
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
        let t = mass_squared(&p);
        if p[0] <= 0.0 || t < -MASS_TOLERANCE * p[0] * p[0] {
            return Err(bad(
                &id,
                format!(
                    "leaf {i} is unphysical: E = {} but |p| = {} (a particle needs E > 0 and E >= |p|)",
                    p[0],
                    (p[1] * p[1] + p[2] * p[2] + p[3] * p[3]).sqrt()
                ),
            ));
        }
        leaves.push(p);
    }
    if leaves.len() < 2 {
        return Err(bad(
            &id,
            format!("has {} leaf; a hierarchy needs at least 2", leaves.len()),
        ));
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
                    format!("params.{} must be a positive number, not {v}", names[0]),
                )
            })
    };
    let params = SplitParams {
        lambda: param(&["lambda", "Lambda"])?,
        lambda_root: param(&["lambda_root", "LambdaRoot"])?,
        t_cut: param(&["delta_min", "pt_cut"])?,
    };
    let truth = match obj.get("truth") {
        None | Some(Value::Null) => None,
        Some(t) => {
            let tree = Tree::from_json(t).map_err(|e| bad(&id, format!("truth: {e}")))?;
            tree.validate(leaves.len(), true)
                .map_err(|e| bad(&id, format!("truth: {e}")))?;
            Some(tree)
        }
    };
    let mut extra = obj.clone();
    for k in ["id", "leaves", "truth"] {
        extra.remove(k);
    }
    Ok(Jet {
        id,
        leaves,
        params,
        truth,
        extra,
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
