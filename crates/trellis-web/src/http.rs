//! The HTTP layer: routes, the request guard and the JSON error bodies.
//!
//! Every request passes the guard first: a `Host` other than the server's own
//! loopback name and port is refused (403; DNS rebinding), as is a foreign
//! `Origin`; a POST whose `Content-Type` is not `application/json` gets 415 (a
//! foreign page cannot send one without a CORS preflight, which is never
//! granted). Bodies over [`BODY_LIMIT`] get 413, unknown paths 404. The core
//! work runs on the blocking pool: an answer waits for its SQLite commit.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::app::{ApiError, App, ExactTree};

/// Largest request body accepted (bytes).
pub const BODY_LIMIT: usize = 16 * 1024;

/// How long `GET /api/query` waits for the sampler before answering 503.
const QUERY_WAIT: Duration = Duration::from_secs(10);

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");

#[derive(Clone)]
struct Guard {
    hosts: Vec<String>,
    origins: Vec<String>,
}

/// The router of the app served on 127.0.0.1:`port`.
pub fn router(app: Arc<App>, port: u16) -> Router {
    let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if port == 80 {
        hosts.extend(["127.0.0.1".to_string(), "localhost".to_string()]);
    }
    let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
    let guard = Guard { hosts, origins };
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) }),
        )
        .route("/api/session", get(session))
        .route("/api/query", get(query))
        .route("/api/answer", post(answer))
        .route("/api/undo", post(undo))
        .route("/api/strategy", post(strategy))
        .route("/api/tree", get(tree))
        .route("/api/export", get(export))
        .route("/api/exact", get(exact))
        .route("/api/item/{index}/image", get(item_image))
        .fallback(|| async { error(404, "no such page or endpoint") })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn_with_state(guard, guard_layer))
        .with_state(app)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn error(status: u16, message: &str) -> Response {
    ApiError::new(status, message).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.body)).into_response()
    }
}

async fn guard_layer(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| guard.hosts.iter().any(|x| x.eq_ignore_ascii_case(h))) {
        return error(
            403,
            "forbidden: the Host header must name this server (127.0.0.1 or localhost and its port)",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .is_ok_and(|o| guard.origins.iter().any(|x| x.eq_ignore_ascii_case(o)));
        if !ok {
            return error(
                403,
                "forbidden: requests from other origins are not accepted",
            );
        }
    }
    if req.method() == Method::POST && !is_json(headers) {
        return error(415, "POST bodies must have Content-Type: application/json");
    }
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    // A route may set a stricter policy of its own (the images do).
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; \
                 frame-ancestors 'none'; form-action 'none'",
            ),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// The JSON body of a POST (`{}` when empty).
fn body_json(body: Result<Bytes, BytesRejection>, empty_ok: bool) -> Result<Value, ApiError> {
    let bytes = body.map_err(|e| {
        let status = e.status().as_u16();
        if status == 413 {
            ApiError::new(413, format!("the body is larger than {BODY_LIMIT} bytes"))
        } else {
            ApiError::new(400, format!("cannot read the body: {e}"))
        }
    })?;
    if empty_ok && bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::new(400, format!("the body is not valid JSON: {e}")))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(500, format!("internal error: {e}")))?
}

async fn session(State(app): State<Arc<App>>) -> Response {
    axum::Json(app.session_json()).into_response()
}

async fn query(State(app): State<Arc<App>>) -> Response {
    let mut rx = app.subscribe();
    let deadline = tokio::time::Instant::now() + QUERY_WAIT;
    loop {
        rx.borrow_and_update();
        if let Some(q) = app.query_json() {
            return axum::Json(q).into_response();
        }
        if app.stopping() {
            return error(503, "the server is shutting down");
        }
        match tokio::time::timeout_at(deadline, rx.changed()).await {
            Ok(Ok(())) => continue,
            _ => {
                let mut res = error(
                    503,
                    "the sampler has not finished the next query yet; try again",
                );
                res.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return res;
            }
        }
    }
}

async fn answer(State(app): State<Arc<App>>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body_json(body, false) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    match blocking(move || app.answer(&body)).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn undo(State(app): State<Arc<App>>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body_json(body, true) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    match blocking(move || app.undo(&body)).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn strategy(State(app): State<Arc<App>>, body: Result<Bytes, BytesRejection>) -> Response {
    let body = match body_json(body, false) {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    match blocking(move || app.strategy(&body)).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

#[derive(serde::Deserialize)]
struct TreeParams {
    format: Option<String>,
}

async fn tree(
    State(app): State<Arc<App>>,
    params: Result<Query<TreeParams>, QueryRejection>,
) -> Response {
    let Ok(Query(params)) = params else {
        return error(
            400,
            "unknown query parameters; use ?format=newick or ?format=json",
        );
    };
    match params.format.as_deref() {
        None | Some("json") => axum::Json(app.tree_json()).into_response(),
        Some("newick") => (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            app.tree_newick() + "\n",
        )
            .into_response(),
        Some(f) => error(400, &format!("unknown format {f:?}; use newick or json")),
    }
}

async fn export(State(app): State<Arc<App>>) -> Response {
    axum::Json(app.export()).into_response()
}

#[derive(serde::Deserialize)]
struct ExactParams {
    tree: Option<String>,
}

/// `GET /api/exact?tree=mcc|map` (default `mcc`): see [`App::exact_json`].
async fn exact(
    State(app): State<Arc<App>>,
    params: Result<Query<ExactParams>, QueryRejection>,
) -> Response {
    let Ok(Query(params)) = params else {
        return error(400, "unknown query parameters; use ?tree=mcc or ?tree=map");
    };
    let kind = match params.tree.as_deref() {
        None => ExactTree::Mcc,
        Some(name) => match ExactTree::parse(name) {
            Some(k) => k,
            None => {
                return error(
                    400,
                    &format!("unknown tree {name:?}; use mcc (maximum clade credibility) or map"),
                );
            }
        },
    };
    axum::Json(app.exact_json(kind)).into_response()
}

/// `GET /api/item/{index}/image`: the picture of point `index` (0-based, the
/// order of the CSV and of `/api/session`'s `names`), from the files checked
/// and read at start (`--images`); 404 for any other index or without
/// `--images`. The policy sandboxes the image: an SVG opened on its own runs
/// no script.
async fn item_image(
    State(app): State<Arc<App>>,
    index: Result<axum::extract::Path<String>, axum::extract::rejection::PathRejection>,
) -> Response {
    let Some(i) = index.ok().and_then(|p| p.0.parse::<usize>().ok()) else {
        return error(404, "no such item: the index is a 0-based point number");
    };
    match app.image(i) {
        Some(img) => (
            [
                (header::CONTENT_TYPE, img.content_type),
                (
                    header::CONTENT_SECURITY_POLICY,
                    "default-src 'none'; style-src 'unsafe-inline'; sandbox",
                ),
            ],
            img.bytes.clone(),
        )
            .into_response(),
        None => error(
            404,
            "no image for this item (the server was started without --images, or there is no \
             such point)",
        ),
    }
}
