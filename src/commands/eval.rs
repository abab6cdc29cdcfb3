//! `hindsight eval distill`: quality evaluations on real data, printed as JSON (benchmarks of
//! what the system produces, not of its speed).

use clap::Subcommand;
use hindsight::bench::distill_eval::{DistillEvalOptions, distill_eval};
use hindsight::configuration::Settings;
use hindsight::startup;

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run the distill job over LoCoMo's conversations (with the configured embedder, and the
    /// configured language model if any) and report how many reference facts a candidate covers.
    Distill {
        /// LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json
        #[arg(long)]
        locomo: std::path::PathBuf,
        /// Cosine similarity for two turns to be neighbours (comma-separated: one run each).
        #[arg(long, value_delimiter = ',', default_value = "0.75")]
        min_cosine: Vec<f64>,
        #[arg(long, default_value_t = 3)]
        min_points: usize,
        #[arg(long, default_value_t = 0.9)]
        dedup_cosine: f64,
    },
}

pub async fn run(settings: Settings, command: EvalCommand) -> anyhow::Result<()> {
    let EvalCommand::Distill {
        locomo,
        min_cosine,
        min_points,
        dedup_cosine,
    } = command;
    let env = startup::job_env(&settings)?;
    for min_cosine in min_cosine {
        let embedder = startup::embedder(&settings).await?;
        // Each run in a fresh scratch directory, removed afterwards.
        let scratch = tempfile::tempdir()?;
        let options = DistillEvalOptions {
            min_cosine,
            min_points,
            dedup_cosine,
        };
        let report = distill_eval(&locomo, scratch.path(), embedder, &env, &options)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}
