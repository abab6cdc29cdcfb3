//! The distill job in the jobs suite (both stores): extractive drafts; drafts by a language
//! model (the scripted OpenAI-compatible server of `common::openai`), its failures, its token
//! budget; the dedup against candidates and semantic memories; auto-approve; the review.

use super::*;

/// Episodes saying the same thing three or more times become one pending candidate each (the
/// extractive draft: the most central episode), exactly once; one-offs stay undistilled; a
/// later cluster saying what a pending candidate says adds its episodes to that candidate.
pub async fn distill_turns_repeated_episodes_into_candidates_once(f: Fixture) {
    let themes = [
        "the user asked for the quarterly sales report with every data source cited",
        "the user wants deployment notes written in plain English without jargon for the ops team",
    ];
    let mut members: Vec<Vec<MemoryId>> = vec![vec![], vec![]];
    for (t, theme) in themes.iter().enumerate() {
        for i in 0..4 {
            let episode = f
                .seed(&format!("{theme} request {i}"), Duration::hours(5), None, 0)
                .await;
            members[t].push(episode.id);
        }
    }
    let mut noise = Vec::new();
    for text in [
        "booked a dentist appointment for thursday morning",
        "the office coffee machine was broken again",
        "migrated the staging cluster to new hardware",
    ] {
        noise.push(f.seed(text, Duration::hours(5), None, 0).await.id);
    }
    let old = f
        .seed(
            &format!("{} request 9", themes[0]),
            Duration::days(30),
            None,
            0,
        )
        .await;
    let config = tempfile::tempdir().unwrap();
    let distill = load_job(config.path(), "distill", Some("cron = \"0 0 4 * * *\"\n"));
    let runner = f.runner(vec![("distill", distill.job, 1000)]);

    let (_, _, dry) = ran(runner.run_now("distill", true, None).await.unwrap());
    assert_eq!(dry.details["clusters"], json!(2), "{dry:?}");
    assert!(
        f.db.candidates(None, None, 100).await.unwrap().is_empty(),
        "a dry run writes nothing"
    );

    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok);
    assert_eq!(
        stats.details["episodes"],
        json!(11),
        "the 30-day-old one is outside the window"
    );
    assert_eq!(stats.details["clusters"], json!(2), "{stats:?}");
    assert_eq!(stats.details["noise"], json!(3));
    assert_eq!(stats.details["candidates_created"], json!(2));
    let mut candidates = f.db.candidates(Some("jobs"), None, 100).await.unwrap();
    assert_eq!(candidates.len(), 2);
    candidates.sort_by_key(|c| !c.content.contains("sales report"));
    for (candidate, theme) in candidates.iter().zip(&members) {
        let mut sources = candidate.source_ids.clone();
        sources.sort();
        let mut expected = theme.clone();
        expected.sort();
        assert_eq!(
            sources, expected,
            "a candidate rests on its cluster's episodes"
        );
        assert_eq!(candidate.status, CandidateStatus::Pending);
        assert_eq!(candidate.method, DistillMethod::Extractive);
        assert!(candidate.confidence > 0.75 && candidate.confidence <= 1.0);
        for id in theme {
            let episode = f.db.get(*id).await.unwrap().unwrap();
            assert_eq!(episode.status, Status::Active, "episodes stay as they are");
        }
    }
    assert!(candidates[0].content.contains("sales report"));

    // Rerun: everything clustered is marked; the noise alone makes no cluster.
    let (_, _, again) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(
        again.details["episodes"],
        json!(3),
        "only the noise is left: {again:?}"
    );
    assert_eq!(again.details["candidates_created"], json!(0));
    assert_eq!(f.db.candidates(None, None, 100).await.unwrap().len(), 2);

    // Three more of the first theme: the same knowledge, so more evidence, not a new candidate.
    let mut later = Vec::new();
    for i in 5..8 {
        later.push(
            f.seed(
                &format!("{} request {i}", themes[0]),
                Duration::hours(1),
                None,
                0,
            )
            .await
            .id,
        );
    }
    let (_, _, merged) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(merged.details["candidates_merged"], json!(1), "{merged:?}");
    assert_eq!(merged.details["candidates_created"], json!(0));
    let first = f.db.candidate(candidates[0].id).await.unwrap().unwrap();
    assert_eq!(first.source_ids.len(), 7);
    assert!(later.iter().all(|id| first.source_ids.contains(id)));
    assert!(!first.source_ids.contains(&old.id));

    // Review: approved or rejected once; a decided candidate is not decided again.
    let review = Review {
        status: CandidateStatus::Rejected,
        reviewer: Some("ops".to_owned()),
        note: Some("too specific".to_owned()),
        content: None,
        memory_id: None,
        at: Utc::now(),
    };
    let rejected =
        f.db.review_candidate(candidates[1].id, &review)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(rejected.status, CandidateStatus::Rejected);
    assert_eq!(rejected.note.as_deref(), Some("too specific"));
    assert!(
        f.db.review_candidate(candidates[1].id, &review)
            .await
            .unwrap()
            .is_none()
    );
    let pending =
        f.db.candidates(Some("jobs"), Some(CandidateStatus::Pending), 100)
            .await
            .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, candidates[0].id);
}

const SALES: &str = "the user asked for the quarterly sales report with every data source cited";
const DEPLOY: &str =
    "the user wants deployment notes written in plain English without jargon for the ops team";
const MEETINGS: &str =
    "the user prefers meetings scheduled after ten in the morning on weekdays only";
const WEATHER: &str = "the user mentioned the weather forecast for the weekend trip to the coast";
const INVOICES: &str = "the user archived old invoices into the finance shared drive folder";

/// `n` episodes of one theme, 5 hours old; their ids.
async fn theme(f: &Fixture, text: &str, n: usize) -> Vec<MemoryId> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(
            f.seed(&format!("{text} request {i}"), Duration::hours(5), None, 0)
                .await
                .id,
        );
    }
    ids
}

/// The distill job drafting with the model at `base_url` (the shipped prompt), configured by
/// `params` (`[params]` lines of `jobs/distill.toml`).
fn llm_distill(
    base_url: &str,
    concurrency: usize,
    budget: u64,
    params: &str,
) -> (tempfile::TempDir, Arc<dyn Job>) {
    use hindsight::distill::drafter::{LlmDrafter, load_prompt};
    use hindsight::distill::llm::{LlmClient, LlmConfig};
    let client = LlmClient::new(LlmConfig {
        base_url: base_url.to_owned(),
        model: "scripted-model".to_owned(),
        api_key: None,
        timeout: StdDuration::from_secs(5),
        retries: 1,
        backoff: StdDuration::from_millis(10),
        max_tokens: 512,
        structured_output: hindsight::distill::llm::StructuredOutput::Auto,
    })
    .unwrap();
    let prompt =
        load_prompt(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts")).unwrap();
    let env = hindsight::jobs::JobEnv {
        llm: Some(Arc::new(LlmDrafter::new(
            client,
            prompt,
            8_000,
            concurrency,
            budget,
        ))),
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("distill.toml"),
        format!("cron = \"0 0 4 * * *\"\n[params]\n{params}\n"),
    )
    .unwrap();
    let job = hindsight::jobs::load_jobs(dir.path(), &env)
        .unwrap()
        .into_iter()
        .find(|j| j.settings.name == "distill")
        .unwrap()
        .job;
    (dir, job)
}

/// A reply drafting `content` from the prompt's episodes (all of them, or the first `take`).
fn drafts_reply(
    prompt: &str,
    content: &str,
    confidence: f64,
    take: usize,
) -> common::openai::Reply {
    let ids: Vec<u32> = common::openai::episode_numbers(prompt)
        .into_iter()
        .take(take)
        .collect();
    common::openai::Reply::Content(
        json!([{"content": content, "confidence": confidence, "sources": ids}]).to_string(),
    )
}

fn details(stats: &JobStats, key: &str) -> u64 {
    stats.details[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing: {stats:?}"))
}

/// One call per cluster with the cluster's episodes (ids and dates) in the prompt; the reply
/// checked against the schema; a reply that breaks it gets one more call, then the cluster
/// counts as failed and stays for the next run while the other clusters go on; an empty reply
/// is recorded; model, prompt version and token counts are kept.
pub async fn distill_drafts_with_a_language_model_and_survives_its_failures(f: Fixture) {
    use common::openai::Reply;
    let sales = theme(&f, SALES, 4).await;
    let deploy = theme(&f, DEPLOY, 4).await;
    let meetings = theme(&f, MEETINGS, 4).await;
    let weather = theme(&f, WEATHER, 4).await;
    let server = common::openai::start(vec![]).await;
    let deploy_calls = Arc::new(AtomicUsize::new(0));
    let meetings_fixed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (calls, fixed) = (deploy_calls.clone(), meetings_fixed.clone());
    server
        .script
        .set_fallback(Reply::from_prompt(move |prompt| {
            if prompt.contains("sales report") {
                drafts_reply(
                    prompt,
                    "The user wants every data source cited in sales reports.",
                    0.9,
                    4,
                )
            } else if prompt.contains("deployment notes") {
                // Prose first; the retry gets the JSON.
                if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    return Reply::Content("Sure! The user likes plain English.".to_owned());
                }
                let ids: Vec<u32> = common::openai::episode_numbers(prompt)
                    .into_iter()
                    .take(3)
                    .collect();
                Reply::Content(
                    json!([{"content": "The user wants deployment notes in plain English.",
                        "entity": "user", "attribute": "deployment_notes_style",
                        "confidence": 0.8, "sources": ids}])
                    .to_string(),
                )
            } else if prompt.contains("meetings") {
                if fixed.load(Ordering::SeqCst) {
                    drafts_reply(
                        prompt,
                        "The user prefers meetings after ten on weekdays.",
                        0.7,
                        4,
                    )
                } else {
                    // An episode number outside the cluster, twice: refused by the schema
                    // both times.
                    Reply::Content(
                        json!({"candidates": [{"content": "x", "entity": null,
                            "attribute": null, "confidence": 0.5, "sources": [99]}]})
                        .to_string(),
                    )
                }
            } else {
                Reply::Content("[]".to_owned())
            }
        }));
    let (_config, job) = llm_distill(&server.base_url, 2, 1_000_000, "");
    let runner = f.runner(vec![("distill", job, 1000)]);

    let (_, dry_status, dry) = ran(runner.run_now("distill", true, None).await.unwrap());
    assert_eq!(dry_status, RunStatus::Ok);
    assert_eq!(details(&dry, "clusters"), 4, "{dry:?}");
    assert_eq!(
        server.script.request_count(),
        0,
        "a dry run spends no tokens"
    );

    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(details(&stats, "clusters"), 4);
    // sales 1, deploy 2 (prose, then JSON), meetings 2 (refused twice), weather 1
    assert_eq!(details(&stats, "llm_calls"), 6, "{stats:?}");
    assert_eq!(server.script.request_count(), 6);
    assert_eq!(details(&stats, "tokens_in"), 6 * 120);
    assert_eq!(details(&stats, "tokens_out"), 6 * 30);
    assert_eq!(details(&stats, "candidates_created"), 2);
    assert_eq!(details(&stats, "clusters_failed"), 1);
    assert_eq!(details(&stats, "clusters_empty"), 1);
    assert_eq!(stats.details["method"], json!("llm"));

    // The retry is not the same request: it shows the model its reply and what was wrong.
    let deploy_requests: Vec<serde_json::Value> = server
        .script
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| {
            r["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .contains("deployment notes")
        })
        .cloned()
        .collect();
    assert_eq!(deploy_requests.len(), 2);
    assert_eq!(deploy_requests[0]["messages"].as_array().unwrap().len(), 1);
    let retry = deploy_requests[1]["messages"].as_array().unwrap();
    assert_eq!(retry.len(), 3, "{retry:?}");
    assert_eq!(retry[1]["role"], json!("assistant"));
    assert_eq!(
        retry[1]["content"],
        json!("Sure! The user likes plain English.")
    );
    let feedback = common::openai::last_user_message(&deploy_requests[1]);
    assert!(
        feedback.contains("not JSON") && feedback.contains("1 to 4"),
        "{feedback}"
    );
    assert_eq!(
        deploy_requests[0]["response_format"]["type"],
        json!("json_schema"),
        "the schema travels with the request"
    );
    assert_eq!(stats.details["structured_output"], json!("json_schema"));
    assert_eq!(details(&stats, "clusters_failed_schema"), 1);
    assert_eq!(details(&stats, "clusters_failed_llm"), 0);

    let prompts = server.script.prompts();
    let sales_prompt = prompts.iter().find(|p| p.contains("sales report")).unwrap();
    let listed = common::openai::episode_texts(sales_prompt);
    assert_eq!(listed.len(), 4);
    assert_eq!(sales.len(), 4);
    for i in 0..4 {
        let text = format!("{SALES} request {i}");
        assert!(listed.contains(&text), "{sales_prompt}");
    }
    assert!(
        !sales_prompt.contains(&sales[0].to_string()),
        "episodes are shown by number, not by id"
    );
    let today = (Utc::now() - Duration::hours(5))
        .format("(%Y-%m-%d)")
        .to_string();
    assert!(sales_prompt.contains(&today), "episodes carry their dates");

    let candidates = f.db.candidates(Some("jobs"), None, 100).await.unwrap();
    assert_eq!(candidates.len(), 2);
    for c in &candidates {
        assert_eq!(c.method, DistillMethod::Llm);
        assert_eq!(c.model.as_deref(), Some("scripted-model"));
        assert_eq!(c.prompt_version.as_deref(), Some("distill-v2"));
        assert_eq!(c.status, CandidateStatus::Pending);
    }
    let deploy_candidate = candidates
        .iter()
        .find(|c| c.content.contains("plain English"))
        .unwrap();
    assert_eq!(deploy_candidate.source_ids, deploy[..3].to_vec());
    assert_eq!(deploy_candidate.entity.as_deref(), Some("user"));
    assert_eq!(
        deploy_candidate.attribute.as_deref(),
        Some("deployment_notes_style")
    );
    assert!((deploy_candidate.confidence - 0.8).abs() < 1e-9);

    // The next run: only the failed cluster is asked again (the empty one was recorded).
    meetings_fixed.store(true, Ordering::SeqCst);
    let (_, _, again) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(details(&again, "clusters"), 1, "{again:?}");
    assert_eq!(details(&again, "llm_calls"), 1);
    assert_eq!(details(&again, "candidates_created"), 1);
    let meeting = f.db.candidates(Some("jobs"), None, 100).await.unwrap();
    let meeting = meeting
        .iter()
        .find(|c| c.content.contains("meetings"))
        .unwrap();
    let mut sources = meeting.source_ids.clone();
    sources.sort();
    let mut expected = meetings.clone();
    expected.sort();
    assert_eq!(sources, expected);

    let (_, _, third) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(
        details(&third, "llm_calls"),
        0,
        "nothing is sent twice: {third:?}"
    );
    assert_eq!(server.script.request_count(), 7);
    // The empty reply was recorded as it was: no candidate rests on those episodes.
    let all = f.db.candidates(None, None, 100).await.unwrap();
    assert_eq!(all.len(), 3);
    assert!(
        all.iter()
            .all(|c| c.source_ids.iter().all(|id| !weather.contains(id)))
    );
}

/// A failing endpoint (errors after async-openai's own retries) fails its clusters, not the
/// run; the token budget defers what it cannot pay for to the next run; a draft that says what
/// an active semantic memory says becomes evidence on that memory; a confident draft is
/// approved as it is drafted when auto-approve is on.
pub async fn distill_budget_dedup_against_memories_and_auto_approve(f: Fixture) {
    use common::openai::Reply;
    const KNOWN: &str = "The user wants every data source cited in sales reports.";
    let written = f
        .service
        .write(&hindsight::service::WriteRequest {
            content: KNOWN.to_owned(),
            memory_type: Some("semantic".to_owned()),
            importance: Some(0.9),
            namespace: Some("jobs".to_owned()),
            ..Default::default()
        })
        .await
        .unwrap();
    let known_id = written.memory_id.unwrap();
    let sales = theme(&f, SALES, 4).await;
    let deploy = theme(&f, DEPLOY, 4).await;

    // First an endpoint that only fails: both clusters fail, the run does not.
    let broken = common::openai::start(vec![]).await;
    broken.script.set_fallback(Reply::Error(400));
    let (_c, job) = llm_distill(&broken.base_url, 2, 1_000_000, "");
    let runner = f.runner(vec![("distill", job, 1000)]);
    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(details(&stats, "clusters_failed"), 2);
    assert_eq!(details(&stats, "llm_calls"), 2);
    assert!(f.db.candidates(None, None, 10).await.unwrap().is_empty());

    let server = common::openai::start(vec![]).await;
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        if prompt.contains("sales report") {
            drafts_reply(prompt, KNOWN, 0.95, 4)
        } else {
            drafts_reply(
                prompt,
                "The user wants deployment notes in plain English.",
                0.9,
                4,
            )
        }
    }));
    // One call costs 150 tokens: a budget of 100 pays for the first call only.
    let (_c, job) = llm_distill(&server.base_url, 1, 100, "auto_approve_confidence = 0.85");
    let runner = f.runner(vec![("distill", job, 1000)]);
    let (_, _, first) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(details(&first, "llm_calls"), 1, "{first:?}");
    assert_eq!(details(&first, "clusters_deferred"), 1);
    let (_, _, second) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(details(&second, "llm_calls"), 1, "{second:?}");
    assert_eq!(details(&second, "clusters_deferred"), 0);
    let sum = |key| details(&first, key) + details(&second, key);
    assert_eq!(sum("candidates_created"), 1);
    assert_eq!(sum("candidates_merged"), 1);
    assert_eq!(sum("auto_approved"), 1);

    // The sales draft said what the semantic memory says: evidence on it, no candidate.
    let memory = f.db.get(known_id).await.unwrap().unwrap();
    let entries = memory.merged_sources.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let mut cited: Vec<MemoryId> =
        serde_json::from_value(entries[0]["source"]["distill"]["episodes"].clone()).unwrap();
    cited.sort();
    let mut expected = sales.clone();
    expected.sort();
    assert_eq!(cited, expected);

    // The deployment draft (0.9 >= 0.85) was approved as drafted, through the write path.
    let candidates = f.db.candidates(Some("jobs"), None, 10).await.unwrap();
    assert_eq!(candidates.len(), 1);
    let approved = &candidates[0];
    assert_eq!(approved.status, CandidateStatus::Approved);
    assert_eq!(approved.reviewer.as_deref(), Some("auto-approve"));
    let memory =
        f.db.get(approved.memory_id.unwrap())
            .await
            .unwrap()
            .unwrap();
    assert_eq!(memory.memory_type, MemoryType::Semantic);
    assert_eq!(memory.content, approved.content);
    assert!((memory.importance - 0.8).abs() < 1e-9);
    assert_eq!(
        memory.source["distill"]["candidate_id"],
        json!(approved.id.to_string())
    );
    let mut episodes: Vec<MemoryId> =
        serde_json::from_value(memory.source["distill"]["episode_ids"].clone()).unwrap();
    episodes.sort();
    let mut expected = deploy.clone();
    expected.sort();
    assert_eq!(episodes, expected);
    assert!(
        f.search_ids("deployment notes plain English")
            .await
            .contains(&memory.id)
    );
}

/// A pending candidate drafted by a model in namespace `jobs` from `episodes`, unkeyed.
fn drafted(
    content: &str,
    episodes: &[MemoryId],
    fingerprint: &str,
    embedding: Vec<f32>,
) -> hindsight::store::Candidate {
    let now = Utc::now();
    hindsight::store::Candidate {
        id: uuid::Uuid::now_v7(),
        namespace: "jobs".to_owned(),
        content: content.to_owned(),
        entity: None,
        attribute: None,
        confidence: 0.8,
        source_ids: episodes.to_vec(),
        fingerprint: fingerprint.to_owned(),
        method: DistillMethod::Llm,
        model: Some("m".to_owned()),
        prompt_version: Some("distill-v1".to_owned()),
        status: CandidateStatus::Pending,
        reviewer: None,
        reviewed_at: None,
        note: None,
        memory_id: None,
        created_at: now,
        updated_at: now,
        embedding,
    }
}

/// Approve writes through the write path (an edit and an importance; a keyed fact supersedes
/// the older one); reject needs a note; a decided candidate is not decided again.
pub async fn candidates_are_approved_through_the_write_path_and_rejected_with_a_note(f: Fixture) {
    use hindsight::service::review::{self, Approval, ReviewError};
    use hindsight::store::{Candidate, ClusterOutcome, DistilledCluster};
    let old = f
        .service
        .write(&hindsight::service::WriteRequest {
            content: "The user's editor is vim.".to_owned(),
            memory_type: Some("semantic".to_owned()),
            namespace: Some("jobs".to_owned()),
            entity: Some("user".to_owned()),
            attribute: Some("editor".to_owned()),
            ..Default::default()
        })
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let episodes = theme(&f, "the user opened the project in helix again", 3).await;
    let now = Utc::now();
    let draft = |content: &str, keyed: bool| Candidate {
        entity: keyed.then(|| "user".to_owned()),
        attribute: keyed.then(|| "editor".to_owned()),
        ..drafted(
            content,
            &episodes,
            "f1",
            vec![0.0; f.service.embedder().dimension()],
        )
    };
    let (editor, vague) = (
        draft("The user's editor is helix.", true),
        draft("The user opens projects.", false),
    );
    assert!(
        f.db.record_cluster(&DistilledCluster {
            fingerprint: "f1".to_owned(),
            namespace: "jobs".to_owned(),
            episodes: episodes.clone(),
            outcome: ClusterOutcome::Created,
            created: vec![editor.clone(), vague.clone()],
            evidence: vec![],
            at: now,
        })
        .await
        .unwrap()
    );

    let bad = Approval {
        importance: Some(1.5),
        ..Approval::default()
    };
    let err = review::approve(&f.service, f.db.as_ref(), editor.id, &bad, true)
        .await
        .unwrap_err();
    assert!(
        err.is_client_error() && err.to_string().contains("importance"),
        "{err}"
    );
    assert_eq!(
        f.db.candidate(editor.id).await.unwrap().unwrap().status,
        CandidateStatus::Pending,
        "a refused approval changes nothing"
    );

    let approval = Approval {
        content: Some("The user's editor is helix (since this spring).".to_owned()),
        importance: Some(0.9),
        reviewer: Some("ana".to_owned()),
    };
    let approved = review::approve(&f.service, f.db.as_ref(), editor.id, &approval, true)
        .await
        .unwrap();
    assert_eq!(approved.status, CandidateStatus::Approved);
    assert_eq!(approved.reviewer.as_deref(), Some("ana"));
    assert_eq!(
        approved.content,
        "The user's editor is helix (since this spring)."
    );
    let memory =
        f.db.get(approved.memory_id.unwrap())
            .await
            .unwrap()
            .unwrap();
    assert_eq!(memory.content, approved.content);
    assert!((memory.importance - 0.9).abs() < 1e-9);
    assert_eq!(memory.source["distill"]["reviewer"], json!("ana"));
    assert_eq!(
        memory.source["distill"]["prompt_version"],
        json!("distill-v1")
    );
    let superseded = f.db.get(old).await.unwrap().unwrap();
    assert_eq!(
        superseded.status,
        Status::Deprecated,
        "the keyed fact supersedes vim"
    );
    assert_eq!(superseded.deprecated_by, Some(memory.id));

    let again = review::approve(
        &f.service,
        f.db.as_ref(),
        editor.id,
        &Approval::default(),
        true,
    )
    .await;
    assert!(
        matches!(
            again,
            Err(ReviewError::NotPending {
                status: "approved",
                ..
            })
        ),
        "{again:?}"
    );
    let missing = review::reject(f.db.as_ref(), uuid::Uuid::now_v7(), "no", None).await;
    assert!(matches!(missing, Err(ReviewError::NotFound(_))));

    let err = review::reject(f.db.as_ref(), vague.id, "  ", Some("ana"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ReviewError::Invalid { field: "note", .. }),
        "{err}"
    );
    // NUL is refused alike on both stores (PostgreSQL could not store it), naming the field.
    for (note, reviewer, field) in [
        ("too\0vague", "ana", "note"),
        ("too vague", "a\0na", "reviewer"),
    ] {
        let err = review::reject(f.db.as_ref(), vague.id, note, Some(reviewer))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ReviewError::Invalid { field: f, .. } if f == field),
            "{err}"
        );
    }
    let rejected = review::reject(f.db.as_ref(), vague.id, "too vague", Some("ana"))
        .await
        .unwrap();
    assert_eq!(rejected.status, CandidateStatus::Rejected);
    assert_eq!(rejected.note.as_deref(), Some("too vague"));
    assert!(rejected.reviewed_at.is_some());

    let detail = review::detail(f.db.as_ref(), None, rejected).await.unwrap();
    assert_eq!(detail.episodes.len(), 3);
    assert!(detail.missing_episodes.is_empty());
}

/// The review queue says what approving a candidate would do: retire the active memory it
/// corrects (no key needed), or merge into one it restates; approving it then does just that.
pub async fn a_candidate_that_corrects_a_memory_says_so_before_approval(f: Fixture) {
    use hindsight::service::review::{self, Approval};
    use hindsight::store::{ClusterOutcome, DistilledCluster};
    let write = |content: &str| hindsight::service::WriteRequest {
        content: content.to_owned(),
        memory_type: Some("semantic".to_owned()),
        namespace: Some("jobs".to_owned()),
        occurred_at: Some((Utc::now() - Duration::days(3)).to_rfc3339()),
        ..Default::default()
    };
    let monday = f
        .service
        .write(&write("The weekly report goes out on Mondays"))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let helix = f
        .service
        .write(&write("The user edits code in Helix"))
        .await
        .unwrap()
        .memory_id
        .unwrap();
    let episodes = theme(&f, "the weekly report went out on a Wednesday again", 3).await;
    let now = Utc::now();
    let mut drafts = Vec::new();
    for content in [
        "The weekly report goes out on Wednesdays",
        "the user edits code in Helix.",
    ] {
        let embedding = f.service.embedder().embed(&[content.to_owned()]).await;
        drafts.push(drafted(
            content,
            &episodes,
            "f-corrects",
            embedding.unwrap().remove(0),
        ));
    }
    assert!(
        f.db.record_cluster(&DistilledCluster {
            fingerprint: "f-corrects".to_owned(),
            namespace: "jobs".to_owned(),
            episodes: episodes.clone(),
            outcome: ClusterOutcome::Created,
            created: drafts.clone(),
            evidence: vec![],
            at: now,
        })
        .await
        .unwrap()
    );
    let fixture = &f;
    let shown = |id| async move {
        let candidate = fixture.db.candidate(id).await.unwrap().unwrap();
        review::detail(fixture.db.as_ref(), Some(&fixture.service), candidate)
            .await
            .unwrap()
            .approval_would
            .expect("the service tells")
    };
    let correction = shown(drafts[0].id).await;
    assert_eq!(correction.merges_into, None);
    let retires: Vec<_> = correction
        .retires
        .iter()
        .map(|r| (r.id, r.reason.as_str()))
        .collect();
    assert_eq!(retires, [(monday, "update:value")]);
    assert_eq!(shown(drafts[1].id).await.merges_into, Some(helix));

    let approved = review::approve(
        &f.service,
        f.db.as_ref(),
        drafts[0].id,
        &Approval::default(),
        true,
    )
    .await
    .unwrap();
    let retired = f.db.get(monday).await.unwrap().unwrap();
    assert_eq!(retired.status, Status::Deprecated);
    assert_eq!(retired.deprecated_by, approved.memory_id);
}

/// A model's drafts must rest on the episodes they cite: a draft repeating the prompt's own
/// instructions, one about something else, and one stuck in a loop are refused and counted by
/// reason, never stored; faithful drafts, English and Chinese, are kept. With `ground_drafts =
/// false` the same replies are all stored (the setting calibration runs use).
pub async fn distill_refuses_drafts_that_do_not_rest_on_their_episodes(f: Fixture) {
    use common::openai::Reply;
    const ZH: &str = "用户要求季度销售报告里列出每一个数据来源";
    theme(&f, SALES, 4).await;
    theme(&f, ZH, 4).await;
    let server = common::openai::start(vec![]).await;
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        let all = common::openai::episode_numbers(prompt);
        let draft = |content: &str| {
            json!({"content": content, "entity": null, "attribute": null,
                   "confidence": 0.8, "sources": all})
        };
        let drafts = if prompt.contains(ZH) {
            vec![draft("用户希望季度销售报告列出所有数据来源。")]
        } else {
            vec![
                draft("The user wants every data source cited in the quarterly sales report."),
                // The shipped prompt's own instruction, as a small model repeats it.
                draft("State only what at least two of them support."),
                draft("Penguins migrate across the frozen southern ocean each winter."),
            ]
        };
        Reply::Content(json!({ "candidates": drafts }).to_string())
    }));
    let (_c, job) = llm_distill(&server.base_url, 1, 1_000_000, "");
    let runner = f.runner(vec![("distill", job, 1000)]);
    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(details(&stats, "clusters"), 2, "{stats:?}");
    assert_eq!(details(&stats, "candidates_created"), 2, "{stats:?}");
    assert_eq!(details(&stats, "drafts_refused"), 2, "{stats:?}");
    assert_eq!(
        details(&stats, "drafts_refused_copied_prompt"),
        1,
        "{stats:?}"
    );
    assert_eq!(details(&stats, "drafts_refused_ungrounded"), 1, "{stats:?}");
    assert_eq!(stats.details["grounding"], json!(true));
    let mut kept: Vec<String> =
        f.db.candidates(None, None, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.content)
            .collect();
    kept.sort();
    assert_eq!(
        kept,
        [
            "The user wants every data source cited in the quarterly sales report.",
            "用户希望季度销售报告列出所有数据来源。"
        ]
    );

    // A loop, on fresh episodes.
    theme(&f, DEPLOY, 4).await;
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        Reply::Content(
            json!({"candidates": [{"content":
                "The user wants plain English. The user wants plain English. The user wants",
                "entity": null, "attribute": null, "confidence": 0.9,
                "sources": common::openai::episode_numbers(prompt)}]})
            .to_string(),
        )
    }));
    let (_, _, looped) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(
        details(&looped, "drafts_refused_degenerate"),
        1,
        "{looped:?}"
    );
    assert_eq!(details(&looped, "candidates_created"), 0, "{looped:?}");

    // Grounding off: what the model says is stored as it is.
    theme(&f, MEETINGS, 4).await;
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        Reply::Content(
            json!({"candidates": [{"content": "Penguins migrate across the frozen ocean.",
                "entity": null, "attribute": null, "confidence": 0.9,
                "sources": common::openai::episode_numbers(prompt)}]})
            .to_string(),
        )
    }));
    let (_c2, unguarded) = llm_distill(&server.base_url, 1, 1_000_000, "ground_drafts = false");
    let runner = f.runner(vec![("distill", unguarded, 1000)]);
    let (_, _, off) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(off.details["grounding"], json!(false));
    assert_eq!(details(&off, "drafts_refused"), 0, "{off:?}");
    assert_eq!(details(&off, "candidates_created"), 1, "{off:?}");
}

/// A draft that cites an episode it has nothing to do with is refused as an unsupported
/// source, even when the rest of its sources carry it. The cluster holds such an episode the
/// way real clusters do: a border point, reached through one that shares words with both sides
/// (built-in embedder, cosines measured: the sales requests 0.92 to each other, the bridge 0.67
/// to them and 0.50 to the penguin trip, the penguin trip -0.03 to the draft).
pub async fn distill_refuses_a_draft_citing_an_episode_that_does_not_support_it(f: Fixture) {
    use common::openai::Reply;
    const PENGUINS: &str = "booked the penguin tour of the frozen southern ocean for next winter";
    let sales = theme(&f, SALES, 4).await;
    let bridge = f
        .seed(
            &format!("{SALES} and then {PENGUINS}"),
            Duration::hours(5),
            None,
            0,
        )
        .await
        .id;
    let penguins = f.seed(PENGUINS, Duration::hours(5), None, 0).await.id;
    let server = common::openai::start(vec![]).await;
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        let numbered: Vec<(u32, String)> = common::openai::episode_numbers(prompt)
            .into_iter()
            .zip(common::openai::episode_texts(prompt))
            .collect();
        let all: Vec<u32> = numbered.iter().map(|(n, _)| *n).collect();
        let on_sales: Vec<u32> = numbered
            .iter()
            .filter(|(_, text)| text.starts_with(SALES))
            .map(|(n, _)| *n)
            .collect();
        let draft = |content: &str, sources: &[u32]| {
            json!({"content": content, "entity": null, "attribute": null,
                   "confidence": 0.8, "sources": sources})
        };
        Reply::Content(
            json!({"candidates": [
                draft("The user wants every data source cited in the quarterly sales report.", &all),
                draft("The user wants every data source cited in their quarterly sales reports.", &on_sales),
            ]})
            .to_string(),
        )
    }));
    let (_c, job) = llm_distill(&server.base_url, 1, 1_000_000, "min_cosine = 0.45");
    let runner = f.runner(vec![("distill", job, 1000)]);
    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(details(&stats, "clusters"), 1, "{stats:?}");
    assert_eq!(
        details(&stats, "noise"),
        0,
        "the penguin trip is in the cluster: {stats:?}"
    );
    assert_eq!(
        details(&stats, "drafts_refused_unsupported_source"),
        1,
        "{stats:?}"
    );
    assert_eq!(details(&stats, "drafts_refused"), 1, "{stats:?}");
    assert_eq!(details(&stats, "candidates_created"), 1, "{stats:?}");
    let kept = f.db.candidates(None, None, 10).await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        kept[0].content,
        "The user wants every data source cited in their quarterly sales reports."
    );
    let mut cited = kept[0].source_ids.clone();
    cited.sort();
    let mut expected = sales;
    expected.push(bridge);
    expected.sort();
    assert_eq!(cited, expected, "the kept draft cites what it rests on");
    assert!(!cited.contains(&penguins));
}

/// A stopping daemon does not wait for model calls in flight: the run stops at once, writes
/// nothing for the clusters whose drafts had not come back, and the next run drafts them.
pub async fn distill_stops_without_waiting_for_the_model(f: Fixture) {
    use common::openai::Reply;
    let sales = theme(&f, SALES, 4).await;
    let server = common::openai::start(vec![]).await;
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        let ids = common::openai::episode_numbers(prompt);
        Reply::Slow(
            StdDuration::from_secs(20),
            json!([{"content": "The user wants sources cited.", "confidence": 0.9,
                    "sources": ids}])
            .to_string(),
        )
    }));
    let (_c, job) = llm_distill(&server.base_url, 1, 1_000_000, "");
    let runner = f.runner(vec![("distill", job.clone(), 1000)]);
    let running = {
        let runner = runner.clone();
        tokio::spawn(async move { runner.run_now("distill", false, None).await })
    };
    while server.script.request_count() == 0 {
        tokio::time::sleep(StdDuration::from_millis(20)).await;
    }
    let asked = std::time::Instant::now();
    runner.stop_now();
    let (_, status, stats) = ran(running.await.unwrap().unwrap());
    assert!(
        asked.elapsed() < StdDuration::from_secs(15),
        "the run did not wait for the 20 s reply"
    );
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert!(stats.stopped_early, "{stats:?}");
    assert!(f.db.candidates(None, None, 10).await.unwrap().is_empty());

    // The next run (a fresh runner; the model answers at once now) drafts the cluster.
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        drafts_reply(prompt, "The user wants sources cited.", 0.9, 4)
    }));
    let runner = f.runner(vec![("distill", job, 1000)]);
    let (_, _, again) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(details(&again, "candidates_created"), 1, "{again:?}");
    let candidate = &f.db.candidates(None, None, 10).await.unwrap()[0];
    let mut sources = candidate.source_ids.clone();
    sources.sort();
    let mut expected = sales;
    expected.sort();
    assert_eq!(sources, expected);
}

/// After an embedder change the drafts could not be compared with the stored vectors: the run
/// fails, saying what to do, and writes nothing.
pub async fn distill_refuses_to_run_after_an_embedder_change(f: Fixture) {
    theme(&f, SALES, 4).await;
    f.db.meta_set(
        hindsight::service::EMBEDDER_META_KEY,
        "another-embedder/768",
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let embedder: Arc<dyn Embedder> = Arc::new(BuiltinEmbedder::new());
    let index = common::open_index(dir.path(), embedder.dimension()).await;
    let store: Arc<dyn MemoryStore> = f.db.clone();
    let service = Arc::new(
        MemoryService::start(store, index, embedder, Rules::default())
            .await
            .unwrap(),
    );
    let config = tempfile::tempdir().unwrap();
    let distill = load_job(config.path(), "distill", Some("cron = \"0 0 4 * * *\"\n"));
    let mut settings = distill.settings.clone();
    settings.batch_size = 1000;
    let runner = Runner::new(
        vec![ConfiguredJob {
            settings,
            job: distill.job,
        }],
        service.clone(),
        f.db.clone(),
        true,
        service.metrics().clone(),
    );
    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Failed, "{stats:?}");
    let error = stats.details["error"].as_str().unwrap();
    assert!(error.contains("hindsight reindex"), "{error}");
    assert!(f.db.candidates(None, None, 10).await.unwrap().is_empty());
}

/// An endpoint that keeps failing is not asked once per cluster: after three failures in a row
/// the run leaves the remaining clusters for the next run and says so.
pub async fn distill_stops_calling_an_unreachable_model(f: Fixture) {
    use common::openai::Reply;
    for text in [SALES, DEPLOY, MEETINGS, WEATHER, INVOICES] {
        theme(&f, text, 4).await;
    }
    let server = common::openai::start(vec![]).await;
    server.script.set_fallback(Reply::Error(401));
    let (_c, job) = llm_distill(&server.base_url, 1, 1_000_000, "");
    let runner = f.runner(vec![("distill", job, 1000)]);
    let (_, status, stats) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(details(&stats, "clusters"), 5);
    assert_eq!(details(&stats, "llm_calls"), 3, "{stats:?}");
    assert_eq!(server.script.request_count(), 3);
    assert_eq!(details(&stats, "clusters_failed"), 3);
    assert_eq!(details(&stats, "clusters_deferred"), 2);
    assert_eq!(stats.details["llm_unreachable"], json!(true));

    // Back up: every cluster is drafted.
    server.script.set_fallback(Reply::from_prompt(|prompt| {
        let theme = [SALES, DEPLOY, MEETINGS, WEATHER, INVOICES]
            .into_iter()
            .find(|t| prompt.contains(t))
            .unwrap();
        drafts_reply(prompt, &format!("A recurring habit: {theme}."), 0.8, 4)
    }));
    let (_, _, again) = ran(runner.run_now("distill", false, None).await.unwrap());
    assert_eq!(details(&again, "candidates_created"), 5, "{again:?}");
    assert_eq!(again.details["llm_unreachable"], json!(false));
}
