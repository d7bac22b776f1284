//! Issue 26 in the web app: the exact panel shows the maximum-clade-credibility
//! tree (each cluster with its exact marginal as support) by default and the
//! MAP tree on request (`GET /api/exact?tree=mcc|map`), both of the posterior
//! conditioned on the triplets in force.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use serde_json::{Value, json};
use trellis::ddt::{Strategy, Triplet};
use trellis::posterior::{Need, Posterior};

use super::{config, get, query, start};

/// Points on a line with a gap: `p0..p{k-1}` near 0, the rest near 4, with a
/// small wobble so no two are equal; the rows (x, y) as the server reads them.
fn line(dir: &Path, n: usize) -> (std::path::PathBuf, Vec<Vec<f64>>, Vec<String>) {
    let mut csv = String::from("name,x,y\n");
    let mut rows = Vec::new();
    let mut names = Vec::new();
    for i in 0..n {
        let x = if i < n / 2 {
            0.3 * i as f64
        } else {
            4.0 + 0.3 * i as f64
        };
        let y = 0.1 * ((i * 7) % 5) as f64;
        csv += &format!("p{i},{x},{y}\n");
        rows.push(vec![x, y]);
        names.push(format!("p{i}"));
    }
    let p = dir.join("line.csv");
    std::fs::write(&p, csv).unwrap();
    (p, rows, names)
}

/// Polls `GET path` until `done` holds of it (at most 60 s).
fn until(addr: SocketAddr, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut e = json!(null);
    for _ in 0..1200 {
        e = get(addr, path).1;
        if done(&e) {
            return e;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{path} did not get there: {e}");
}

/// The non-trivial clusters of a JSON tree (2 to n-1 leaves, as sorted point
/// indices) with their `"p"`.
fn clades(
    v: &Value,
    names: &[String],
    n: usize,
    out: &mut BTreeMap<Vec<usize>, f64>,
) -> Vec<usize> {
    match v.get("children") {
        None => vec![
            names
                .iter()
                .position(|x| x == v["name"].as_str().unwrap())
                .unwrap(),
        ],
        Some(kids) => {
            let kids = kids.as_array().unwrap();
            assert_eq!(kids.len(), 2, "binary: {v}");
            let mut all: Vec<usize> = kids.iter().flat_map(|k| clades(k, names, n, out)).collect();
            all.sort_unstable();
            if all.len() < n {
                out.insert(
                    all.clone(),
                    v["p"].as_f64().expect("a marginal on every cluster"),
                );
            }
            all
        }
    }
}

/// The library's posterior of the server's recipe under `triplets`.
fn library(rows: &[Vec<f64>], triplets: &[Triplet]) -> Posterior {
    let weights =
        trellis::models::recipe_weights(&trellis::Matrix::from_rows(rows.to_vec()).unwrap())
            .unwrap();
    let model = trellis::Hcc::new(&weights, trellis::models::RECIPE_BETA).unwrap();
    let options = trellis::Options::default();
    if triplets.is_empty() {
        Posterior::dense(model, Need::All, &options).unwrap()
    } else {
        let c = trellis::constraints::Constrained::new(model, triplets.to_vec()).unwrap();
        Posterior::dense(c, Need::All, &options).unwrap()
    }
}

fn close(a: &BTreeMap<Vec<usize>, f64>, b: &BTreeMap<Vec<usize>, f64>) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, p) in a {
        assert!((p - b[k]).abs() < 1e-9, "{k:?}: {p} vs {}", b[k]);
    }
}

#[test]
fn issue26_the_exact_panel_shows_the_mcc_tree_of_the_conditioned_posterior() {
    let dir = tempfile::tempdir().unwrap();
    let n = 10;
    let (points, rows, names) = line(dir.path(), n);
    let mut c = config(dir.path(), points);
    c.strategy = Strategy::Smart;
    let server = start(&c);
    let a = server.addr;
    let mut triplets: Vec<Triplet> = Vec::new();
    for step in 0..2 {
        let k = triplets.len();
        let e = until(a, "/api/exact", |e| {
            e["status"] == "ready" && e["triplets_used"] == k
        });
        assert_eq!(e["tree"], "mcc", "the MCC tree by default");
        let post = library(&rows, &triplets);
        let options = trellis::Options::default();
        let mcc = post.mcc_tree(&options).unwrap();
        let want: BTreeMap<Vec<usize>, f64> = mcc
            .clades()
            .iter()
            .map(|c| (c.members.clone(), c.p))
            .collect();
        let mut got = BTreeMap::new();
        clades(&e["summary"], &names, n, &mut got);
        close(&got, &want);
        let lc = e["log_credibility"].as_f64().unwrap();
        assert!((lc - mcc.log_credibility().unwrap()).abs() < 1e-9, "{lc}");
        // The MCC tree's credibility is at least the MAP tree's (it is the
        // maximum over all trees).
        let mut map = BTreeMap::new();
        clades(&e["map"], &names, n, &mut map);
        let map_credibility: f64 = map.values().map(|p| p.ln()).sum();
        assert!(lc >= map_credibility - 1e-9, "{lc} < {map_credibility}");
        // The MAP tree on request: the library's MAP, with its marginals.
        let m = get(a, "/api/exact?tree=map").1;
        assert_eq!(m["tree"], "map");
        assert_eq!(m["summary"], e["map"]);
        assert_eq!(m["map"], e["map"]);
        let map_tree = post.map().unwrap().tree;
        let want_map: Vec<Vec<usize>> = map_tree
            .clusters()
            .into_iter()
            .filter(|c| c.len() < n)
            .collect();
        let mut want_map = want_map;
        want_map.sort();
        assert_eq!(map.keys().cloned().collect::<Vec<_>>(), want_map);
        let ps = post.support(&want_map, &options).unwrap();
        for (c, p) in want_map.iter().zip(ps) {
            assert!((map[c] - p).abs() < 1e-9);
        }
        assert_eq!(get(a, "/api/exact?tree=mcc").1, e);
        if step == 0 {
            // On these points the MAP tree peels points off one by one inside
            // each group; the MCC tree pairs them: the two differ.
            assert_ne!(
                got.keys().collect::<Vec<_>>(),
                map.keys().collect::<Vec<_>>()
            );
            assert!(lc > map_credibility + 1.0, "{lc} vs {map_credibility}");
        }
        if step == 0 {
            // A triplet the MCC tree breaks: p0 with the far group, apart from p1.
            let t = Triplet::new(0, n - 1, 1).unwrap();
            let q = query(a);
            let (status, r) = super::post(
                a,
                "/api/answer",
                &json!({ "id": q["id"], "triplet": ["p0", names[n - 1], "p1"] }),
            );
            assert_eq!(status, 200, "{r}");
            triplets.push(t);
        }
    }
    for bad in ["/api/exact?tree=consensus", "/api/exact?tree="] {
        let (status, r) = get(a, bad);
        assert_eq!(status, 400, "{bad}: {r}");
        assert!(r["error"].as_str().unwrap().contains("mcc"), "{r}");
    }
    server.stop().unwrap();
}
