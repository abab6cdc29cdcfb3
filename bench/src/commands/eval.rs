//! `hindsight eval distill|retrieval|screening|updates`: quality evaluations on real data, printed as JSON
//! (benchmarks of what the system produces, not of its speed).

use clap::Subcommand;
use hindsight::configuration::{FusionKind, SearchArms, Settings};
use hindsight::startup;
use hindsight_bench::distill_eval::{DistillEvalOptions, distill_eval};

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// The write screen (`screening_file`, else the built-in rules) against the poisoned corpus
    /// (caught: a rule of the sample's kind matched; target ≥ 95 %) and LoCoMo's benign turns
    /// (flagged: any rule matched; target ≤ 1 %).
    Screening {
        /// LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json
        #[arg(long)]
        locomo: std::path::PathBuf,
        /// The poisoned memories, one JSON object per line.
        #[arg(long, default_value = "tests/fixtures/screening/poisoned.jsonl")]
        corpus: std::path::PathBuf,
    },
    /// Run the distill job over LoCoMo's conversations (with the configured embedder, and the
    /// configured language model if any) and report how many reference facts a candidate covers.
    Distill(DistillArgs),
    /// Write LoCoMo's turns through the write path and ask its questions (categories 1-4)
    /// through the search path, per arm: hit@5/@10 and recall@5/@10, overall and per category,
    /// with load time, embedding throughput and search latency. One JSON object per arm.
    Retrieval {
        /// LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json
        #[arg(long)]
        locomo: std::path::PathBuf,
        /// Arms to measure (comma-separated): hybrid, dense, lexical.
        #[arg(long, value_delimiter = ',', default_value = "lexical,dense,hybrid", value_parser = parse_arms)]
        arms: Vec<SearchArms>,
        /// Fusion for the hybrid arm (default: the configured `search_fusion`).
        #[arg(long, value_parser = parse_fusion)]
        fusion: Option<FusionKind>,
        /// Only the first N conversations (a quick run).
        #[arg(long)]
        conversations: Option<usize>,
    },
    /// Write labelled pairs of memories (an older sentence, then a newer one: a changed
    /// value, a negation, a keyed fact, a restatement, a look-alike that is also true) through
    /// the write path with the configured embedder, and report per class whether the newer
    /// one was decided right (update, merge, or kept beside), came first in a search, retired
    /// the older, and how many writes were lost. One JSON object.
    Updates {
        /// Pairs as JSON Lines (default: the set shipped with hindsight,
        /// bench/src/update_pairs.jsonl).
        #[arg(long)]
        pairs: Option<std::path::PathBuf>,
        /// Only pairs of these classes (comma-separated).
        #[arg(long, value_delimiter = ',')]
        classes: Option<Vec<String>>,
    },
}

/// `eval distill`'s options.
#[derive(Debug, clap::Args)]
pub struct DistillArgs {
    /// LoCoMo JSON, e.g. ../shared/data/locomo/locomo-dev.json
    #[arg(long)]
    pub locomo: std::path::PathBuf,
    /// Cosine similarity for two turns to be neighbours (comma-separated: one run each;
    /// default: the embedder's own, 0.55 builtin, 0.8 local).
    #[arg(long, value_delimiter = ',')]
    pub min_cosine: Option<Vec<f64>>,
    #[arg(long, default_value_t = 3)]
    pub min_points: usize,
    #[arg(long, default_value_t = 0.9)]
    pub dedup_cosine: f64,
    /// Keep every schema-valid draft (the job's `ground_drafts = false`): to calibrate the
    /// grounding thresholds on what the model really writes.
    #[arg(long)]
    pub no_grounding: bool,
    /// Candidates shown beside their episodes in the report.
    #[arg(long, default_value_t = 12)]
    pub examples: usize,
    /// Only the first N conversations (a quick run).
    #[arg(long)]
    pub conversations: Option<usize>,
}

fn parse_arms(text: &str) -> Result<SearchArms, String> {
    SearchArms::parse(text)
}

fn parse_fusion(text: &str) -> Result<FusionKind, String> {
    <FusionKind as hindsight::configuration::EnvValue>::parse_env(text)
}

pub async fn run(settings: Settings, command: EvalCommand) -> anyhow::Result<()> {
    // One progress reporter for the whole command (`progress.rs`): bars at a terminal.
    let reporter = super::progress::Reporter::new();
    match command {
        EvalCommand::Distill(args) => distill(settings, args, &reporter).await,
        EvalCommand::Screening { locomo, corpus } => {
            use hindsight_bench::screening_eval;
            let screen = hindsight::screening::Screen::load(&settings.screening_file)?;
            let poisoned =
                screening_eval::load_corpus(&corpus).map_err(|e| anyhow::anyhow!("{e}"))?;
            let benign =
                screening_eval::locomo_turns(&locomo).map_err(|e| anyhow::anyhow!("{e}"))?;
            let report = screening_eval::evaluate(&screen, &poisoned, &benign);
            println!("{}", serde_json::to_string_pretty(&report.json)?);
            Ok(())
        }
        EvalCommand::Retrieval {
            locomo,
            arms,
            fusion,
            conversations,
        } => retrieval(settings, &locomo, &arms, fusion, conversations, &reporter).await,
        EvalCommand::Updates { pairs, classes } => {
            updates(settings, pairs.as_deref(), classes, &reporter).await
        }
    }
}

async fn updates(
    settings: Settings,
    pairs: Option<&std::path::Path>,
    classes: Option<Vec<String>>,
    reporter: &super::progress::Reporter,
) -> anyhow::Result<()> {
    use hindsight_bench::updates_eval;
    let text = match pairs {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?,
        None => updates_eval::PAIRS.to_owned(),
    };
    let mut pairs = updates_eval::load(&text).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(classes) = classes {
        pairs.retain(|p| classes.contains(&p.class));
    }
    let embedder = startup::embedder(&settings).await?;
    let scratch = tempfile::tempdir()?;
    let report = updates_eval::updates_eval(
        &pairs,
        scratch.path(),
        embedder,
        &hindsight::service::Rules::from(&settings),
        &|phase, done, total| reporter.tick(phase, done, total),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    reporter.finish();
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

async fn distill(
    settings: Settings,
    args: DistillArgs,
    reporter: &super::progress::Reporter,
) -> anyhow::Result<()> {
    let env = startup::job_env(&settings)?;
    // One embedder (the local model loaded once) for every run; each run has its own store.
    let embedder = startup::embedder(&settings).await?;
    let min_cosine = match args.min_cosine {
        Some(values) => values,
        None => {
            let default =
                f64::from(hindsight::embed::calibration(embedder.id()).distill_min_cosine);
            vec![(default * 1000.0).round() / 1000.0]
        }
    };
    for min_cosine in min_cosine {
        // Each run in a fresh scratch directory, removed afterwards.
        let scratch = tempfile::tempdir()?;
        let options = DistillEvalOptions {
            min_cosine,
            min_points: args.min_points,
            dedup_cosine: args.dedup_cosine,
            grounding: !args.no_grounding,
            examples: args.examples,
            conversations: args.conversations,
        };
        let report = distill_eval(
            &args.locomo,
            scratch.path(),
            embedder.clone(),
            &env,
            &options,
            &|phase, done, total| reporter.tick(phase, done, total),
        )
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        reporter.finish();
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

async fn retrieval(
    mut settings: Settings,
    locomo: &std::path::Path,
    arms: &[SearchArms],
    fusion: Option<FusionKind>,
    limit: Option<usize>,
    reporter: &super::progress::Reporter,
) -> anyhow::Result<()> {
    if let Some(fusion) = fusion {
        settings.search_fusion = fusion;
    }
    let mut conversations =
        hindsight_bench::locomo::load(locomo).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(limit) = limit {
        conversations.truncate(limit);
    }
    let embedder = startup::embedder(&settings).await?;
    let scratch = tempfile::tempdir()?;
    let reports = hindsight_bench::retrieval_eval::retrieval_eval(
        &conversations,
        scratch.path(),
        embedder,
        &hindsight::service::Rules::from(&settings),
        arms,
        &|phase, done, total| reporter.tick(phase, done, total),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    for report in reports {
        reporter.finish();
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}
