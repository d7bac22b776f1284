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
//! An answer's id is its `seq` in the log; an undo records the id of the
//! answer it took back (`undoes`; the rows of databases from before that
//! column have none, and pop the last answer).
//!
//! **One writer per session.** [`Lease::acquire`] takes an exclusive OS file
//! lock ([`std::fs::File::try_lock`]: `flock` on Unix, `LockFileEx` on
//! Windows) on a lock file beside the database, one per session
//! (`<db>.lock-<12 hex digits of the SHA-256 of the session's name>`), before
//! the database is opened; a second server on the same database and session
//! is refused with the first one's process id, host and start time (which the
//! holder writes into the lock file on Unix, and beside it, into
//! `<lock file>.holder`, elsewhere: a Windows lock is mandatory, and no other
//! process can read the locked file). The operating system drops the lock
//! when its process ends, however it ends: after `kill -9` (or the Task
//! Manager's end task) the next server takes the lease at once. (A lease row
//! in the database with a heartbeat would either lock a killed server's
//! session until the heartbeat expires, or need a liveness check of another
//! process that a reused process id defeats.) On Unix a clean stop removes
//! the lock file while it still holds the lock; a server that locked a file
//! just removed (its path now names another file, or none: compared by
//! device and inode) drops it and locks the path again, so two servers never
//! hold locks on two different files of one session. On other systems the
//! lock file is left in place when the server stops (only its holder note is
//! removed): without that identity check, removing it could let two servers
//! lock two files of one path.
//!
//! Before SQLite touches the path, [`Store::open`] checks it: an existing
//! SQLite file (or an empty one), or a new file in a writable directory;
//! anything else (a directory, a device, a FIFO, a file that is not a SQLite
//! database) is refused and left as it is. It then reads the write-ahead log
//! left by a crash, as SQLite will replay it, and reports the committed
//! transactions a damaged frame makes SQLite drop (keeping a copy of that
//! log), and runs `PRAGMA quick_check`. Every SQLite error names the file.

use std::fs::OpenOptions;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior, params};

/// Schema version in `PRAGMA user_version` (2: `events.undoes`).
const SCHEMA_VERSION: i64 = 2;

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
    undoes      INTEGER,
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
    /// The answer with this id (its `seq`) was taken back; it was the last
    /// in force. `None`: a row from before undo took an id (the last answer).
    Undo { answer: Option<u64> },
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
    /// Every event with its id (`seq`), oldest first.
    pub events: Vec<(u64, Event)>,
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
    path: PathBuf,
    recovered: Option<String>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// What `--db` must be.
const NEED: &str =
    "--db needs a SQLite database file, or the name of a new file in a writable directory";

/// The first 16 bytes of every SQLite database file.
const HEADER: &[u8; 16] = b"SQLite format 3\0";

/// A SQLite error, naming the database.
fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> anyhow::Error + '_ {
    move |e| anyhow::Error::new(e).context(format!("the database {}", path.display()))
}

/// The refusal of a damaged database, with the way to recover it.
fn damaged(path: &Path, what: &str) -> anyhow::Error {
    let p = path.display();
    anyhow::anyhow!(
        "the database {p} is damaged ({what}); it was left as it is. Recover what can be read \
         into a new file with `sqlite3 {p} .recover | sqlite3 {p}.recovered` and start with \
         --db {p}.recovered (or move {p} away to start afresh)"
    )
}

fn corrupt(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

impl Store {
    /// Opens (creating when missing) the database at `path`: WAL journal,
    /// `synchronous = FULL`, foreign keys on. The path is checked before
    /// SQLite touches it (see the module's notes); the write-ahead log a crash
    /// left is read first, and what a damaged frame loses is reported by
    /// [`Store::recovered`]; the database must pass `PRAGMA quick_check`.
    pub fn open(path: &Path) -> Result<Store> {
        let existing = check_path(path)?;
        let damage = match &existing {
            Some(real) => read_wal(path, real)?,
            None => None,
        };
        let named = sql(path);
        // No URI names (`file:...`); a relative name (even `:memory:`) is a
        // file in the current directory.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(Path::new(".").join(path), flags)
            .with_context(|| format!("cannot open the database {}", path.display()))?;
        // Read only, before anything is written (a database in another
        // journal mode would be rewritten by the switch to WAL).
        quick_check(&conn, path)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| {
                if corrupt(&e) {
                    damaged(path, &e.to_string())
                } else {
                    let what = format!("{} is not a usable SQLite database", path.display());
                    anyhow::Error::new(e).context(what)
                }
            })?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!(
                "{}: cannot switch the journal to WAL (got {mode})",
                path.display()
            );
        }
        conn.execute_batch(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
        )
        .map_err(&named)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(&named)?;
        if version > SCHEMA_VERSION {
            bail!(
                "{} was written by a newer trellis (schema {version}, this one knows {SCHEMA_VERSION})",
                path.display()
            );
        }
        conn.execute_batch(SCHEMA).map_err(&named)?;
        // Schema 1 had no `undoes` column.
        let has_undoes: bool = conn
            .query_row(
                "SELECT COUNT(*) FROM pragma_table_info('events') WHERE name = 'undoes'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(&named)?
            > 0;
        if !has_undoes {
            conn.execute_batch("ALTER TABLE events ADD COLUMN undoes INTEGER")
                .map_err(&named)?;
        }
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
            .map_err(&named)?;
        let recovered = match damage {
            Some(d) => {
                let events: i64 = conn
                    .query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0))
                    .map_err(&named)?;
                // What SQLite replayed goes into the database and the log
                // is emptied, so the damaged frames are not read (and
                // reported) again; they are in the copy.
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(&named)?;
                Some(d.notice(path, events))
            }
            None => None,
        };
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            recovered,
        })
    }

    /// The checks [`Store::open`] makes of `path` before SQLite touches it
    /// (see the module docs); nothing is created.
    ///
    /// # Errors
    ///
    /// A path that cannot be a database file, in a directory that cannot be written.
    pub fn check(path: &Path) -> Result<()> {
        check_path(path).map(|_| ())
    }

    /// What a damaged write-ahead log lost when the database was opened
    /// (one sentence, for a warning), if anything.
    pub fn recovered(&self) -> Option<&str> {
        self.recovered.as_deref()
    }

    /// The session `who.name`, created when missing; an existing one must have
    /// the same data hash and settings. Counts this start.
    pub fn session(&mut self, who: &Identity<'_>) -> Result<Stored> {
        let named = sql(&self.path);
        // Immediate: the write lock is taken up front (waiting up to the busy
        // timeout), so a read cannot meet another server's commit before it
        // writes (a deferred transaction would then fail at once with
        // "database is locked").
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&named)?;
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
            .optional()
            .map_err(&named)?;
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
                let old: serde_json::Value =
                    serde_json::from_str(&settings).with_context(|| {
                        format!(
                            "the stored session settings in {} are not JSON",
                            self.path.display()
                        )
                    })?;
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
                )
                .map_err(&named)?;
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
                )
                .map_err(&named)?;
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
        stored.events = events(&tx, stored.id, &self.path)?;
        tx.commit().map_err(&named)?;
        Ok(stored)
    }

    /// Appends an event; durable when this returns.
    pub fn append(&mut self, session: i64, event: &Event) -> Result<u64> {
        let named = sql(&self.path);
        // Immediate: the write lock is taken up front (waiting up to the busy
        // timeout), so a read cannot meet another server's commit before it
        // writes (a deferred transaction would then fail at once with
        // "database is locked").
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&named)?;
        let seq: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = ?1",
                params![session],
                |r| r.get(0),
            )
            .map_err(&named)?;
        let mut undoes = None;
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
            Event::Undo { answer } => {
                undoes = answer.map(|k| k as i64);
                ("undo", None, None, None, None, None)
            }
            Event::Strategy(s) => ("strategy", None, None, None, None, Some(s.as_str())),
        };
        tx.execute(
            "INSERT INTO events (session_id, seq, kind, query_id, a, b, c, strategy, at_ms, undoes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![session, seq, kind, q, a, b, c, s, now_ms(), undoes],
        )
        .map_err(&named)?;
        tx.commit().map_err(&named)?;
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
        )
            .map_err(sql(&self.path))?;
        Ok(())
    }
}

fn events(conn: &Connection, session: i64, path: &Path) -> Result<Vec<(u64, Event)>> {
    let named = sql(path);
    let mut stmt = conn.prepare(
        "SELECT kind, query_id, a, b, c, strategy, seq, undoes FROM events WHERE session_id = ?1 \
         ORDER BY seq",
        )
        .map_err(&named)?;
    let rows = stmt
        .query_map(params![session], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<i64>>(7)?,
            ))
        })
        .map_err(&named)?;
    let mut out = Vec::new();
    for row in rows {
        let (kind, q, a, b, c, s, seq, undoes) = row.map_err(&named)?;
        let q = q.unwrap_or(0) as u64;
        let event = match (kind.as_str(), a, b, c, s) {
            ("accept", ..) => Event::Accept { query_id: q },
            ("triplet", Some(a), Some(b), Some(c), _) => Event::Triplet {
                query_id: q,
                a,
                b,
                c,
            },
            ("undo", ..) => Event::Undo {
                answer: undoes.map(|k| k as u64),
            },
            ("strategy", _, _, _, Some(s)) => Event::Strategy(s),
            (k, ..) => bail!("a malformed {k:?} event in the database {}", path.display()),
        };
        out.push((seq as u64, event));
    }
    Ok(out)
}

/// `PRAGMA quick_check`: a damaged database is refused, with the way out.
fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let rows: rusqlite::Result<Vec<String>> = conn
        .prepare("PRAGMA quick_check")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect());
    match rows {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => Ok(()),
        Ok(rows) => {
            let mut what = rows.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
            if rows.len() > 3 {
                what += &format!("; {} more", rows.len() - 3);
            }
            Err(damaged(path, &format!("PRAGMA quick_check: {what}")))
        }
        Err(e) if corrupt(&e) => Err(damaged(path, &e.to_string())),
        Err(e) => Err(sql(path)(e)),
    }
}

/// What a path that is not a regular file is.
fn not_a_file(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "is a character device, not a file";
        }
        if t.is_block_device() {
            return "is a block device, not a file";
        }
        if t.is_fifo() {
            return "is a FIFO (named pipe), not a file";
        }
        if t.is_socket() {
            return "is a socket, not a file";
        }
    }
    if t.is_dir() {
        "is a directory"
    } else {
        "is not a regular file"
    }
}

/// The file SQLite keeps the write-ahead log of the database `db` in.
fn wal_of(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

/// Checks the database path before SQLite touches it, which it leaves as it
/// is: an existing regular file that is empty or begins with the SQLite
/// header and can be written, or a new file; either in a writable directory
/// (SQLite keeps its `-wal` and `-shm` files beside the database). Returns
/// the resolved path of an existing database.
fn check_path(path: &Path) -> Result<Option<PathBuf>> {
    use std::io::ErrorKind::{NotADirectory, NotFound};
    let p = path.display();
    if path.as_os_str().is_empty() {
        bail!("the database path is empty; {NEED}");
    }
    let existing = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .with_context(|| format!("cannot open the database {p} for reading and writing"))?;
            let mut head = Vec::new();
            file.take(HEADER.len() as u64)
                .read_to_end(&mut head)
                .with_context(|| format!("cannot read the database {p}"))?;
            if !head.is_empty() && head != HEADER {
                bail!(
                    "{p} is not a usable SQLite database: the file does not begin with the SQLite \
                     header; it was left as it is ({NEED})"
                );
            }
            Some(std::fs::canonicalize(path).with_context(|| format!("cannot resolve {p}"))?)
        }
        Ok(meta) => bail!(
            "the database path {p} {}; {NEED}",
            not_a_file(meta.file_type())
        ),
        Err(e) if matches!(e.kind(), NotFound | NotADirectory) => {
            if std::fs::symlink_metadata(path).is_ok() {
                bail!("the database path {p} is a symbolic link to a missing file; {NEED}");
            }
            None
        }
        Err(e) => return Err(e).with_context(|| format!("cannot inspect the database path {p}")),
    };
    let dir = match &existing {
        Some(real) => real.parent(),
        None => path.parent(),
    }
    .filter(|d| !d.as_os_str().is_empty())
    .unwrap_or(Path::new("."));
    let d = dir.display();
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => bail!("the database path {p} is under {d}, which is not a directory; {NEED}"),
        Err(e) if e.kind() == NotFound => bail!(
            "the directory {d} of the database {p} does not exist; create it, or choose another \
             --db path"
        ),
        Err(e) if e.kind() == NotADirectory => {
            bail!("the database path {p} is under a file, not a directory; {NEED}")
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot inspect {d}, the directory of {p}"));
        }
    }
    let wal = wal_of(existing.as_deref().unwrap_or(path));
    match std::fs::metadata(&wal) {
        Ok(meta) if !meta.is_file() => bail!(
            "{} {}; it is where SQLite keeps the write-ahead log of the database {p}",
            wal.display(),
            not_a_file(meta.file_type())
        ),
        Ok(meta) if existing.is_none() && meta.len() > 0 => bail!(
            "the database {p} does not exist, but a write-ahead log {} of a database by that name \
             does; move it away, or choose another --db path",
            wal.display()
        ),
        _ => {}
    }
    // Whether the directory is writable, by creating (and removing) a file.
    let probe = dir.join(format!(
        ".trellis-write-check-{}-{}",
        std::process::id(),
        now_ms()
    ));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "cannot write in {d}, the directory of the database {p}: SQLite keeps the \
                     write-ahead log (-wal) and shared-memory (-shm) files beside the database, \
                     so its directory must be writable"
                )
            });
        }
    }
    Ok(existing)
}

/// The one-writer lease of a session (see the module docs): an exclusive OS
/// lock ([`std::fs::File::try_lock`]) on `<db>.lock-<hash of the session
/// name>`, held while this lives. Dropping it removes the file (still
/// locked) on Unix, and the holder's note beside it elsewhere; then the lock
/// is released.
#[derive(Debug)]
pub struct Lease {
    file: std::fs::File,
    path: PathBuf,
}

impl Lease {
    /// Takes the lease of session `name` of the database `db` (which
    /// [`Store::check`] accepted), or refuses with the holder's process id,
    /// host and start time.
    ///
    /// # Errors
    ///
    /// Another live server holds it; the lock file cannot be created or locked.
    pub fn acquire(db: &Path, name: &str) -> Result<Lease> {
        use sha2::Digest;
        let hash: String = sha2::Sha256::digest(name.as_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut path = db.as_os_str().to_owned();
        path.push(format!(".lock-{hash}"));
        Lease::acquire_at(PathBuf::from(path), db, name)
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn acquire_at(path: PathBuf, db: &Path, name: &str) -> Result<Lease> {
        let p = path.display();
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("cannot create the lock file {p} of the database"))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = read_holder(&file, &path);
                    let holder = holder.trim();
                    let holder = if holder.is_empty() {
                        "another server".to_string()
                    } else {
                        holder.to_string()
                    };
                    bail!(
                        "session {name:?} of the database {} is already being served, by \
                         {holder} (it holds the lock on {p}); only one server may write a \
                         session: use that one, stop it first, or give this one another \
                         --session NAME or --db FILE",
                        db.display()
                    );
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| {
                        format!("cannot lock {p}, the lock file of the database")
                    });
                }
            }
            // Locked; but a server that stopped may have removed this file
            // between our open and our lock: then lock the path's new file.
            if !still_named(&file, &path) {
                continue;
            }
            let holder = format!(
                "process {} on {} (started {} ms after the Unix epoch)",
                std::process::id(),
                host_name(),
                now_ms()
            );
            write_holder(&file, &path, &holder)
                .with_context(|| format!("cannot write the holder of the lock file {p}"))?;
            return Ok(Lease { file, path });
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // Removed while still locked: a server waiting for this file finds
        // it gone (or replaced) once it gets the lock, and locks again. On
        // other systems the lock file stays (see `still_named`); only the
        // holder's note goes.
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.path);
        #[cfg(not(unix))]
        let _ = std::fs::remove_file(holder_path(&self.path));
        let _ = self.file.unlock();
    }
}

/// Whether `path` still names the file `file` we opened from it (same device
/// and inode): a stopping server removes its lock file while it holds the
/// lock, so a file opened just before can be locked once it has no name.
#[cfg(unix)]
fn still_named(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().is_some_and(|m| {
        file.metadata()
            .is_ok_and(|f| f.ino() == m.ino() && f.dev() == m.dev())
    })
}

/// Elsewhere a lock file is never removed (stable Rust cannot compare two
/// Windows handles' file ids, which the check above would need), so the
/// path always names the file we locked.
#[cfg(not(unix))]
fn still_named(_file: &std::fs::File, _path: &Path) -> bool {
    true
}

/// The holder's note, which a refused server quotes: in the lock file
/// itself on Unix, whose locks (`flock`) are advisory and let anyone read it.
#[cfg(unix)]
fn read_holder(mut file: &std::fs::File, _path: &Path) -> String {
    let mut holder = String::new();
    let _ = file.read_to_string(&mut holder);
    holder
}

#[cfg(unix)]
fn write_holder(mut file: &std::fs::File, _path: &Path, holder: &str) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(holder.as_bytes())
}

/// Elsewhere the note is beside the lock file (`<lock file>.holder`): a
/// Windows lock (`LockFileEx`) is mandatory, and nobody else can read a
/// locked file. Written once the lock is held, removed before it is
/// released.
#[cfg(not(unix))]
fn holder_path(lock: &Path) -> PathBuf {
    let mut path = lock.as_os_str().to_owned();
    path.push(".holder");
    PathBuf::from(path)
}

#[cfg(not(unix))]
fn read_holder(_file: &std::fs::File, path: &Path) -> String {
    std::fs::read_to_string(holder_path(path)).unwrap_or_default()
}

#[cfg(not(unix))]
fn write_holder(_file: &std::fs::File, path: &Path, holder: &str) -> std::io::Result<()> {
    std::fs::write(holder_path(path), holder)
}

/// This machine's name, for the holder's note.
#[cfg(unix)]
fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[cfg(not(unix))]
fn host_name() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_else(|_| "this host".to_string())
}

/// What SQLite will make of a write-ahead log when it opens the database
/// (the format: <https://www.sqlite.org/fileformat2.html#walformat>). After
/// a 32-byte header come frames of a 24-byte header and a page. A frame
/// holds while its salts are the header's and the running checksum (over the
/// header, then every frame's first 8 bytes and page) matches; SQLite replays
/// the frames that hold up to the last commit frame among them, and ignores
/// the rest. Frames of an older log (other salts) and of a transaction that
/// never committed are no loss; committed transactions of this log after the
/// first frame that fails are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct WalScan {
    /// Whole frames in the file.
    frames: usize,
    /// Frames SQLite replays, and the committed transactions among them.
    replayed: usize,
    commits: usize,
    /// The header fails: SQLite ignores the whole log (whose frames cannot
    /// be counted when the page size is garbled too).
    bad_header: bool,
    /// The first frame (0-based) that fails, and why.
    stop: Option<(usize, &'static str)>,
    /// Frames of this log from `stop` on, and the commit frames among them.
    lost_frames: usize,
    lost_commits: usize,
}

impl WalScan {
    fn read(bytes: &[u8]) -> WalScan {
        let word =
            |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut scan = WalScan::default();
        if bytes.len() < 32 {
            return scan;
        }
        let (magic, page) = (word(bytes, 0), word(bytes, 8) as usize);
        let big = magic & 1 == 1;
        let size_ok = (512..=65536).contains(&page) && page.is_power_of_two();
        let frame = 24 + page;
        if size_ok {
            scan.frames = (bytes.len() - 32) / frame;
        }
        let frames = || (0..scan.frames).map(|k| &bytes[32 + k * frame..][..frame]);
        let salts = &bytes[16..24];
        let header_sum = (word(bytes, 24), word(bytes, 28));
        if magic & !1 != 0x377f_0682
            || !size_ok
            || checksum(big, (0, 0), &bytes[..24]) != header_sum
        {
            scan.bad_header = bytes.len() > 32;
            scan.lost_frames = scan.frames;
            scan.lost_commits = frames().filter(|f| word(f, 4) != 0).count();
            return scan;
        }
        let mut sum = header_sum;
        for (k, f) in frames().enumerate() {
            if &f[8..16] != salts {
                scan.stop = Some((k, "belongs to another log (its salt differs)"));
                break;
            }
            sum = checksum(big, checksum(big, sum, &f[..8]), &f[24..]);
            if sum != (word(f, 16), word(f, 20)) {
                scan.stop = Some((k, "has a bad checksum"));
                break;
            }
            if word(f, 4) != 0 {
                scan.replayed = k + 1;
                scan.commits += 1;
            }
        }
        if let Some((k, _)) = scan.stop {
            for f in frames().skip(k).filter(|f| &f[8..16] == salts) {
                scan.lost_frames += 1;
                scan.lost_commits += usize::from(word(f, 4) != 0);
            }
        }
        scan
    }

    /// Whether SQLite will drop committed transactions (or may: a log
    /// whose frames cannot be counted).
    fn loses(&self) -> bool {
        self.lost_commits > 0 || (self.bad_header && self.frames == 0)
    }
}

/// SQLite's WAL checksum: 32-bit words (big-endian or little-endian as the
/// log's magic number says), taken two at a time, added with wrapping.
fn checksum(big: bool, (mut s0, mut s1): (u32, u32), data: &[u8]) -> (u32, u32) {
    let word = |b: &[u8]| {
        let b = [b[0], b[1], b[2], b[3]];
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    for w in data.chunks_exact(8) {
        s0 = s0.wrapping_add(word(&w[..4])).wrapping_add(s1);
        s1 = s1.wrapping_add(word(&w[4..])).wrapping_add(s0);
    }
    (s0, s1)
}

/// A damaged write-ahead log, and where its copy is kept.
struct WalDamage {
    wal: PathBuf,
    copy: PathBuf,
    scan: WalScan,
}

/// Reads the write-ahead log of the database `db` (resolved: `real`) before
/// SQLite opens it; when SQLite would drop committed transactions, copies it
/// beside the database (`<db>-wal.damaged-<unix ms>`) first.
fn read_wal(db: &Path, real: &Path) -> Result<Option<WalDamage>> {
    let wal = wal_of(real);
    let bytes = match std::fs::read(&wal) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(e).with_context(|| {
                format!(
                    "cannot read {}, the write-ahead log of the database {}",
                    wal.display(),
                    db.display()
                )
            });
        }
    };
    let scan = WalScan::read(&bytes);
    if !scan.loses() {
        return Ok(None);
    }
    let mut copy = wal.clone().into_os_string();
    copy.push(format!(".damaged-{}", now_ms()));
    let copy = PathBuf::from(copy);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&copy)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(&bytes)?;
            f.sync_all()
        })
        .with_context(|| {
            format!(
                "the write-ahead log {} of the database {} is damaged, and a copy of it cannot be \
                 written to {}; nothing was changed",
                wal.display(),
                db.display(),
                copy.display()
            )
        })?;
    Ok(Some(WalDamage { wal, copy, scan }))
}

impl WalDamage {
    /// What was recovered and what was lost, once the database is open and
    /// holds `events` events.
    fn notice(&self, db: &Path, events: i64) -> String {
        let s = &self.scan;
        let what = match s.stop {
            Some((k, why)) if !s.bad_header => {
                format!("frame {} of {} {why}", k + 1, s.frames)
            }
            _ if s.frames == 0 => "its header is damaged (even its page size)".to_string(),
            _ => "its header is damaged".to_string(),
        };
        format!(
            "the database {} was not closed cleanly and its write-ahead log {} is damaged: \
             {what}, and SQLite ignores the log from there on. Kept: {} frames, {} committed \
             transactions; the database holds {events} events (answers, undos, strategy \
             changes). Lost: {} frames, {} committed transactions (each answer, undo, strategy \
             change, saved tree or server start is one). The damaged log is kept as {}",
            db.display(),
            self.wal.display(),
            s.replayed,
            s.commits,
            s.lost_frames,
            s.lost_commits,
            self.copy.display()
        )
    }
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
        let undo = Event::Undo { answer: Some(1) };
        for e in [t.clone(), undo.clone(), Event::Strategy("smart".into())] {
            store.append(id, &e).unwrap();
        }
        store.save_tree(id, "{}", "(x,y);", 42).unwrap();
        drop(store);
        let mut store = Store::open(&path).unwrap();
        let s = store.session(&who).unwrap();
        assert_eq!(
            s.events,
            vec![(1, t), (2, undo), (3, Event::Strategy("smart".into()))]
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

    /// A database of schema 1 (no `events.undoes`: an undo took back the
    /// last answer) opens with every answer kept: its undo reads as one
    /// without an id, the column is added, and new undoes carry their id.
    #[test]
    fn a_schema_1_database_is_migrated_and_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s1.sqlite");
        {
            let conn = Connection::open(&path).unwrap();
            let schema_1 = SCHEMA.replace("    undoes      INTEGER,\n", "");
            assert_ne!(schema_1, SCHEMA);
            conn.execute_batch(&schema_1).unwrap();
            conn.execute_batch(
                "PRAGMA user_version = 1;
                 INSERT INTO sessions (id, name, data_path, data_sha256, settings, strategy, created_ms, starts)
                 VALUES (1, 's', 'd.csv', '00', '{}', 'active', 0, 1);
                 INSERT INTO events (session_id, seq, kind, query_id, a, b, c, at_ms)
                 VALUES (1, 1, 'triplet', 7, 'x', 'y', 'z', 0), (1, 2, 'triplet', 8, 'u', 'v', 'w', 0);
                 INSERT INTO events (session_id, seq, kind, at_ms) VALUES (1, 3, 'undo', 0);",
            )
            .unwrap();
        }
        let settings = serde_json::json!({});
        let mut store = Store::open(&path).unwrap();
        let s = store.session(&who(&settings)).unwrap();
        let triplet = |query_id, a: &str, b: &str, c: &str| Event::Triplet {
            query_id,
            a: a.into(),
            b: b.into(),
            c: c.into(),
        };
        assert_eq!(
            s.events,
            vec![
                (1, triplet(7, "x", "y", "z")),
                (2, triplet(8, "u", "v", "w")),
                (3, Event::Undo { answer: None }),
            ]
        );
        let version: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        assert_eq!(
            store
                .append(s.id, &Event::Undo { answer: Some(1) })
                .unwrap(),
            4
        );
        drop(store);
        let mut store = Store::open(&path).unwrap();
        let events = store.session(&who(&settings)).unwrap().events;
        assert_eq!(events.len(), 4);
        assert_eq!(events[3], (4, Event::Undo { answer: Some(1) }));
    }

    fn who(settings: &serde_json::Value) -> Identity<'_> {
        Identity {
            name: "s",
            data_path: "d.csv",
            data_sha256: "00",
            settings,
            strategy: "active",
        }
    }

    /// A store with one session and `n` triplet answers, left open (its
    /// write-ahead log not checkpointed).
    fn answered(path: &Path, n: u64) -> Store {
        let settings = serde_json::json!({});
        let mut store = Store::open(path).unwrap();
        let id = store.session(&who(&settings)).unwrap().id;
        for k in 0..n {
            let t = Event::Triplet {
                query_id: k,
                a: format!("a{k}"),
                b: "b".into(),
                c: "c".into(),
            };
            store.append(id, &t).unwrap();
        }
        store
    }

    #[test]
    fn a_healthy_wal_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let store = answered(&path, 10);
        let scan = WalScan::read(&std::fs::read(wal_of(&path)).unwrap());
        // Schema, session, ten answers: every frame holds, the last commits.
        assert!(scan.frames > 10 && scan.commits > 10, "{scan:?}");
        assert_eq!(scan.replayed, scan.frames, "{scan:?}");
        assert_eq!(
            (scan.stop, scan.lost_frames, scan.lost_commits),
            (None, 0, 0)
        );
        assert!(!scan.loses());
        drop(store);
        // A clean close checkpoints and removes the log.
        assert!(!wal_of(&path).exists());
        assert!(Store::open(&path).unwrap().recovered().is_none());
    }

    #[test]
    fn a_garbled_wal_frame_is_reported_and_the_log_kept() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join("live.sqlite");
        let store = answered(&live, 10);
        // The files as a crash leaves them: database and log, not checkpointed.
        let path = dir.path().join("s.sqlite");
        std::fs::copy(&live, &path).unwrap();
        let mut wal = std::fs::read(wal_of(&live)).unwrap();
        drop(store);
        let page = u32::from_be_bytes(wal[8..12].try_into().unwrap()) as usize;
        let frames = (wal.len() - 32) / (24 + page);
        let k = frames / 2;
        wal[32 + k * (24 + page) + 24 + 100] ^= 0x55;
        std::fs::write(wal_of(&path), &wal).unwrap();
        let scan = WalScan::read(&wal);
        assert_eq!(scan.stop, Some((k, "has a bad checksum")));
        assert!(scan.replayed <= k && scan.lost_commits > 0, "{scan:?}");

        let mut store = Store::open(&path).unwrap();
        let note = store.recovered().expect("a notice").to_string();
        let lost = format!(
            "Lost: {} frames, {} committed transactions",
            scan.lost_frames, scan.lost_commits
        );
        let bad = format!("frame {} of {frames} has a bad checksum", k + 1);
        for needle in [&bad, &lost, &path.display().to_string()] {
            assert!(note.contains(needle.as_str()), "{note}");
        }
        // The answers before the damaged frame are there, those after it not.
        let settings = serde_json::json!({});
        let kept = store.session(&who(&settings)).unwrap().events;
        assert!(!kept.is_empty() && kept.len() < 10, "{}", kept.len());
        assert!(
            note.contains(&format!("holds {} events", kept.len())),
            "{note}"
        );
        // The damaged log is kept, byte for byte.
        let copies: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("s.sqlite-wal.damaged-"))
            .collect();
        assert_eq!(copies.len(), 1, "{copies:?}");
        assert!(note.contains(&copies[0].display().to_string()), "{note}");
        assert_eq!(std::fs::read(&copies[0]).unwrap(), wal);
        // The live log was checkpointed and emptied: the next start is quiet.
        drop(store);
        let store = Store::open(&path).unwrap();
        assert!(store.recovered().is_none());
        drop(store);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_damaged_wal_header_loses_the_whole_log() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join("live.sqlite");
        let store = answered(&live, 3);
        let mut wal = std::fs::read(wal_of(&live)).unwrap();
        drop(store);
        wal[20] ^= 1;
        let scan = WalScan::read(&wal);
        assert!(scan.bad_header && scan.loses(), "{scan:?}");
        assert_eq!(scan.lost_frames, scan.frames);
    }

    #[test]
    fn paths_that_are_not_database_files_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let err = |p: &Path| format!("{:#}", Store::open(p).unwrap_err());
        let sub = d.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let e = err(&sub);
        assert!(
            e.contains(&format!("{} is a directory", sub.display())),
            "{e}"
        );
        let missing = d.join("missing/s.sqlite");
        let e = err(&missing);
        assert!(
            e.contains(&format!(
                "the directory {} of the database {} does not exist",
                d.join("missing").display(),
                missing.display()
            )),
            "{e}"
        );
        let text = d.join("notes.txt");
        std::fs::write(&text, "not a database").unwrap();
        let e = err(&text);
        assert!(e.contains("not a usable SQLite database"), "{e}");
        assert_eq!(std::fs::read(&text).unwrap(), b"not a database");
        let under_file = text.join("s.sqlite");
        let e = err(&under_file);
        assert!(e.contains("which is not a directory"), "{e}");
        #[cfg(unix)]
        {
            let e = err(Path::new("/dev/null"));
            assert!(e.contains("/dev/null is a character device"), "{e}");
            assert!(!Path::new("/dev/null-journal").exists());
            assert!(!Path::new("/dev/null-wal").exists());
        }
        // Nothing was created beside them.
        let mut left: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["notes.txt", "sub"]);
        assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0);
        // An empty file is an empty database; so is a new name.
        let empty = d.join("empty.sqlite");
        std::fs::write(&empty, "").unwrap();
        Store::open(&empty).unwrap();
        Store::open(&d.join("new.sqlite")).unwrap();
    }

    #[test]
    fn a_corrupt_database_is_refused_with_the_way_to_recover() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        drop(answered(&path, 50));
        let mut bytes = std::fs::read(&path).unwrap();
        let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
        // Garble the b-tree pages after the schema (page 1).
        for b in &mut bytes[page..] {
            *b = b.wrapping_mul(31).wrapping_add(7);
        }
        std::fs::write(&path, &bytes).unwrap();
        let e = format!("{:#}", Store::open(&path).unwrap_err());
        assert!(
            e.contains(&format!("the database {} is damaged", path.display()))
                && e.contains(".recover"),
            "{e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it is");
    }
}
