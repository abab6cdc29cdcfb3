//! Every job the daemon knows: its name, default schedule, the parameters it accepts, and how
//! it is built from its settings. Adding a job: one module and one line here.

use std::path::Path;
use std::sync::Arc;

use super::JobEnv;
use super::config::{self, JobConfigError, JobSettings};
use super::{Job, JobSpec, archive, capacity, distill, expire};

pub const JOBS: &[JobSpec] = &[expire::SPEC, archive::SPEC, capacity::SPEC, distill::SPEC];

/// A job, built and configured.
#[derive(Clone)]
pub struct ConfiguredJob {
    pub settings: JobSettings,
    pub job: Arc<dyn Job>,
}

/// Load `dir/<name>.toml` for every known job (defaults where there is no file) and build the
/// jobs, with what they share from the daemon's configuration (`env`). Any bad file or
/// parameter fails the whole load, naming the file and the key. A file naming no known job is
/// refused too: it is most likely a typo.
pub fn load_jobs(dir: &Path, env: &JobEnv) -> Result<Vec<ConfiguredJob>, JobConfigError> {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if path.extension().is_some_and(|e| e == "toml")
                && !JOBS.iter().any(|spec| spec.name == stem)
            {
                return Err(JobConfigError::Invalid {
                    file: path.clone(),
                    key: "(file name)".to_owned(),
                    message: format!("no job named {stem:?} (known: {})", names()),
                });
            }
        }
    }
    JOBS.iter()
        .map(|spec| {
            let settings = match config::load(dir, spec.name)? {
                Some(settings) => settings,
                None => JobSettings::defaults(dir, spec.name, spec.default_cron)?,
            };
            Ok(ConfiguredJob {
                job: (spec.build)(&settings, env)?,
                settings,
            })
        })
        .collect()
}

pub fn names() -> String {
    JOBS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}
