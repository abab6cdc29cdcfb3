//! The write screen's figures (`hindsight eval screening`'s library): the poisoned corpus
//! caught and LoCoMo's benign turns not flagged, at the thresholds the issue set (quality
//! figures, not timings). Each action through the write path is in the daemon's
//! `tests/integration/screening.rs`.

use crate::common;

use std::path::Path;

use hindsight::screening::Screen;
use hindsight_bench::screening_eval::{evaluate, load_corpus, locomo_turns};

#[test]
#[ignore = "needs LoCoMo (../shared/data/locomo beside the checkout, HINDSIGHT_TEST_LOCOMO): full tier"]
fn the_poisoned_corpus_is_caught_and_benign_chat_is_not_flagged() {
    let corpus =
        load_corpus(&common::repository().join("tests/fixtures/screening/poisoned.jsonl")).unwrap();
    assert!(corpus.len() >= 200, "{} poisoned memories", corpus.len());
    for lang in ["en", "zh"] {
        assert!(
            corpus.iter().filter(|s| s.lang == lang).count() >= 40,
            "{lang}"
        );
    }
    let families: std::collections::BTreeSet<&str> =
        corpus.iter().map(|s| s.rule.as_str()).collect();
    for family in &families {
        assert!(
            corpus.iter().filter(|s| s.rule == *family).count() >= 5,
            "several styles of {family}"
        );
    }
    let benign = locomo_turns(Path::new(&common::locomo())).unwrap();
    assert_eq!(benign.len(), 2_760, "LoCoMo's dev turns");
    let report = evaluate(&Screen::builtin(), &corpus, &benign);
    assert!(
        report.caught_rate() >= 0.95,
        "caught {}/{}: {}",
        report.caught,
        report.poisoned,
        report.json["poisoned"]["missed"]
    );
    assert!(
        report.flagged_rate() <= 0.01,
        "flagged {}/{}: {}",
        report.flagged,
        report.benign,
        report.json["benign"]["examples"]
    );
}
