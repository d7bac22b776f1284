//! `trellis interactive serve`: a local web app in which a person steers the
//! hierarchy (Vikram & Dasgupta, *Interactive Bayesian Hierarchical
//! Clustering*, §1, §3).
//!
//! A thin layer over [`trellis::ddt::Session`]: the DDT sampler runs in a
//! background thread, the page shows the current query `T|S` and sends the
//! person's answers (accept, or a triplet), which are committed to SQLite
//! before they are confirmed. The page (`assets/`: HTML, CSS and hand-written
//! JavaScript with its own SVG dendrogram layout, no third-party code) is
//! embedded in the binary; the server reads no file but the data file and,
//! with `--images`, the image files it names (checked and read once, at
//! start: [`images`]) and writes none but its database (besides an empty file, created and
//! removed at once, that checks the database's directory can be written, a
//! copy of a write-ahead log that a crash left damaged, and the session's lock
//! file, which holds the one-writer lease and is removed on a clean stop:
//! [`store`]). It binds its port before it takes the lease and opens the
//! database, so a server that cannot listen creates and writes nothing; a
//! second server on the same session is refused (the lease, [`store::Lease`]).
//!
//! - [`app`]: the core (data, session, sampler thread, exact posterior);
//! - [`http`]: routes and the request guard;
//! - [`images`]: the items' pictures (`--images`);
//! - [`store`]: the SQLite store.

pub mod app;
pub mod http;
pub mod images;
pub mod store;

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};

use anyhow::{Context, Result};

pub use app::{App, Config, ExactTree};

/// Serves until Ctrl-C (SIGINT) or SIGTERM; calls `ready` with the address once
/// the socket accepts connections. Every confirmed answer is already stored;
/// on the way out the sampler stops and the last tree is saved.
pub fn serve(config: &Config, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    serve_until(config, ready, shutdown_signal())
}

/// As [`serve`], stopping when `stop` completes.
pub fn serve_until(
    config: &Config,
    ready: impl FnOnce(SocketAddr),
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    // The port first: a server that cannot listen has not created or
    // written its database.
    let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, config.port))
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", config.port))?;
    let (app, workers) = App::start(config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result: Result<()> = runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let addr = listener.local_addr()?;
        let router = http::router(app.clone(), addr.port());
        ready(addr);
        let on_stop = app.clone();
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                stop.await;
                on_stop.stop();
            })
            .await
            .context("the server failed")?;
        Ok(())
    });
    workers.finish();
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    result
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// A server running on its own thread (for tests and benchmarks).
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

impl Running {
    /// Starts a server on a thread and waits until it accepts connections.
    pub fn start(config: Config) -> Result<Running> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let ready = tx.clone();
            let r = serve_until(
                &config,
                move |addr| {
                    let _ = ready.send(Ok(addr));
                },
                async move {
                    let _ = stop_rx.await;
                },
            );
            if let Err(e) = &r {
                let _ = tx.send(Err(anyhow::anyhow!("{e:#}")));
            }
            r
        });
        let addr = rx
            .recv()
            .context("the server thread ended before it was ready")??;
        Ok(Running {
            addr,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Stops the server (as Ctrl-C does) and waits for it.
    pub fn stop(mut self) -> Result<()> {
        self.halt()
    }

    fn halt(&mut self) -> Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow::anyhow!("the server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}
