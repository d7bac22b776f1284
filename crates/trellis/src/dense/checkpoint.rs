//! Checkpoints of the blocked passes: a long run killed part-way resumes
//! from its finished levels and gives the identical answer.
//!
//! # What is saved
//!
//! A blocked pass (`blocked.rs`) finishes its table level by level: level
//! `p` is every block whose high part has `p` bits, computed from blocks of
//! lower levels only. After a level is done its blocks are written to
//! `DIR/<pass>-level<p>.ckpt`; a later run of the same pass reads every
//! level whose file is there instead of computing it. The pass is
//! deterministic (the same additions in the same order on every vector
//! path, and block results independent of the threads), so the resumed
//! table is the same, bit for bit, as an uninterrupted one.
//!
//! The passes and their files:
//!
//! | pass | command | file prefix | values per subset |
//! |---|---|---|---|
//! | MAP keys | `map` | `keys` | the key |
//! | MAP keys of the full trellis | `marginals` | `keys+map` | the key, `log M(S)` |
//! | weights at scale `(a, b)` | `logz`, `sample`, `marginals` | `weights-a…-b…` | `G(S)` |
//! | outside at scale `(a, b)` | `marginals` | `outside-a…-b…` | `H(X∖S)`, `log P(S)` |
//! | flat MAP values | `flat map`, full flat trellis | `flat-keys` | `log M(S)` |
//! | flat weights | `flat logz`, full flat trellis | `flat-weights-a…-b…` | `Z(S)` scaled |
//!
//! A pass whose cells write a second table besides their own (the MAP values
//! of the full trellis, the marginals of the outside pass) saves it with
//! each level, since a level read back is not computed again.
//!
//! # File format
//!
//! ```text
//! magic "TRELCKP1" | fingerprint (32 bytes) | kernel version, n, bits,
//! level, blocks (u64 LE each) | the blocks' entries (f64 LE, in the
//! order of their high parts; per block, one table after the other) |
//! SHA-256 of everything before (32 bytes)
//! ```
//!
//! The fingerprint is the SHA-256 of what determines the table: the pass
//! (its name, with the scale bit for bit) and the run's fingerprint. The
//! directory belongs to one run ([`Run`]): `DIR/run.ckpt` holds the
//! fingerprint of the run without the pass, and a run on other input
//! refuses the directory. A run is the kernel version, the number of points
//! and the block width with, for the hierarchical passes, the model's
//! factor (β) and its pair values (the weights), bit for bit (or, for a
//! separable model without a pair form, its tables `P` and `C`), and for
//! the flat passes the log-energy of every cluster, bit for bit (β is part
//! of it). So `logz`, `map` and `marginals` of one input share a directory
//! (and `marginals` reads the weight levels `logz` left at the same scale).
//! A file whose header differs from the run's, or whose checksum does not
//! match its contents, is refused ([`ErrorKind::Checkpoint`]): never used. A file is
//! written to a temporary name, flushed to disk (`fsync`), then renamed
//! over its final name and the directory synced, so a kill leaves either
//! the whole file or none (a stray `*.tmp-<pid>` file at worst).
//!
//! # Cost
//!
//! Every entry is written once and read once per resume: 8 bytes per
//! subset and table (8 GiB at `n = 30`), and SHA-256 over the same bytes
//! (about 1-2 GB/s), small against the `3^n` work of the pass; a run over
//! tables or energies hashes them once more to fingerprint itself.

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::base::par;
use crate::dense::pairs::PairBlocks;
use crate::error::{Error, ErrorKind, Result};

/// The start of every checkpoint file.
const MAGIC: &[u8; 8] = b"TRELCKP1";

/// Changes whenever the arithmetic of the blocked passes changes (a file
/// of another version would not give the same bits). 2: the grouped cross
/// step of `blocked.rs`.
pub(crate) const KERNEL_VERSION: u64 = 2;

/// Bytes of the header: magic, fingerprint, five `u64`.
const HEADER_BYTES: u64 = 8 + 32 + 5 * 8;

/// Where one pass keeps its levels, and what identifies its table.
pub(crate) struct PassCheckpoint {
    dir: PathBuf,
    pass: String,
    fingerprint: [u8; 32],
    n: usize,
    bits: usize,
}

/// An I/O error reading `path`, as a refusal to resume.
fn unreadable(path: &Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Checkpoint {
        path: path.to_path_buf(),
        detail: format!("it cannot be read ({e})"),
    })
}

fn write_error(path: &Path, source: std::io::Error) -> Error {
    Error::new(ErrorKind::CheckpointWrite {
        path: path.to_path_buf(),
        source,
    })
}

/// The file that names the run a checkpoint directory belongs to.
const RUN_FILE: &str = "run.ckpt";

/// Makes `dir` the checkpoint directory of the run with fingerprint `run`,
/// or checks that it already is: a directory holds the levels of one run
/// (one input, model and β; its key and weight passes, whose files are
/// named by pass and scale).
fn claim(dir: &Path, run: &[u8; 32]) -> Result<()> {
    let path = dir.join(RUN_FILE);
    let mut want = Vec::with_capacity(40);
    want.extend_from_slice(MAGIC);
    want.extend_from_slice(run);
    match fs::read(&path) {
        Ok(bytes) if bytes == want => Ok(()),
        Ok(bytes) if bytes.len() == want.len() && bytes[..8] == MAGIC[..] => {
            Err(Error::new(ErrorKind::Checkpoint {
                path,
                detail: "the directory holds the checkpoint of another run (points, model, β \
                         or weights differ, or another kernel version)"
                    .into(),
            }))
        }
        Ok(_) => Err(Error::new(ErrorKind::Checkpoint {
            path,
            detail: "it is not a trellis checkpoint file".into(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let tmp = dir.join(format!("{RUN_FILE}.tmp-{}", std::process::id()));
            let write = || -> std::io::Result<()> {
                let mut f = File::create(&tmp)?;
                f.write_all(&want)?;
                f.sync_all()?;
                fs::rename(&tmp, &path)?;
                #[cfg(unix)]
                File::open(dir)?.sync_all()?;
                Ok(())
            };
            write().map_err(|e| write_error(&path, e))
        }
        Err(e) => Err(unreadable(&path, e)),
    }
}

/// A checkpoint directory claimed by one run: what the passes of the run
/// share (the directory and the fingerprint of their input).
pub(crate) struct Run {
    dir: PathBuf,
    fingerprint: [u8; 32],
    n: usize,
    bits: usize,
}

/// Feeds the entries of `table` to `h`, bit for bit: the SHA-256 of each
/// chunk of 2^16 entries (in parallel), then the chunks' digests in order.
fn digest_table(h: &mut Sha256, table: &[f64]) {
    const CHUNK: usize = 1 << 16;
    let chunks = table.len().div_ceil(CHUNK);
    let digests = par::collect_range(chunks, chunks > 1, |i| {
        let part = &table[i * CHUNK..((i + 1) * CHUNK).min(table.len())];
        let mut bytes = Vec::with_capacity(part.len() * 8);
        for v in part {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        let d: [u8; 32] = Sha256::digest(&bytes).into();
        d
    });
    h.update((table.len() as u64).to_le_bytes());
    for d in &digests {
        h.update(d);
    }
}

impl Run {
    /// The run of a hierarchical pass over the pair-form model with factor
    /// `factor` and pair values `blocks`, over `n` points in blocks of
    /// `bits` low bits, in `dir` (created when missing).
    pub(crate) fn of_pairs(
        dir: &Path,
        factor: f64,
        blocks: &PairBlocks,
        n: usize,
        bits: usize,
    ) -> Result<Run> {
        let mut run = Sha256::new();
        run.update(b"trellis run\0");
        for v in [KERNEL_VERSION, n as u64, bits as u64, factor.to_bits()] {
            run.update(v.to_le_bytes());
        }
        blocks.fingerprint(&mut |bytes| run.update(bytes));
        Run::claimed(dir, run.finalize().into(), n, bits)
    }

    /// The run of a hierarchical pass over a separable model given by its
    /// tables `P` and `C` (by mask) with the constant factor `factor`.
    pub(crate) fn of_tables(
        dir: &Path,
        factor: f64,
        parent: &[f64],
        child: &[f64],
        n: usize,
        bits: usize,
    ) -> Result<Run> {
        let mut run = Sha256::new();
        run.update(b"trellis tables run\0");
        for v in [KERNEL_VERSION, n as u64, bits as u64, factor.to_bits()] {
            run.update(v.to_le_bytes());
        }
        digest_table(&mut run, parent);
        digest_table(&mut run, child);
        Run::claimed(dir, run.finalize().into(), n, bits)
    }

    /// The run of a flat pass over the log-energies `log_e` of every
    /// cluster (β is part of them: `log E = β ·` the cluster's score).
    pub(crate) fn of_energies(dir: &Path, log_e: &[f64], n: usize, bits: usize) -> Result<Run> {
        let mut run = Sha256::new();
        run.update(b"trellis flat run\0");
        for v in [KERNEL_VERSION, n as u64, bits as u64] {
            run.update(v.to_le_bytes());
        }
        digest_table(&mut run, log_e);
        Run::claimed(dir, run.finalize().into(), n, bits)
    }

    fn claimed(dir: &Path, fingerprint: [u8; 32], n: usize, bits: usize) -> Result<Run> {
        fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
        claim(dir, &fingerprint)?;
        Ok(Run {
            dir: dir.to_path_buf(),
            fingerprint,
            n,
            bits,
        })
    }

    /// The checkpoint of pass `pass` (e.g. `"keys"`) of this run.
    pub(crate) fn pass(&self, pass: &str) -> PassCheckpoint {
        let mut h = Sha256::new();
        h.update(self.fingerprint);
        h.update(pass.as_bytes());
        PassCheckpoint {
            dir: self.dir.clone(),
            pass: pass.to_string(),
            fingerprint: h.finalize().into(),
            n: self.n,
            bits: self.bits,
        }
    }
}

impl PassCheckpoint {
    fn path(&self, level: usize) -> PathBuf {
        self.dir.join(format!("{}-level{level:02}.ckpt", self.pass))
    }

    fn header(&self, level: usize, blocks: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES as usize);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.fingerprint);
        for v in [
            KERNEL_VERSION,
            self.n as u64,
            self.bits as u64,
            level as u64,
            blocks as u64,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Reads level `level` (the blocks `highs`, in order) when its file
    /// exists, handing each entry to `set(column, index, value)`: `Ok(true)`;
    /// `Ok(false)` when there is none. A level holds `columns` values per
    /// subset (the pass's table, then the tables its cells fill besides),
    /// block by block, each block column after column.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Checkpoint`] for a file of another run, a truncated one
    /// or a wrong checksum (entries may then have been set: the run stops).
    pub(crate) fn load(
        &self,
        level: usize,
        highs: &[usize],
        columns: usize,
        mut set: impl FnMut(usize, usize, f64),
    ) -> Result<bool> {
        let path = self.path(level);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(unreadable(&path, e)),
        };
        let refuse = |detail: String| {
            Error::new(ErrorKind::Checkpoint {
                path: path.clone(),
                detail,
            })
        };
        let size = 1usize << self.bits;
        let want = self.header(level, highs.len());
        let expected_len = HEADER_BYTES + (highs.len() * columns * size * 8) as u64 + 32;
        let len = file.metadata().map_err(|e| unreadable(&path, e))?.len();
        let mut r = BufReader::with_capacity(1 << 20, file);
        let mut header = vec![0u8; HEADER_BYTES as usize];
        if len < HEADER_BYTES {
            return Err(refuse(format!("it is truncated ({len} bytes)")));
        }
        r.read_exact(&mut header)
            .map_err(|e| unreadable(&path, e))?;
        if header[..8] != MAGIC[..] {
            return Err(refuse("it is not a trellis checkpoint file".into()));
        }
        if header != want {
            let field = |b: &[u8], i: usize| {
                u64::from_le_bytes(b[40 + 8 * i..48 + 8 * i].try_into().expect("8 bytes"))
            };
            let detail = if field(&header, 0) != KERNEL_VERSION {
                format!(
                    "it was written by kernel version {}, this is version {KERNEL_VERSION}",
                    field(&header, 0)
                )
            } else if header[8..40] != want[8..40] || field(&header, 1) != self.n as u64 {
                "it was written by a run on other input (points, model, β or weights differ)"
                    .to_string()
            } else {
                "its block layout differs from this run's".to_string()
            };
            return Err(refuse(detail));
        }
        if len != expected_len {
            return Err(refuse(format!(
                "it holds {len} bytes, not the {expected_len} of its header"
            )));
        }
        let mut h = Sha256::new();
        h.update(&header);
        let mut bytes = vec![0u8; size * 8];
        for &high in highs {
            for column in 0..columns {
                r.read_exact(&mut bytes).map_err(|e| unreadable(&path, e))?;
                h.update(&bytes);
                for (x, b) in bytes.chunks_exact(8).enumerate() {
                    let v = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                    set(column, high * size + x, v);
                }
            }
        }
        let mut sum = [0u8; 32];
        r.read_exact(&mut sum).map_err(|e| unreadable(&path, e))?;
        if sum[..] != h.finalize()[..] {
            return Err(refuse(
                "its checksum does not match its contents (the file is damaged)".into(),
            ));
        }
        Ok(true)
    }

    /// Writes level `level` (the blocks `highs`, in order; `columns`
    /// values per subset, `get(column, index)`, laid out as [`load`](Self::load)
    /// reads them) atomically (see the module docs).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::CheckpointWrite`] when a write, the flush or the rename fails.
    pub(crate) fn save(
        &self,
        level: usize,
        highs: &[usize],
        columns: usize,
        get: impl Fn(usize, usize) -> f64,
    ) -> Result<()> {
        let path = self.path(level);
        let tmp = self.dir.join(format!(
            "{}-level{level:02}.ckpt.tmp-{}",
            self.pass,
            std::process::id()
        ));
        let size = 1usize << self.bits;
        let write = || -> std::io::Result<()> {
            let file = File::create(&tmp)?;
            let mut w = BufWriter::with_capacity(1 << 20, file);
            let mut h = Sha256::new();
            let header = self.header(level, highs.len());
            h.update(&header);
            w.write_all(&header)?;
            let mut bytes = Vec::with_capacity(size * 8);
            for &high in highs {
                for column in 0..columns {
                    bytes.clear();
                    for x in 0..size {
                        bytes.extend_from_slice(&get(column, high * size + x).to_le_bytes());
                    }
                    h.update(&bytes);
                    w.write_all(&bytes)?;
                }
            }
            w.write_all(&h.finalize())?;
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            drop(file);
            fs::rename(&tmp, &path)?;
            // The rename is durable once the directory is synced (Unix; a
            // directory cannot be opened as a file elsewhere).
            #[cfg(unix)]
            File::open(&self.dir)?.sync_all()?;
            Ok(())
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            write_error(&path, e)
        })
    }
}
