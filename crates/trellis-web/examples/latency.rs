//! The time from an answer to the next query, through the HTTP API of a server
//! on loopback: `POST /api/answer` sent until `GET /api/query` has returned the
//! next query (the commit, at least `--iters-per-answer` = 100 iterations, the
//! query). Answers alternate accepts and triplets over the shown points
//! (`({p0, p2}, p1)`, a rebuild when the tree disagrees; an accept instead when
//! it contradicts the constraints). Prints the median and the worst.
//!
//! ```sh
//! cargo run --release -p trellis-web --example latency -- examples/iris.csv [ANSWERS] [STRATEGY]
//! ```

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Instant;

use serde_json::{Value, json};
use trellis::Named;
use trellis::ddt::Strategy;
use trellis_web::{Config, Running};

fn call(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).expect("connect");
    let body = body.map(Value::to_string).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    s.write_all(req.as_bytes()).expect("send");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let points = args
        .first()
        .map(String::as_str)
        .unwrap_or("examples/iris.csv");
    let answers: usize = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(100);
    let strategy = match args.get(2) {
        Some(s) => Strategy::from_name(s).ok_or_else(|| anyhow::anyhow!("unknown strategy {s}"))?,
        None => Strategy::Active,
    };
    let dir = std::env::temp_dir().join(format!("trellis-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let config = Config {
        db: dir.join("latency.sqlite"),
        port: 0,
        sigma: "1/9".into(),
        strategy,
        ..Config::new(points.into())
    };
    let server = Running::start(config)?;
    let addr = server.addr;
    let (_, mut q) = call(addr, "GET", "/api/query", None);
    let mut times = Vec::with_capacity(answers);
    let mut rebuilt = 0;
    for k in 0..answers {
        let p: Vec<String> = q["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|x| x.as_str().unwrap_or_default().to_string())
            .collect();
        let t = Instant::now();
        let mut status = 0;
        if k % 2 == 1 {
            let body = json!({"id": q["id"], "triplet": [p[0], p[2], p[1]]});
            status = call(addr, "POST", "/api/answer", Some(&body)).0;
            rebuilt += (status == 200) as usize;
        }
        if status != 200 {
            let (s, r) = call(
                addr,
                "POST",
                "/api/answer",
                Some(&json!({"id": q["id"], "accept": true})),
            );
            anyhow::ensure!(s == 200, "accept failed: {s} {r}");
        }
        let (s, next) = call(addr, "GET", "/api/query", None);
        anyhow::ensure!(s == 200, "no next query: {s} {next}");
        times.push(t.elapsed().as_secs_f64() * 1e3);
        q = next;
    }
    let (_, session) = call(addr, "GET", "/api/session", None);
    server.stop()?;
    let _ = std::fs::remove_dir_all(&dir);
    times.sort_by(f64::total_cmp);
    let m = times.len();
    let median = if m % 2 == 0 {
        (times[m / 2 - 1] + times[m / 2]) / 2.0
    } else {
        times[m / 2]
    };
    println!(
        "{} points, strategy {}, {m} answers ({rebuilt} triplets accepted, {} in force): \
         answer -> next query median {median:.1} ms, worst {:.1} ms",
        session["n"],
        strategy.name(),
        session["triplets"].as_array().map_or(0, Vec::len),
        times[m - 1]
    );
    Ok(())
}
