//! A real `hindsight serve` (this binary) as a child process for the benches that measure a
//! daemon from the outside: its loopback address once `/healthz` answers, how long that took,
//! and its resident memory read from /proc.

use std::path::Path;
use std::time::{Duration, Instant};

use super::{BenchError, status_mb};

pub(crate) struct Daemon {
    child: tokio::process::Child,
    pub pid: u32,
    /// `http://127.0.0.1:<port>`, no trailing slash.
    pub base: String,
    /// From spawn to the first healthy answer: start-up, index checks (and any rebuild) included.
    pub ready_seconds: f64,
    /// Its messages (a pipe nobody read could fill and stall it).
    _log: tempfile::NamedTempFile,
}

/// Resident memory of a process in MiB.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Rss {
    pub rss_mb: f64,
    /// Heap and other private memory.
    pub anon_mb: f64,
    /// Pages of memory-mapped files (the index's float vectors, the binary): the kernel may
    /// drop them under pressure and read them again.
    pub file_mb: f64,
}

impl Rss {
    pub fn of(pid: &str) -> Self {
        let [rss_mb, anon_mb, file_mb] = status_mb(pid, ["VmRSS:", "RssAnon:", "RssFile:"]);
        Rss {
            rss_mb,
            anon_mb,
            file_mb,
        }
    }
}

impl Daemon {
    /// `exe serve --listen 127.0.0.1:0 --data-dir <data_dir>` with `envs`; up to `wait` for it to
    /// answer.
    pub async fn spawn(
        exe: &Path,
        data_dir: &Path,
        envs: &[(&str, String)],
        wait: Duration,
    ) -> Result<Daemon, BenchError> {
        let log = tempfile::NamedTempFile::new()?;
        let started = Instant::now();
        let mut child = tokio::process::Command::new(exe)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(std::process::Stdio::null())
            .stderr(log.reopen()?)
            .kill_on_drop(true)
            .spawn()?;
        let pid = child.id().ok_or("the daemon has no pid")?;
        while started.elapsed() < wait {
            if let Some(endpoint) = hindsight::lock::read_endpoint(data_dir)
                && endpoint.pid == pid
                && let Ok(r) = reqwest::get(endpoint.url.replace("/mcp", "/healthz")).await
                && r.status().is_success()
            {
                return Ok(Daemon {
                    child,
                    pid,
                    base: endpoint.url.trim_end_matches("/mcp").to_owned(),
                    ready_seconds: started.elapsed().as_secs_f64(),
                    _log: log,
                });
            }
            if let Ok(Some(status)) = child.try_wait() {
                let err = std::fs::read_to_string(log.path()).unwrap_or_default();
                return Err(format!("the daemon exited with {status}: {err}").into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!("the daemon did not answer within {} s", wait.as_secs()).into())
    }

    pub fn rss(&self) -> Rss {
        Rss::of(&self.pid.to_string())
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
