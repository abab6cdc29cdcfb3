//! One process owns a data dir. The owner holds an exclusive OS lock on `<data_dir>/hindsight.lock`
//! (released by the kernel even on kill -9) and publishes its HTTP endpoint in
//! `<data_dir>/endpoint.json`. Any other `hindsight mcp` on the same dir relays to that endpoint
//! instead of opening the files.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

const LOCK_FILE: &str = "hindsight.lock";
const ENDPOINT_FILE: &str = "endpoint.json";

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("data dir {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where the owner of a data dir can be reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub pid: u32,
    /// e.g. `http://127.0.0.1:8765/mcp`
    pub url: String,
    /// Written to `endpoint.json` as it is (the file is the owner's, mode 0600); shown masked.
    #[serde(default, with = "crate::secret::exposed")]
    pub token: Option<crate::secret::Secret>,
    /// `serve` or `mcp`
    pub mode: String,
}

/// Held while this process owns the data dir.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    dir: PathBuf,
}

pub enum Acquired {
    Owner(DataDirLock),
    /// Another live process owns the dir.
    Taken,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> LockError + '_ {
    move |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl DataDirLock {
    /// Create the data dir if needed and try to own it.
    pub fn try_acquire(dir: &Path) -> Result<Acquired, LockError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(Acquired::Owner(Self {
                _file: file,
                dir: dir.to_path_buf(),
            })),
            Err(TryLockError::WouldBlock) => Ok(Acquired::Taken),
            Err(TryLockError::Error(e)) => Err(io_err(&path)(e)),
        }
    }

    /// Tell other processes where to reach us. Written atomically, readable by the owner only
    /// (it may carry the bearer token).
    pub fn publish(&self, endpoint: &Endpoint) -> Result<(), LockError> {
        let path = self.dir.join(ENDPOINT_FILE);
        let tmp = self
            .dir
            .join(format!("{ENDPOINT_FILE}.{}", std::process::id()));
        let body = serde_json::to_vec_pretty(endpoint).unwrap_or_default();
        let mut options = OpenOptions::new();
        options.create(true).truncate(true).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp).map_err(io_err(&tmp))?;
        file.write_all(&body).map_err(io_err(&tmp))?;
        file.sync_all().map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
        Ok(())
    }
}

impl Drop for DataDirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join(ENDPOINT_FILE));
    }
}

/// The endpoint the current owner published, if any.
pub fn read_endpoint(dir: &Path) -> Option<Endpoint> {
    let text = std::fs::read_to_string(dir.join(ENDPOINT_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_acquire_sees_the_dir_taken_until_release() {
        let dir = tempfile::tempdir().unwrap();
        let Acquired::Owner(lock) = DataDirLock::try_acquire(dir.path()).unwrap() else {
            panic!("first acquire must own the dir");
        };
        assert!(matches!(
            DataDirLock::try_acquire(dir.path()).unwrap(),
            Acquired::Taken
        ));
        let endpoint = Endpoint {
            pid: 1,
            url: "http://127.0.0.1:1/mcp".into(),
            token: None,
            mode: "serve".into(),
        };
        lock.publish(&endpoint).unwrap();
        assert_eq!(read_endpoint(dir.path()), Some(endpoint));
        drop(lock);
        assert_eq!(read_endpoint(dir.path()), None);
        assert!(matches!(
            DataDirLock::try_acquire(dir.path()).unwrap(),
            Acquired::Owner(_)
        ));
    }
}
