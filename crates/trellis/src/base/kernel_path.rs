//! Which vector path the blocked kernel of the dense trellis runs: a
//! foundation type, so that [`Options`](crate::Options) can name it without
//! the foundations depending on the kernel.

use crate::error::{Error, Result};

/// A vector path of the blocked kernel.
///
/// There is no AVX-512 path: the machines this crate is tested on lack
/// AVX-512, and an untested vector path has no place in an exact tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelPath {
    /// 256-bit vectors (x86-64 with AVX2).
    Avx2,
    /// The baseline target (SSE2 on x86-64; any CPU).
    Portable,
}

impl KernelPath {
    /// Every path, fastest first.
    pub const ALL: [KernelPath; 2] = [KernelPath::Avx2, KernelPath::Portable];

    /// The path's name as `TRELLIS_KERNEL` spells it.
    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Avx2 => "avx2",
            KernelPath::Portable => "portable",
        }
    }

    /// Whether this CPU can run the path.
    pub fn available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            KernelPath::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            KernelPath::Avx2 => false,
            KernelPath::Portable => true,
        }
    }

    /// The fastest path this CPU has.
    pub fn best() -> KernelPath {
        KernelPath::ALL
            .into_iter()
            .find(|p| p.available())
            .unwrap_or(KernelPath::Portable)
    }

    /// The path to run: `requested`, else the one `TRELLIS_KERNEL` names,
    /// else [`KernelPath::best`]. An error for a path the CPU lacks or an
    /// unknown name.
    pub fn choose(requested: Option<KernelPath>) -> Result<KernelPath> {
        let path = match requested {
            Some(p) => p,
            None => match std::env::var("TRELLIS_KERNEL") {
                Ok(name) if !name.is_empty() => KernelPath::ALL
                    .into_iter()
                    .find(|p| p.name() == name)
                    .ok_or_else(|| {
                        Error::parameter(format!(
                            "TRELLIS_KERNEL={name:?} names no kernel path (use avx2 or portable)"
                        ))
                    })?,
                _ => KernelPath::best(),
            },
        };
        if !path.available() {
            return Err(Error::parameter(format!(
                "the {} kernel path needs a CPU feature this machine lacks",
                path.name()
            )));
        }
        Ok(path)
    }
}

impl std::fmt::Display for KernelPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
