//! Issue 22, "Keep it found": a committed sweep of hostile invocations of the
//! `trellis` command, generated as classes × variants × commands. Every
//! invocation gets a verdict:
//!
//! - a clear refusal: exit code 2, a non-empty message on stderr that starts
//!   with `error:` (and names what is wrong where the case says so), nothing
//!   on stdout, no panic text;
//! - or a correct answer: checked against brute force over every tree or
//!   partition of a few points, a closed form (`(2n-3)!!`, Bell numbers, the
//!   hcc cost of 2 and 3 points by hand), or the same command on an
//!   equivalent clean input.
//!
//! Inputs are tiny (N ≤ 6), so the sweep takes seconds. The four bugs its
//! first run found (a CSV name in quotes, `flat map`'s beta range, samples
//! past `--time-limit`, JSON lists in `read_tree`) are fixed and are cases
//! here; the summary printed at the end counts the cases of every class.
// Commands and sizes are indices into tables of expectations.
#![allow(clippy::needless_range_loop)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{dir, file, log_sum_exp, stdout, weights, weights_csv};

/// Longest any one invocation may take before it counts as a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

/// What one invocation did.
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A verdict: `Err` says what is wrong with the outcome.
type Verdict = Result<(), String>;

/// The sweep: its directory, the count of cases per class and the failures.
struct Sweep {
    dir: PathBuf,
    counts: BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

fn a(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn shell(args: &[String]) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|s| {
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+".contains(c))
            {
                s.clone()
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        })
        .collect();
    format!("trellis {}", quoted.join(" "))
}

fn cut(s: &str) -> String {
    if s.len() <= 400 {
        s.to_string()
    } else {
        let mut k = 400;
        while !s.is_char_boundary(k) {
            k -= 1;
        }
        format!("{}...", &s[..k])
    }
}

impl Sweep {
    fn new(name: &str) -> Sweep {
        Sweep {
            dir: dir(name),
            counts: BTreeMap::new(),
            failures: Vec::new(),
        }
    }

    /// Writes a file of the sweep and returns its path as a string.
    fn file(&self, name: &str, text: &str) -> String {
        path_str(&file(&self.dir, name, text))
    }

    fn bytes(&self, name: &str, data: &[u8]) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, data).unwrap();
        path_str(&p)
    }

    /// Runs `trellis args` with no standard input and a time limit.
    fn exec(&self, args: &[String]) -> Outcome {
        let (out, err) = (self.dir.join("stdout.txt"), self.dir.join("stderr.txt"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_trellis"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .spawn()
            .expect("the trellis binary runs");
        let deadline = Instant::now() + TIMEOUT;
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break Some(-1);
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        Outcome {
            code,
            stdout: String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned(),
            stderr: String::from_utf8_lossy(&std::fs::read(&err).unwrap()).into_owned(),
        }
    }

    /// One case of `class`: runs it, records a failed verdict, returns the outcome.
    fn case(
        &mut self,
        class: &'static str,
        args: Vec<String>,
        verdict: impl FnOnce(&Outcome) -> Verdict,
    ) -> Outcome {
        *self.counts.entry(class).or_default() += 1;
        let o = self.exec(&args);
        let result = if o.code == Some(-1) {
            Err(format!("no answer within {TIMEOUT:?}"))
        } else {
            sane(&o).and_then(|()| verdict(&o))
        };
        if let Err(e) = result {
            self.failures.push(format!(
                "[{class}] {}\n    {e}\n    exit {:?}; stdout: {:?}\n    stderr: {:?}",
                shell(&args),
                o.code,
                cut(&o.stdout),
                cut(&o.stderr)
            ));
        }
        o
    }

    /// A refusal naming every one of `needles` (case-insensitive).
    fn refused(&mut self, class: &'static str, args: Vec<String>, needles: &[&str]) {
        self.case(class, args, |o| refusal(o, needles));
    }

    /// A JSON answer passing `check`; returns it (`Null` if there is none).
    fn answered(
        &mut self,
        class: &'static str,
        args: Vec<String>,
        check: impl FnOnce(&Value) -> Verdict,
    ) -> Value {
        let mut value = Value::Null;
        self.case(class, args, |o| {
            value = answer(o)?;
            check(&value)
        });
        value
    }

    /// Prints the summary and fails with every failed verdict.
    fn finish(self, at_least: usize) {
        let total: usize = self.counts.values().sum();
        eprintln!("hostile sweep: {total} invocations");
        for (class, k) in &self.counts {
            eprintln!("  {class:<22} {k:>4}");
        }
        assert!(
            self.failures.is_empty(),
            "{} of {total} hostile invocations failed their verdict:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
        assert!(
            total >= at_least,
            "only {total} invocations, expected at least {at_least}"
        );
    }
}

fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// What every outcome must satisfy: a known exit code, no panic, no crash.
fn sane(o: &Outcome) -> Verdict {
    match o.code {
        Some(0..=2) => {}
        other => return Err(format!("exit code {other:?}: only 0, 1 and 2 are allowed")),
    }
    for bad in ["panicked", "RUST_BACKTRACE", "stack overflow", "SIGSEGV"] {
        if o.stderr.contains(bad) || o.stdout.contains(bad) {
            return Err(format!("panic text {bad:?}"));
        }
    }
    Ok(())
}

/// Exit 2, an `error:` message naming each needle, nothing on stdout.
fn refusal(o: &Outcome, needles: &[&str]) -> Verdict {
    if o.code != Some(2) {
        return Err(format!("exit {:?}, expected a refusal (2)", o.code));
    }
    if !o.stdout.is_empty() {
        return Err("a refusal printed on stdout".into());
    }
    let message = o.stderr.trim();
    if !message.starts_with("error:") || message.len() <= "error:".len() + 1 {
        return Err("stderr is not an `error: ...` message".into());
    }
    let lower = message.to_lowercase();
    for needle in needles {
        if !lower.contains(&needle.to_lowercase()) {
            return Err(format!("the message does not name {needle:?}"));
        }
    }
    Ok(())
}

/// Exit 0 and one JSON value on stdout (one line per value).
fn answer(o: &Outcome) -> Result<Value, String> {
    if o.code != Some(0) {
        return Err(format!("exit {:?}, expected an answer (0)", o.code));
    }
    serde_json::from_str(o.stdout.trim()).map_err(|e| format!("stdout is not JSON: {e}"))
}

/// Every number of an answer finite and no `null` (a NaN prints as `null`).
fn finite(v: &Value) -> Verdict {
    match v {
        Value::Null => Err("a null in the answer (NaN or infinity?)".into()),
        Value::Number(x) if !x.as_f64().is_some_and(f64::is_finite) => {
            Err(format!("a non-finite number {x}"))
        }
        Value::Array(xs) => xs.iter().try_for_each(finite),
        Value::Object(m) => m.values().try_for_each(finite),
        _ => Ok(()),
    }
}

/// Either a refusal or an answer whose numbers are finite: for extreme
/// values that some commands accept and some refuse.
fn refused_or_finite(o: &Outcome) -> Verdict {
    match o.code {
        Some(2) => refusal(o, &[]),
        _ => finite(&answer(o)?),
    }
}

fn close(a: f64, b: f64) -> bool {
    crate::util::close(a, b, 1e-9)
}

fn expect_close(what: &str, got: Option<f64>, want: f64) -> Verdict {
    match got {
        Some(g) if close(g, want) => Ok(()),
        _ => Err(format!("{what} = {got:?}, expected {want}")),
    }
}

// ---------------------------------------------------------------------------
// The commands and the brute force.

/// The commands that read a weight matrix or points: a label and the
/// arguments before the data flags (`score` gets a tree as well).
const COMMANDS: [(&str, &[&str]); 15] = [
    ("map", &["map", "--model", "hcc", "--json"]),
    ("logz", &["logz", "--model", "hcc", "--json"]),
    ("marginals", &["marginals", "--model", "hcc", "--json"]),
    ("sample", &["sample", "-n", "2", "--model", "hcc", "--json"]),
    ("infer", &["infer", "--model", "hcc", "--json"]),
    ("score", &["score", "--model", "hcc", "--json"]),
    ("greedy", &["greedy", "--model", "hcc", "--json"]),
    ("beam", &["beam", "--model", "hcc", "--json"]),
    ("astar", &["astar", "--model", "hcc", "--json"]),
    (
        "astar --approx",
        &["astar", "--approx", "--model", "hcc", "--json"],
    ),
    ("linkage", &["linkage", "--method", "average", "--json"]),
    ("flat map", &["flat", "map", "--model", "cc", "--json"]),
    ("flat logz", &["flat", "logz", "--model", "cc", "--json"]),
    (
        "flat marginals",
        &["flat", "marginals", "--model", "cc", "--json"],
    ),
    (
        "flat sample",
        &["flat", "sample", "-n", "2", "--model", "cc", "--json"],
    ),
];

/// The left comb over `n` points as a nested JSON list (`[[0,1],2]`).
fn comb(n: usize) -> String {
    (1..n).fold("0".to_string(), |t, i| format!("[{t},{i}]"))
}

/// Command `k` of [`COMMANDS`] on `data` (flags), `n` points for `score`.
fn command(k: usize, data: &[&str], n: usize) -> Vec<String> {
    let mut args = a(COMMANDS[k].1);
    args.extend(a(data));
    if COMMANDS[k].0 == "score" {
        args.extend(["--tree".to_string(), comb(n)]);
    }
    args
}

/// Every binary tree over `0..n`, as nested JSON lists.
fn all_trees(n: usize) -> Vec<Value> {
    crate::util::all_trees(n)
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect()
}

/// Every partition of `0..n`, its clusters as bit masks.
fn partitions(n: usize) -> Vec<Vec<u32>> {
    crate::util::partitions(n)
        .iter()
        .map(|p| {
            p.iter()
                .map(|c| c.iter().fold(0, |m, &i| m | 1 << i))
                .collect()
        })
        .collect()
}

/// The points under a tree node, as a bit mask.
fn mask(t: &Value) -> u32 {
    match t {
        Value::Array(c) => mask(&c[0]) | mask(&c[1]),
        x => 1 << x.as_u64().unwrap(),
    }
}

fn members(m: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |i| m & (1 << i) != 0)
}

/// The hcc cost of a tree from the weights, as the model docs define it:
/// at every split `L | R`, the positive weights across plus the negative
/// weights (as magnitudes) inside `L` and inside `R`.
fn hcc_cost(t: &Value, w: &[Vec<f64>]) -> f64 {
    let Value::Array(c) = t else { return 0.0 };
    let (l, r) = (mask(&c[0]), mask(&c[1]));
    let mut cost = 0.0;
    for i in members(l) {
        for j in members(r) {
            cost += w[i][j].max(0.0);
        }
    }
    for side in [l, r] {
        for i in members(side) {
            for j in members(side).filter(|&j| j > i) {
                cost += (-w[i][j]).max(0.0);
            }
        }
    }
    cost + hcc_cost(&c[0], w) + hcc_cost(&c[1], w)
}

/// The clusters of a tree other than its root and its leaves.
fn inner_clusters(t: &Value, root: bool, out: &mut Vec<u32>) {
    if let Value::Array(c) = t {
        if !root {
            out.push(mask(t));
        }
        inner_clusters(&c[0], false, out);
        inner_clusters(&c[1], false, out);
    }
}

/// `(2n-3)!!` in decimal, for any `n ≥ 1` (1 for `n ≤ 2`).
fn double_factorial_decimal(n: usize) -> String {
    // Little-endian base-10^9 digits.
    let mut digits: Vec<u64> = vec![1];
    let mut k = 3;
    while k + 3 <= 2 * n {
        let mut carry = 0;
        for d in digits.iter_mut() {
            let x = *d * k as u64 + carry;
            *d = x % 1_000_000_000;
            carry = x / 1_000_000_000;
        }
        if carry > 0 {
            digits.push(carry);
        }
        k += 2;
    }
    let mut s = digits.last().unwrap().to_string();
    for d in digits.iter().rev().skip(1) {
        s += &format!("{d:09}");
    }
    s
}

/// Clusters `[{"members": [..], "p": ..}, ..]` of a marginals answer, by mask.
fn cluster_map(v: &Value) -> Result<BTreeMap<u32, f64>, String> {
    let list = v["clusters"].as_array().ok_or("no \"clusters\" list")?;
    let mut out = BTreeMap::new();
    for c in list {
        let m = c["members"]
            .as_array()
            .ok_or("a cluster without members")?
            .iter()
            .map(|i| 1u32 << i.as_u64().unwrap_or(31))
            .fold(0, |a, b| a | b);
        out.insert(m, c["p"].as_f64().ok_or("a cluster without p")?);
    }
    Ok(out)
}

/// The brute-force cluster probabilities against the answer's, both ways.
fn same_marginals(got: &BTreeMap<u32, f64>, want: &BTreeMap<u32, f64>) -> Verdict {
    for (m, p) in want {
        let g = got.get(m).copied().unwrap_or(0.0);
        if (g - p).abs() > 1e-9 {
            return Err(format!("P(cluster {m:#b}) = {g}, brute force {p}"));
        }
    }
    for (m, g) in got {
        if !want.contains_key(m) && g.abs() > 1e-12 {
            return Err(format!("cluster {m:#b} has p = {g}, brute force 0"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The classes.

/// Malformed numbers and shapes in weight matrices, across every command.
fn malformed_weights(s: &mut Sweep) {
    let clean = "0,1,-2\n1,0,3\n-2,3,0\n";
    let cases: [(&str, &str, &[&str]); 18] = [
        ("empty_cell", "0,1,\n1,0,3\n,3,0\n", &["line 1", "empty"]),
        (
            "nan",
            "0,nan,-2\nnan,0,3\n-2,3,0\n",
            &["line 1", "not finite"],
        ),
        (
            "NaN",
            "0,1,NaN\n1,0,3\nNaN,3,0\n",
            &["line 1", "not finite"],
        ),
        (
            "inf",
            "0,1,-2\n1,0,inf\n-2,inf,0\n",
            &["line 2", "not finite"],
        ),
        ("neg_inf", "0,-inf,-2\n-inf,0,3\n-2,3,0\n", &["not finite"]),
        ("1e400", "0,1e400,-2\n1e400,0,3\n-2,3,0\n", &["not finite"]),
        (
            "hex",
            "0,0x10,-2\n0x10,0,3\n-2,3,0\n",
            &["0x10", "not a number"],
        ),
        (
            "double_comma",
            "0,1,,3\n1,0,3,1\n,3,0,1\n3,1,1,0\n",
            &["line 1", "empty"],
        ),
        ("ragged", "0,1,-2\n1,0\n-2,3,0\n", &["line 2", "fields"]),
        ("non_square", "0,1,-2\n1,0,3\n", &["square"]),
        ("asymmetric", "0,1,-2\n5,0,3\n-2,3,0\n", &["symmetric"]),
        ("single_row", "0,1,-2\n", &["square"]),
        ("empty_file", "", &["no data rows"]),
        ("blank_lines", "\n  \n\n", &["no data rows"]),
        ("bom_only", "\u{feff}", &["no data rows"]),
        ("only_header", "a,b,c\n", &["not a number"]),
        (
            "unterminated_quote",
            "0,1,-2\n1,0,\"3\n-2,3,0\n",
            &["line 2", "never closed"],
        ),
        ("words", "0,one,-2\none,0,3\n-2,3,0\n", &["\"one\""]),
    ];
    for (name, text, needles) in cases {
        let p = s.file(&format!("w_{name}.csv"), text);
        for k in 0..COMMANDS.len() {
            s.refused(
                "malformed weights",
                command(k, &["--weights", &p], 3),
                needles,
            );
        }
    }
    // A byte-order mark and CRLF line ends: the same answers as the clean file.
    let clean_p = s.file("w_clean.csv", clean);
    let bom = s.file(
        "w_bom_crlf.csv",
        &format!("\u{feff}{}", clean.replace('\n', "\r\n")),
    );
    // Quoted numbers and spaces around them read as the numbers.
    let quoted = s.file("w_quoted.csv", "\"0\", 1 ,\"-2\"\r\n1,0,\"3\"\n-2, 3,0\n\n");
    for k in 0..COMMANDS.len() {
        let want = s.exec(&command(k, &["--weights", &clean_p], 3));
        let want = answer(&want).expect("the clean file is answered");
        for p in [&bom, &quoted] {
            s.answered("malformed weights", command(k, &["--weights", p], 3), |v| {
                if *v == want {
                    Ok(())
                } else {
                    Err(format!("differs from the clean file's {want}"))
                }
            });
        }
    }
}

/// Malformed points files (a names column, a header), across every command.
fn malformed_points(s: &mut Sweep) {
    let row = |name: &str, x: &str| format!("{name},{x},0.2\n");
    let good = |names: [&str; 3]| {
        format!(
            "name,x,y\n{}{}{}",
            row(names[0], "1"),
            row(names[1], "0.1"),
            row(names[2], "-1")
        )
    };
    let cases: [(&str, String, &[&str]); 11] = [
        (
            "nan",
            "name,x,y\na,nan,1\nb,1,0\nc,0,1\n".into(),
            &["line 2", "not finite"],
        ),
        (
            "inf",
            "name,x,y\na,1,1\nb,inf,0\nc,0,1\n".into(),
            &["line 3", "not finite"],
        ),
        (
            "empty_cell",
            "name,x,y\na,1,1\nb,,0\nc,0,1\n".into(),
            &["line 3", "empty"],
        ),
        (
            "ragged",
            "name,x,y\na,1,1\nb,1\nc,0,1\n".into(),
            &["line 3", "fields"],
        ),
        ("only_header", "name,x,y\n".into(), &["no data rows"]),
        (
            "hex",
            "name,x,y\na,0x10,1\nb,1,0\nc,0,1\n".into(),
            &["0x10", "not a number"],
        ),
        (
            "duplicate_name",
            "name,x,y\na,1,1\nb,1,0\na,0,1\n".into(),
            &["line 4", "\"a\""],
        ),
        (
            "empty_name",
            "name,x,y\na,1,1\n,1,0\nc,0,1\n".into(),
            &["line 3", "name is empty"],
        ),
        (
            "unterminated_name",
            "name,x,y\n\"a,1,1\nb,1,0\nc,0,1\n".into(),
            &["line 2", "never closed"],
        ),
        ("names_only", "name\na\nb\nc\n".into(), &["no numbers"]),
        (
            "1e400",
            "name,x,y\na,1,1\nb,1,1e400\nc,0,1\n".into(),
            &["line 3", "not finite"],
        ),
    ];
    for (name, text, needles) in &cases {
        let p = s.file(&format!("p_{name}.csv"), text);
        for k in 0..COMMANDS.len() {
            s.refused(
                "malformed points",
                command(k, &["--points", &p], 3),
                needles,
            );
        }
    }
    // A name whose value is in double quotes, written `"""big"""` as RFC
    // 4180 says, keeps its quotes (as Python's `csv` reads it).
    let quoted = s.file("p_quoted_name.csv", &good(["\"\"\"big\"\"\"", "b", "c"]));
    s.answered(
        "malformed points",
        a(&["logz", "--model", "hcc", "--json", "--points", &quoted]),
        |v| {
            if v["names"] == serde_json::json!(["\"big\"", "b", "c"]) {
                Ok(())
            } else {
                Err(format!("names {}", v["names"]))
            }
        },
    );
    // A data row whose name starts with '#' is a row (no comment syntax): the
    // answer of the same file with the name "b", with "#b" among the names.
    let plain = s.file("p_plain.csv", &good(["a", "b", "c"]));
    let hash = s.file("p_hash.csv", &good(["a", "#b", "c"]));
    // A byte-order mark, CRLF, and quoted names holding commas and quotes.
    let odd = s.file(
        "p_odd.csv",
        &format!(
            "\u{feff}{}",
            good(["a", "\"Smith, J.\"", "\"the \"\"big\"\" one\""]).replace('\n', "\r\n")
        ),
    );
    for k in 0..COMMANDS.len() {
        let want = s.exec(&command(k, &["--points", &plain], 3));
        let mut want = answer(&want).expect("the plain file is answered");
        for (p, second) in [(&hash, "#b"), (&odd, "Smith, J.")] {
            want["names"] = serde_json::json!(["a", second, "c"]);
            if p == &odd {
                want["names"][2] = "the \"big\" one".into();
            }
            let want = want.clone();
            s.answered("malformed points", command(k, &["--points", p], 3), |v| {
                if v["n"] != 3 {
                    return Err(format!("n = {}, expected 3 rows", v["n"]));
                }
                if *v == want {
                    Ok(())
                } else {
                    Err(format!("expected {want}"))
                }
            });
        }
    }
}

/// Flag values: non-finite, negative, zero, beyond the type, and extremes
/// that parse (accepted with a finite answer, or refused: never anything else).
fn bad_flags(s: &mut Sweep) {
    let w = s.file("f_w.csv", "0,1,-2\n1,0,3\n-2,3,0\n");
    let data = ["--weights", w.as_str()];
    for k in 0..COMMANDS.len() {
        for beta in ["nan", "inf", "-inf", "1e400", "NaN", "-1"] {
            let mut args = command(k, &data, 3);
            args.push(format!("--beta={beta}"));
            s.refused("bad flag values", args, &["--beta"]);
        }
        for beta in [
            "1e-300",
            "1e300",
            "-5",
            "0",
            "5e-324",
            "1.7976931348623157e308",
        ] {
            let mut args = command(k, &data, 3);
            args.push(format!("--beta={beta}"));
            s.case("bad flag values", args, refused_or_finite);
        }
        for memory in ["0", "-1", "nan", "inf", "-0"] {
            let mut args = command(k, &data, 3);
            args.push(format!("--max-memory={memory}"));
            s.refused("bad flag values", args, &["--max-memory"]);
        }
        for limit in ["-1", "nan", "inf", "-inf"] {
            let mut args = command(k, &data, 3);
            args.push(format!("--time-limit={limit}"));
            s.refused("bad flag values", args, &["--time-limit"]);
        }
        for threads in ["0", "257", "abc"] {
            let mut args = vec![format!("--threads={threads}")];
            args.extend(command(k, &data, 3));
            s.refused("bad flag values", args, &["--threads"]);
        }
    }
    // Sample counts.
    for sample in [
        &["sample", "--model", "hcc"][..],
        &["flat", "sample", "--model", "cc"],
    ] {
        let mut args = a(sample);
        args.extend(a(&["--weights", &w, "--json", "-n", "0"]));
        s.answered("bad flag values", args, |v| {
            if v["samples"] == serde_json::json!([]) && v["n"] == 3 {
                Ok(())
            } else {
                Err("expected no samples".into())
            }
        });
        for n in [
            "-1",
            "2.5",
            "1e3",
            "18446744073709551616",
            "99999999999999999999",
            "",
        ] {
            let mut args = a(sample);
            args.extend(a(&["--weights", &w, "--json"]));
            args.push(format!("--num-samples={n}"));
            s.refused("bad flag values", args, &["--num-samples"]);
        }
    }
    // `--time-limit` covers the drawing of samples too: a count that would
    // never end stops at the limit with exit 2 and says how far it got.
    s.case(
        "bad flag values",
        a(&[
            "sample",
            "--model",
            "hcc",
            "--weights",
            &w,
            "--json",
            "-n",
            "18446744073709551615",
            "--time-limit",
            "0.2",
        ]),
        |o| {
            if o.code == Some(2) && o.stderr.contains("--time-limit was reached after") {
                Ok(())
            } else {
                Err("expected exit 2 at the time limit".into())
            }
        },
    );
    let approx = |extra: &[&str]| {
        let mut args = a(&[
            "astar",
            "--approx",
            "--model",
            "hcc",
            "--weights",
            &w,
            "--json",
        ]);
        args.extend(a(extra));
        args
    };
    for k in ["0", "-1", "abc"] {
        s.refused(
            "bad flag values",
            approx(&[&format!("--top-k={k}")]),
            &["--top-k"],
        );
    }
    s.refused(
        "bad flag values",
        a(&["astar", "--model", "hcc", "--weights", &w, "--top-k", "2"]),
        &["--approx"],
    );
    for weight in ["0", "-1", "nan", "inf", "-0"] {
        s.refused(
            "bad flag values",
            approx(&[&format!("--weight={weight}")]),
            &["--weight"],
        );
    }
    for weight in ["1e308", "1.7976931348623157e308"] {
        s.refused(
            "bad flag values",
            approx(&[&format!("--weight={weight}")]),
            &["overflows"],
        );
    }
    for weight in ["1e-300", "1e300"] {
        s.case(
            "bad flag values",
            approx(&[&format!("--weight={weight}")]),
            refused_or_finite,
        );
    }
    for flag in ["--rounds=0", "--beam-width=0"] {
        let name = flag.split('=').next().unwrap();
        s.refused("bad flag values", approx(&[flag]), &[name]);
    }
    for p in ["2", "-0.5", "nan", "1.0000001"] {
        for cmd in [
            &["marginals", "--model", "hcc"][..],
            &["infer", "--model", "hcc"],
            &["flat", "marginals", "--model", "cc"],
        ] {
            let mut args = a(cmd);
            args.extend(a(&["--weights", &w, "--json"]));
            args.push(format!("--min-p={p}"));
            s.refused("bad flag values", args, &["--min-p"]);
        }
    }
    s.refused(
        "bad flag values",
        a(&["beam", "--model", "hcc", "--weights", &w, "--width", "0"]),
        &["--width"],
    );
    // Point-file flags.
    let pts = s.file("f_points.csv", "name,x,y\na,1,0.2\nb,0.1,1\nc,-1,0.3\n");
    for k in [0, 1, 11] {
        for gamma in ["nan", "inf", "-1", "0"] {
            let mut args = command(k, &["--points", &pts, "--similarity", "rbf"], 3);
            args.push(format!("--gamma={gamma}"));
            s.refused("bad flag values", args, &["gamma"]);
        }
        for column in ["5", "-1", "abc"] {
            let mut args = command(k, &["--points", &pts], 3);
            args.push(format!("--names-column={column}"));
            s.refused("bad flag values", args, &["column"]);
        }
    }
}

/// Flags that cannot go together, refused with exit 2.
fn conflicts(s: &mut Sweep, jets: &str) {
    let w = s.file("c_w.csv", "0,1,-2\n1,0,3\n-2,3,0\n");
    let per_jet = "with --jets the output is one json line per jet";
    for cmd in [
        &["map", "--model", "ginkgo"][..],
        &["sample", "-n", "2", "--model", "ginkgo"],
        &["infer", "--model", "ginkgo"],
        &["greedy", "--model", "ginkgo"],
        &["beam", "--model", "ginkgo"],
        &["astar", "--model", "ginkgo"],
        &["astar", "--approx", "--model", "ginkgo"],
        &["linkage", "--method", "average", "--model", "ginkgo"],
    ] {
        let mut args = a(cmd);
        args.extend(a(&["--jets", jets, "--newick"]));
        s.refused("conflicting flags", args, &[per_jet]);
        let mut args = a(cmd);
        args.extend(a(&["--jets", jets, "--linkage-csv"]));
        s.refused("conflicting flags", args, &["--linkage-csv"]);
    }
    s.refused(
        "conflicting flags",
        a(&[
            "map",
            "--model",
            "ginkgo",
            "--jets",
            jets,
            "--newick",
            "--support",
        ]),
        &["--jets"],
    );
    s.refused(
        "conflicting flags",
        a(&[
            "map",
            "--model",
            "hcc",
            "--weights",
            &w,
            "--json",
            "--support",
        ]),
        &["--json", "--support"],
    );
    s.refused(
        "conflicting flags",
        a(&["map", "--model", "hcc", "--weights", &w, "--support"]),
        &["--newick"],
    );
    for cmd in [
        &["map", "--model", "hcc"][..],
        &["greedy", "--model", "hcc"],
        &["beam", "--model", "hcc"],
        &["astar", "--model", "hcc"],
        &["astar", "--approx", "--model", "hcc"],
        &["sample", "-n", "2", "--model", "hcc"],
        &["linkage", "--method", "average"],
    ] {
        for pair in [
            ["--json", "--linkage"],
            ["--json", "--linkage-csv"],
            ["--linkage", "--newick"],
            ["--linkage-csv", "--newick"],
            ["--json", "--newick"],
            ["--linkage", "--linkage-csv"],
        ] {
            let mut args = a(cmd);
            args.extend(a(&["--weights", &w]));
            args.extend(a(&pair));
            s.refused("conflicting flags", args, &pair);
        }
    }
    // Two inputs at once, or none.
    for k in 0..COMMANDS.len() {
        let mut args = command(k, &["--weights", &w, "--points", &w], 3);
        s.refused("conflicting flags", args.clone(), &["cannot be used with"]);
        args.retain(|x| x != "--weights" && x != "--points" && x != &w);
        s.refused("conflicting flags", args, &["required"]);
    }
}

/// Newick with the points' names: our own Newick scores as the tree it
/// prints; a label that is not a name is refused naming it.
fn names(s: &mut Sweep) {
    for n in 3..=6 {
        for seed in 1..=2u64 {
            let w = weights(n, seed);
            let mut text = String::from("name,x,y\n");
            for i in 0..n {
                // Digits in the reverse order of the rows.
                text += &format!(
                    "{},{},{}\n",
                    n - 1 - i,
                    1.5 + w[i][(i + 1) % n],
                    w[i][(i + 2) % n] - 0.25
                );
            }
            let p = s.file(&format!("n_digits_{n}_{seed}.csv"), &text);
            let data = ["--points", p.as_str(), "--center"];
            for cmd in [
                &["map", "--model", "hcc"][..],
                &["infer", "--model", "hcc"],
                &["greedy", "--model", "hcc"],
                &["beam", "--model", "hcc"],
                &["astar", "--model", "hcc"],
                &["astar", "--approx", "--model", "hcc"],
                &["sample", "-n", "1", "--seed", "7", "--model", "hcc"],
                &["linkage", "--method", "average"],
            ] {
                let with = |flag: &str| {
                    let mut args = a(cmd);
                    args.extend(a(&data));
                    args.push(flag.to_string());
                    args
                };
                let direct = s.answered("names", with("--json"), |v| {
                    if v["names"].as_array().map(Vec::len) == Some(n) {
                        Ok(())
                    } else {
                        Err("expected the points' names".into())
                    }
                });
                let newick = s.case("names", with("--newick"), |o| {
                    if o.code == Some(0) && o.stdout.trim_end().ends_with(';') {
                        Ok(())
                    } else {
                        Err("expected Newick".into())
                    }
                });
                let mut tree = direct["tree"].clone();
                if tree.is_null() {
                    tree = direct["map"]["tree"].clone();
                }
                if tree.is_null() {
                    tree = direct["samples"][0].clone();
                }
                let cost = direct["cost"].as_f64().or(direct["map"]["cost"].as_f64());
                let mut args = a(&["score", "--model", "hcc"]);
                args.extend(a(&data));
                args.extend(a(&["--json", "--tree", newick.stdout.trim()]));
                s.answered("names", args, |v| {
                    if v["tree"] != tree {
                        return Err(format!(
                            "tree {}, the command's --json says {tree}",
                            v["tree"]
                        ));
                    }
                    match cost {
                        Some(c) => expect_close("cost", v["cost"].as_f64(), c),
                        None => Ok(()),
                    }
                });
            }
        }
    }
    // Labels that are not names, on every reader of trees.
    let text = "name,x,y\n3,1,0.2\n2,0.1,1\n1,-1,0.3\n0,0.5,-0.7\n";
    let p = s.file("n_digits.csv", text);
    let readers: [&[&str]; 4] = [
        &["score", "--model", "hcc", "--json", "--tree"],
        &["marginals", "--model", "hcc", "--json", "--subtree"],
        &[
            "flat", "map", "--model", "cc", "--json", "--sparse", "tree", "--tree",
        ],
        &[
            "flat", "logz", "--model", "cc", "--json", "--sparse", "tree", "--tree",
        ],
    ];
    for reader in readers {
        for (tree, named) in [
            ("((3,2),(1,7));", "\"7\""),
            ("((3,2),(1,x));", "\"x\""),
            ("((3,2),(1,'0 '));", "\"0 \""),
            ("((3,2),(1,00));", "\"00\""),
            ("((3,2),(1,-0));", "\"-0\""),
            ("((3,2),(1,'zero'));", "\"zero\""),
        ] {
            let mut args = a(reader);
            args.push(tree.to_string());
            args.extend(a(&["--points", &p]));
            s.refused("names", args, &[named]);
        }
        for (tree, needle) in [
            ("((3,3),(1,0));", "twice"),
            ("((3,2),(1,0)", "newick"),
            ("((3,2),(1,0));;", "newick"),
            ("((3,2,1),0);", "children"),
            ("", "tree"),
        ] {
            let mut args = a(reader);
            args.push(tree.to_string());
            args.extend(a(&["--points", &p]));
            s.refused("names", args, &[needle]);
        }
    }
    // Word names: digits are not indices when the points have names.
    let words = s.file(
        "n_words.csv",
        "name,x,y\nab,1,0.2\ncd,0.1,1\nef,-1,0.3\ngh,0.5,-0.7\n",
    );
    // Unnamed weights: words are not indices.
    let w = s.file("n_weights.csv", &weights_csv(4, 3));
    for reader in readers {
        let mut args = a(reader);
        args.extend(a(&["((0,1),(2,3));", "--points", &words]));
        s.refused("names", args, &["\"0\""]);
        for (tree, named) in [
            ("((ab,cd),(ef,gh));", "\"ab\""),
            ("((0,1),(2,x));", "\"x\""),
            ("((0,1),(2,4));", "4"),
        ] {
            let mut args = a(reader);
            args.extend(a(&[tree, "--weights", &w]));
            s.refused("names", args, &[named]);
        }
    }
}

/// Files that are missing, unreadable, empty or not what they claim.
fn files(s: &mut Sweep) {
    let npy = |header: &str, data: &[u8]| {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((h.len() as u16).to_le_bytes());
        b.extend(h.as_bytes());
        b.extend(data);
        b
    };
    let nine = [0u8; 72];
    let missing = path_str(&s.dir.join("missing.csv"));
    let directory = path_str(&s.dir);
    let binary: Vec<u8> = (0..512u32).map(|i| (i * 97 % 251) as u8 | 0x80).collect();
    let cases: Vec<(String, Vec<&str>)> = vec![
        (missing.clone(), vec!["missing.csv"]),
        (directory.clone(), vec!["hostile_sweep"]),
        ("/dev/null".into(), vec!["/dev/null", "no data rows"]),
        ("-".into(), vec!["standard input"]),
        (s.bytes("binary.csv", &binary), vec!["binary.csv", "utf-8"]),
        (
            s.bytes("no_descr.npy", &npy("{garbage}", &[])),
            vec!["no_descr.npy"],
        ),
        (
            s.bytes(
                "short.npy",
                &npy(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }",
                    &nine[..8],
                ),
            ),
            vec!["short.npy"],
        ),
        (
            s.bytes(
                "int.npy",
                &npy(
                    "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 3), }",
                    &nine[..36],
                ),
            ),
            vec!["int.npy"],
        ),
        (
            s.bytes(
                "huge_shape.npy",
                &npy(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                    &nine,
                ),
            ),
            vec!["huge_shape.npy"],
        ),
        (
            s.bytes("magic_only.npy", b"\x93NUMPY"),
            vec!["magic_only.npy"],
        ),
        (
            s.bytes(
                "3d.npy",
                &npy(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3, 3), }",
                    &nine,
                ),
            ),
            vec!["3d.npy"],
        ),
    ];
    for (path, needles) in &cases {
        for k in 0..COMMANDS.len() {
            s.refused(
                "unreadable files",
                command(k, &["--weights", path], 3),
                needles,
            );
        }
        for k in [1, 11] {
            s.refused(
                "unreadable files",
                command(k, &["--points", path], 3),
                needles,
            );
        }
    }
    // A good .npy reads as its CSV twin.
    let mut good = Vec::new();
    for v in [0.0f64, 1.0, -2.0, 1.0, 0.0, 3.0, -2.0, 3.0, 0.0] {
        good.extend(v.to_le_bytes());
    }
    let good = s.bytes(
        "good.npy",
        &npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }",
            &good,
        ),
    );
    let twin = s.file("good.csv", "0,1,-2\n1,0,3\n-2,3,0\n");
    for k in 0..COMMANDS.len() {
        let want = answer(&s.exec(&command(k, &["--weights", &twin], 3))).unwrap();
        s.answered(
            "unreadable files",
            command(k, &["--weights", &good], 3),
            |v| {
                if *v == want {
                    Ok(())
                } else {
                    Err(format!("differs from the CSV's {want}"))
                }
            },
        );
    }
    // Jets files and trees from files that are not there.
    for path in [missing.as_str(), directory.as_str(), "/dev/null", "-"] {
        for cmd in ["map", "logz", "greedy"] {
            s.refused(
                "unreadable files",
                a(&[cmd, "--model", "ginkgo", "--jets", path, "--json"]),
                &["error:"],
            );
        }
    }
}

/// The commands that read a jets file (every jet its own problem).
const JET_COMMANDS: [&[&str]; 11] = [
    &["map", "--model", "ginkgo", "--json"],
    &["logz", "--model", "ginkgo", "--json"],
    &["marginals", "--model", "ginkgo", "--json"],
    &["sample", "-n", "2", "--model", "ginkgo", "--json"],
    &["infer", "--model", "ginkgo", "--json"],
    &["score", "--truth", "--model", "ginkgo", "--json"],
    &["greedy", "--model", "ginkgo", "--json"],
    &["beam", "--model", "ginkgo", "--json"],
    &["astar", "--model", "ginkgo", "--json"],
    &["astar", "--approx", "--model", "ginkgo", "--json"],
    &[
        "linkage", "--method", "average", "--model", "ginkgo", "--json",
    ],
];

/// Jets files broken one field at a time, across every jets command.
fn malformed_jets(s: &mut Sweep, jets: &str) {
    let good: Value = serde_json::from_str(jets).unwrap();
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit, &str); 10] = [
        (
            "no_leaves",
            |d| d["jets"][0]["leaves"] = serde_json::json!([]),
            "at least 2",
        ),
        (
            "one_leaf",
            |d| {
                let first = d["jets"][0]["leaves"][0].clone();
                d["jets"][0]["leaves"] = Value::Array(vec![first]);
            },
            "at least 2",
        ),
        (
            "negative_energy",
            |d| d["jets"][1]["leaves"][0][0] = (-5.0).into(),
            "unphysical",
        ),
        (
            "three_components",
            |d| d["jets"][0]["leaves"][2] = serde_json::json!([1.0, 2.0, 3.0]),
            "4-momentum",
        ),
        (
            "string_component",
            |d| d["jets"][0]["leaves"][0][1] = "x".into(),
            "non-numeric",
        ),
        (
            "lambda_zero",
            |d| d["jets"][0]["params"]["lambda"] = 0.0.into(),
            "lambda",
        ),
        (
            "lambda_negative",
            |d| d["jets"][1]["params"]["lambda"] = (-1.0).into(),
            "lambda",
        ),
        ("no_jets", |d| d["jets"] = serde_json::json!([]), "empty"),
        ("jets_not_a_list", |d| d["jets"] = 5.into(), "\"jets\""),
        (
            "truth_repeats_a_leaf",
            |d| d["jets"][0]["truth"] = serde_json::json!([[0, 0], 1]),
            "more than once",
        ),
    ];
    let mut files = Vec::new();
    for (name, edit, needle) in edits {
        let mut d = good.clone();
        edit(&mut d);
        files.push((s.file(&format!("j_{name}.json"), &d.to_string()), needle));
    }
    // A non-finite number (not valid JSON, but a common export) and a
    // truncated file.
    let mut d = good.clone();
    d["jets"][0]["leaves"][1][0] = 123456.5.into();
    let text = d.to_string().replace("123456.5", "1e400");
    files.push((s.file("j_1e400.json", &text), "out of range"));
    files.push((
        s.file("j_truncated.json", &jets[..jets.len() / 2]),
        "not valid JSON",
    ));
    for (path, needle) in &files {
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        for cmd in JET_COMMANDS {
            let mut args = a(cmd);
            args.extend(["--jets".to_string(), path.clone()]);
            s.refused("malformed jets", args, &[name, needle]);
        }
    }
    // The good file: one JSON line per jet, in order, with its id.
    let ids: Vec<Value> = good["jets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].clone())
        .collect();
    let path = s.file("j_good.json", jets);
    for cmd in JET_COMMANDS {
        let mut args = a(cmd);
        args.extend(["--jets".to_string(), path.clone()]);
        let ids = ids.clone();
        s.case("malformed jets", args, move |o| {
            if o.code != Some(0) {
                return Err("the good jets file is refused".into());
            }
            let lines: Vec<Value> = o
                .stdout
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()
                .map_err(|e| format!("a line is not JSON: {e}"))?;
            let got: Vec<Value> = lines.iter().map(|l| l["id"].clone()).collect();
            if got != ids {
                return Err(format!("ids {got:?}, expected {ids:?}"));
            }
            lines.iter().try_for_each(finite)
        });
    }
}

/// `interactive serve` with a database that is not a file: refused before
/// anything listens, naming the path.
fn serve(s: &mut Sweep) {
    let points = s.file("s_points.csv", "name,x\na,1\nb,2\nc,3\nd,5\n");
    let directory = s.dir.join("s_dir");
    std::fs::create_dir_all(&directory).unwrap();
    let fifo = s.dir.join("s_fifo");
    let _ = std::fs::remove_file(&fifo);
    let have_fifo = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|st| st.success());
    let garbage = s.bytes("s_garbage.sqlite", b"this is not a database, at all\n");
    let mut dbs = vec![
        (path_str(&directory), "directory"),
        ("/dev/null".to_string(), "/dev/null"),
        (garbage, "s_garbage.sqlite"),
        (path_str(&s.dir.join("no_such_dir/x.sqlite")), "no_such_dir"),
    ];
    if have_fifo {
        dbs.push((path_str(&fifo), "fifo"));
    }
    for (db, needle) in dbs {
        let named = if needle == "directory" {
            db.clone()
        } else {
            needle.to_string()
        };
        s.refused(
            "serve --db",
            a(&[
                "interactive",
                "serve",
                "--points",
                &points,
                "--db",
                &db,
                "--port",
                "0",
            ]),
            &[&named],
        );
    }
    let one = s.file("s_one.csv", "name,x\na,1\n");
    let nan = s.file("s_nan.csv", "name,x\na,1\nb,nan\nc,3\n");
    let db = path_str(&s.dir.join("s_new.sqlite"));
    for (p, needle) in [(one, "at least 3"), (nan, "not finite")] {
        s.refused(
            "serve --db",
            a(&[
                "interactive",
                "serve",
                "--points",
                &p,
                "--db",
                &db,
                "--port",
                "0",
            ]),
            &[needle],
        );
        assert!(!Path::new(&db).exists(), "a refused serve created {db}");
    }
}

/// Answers against closed forms and brute force.
fn closed_forms(s: &mut Sweep) {
    // `count`: (2n-3)!! exactly.
    for n in 1..=40 {
        let want = double_factorial_decimal(n);
        s.answered("count", a(&["count", "--json", &n.to_string()]), |v| {
            if v["num_trees"] == want.as_str() && v["n"] == n {
                Ok(())
            } else {
                Err(format!("expected {want}"))
            }
        });
    }
    for bad in [
        "0",
        "-1",
        "abc",
        "1e3",
        "3.0",
        "",
        " 5",
        "100001",
        "18446744073709551616",
    ] {
        s.refused("count", a(&["count", "--json", bad]), &["error:"]);
    }
    // β = 0: log Z is the log of the number of trees, or of partitions.
    let bell = [1.0f64, 1.0, 2.0, 5.0, 15.0, 52.0, 203.0];
    for n in 1..=6 {
        let w = s.file(&format!("z_{n}.csv"), &weights_csv(n, 11 + n as u64));
        let trees: f64 = (1..n.max(2) - 1).map(|k| (2 * k + 1) as f64).product();
        s.answered(
            "closed forms",
            a(&[
                "logz",
                "--model",
                "hcc",
                "--weights",
                &w,
                "--beta",
                "0",
                "--json",
            ]),
            |v| expect_close("log Z at beta 0", v["log_z"].as_f64(), trees.ln()),
        );
        s.answered(
            "closed forms",
            a(&[
                "flat",
                "logz",
                "--model",
                "cc",
                "--weights",
                &w,
                "--beta",
                "0",
                "--json",
            ]),
            |v| expect_close("flat log Z at beta 0", v["log_z"].as_f64(), bell[n].ln()),
        );
    }
    // Two and three points by hand: 2 points have one tree, of cost
    // max(w01, 0); the tree ((a,b),c) costs |w_ab| + max(w_ac,0) + max(w_bc,0).
    for seed in 1..=4u64 {
        for beta in [0.5, 1.0, 3.0, 1e-300, 1e300] {
            let w2 = weights(2, seed);
            let p = s.file(&format!("z2_{seed}.csv"), &weights_csv(2, seed));
            let want = -beta * w2[0][1].max(0.0);
            s.answered(
                "closed forms",
                a(&[
                    "logz",
                    "--model",
                    "hcc",
                    "--weights",
                    &p,
                    "--beta",
                    &format!("{beta:e}"),
                    "--json",
                ]),
                |v| expect_close("log Z of 2 points", v["log_z"].as_f64(), want),
            );
            let w = weights(3, seed);
            let p = s.file(&format!("z3_{seed}.csv"), &weights_csv(3, seed));
            let by_hand = |x: usize, y: usize, z: usize| {
                -beta * (w[x][y].abs() + w[x][z].max(0.0) + w[y][z].max(0.0))
            };
            let want = log_sum_exp(&[by_hand(0, 1, 2), by_hand(0, 2, 1), by_hand(1, 2, 0)]);
            s.answered(
                "closed forms",
                a(&[
                    "logz",
                    "--model",
                    "hcc",
                    "--weights",
                    &p,
                    "--beta",
                    &format!("{beta:e}"),
                    "--json",
                ]),
                |v| expect_close("log Z of 3 points", v["log_z"].as_f64(), want),
            );
        }
        // log Z against the log-sum-exp of `score` over the 3 trees.
        let p = path_str(&s.dir.join(format!("z3_{seed}.csv")));
        let mut scores = Vec::new();
        for tree in ["((0,1),2);", "((0,2),1);", "((1,2),0);"] {
            let v = s.answered(
                "closed forms",
                a(&[
                    "score",
                    "--model",
                    "hcc",
                    "--weights",
                    &p,
                    "--tree",
                    tree,
                    "--json",
                ]),
                finite,
            );
            scores.push(v["log_potential"].as_f64().unwrap_or(f64::NAN));
        }
        let want = log_sum_exp(&scores);
        s.answered(
            "closed forms",
            a(&["logz", "--model", "hcc", "--weights", &p, "--json"]),
            |v| expect_close("log Z vs the scores", v["log_z"].as_f64(), want),
        );
    }
    // Brute force over every tree and every partition, n = 2..5.
    for n in 2..=5 {
        for seed in [3u64, 8] {
            let beta = 1.3;
            let w = weights(n, seed);
            let p = s.file(&format!("b_{n}_{seed}.csv"), &weights_csv(n, seed));
            let flags = |cmd: &[&str]| {
                let mut args = a(cmd);
                args.extend(a(&["--weights", &p, "--beta", "1.3", "--json"]));
                args
            };
            let trees = all_trees(n);
            let costs: Vec<f64> = trees.iter().map(|t| hcc_cost(t, &w)).collect();
            let logs: Vec<f64> = costs.iter().map(|c| -beta * c).collect();
            let log_z = log_sum_exp(&logs);
            let best = costs.iter().copied().fold(f64::INFINITY, f64::min);
            let mut want = BTreeMap::new();
            for (t, l) in trees.iter().zip(&logs) {
                let mut cs = Vec::new();
                inner_clusters(t, true, &mut cs);
                for c in cs {
                    *want.entry(c).or_insert(0.0) += (l - log_z).exp();
                }
            }
            s.answered("brute force", flags(&["logz", "--model", "hcc"]), |v| {
                expect_close("log Z", v["log_z"].as_f64(), log_z)
            });
            for cmd in [&["map", "--model", "hcc"][..], &["astar", "--model", "hcc"]] {
                s.answered("brute force", flags(cmd), |v| {
                    expect_close("MAP cost", v["cost"].as_f64(), best)?;
                    let t = &v["tree"];
                    expect_close("the tree's own cost", Some(hcc_cost(t, &w)), best)?;
                    expect_close("log potential", v["log_potential"].as_f64(), -beta * best)
                });
            }
            for cmd in [
                &["greedy", "--model", "hcc"][..],
                &["beam", "--model", "hcc"],
                &["astar", "--approx", "--model", "hcc"],
            ] {
                s.answered("brute force", flags(cmd), |v| {
                    let c = hcc_cost(&v["tree"], &w);
                    expect_close("cost of the tree", v["cost"].as_f64(), c)?;
                    if c < best - 1e-9 {
                        return Err(format!("cost {c} below the optimum {best}"));
                    }
                    Ok(())
                });
            }
            let mut m = flags(&["marginals", "--model", "hcc"]);
            m.extend(a(&["--min-p", "0"]));
            s.answered("brute force", m, |v| {
                expect_close("log Z", v["log_z"].as_f64(), log_z)?;
                same_marginals(&cluster_map(v)?, &want)
            });
            let mut m = flags(&["infer", "--model", "hcc"]);
            m.extend(a(&["--min-p", "0"]));
            s.answered("brute force", m, |v| {
                expect_close("MAP cost", v["map"]["cost"].as_f64(), best)?;
                same_marginals(&cluster_map(v)?, &want)
            });
            s.answered(
                "brute force",
                flags(&["sample", "-n", "3", "--model", "hcc"]),
                |v| {
                    let samples = v["samples"].as_array().ok_or("no samples")?;
                    if samples.len() != 3 {
                        return Err("expected 3 samples".into());
                    }
                    for t in samples {
                        if !trees.iter().any(|u| same_tree(u, t)) {
                            return Err(format!("{t} is not a tree over {n} points"));
                        }
                    }
                    Ok(())
                },
            );
            // Flat: every partition.
            let parts = partitions(n);
            let energy = |part: &[u32]| {
                beta * part
                    .iter()
                    .map(|&c| {
                        let mut e = 0.0;
                        for i in members(c) {
                            for j in members(c).filter(|&j| j > i) {
                                e += w[i][j];
                            }
                        }
                        e
                    })
                    .sum::<f64>()
            };
            let energies: Vec<f64> = parts.iter().map(|q| energy(q)).collect();
            let flat_z = log_sum_exp(&energies);
            let flat_best = energies.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut flat_want = BTreeMap::new();
            for (q, e) in parts.iter().zip(&energies) {
                for &c in q {
                    *flat_want.entry(c).or_insert(0.0) += (e - flat_z).exp();
                }
            }
            s.answered(
                "brute force",
                flags(&["flat", "logz", "--model", "cc"]),
                |v| expect_close("flat log Z", v["log_z"].as_f64(), flat_z),
            );
            s.answered(
                "brute force",
                flags(&["flat", "map", "--model", "cc"]),
                |v| expect_close("flat MAP", v["log_energy"].as_f64(), flat_best),
            );
            let mut m = flags(&["flat", "marginals", "--model", "cc"]);
            m.extend(a(&["--min-p", "0"]));
            s.answered("brute force", m, |v| {
                expect_close("flat log Z", v["log_z"].as_f64(), flat_z)?;
                same_marginals(&cluster_map(v)?, &flat_want)
            });
        }
    }
}

/// Two nested lists as the same tree up to the order of children.
fn same_tree(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            (same_tree(&x[0], &y[0]) && same_tree(&x[1], &y[1]))
                || (same_tree(&x[0], &y[1]) && same_tree(&x[1], &y[0]))
        }
        _ => a == b,
    }
}

#[test]
fn hostile_sweep() {
    let start = Instant::now();
    let mut s = Sweep::new("hostile_sweep");
    let jets = stdout(&[
        "ginkgo",
        "generate",
        "--n-jets",
        "2",
        "--min-leaves",
        "4",
        "--max-leaves",
        "5",
        "--seed",
        "1",
    ]);
    let jets_text = jets;
    let jets = s.file("jets.json", &jets_text);
    malformed_weights(&mut s);
    malformed_points(&mut s);
    bad_flags(&mut s);
    conflicts(&mut s, &jets);
    malformed_jets(&mut s, &jets_text);
    names(&mut s);
    files(&mut s);
    serve(&mut s);
    closed_forms(&mut s);
    eprintln!("hostile sweep took {:.1} s", start.elapsed().as_secs_f64());
    s.finish(300);
}
