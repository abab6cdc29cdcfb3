//! Models from the Hugging Face hub, kept in the hub's own cache layout (so a model that
//! `huggingface-cli download` or sentence-transformers already fetched is found, and ours is
//! found by them):
//!
//! ```text
//! $HF_HUB_CACHE (default $HF_HOME/hub, $HF_HOME default ~/.cache/huggingface)
//!   models--{org}--{name}/blobs/{etag}               file contents, by the hub's ETag
//!   models--{org}--{name}/snapshots/{commit}/{file}  relative symlinks into blobs
//!   models--{org}--{name}/refs/{revision}            the commit a revision points at
//! ```
//!
//! The download is ours rather than the `hf-hub` crate's: it does not check a file's length
//! or hash (a cut-off response is stored as if whole), and it installs file by file, so a
//! failed pull leaves a snapshot that loads half a model. Here every file is checked against
//! the length and SHA-256 the hub announces, and the revision's ref, which is what makes the
//! snapshot visible, is written only once every file is in place.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("{model}: not found on {endpoint} (HTTP 404): check the model id")]
    NotFound { model: String, endpoint: String },
    #[error("{model}/{file}: {endpoint} answered HTTP {status}")]
    Status {
        model: String,
        file: String,
        endpoint: String,
        status: u16,
    },
    #[error("{model}/{file}: cannot reach {endpoint}: {reason}")]
    Unreachable {
        model: String,
        file: String,
        endpoint: String,
        reason: String,
    },
    #[error(
        "{model}/{file}: the download was cut off or corrupted ({reason}); nothing was installed, run the pull again"
    )]
    Corrupt {
        model: String,
        file: String,
        reason: String,
    },
    #[error("{model}/{file}: the hub's answer lacks the {header} header")]
    MissingHeader {
        model: String,
        file: String,
        header: &'static str,
    },
    #[error("model id {0:?} is not of the form org/name (letters, digits, '.', '_', '-')")]
    BadId(String),
    #[error("revision {0:?}: use a branch, tag or commit of letters, digits, '.', '_' and '-'")]
    BadRevision(String),
    #[error("HTTP client: {0}")]
    Client(String),
    #[error("hub cache {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PullError + '_ {
    move |source| PullError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The hub cache on this machine.
#[derive(Debug, Clone)]
pub struct HubCache {
    root: PathBuf,
}

impl HubCache {
    /// `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`, as the hub's
    /// own libraries resolve it.
    pub fn from_env() -> Self {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let root = var("HF_HUB_CACHE").unwrap_or_else(|| {
            var("HF_HOME")
                .unwrap_or_else(|| {
                    var("XDG_CACHE_HOME")
                        .or_else(|| var("HOME").map(|h| h.join(".cache")))
                        .unwrap_or_else(|| PathBuf::from(".cache"))
                        .join("huggingface")
                })
                .join("hub")
        });
        Self { root }
    }

    pub fn at(root: PathBuf) -> Self {
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn repo_dir(&self, model: &str) -> PathBuf {
        self.root
            .join(format!("models--{}", model.replace('/', "--")))
    }

    /// The snapshot `revision` points at, when it holds every file a model needs.
    pub fn snapshot(&self, model: &str, revision: &str) -> Option<PathBuf> {
        let repo = self.repo_dir(model);
        let commit = std::fs::read_to_string(repo.join("refs").join(revision)).ok()?;
        let dir = repo.join("snapshots").join(commit.trim());
        super::local::REQUIRED_FILES
            .iter()
            .all(|f| dir.join(f).is_file())
            .then_some(dir)
    }
}

/// Where a pull stands, for a progress display.
#[derive(Debug, Clone)]
pub struct PullProgress<'a> {
    pub file: &'a str,
    pub done: u64,
    pub total: Option<u64>,
}

/// The hub to pull from: `HF_ENDPOINT` (default huggingface.co), token from `HF_TOKEN`.
pub struct Hub {
    endpoint: String,
    token: Option<String>,
    client: reqwest::Client,
}

struct Fetched {
    file: String,
    etag: String,
    commit: String,
}

impl Hub {
    pub fn from_env(connect_timeout: Duration) -> Result<Self, PullError> {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
        let token = std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty());
        let client = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("hindsight/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| PullError::Client(e.to_string()))?;
        Ok(Self {
            endpoint: endpoint.trim_end_matches('/').to_owned(),
            token,
            client,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Download `model` at `revision` into `cache` (required files, and the optional ones the
    /// model has), each checked, then publish the snapshot. Returns its directory.
    pub async fn pull(
        &self,
        cache: &HubCache,
        model: &str,
        revision: &str,
        mut progress: impl FnMut(PullProgress<'_>),
    ) -> Result<PathBuf, PullError> {
        // Both name paths (the cache's directory, refs/): the hub's own character set, and
        // nothing that could leave the cache.
        let plain = |part: &str| {
            !part.is_empty()
                && !part.starts_with('.')
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        let parts: Vec<&str> = model.split('/').collect();
        if parts.len() != 2 || !parts.iter().all(|p| plain(p)) {
            return Err(PullError::BadId(model.to_owned()));
        }
        if !plain(revision) {
            return Err(PullError::BadRevision(revision.to_owned()));
        }
        let repo = cache.repo_dir(model);
        let blobs = repo.join("blobs");
        tokio::fs::create_dir_all(&blobs)
            .await
            .map_err(io(&blobs))?;
        let mut fetched = Vec::new();
        let files = super::local::REQUIRED_FILES
            .iter()
            .map(|f| (*f, true))
            .chain(super::local::OPTIONAL_FILES.iter().map(|f| (*f, false)));
        for (file, required) in files {
            match self
                .fetch(model, revision, file, &blobs, &mut progress)
                .await
            {
                Ok(f) => fetched.push(f),
                Err(PullError::NotFound { .. }) if !required => {}
                Err(PullError::NotFound { .. }) if fetched.is_empty() => {
                    return Err(PullError::NotFound {
                        model: model.to_owned(),
                        endpoint: self.endpoint.clone(),
                    });
                }
                Err(PullError::NotFound { .. }) => {
                    return Err(PullError::Status {
                        model: model.to_owned(),
                        file: file.to_owned(),
                        endpoint: self.endpoint.clone(),
                        status: 404,
                    });
                }
                Err(e) => return Err(e),
            }
        }
        let commit = fetched[0].commit.clone();
        let snapshot = repo.join("snapshots").join(&commit);
        for f in &fetched {
            let link = snapshot.join(&f.file);
            let parent = link.parent().unwrap_or(&snapshot);
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(io(parent))?;
            let depth = f.file.matches('/').count() + 2;
            let target = PathBuf::from("../".repeat(depth))
                .join("blobs")
                .join(&f.etag);
            let _ = tokio::fs::remove_file(&link).await;
            link_or_copy(&target, &blobs.join(&f.etag), &link).map_err(io(&link))?;
        }
        // The ref makes the snapshot visible: written last, atomically.
        let refs = repo.join("refs");
        tokio::fs::create_dir_all(&refs).await.map_err(io(&refs))?;
        let tmp = refs.join(format!(".{revision}.tmp"));
        tokio::fs::write(&tmp, &commit).await.map_err(io(&tmp))?;
        tokio::fs::rename(&tmp, refs.join(revision))
            .await
            .map_err(io(&refs))?;
        Ok(snapshot)
    }

    /// One file into `blobs/{etag}` (skipped when that blob is already there), checked.
    async fn fetch(
        &self,
        model: &str,
        revision: &str,
        file: &str,
        blobs: &Path,
        progress: &mut impl FnMut(PullProgress<'_>),
    ) -> Result<Fetched, PullError> {
        let unreachable = |reason: String| PullError::Unreachable {
            model: model.to_owned(),
            file: file.to_owned(),
            endpoint: self.endpoint.clone(),
            reason,
        };
        let mut url = format!("{}/{model}/resolve/{revision}/{file}", self.endpoint);
        let mut commit: Option<String> = None;
        let mut etag: Option<String> = None;
        let mut size: Option<u64> = None;
        // The hub answers large (LFS) files with a redirect to its CDN; the commit, ETag and
        // size are on the redirect, so redirects are followed here, not by reqwest.
        let mut response = None;
        for _ in 0..5 {
            let mut request = self.client.get(&url);
            // The token goes to the hub only, never to the CDN a redirect points at.
            if let Some(token) = &self.token
                && url.starts_with(&format!("{}/", self.endpoint))
            {
                request = request.bearer_auth(token);
            }
            let r = request
                .send()
                .await
                .map_err(|e| unreachable(e.to_string()))?;
            let header = |name: &str| {
                r.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    // A weak ETag (`W/"…"`) names the same bytes.
                    .map(|v| v.trim_start_matches("W/").trim_matches('"').to_owned())
            };
            commit = commit.or(header("x-repo-commit"));
            etag = etag.or(header("x-linked-etag")).or(header("etag"));
            size = size.or(header("x-linked-size").and_then(|s| s.parse().ok()));
            // Already have these bytes (a blob is named by its ETag): no download.
            if let (Some(c), Some(e)) = (&commit, &etag)
                && usable(c, e)
                && (r.status().is_success() || r.status().is_redirection())
                && tokio::fs::metadata(blobs.join(e))
                    .await
                    .is_ok_and(|m| m.is_file())
            {
                progress(PullProgress {
                    file,
                    done: size.unwrap_or(0),
                    total: size,
                });
                return Ok(Fetched {
                    file: file.to_owned(),
                    etag: e.clone(),
                    commit: c.clone(),
                });
            }
            if r.status().is_redirection() {
                let location = header("location").ok_or(PullError::MissingHeader {
                    model: model.to_owned(),
                    file: file.to_owned(),
                    header: "location",
                })?;
                url = reqwest::Url::parse(&url)
                    .and_then(|base| base.join(&location))
                    .map_err(|e| unreachable(format!("bad redirect {location:?}: {e}")))?
                    .to_string();
                continue;
            }
            response = Some(r);
            break;
        }
        let response = response.ok_or_else(|| unreachable("too many redirects".to_owned()))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(PullError::NotFound {
                model: model.to_owned(),
                endpoint: self.endpoint.clone(),
            });
        }
        if !status.is_success() {
            return Err(PullError::Status {
                model: model.to_owned(),
                file: file.to_owned(),
                endpoint: self.endpoint.clone(),
                status: status.as_u16(),
            });
        }
        let missing = |header| PullError::MissingHeader {
            model: model.to_owned(),
            file: file.to_owned(),
            header,
        };
        let commit = commit.ok_or_else(|| missing("x-repo-commit"))?;
        let etag = etag.ok_or_else(|| missing("etag"))?;
        if !usable(&commit, &etag) {
            return Err(unreachable(format!(
                "unusable etag {etag:?} or commit {commit:?}"
            )));
        }
        let size = size.or(response.content_length());
        let blob = blobs.join(&etag);
        let done = |etag: String, commit: String| Fetched {
            file: file.to_owned(),
            etag,
            commit,
        };
        let corrupt = |reason: String| PullError::Corrupt {
            model: model.to_owned(),
            file: file.to_owned(),
            reason,
        };
        // A name of this download's own: two processes pulling the same model at once (a
        // daemon's first start and a `models pull`) must not write into one file. Both then
        // rename identical bytes onto the blob.
        let partial = blobs.join(format!(
            "{etag}.{}-{:08x}.incomplete",
            std::process::id(),
            rand::random::<u32>()
        ));
        let result = async {
            let mut out = tokio::fs::File::create(&partial)
                .await
                .map_err(io(&partial))?;
            let mut hasher = Sha256::new();
            let mut received: u64 = 0;
            let mut body = response.bytes_stream();
            progress(PullProgress {
                file,
                done: 0,
                total: size,
            });
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| corrupt(e.to_string()))?;
                hasher.update(&chunk);
                out.write_all(&chunk).await.map_err(io(&partial))?;
                received += chunk.len() as u64;
                progress(PullProgress {
                    file,
                    done: received,
                    total: size,
                });
            }
            out.sync_all().await.map_err(io(&partial))?;
            if let Some(size) = size
                && received != size
            {
                return Err(corrupt(format!("{received} of {size} bytes")));
            }
            // An LFS file's ETag is its SHA-256; a small file's is git's blob id, not checked.
            let digest = format!("{:x}", hasher.finalize());
            if etag.len() == 64 && etag.bytes().all(|b| b.is_ascii_hexdigit()) && digest != etag {
                return Err(corrupt(format!("SHA-256 {digest}, expected {etag}")));
            }
            tokio::fs::rename(&partial, &blob).await.map_err(io(&blob))
        }
        .await;
        if result.is_err() {
            let _ = tokio::fs::remove_file(&partial).await;
        }
        result.map(|()| done(etag, commit))
    }
}

/// An ETag and commit fit to be file and directory names (no path separators, no dots).
fn usable(commit: &str, etag: &str) -> bool {
    let plain = |s: &str| !s.is_empty() && !s.contains(['/', '\\', '.']);
    plain(commit) && plain(etag)
}

#[cfg(unix)]
fn link_or_copy(relative: &Path, _blob: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(relative, link)
}

#[cfg(not(unix))]
fn link_or_copy(_relative: &Path, blob: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(blob, link).map(|_| ())
}

/// Where a local model's files are: `dir` when given, else the hub cache's snapshot of `model`.
pub fn model_dir(dir: Option<&Path>, model: &str) -> Option<PathBuf> {
    match dir {
        Some(dir) => Some(dir.to_path_buf()),
        None => HubCache::from_env().snapshot(model, "main"),
    }
}
