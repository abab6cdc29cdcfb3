//! Configuration: defaults → `hindsight.toml` (or `--config FILE`) → `HINDSIGHT_*` env → flags.
//! Every key is flat, and its env name is `HINDSIGHT_` + the key upper-cased, so the file, the env
//! and `hindsight config` all speak the same names. A bad value fails start naming the key.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::secret::{Secret, SecretUrl};

pub use crate::distill::llm::StructuredOutput;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("config key `{key}` (env {env}): {message}")]
    Env {
        key: &'static str,
        env: String,
        message: String,
    },
    #[error("config key `{key}`: {message}")]
    Invalid { key: &'static str, message: String },
}

/// Parsing a value given as an environment variable.
pub trait EnvValue: Sized {
    fn parse_env(raw: &str) -> Result<Self, String>;
}

macro_rules! env_value_from_str {
    ($($t:ty),*) => {$(
        impl EnvValue for $t {
            fn parse_env(raw: &str) -> Result<Self, String> {
                raw.trim().parse::<$t>().map_err(|e| format!("{e} (got {raw:?})"))
            }
        }
    )*};
}
env_value_from_str!(String, PathBuf, SocketAddr, f64, u64, usize, u32, bool);

impl EnvValue for Secret {
    fn parse_env(raw: &str) -> Result<Self, String> {
        Ok(Secret::new(raw.trim()))
    }
}

impl EnvValue for SecretUrl {
    fn parse_env(raw: &str) -> Result<Self, String> {
        Ok(SecretUrl::new(raw.trim()))
    }
}

/// Lists are comma-separated in the environment: `HINDSIGHT_ALLOWED_HOSTS=localhost,memory.internal`.
impl EnvValue for Vec<String> {
    fn parse_env(raw: &str) -> Result<Self, String> {
        Ok(raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect())
    }
}

/// Keys, comma-separated like the other lists.
impl EnvValue for Vec<Secret> {
    fn parse_env(raw: &str) -> Result<Self, String> {
        Ok(Vec::<String>::parse_env(raw)?
            .into_iter()
            .map(Secret::new)
            .collect())
    }
}

impl<T: EnvValue> EnvValue for Option<T> {
    fn parse_env(raw: &str) -> Result<Self, String> {
        if raw.trim().is_empty() {
            Ok(None)
        } else {
            T::parse_env(raw).map(Some)
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    /// The data set's own embedder; for a new data set the local model when it is here or can
    /// be pulled, else `builtin`. Made concrete at start (`startup::data_set_embedder`).
    #[default]
    Auto,
    Builtin,
    Local,
    Openai,
}

impl EmbedderKind {
    /// The kind that produced vectors with this embedder id (as stored with the data).
    pub fn of_id(id: &str) -> Option<Self> {
        if id.starts_with("builtin-") {
            Some(Self::Builtin)
        } else if id.starts_with("local:") {
            Some(Self::Local)
        } else if id.starts_with("openai:") {
            Some(Self::Openai)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Builtin => "builtin",
            Self::Local => "local",
            Self::Openai => "openai",
        }
    }
}

impl EnvValue for EmbedderKind {
    fn parse_env(raw: &str) -> Result<Self, String> {
        match raw.trim() {
            "auto" => Ok(Self::Auto),
            "builtin" => Ok(Self::Builtin),
            "local" => Ok(Self::Local),
            "openai" => Ok(Self::Openai),
            other => Err(format!(
                "must be auto, builtin, local or openai, got {other:?}"
            )),
        }
    }
}

/// Whether the HTTP face requires a bearer token (`auth`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// Every route but `/healthz` wants a token: `auth_token`, the data dir's operator token
    /// (created on first start), or one from `hindsight tokens create`.
    #[default]
    Token,
    /// No token needed: whoever reaches the port is the operator. Loopback only.
    None,
}

impl EnvValue for AuthMode {
    fn parse_env(raw: &str) -> Result<Self, String> {
        match raw.trim() {
            "token" => Ok(Self::Token),
            "none" => Ok(Self::None),
            other => Err(format!("must be token or none, got {other:?}")),
        }
    }
}

/// The local embedder's model when `embed_model` is unset.
pub const DEFAULT_LOCAL_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Which arms a search runs (`search_arms`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchArms {
    /// The vector index and the full-text index, fused.
    #[default]
    Hybrid,
    /// The vector index only.
    Dense,
    /// The full-text index only.
    Lexical,
}

impl SearchArms {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "hybrid" => Ok(Self::Hybrid),
            "dense" => Ok(Self::Dense),
            "lexical" => Ok(Self::Lexical),
            other => Err(format!("must be hybrid, dense or lexical, got {other:?}")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hybrid => "hybrid",
            Self::Dense => "dense",
            Self::Lexical => "lexical",
        }
    }

    pub fn dense(self) -> bool {
        matches!(self, Self::Hybrid | Self::Dense)
    }

    pub fn lexical(self) -> bool {
        matches!(self, Self::Hybrid | Self::Lexical)
    }
}

impl EnvValue for StructuredOutput {
    fn parse_env(raw: &str) -> Result<Self, String> {
        Self::parse(raw)
    }
}

impl EnvValue for SearchArms {
    fn parse_env(raw: &str) -> Result<Self, String> {
        Self::parse(raw)
    }
}

/// How the arms are fused (`search_fusion`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FusionKind {
    /// Cosine and the scaled lexical score, weighted (`search_lexical_weight`).
    #[default]
    Score,
    /// Reciprocal-rank fusion (`search_rrf_k`).
    Rrf,
}

impl EnvValue for FusionKind {
    fn parse_env(raw: &str) -> Result<Self, String> {
        match raw.trim() {
            "rrf" => Ok(Self::Rrf),
            "score" => Ok(Self::Score),
            other => Err(format!("must be rrf or score, got {other:?}")),
        }
    }
}

pub fn env_name(key: &str) -> String {
    format!("HINDSIGHT_{}", key.to_uppercase())
}

macro_rules! settings {
    ($( $(#[doc = $doc:literal])* $key:ident : $ty:ty = $default:expr, )*) => {
        /// The effective configuration.
        #[derive(Debug, Clone, Serialize)]
        pub struct Settings {
            $( $(#[doc = $doc])* pub $key: $ty, )*
        }

        impl Default for Settings {
            fn default() -> Self {
                Self { $( $key: $default, )* }
            }
        }

        /// One layer (file, env or flags): only the keys it sets.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Layer {
            $( pub $key: Option<$ty>, )*
        }

        impl Layer {
            pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
                let mut layer = Layer::default();
                $(
                    let env = env_name(stringify!($key));
                    if let Some(raw) = lookup(&env) {
                        layer.$key = Some(<$ty as EnvValue>::parse_env(&raw).map_err(|message| {
                            ConfigError::Env { key: stringify!($key), env, message }
                        })?);
                    }
                )*
                Ok(layer)
            }

            fn apply_to(self, settings: &mut Settings) {
                $( if let Some(v) = self.$key { settings.$key = v; } )*
            }
        }

        /// Every key, in declaration order.
        pub const KEYS: &[&str] = &[$(stringify!($key)),*];
    };
}

settings! {
    /// Where the SQLite file, the vector index and the lock file live.
    data_dir: PathBuf = PathBuf::from("./data"),
    /// Where the maintenance jobs' `<name>.toml` files are (a job without a file runs on its
    /// default schedule).
    jobs_dir: PathBuf = PathBuf::from("./jobs"),
    /// HTTP listen address for `serve` (MCP at /mcp, /healthz).
    listen: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 8765)),
    /// `sqlite://…` (default: `<data_dir>/hindsight.db`) or `postgres://…` (scale-out).
    database_url: Option<SecretUrl> = None,
    /// PostgreSQL connection pool bounds, per process.
    db_pool_min: u32 = 5,
    db_pool_max: u32 = 20,
    /// Qdrant server gRPC endpoint (`http://host:6334`) for a vector index shared by replicas;
    /// unset: the embedded index under `data_dir`.
    qdrant_url: Option<SecretUrl> = None,
    qdrant_api_key: Option<Secret> = None,
    qdrant_collection: String = "hindsight_memories".to_owned(),
    qdrant_timeout_secs: u64 = 10,
    /// `token` (default): HTTP wants a bearer token — the operator's (`auth_token`, else the
    /// one created in `<data_dir>/operator.token` on first start) or an agent's (`hindsight
    /// tokens create`). `none`: no token, whoever reaches the port is the operator (loopback
    /// only).
    auth: AuthMode = AuthMode::Token,
    /// The operator's bearer token (at least 16 characters); unset: the data dir's
    /// `operator.token`.
    auth_token: Option<Secret> = None,
    /// The key every row's signature is made with (at least 32 characters); unset: the data
    /// dir's `signing.key`, created on the first start. Replicas on one database need the
    /// same key.
    signing_key: Option<Secret> = None,
    /// Earlier keys, still accepted on read after a rotation until `hindsight resign` has
    /// signed every row with `signing_key`.
    signing_previous_keys: Vec<Secret> = Vec::new(),
    /// Host headers accepted on every route (DNS-rebinding protection): `name` (any port) or
    /// `name:port`. Add the name clients use when the daemon runs behind a proxy or in a
    /// container, e.g. `hindsight` or `memory.example.com`.
    allowed_hosts: Vec<String> = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()],
    /// Browser origins besides the daemon's own allowed to call it (`http://localhost:6274`,
    /// a browser MCP client); every other cross-site request is refused.
    allowed_origins: Vec<String> = Vec::new(),
    /// `auto` (the data set's embedder; a new one gets `local` when the model is here or can
    /// be pulled, else `builtin`), `builtin`, `local` or `openai`.
    embedder: EmbedderKind = EmbedderKind::Auto,
    embed_base_url: Option<SecretUrl> = None,
    /// The model: for `openai` the endpoint's model name (required); for `local` a hub id,
    /// default `sentence-transformers/all-MiniLM-L6-v2`, found in the hub cache
    /// (`HF_HUB_CACHE`, `HF_HOME`) or pulled with `hindsight models pull`.
    embed_model: Option<String> = None,
    /// `local`: read the model's files (config.json, tokenizer.json, model.safetensors) from
    /// this directory instead of the hub cache; `embed_model` still names it.
    embed_model_dir: Option<PathBuf> = None,
    embed_api_key: Option<Secret> = None,
    /// Vector size of the `openai` embedder; probed from the endpoint when unset.
    embed_dimension: Option<usize> = None,
    embed_timeout_secs: u64 = 30,
    /// OpenAI-compatible chat endpoint the distill job drafts candidates with (e.g.
    /// `https://api.openai.com/v1`, `http://localhost:11434/v1`); unset: extractive drafts.
    llm_base_url: Option<SecretUrl> = None,
    llm_model: Option<String> = None,
    llm_api_key: Option<Secret> = None,
    /// Per attempt; a timed-out call is retried twice.
    llm_timeout_secs: u64 = 60,
    /// LLM calls in flight at once during a distill run.
    llm_max_concurrency: usize = 4,
    /// Tokens (prompt + reply) one distill run may spend; clusters left over wait for the next run.
    llm_token_budget: u64 = 200_000,
    /// Upper bound on one reply's tokens.
    llm_max_tokens: u32 = 1_024,
    /// How the reply's JSON Schema is sent: `auto` (`json_schema`, falling back to
    /// `json_object`, then to the prompt alone, when the endpoint refuses), `json_schema`,
    /// `json_object` or `off`.
    llm_structured_output: StructuredOutput = StructuredOutput::Auto,
    /// Write triage asks the language model (`llm_*`) to score what the rules of
    /// `screening.toml`'s `[triage]` leave undecided; cached per text, at most
    /// `triage_llm_daily_calls` calls a UTC day, the rules' default when the model fails.
    triage_llm: bool = false,
    triage_llm_daily_calls: u64 = 1_000,
    /// The write path asks the language model (`llm_*`) about a look-alike pair the revision
    /// rules leave undecided (the predicate worded differently): restatement, update or
    /// distinct. Cached per pair, at most `update_llm_daily_calls` calls a UTC day, the rules'
    /// decision when the model fails; never merges two statements naming different values.
    update_llm: bool = false,
    update_llm_daily_calls: u64 = 1_000,
    /// Where prompt templates are read from (`distill.md`); without the file, the copy built
    /// into the binary is used.
    prompts_dir: PathBuf = PathBuf::from("./prompts"),
    /// The write screen's rules (`screening.toml`); the built-in ones when the file is absent.
    screening_file: PathBuf = PathBuf::from("./screening.toml"),
    /// Writes below this importance are not stored.
    min_importance: f64 = 0.3,
    /// Cosine similarity above which a write is merged into an existing memory.
    dedup_threshold: f64 = 0.92,
    /// TTL of working memory when the write gives none.
    working_ttl_hours: f64 = 24.0,
    max_content_chars: usize = 8_000,
    weight_similarity: f64 = 0.7,
    weight_recency: f64 = 0.2,
    weight_importance: f64 = 0.1,
    /// Recency decay per day: exp(-λ·days).
    recency_lambda: f64 = 0.05,
    /// The vector index is asked for top_k × this many candidates before fusion and re-ranking.
    search_overfetch: usize = 3,
    /// The full-text index likewise.
    search_lexical_overfetch: usize = 3,
    /// Query terms held by more than this share of the rows are left out of the full-text
    /// match (SQLite, from 1,000 rows; the two rarest terms always stay): they touch most rows
    /// for almost no ranking signal. 1 keeps every term.
    search_lexical_max_df: f64 = 0.05,
    /// `hybrid` (the vector and the full-text index, fused), `dense` or `lexical`.
    search_arms: SearchArms = SearchArms::Hybrid,
    /// How the arms are fused: `score` (cosine and the lexical score scaled by the query's
    /// best, weighted by `search_lexical_weight`) or `rrf` (reciprocal-rank fusion). On
    /// LoCoMo's dev split with the built-in embedder, hit@10: score 0.650 (weights 0.6–0.9 all
    /// within 0.646–0.650), rrf 0.589 (k = 60), lexical alone 0.641, dense alone 0.387.
    search_fusion: FusionKind = FusionKind::Score,
    search_rrf_k: f64 = 60.0,
    /// Unset: the embedder's own, 0.8 for builtin, 0.5 for a dense model (docs/configuration.md).
    search_lexical_weight: Option<f64> = None,
    hnsw_m: usize = 16,
    hnsw_ef_construct: usize = 100,
    hnsw_ef: usize = 128,
    /// `text` or `json` (logs go to stderr; stdout belongs to MCP stdio).
    log_format: String = "text".to_owned(),
}

/// The flags every command line of the project takes (the daemon's and `hindsight-bench`'s),
/// as one clap group; `layer` turns them into the settings' flags layer.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GlobalFlags {
    /// Config file (default: ./hindsight.toml if present; env HINDSIGHT_CONFIG).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Data directory: SQLite file, vector index, lock (env HINDSIGHT_DATA_DIR, default ./data).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    /// Database URL (env HINDSIGHT_DATABASE_URL; default: SQLite in the data dir).
    #[arg(long, global = true)]
    pub database_url: Option<String>,
    /// Embedder (env HINDSIGHT_EMBEDDER, default auto): with `reindex`, the one to re-embed
    /// every memory with.
    #[arg(long, global = true, value_enum)]
    pub embedder: Option<EmbedderKind>,
}

impl GlobalFlags {
    pub fn layer(&self) -> Layer {
        Layer {
            data_dir: self.data_dir.clone(),
            database_url: self
                .database_url
                .as_ref()
                .map(|url| Some(url.as_str().into())),
            embedder: self.embedder,
            ..Layer::default()
        }
    }
}

impl Settings {
    /// Defaults → file → env → flags, then validated.
    pub fn load(
        config_file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
        flags: Layer,
    ) -> Result<Self, ConfigError> {
        let mut settings = Settings::default();
        let explicit = config_file.is_some();
        let path = config_file
            .map(Path::to_path_buf)
            .or_else(|| env("HINDSIGHT_CONFIG").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("hindsight.toml"));
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let layer: Layer = toml::from_str(&text).map_err(|e| ConfigError::File {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                layer.apply_to(&mut settings);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {}
            Err(e) => {
                return Err(ConfigError::File {
                    path,
                    message: e.to_string(),
                });
            }
        }
        Layer::from_env(env)?.apply_to(&mut settings);
        flags.apply_to(&mut settings);
        settings.validate()?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let invalid =
            |key: &'static str, message: String| Err(ConfigError::Invalid { key, message });
        for (key, value) in [
            ("min_importance", self.min_importance),
            ("dedup_threshold", self.dedup_threshold),
            ("weight_similarity", self.weight_similarity),
            ("weight_recency", self.weight_recency),
            ("weight_importance", self.weight_importance),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return invalid(key, format!("must be between 0 and 1, got {value}"));
            }
        }
        if !(self.recency_lambda >= 0.0 && self.recency_lambda.is_finite()) {
            return invalid(
                "recency_lambda",
                format!("must be >= 0, got {}", self.recency_lambda),
            );
        }
        if !(self.working_ttl_hours > 0.0 && self.working_ttl_hours.is_finite()) {
            return invalid(
                "working_ttl_hours",
                format!("must be > 0, got {}", self.working_ttl_hours),
            );
        }
        if !(1..=1_000_000).contains(&self.max_content_chars) {
            return invalid(
                "max_content_chars",
                format!("must be 1..=1000000, got {}", self.max_content_chars),
            );
        }
        for (key, value) in [
            ("search_overfetch", self.search_overfetch),
            ("search_lexical_overfetch", self.search_lexical_overfetch),
        ] {
            if !(1..=20).contains(&value) {
                return invalid(key, format!("must be 1..=20, got {value}"));
            }
        }
        if !(self.search_rrf_k >= 1.0 && self.search_rrf_k <= 1_000.0) {
            return invalid(
                "search_rrf_k",
                format!("must be 1..=1000, got {}", self.search_rrf_k),
            );
        }
        if !(self.search_lexical_max_df > 0.0 && self.search_lexical_max_df <= 1.0) {
            return invalid(
                "search_lexical_max_df",
                format!("must be in (0, 1], got {}", self.search_lexical_max_df),
            );
        }
        if let Some(weight) = self.search_lexical_weight
            && !(0.0..=1.0).contains(&weight)
        {
            return invalid(
                "search_lexical_weight",
                format!("must be between 0 and 1, got {weight}"),
            );
        }
        if !(4..=128).contains(&self.hnsw_m) {
            return invalid("hnsw_m", format!("must be 4..=128, got {}", self.hnsw_m));
        }
        if !(8..=4096).contains(&self.hnsw_ef_construct) {
            return invalid(
                "hnsw_ef_construct",
                format!("must be 8..=4096, got {}", self.hnsw_ef_construct),
            );
        }
        if !(8..=4096).contains(&self.hnsw_ef) {
            return invalid("hnsw_ef", format!("must be 8..=4096, got {}", self.hnsw_ef));
        }
        if !matches!(self.log_format.as_str(), "text" | "json") {
            return invalid(
                "log_format",
                format!("must be text or json, got {:?}", self.log_format),
            );
        }
        if let Some(url) = &self.database_url
            && !["sqlite:", "postgres://", "postgresql://"]
                .iter()
                .any(|scheme| url.expose().starts_with(scheme))
        {
            return invalid(
                "database_url",
                format!(
                    "must start with sqlite:, postgres:// or postgresql://, got {:?}",
                    url.redacted()
                ),
            );
        }
        if let Some(url) = &self.qdrant_url
            && !(url.expose().starts_with("http://") || url.expose().starts_with("https://"))
        {
            return invalid(
                "qdrant_url",
                format!(
                    "must be the gRPC endpoint as http(s)://host:6334, got {:?}",
                    url.redacted()
                ),
            );
        }
        if self.qdrant_collection.is_empty()
            || self.qdrant_collection.len() > 255
            || !self
                .qdrant_collection
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        {
            return invalid(
                "qdrant_collection",
                format!(
                    "must be 1-255 letters, digits, '_' or '-', got {:?}",
                    self.qdrant_collection
                ),
            );
        }
        if !(1..=600).contains(&self.qdrant_timeout_secs) {
            return invalid(
                "qdrant_timeout_secs",
                format!("must be 1..=600, got {}", self.qdrant_timeout_secs),
            );
        }
        if !(1..=1_000).contains(&self.db_pool_max) {
            return invalid(
                "db_pool_max",
                format!("must be 1..=1000, got {}", self.db_pool_max),
            );
        }
        if self.db_pool_min > self.db_pool_max {
            return invalid(
                "db_pool_min",
                format!(
                    "must not exceed db_pool_max ({}), got {}",
                    self.db_pool_max, self.db_pool_min
                ),
            );
        }
        if self
            .auth_token
            .as_ref()
            .is_some_and(|t| t.expose().len() < 16)
        {
            return invalid("auth_token", "must be at least 16 characters".to_owned());
        }
        for (key, values) in [
            ("signing_key", self.signing_key.iter().collect::<Vec<_>>()),
            (
                "signing_previous_keys",
                self.signing_previous_keys.iter().collect(),
            ),
        ] {
            if values
                .iter()
                .any(|k| k.expose().len() < crate::signing::MIN_KEY_LEN)
            {
                return invalid(
                    key,
                    format!(
                        "must be at least {} characters",
                        crate::signing::MIN_KEY_LEN
                    ),
                );
            }
        }
        if !self.listen.ip().is_loopback() && self.auth == AuthMode::None {
            return invalid(
                "auth",
                format!(
                    "cannot be none when listening beyond loopback ({}): anyone who can reach the port could read and write memories",
                    self.listen
                ),
            );
        }
        if self.allowed_hosts.is_empty() {
            return invalid(
                "allowed_hosts",
                "must list at least one host name".to_owned(),
            );
        }
        for host in &self.allowed_hosts {
            crate::origin::HostPort::parse(host).map_err(|e| ConfigError::Invalid {
                key: "allowed_hosts",
                message: format!("{e} (entries are name or name:port)"),
            })?;
        }
        for origin in &self.allowed_origins {
            crate::origin::WebOrigin::parse(origin).map_err(|e| ConfigError::Invalid {
                key: "allowed_origins",
                message: e,
            })?;
        }
        if self.embedder == EmbedderKind::Openai {
            if self.embed_base_url.is_none() {
                return invalid(
                    "embed_base_url",
                    "is required when embedder = \"openai\"".to_owned(),
                );
            }
            if self.embed_model.is_none() {
                return invalid(
                    "embed_model",
                    "is required when embedder = \"openai\"".to_owned(),
                );
            }
        }
        if let Some(url) = &self.llm_base_url {
            if !(url.expose().starts_with("http://") || url.expose().starts_with("https://")) {
                return invalid(
                    "llm_base_url",
                    format!(
                        "must be an http(s):// URL such as https://api.openai.com/v1, got {:?}",
                        url.redacted()
                    ),
                );
            }
            if self.llm_model.is_none() {
                return invalid(
                    "llm_model",
                    "is required when llm_base_url is set".to_owned(),
                );
            }
        }
        for (key, on) in [
            ("triage_llm", self.triage_llm),
            ("update_llm", self.update_llm),
        ] {
            if on && self.llm_base_url.is_none() {
                return invalid(
                    key,
                    "needs a language model: set llm_base_url and llm_model".to_owned(),
                );
            }
        }
        if !(1..=3_600).contains(&self.llm_timeout_secs) {
            return invalid(
                "llm_timeout_secs",
                format!("must be 1..=3600, got {}", self.llm_timeout_secs),
            );
        }
        if !(1..=64).contains(&self.llm_max_concurrency) {
            return invalid(
                "llm_max_concurrency",
                format!("must be 1..=64, got {}", self.llm_max_concurrency),
            );
        }
        if self.llm_token_budget == 0 {
            return invalid(
                "llm_token_budget",
                "must be at least 1 (leave llm_base_url unset to draft without a model)".to_owned(),
            );
        }
        if !(16..=100_000).contains(&self.llm_max_tokens) {
            return invalid(
                "llm_max_tokens",
                format!("must be 16..=100000, got {}", self.llm_max_tokens),
            );
        }
        if self
            .embed_dimension
            .is_some_and(|d| !(1..=65_536).contains(&d))
        {
            return invalid("embed_dimension", "must be 1..=65536".to_owned());
        }
        Ok(())
    }

    /// The PostgreSQL URL, when `database_url` names one.
    pub fn postgres_url(&self) -> Option<&str> {
        self.database_url
            .as_ref()
            .map(SecretUrl::expose)
            .filter(|url| url.starts_with("postgres://") || url.starts_with("postgresql://"))
    }

    /// The SQLite file path (from `database_url`, or the default under `data_dir`).
    pub fn sqlite_path(&self) -> PathBuf {
        match &self.database_url {
            Some(url) => PathBuf::from(
                url.expose()
                    .trim_start_matches("sqlite://")
                    .trim_start_matches("sqlite:"),
            ),
            None => self.data_dir.join("hindsight.db"),
        }
    }

    pub fn index_dir(&self) -> PathBuf {
        self.data_dir.join("index")
    }

    /// The effective configuration as TOML, secrets masked: keys and tokens are `Secret`s and
    /// URLs `SecretUrl`s, whose serialised form never holds the secret.
    pub fn to_masked_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(map: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = map
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn layers_apply_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("h.toml");
        std::fs::write(
            &file,
            "listen = \"127.0.0.1:9000\"\ndedup_threshold = 0.9\n",
        )
        .unwrap();
        let flags = Layer {
            data_dir: Some(PathBuf::from("/flag")),
            ..Layer::default()
        };
        let s = Settings::load(
            Some(&file),
            env(&[
                ("HINDSIGHT_DEDUP_THRESHOLD", "0.95"),
                ("HINDSIGHT_DATA_DIR", "/env"),
            ]),
            flags,
        )
        .unwrap();
        assert_eq!(s.listen.port(), 9000); // file
        assert_eq!(s.dedup_threshold, 0.95); // env beats file
        assert_eq!(s.data_dir, PathBuf::from("/flag")); // flag beats env
        assert_eq!(s.min_importance, 0.3); // default
    }

    #[test]
    fn bad_values_name_the_key() {
        let err = Settings::load(None, env(&[("HINDSIGHT_LISTEN", "nope")]), Layer::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`listen`") && err.contains("HINDSIGHT_LISTEN"),
            "{err}"
        );

        let err = Settings::load(
            None,
            env(&[("HINDSIGHT_DEDUP_THRESHOLD", "1.5")]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("dedup_threshold"), "{err}");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("h.toml");
        std::fs::write(&file, "no_such_key = 1\n").unwrap();
        let err = Settings::load(Some(&file), env(&[]), Layer::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no_such_key"), "{err}");

        let err = Settings::load(
            None,
            env(&[("HINDSIGHT_EMBEDDER", "openai")]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("embed_base_url"), "{err}");
    }

    #[test]
    fn database_url_selects_the_store_and_pool_bounds_are_checked() {
        let s = Settings::load(
            None,
            env(&[(
                "HINDSIGHT_DATABASE_URL",
                "postgres://postgres@127.0.0.1:5432/hindsight",
            )]),
            Layer::default(),
        )
        .unwrap();
        assert_eq!(
            s.postgres_url(),
            Some("postgres://postgres@127.0.0.1:5432/hindsight")
        );
        assert_eq!((s.db_pool_min, s.db_pool_max), (5, 20));
        let s = Settings::load(None, env(&[]), Layer::default()).unwrap();
        assert_eq!(s.postgres_url(), None);

        let err = Settings::load(
            None,
            env(&[("HINDSIGHT_DATABASE_URL", "mysql://root@localhost/db")]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("database_url") && err.contains("postgres://"),
            "{err}"
        );

        let err = Settings::load(
            None,
            env(&[("HINDSIGHT_DB_POOL_MIN", "30")]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("db_pool_min") && err.contains("20"), "{err}");
    }

    #[test]
    fn listening_beyond_loopback_requires_a_token() {
        // With `auth = "none"` nothing would guard the port.
        let err = Settings::load(
            None,
            env(&[
                ("HINDSIGHT_LISTEN", "0.0.0.0:8765"),
                ("HINDSIGHT_AUTH", "none"),
            ]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("auth") && err.contains("loopback"), "{err}");
        // By default a token guards it: the configured one or the data dir's operator token.
        let default = Settings::load(
            None,
            env(&[("HINDSIGHT_LISTEN", "0.0.0.0:8765")]),
            Layer::default(),
        )
        .unwrap();
        assert_eq!(default.auth, AuthMode::Token);
        assert!(
            Settings::load(None, env(&[("HINDSIGHT_AUTH", "open")]), Layer::default())
                .unwrap_err()
                .to_string()
                .contains("token or none")
        );
        let ok = Settings::load(
            None,
            env(&[
                ("HINDSIGHT_LISTEN", "0.0.0.0:8765"),
                ("HINDSIGHT_AUTH_TOKEN", "0123456789abcdef"),
                ("HINDSIGHT_ALLOWED_HOSTS", "localhost, hindsight"),
            ]),
            Layer::default(),
        )
        .unwrap();
        assert_eq!(ok.allowed_hosts, vec!["localhost", "hindsight"]);
    }

    #[test]
    fn allow_list_entries_that_could_never_match_are_refused() {
        for (key, env_name, value) in [
            (
                "allowed_hosts",
                "HINDSIGHT_ALLOWED_HOSTS",
                "localhost,http://hindsight",
            ),
            (
                "allowed_origins",
                "HINDSIGHT_ALLOWED_ORIGINS",
                "localhost:6274",
            ),
            ("allowed_origins", "HINDSIGHT_ALLOWED_ORIGINS", "null"),
        ] {
            let err = Settings::load(None, env(&[(env_name, value)]), Layer::default())
                .unwrap_err()
                .to_string();
            assert!(err.contains(key), "{value}: {err}");
        }
        let ok = Settings::load(
            None,
            env(&[("HINDSIGHT_ALLOWED_ORIGINS", "http://localhost:6274")]),
            Layer::default(),
        )
        .unwrap();
        assert_eq!(ok.allowed_origins, vec!["http://localhost:6274"]);
    }

    #[test]
    fn masks_secrets() {
        let s = Settings {
            auth_token: Some("super-secret-token-123".into()),
            ..Settings::default()
        };
        let out = s.to_masked_toml();
        assert!(!out.contains("super-secret"), "{out}");
        assert!(out.contains("auth_token = \"********\""), "{out}");
    }

    /// `hindsight config` once printed the PostgreSQL password inside `database_url`, and a
    /// `{:?}` of the settings printed every key.
    #[test]
    fn neither_the_dump_nor_debug_shows_a_password_or_key() {
        let s = Settings::load(
            None,
            env(&[
                (
                    "HINDSIGHT_DATABASE_URL",
                    "postgres://app:pg-hunter2@db:5432/mem",
                ),
                (
                    "HINDSIGHT_QDRANT_URL",
                    "https://reader:qd-hunter2@qdrant:6334",
                ),
                ("HINDSIGHT_QDRANT_API_KEY", "qdrant-key-hunter2"),
                ("HINDSIGHT_AUTH_TOKEN", "token-hunter2-0123456789"),
                (
                    "HINDSIGHT_LLM_BASE_URL",
                    "https://u:llm-hunter2@llm.internal/v1",
                ),
                ("HINDSIGHT_LLM_MODEL", "m"),
                ("HINDSIGHT_LLM_API_KEY", "sk-hunter2"),
                ("HINDSIGHT_EMBED_API_KEY", "sk-embed-hunter2"),
            ]),
            Layer::default(),
        )
        .unwrap();
        for shown in [s.to_masked_toml(), format!("{s:?}"), format!("{s:#?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        let out = s.to_masked_toml();
        assert!(
            out.contains("database_url = \"postgres://app:****@db:5432/mem\""),
            "the rest of the URL stays readable: {out}"
        );
        assert_eq!(
            s.postgres_url(),
            Some("postgres://app:pg-hunter2@db:5432/mem")
        );
        assert_eq!(
            s.llm_api_key.as_ref().map(Secret::expose),
            Some("sk-hunter2")
        );
    }

    #[test]
    fn llm_keys_come_from_env_are_checked_and_masked() {
        let s = Settings::load(
            None,
            env(&[
                ("HINDSIGHT_LLM_BASE_URL", "http://127.0.0.1:11434/v1"),
                ("HINDSIGHT_LLM_MODEL", "llama3.1"),
                ("HINDSIGHT_LLM_API_KEY", "sk-very-secret-key"),
                ("HINDSIGHT_LLM_TOKEN_BUDGET", "5000"),
            ]),
            Layer::default(),
        )
        .unwrap();
        assert_eq!(s.llm_model.as_deref(), Some("llama3.1"));
        assert_eq!(s.llm_token_budget, 5000);
        let out = s.to_masked_toml();
        assert!(!out.contains("sk-very-secret"), "{out}");
        assert!(out.contains("llm_api_key = \"********\""), "{out}");

        let err = Settings::load(
            None,
            env(&[("HINDSIGHT_LLM_BASE_URL", "http://127.0.0.1:11434/v1")]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("llm_model"), "{err}");
        let err = Settings::load(
            None,
            env(&[("HINDSIGHT_LLM_MAX_CONCURRENCY", "0")]),
            Layer::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("llm_max_concurrency") && err.contains("1..=64"),
            "{err}"
        );
    }

    #[test]
    fn redacts_url_passwords() {
        assert_eq!(
            crate::secret::redact_url("postgres://u:pw@h/db"),
            "postgres://u:****@h/db"
        );
    }
}
