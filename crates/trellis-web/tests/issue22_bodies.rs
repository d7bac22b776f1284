//! Issue 22: random JSON values and random strings posted as the body of
//! every POST endpoint (`/api/answer`, `/api/undo`, `/api/strategy`) get a
//! 4xx with a JSON error body, never a 5xx or a dropped connection; a body
//! that happens to be a valid request gets its 200. The session works
//! afterwards: a query, an answer, an undo and a change of strategy.

use std::net::SocketAddr;

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};
use serde_json::{Value, json};
use trellis::ddt::Strategy as Ddt;

use super::{config, get, names, post, post_text, query, start, twelve};

/// The strategies `POST /api/strategy` accepts.
const STRATEGIES: [&str; 5] = ["random", "active", "interleaved", "simple", "smart"];

/// Strings that mean something to the endpoints, and some that nearly do.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "a0",
            "a1",
            "b0",
            "b5",
            "zz",
            "random",
            "active",
            "interleaved",
            "simple",
            "smart",
            "vanilla",
            "Simple",
            "",
            " ",
            "true",
        ])
        .prop_map(String::from),
        "\\PC{0,8}",
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["id", "accept", "triplet", "strategy", "answer", "all", "extra"])
            .prop_map(String::from),
        1 => "\\PC{0,6}",
    ]
}

/// Any JSON value, with small integers (like query ids), extreme numbers,
/// point names and strategy names among the leaves.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u64..6).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        word().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Objects shaped like the requests: known keys, plausible values (a
/// triplet of names, an id, `true`), one to three of them.
fn request_like() -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        (0u64..6).prop_map(|id| ("id".to_string(), Value::from(id))),
        (0u64..6).prop_map(|k| ("answer".to_string(), Value::from(k))),
        any::<bool>().prop_map(|b| ("accept".to_string(), Value::from(b))),
        prop::collection::vec(word().prop_map(Value::from), 0..5)
            .prop_map(|t| ("triplet".to_string(), Value::Array(t))),
        word().prop_map(|s| ("strategy".to_string(), Value::from(s))),
        (key(), value()),
    ];
    prop::collection::vec(field, 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

/// Answers that are valid or nearly: an id, and `accept` or a triplet of
/// point names (possibly repeated, or not in the query), or both.
fn answer_like() -> impl Strategy<Value = Value> {
    let point = prop::sample::select(vec![
        "a0", "a1", "a2", "a3", "a4", "a5", "b0", "b1", "b2", "b3", "b4", "b5",
    ]);
    (
        0u64..6,
        prop::collection::vec(point, 3),
        0u8..4,
        prop::option::of((key(), value())),
    )
        .prop_map(|(id, t, how, extra)| {
            let mut v = match how {
                0 => json!({"id": id, "accept": true}),
                1 => json!({"id": id, "accept": true, "triplet": t}),
                _ => json!({"id": id, "triplet": t}),
            };
            if let (Some((k, x)), 3) = (extra, how) {
                v[k] = x;
            }
            v
        })
}

/// A body: JSON (any value or request-shaped) or a string that is mostly
/// not JSON (truncated JSON, random text, blanks).
fn body() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => value().prop_map(|v| v.to_string()),
        3 => request_like().prop_map(|v| v.to_string()),
        3 => answer_like().prop_map(|v| v.to_string()),
        1 => request_like().prop_map(|v| {
            let s = v.to_string();
            s.chars().take(s.chars().count() / 2).collect::<String>()
        }),
        1 => "\\PC{0,40}",
        1 => "[\\[\\]{}\":, 0-9a-z.-]{0,30}",
        1 => prop::sample::select(vec!["", " ", "\n", "{}", "null", "[]", "{\"id\":}"])
            .prop_map(String::from),
    ]
}

/// Whether `p` names one of the twelve points (`a0`..`a5`, `b0`..`b5`).
fn is_point(p: &str) -> bool {
    matches!(p.as_bytes(), [b'a' | b'b', b'0'..=b'5'])
}

/// Whether `body` is a request `endpoint` must accept (the state allowing).
fn valid(endpoint: &str, body: &str) -> bool {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    match endpoint {
        "/api/undo" => parsed
            .is_some_and(|v| v.as_object().is_some_and(|o| o.len() == 1) && v["answer"].is_u64()),
        "/api/strategy" => parsed.is_some_and(|v| {
            v.as_object().is_some_and(|o| o.len() == 1)
                && v["strategy"]
                    .as_str()
                    .is_some_and(|s| STRATEGIES.contains(&s))
        }),
        _ => parsed.is_some_and(|v| {
            let Some(o) = v.as_object() else {
                return false;
            };
            let keys_known = o
                .keys()
                .all(|k| ["id", "accept", "triplet"].contains(&k.as_str()));
            let answer = match (o.get("accept"), o.get("triplet")) {
                (Some(a), None) => a == &Value::Bool(true),
                (None, Some(t)) => t.as_array().is_some_and(|t| {
                    t.len() == 3 && t.iter().all(|p| p.as_str().is_some_and(is_point))
                }),
                _ => false,
            };
            keys_known && o.get("id").is_some_and(Value::is_u64) && answer
        }),
    }
}

/// The verdict on one POST: a 4xx with `{"error": "..."}`, or a 200 for a
/// valid request; for `/api/strategy` and `/api/undo`, exactly which.
fn check(endpoint: &str, body: &str, status: u16, reply: &Value) -> Result<(), TestCaseError> {
    let ok = valid(endpoint, body);
    let what = format!("POST {endpoint} {body:?} -> {status} {reply}");
    match status {
        200 => {
            prop_assert!(ok, "accepted an invalid body: {}", what);
            prop_assert!(reply.get("error").is_none(), "{}", what);
        }
        400..=499 => {
            let message = reply["error"].as_str().unwrap_or("");
            prop_assert!(!message.is_empty(), "no JSON error message: {}", what);
            match endpoint {
                "/api/strategy" => prop_assert!(!ok, "refused a valid strategy: {}", what),
                "/api/undo" => prop_assert!(status == if ok { 409 } else { 400 }, "undo: {}", what),
                _ => {}
            }
        }
        _ => return Err(TestCaseError::fail(format!("neither 200 nor 4xx: {what}"))),
    }
    Ok(())
}

fn fuzz_endpoint(addr: SocketAddr, endpoint: &'static str) {
    let mut runner = TestRunner::new(RunnerConfig {
        cases: 100,
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    runner
        .run(&body(), |body| {
            let (status, reply) = post_text(addr, endpoint, &body);
            check(endpoint, &body, status, &reply)
        })
        .unwrap_or_else(|e| panic!("{endpoint}: {e}"));
}

#[test]
fn issue22_random_bodies_get_4xx_and_the_session_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path(), twelve(dir.path()));
    c.strategy = Ddt::Simple;
    c.background_iters = 200;
    let server = start(&c);
    let addr = server.addr;
    for endpoint in ["/api/answer", "/api/undo", "/api/strategy"] {
        fuzz_endpoint(addr, endpoint);
        // The session answers between endpoints.
        let (status, s) = get(addr, "/api/session");
        assert_eq!((status, &s["n"]), (200, &json!(12)), "{s}");
    }
    // And works: a query, an answer, an undo, a strategy.
    let (status, r) = post(addr, "/api/strategy", &json!({"strategy": "simple"}));
    assert_eq!((status, r), (200, json!({"strategy": "simple"})));
    let q = query(addr);
    assert_eq!(names(&q["points"]).len(), 3, "{q}");
    let before = get(addr, "/api/session").1["answers"].as_u64().unwrap();
    let (status, r) = post(addr, "/api/answer", &json!({"id": q["id"], "accept": true}));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["answers"].as_u64(), Some(before + 1), "{r}");
    let (status, r) = post(addr, "/api/undo", &json!({"answer": r["answer"]}));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["undone"], "accept");
    let (status, r) = post(addr, "/api/strategy", &json!({"strategy": "smart"}));
    assert_eq!((status, r), (200, json!({"strategy": "smart"})));
    assert!(
        query(addr)["tree"]
            .as_str()
            .is_some_and(|t| t.ends_with(';'))
    );
    server.stop().unwrap();
}
