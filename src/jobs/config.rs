//! `jobs/<name>.toml`: whether a job runs, when, in what batch size, and its own parameters.
//! Loaded and validated at start; a bad file fails the start naming the file and the key.
//!
//! ```toml
//! enabled = true
//! cron = "0 */5 * * * *"   # sec min hour day-of-month month day-of-week, UTC
//! batch_size = 1000
//! [params]                  # the job's own keys, checked against the keys it declares
//! min_age_days = 90
//! ```

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds};

#[derive(Debug, thiserror::Error)]
pub enum JobConfigError {
    #[error("{}: {key}: {message}", file.display())]
    Invalid {
        file: PathBuf,
        key: String,
        message: String,
    },
    #[error("{}: {source}", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
}

/// A parsed cron expression with a seconds field (6 fields), evaluated in UTC.
#[derive(Debug, Clone)]
pub struct Schedule {
    expression: String,
    cron: Cron,
}

impl Schedule {
    /// Parse the way tokio-cron-scheduler does (seconds required, day-of-month AND day-of-week).
    pub fn parse(expression: &str) -> Result<Self, String> {
        let cron = CronParser::builder()
            .seconds(Seconds::Required)
            .dom_and_dow(true)
            .build()
            .parse(expression)
            .map_err(|e| format!("{e} (6 fields: sec min hour day-of-month month day-of-week)"))?;
        Ok(Self {
            expression: expression.to_owned(),
            cron,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.expression
    }

    /// The latest tick at or before `at`: the tick an activation at `at` belongs to.
    pub fn latest_at_or_before(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_previous_occurrence(&whole_second(at), true)
            .ok()
    }

    /// The first tick strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .find_next_occurrence(&whole_second(after), false)
            .ok()
    }
}

/// Ticks fall on whole seconds; croner would carry the fraction of its input into its answer,
/// and replicas asking at different fractions must agree on a tick's exact instant.
fn whole_second(at: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::Timelike;
    at.with_nanosecond(0).unwrap_or(at)
}

#[derive(Debug, Clone)]
pub struct JobSettings {
    pub name: String,
    pub enabled: bool,
    pub schedule: Schedule,
    /// Rows per batch; each batch is its own transaction.
    pub batch_size: usize,
    /// The job's own parameters, only keys it declared.
    pub params: toml::Table,
    /// Where they came from (named in parameter errors).
    pub file: PathBuf,
}

impl JobSettings {
    /// A job without a file: enabled, on its default schedule, default batch, default params.
    pub fn defaults(dir: &Path, name: &str, cron: &str) -> Result<Self, JobConfigError> {
        let file = dir.join(format!("{name}.toml"));
        let schedule = Schedule::parse(cron).map_err(|message| JobConfigError::Invalid {
            file: file.clone(),
            key: "cron".to_owned(),
            message,
        })?;
        Ok(Self {
            name: name.to_owned(),
            enabled: true,
            schedule,
            batch_size: 1_000,
            params: toml::Table::new(),
            file,
        })
    }

    fn invalid(&self, key: &str, message: String) -> JobConfigError {
        JobConfigError::Invalid {
            file: self.file.clone(),
            key: format!("params.{key}"),
            message,
        }
    }

    /// The job's `[params]` read into its own struct (`#[serde(deny_unknown_fields)]`, a
    /// default for every key): an unknown key or a value of the wrong type fails naming the
    /// file and `params.<key>`.
    pub fn params<P: serde::de::DeserializeOwned>(&self) -> Result<P, JobConfigError> {
        serde_path_to_error::deserialize(toml::Value::Table(self.params.clone())).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.message().to_owned();
            // An unknown key's error names it in its message; the path stops above it.
            let key = unknown_key(&message)
                .or((path != ".").then_some(path))
                .unwrap_or_else(|| "(table)".to_owned());
            self.invalid(&key, message)
        })
    }

    /// `value` if it lies within `range`, else an error naming `params.<key>`.
    pub fn int_within(
        &self,
        key: &str,
        value: i64,
        range: std::ops::RangeInclusive<i64>,
    ) -> Result<i64, JobConfigError> {
        if range.contains(&value) {
            Ok(value)
        } else {
            Err(self.invalid(
                key,
                format!(
                    "must be an integer {}..={}, got {value}",
                    range.start(),
                    range.end()
                ),
            ))
        }
    }

    /// `value` if it lies within `range`, else an error naming `params.<key>`.
    pub fn float_within(
        &self,
        key: &str,
        value: f64,
        range: std::ops::RangeInclusive<f64>,
    ) -> Result<f64, JobConfigError> {
        if range.contains(&value) {
            Ok(value)
        } else {
            Err(self.invalid(
                key,
                format!(
                    "must be within {}..={}, got {value}",
                    range.start(),
                    range.end()
                ),
            ))
        }
    }

    /// An error about parameter `key`, for checks beyond its type.
    pub fn param_error(&self, key: &str, message: impl Into<String>) -> JobConfigError {
        self.invalid(key, message.into())
    }
}

/// A string parameter as the jobs read it: trimmed, and `None` when empty.
pub fn non_empty(value: Option<String>) -> Option<String> {
    value.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

/// The key serde names in "unknown field `max_age`, expected one of …".
fn unknown_key(message: &str) -> Option<String> {
    message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
        .map(|(key, _)| key.to_owned())
}

const MAX_BATCH: i64 = 100_000;

/// Read `dir/<name>.toml`. `None` if there is no such file (the job keeps its defaults). The
/// `[params]` table is kept as it is; the job reads it into its own struct (`params`).
pub fn load(dir: &Path, name: &str) -> Result<Option<JobSettings>, JobConfigError> {
    let file = dir.join(format!("{name}.toml"));
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(JobConfigError::Read { file, source }),
    };
    parse(&file, name, &text).map(Some)
}

fn parse(file: &Path, name: &str, text: &str) -> Result<JobSettings, JobConfigError> {
    let invalid = |key: &str, message: String| JobConfigError::Invalid {
        file: file.to_owned(),
        key: key.to_owned(),
        message,
    };
    let mut table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| invalid("(file)", e.message().to_owned()))?;

    let enabled = match table.remove("enabled") {
        None => true,
        Some(toml::Value::Boolean(b)) => b,
        Some(other) => {
            return Err(invalid(
                "enabled",
                format!("must be true or false, got {other}"),
            ));
        }
    };
    let schedule = match table.remove("cron") {
        Some(toml::Value::String(expression)) => Schedule::parse(&expression)
            .map_err(|e| invalid("cron", format!("{expression:?}: {e}")))?,
        Some(other) => return Err(invalid("cron", format!("must be a string, got {other}"))),
        None => return Err(invalid("cron", "is required".to_owned())),
    };
    let batch_size = match table.remove("batch_size") {
        None => 1_000,
        Some(toml::Value::Integer(n)) if (1..=MAX_BATCH).contains(&n) => n as usize,
        Some(other) => {
            return Err(invalid(
                "batch_size",
                format!("must be an integer 1..={MAX_BATCH}, got {other}"),
            ));
        }
    };
    let params = match table.remove("params") {
        None => toml::Table::new(),
        Some(toml::Value::Table(params)) => params,
        Some(other) => return Err(invalid("params", format!("must be a table, got {other}"))),
    };
    if let Some(unknown) = table.keys().next() {
        return Err(invalid(
            unknown,
            "unknown key (expected enabled, cron, batch_size, [params])".to_owned(),
        ));
    }
    Ok(JobSettings {
        name: name.to_owned(),
        enabled,
        schedule,
        batch_size,
        params,
        file: file.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct TestParams {
        #[serde(default)]
        min_age_days: i64,
    }

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }

    fn error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "archive", text);
        match load(dir.path(), "archive") {
            Err(e) => e.to_string(),
            Ok(settings) => settings
                .unwrap()
                .params::<TestParams>()
                .map(|_| ())
                .unwrap_err()
                .to_string(),
        }
    }

    #[test]
    fn a_valid_file_loads_with_defaults_filled_in() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "archive",
            "cron = \"0 30 3 * * *\"\n[params]\nmin_age_days = 90\n",
        );
        let job = load(dir.path(), "archive").unwrap().unwrap();
        assert!(job.enabled);
        assert_eq!(job.batch_size, 1_000);
        assert_eq!(job.params["min_age_days"].as_integer(), Some(90));
        assert_eq!(job.schedule.as_str(), "0 30 3 * * *");
        let after = DateTime::parse_from_rfc3339("2026-01-01T04:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(
            job.schedule.next_after(after).unwrap().to_rfc3339(),
            "2026-01-02T03:30:00+00:00"
        );
        assert!(
            load(dir.path(), "expire").unwrap().is_none(),
            "no file, no settings"
        );
    }

    #[test]
    fn ticks_are_whole_seconds_whatever_the_fraction_of_the_question() {
        let every_second = Schedule::parse("* * * * * *").unwrap();
        let at = |text: &str| DateTime::parse_from_rfc3339(text).unwrap().to_utc();
        for asked in ["2026-01-01T10:00:00.001Z", "2026-01-01T10:00:00.999Z"] {
            assert_eq!(
                every_second.latest_at_or_before(at(asked)),
                Some(at("2026-01-01T10:00:00Z"))
            );
            assert_eq!(
                every_second.next_after(at(asked)),
                Some(at("2026-01-01T10:00:01Z"))
            );
        }
        let daily = Schedule::parse("0 30 3 * * *").unwrap();
        assert_eq!(
            daily.latest_at_or_before(at("2026-01-02T03:29:59.9Z")),
            Some(at("2026-01-01T03:30:00Z"))
        );
        assert_eq!(
            daily.latest_at_or_before(at("2026-01-02T03:30:00Z")),
            Some(at("2026-01-02T03:30:00Z")),
            "a tick is its own latest tick"
        );
    }

    #[test]
    fn bad_files_name_the_file_and_the_key() {
        let cases = [
            ("enabled = true\n", "cron: is required"),
            ("cron = \"*/5 * * * *\"\n", "cron: \"*/5 * * * *\""),
            ("cron = \"0 61 * * * *\"\n", "cron: \"0 61 * * * *\""),
            ("cron = 5\n", "cron: must be a string"),
            (
                "cron = \"0 0 * * * *\"\nenabled = \"yes\"\n",
                "enabled: must be true or false",
            ),
            (
                "cron = \"0 0 * * * *\"\nbatch_size = 0\n",
                "batch_size: must be an integer",
            ),
            (
                "cron = \"0 0 * * * *\"\nschedule = 1\n",
                "schedule: unknown key",
            ),
            (
                "cron = \"0 0 * * * *\"\n[params]\nmax_age = 1\n",
                "params.max_age: unknown field `max_age`, expected `min_age_days`",
            ),
            (
                "cron = \"0 0 * * * *\"\n[params]\nmin_age_days = \"ninety\"\n",
                "params.min_age_days: invalid type: string \"ninety\", expected i64",
            ),
            ("cron = \n", "(file):"),
        ];
        for (text, expected) in cases {
            let message = error(text);
            assert!(message.contains("archive.toml: "), "{message}");
            assert!(message.contains(expected), "{text:?} → {message}");
        }
    }
}
