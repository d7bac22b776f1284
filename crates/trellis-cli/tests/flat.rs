//! The flat-trellis CLI contract of issue #4: `trellis flat map|logz|marginals|sample|perturb-map`
//! with the exact JSON field names, and bad input.

use crate::util::s;
use crate::util::*;

fn is_partition(p: &serde_json::Value, n: usize) -> bool {
    let mut seen = vec![false; n];
    for c in p.as_array().unwrap() {
        for i in c.as_array().unwrap() {
            let i = i.as_u64().unwrap() as usize;
            if i >= n || seen[i] {
                return false;
            }
            seen[i] = true;
        }
    }
    seen.iter().all(|&x| x)
}

#[test]
#[allow(clippy::needless_range_loop)]
fn flat_json_contract() {
    let n = 7;
    let d = dir("flat_contract");
    let w = file(&d, "w.csv", &weights_csv(n, 11));
    let base = |cmd: &'static str| vec!["flat", cmd, "--model", "cc", "--weights", s(&w)];
    let mut a = base("map");
    a.extend(["--beta", "2", "--json"]);
    let map = json(&a);
    assert_eq!(keys(&map), ["clusters", "log_energy", "n"]);
    assert!(is_partition(&map["clusters"], n));
    // log_energy = beta * the weight kept inside the MAP clusters.
    let wm = weights(n, 11);
    let kept: f64 = map["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let c: Vec<usize> = c
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap() as usize)
                .collect();
            let mut t = 0.0;
            for (x, &i) in c.iter().enumerate() {
                for &j in &c[x + 1..] {
                    t += wm[i][j];
                }
            }
            t
        })
        .sum();
    assert!((map["log_energy"].as_f64().unwrap() - 2.0 * kept).abs() < 1e-9);

    let mut a = base("logz");
    a.extend(["--beta", "0", "--json"]);
    let z = json(&a);
    assert_eq!(keys(&z), ["log_z", "n"]);
    assert!(
        (z["log_z"].as_f64().unwrap() - 877f64.ln()).abs() < 1e-12,
        "Bell(7) = 877"
    );

    let mut a = base("marginals");
    a.push("--json");
    let m = json(&a);
    assert_eq!(keys(&m), ["clusters", "log_z", "n", "pairwise"]);
    let pw = m["pairwise"].as_array().unwrap();
    assert_eq!(pw.len(), n);
    for i in 0..n {
        assert_eq!(pw[i][i], 1.0);
        for j in 0..n {
            let p = pw[i][j].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&p) && p == pw[j][i].as_f64().unwrap());
        }
    }
    // The clusters holding each point: their marginals sum to 1.
    for i in 0..n as u64 {
        let total: f64 = m["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                c["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x.as_u64() == Some(i))
            })
            .map(|c| c["p"].as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "point {i}: {total}");
    }

    let mut a = base("sample");
    a.extend(["-n", "20", "--seed", "3", "--json"]);
    let smp = json(&a);
    assert_eq!(keys(&smp), ["n", "samples"]);
    assert_eq!(smp["samples"].as_array().unwrap().len(), 20);
    assert!(
        smp["samples"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| is_partition(p, n))
    );
    assert_eq!(json(&a), smp, "same seed, same samples");

    let mut a = base("perturb-map");
    a.extend(["-n", "30", "--seed", "1", "--json"]);
    let pm = json(&a);
    assert_eq!(keys(&pm), ["n", "num_samples", "pairwise"]);
    assert_eq!(pm["num_samples"], 30);
    assert_eq!(json(&a), pm);
}

#[test]
fn flat_points_and_text_output() {
    let d = dir("flat_points");
    let p = file(&d, "p.csv", "x,y\n0,0\n0.1,0\n5,5\n5.1,5\n9,0\n");
    let m = json(&[
        "flat",
        "map",
        "--model",
        "cc",
        "--points",
        s(&p),
        "--similarity",
        "expneg",
        "--center",
        "--json",
    ]);
    assert_eq!(m["clusters"], serde_json::json!([[0, 1], [2, 3], [4]]));
    let text = stdout(&[
        "flat",
        "marginals",
        "--model",
        "cc",
        "--points",
        s(&p),
        "--similarity",
        "expneg",
        "--center",
    ]);
    assert!(
        text.contains("pairwise co-clustering") && text.contains("log Z = "),
        "{text}"
    );
}

#[test]
fn flat_bad_input() {
    let d = dir("flat_bad");
    let w = file(&d, "w.csv", &weights_csv(4, 1));
    fails(
        &[
            "flat",
            "map",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--beta",
            "-2",
        ],
        "beta",
    );
    fails(
        &[
            "flat",
            "map",
            "--model",
            "cc",
            "--weights",
            s(&file(&d, "a.csv", "0,1\n2,0\n")),
        ],
        "not symmetric",
    );
    fails(
        &["flat", "map", "--model", "hcc", "--weights", s(&w)],
        "invalid value",
    );
    fails(&["flat", "map", "--model", "cc"], "required");
    fails(
        &[
            "flat",
            "logz",
            "--model",
            "cc",
            "--weights",
            s(&file(&d, "big.csv", &weights_csv(31, 2))),
        ],
        "at most 30 points",
    );
    fails(
        &[
            "flat",
            "marginals",
            "--model",
            "cc",
            "--weights",
            s(&w),
            "--min-p",
            "2",
        ],
        "between 0 and 1",
    );
}
