//! The archive job's object sink: batches of archived rows as gzip-compressed JSON Lines (one
//! row per line, every column, the vector included) in a local directory (`file:///path`) or
//! an S3 bucket (`s3://bucket/prefix`; S3-compatible servers via `AWS_ENDPOINT`), through the
//! `object_store` crate. Credentials and endpoint come from the usual `AWS_*` variables.

use std::io::{BufRead, Write};
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::store::ArchivedRow;

#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("archive object store {url}: {message}")]
    Store { url: String, message: String },
    #[error("archive object {key}: {message}")]
    Object { key: String, message: String },
}

pub struct ObjectSink {
    store: Arc<dyn ObjectStore>,
    url: String,
    /// The directory of a `file://` sink, where a killed write leaves its staging file.
    local_root: Option<std::path::PathBuf>,
}

impl ObjectSink {
    /// `file:///absolute/dir` (created if missing) or `s3://bucket[/prefix]`.
    pub fn from_url(url: &str) -> Result<Self, String> {
        let mut local_root = None;
        let store: Arc<dyn ObjectStore> = if let Some(dir) = url.strip_prefix("file://") {
            if !dir.starts_with('/') {
                return Err(format!("{url:?}: a file:// URL needs an absolute path"));
            }
            std::fs::create_dir_all(dir).map_err(|e| format!("{url:?}: {e}"))?;
            local_root = Some(std::path::PathBuf::from(dir));
            // fsync: the rows are deleted once the object is written, so it must be on disk.
            Arc::new(
                LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| format!("{url:?}: {e}"))?
                    .with_fsync(true),
            )
        } else if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(format!("{url:?}: no bucket"));
            }
            let s3 = AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .build()
                .map_err(|e| format!("{url:?}: {e}"))?;
            let prefix = prefix.trim_matches('/');
            if prefix.is_empty() {
                Arc::new(s3)
            } else {
                Arc::new(PrefixStore::new(s3, prefix))
            }
        } else {
            return Err(format!(
                "{url:?}: must be file:///absolute/dir or s3://bucket[/prefix]"
            ));
        };
        Ok(Self {
            store,
            url: url.to_owned(),
            local_root,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Write `rows` under `key` (replacing what a crashed attempt may have left), then read the
    /// object back and compare: only a verified object lets the rows go.
    pub async fn write(&self, key: &str, rows: &[ArchivedRow]) -> Result<u64, SinkError> {
        let object = |message: String| SinkError::Object {
            key: key.to_owned(),
            message,
        };
        // Compression is CPU work: off the async threads.
        let owned = rows.to_vec();
        let bytes = tokio::task::spawn_blocking(move || encode(&owned))
            .await
            .map_err(|e| object(e.to_string()))?
            .map_err(|e| object(e.to_string()))?;
        let (length, digest) = (bytes.len(), xxhash_rust::xxh3::xxh3_128(&bytes));
        let path = Path::from(key);
        self.store
            .put(&path, PutPayload::from(bytes))
            .await
            .map_err(|e| self.store_error(e))?;
        let read = self
            .store
            .get(&path)
            .await
            .map_err(|e| self.store_error(e))?
            .bytes()
            .await
            .map_err(|e| self.store_error(e))?;
        if read.len() != length || xxhash_rust::xxh3::xxh3_128(&read) != digest {
            return Err(object(format!(
                "read back {} bytes that differ from the {length} written",
                read.len()
            )));
        }
        Ok(length as u64)
    }

    pub async fn read(&self, key: &str) -> Result<Vec<ArchivedRow>, SinkError> {
        self.read_if_exists(key)
            .await?
            .ok_or_else(|| SinkError::Object {
                key: key.to_owned(),
                message: "not found".to_owned(),
            })
    }

    /// The object's rows, or `None` when there is no object under `key`.
    pub async fn read_if_exists(&self, key: &str) -> Result<Option<Vec<ArchivedRow>>, SinkError> {
        let got = match self.store.get(&Path::from(key)).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.store_error(e)),
        };
        let bytes = got.bytes().await.map_err(|e| self.store_error(e))?;
        let object = |message: String| SinkError::Object {
            key: key.to_owned(),
            message,
        };
        tokio::task::spawn_blocking(move || decode(&bytes))
            .await
            .map_err(|e| object(e.to_string()))?
            .map(Some)
            .map_err(object)
    }

    /// Delete the object under `key` (no object there is not an error).
    pub async fn delete(&self, key: &str) -> Result<(), SinkError> {
        match self.store.delete(&Path::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.store_error(e)),
        }
    }

    /// Staging files a killed write left in a `file://` sink: `<key>#<n>`, which the local
    /// store writes first and renames into place (S3 puts are atomic and leave none). With
    /// `remove`, they are deleted. Only call this while no write can be under way: under the
    /// archive job's guards. Returns how many there are (were).
    pub async fn partial_files(&self, remove: bool) -> Result<usize, SinkError> {
        let Some(root) = self.local_root.clone() else {
            return Ok(0);
        };
        let url = self.url.clone();
        tokio::task::spawn_blocking(move || staging_files(&root, remove))
            .await
            .map_err(|e| e.to_string())
            .and_then(|found| found.map_err(|e| e.to_string()))
            .map_err(|message| SinkError::Store { url, message })
    }

    fn store_error(&self, e: object_store::Error) -> SinkError {
        SinkError::Store {
            url: self.url.clone(),
            message: e.to_string(),
        }
    }
}

/// Files under `root` named like object_store's staging files (`…#<digits>`); removed when
/// `remove`.
fn staging_files(root: &std::path::Path, remove: bool) -> std::io::Result<usize> {
    let mut found = 0;
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = entry.file_name();
            let is_staging =
                name.to_str()
                    .and_then(|n| n.rsplit_once('#'))
                    .is_some_and(|(stem, n)| {
                        !stem.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                    });
            if is_staging {
                found += 1;
                if remove {
                    std::fs::remove_file(&path)?;
                }
            }
        }
    }
    Ok(found)
}

fn encode(rows: &[ArchivedRow]) -> std::io::Result<Vec<u8>> {
    // JSON Lines into one buffer first, then compressed in one call: fed serde_json's many
    // small writes, the encoder re-zeroes its output buffer on each (most of the time, measured).
    let mut lines = Vec::new();
    for row in rows {
        serde_json::to_writer(&mut lines, row)?;
        lines.push(b'\n');
    }
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(lines.len() / 3),
        flate2::Compression::fast(),
    );
    gz.write_all(&lines)?;
    gz.finish()
}

fn decode(bytes: &[u8]) -> Result<Vec<ArchivedRow>, String> {
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(bytes));
    let mut rows = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("line {}: {e}", n + 1))?;
        if line.is_empty() {
            continue;
        }
        let mut value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("line {}: {e}", n + 1))?;
        // Objects written before event time existed: such a row happened when it was stored,
        // as migration 0009 says of the rows in the tables.
        if let Some(fields) = value.as_object_mut()
            && !fields.contains_key("occurred_at")
            && let Some(created) = fields.get("created_at").cloned()
        {
            fields.insert("occurred_at".to_owned(), created);
        }
        let mut row: ArchivedRow =
            serde_json::from_value(value).map_err(|e| format!("line {}: {e}", n + 1))?;
        row.memory.embedding = row.embedding.clone();
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};
    use serde_json::{Value, json};

    use super::*;
    use crate::domain::{MemoryType, Status};

    fn row() -> ArchivedRow {
        let created = Utc::now() - Duration::days(3);
        ArchivedRow {
            memory: crate::domain::Memory {
                id: uuid::Uuid::now_v7(),
                namespace: "ns".into(),
                memory_type: MemoryType::Episodic,
                content: "the user asked for a report".into(),
                importance: 0.5,
                status: Status::Archived,
                entity: None,
                attribute: None,
                source: json!(null),
                merged_sources: json!([]),
                metadata: json!({}),
                created_at: created,
                occurred_at: created - Duration::days(400),
                updated_at: created,
                expires_at: None,
                last_accessed_at: None,
                access_count: 0,
                deprecated_at: None,
                deprecated_by: None,
                embedding_model: "test/2".into(),
                embedding: vec![],
                signature: None,
            },
            embedding: vec![0.5, -0.5],
            lexical: Some("user ask report".into()),
            archived_at: created,
        }
    }

    #[test]
    fn objects_round_trip_every_column() {
        let row = row();
        let back = decode(&encode(std::slice::from_ref(&row)).unwrap()).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].memory.occurred_at, row.memory.occurred_at);
        assert_eq!(back[0].memory.embedding, row.embedding);
    }

    /// Objects exported before event time existed have no `occurred_at`: their rows happened
    /// when they were stored, as migration 0009 says of the rows in the tables.
    #[test]
    fn an_object_from_before_event_time_reads_its_creation_time_as_event_time() {
        let row = row();
        let mut value = serde_json::to_value(&row).unwrap();
        let Value::Object(fields) = &mut value else {
            panic!("a row is a JSON object")
        };
        assert!(fields.remove("occurred_at").is_some());
        let mut line = serde_json::to_vec(&value).unwrap();
        line.push(b'\n');
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&line).unwrap();
        let back = decode(&gz.finish().unwrap()).unwrap();
        assert_eq!(back[0].memory.occurred_at, row.memory.created_at);
        assert_eq!(back[0].memory.created_at, row.memory.created_at);
    }
}
