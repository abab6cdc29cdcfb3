//! A memory cgroup for a benchmarked child process (`bench import --memory-limit-mb`): the
//! kernel then holds the child's private memory and the page cache it brings in (the index's
//! memory-mapped files) under one limit, reclaiming file pages before it fails an allocation,
//! as a container's memory limit does. cgroup v1 (`/sys/fs/cgroup/memory`) or v2 (a memory
//! controller enabled at `/sys/fs/cgroup`); creating one needs root.

use std::path::{Path, PathBuf};

use super::BenchError;

const V1_ROOT: &str = "/sys/fs/cgroup/memory";
const V2_ROOT: &str = "/sys/fs/cgroup";

pub(crate) struct MemoryCgroup {
    dir: PathBuf,
    v2: bool,
}

impl MemoryCgroup {
    /// A new cgroup limited to `limit_mb` MiB, or why none can be made here.
    pub fn create(limit_mb: u64) -> Result<Self, BenchError> {
        let name = format!("hindsight-bench-{}", std::process::id());
        let limit = (limit_mb * 1024 * 1024).to_string();
        let v2 = std::fs::read_to_string(Path::new(V2_ROOT).join("cgroup.subtree_control"))
            .is_ok_and(|controllers| controllers.split_whitespace().any(|c| c == "memory"));
        let (dir, limit_file) = if v2 {
            (Path::new(V2_ROOT).join(&name), "memory.max")
        } else if Path::new(V1_ROOT).is_dir() {
            (Path::new(V1_ROOT).join(&name), "memory.limit_in_bytes")
        } else {
            return Err(
                "--memory-limit-mb: no memory cgroup controller here (neither cgroup \
                        v1's /sys/fs/cgroup/memory nor v2's memory in cgroup.subtree_control)"
                    .into(),
            );
        };
        std::fs::create_dir(&dir)
            .map_err(|e| format!("--memory-limit-mb: creating {} ({e})", dir.display()))?;
        let cgroup = Self { dir, v2 };
        std::fs::write(cgroup.dir.join(limit_file), limit)
            .map_err(|e| format!("--memory-limit-mb: setting {limit_file} ({e})"))?;
        Ok(cgroup)
    }

    /// Move process `pid` into the cgroup.
    pub fn add(&self, pid: u32) -> Result<(), BenchError> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
            .map_err(|e| format!("moving {pid} into {} ({e})", self.dir.display()).into())
    }

    /// The most memory (private and page cache) charged to the cgroup so far, in MiB.
    pub fn peak_mb(&self) -> Option<f64> {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        let bytes: f64 = std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        Some(bytes / (1024.0 * 1024.0))
    }
}

impl Drop for MemoryCgroup {
    /// Removed once its processes are gone (the bench waits for its child first).
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            eprintln!("could not remove {}: {e}", self.dir.display());
        }
    }
}
