//! Row signatures: every memory carries an HMAC-SHA256, made with the server's key, over what it
//! says (id, content, namespace, type, entity/attribute, source, when it happened and was stored,
//! and its status). A row changed behind the server's back (an UPDATE in `sqlite3` or `psql`, a
//! restored backup someone edited) no longer matches, and is never served.
//!
//! The key is the data dir's `signing.key` (created on the first start, mode 0600) or
//! `signing_key`; each signature names its key's id (`<kid>:<hex>`), so after a rotation the
//! rows signed with an earlier key (`signing_previous_keys`) still verify until `hindsight
//! resign` has signed them again.
//!
//! What archiving does is not a change of what a row says: an archived row is signed as the
//! active row it was (`archived` reads as `active` here), so moving rows between the hot and
//! the archive table (and through an object in S3 and back) needs no key and keeps the row's
//! signature; anything else that changes a signed column signs the row again in the same
//! transaction (the stores' `resign`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::domain::{Memory, MemoryId, MemoryType, Status};
use crate::secret::Secret;

/// The shortest key accepted: 32 characters (the generated one is 64 hex digits, 256 bits).
pub const MIN_KEY_LEN: usize = 32;

/// The version of the signed message's layout; part of what is signed.
const MESSAGE_VERSION: &str = "hindsight-row-v1";

#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    #[error("{field} must be at least {MIN_KEY_LEN} characters")]
    ShortKey { field: &'static str },
    #[error("the signing key file {path}: {message}")]
    KeyFile { path: PathBuf, message: String },
}

/// Why a row failed its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tamper {
    /// No signature, in a store whose rows are all signed.
    Unsigned,
    /// Signed with a key this server does not hold.
    UnknownKey(String),
    /// Not what the key signed: a signed column was changed.
    Mismatch,
}

impl Tamper {
    pub fn as_str(&self) -> &'static str {
        match self {
            Tamper::Unsigned => "unsigned",
            Tamper::UnknownKey(_) => "unknown_key",
            Tamper::Mismatch => "mismatch",
        }
    }
}

impl std::fmt::Display for Tamper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tamper::Unsigned => f.write_str("no signature"),
            Tamper::UnknownKey(kid) => write!(f, "signed with key {kid}, which this server lacks"),
            Tamper::Mismatch => f.write_str("signature does not match the row"),
        }
    }
}

/// Which key a good signature was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    Current,
    /// A previous key: `hindsight resign` signs the row with the current one.
    Previous,
}

#[derive(Clone)]
struct Key {
    id: String,
    secret: Secret,
}

impl Key {
    fn new(secret: Secret, field: &'static str) -> Result<Self, SigningError> {
        if secret.expose().len() < MIN_KEY_LEN {
            return Err(SigningError::ShortKey { field });
        }
        // The id names the key without giving anything of it away: a hash of a tagged copy.
        let digest = Sha256::digest(format!("hindsight-key-id\0{}", secret.expose()).as_bytes());
        let id = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        Ok(Self { id, secret })
    }

    fn mac(&self, message: &[u8]) -> Vec<u8> {
        // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(self.secret.expose().as_bytes())
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
        mac.update(message);
        mac.finalize().into_bytes().to_vec()
    }
}

/// The server's signing keys: the current one signs, it and the previous ones verify.
#[derive(Clone)]
pub struct Signer(Arc<Keys>);

#[derive(Clone)]
struct Keys {
    current: Key,
    previous: Vec<Key>,
    /// `hindsight resign --all` after a key was lost: open a store whose rows another key
    /// signed (every other process is refused such a store).
    foreign_rows_accepted: bool,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("key_id", &self.0.current.id)
            .field(
                "previous",
                &self.0.previous.iter().map(|k| &k.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Where a data dir keeps its signing key.
pub fn signing_key_path(data_dir: &Path) -> PathBuf {
    data_dir.join("signing.key")
}

impl Signer {
    pub fn new(current: Secret, previous: Vec<Secret>) -> Result<Self, SigningError> {
        Ok(Self(Arc::new(Keys {
            current: Key::new(current, "signing_key")?,
            previous: previous
                .into_iter()
                .map(|k| Key::new(k, "signing_previous_keys"))
                .collect::<Result<_, _>>()?,
            foreign_rows_accepted: false,
        })))
    }

    /// The same keys, for `hindsight resign --all` only: a store whose rows another key signed
    /// opens, so that the operator can sign them all with this one.
    pub fn accepting_foreign_rows(self) -> Self {
        let mut keys = (*self.0).clone();
        keys.foreign_rows_accepted = true;
        Self(Arc::new(keys))
    }

    /// Whether a store signed with other keys may be opened (`accepting_foreign_rows`).
    pub fn accepts_foreign_rows(&self) -> bool {
        self.0.foreign_rows_accepted
    }

    /// The key `signing_key` names, else the data dir's `signing.key` (created now, 256 random
    /// bits, mode 0600, when there is none); `previous` verify only.
    pub fn for_data_dir(
        data_dir: &Path,
        explicit: Option<&Secret>,
        previous: &[Secret],
    ) -> Result<Self, SigningError> {
        let current = match explicit {
            Some(key) => key.clone(),
            None => {
                let path = signing_key_path(data_dir);
                crate::secret::secret_file(&path, MIN_KEY_LEN, generate_key)
                    .map_err(|e| SigningError::KeyFile {
                        path: path.clone(),
                        message: e.to_string(),
                    })?
                    .0
            }
        };
        Self::new(current, previous.to_vec())
    }

    /// A fresh random key, kept nowhere: for scratch stores (benches, evals) that nobody opens
    /// again.
    pub fn ephemeral() -> Self {
        Self::new(generate_key(), vec![]).unwrap_or_else(|_| unreachable!("64 hex digits"))
    }

    /// The id of the key that signs.
    pub fn key_id(&self) -> &str {
        &self.0.current.id
    }

    /// Whether `kid` is one of this signer's keys.
    pub fn knows(&self, kid: &str) -> bool {
        self.0.current.id == kid || self.0.previous.iter().any(|k| k.id == kid)
    }

    /// `<kid>:<hex>` of the row as it stands.
    pub fn sign(&self, memory: &Memory) -> String {
        let key = &self.0.current;
        format!("{}:{}", key.id, hex(&key.mac(&message(memory))))
    }

    /// `memory` with its signature as it stands now.
    pub fn signed(&self, memory: Memory) -> Memory {
        Memory {
            signature: Some(self.sign(&memory)),
            ..memory
        }
    }

    /// Whether the row's signature is one of this server's keys' over what the row says.
    pub fn verify(&self, memory: &Memory) -> Result<Verified, Tamper> {
        let Some(signature) = memory.signature.as_deref() else {
            return Err(Tamper::Unsigned);
        };
        let Some((kid, mac)) = signature.split_once(':') else {
            return Err(Tamper::Mismatch);
        };
        let (key, verified) = if self.0.current.id == kid {
            (&self.0.current, Verified::Current)
        } else if let Some(key) = self.0.previous.iter().find(|k| k.id == kid) {
            (key, Verified::Previous)
        } else {
            return Err(Tamper::UnknownKey(kid.to_owned()));
        };
        // Constant-time comparison through the MAC itself.
        let Some(expected) = unhex(mac) else {
            return Err(Tamper::Mismatch);
        };
        let mut check = <Hmac<Sha256> as Mac>::new_from_slice(key.secret.expose().as_bytes())
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
        check.update(&message(memory));
        check
            .verify_slice(&expected)
            .map(|()| verified)
            .map_err(|_| Tamper::Mismatch)
    }
}

/// The key id a stored signature names.
pub fn signature_key_id(signature: &str) -> Option<&str> {
    signature.split_once(':').map(|(kid, _)| kid)
}

fn generate_key() -> Secret {
    use rand::Rng;
    let bytes: [u8; 32] = rand::rng().random();
    Secret::new(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What is signed, as one JSON array (strings escaped, so no two rows give the same bytes).
/// Times are whole milliseconds (what both stores keep); `source` is in a canonical form (keys
/// sorted, numbers as doubles), so PostgreSQL's JSONB normalising it changes nothing.
fn message(memory: &Memory) -> Vec<u8> {
    signed_fields(
        memory.id,
        &memory.namespace,
        memory.memory_type,
        &memory.content,
        memory.entity.as_deref(),
        memory.attribute.as_deref(),
        &memory.source,
        memory.occurred_at,
        memory.created_at,
        memory.status,
    )
}

#[allow(clippy::too_many_arguments)]
fn signed_fields(
    id: MemoryId,
    namespace: &str,
    memory_type: MemoryType,
    content: &str,
    entity: Option<&str>,
    attribute: Option<&str>,
    source: &Value,
    occurred_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
    status: Status,
) -> Vec<u8> {
    let status = match status {
        Status::Archived => Status::Active,
        other => other,
    };
    let mut source_text = String::new();
    canonical(source, &mut source_text);
    serde_json::json!([
        MESSAGE_VERSION,
        id.to_string(),
        namespace,
        memory_type.as_str(),
        content,
        entity,
        attribute,
        source_text,
        occurred_at.timestamp_millis(),
        created_at.timestamp_millis(),
        status.as_str(),
    ])
    .to_string()
    .into_bytes()
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(x) => out.push_str(&format!("{x:?}")),
            None => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::*;

    fn memory() -> Memory {
        let at = Utc.timestamp_millis_opt(1_717_200_000_123).unwrap();
        Memory {
            id: uuid::Uuid::now_v7(),
            namespace: "team/analytics".into(),
            memory_type: MemoryType::Semantic,
            content: "the user wants data sources in every report".into(),
            importance: 0.7,
            status: Status::Active,
            entity: Some("user".into()),
            attribute: Some("report_style".into()),
            source: json!({"b": 1, "a": [1.0, "x"]}),
            merged_sources: json!([]),
            metadata: json!({}),
            created_at: at,
            occurred_at: at,
            updated_at: at,
            expires_at: None,
            last_accessed_at: None,
            access_count: 0,
            deprecated_at: None,
            deprecated_by: None,
            embedding_model: "builtin".into(),
            embedding: vec![0.0; 4],
            signature: None,
        }
    }

    fn signer(key: &str) -> Signer {
        Signer::new(Secret::new(key), vec![]).unwrap()
    }

    #[test]
    fn a_signed_row_verifies_and_any_signed_change_breaks_it() {
        let signer = signer("0123456789abcdef0123456789abcdef");
        let row = signer.signed(memory());
        assert_eq!(signer.verify(&row), Ok(Verified::Current));
        let changes: Vec<fn(&mut Memory)> = vec![
            |m| m.content.push('!'),
            |m| m.namespace = "global".into(),
            |m| m.memory_type = MemoryType::Episodic,
            |m| m.status = Status::Forgotten,
            |m| m.status = Status::Deprecated,
            |m| m.entity = None,
            |m| m.attribute = Some("x".into()),
            |m| m.source = json!({"b": 2, "a": [1.0, "x"]}),
            |m| m.occurred_at += chrono::Duration::milliseconds(1),
            |m| m.created_at -= chrono::Duration::days(1),
            |m| m.id = uuid::Uuid::now_v7(),
        ];
        for change in changes {
            let mut tampered = row.clone();
            change(&mut tampered);
            assert_eq!(signer.verify(&tampered), Err(Tamper::Mismatch));
        }
        // What is not signed may change: access statistics, importance, merged sources.
        let mut touched = row.clone();
        touched.access_count = 9;
        touched.importance = 0.1;
        touched.merged_sources = json!([{"at": 1}]);
        touched.updated_at += chrono::Duration::days(1);
        assert_eq!(signer.verify(&touched), Ok(Verified::Current));
        // Archiving is not a change of what the row says.
        touched.status = Status::Archived;
        assert_eq!(signer.verify(&touched), Ok(Verified::Current));
    }

    #[test]
    fn source_is_compared_in_canonical_form() {
        let signer = signer("0123456789abcdef0123456789abcdef");
        let row = signer.signed(memory());
        let mut renormalised = row.clone();
        // What JSONB gives back: keys in its own order, 1.0 as 1.
        renormalised.source = serde_json::from_str(r#"{"a": [1, "x"], "b": 1.0}"#).unwrap();
        assert_eq!(signer.verify(&renormalised), Ok(Verified::Current));
    }

    #[test]
    fn keys_unknown_missing_rotated() {
        let old = signer("old-key-old-key-old-key-old-key-0");
        let row = old.signed(memory());
        let new = signer("new-key-new-key-new-key-new-key-1");
        assert_eq!(
            new.verify(&row),
            Err(Tamper::UnknownKey(old.key_id().to_owned()))
        );
        let rotated = Signer::new(
            Secret::new("new-key-new-key-new-key-new-key-1"),
            vec![Secret::new("old-key-old-key-old-key-old-key-0")],
        )
        .unwrap();
        assert_eq!(rotated.verify(&row), Ok(Verified::Previous));
        assert_eq!(
            rotated.verify(&rotated.signed(row.clone())),
            Ok(Verified::Current)
        );
        assert!(rotated.knows(old.key_id()) && rotated.knows(new.key_id()));
        let unsigned = Memory {
            signature: None,
            ..row.clone()
        };
        assert_eq!(old.verify(&unsigned), Err(Tamper::Unsigned));
        let garbled = Memory {
            signature: Some(format!("{}:zz", old.key_id())),
            ..row
        };
        assert_eq!(old.verify(&garbled), Err(Tamper::Mismatch));
        assert!(matches!(
            Signer::new(Secret::new("short"), vec![]),
            Err(SigningError::ShortKey { .. })
        ));
        // The id gives nothing of the key away and the Debug shows ids only.
        assert!(!format!("{rotated:?}").contains("new-key"));
    }

    #[test]
    fn the_data_dir_key_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = Signer::for_data_dir(dir.path(), None, &[]).unwrap();
        let again = Signer::for_data_dir(dir.path(), None, &[]).unwrap();
        assert_eq!(first.key_id(), again.key_id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(signing_key_path(dir.path()))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let explicit = Secret::new("explicit-key-explicit-key-explicit-key");
        let chosen = Signer::for_data_dir(dir.path(), Some(&explicit), &[]).unwrap();
        assert_ne!(chosen.key_id(), first.key_id());
    }
}
