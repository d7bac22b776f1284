//! The application core, independent of HTTP: the data, the session (sampler and
//! queries), the store, the sampler thread and the exact posterior.
//!
//! Locks: `inner` (the session) is always taken before `store`; the sampler
//! thread never waits for `store` while it holds `inner`. An answer is checked,
//! appended to the store (committed) and only then applied, all under `inner`,
//! so two tabs cannot both answer one query.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use trellis::ddt::{
    Answer, Dataset, Ddt, DdtTree, ModelSpec, QueryOptions, Rejection, Session, Strategy, Triplet,
    check_strategy, jittered_model, snapshot,
};
use trellis::input::Naming;
use trellis::io::{NamesColumn, ReadOptions};
use trellis::{Named, Tree};

use crate::images::Image;
use crate::store::{Event, Identity, Lease, Store};

/// Iterations the sampler runs while it holds the session (about a millisecond
/// at 150 points): answers wait at most this long for the lock.
const BATCH: u64 = 200;

/// Everything `trellis interactive serve` is told.
#[derive(Clone, Debug)]
pub struct Config {
    /// The points: CSV with a header, the first column the names; optional `text`
    /// and `image` columns are shown on hover, every other column (but the
    /// [`Config::images`] column) is a feature.
    pub points: PathBuf,
    /// A CSV column of image paths, relative to the CSV's directory (`--images`):
    /// not a feature; each file is checked and read at start
    /// ([`crate::images`]) and shown as the point's thumbnail.
    pub images: Option<String>,
    /// The SQLite database.
    pub db: PathBuf,
    /// The session's name (default: the data file's name).
    pub session: Option<String>,
    /// Port on 127.0.0.1 (0: any free port).
    pub port: u16,
    /// Seed of the sampler and the queries.
    pub seed: u64,
    /// Divergence constant c.
    pub c: f64,
    /// Sigma, as for `trellis interactive simulate --sigma`.
    pub sigma: String,
    /// Sigma0, as for `--sigma0`.
    pub sigma0: String,
    /// Leaf noise in units of Sigma.
    pub leaf_noise: f64,
    /// Gaussian jitter added to the features (seeded by `seed`).
    pub jitter: f64,
    /// The strategy of a new session (a resumed one keeps its own).
    pub strategy: Strategy,
    /// Chain iterations between an answer and the next query (at least).
    pub iters_per_answer: u64,
    /// Points of a subtree query.
    pub subset_size: usize,
    /// Candidate subsets of an active query.
    pub candidates: usize,
    /// Iterations the sampler goes on for after a query is ready (then it
    /// sleeps until the next answer).
    pub background_iters: u64,
    /// Seconds the planner may estimate for one exact computation under
    /// triplets (`trellis::plan::estimate_constrained` of the MCC tree: every
    /// marginal and the MCC tree's own pass, on this machine's threads): a
    /// dataset beyond it, or beyond the memory available, gets no exact
    /// panel. The planner is the only gate (no fixed number of points).
    /// Default 10 s; 0 (or anything not above 0) turns the exact panel off.
    pub exact_seconds: f64,
}

impl Config {
    /// Defaults for a data file (the DDT defaults of `trellis interactive simulate`).
    pub fn new(points: PathBuf) -> Config {
        Config {
            points,
            images: None,
            db: PathBuf::from("trellis-sessions.sqlite"),
            session: None,
            port: 8000,
            seed: 0,
            c: 1.0,
            sigma: "var/2".into(),
            sigma0: "1/2".into(),
            leaf_noise: 0.01,
            jitter: 0.0,
            strategy: Strategy::Active,
            iters_per_answer: 100,
            subset_size: 10,
            candidates: 20,
            background_iters: 100_000,
            exact_seconds: 10.0,
        }
    }
}

/// The data file: points, names, what is shown on hover, and its hash.
#[derive(Debug)]
pub struct Data {
    pub points: Dataset,
    pub hover: Vec<String>,
    pub images: Option<Vec<String>>,
    /// The `--images` column's paths, as written in the CSV (unchecked).
    pub image_paths: Option<Vec<String>>,
    pub sha256: String,
}

impl Data {
    /// Reads and hashes the data file (at most the library's input limit: a
    /// share of the memory available).
    pub fn read(path: &Path) -> Result<Data> {
        Data::read_with(path, None)
    }

    /// As [`Data::read`], with `images` the column of image paths (see
    /// [`Config::images`]; an error when the CSV has no such column).
    pub fn read_with(path: &Path, images: Option<&str>) -> Result<Data> {
        let bytes = trellis::io::read_bytes(path, trellis::io::input_limit(None))?;
        let sha256 = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow!("{} is not UTF-8 text", path.display()))?;
        let mut data =
            Data::parse_with(&text, images).with_context(|| path.display().to_string())?;
        data.sha256 = sha256;
        Ok(data)
    }

    /// Parses CSV text (see [`Config::points`]) with the library's reader
    /// (`trellis::io`, RFC 4180): the first column holds the names, `text`
    /// and `image` columns are kept as text.
    pub fn parse(text: &str) -> Result<Data> {
        Data::parse_with(text, None)
    }

    /// As [`Data::parse`], with `images` the column of image paths, kept as
    /// text and never a feature (an error when the header has no such column).
    pub fn parse_with(text: &str, images: Option<&str>) -> Result<Data> {
        let mut columns = vec!["text", "image"];
        if let Some(c) = images
            && !columns.iter().any(|t| t.eq_ignore_ascii_case(c))
        {
            columns.push(c);
        }
        let options = ReadOptions::points()
            .with_names(NamesColumn::Column(0))
            .with_text_columns(columns);
        let mut table = match (trellis::io::parse_table(text, &options), images) {
            (Ok(t), _) => t,
            // A column of paths read as numbers: say which column is missing.
            (Err(e), Some(c))
                if !header_fields(text)
                    .iter()
                    .any(|h| h.eq_ignore_ascii_case(c)) =>
            {
                return Err(anyhow::Error::from(e).context(format!(
                    "--images {c}: the CSV has no column named {c:?} (its header: {})",
                    header_fields(text).join(", ")
                )));
            }
            (Err(e), _) => return Err(e.into()),
        };
        let image_paths = match images {
            None => None,
            Some(c) => {
                let k = table
                    .text
                    .iter()
                    .position(|t| t.name.eq_ignore_ascii_case(c))
                    .ok_or_else(|| {
                        anyhow!(
                            "--images {c}: the CSV has no column named {c:?} other than the \
                             names (its header: {})",
                            header_fields(text).join(", ")
                        )
                    })?;
                Some(table.text.remove(k).values)
            }
        };
        let mut column = |name: &str| {
            let k = table
                .text
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))?;
            Some(table.text.remove(k).values)
        };
        let (texts, images) = (column("text"), column("image"));
        let features = table.columns.clone().unwrap_or_else(|| {
            (1..=table.matrix.cols)
                .map(|j| format!("feature {j}"))
                .collect()
        });
        let points = Dataset::from_table(table)?;
        // With pictures, the picture is the hover: the feature values (pixels,
        // say) are not listed.
        let pictures = image_paths.is_some();
        let hover = (0..points.len())
            .map(|i| match &texts {
                Some(t) if !t[i].is_empty() => t[i].clone(),
                _ if pictures => String::new(),
                _ => features
                    .iter()
                    .zip(points.row(i))
                    .map(|(h, v)| format!("{h} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
            .collect();
        // Only inline images: the server reads no file but its database.
        let images = images.map(|v| {
            v.into_iter()
                .map(|s| {
                    if s.starts_with("data:image/") {
                        s
                    } else {
                        String::new()
                    }
                })
                .collect()
        });
        Ok(Data {
            points,
            hover,
            images,
            image_paths,
            sha256: String::new(),
        })
    }
}

/// The fields of a CSV's first record (RFC 4180 quotes; for messages only).
fn header_fields(text: &str) -> Vec<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field).trim().to_string()),
            '\r' | '\n' if !quoted => break,
            _ => field.push(ch),
        }
    }
    fields.push(field.trim().to_string());
    fields
}

/// An error answer of the API: status and JSON body.
#[derive(Debug)]
pub struct ApiError {
    pub status: u16,
    pub body: Value,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: json!({ "error": message.into() }),
        }
    }
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(400, message)
}

fn internal(e: anyhow::Error) -> ApiError {
    ApiError::new(500, format!("{e:#}"))
}

/// Which exact tree `GET /api/exact` carries as its `"summary"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExactTree {
    /// The maximum-clade-credibility tree: the binary tree maximising the
    /// product of its clusters' exact marginals (`trellis::summary`).
    #[default]
    Mcc,
    /// The maximum a posteriori tree.
    Map,
}

impl ExactTree {
    /// `mcc` or `map`, as in `?tree=`.
    pub fn name(self) -> &'static str {
        match self {
            ExactTree::Mcc => "mcc",
            ExactTree::Map => "map",
        }
    }

    /// The kind named `mcc` or `map`; `None` for another name.
    pub fn parse(name: &str) -> Option<ExactTree> {
        match name {
            "mcc" => Some(ExactTree::Mcc),
            "map" => Some(ExactTree::Map),
            _ => None,
        }
    }
}

/// The exact posterior panel: the last finished computation, and which
/// triplets the next one conditions on.
///
/// Every answer or undo that changes the triplets in force asks for a new
/// computation (`wanted` goes up, with those triplets); the worker thread
/// takes the newest request, and cancels its run (between batches of work)
/// once a newer one arrives; a result made stale that way is discarded.
#[derive(Debug)]
struct ExactState {
    /// Why there is no panel (too many points for the planner's budget).
    unavailable: Option<String>,
    /// The last finished result (`Ok`: the panel's JSON; `Err`: why not,
    /// with the status to show).
    result: Option<Result<Value, (&'static str, String)>>,
    /// Generations: requested, taken by the worker, finished.
    wanted: u64,
    started: u64,
    done: u64,
    /// The triplets in force of the newest request.
    triplets: Vec<Triplet>,
    stop: bool,
}

struct Inner {
    session: Session,
    /// The current query's id.
    query_id: Option<u64>,
    next_id: u64,
    /// Iterations left to run after the query is ready.
    background: u64,
    /// Iterations recorded in the store before this start.
    base_iterations: u64,
    /// The ids (event `seq`s) of the answers in force, as `session.answers()`.
    answer_ids: Vec<u64>,
    /// Whether the tree changed since it was last saved.
    unsaved: bool,
    stop: bool,
}

/// The shared state of a running server.
pub struct App {
    names: Vec<String>,
    index: HashMap<String, usize>,
    hover: Vec<String>,
    images: Option<Vec<String>>,
    /// The `--images` files, one per point, checked and read at start.
    files: Option<Vec<Image>>,
    session_name: String,
    session_id: i64,
    iters_per_answer: u64,
    background_iters: u64,
    inner: Mutex<Inner>,
    wake: Condvar,
    store: Mutex<Store>,
    notify: tokio::sync::watch::Sender<u64>,
    exact: Mutex<ExactState>,
    exact_wake: Condvar,
    /// This server's lease of the session (released when the app is dropped).
    _lease: Lease,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn model_of(config: &Config, points: &mut Dataset) -> Result<Ddt> {
    let c = &config;
    let spec = ModelSpec {
        c: c.c,
        sigma: &c.sigma,
        sigma0: &c.sigma0,
        leaf_noise: c.leaf_noise,
    };
    let jitter = (c.jitter, c.seed);
    Ok(jittered_model(
        points,
        &spec,
        jitter,
        &c.points,
        Naming::Flags,
    )?)
}

fn tree_state(tree: &DdtTree) -> String {
    let (topo, oms) = snapshot(tree);
    json!({ "topology": topo.to_string(), "one_minus_times": oms }).to_string()
}

fn parse_tree_state(text: &str) -> Option<DdtTree> {
    let v: Value = serde_json::from_str(text).ok()?;
    let topo = Tree::parse(v.get("topology")?.as_str()?).ok()?;
    let oms: Vec<f64> = v
        .get("one_minus_times")?
        .as_array()?
        .iter()
        .map(Value::as_f64)
        .collect::<Option<_>>()?;
    DdtTree::with_one_minus_times(&topo, &oms).ok()
}

/// A tree as nested JSON: leaves `{"name", "height": 0}`, internal nodes
/// `{"height", "support", "children"}` with `height = 1 - t` (the DDT's
/// divergence time `t`) and `support` the fraction of the sampler's recent
/// trees that hold the node's cluster (`support` in pre-order of the tree's
/// topology, as [`Session::support`] gives it; left out when `None`).
pub fn tree_json(tree: &DdtTree, names: &[String], support: Option<&[f64]>) -> Value {
    fn go(
        t: &Tree,
        oms: &mut std::slice::Iter<'_, f64>,
        support: &mut Option<std::slice::Iter<'_, f64>>,
        names: &[String],
    ) -> Value {
        match t {
            Tree::Leaf(i) => json!({ "name": names[*i], "height": 0.0 }),
            Tree::Node(l, r) => {
                let h = *oms.next().expect("one time per internal node");
                let s = support
                    .as_mut()
                    .map(|s| *s.next().expect("one support per internal node"));
                let (l, r) = (go(l, oms, support, names), go(r, oms, support, names));
                let mut v = json!({ "height": h, "children": [l, r] });
                if let Some(s) = s {
                    v["support"] = json!(s);
                }
                v
            }
        }
    }
    let (topo, oms) = snapshot(tree);
    go(
        &topo,
        &mut oms.iter(),
        &mut support.map(|s| s.iter()),
        names,
    )
}

impl App {
    /// Opens the data, the store and the session (replaying its answers) and
    /// starts the sampler and, for small data, the exact posterior.
    pub fn start(config: &Config) -> Result<(Arc<App>, Workers)> {
        let options = QueryOptions {
            subset_size: config.subset_size,
            candidates: config.candidates,
            samples: 100,
        }
        .checked(Naming::Flags)?;
        check_strategy(config.strategy)?;
        let data = Data::read_with(&config.points, config.images.as_deref())?;
        let files = match (&config.images, &data.image_paths) {
            (Some(column), Some(paths)) => Some(crate::images::load(
                &config.points,
                column,
                paths,
                data.points.names(),
            )?),
            _ => None,
        };
        // The page's image of each point: the route of its file, or an
        // inline `image` column.
        let images = match &files {
            Some(f) => Some(
                (0..f.len())
                    .map(|i| format!("/api/item/{i}/image"))
                    .collect(),
            ),
            None => data.images,
        };
        let mut points = data.points;
        let model = model_of(config, &mut points)?;
        let names: Vec<String> = points.names().to_vec();
        let index: HashMap<String, usize> = names
            .iter()
            .enumerate()
            .map(|(i, s)| (s.clone(), i))
            .collect();
        let name = match &config.session {
            Some(s) => s.clone(),
            None => config
                .points
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "session".into()),
        };
        let settings = json!({
            "c": config.c,
            "sigma": config.sigma,
            "sigma0": config.sigma0,
            "leaf_noise": config.leaf_noise,
            "jitter": config.jitter,
            "jitter_seed": if config.jitter > 0.0 { Some(config.seed) } else { None },
            "subset_size": config.subset_size,
            "candidates": config.candidates,
        });
        // One writer per session: the lease before the database is opened.
        Store::check(&config.db)?;
        let lease = Lease::acquire(&config.db, &name)?;
        let mut store = Store::open(&config.db)?;
        let path = config.points.display().to_string();
        let stored = store.session(&Identity {
            name: &name,
            data_path: &path,
            data_sha256: &data.sha256,
            settings: &settings,
            strategy: config.strategy.name(),
        })?;
        // Replay: the answers in force and the last strategy.
        let mut strategy = Strategy::from_name(&stored.strategy)
            .ok_or_else(|| anyhow!("unknown stored strategy {:?}", stored.strategy))?;
        let mut answers = Vec::new();
        let mut answer_ids: Vec<u64> = Vec::new();
        let point = |s: &str| {
            index
                .get(s)
                .copied()
                .ok_or_else(|| anyhow!("the database names point {s:?}, which the data lacks"))
        };
        for (seq, e) in &stored.events {
            match e {
                Event::Accept { .. } => {
                    answers.push(Answer::Accept);
                    answer_ids.push(*seq);
                }
                Event::Triplet { a, b, c, .. } => {
                    answers.push(Answer::Triplet(Triplet::new(
                        point(a)?,
                        point(b)?,
                        point(c)?,
                    )?));
                    answer_ids.push(*seq);
                }
                Event::Undo { answer } => {
                    if let Some(k) = answer
                        && answer_ids.last() != Some(k)
                    {
                        bail!(
                            "the database {} is inconsistent: event {seq} takes back answer \
                             {k}, which is not the last answer in force then",
                            config.db.display()
                        );
                    }
                    answers.pop();
                    answer_ids.pop();
                }
                Event::Strategy(s) => {
                    strategy = Strategy::from_name(s)
                        .ok_or_else(|| anyhow!("unknown stored strategy {s:?}"))?
                }
            }
        }
        if let Some(note) = store.recovered() {
            eprintln!(
                "warning: {note}; session {name:?} resumes with {} answers in force",
                answers.len()
            );
        }
        let tree = stored.last_tree.as_deref().and_then(parse_tree_state);
        let seed = config.seed ^ stored.starts.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let session = Session::new(model, strategy, options, answers, tree, seed)
            .map_err(|e| anyhow!(trellis::ddt::named_message(&e, &names)))?;
        let n = names.len();
        let unavailable = exact_unavailable(n, config);
        let exact = ExactState {
            unavailable: unavailable.clone(),
            result: None,
            wanted: 1,
            started: 0,
            done: 0,
            triplets: session.constraints().to_vec(),
            stop: false,
        };
        let (notify, _) = tokio::sync::watch::channel(0u64);
        let app = Arc::new(App {
            names,
            index,
            hover: data.hover,
            images,
            files,
            session_name: name,
            session_id: stored.id,
            iters_per_answer: config.iters_per_answer,
            background_iters: config.background_iters,
            inner: Mutex::new(Inner {
                session,
                query_id: None,
                next_id: (stored.starts << 20) + 1,
                background: 0,
                base_iterations: stored.iterations,
                answer_ids,
                unsaved: false,
                stop: false,
            }),
            wake: Condvar::new(),
            store: Mutex::new(store),
            notify,
            exact: Mutex::new(exact),
            exact_wake: Condvar::new(),
            _lease: lease,
        });
        let sampler = {
            let app = app.clone();
            std::thread::Builder::new()
                .name("trellis-sampler".into())
                .spawn(move || app.sampler_loop())?
        };
        let exact = if unavailable.is_none() {
            let app = app.clone();
            let rows: Vec<Vec<f64>> = (0..n).map(|i| points.row(i).to_vec()).collect();
            Some(
                std::thread::Builder::new()
                    .name("trellis-exact".into())
                    .spawn(move || app.exact_loop(rows))?,
            )
        } else {
            None
        };
        Ok((
            app.clone(),
            Workers {
                app,
                sampler: Some(sampler),
                exact,
            },
        ))
    }

    /// A receiver that changes when a query becomes ready or the state changes.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.notify.subscribe()
    }

    fn bump(&self) {
        self.notify.send_modify(|v| *v += 1);
    }

    fn sampler_loop(&self) {
        let mut g = lock(&self.inner);
        loop {
            if g.stop {
                break;
            }
            if g.session.current().is_none() {
                let since = g.session.iterations_since_change();
                if since < self.iters_per_answer {
                    let k = (self.iters_per_answer - since).min(BATCH);
                    g.session.run(k as usize);
                    g.unsaved = true;
                } else {
                    g.session.query();
                    g.query_id = Some(g.next_id);
                    g.next_id += 1;
                    g.background = self.background_iters;
                    self.bump();
                }
            } else if g.background > 0 {
                let k = g.background.min(BATCH);
                g.session.run(k as usize);
                g.background -= k;
                g.unsaved = true;
            } else if g.unsaved {
                let tree = g.session.tree().clone();
                let iterations = g.base_iterations + g.session.iterations();
                g.unsaved = false;
                drop(g);
                self.save_tree(&tree, iterations);
                g = lock(&self.inner);
                continue;
            } else {
                g = self.wake.wait(g).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            // Let answers in between batches.
            drop(g);
            std::thread::yield_now();
            g = lock(&self.inner);
        }
    }

    fn save_tree(&self, tree: &DdtTree, iterations: u64) {
        let state = tree_state(tree);
        let newick = tree.to_newick(&self.names);
        if let Err(e) = lock(&self.store).save_tree(self.session_id, &state, &newick, iterations) {
            eprintln!("warning: could not save the current tree: {e:#}");
        }
    }

    fn names_of(&self, t: &Triplet) -> Value {
        json!([self.names[t.a], self.names[t.b], self.names[t.c]])
    }

    /// `GET /api/session`.
    pub fn session_json(&self) -> Value {
        let g = lock(&self.inner);
        let s = &g.session;
        let triplets: Vec<Value> = s.constraints().iter().map(|t| self.names_of(t)).collect();
        let sampling = !g.stop && (s.current().is_none() || g.background > 0);
        let mut v = json!({
            "n": self.names.len(),
            "names": self.names,
            "triplets": triplets,
            "answers": s.answers().len(),
            "iterations": g.base_iterations + s.iterations(),
            "strategy": s.strategy().name(),
            "session": self.session_name,
            "sampling": sampling,
            "query_id": g.query_id,
            "last_answer": g.answer_ids.last(),
            "hover": self.hover,
        });
        if let Some(images) = &self.images {
            v["images"] = json!(images);
        }
        v
    }

    /// `GET /api/query` when a query is ready.
    pub fn query_json(&self) -> Option<Value> {
        let g = lock(&self.inner);
        let q = g.session.current()?;
        let id = g.query_id?;
        let points: Vec<&str> = q.points().iter().map(|&p| self.names[p].as_str()).collect();
        Some(json!({
            "id": id,
            "points": points,
            "tree": q.to_newick(&self.names),
            "strategy": q.strategy().name(),
        }))
    }

    /// `GET /api/item/{index}/image`: the picture of point `index` (only with
    /// `--images`; `None`: no such point or no images).
    pub fn image(&self, index: usize) -> Option<&Image> {
        self.files.as_ref()?.get(index)
    }

    /// Whether the server is shutting down.
    pub fn stopping(&self) -> bool {
        lock(&self.inner).stop
    }

    fn point(&self, v: &Value) -> Result<usize, ApiError> {
        let s = v
            .as_str()
            .ok_or_else(|| bad("a triplet is three point names (strings)"))?;
        self.index
            .get(s)
            .copied()
            .ok_or_else(|| bad(format!("{s:?} is not a point name")))
    }

    /// `POST /api/answer`.
    pub fn answer(&self, body: &Value) -> Result<Value, ApiError> {
        let obj = body
            .as_object()
            .ok_or_else(|| bad("the body must be a JSON object"))?;
        if let Some(k) = obj
            .keys()
            .find(|k| !matches!(k.as_str(), "id" | "accept" | "triplet"))
        {
            return Err(bad(format!("unknown field {k:?}")));
        }
        let id = obj
            .get("id")
            .ok_or_else(|| bad("missing \"id\" (the query's id)"))?
            .as_u64()
            .ok_or_else(|| bad("\"id\" must be a non-negative integer"))?;
        let answer = match (obj.get("accept"), obj.get("triplet")) {
            (Some(_), Some(_)) => {
                return Err(bad("give either \"accept\" or \"triplet\", not both"));
            }
            (None, None) => return Err(bad("give \"accept\": true or \"triplet\": [a, b, c]")),
            (Some(a), None) => {
                if a != &Value::Bool(true) {
                    return Err(bad("\"accept\" must be true"));
                }
                Answer::Accept
            }
            (None, Some(t)) => {
                let arr = t
                    .as_array()
                    .filter(|a| a.len() == 3)
                    .ok_or_else(|| bad("\"triplet\" must be [a, b, c]: three point names"))?;
                let (a, b, c) = (
                    self.point(&arr[0])?,
                    self.point(&arr[1])?,
                    self.point(&arr[2])?,
                );
                let t = Triplet::new(a, b, c)
                    .map_err(|_| bad("a triplet needs three different points"))?;
                Answer::Triplet(t)
            }
        };
        let mut g = lock(&self.inner);
        if g.query_id != Some(id) || g.session.current().is_none() {
            return Err(ApiError {
                status: 409,
                body: json!({
                    "error": format!("query {id} is not the current query (it was answered, or the state changed); fetch /api/query"),
                    "current": g.query_id,
                }),
            });
        }
        match g.session.check(&answer) {
            Ok(()) => {}
            Err(Rejection::Conflict(ts)) => {
                let names: Vec<Value> = ts.iter().map(|t| self.names_of(t)).collect();
                let text: Vec<String> = ts
                    .iter()
                    .map(|t| {
                        format!(
                            "({{{}, {}}}, {})",
                            self.names[t.a], self.names[t.b], self.names[t.c]
                        )
                    })
                    .collect();
                return Err(ApiError {
                    status: 409,
                    body: json!({
                        "error": format!(
                            "this triplet contradicts the constraints in force: {}",
                            text.join(", ")
                        ),
                        "conflicts": names,
                    }),
                });
            }
            Err(Rejection::NotInQuery(p)) => {
                return Err(bad(format!(
                    "{:?} is not one of the query's points",
                    self.names[p]
                )));
            }
            Err(e) => return Err(bad(e.to_string())),
        }
        let event = match answer {
            Answer::Accept => Event::Accept { query_id: id },
            Answer::Triplet(t) => Event::Triplet {
                query_id: id,
                a: self.names[t.a].clone(),
                b: self.names[t.b].clone(),
                c: self.names[t.c].clone(),
            },
        };
        let seq = lock(&self.store)
            .append(self.session_id, &event)
            .map_err(internal)?;
        let before = g.session.constraints().len();
        let count = g
            .session
            .apply(answer)
            .map_err(|e| ApiError::new(500, format!("stored but not applied: {e}")))?;
        g.answer_ids.push(seq);
        g.query_id = None;
        g.unsaved = true;
        let answers = g.session.answers().len();
        if count != before {
            self.request_exact(g.session.constraints());
        }
        drop(g);
        self.wake.notify_all();
        self.bump();
        Ok(json!({ "triplets": count, "answers": answers, "answer": seq }))
    }

    /// `POST /api/undo` `{"answer": K}`: takes back answer `K` if it is the
    /// last answer in force (409 otherwise, and nothing changes).
    pub fn undo(&self, body: &Value) -> Result<Value, ApiError> {
        let k = body
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("answer"))
            .and_then(Value::as_u64)
            .ok_or_else(|| {
                bad(
                    "name the answer to take back: {\"answer\": K}, the id POST /api/answer \
                     returned (GET /api/session gives the last one in force as \"last_answer\")",
                )
            })?;
        let mut g = lock(&self.inner);
        let last = g.answer_ids.last().copied();
        if last != Some(k) {
            let why = match last {
                None => "there is no answer in force".to_string(),
                Some(l) => format!("the last answer in force is {l}"),
            };
            return Err(ApiError {
                status: 409,
                body: json!({
                    "error": format!("answer {k} is not the last answer in force ({why}); nothing was undone"),
                    "last_answer": last,
                }),
            });
        }
        lock(&self.store)
            .append(self.session_id, &Event::Undo { answer: Some(k) })
            .map_err(internal)?;
        let before = g.session.constraints().len();
        let undone = g.session.undo();
        g.answer_ids.pop();
        if g.session.constraints().len() != before {
            self.request_exact(g.session.constraints());
        }
        g.query_id = None;
        g.unsaved = true;
        let count = g.session.constraints().len();
        let answers = g.session.answers().len();
        let last = g.answer_ids.last().copied();
        drop(g);
        self.wake.notify_all();
        self.bump();
        let undone = match undone {
            Some(Answer::Triplet(t)) => self.names_of(&t),
            _ => json!("accept"),
        };
        Ok(json!({
            "triplets": count,
            "answers": answers,
            "undone": undone,
            "answer": k,
            "last_answer": last,
        }))
    }

    /// `POST /api/strategy`.
    pub fn strategy(&self, body: &Value) -> Result<Value, ApiError> {
        let name = body
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("strategy"))
            .and_then(Value::as_str)
            .ok_or_else(|| bad("the body must be {\"strategy\": S}"))?;
        let s = Strategy::from_name(name)
            .filter(|s| *s != Strategy::Vanilla)
            .ok_or_else(|| {
                bad(format!(
                    "unknown strategy {name:?}; use random, active, interleaved, simple or smart"
                ))
            })?;
        let mut g = lock(&self.inner);
        if g.session.strategy() != s {
            lock(&self.store)
                .append(self.session_id, &Event::Strategy(s.name().into()))
                .map_err(internal)?;
            g.session.set_strategy(s).map_err(|e| bad(e.to_string()))?;
            g.query_id = None;
            drop(g);
            self.wake.notify_all();
            self.bump();
        }
        Ok(json!({ "strategy": s.name() }))
    }

    /// `GET /api/tree?format=newick`: the current tree, names, branch lengths
    /// in DDT time, every internal node labelled by its support.
    pub fn tree_newick(&self) -> String {
        let g = lock(&self.inner);
        let support = g.session.support();
        g.session
            .tree()
            .to_newick_with_support(&self.names, &support)
    }

    /// `GET /api/tree?format=json`: the current tree (see [`tree_json`]); the
    /// root also says how many trees the support counts over
    /// (`"support_samples"`, at most `"support_window"`, one every
    /// `"support_thin"` iterations).
    pub fn tree_json(&self) -> Value {
        let g = lock(&self.inner);
        let tree = g.session.tree().clone();
        let support = g.session.support();
        let samples = g.session.support_samples();
        drop(g);
        let mut v = tree_json(&tree, &self.names, Some(&support));
        v["support_samples"] = json!(samples);
        v["support_window"] = json!(trellis::ddt::SUPPORT_WINDOW);
        v["support_thin"] = json!(trellis::ddt::SUPPORT_THIN);
        v
    }

    /// `GET /api/export`.
    pub fn export(&self) -> Value {
        let g = lock(&self.inner);
        let triplets: Vec<Value> = g
            .session
            .constraints()
            .iter()
            .map(|t| self.names_of(t))
            .collect();
        json!({
            "session": self.session_name,
            "tree": g.session.tree().to_newick(&self.names),
            "triplets": triplets,
        })
    }

    /// `GET /api/exact?tree=mcc|map`: `"status"` is `ready` (conditioned on
    /// the triplets in force: `"triplets_used"` equals `"triplets_in_force"`),
    /// `recomputing` (the previous result, on `"triplets_used"` triplets,
    /// while the triplets in force are being conditioned on), `computing` (no
    /// result yet), `contradiction` (the triplets cannot all hold), `failed`
    /// or `unavailable` (with a `"reason"`). A result carries `"tree"` (the
    /// `kind` asked for) and `"summary"`, that tree: the maximum-clade-
    /// credibility tree ([`ExactTree::Mcc`], the default) or the MAP tree,
    /// each cluster with its exact marginal `"p"`; `"map"` (the MAP tree,
    /// always) and `"log_credibility"` (the MCC tree's) beside it.
    pub fn exact_json(&self, kind: ExactTree) -> Value {
        let st = lock(&self.exact);
        if let Some(why) = &st.unavailable {
            return json!({ "status": "unavailable", "reason": why });
        }
        let in_force = st.triplets.len();
        let fresh = st.done == st.wanted;
        let mut v = match (&st.result, fresh) {
            (None, _) => json!({ "status": "computing" }),
            (Some(Ok(v)), fresh) => {
                let mut v = v.clone();
                v["status"] = json!(if fresh { "ready" } else { "recomputing" });
                let summary = match kind {
                    ExactTree::Mcc => v
                        .as_object_mut()
                        .and_then(|o| o.remove("mcc"))
                        .unwrap_or(Value::Null),
                    ExactTree::Map => {
                        if let Some(o) = v.as_object_mut() {
                            o.remove("mcc");
                        }
                        v["map"].clone()
                    }
                };
                v["tree"] = json!(kind.name());
                v["summary"] = summary;
                v
            }
            (Some(Err((status, why))), true) => json!({ "status": status, "reason": why }),
            (Some(Err(_)), false) => json!({ "status": "computing" }),
        };
        v["triplets_in_force"] = json!(in_force);
        v
    }

    /// Asks the exact panel for the posterior under `triplets` (the
    /// triplets in force after a change).
    fn request_exact(&self, triplets: &[Triplet]) {
        let mut st = lock(&self.exact);
        if st.unavailable.is_some() {
            return;
        }
        st.wanted += 1;
        st.triplets = triplets.to_vec();
        drop(st);
        self.exact_wake.notify_all();
    }

    /// The exact panel's thread: computes the newest request, discards a
    /// result that a newer request made stale.
    fn exact_loop(&self, rows: Vec<Vec<f64>>) {
        loop {
            let (generation, triplets) = {
                let mut st = lock(&self.exact);
                while !st.stop && st.started == st.wanted {
                    st = self.exact_wake.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                if st.stop {
                    return;
                }
                st.started = st.wanted;
                (st.wanted, st.triplets.clone())
            };
            let cancelled = || {
                let st = lock(&self.exact);
                st.stop || st.wanted != generation
            };
            let result = exact_posterior(rows.clone(), &self.names, &triplets, &cancelled);
            let mut st = lock(&self.exact);
            if st.stop {
                return;
            }
            if st.wanted != generation {
                continue; // stale: a newer request is waiting
            }
            st.result = Some(result.map_err(|e| {
                let contradiction = e.downcast_ref::<trellis::Error>().is_some_and(|e| {
                    matches!(e.kind(), trellis::ErrorKind::UnrealisableTriplets { .. })
                });
                if contradiction {
                    (
                        "contradiction",
                        format!(
                            "the triplets in force contradict each other, so no hierarchy \
                             satisfies them all: {}",
                            trellis::ddt::named_message(
                                e.downcast_ref::<trellis::Error>().expect("checked above"),
                                &self.names
                            )
                        ),
                    )
                } else {
                    ("failed", format!("{e:#}"))
                }
            }));
            st.done = generation;
        }
    }

    pub(crate) fn stop(&self) {
        lock(&self.inner).stop = true;
        lock(&self.exact).stop = true;
        self.exact_wake.notify_all();
        self.wake.notify_all();
        self.bump();
    }
}

/// The background threads; [`Workers::finish`] stops them and saves the tree.
pub struct Workers {
    app: Arc<App>,
    sampler: Option<JoinHandle<()>>,
    exact: Option<JoinHandle<()>>,
}

impl Workers {
    /// Stops the sampler, saves the last tree and waits for the threads.
    pub fn finish(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.app.stop();
        if let Some(h) = self.sampler.take() {
            let _ = h.join();
            let g = lock(&self.app.inner);
            let tree = g.session.tree().clone();
            let iterations = g.base_iterations + g.session.iterations();
            drop(g);
            self.app.save_tree(&tree, iterations);
        }
        if let Some(h) = self.exact.take() {
            // The exact computation sees `stopping` between batches of work
            // (each about a second at most) and cancels.
            let _ = h.join();
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Why a dataset of `n` points gets no exact panel, if it does not: no
/// budget (`exact_seconds` not above 0), or the planner's estimate of every
/// marginal and the MCC tree under triplets (hcc keeps its blocked kernel
/// under them) beyond `exact_seconds` or the memory available.
fn exact_unavailable(n: usize, config: &Config) -> Option<String> {
    use trellis::plan::{Budget, Task, default_threads, estimate_constrained};
    if config.exact_seconds.is_nan() || config.exact_seconds <= 0.0 {
        return Some(format!(
            "the exact panel is turned off: this server's budget for it is {} s",
            config.exact_seconds
        ));
    }
    let budget = Budget {
        memory_bytes: None,
        seconds: Some(config.exact_seconds),
    };
    // Every marginal and the MCC tree's own pass (the panel's default tree).
    match estimate_constrained(
        n,
        trellis::models::ModelName::Hcc,
        Task::Mcc,
        default_threads(),
    ) {
        Ok(e) if e.fits(&budget) => None,
        Ok(e) => Some(format!(
            "the exact posterior under triplets is beyond this server's budget of {} s: {e}",
            config.exact_seconds
        )),
        Err(e) => Some(e.to_string()),
    }
}

/// The exact posterior of the library's default recipe for points
/// (`trellis::models::recipe_weights`, as `trellis demo`) restricted to the
/// hierarchies in which every triplet holds
/// ([`trellis::constraints::Constrained`]; none: the model itself): the MAP
/// tree and the maximum-clade-credibility tree (`Posterior::mcc_tree`: one
/// more max-plus pass over the trellis, on the log marginals), each cluster
/// with its marginal probability, and the most probable clusters. Cancelled (an error) between batches of work once `stop`
/// returns true.
fn exact_posterior(
    rows: Vec<Vec<f64>>,
    names: &[String],
    triplets: &[Triplet],
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Value> {
    let d = rows[0].len();
    let weights = trellis::models::recipe_weights(&trellis::Matrix::from_rows(rows)?)?;
    let progress = |_: trellis::Progress<'_>| {
        if stop() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let options = trellis::Options::default().with_progress(&progress);
    let model = trellis::Hcc::new(&weights, trellis::models::RECIPE_BETA)?;
    let need = trellis::posterior::Need::All;
    let model = trellis::models::CostModel::Hcc(model);
    let post = trellis::engines::dense(model, triplets.to_vec(), need, &options)?;
    let map = post.map()?.tree;
    let map_clusters = map.clusters();
    let support: HashMap<Vec<usize>, f64> = map_clusters
        .iter()
        .cloned()
        .zip(post.support(&map_clusters, &options)?)
        .collect();
    let mcc = post.mcc_tree(&options)?;
    let mcc_tree = mcc
        .to_binary()
        .ok_or_else(|| anyhow::anyhow!("the MCC tree is not binary"))?;
    let mcc_support: HashMap<Vec<usize>, f64> = mcc
        .clades()
        .iter()
        .map(|c| (c.members.clone(), c.p))
        .collect();
    let n = names.len();
    /// A tree as JSON: internal nodes `{"height", "p", "children"}` (the
    /// height by cluster size, `p` the marginal; the root's 1), leaves
    /// `{"name", "height": 0}`.
    fn go(t: &Tree, support: &HashMap<Vec<usize>, f64>, n: usize, names: &[String]) -> Value {
        match t {
            Tree::Leaf(i) => json!({ "name": names[*i], "height": 0.0 }),
            Tree::Node(l, r) => {
                let mut members = t.leaves();
                members.sort_unstable();
                let size = members.len() as f64;
                json!({
                    "height": (size - 1.0) / (n as f64 - 1.0),
                    "p": support.get(&members).copied().unwrap_or(1.0),
                    "children": [go(l, support, n, names), go(r, support, n, names)],
                })
            }
        }
    }
    let clusters: Vec<Value> = post
        .cluster_marginals(0.0, &options)?
        .into_iter()
        .take(10)
        .map(|(c, p)| {
            let members: Vec<&str> = c.iter().map(|&i| names[i].as_str()).collect();
            json!({ "members": members, "p": p })
        })
        .collect();
    let used: Vec<Value> = triplets
        .iter()
        .map(|t| json!([names[t.a], names[t.b], names[t.c]]))
        .collect();
    Ok(json!({
        "model": trellis::models::recipe_description(d),
        "n": n,
        "log_z": post.log_z()?,
        "map": go(&map, &support, n, names),
        "mcc": go(&mcc_tree, &mcc_support, n, names),
        "log_credibility": mcc.log_credibility(),
        "clusters": clusters,
        "triplets_used": triplets.len(),
        "triplets": used,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contradicting triplets (which consistent answers never give) are an
    /// error the panel reports as a contradiction, naming the points.
    #[test]
    fn contradicting_triplets_are_an_unrealisable_error() {
        let rows: Vec<Vec<f64>> = (0..5).map(|i| vec![i as f64, 0.5 * i as f64]).collect();
        let names: Vec<String> = (0..5).map(|i| format!("p{i}")).collect();
        let t = |a, b, c| Triplet::new(a, b, c).unwrap();
        let e = exact_posterior(rows.clone(), &names, &[t(0, 1, 2), t(0, 2, 1)], &|| false)
            .unwrap_err();
        let e = e.downcast_ref::<trellis::Error>().expect("a library error");
        assert!(matches!(
            e.kind(),
            trellis::ErrorKind::UnrealisableTriplets { .. }
        ));
        assert!(trellis::ddt::named_message(e, &names).contains("p0"));
        let ok = exact_posterior(rows, &names, &[t(0, 1, 2)], &|| false).unwrap();
        assert_eq!(ok["triplets_used"], 1);
    }
}
