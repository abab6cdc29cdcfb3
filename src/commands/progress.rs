//! Progress of a long CLI task (reindex, evals, benches, verify, restore, `models pull`, a job
//! run), on stderr so stdout stays the machine-readable result. At a terminal (stdout and
//! stderr both): an indicatif bar per phase, with its rate and time left. Otherwise (piped
//! output, a container's log) no bar: a plain line when a phase starts and ends and every 5 s
//! between, so a log shows the task alive without a line per row.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

const LOG_EVERY: Duration = Duration::from_secs(5);

/// One reporter for a whole task; `tick(phase, done, total)` from anywhere in it.
pub struct Reporter {
    terminal: bool,
    /// Counts are bytes (downloads): shown as MB.
    bytes: bool,
    current: Mutex<Option<Phase>>,
}

struct Phase {
    name: String,
    bar: ProgressBar,
    logged_at: Instant,
    total: Option<u64>,
}

impl Reporter {
    pub fn new() -> Self {
        Self {
            terminal: std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
            bytes: false,
            current: Mutex::new(None),
        }
    }

    /// For downloads: counts are bytes.
    pub fn bytes() -> Self {
        let mut reporter = Self::new();
        reporter.bytes = true;
        reporter
    }

    fn bar(&self, phase: &str, total: Option<u64>) -> ProgressBar {
        if !self.terminal {
            return ProgressBar::hidden();
        }
        let bar = match total {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(if self.bytes {
                    "{prefix:>12} [{bar:32}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}"
                } else {
                    "{prefix:>12} [{bar:32}] {human_pos}/{human_len} {per_sec} eta {eta}"
                })
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{prefix:>12} {spinner} {human_pos} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_prefix(phase.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// `done` of `total` (when known) in `phase`; a new phase ends the one before.
    pub fn tick(&self, phase: &str, done: u64, total: Option<u64>) {
        let Ok(mut current) = self.current.lock() else {
            return;
        };
        let new_phase = current.as_ref().is_none_or(|p| p.name != phase);
        if new_phase {
            if let Some(previous) = current.take() {
                self.end(previous);
            }
            *current = Some(Phase {
                name: phase.to_owned(),
                bar: self.bar(phase, total),
                logged_at: Instant::now(),
                total,
            });
        }
        let Some(p) = current.as_mut() else { return };
        if total != p.total
            && let Some(total) = total
        {
            p.bar.set_length(total);
            p.total = Some(total);
        }
        p.bar.set_position(done);
        if !self.terminal
            && (new_phase || total == Some(done) || p.logged_at.elapsed() >= LOG_EVERY)
        {
            eprintln!("{}", self.line(phase, done, total));
            p.logged_at = Instant::now();
        }
    }

    fn end(&self, phase: Phase) {
        if self.terminal {
            phase.bar.finish();
        } else if phase.total != Some(phase.bar.position()) {
            eprintln!(
                "{}",
                self.line(&phase.name, phase.bar.position(), phase.total)
            );
        }
    }

    /// The task is over: the last bar stays on screen, finished.
    pub fn finish(&self) {
        if let Ok(mut current) = self.current.lock()
            && let Some(phase) = current.take()
        {
            self.end(phase);
        }
    }
}

impl Reporter {
    /// A log line: `phase done/total` (MB for bytes).
    fn line(&self, phase: &str, done: u64, total: Option<u64>) -> String {
        let count = |n: u64| {
            if self.bytes {
                format!("{:.1} MB", n as f64 / 1e6)
            } else {
                n.to_string()
            }
        };
        match total {
            Some(total) => format!("{phase} {}/{}", count(done), count(total)),
            None if done == 0 => phase.to_owned(),
            None => format!("{phase} {}", count(done)),
        }
    }
}

impl Default for Reporter {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.finish();
    }
}
