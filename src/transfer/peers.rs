//! Memories from the servers people use today, as lines of our own format (no vectors: they
//! are embedded here). Each peer's file is read whole (they are a person's or an agent's
//! memories, not millions of rows); a line or record that cannot be used is reported by its
//! line (or record) number, as our own format's are.
//!
//! - `mcp-memory`: the MCP reference memory server's `memory.jsonl` (npm
//!   `@modelcontextprotocol/server-memory`): `{"type":"entity","name","entityType",
//!   "observations":[…]}` and `{"type":"relation","from","to","relationType"}` lines. Each
//!   observation becomes a semantic memory about its entity (`entity` set, the text prefixed
//!   with the entity's name so it reads alone); the entity's type and its relations, both ways,
//!   go in `metadata`. An entity without observations still becomes one memory, so its
//!   relations are kept.
//! - `mem0`: OpenMemory's backup (`POST /api/v1/backup/export`): its `memories.json`
//!   (`{"user", "memories":[{id, content, metadata, state, created_at, updated_at,
//!   archived_at, category_ids}], "categories", "apps"}`) or its per-memory
//!   `memories.jsonl.gz` lines (`{id, content, metadata, created_at, updated_at, state, app,
//!   categories}`); also the mem0 API's `get_all` answer (`[{id, memory, user_id, metadata,
//!   categories, created_at, updated_at}]`, bare or under `results`). Ids are kept (mem0's are
//!   UUIDs); `active`/`paused` become active, `archived` archived, `deleted` is left out.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::format::{Header, LineError, MemoryLine};
use crate::domain::{MemoryId, MemoryType, Status};

/// Which peer a file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Peer {
    /// The MCP reference memory server's memory.jsonl.
    McpMemory,
    /// mem0 / OpenMemory: memories.json, memories.jsonl(.gz) or the API's get_all answer.
    Mem0,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::McpMemory => "mcp-memory",
            Peer::Mem0 => "mem0",
        }
    }
}

/// A peer's file as our lines: each with the number of the line (or record) it came from.
pub struct Converted {
    pub header: Header,
    pub lines: Vec<(u64, MemoryLine)>,
    pub errors: Vec<LineError>,
    /// Records deliberately left out (deleted in mem0).
    pub left_out: u64,
}

/// `text` (the whole file, gunzipped) from `peer`, into `namespace` (mem0: the user's id when
/// none is given).
pub fn convert(peer: Peer, text: &str, namespace: Option<&str>, now: DateTime<Utc>) -> Converted {
    let mut converted = Converted {
        header: Header {
            hindsight_export: super::FORMAT_VERSION,
            embedder: format!("{}:none", peer.name()),
            dimension: 0,
            exported_at: now,
            with_vectors: false,
        },
        lines: Vec::new(),
        errors: Vec::new(),
        left_out: 0,
    };
    match peer {
        Peer::McpMemory => mcp_memory(text, namespace.unwrap_or("default"), now, &mut converted),
        Peer::Mem0 => mem0(text, namespace, now, &mut converted),
    }
    converted
}

/// A stable id for a record that has none, so importing the same file again changes nothing.
fn derived_id(parts: &[&str]) -> MemoryId {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0x1f]);
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8: custom
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
    MemoryId::from_bytes(bytes)
}

fn line(id: MemoryId, namespace: &str, content: String, now: DateTime<Utc>) -> MemoryLine {
    MemoryLine::new_active(id, namespace.to_owned(), MemoryType::Semantic, content, now)
}

fn text_field<'a>(record: &'a Value, field: &str) -> Option<&'a str> {
    record
        .get(field)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn mcp_memory(text: &str, namespace: &str, now: DateTime<Utc>, out: &mut Converted) {
    struct Entity {
        line: u64,
        name: String,
        kind: Option<String>,
        observations: Vec<String>,
    }
    let mut entities: Vec<Entity> = Vec::new();
    let mut relations: Vec<(String, String, String)> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index as u64 + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let record: Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                out.errors
                    .push(LineError::new(number, "", format!("not valid JSON: {e}")));
                continue;
            }
        };
        match record.get("type").and_then(Value::as_str) {
            Some("entity") => {
                let Some(name) = text_field(&record, "name") else {
                    out.errors
                        .push(LineError::new(number, "name", "an entity needs a name"));
                    continue;
                };
                let observations = match record.get("observations") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter_map(|o| o.as_str().map(str::trim).filter(|s| !s.is_empty()))
                        .map(str::to_owned)
                        .collect(),
                    Some(_) => {
                        out.errors.push(LineError::new(
                            number,
                            "observations",
                            "must be an array of strings",
                        ));
                        continue;
                    }
                };
                entities.push(Entity {
                    line: number,
                    name: name.to_owned(),
                    kind: text_field(&record, "entityType").map(str::to_owned),
                    observations,
                });
            }
            Some("relation") => {
                match (
                    text_field(&record, "from"),
                    text_field(&record, "relationType"),
                    text_field(&record, "to"),
                ) {
                    (Some(from), Some(kind), Some(to)) => {
                        relations.push((from.to_owned(), kind.to_owned(), to.to_owned()))
                    }
                    _ => out.errors.push(LineError::new(
                        number,
                        "relationType",
                        "a relation needs from, relationType and to",
                    )),
                }
            }
            other => out.errors.push(LineError::new(
                number,
                "type",
                format!("expected \"entity\" or \"relation\", got {other:?}"),
            )),
        }
    }
    for entity in entities {
        let linked: Vec<Value> = relations
            .iter()
            .filter(|(from, _, to)| *from == entity.name || *to == entity.name)
            .map(|(from, kind, to)| json!({"from": from, "relation": kind, "to": to}))
            .collect();
        let mut metadata = Map::new();
        if let Some(kind) = &entity.kind {
            metadata.insert("entity_type".into(), json!(kind));
        }
        if !linked.is_empty() {
            metadata.insert("relations".into(), Value::Array(linked));
        }
        let texts: Vec<(String, String)> = if entity.observations.is_empty() {
            let kind = entity.kind.as_deref().unwrap_or("entity");
            vec![(String::new(), format!("{} ({kind})", entity.name))]
        } else {
            entity
                .observations
                .iter()
                .map(|o| (o.clone(), format!("{}: {o}", entity.name)))
                .collect()
        };
        for (observation, content) in texts {
            let mut memory = line(
                derived_id(&["mcp-memory", namespace, &entity.name, &observation]),
                namespace,
                content,
                now,
            );
            memory.entity = Some(entity.name.clone());
            memory.metadata = Value::Object(metadata.clone());
            memory.source = json!({"imported_from": "mcp-memory", "entity": entity.name});
            out.lines.push((entity.line, memory));
        }
    }
}

/// A mem0 file read: its records (numbered), the user it names once (memories.json) and its
/// categories by id.
struct Mem0File {
    records: Vec<(u64, Value)>,
    user: Option<String>,
    categories: Map<String, Value>,
}

fn numbered(items: Vec<Value>) -> Vec<(u64, Value)> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i as u64 + 1, v))
        .collect()
}

/// One JSON document (memories.json, a get_all answer) or JSON Lines (memories.jsonl).
fn read_mem0(text: &str, out: &mut Converted) -> Mem0File {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(doc)) if doc.contains_key("memories") || doc.contains_key("results") => {
            let items = doc
                .get("memories")
                .or_else(|| doc.get("results"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Mem0File {
                records: numbered(items),
                user: doc
                    .get("user")
                    .and_then(|u| text_field(u, "user_id"))
                    .map(str::to_owned),
                categories: doc
                    .get("categories")
                    .and_then(Value::as_array)
                    .map(|cs| {
                        cs.iter()
                            .filter_map(|c| {
                                Some((text_field(c, "id")?.to_owned(), c.get("name")?.clone()))
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        }
        Ok(Value::Array(items)) => Mem0File {
            records: numbered(items),
            user: None,
            categories: Map::new(),
        },
        _ => {
            let mut records = Vec::new();
            for (index, raw) in text.lines().enumerate() {
                if raw.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str(raw) {
                    Ok(v) => records.push((index as u64 + 1, v)),
                    Err(e) => out.errors.push(LineError::new(
                        index as u64 + 1,
                        "",
                        format!("not valid JSON: {e}"),
                    )),
                }
            }
            Mem0File {
                records,
                user: None,
                categories: Map::new(),
            }
        }
    }
}

fn mem0(text: &str, namespace: Option<&str>, now: DateTime<Utc>, out: &mut Converted) {
    let Mem0File {
        records,
        user,
        categories,
    } = read_mem0(text, out);
    for (number, record) in records {
        let Some(content) =
            text_field(&record, "content").or_else(|| text_field(&record, "memory"))
        else {
            out.errors.push(LineError::new(
                number,
                "content",
                "a memory needs its text (content or memory)",
            ));
            continue;
        };
        let state = text_field(&record, "state").unwrap_or("active");
        let status = match state {
            "active" | "paused" => Status::Active,
            "archived" => Status::Archived,
            "deleted" => {
                out.left_out += 1;
                continue;
            }
            other => {
                out.errors.push(LineError::new(
                    number,
                    "state",
                    format!("unknown state {other:?}"),
                ));
                continue;
            }
        };
        let time = |field: &str| -> Result<Option<DateTime<Utc>>, LineError> {
            match text_field(&record, field) {
                None => Ok(None),
                Some(t) => parse_time(t)
                    .map(Some)
                    .ok_or_else(|| LineError::new(number, field, format!("not a time: {t:?}"))),
            }
        };
        let (created, updated, archived) =
            match (time("created_at"), time("updated_at"), time("archived_at")) {
                (Ok(c), Ok(u), Ok(a)) => (c, u, a),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                    out.errors.push(e);
                    continue;
                }
            };
        let id = match text_field(&record, "id") {
            Some(id) => match MemoryId::parse_str(id) {
                Ok(id) => id,
                Err(_) => derived_id(&["mem0", id]),
            },
            None => derived_id(&["mem0", content]),
        };
        // memories.json names the user once (a record's `user_id` is OpenMemory's row id);
        // a get_all answer names it in each record.
        let user_ns = user
            .clone()
            .or_else(|| text_field(&record, "user_id").map(str::to_owned));
        let ns = namespace
            .map(str::to_owned)
            .or(user_ns)
            .unwrap_or_else(|| "default".to_owned());
        let created = created.unwrap_or(now);
        let mut memory = line(id, &ns, content.to_owned(), created);
        memory.updated_at = updated.unwrap_or(created).max(created);
        memory.status = status;
        if status == Status::Archived {
            memory.archived_at = Some(archived.unwrap_or(memory.updated_at));
        }
        let mut metadata = match record.get("metadata") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let mut names: Vec<Value> = record
            .get("categories")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(ids) = record.get("category_ids").and_then(Value::as_array) {
            names.extend(
                ids.iter()
                    .filter_map(|id| categories.get(id.as_str()?).cloned()),
            );
        }
        let mut mem0 = Map::new();
        mem0.insert("state".into(), json!(state));
        if !names.is_empty() {
            mem0.insert("categories".into(), Value::Array(names));
        }
        if let Some(app) = text_field(&record, "app") {
            mem0.insert("app".into(), json!(app));
        }
        metadata.insert("mem0".into(), Value::Object(mem0));
        memory.metadata = Value::Object(metadata);
        memory.source = json!({"imported_from": "mem0", "id": text_field(&record, "id")});
        out.lines.push((number, memory));
    }
}

/// ISO 8601 as Python's `isoformat()` writes it: with an offset, or naive (taken as UTC).
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|t| t.and_utc())
        })
}
