//! The SQLite store: sessions, their answers as an append-only event log, and
//! the last tree.
//!
//! One database holds any number of sessions (by name). A session records its
//! data file's path and SHA-256, its model settings (JSON), the strategy it began
//! with, and the last tree the sampler saved. Every answer, undo and strategy
//! change is one row of `events`, appended in its own transaction and committed
//! (WAL, `synchronous = FULL`: durable once `commit` returns) before the server
//! confirms it. Nothing is ever updated in place or deleted in `events`: the
//! answers in force are the replay of the log (an undo pops the last answer).

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};

/// Schema version in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    data_path   TEXT NOT NULL,
    data_sha256 TEXT NOT NULL,
    settings    TEXT NOT NULL,
    strategy    TEXT NOT NULL,
    created_ms  INTEGER NOT NULL,
    starts      INTEGER NOT NULL DEFAULT 0,
    iterations  INTEGER NOT NULL DEFAULT 0,
    last_tree   TEXT,
    last_newick TEXT,
    saved_ms    INTEGER
);
CREATE TABLE IF NOT EXISTS events (
    session_id  INTEGER NOT NULL REFERENCES sessions(id),
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('accept', 'triplet', 'undo', 'strategy')),
    query_id    INTEGER,
    a           TEXT,
    b           TEXT,
    c           TEXT,
    strategy    TEXT,
    at_ms       INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
);
";

/// One stored event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The person accepted the query.
    Accept { query_id: u64 },
    /// The person answered `({a, b}, c)` (point names).
    Triplet {
        query_id: u64,
        a: String,
        b: String,
        c: String,
    },
    /// The last answer in force was taken back.
    Undo,
    /// The query strategy changed.
    Strategy(String),
}

/// A session as stored.
#[derive(Clone, Debug)]
pub struct Stored {
    pub id: i64,
    /// How many times a server opened it (this start included).
    pub starts: u64,
    /// Chain iterations recorded with the last tree.
    pub iterations: u64,
    /// The strategy it began with.
    pub strategy: String,
    /// The last tree saved (JSON: topology and `1 - t`), if any.
    pub last_tree: Option<String>,
    /// Every event, oldest first.
    pub events: Vec<Event>,
}

/// What identifies a session's data and model.
pub struct Identity<'a> {
    pub name: &'a str,
    pub data_path: &'a str,
    pub data_sha256: &'a str,
    /// Model settings, JSON (compared as values).
    pub settings: &'a serde_json::Value,
    /// The strategy of a new session.
    pub strategy: &'a str,
}

/// The database connection.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Store {
    /// Opens (creating when missing) the database at `path`: WAL journal,
    /// `synchronous = FULL`, foreign keys on.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the database {}", path.display()))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .with_context(|| format!("{} is not a usable SQLite database", path.display()))?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!(
                "{}: cannot switch the journal to WAL (got {mode})",
                path.display()
            );
        }
        conn.execute_batch(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
        )?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            bail!(
                "{} was written by a newer trellis (schema {version}, this one knows {SCHEMA_VERSION})",
                path.display()
            );
        }
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
        Ok(Store { conn })
    }

    /// The session `who.name`, created when missing; an existing one must have
    /// the same data hash and settings. Counts this start.
    pub fn session(&mut self, who: &Identity<'_>) -> Result<Stored> {
        let tx = self.conn.transaction()?;
        let row = tx
            .query_row(
                "SELECT id, data_path, data_sha256, settings, strategy, starts, iterations, last_tree
                 FROM sessions WHERE name = ?1",
                params![who.name],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, i64>(6)?,
                        r.get::<_, Option<String>>(7)?,
                    ))
                },
            )
            .optional()?;
        let stored = match row {
            Some((id, path, hash, settings, strategy, starts, iterations, last_tree)) => {
                if hash != who.data_sha256 {
                    bail!(
                        "the data file {} has changed since session {:?} began (it was {path} with \
                         SHA-256 {hash}, it is now {}): use the original file, or start another \
                         session with --session NAME",
                        who.data_path,
                        who.name,
                        who.data_sha256
                    );
                }
                let old: serde_json::Value = serde_json::from_str(&settings)
                    .context("the stored session settings are not JSON")?;
                if &old != who.settings {
                    bail!(
                        "session {:?} was started with other model settings ({}); now {}: pass \
                         the same options, or start another session with --session NAME",
                        who.name,
                        old,
                        who.settings
                    );
                }
                tx.execute(
                    "UPDATE sessions SET starts = starts + 1 WHERE id = ?1",
                    params![id],
                )?;
                Stored {
                    id,
                    starts: starts as u64 + 1,
                    iterations: iterations as u64,
                    strategy,
                    last_tree,
                    events: Vec::new(),
                }
            }
            None => {
                tx.execute(
                    "INSERT INTO sessions (name, data_path, data_sha256, settings, strategy, created_ms, starts)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1)",
                    params![
                        who.name,
                        who.data_path,
                        who.data_sha256,
                        who.settings.to_string(),
                        who.strategy,
                        now_ms()
                    ],
                )?;
                Stored {
                    id: tx.last_insert_rowid(),
                    starts: 1,
                    iterations: 0,
                    strategy: who.strategy.to_string(),
                    last_tree: None,
                    events: Vec::new(),
                }
            }
        };
        let mut stored = stored;
        stored.events = events(&tx, stored.id)?;
        tx.commit()?;
        Ok(stored)
    }

    /// Appends an event; durable when this returns.
    pub fn append(&mut self, session: i64, event: &Event) -> Result<u64> {
        let tx = self.conn.transaction()?;
        let seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = ?1",
            params![session],
            |r| r.get(0),
        )?;
        let (kind, q, a, b, c, s) = match event {
            Event::Accept { query_id } => {
                ("accept", Some(*query_id as i64), None, None, None, None)
            }
            Event::Triplet { query_id, a, b, c } => (
                "triplet",
                Some(*query_id as i64),
                Some(a.as_str()),
                Some(b.as_str()),
                Some(c.as_str()),
                None,
            ),
            Event::Undo => ("undo", None, None, None, None, None),
            Event::Strategy(s) => ("strategy", None, None, None, None, Some(s.as_str())),
        };
        tx.execute(
            "INSERT INTO events (session_id, seq, kind, query_id, a, b, c, strategy, at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![session, seq, kind, q, a, b, c, s, now_ms()],
        )?;
        tx.commit()?;
        Ok(seq as u64)
    }

    /// Saves the last tree (JSON and Newick) and the iteration count.
    pub fn save_tree(
        &mut self,
        session: i64,
        tree: &str,
        newick: &str,
        iterations: u64,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE sessions SET last_tree = ?2, last_newick = ?3, iterations = ?4, saved_ms = ?5
             WHERE id = ?1",
            params![session, tree, newick, iterations as i64, now_ms()],
        )?;
        Ok(())
    }
}

fn events(conn: &Connection, session: i64) -> Result<Vec<Event>> {
    let mut stmt = conn.prepare(
        "SELECT kind, query_id, a, b, c, strategy FROM events WHERE session_id = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![session], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<i64>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (kind, q, a, b, c, s) = row?;
        let q = q.unwrap_or(0) as u64;
        out.push(match (kind.as_str(), a, b, c, s) {
            ("accept", ..) => Event::Accept { query_id: q },
            ("triplet", Some(a), Some(b), Some(c), _) => Event::Triplet {
                query_id: q,
                a,
                b,
                c,
            },
            ("undo", ..) => Event::Undo,
            ("strategy", _, _, _, Some(s)) => Event::Strategy(s),
            (k, ..) => bail!("a malformed {k:?} event in the database"),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_is_wal_with_synchronous_full() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let mode: String = store
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = store
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 2, "synchronous = FULL");
    }

    #[test]
    fn undo_is_an_event_and_nothing_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let settings = serde_json::json!({"c": 1});
        let who = Identity {
            name: "s",
            data_path: "d.csv",
            data_sha256: "00",
            settings: &settings,
            strategy: "active",
        };
        let mut store = Store::open(&path).unwrap();
        let id = store.session(&who).unwrap().id;
        let t = Event::Triplet {
            query_id: 1,
            a: "x".into(),
            b: "y".into(),
            c: "z".into(),
        };
        for e in [t.clone(), Event::Undo, Event::Strategy("smart".into())] {
            store.append(id, &e).unwrap();
        }
        store.save_tree(id, "{}", "(x,y);", 42).unwrap();
        drop(store);
        let mut store = Store::open(&path).unwrap();
        let s = store.session(&who).unwrap();
        assert_eq!(
            s.events,
            vec![t, Event::Undo, Event::Strategy("smart".into())]
        );
        assert_eq!((s.starts, s.iterations), (2, 42));
        assert_eq!(s.last_tree.as_deref(), Some("{}"));
        // Another data hash is refused with a message naming both.
        let other = Identity {
            data_sha256: "11",
            ..who
        };
        let e = format!("{:#}", store.session(&other).unwrap_err());
        assert!(
            e.contains("has changed since session") && e.contains("11"),
            "{e}"
        );
    }
}
