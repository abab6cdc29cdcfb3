//! Forgetting what the archive holds, in the jobs suite (both stores): a forget reaches the
//! archive table and the copies in exported objects, every forgotten id keeps a tombstone, a
//! restore never brings a forgotten memory back, and a purge (by hand, or at the archive job's
//! next run) takes hard-forgotten memories out of the objects. And what a killed object write
//! leaves behind is cleared by the next run.

use hindsight::jobs::archive::{ArchiveOperations, Sink};
use hindsight::service::ForgetResult;
use hindsight::service::requests::ForgetFilterRequest;
use hindsight::store::BatchState;

use super::*;

fn by_id(id: MemoryId, hard: bool) -> hindsight::service::ForgetRequest {
    hindsight::service::ForgetRequest {
        memory_id: Some(id.to_string()),
        hard: Some(hard),
        ..Default::default()
    }
}

fn by_entity(entity: &str, hard: bool) -> hindsight::service::ForgetRequest {
    hindsight::service::ForgetRequest {
        filter: Some(ForgetFilterRequest {
            namespace: "jobs".into(),
            entity: Some(entity.into()),
            ..Default::default()
        }),
        hard: Some(hard),
        ..Default::default()
    }
}

async fn forget(f: &Fixture, request: hindsight::service::ForgetRequest) -> ForgetResult {
    f.service.forget(&request).await.unwrap()
}

async fn restore(
    f: &Fixture,
    sink: &Sink,
    selector: RestoreSelector,
) -> hindsight::jobs::archive::RestoreReport {
    hindsight::jobs::archive::restore(&f.service, f.db.as_ref(), sink, &selector)
        .await
        .unwrap()
}

/// A runner whose archive job (and so its restore and purge) uses the object sink at `objects`,
/// in batches of `batch`.
fn object_runner(
    f: &Fixture,
    config: &std::path::Path,
    objects: &std::path::Path,
    batch: usize,
) -> (Arc<Runner>, Sink) {
    let mut archive = load_job(
        config,
        "archive",
        Some(&format!(
            "cron = \"0 30 3 * * *\"\n[params]\nsink = \"object\"\nobject_url = \"file://{}\"\n",
            objects.display()
        )),
    );
    archive.settings.batch_size = batch;
    let sink = hindsight::jobs::archive::sink(&archive.settings).unwrap();
    let runner = Runner::new(
        vec![archive],
        f.service.clone(),
        f.db.clone(),
        true,
        f.service.metrics().clone(),
    );
    (runner, sink)
}

fn sorted(mut ids: Vec<MemoryId>) -> Vec<MemoryId> {
    ids.sort();
    ids
}

/// The archive table sink: soft and hard forgets reach archived rows (by id and by filter),
/// count them, and a restore leaves the forgotten ones where they are.
pub async fn forget_reaches_archived_rows_and_restore_never_brings_them_back(f: Fixture) {
    let mut cold = Vec::new();
    for (i, entity) in [None, Some("bob"), None, None].into_iter().enumerate() {
        let text = format!("archived walrus survey {i}");
        cold.push(
            f.seed_about(&text, Duration::days(120), None, 0, entity)
                .await,
        );
    }
    let runner = f.runner(vec![("archive", job("archive"), 1000)]);
    let (_, status, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!((status, stats.changed), (RunStatus::Ok, 4), "{stats:?}");

    // Soft, by id: the archived row is forgotten (and said to be archived).
    let soft = forget(&f, by_id(cold[0].id, false)).await;
    assert_eq!(
        (soft.forgotten, soft.archived, soft.exported),
        (1, 1, 0),
        "{soft:?}"
    );
    assert_eq!(soft.ids, vec![cold[0].id]);
    let again = forget(&f, by_id(cold[0].id, false)).await;
    assert_eq!(again.forgotten, 0, "forgotten already");
    // Soft, by filter.
    let by_filter = forget(&f, by_entity("bob", false)).await;
    assert_eq!(
        (by_filter.ids.clone(), by_filter.archived),
        (vec![cold[1].id], 1)
    );
    // Hard, by id: gone from the archive table.
    let hard = forget(&f, by_id(cold[2].id, true)).await;
    assert_eq!(
        (hard.forgotten, hard.archived, hard.mode.as_str()),
        (1, 1, "hard")
    );
    assert!(
        hard.note.is_none(),
        "no exported copies: nothing left to do"
    );
    assert!(f.db.archived_rows(&[cold[2].id]).await.unwrap().is_empty());
    assert_eq!(
        f.db.forgotten_among(&cold.iter().map(|m| m.id).collect::<Vec<_>>())
            .await
            .unwrap(),
        sorted(vec![cold[0].id, cold[1].id, cold[2].id]),
        "a tombstone for every forgotten id"
    );

    // Restore by namespace: only the one never forgotten comes back.
    let report = restore(&f, &Sink::Table, RestoreSelector::Namespace("jobs".into())).await;
    assert_eq!(report.restored, 1, "{report:?}");
    assert_eq!(report.forgotten, sorted(vec![cold[0].id, cold[1].id]));
    assert!(report.skipped.is_empty());
    assert_eq!(
        f.db.get(cold[3].id).await.unwrap().unwrap().status,
        Status::Active
    );
    for m in &cold[..3] {
        assert!(
            f.db.get(m.id).await.unwrap().is_none(),
            "{} stays out",
            m.content
        );
    }
    let found = f.search_ids("archived walrus survey").await;
    assert!(found.contains(&cold[3].id));
    assert!(!found.contains(&cold[0].id) && !found.contains(&cold[1].id));
    // By id, likewise; the soft-forgotten rows stay on record in the archive.
    let report = restore(&f, &Sink::Table, RestoreSelector::Ids(vec![cold[0].id])).await;
    assert_eq!(
        (report.restored, report.forgotten.clone()),
        (0, vec![cold[0].id])
    );
    let kept = f.db.archived_rows(&[cold[0].id, cold[1].id]).await.unwrap();
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().all(|r| r.memory.status == Status::Forgotten));
    assert_eq!(kept[0].memory.content, cold[0].content, "kept for audit");
}

/// The object sink: forgets reach the copies in exported objects (which only the export
/// listing knows of), none of them can be restored, and a purge rewrites or deletes the
/// objects that hold hard-forgotten ones; the archive job does the same at its next run.
pub async fn forget_reaches_exported_objects_and_purge_rewrites_them(f: Fixture) {
    let mut cold = Vec::new();
    for (i, entity) in [None, None, Some("bob"), Some("bob"), None]
        .into_iter()
        .enumerate()
    {
        let text = format!("exported narwhal sighting {i}");
        // Distinct ages: the oldest first, so batches of 2 are [0, 1], [2, 3], [4].
        cold.push(
            f.seed_about(&text, Duration::days(200 - i as i64), None, 0, entity)
                .await,
        );
    }
    let objects = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let (runner, sink) = object_runner(&f, config.path(), objects.path(), 2);
    let Sink::Object(store) = &sink else {
        panic!("object sink")
    };
    let (_, _, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!((stats.changed, stats.batches), (5, 3), "{stats:?}");
    let batches = f.db.batches(BatchState::Exported, None).await.unwrap();
    let key_of = |id: MemoryId| {
        batches
            .iter()
            .find(|b| b.ids.contains(&id))
            .unwrap()
            .key
            .clone()
    };
    let (first, second, third) = (key_of(cold[0].id), key_of(cold[2].id), key_of(cold[4].id));
    assert_eq!(key_of(cold[1].id), first);
    assert_eq!(key_of(cold[3].id), second);

    // Soft: the exported copy is covered, and cannot be restored.
    let soft = forget(&f, by_id(cold[0].id, false)).await;
    assert_eq!(
        (soft.forgotten, soft.archived, soft.exported),
        (1, 0, 1),
        "{soft:?}"
    );
    let report = restore(&f, &sink, RestoreSelector::Ids(vec![cold[0].id])).await;
    assert_eq!(
        (report.restored, report.forgotten.clone()),
        (0, vec![cold[0].id])
    );
    assert!(f.db.get(cold[0].id).await.unwrap().is_none());

    // Hard, by filter: both copies counted, and the answer says they are still in the objects.
    let hard = forget(&f, by_entity("bob", true)).await;
    assert_eq!(hard.ids, sorted(vec![cold[2].id, cold[3].id]), "{hard:?}");
    assert_eq!(hard.exported, 2);
    assert!(
        hard.note.as_deref().unwrap_or("").contains("archive purge"),
        "{hard:?}"
    );
    assert_eq!(
        forget(&f, by_entity("bob", true)).await.forgotten,
        0,
        "counted once"
    );

    // The namespace comes back without any forgotten memory.
    let report = restore(&f, &sink, RestoreSelector::Namespace("jobs".into())).await;
    assert_eq!(report.restored, 2, "{report:?}");
    assert_eq!(
        report.forgotten,
        sorted(vec![cold[0].id, cold[2].id, cold[3].id])
    );
    for m in [&cold[0], &cold[2], &cold[3]] {
        assert!(
            f.db.get(m.id).await.unwrap().is_none(),
            "{} stays out",
            m.content
        );
    }
    assert!(f.search_ids("narwhal sighting").await.contains(&cold[1].id));
    assert!(
        f.db.batches(BatchState::Exported, None)
            .await
            .unwrap()
            .is_empty(),
        "every object is settled: its rows back or forgotten"
    );

    // A restored memory forgotten hard: its hot row goes, its object's copy is counted.
    let hot = forget(&f, by_id(cold[1].id, true)).await;
    assert_eq!(
        (hot.forgotten, hot.archived, hot.exported),
        (1, 0, 1),
        "{hot:?}"
    );

    // Purge, dry run first: reads, reports, changes nothing.
    let dry = runner.purge(true).await.unwrap();
    assert_eq!(
        (dry.objects_deleted, dry.objects_rewritten, dry.rows_removed),
        (1, 1, 3),
        "{dry:?}"
    );
    assert_eq!(store.read(&second).await.unwrap().len(), 2);
    let report = runner.purge(false).await.unwrap();
    assert_eq!(
        (
            report.objects_deleted,
            report.objects_rewritten,
            report.rows_removed
        ),
        (1, 1, 3),
        "{report:?}"
    );
    assert!(
        store.read_if_exists(&second).await.unwrap().is_none(),
        "the object of the two hard-forgotten memories is deleted"
    );
    let left: Vec<_> = store
        .read(&first)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.memory.id)
        .collect();
    assert_eq!(
        left,
        vec![cold[0].id],
        "rewritten without the hard-forgotten one; the soft-forgotten copy stays for audit"
    );
    let journal = f.db.batches(BatchState::Restored, None).await.unwrap();
    assert!(journal.iter().all(|b| b.key != second));
    assert_eq!(
        journal.iter().find(|b| b.key == first).unwrap().ids,
        vec![cold[0].id]
    );
    let again = runner.purge(false).await.unwrap();
    assert_eq!(again.rows_removed, 0, "nothing left to purge: {again:?}");
    let report = restore(&f, &sink, RestoreSelector::Namespace("jobs".into())).await;
    assert_eq!(report.restored, 0, "{report:?}");
    assert!(f.db.get(cold[1].id).await.unwrap().is_none());

    // The archive job purges by itself at its next run.
    forget(&f, by_id(cold[4].id, true)).await;
    assert_eq!(store.read(&third).await.unwrap().len(), 1);
    let (_, status, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(
        stats.details["purged"]["objects_deleted"],
        json!(1),
        "{stats:?}"
    );
    assert!(store.read_if_exists(&third).await.unwrap().is_none());
}

/// A write killed mid-way leaves the local store's staging file (`<key>#<n>`) next to where
/// the object would be; the next run removes such files (and a dry run only counts them).
pub async fn a_killed_writes_staging_files_are_removed_by_the_next_run(f: Fixture) {
    let objects = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let (job, _sink) = object_archive(
        config.path(),
        &format!("file://{}", objects.path().display()),
    );
    let dir = objects.path().join("jobs");
    std::fs::create_dir_all(&dir).unwrap();
    let partials = [
        dir.join("0190_0191_1733000000000.jsonl.gz#1"),
        objects.path().join("top.jsonl.gz#12"),
    ];
    for path in &partials {
        std::fs::write(path, b"\x1f\x8b half an object").unwrap();
    }
    let unrelated = dir.join("notes#draft");
    std::fs::write(&unrelated, b"not ours").unwrap();
    f.seed("old octopus log", Duration::days(120), None, 0)
        .await;
    let runner = f.runner(vec![("archive", job, 100)]);

    let (_, _, dry) = ran(runner.run_now("archive", true, None).await.unwrap());
    assert_eq!(
        dry.details["would_remove_partial_files"],
        json!(2),
        "{dry:?}"
    );
    assert!(
        partials.iter().all(|p| p.exists()),
        "a dry run removes nothing"
    );

    let (_, status, stats) = ran(runner.run_now("archive", false, None).await.unwrap());
    assert_eq!(status, RunStatus::Ok, "{stats:?}");
    assert_eq!(stats.details["partial_files_removed"], json!(2));
    assert_eq!(stats.changed, 1);
    assert!(partials.iter().all(|p| !p.exists()));
    assert!(
        unrelated.exists(),
        "a name that is not a staging file is left alone"
    );
}
