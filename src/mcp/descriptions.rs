//! What agents are told: the server's instructions and each tool's description, rendered from
//! the rules in force (`service::Rules`), so a daemon configured with another importance floor,
//! dedup threshold, working-memory TTL or ranking weights never tells agents the defaults.

use crate::service::{Rules, fusion::SearchArms};

/// A number as a person writes it: `0.3`, `24`, `0.92`.
fn n(x: f64) -> String {
    let rounded = (x * 1_000.0).round() / 1_000.0;
    format!("{rounded}")
}

pub fn instructions(rules: &Rules) -> String {
    format!(
        "Long-term memory that persists across conversations. Call memory_search before \
         answering questions that may depend on what you learned earlier about the user, their \
         projects or past events. Call memory_write when you learn something worth keeping \
         (memory_write_batch for several at once): a \
         durable fact or preference (memory_type semantic, with entity and attribute when it is \
         a property that can change, e.g. entity \"user\", attribute \"preferred_language\"), \
         something that happened (episodic), or scratch context for the current task (working, \
         expires after {ttl} h). Write one self-contained statement per memory; importance \
         below {floor} is not stored. A restatement is merged into the memory it repeats; a \
         correction (the same statement with another value, or a \"not\") retires the older \
         memory, which stays in the history. Use memory_forget when the user asks you to \
         forget something.",
        ttl = n(rules.working_ttl_hours),
        floor = n(rules.min_importance),
    )
}

pub fn memory_write(rules: &Rules) -> String {
    format!(
        "Store a memory. Returns {{status: stored|merged|skipped, memory_id, reason, \
         duplicate_of, superseded, superseded_by, look_alike}}. Importance below {floor} is \
         skipped. Compared with the active memories of the same namespace and type that look \
         like it: a restatement (cosine above {dedup}, or the same words) is merged into it \
         (reason duplicate); the same statement with another value or polarity (\"goes out on \
         Wednesdays\" after \"on Mondays\", \"is not allergic\" after \"is allergic\") \
         supersedes (deprecates) the older one (reason update:value / update:polarity, the \
         older in superseded); another subject, an added detail, another value of something \
         that has several, or another event is stored beside it (reason distinct:…, \
         look_alike). A memory with the same entity and attribute as an active one supersedes \
         it unless it repeats it exactly (reason update:fact). Whichever happened later \
         (occurred_at) stays active: an older one is kept as superseded (superseded_by). \
         Working memories expire after {ttl} h unless ttl_days says otherwise. Set \
         occurred_at when writing down something that happened earlier.",
        floor = n(rules.min_importance),
        dedup = n(rules.dedup_threshold),
        ttl = n(rules.working_ttl_hours),
    )
}

pub fn memory_write_batch(rules: &Rules) -> String {
    format!(
        "Store several memories at once (up to {max}), e.g. what a conversation taught: each \
         is a memory_write's arguments and follows its rules, in the order given (a later one \
         can merge into or supersede an earlier one). Returns {{results: [...]}}, one \
         memory_write result per memory in the same order. If any memory is invalid or \
         refused, none is stored and the error names it (memories[i]). Cheaper than as many \
         memory_write calls. Importance below {floor} is skipped.",
        max = crate::service::MAX_BATCH,
        floor = n(rules.min_importance),
    )
}

pub fn memory_search(rules: &Rules) -> String {
    let how = match rules.search_arms {
        SearchArms::Hybrid => "by meaning and by their words (vector and full-text matches, fused)",
        SearchArms::Dense => "by meaning (vector matches)",
        SearchArms::Lexical => "by their words (full-text matches)",
    };
    format!(
        "Search memories {how}. Returns {{memories: [...]}}, best first, each with its content, \
         type, provenance (source), when it happened (occurred_at) and was stored (created_at), \
         and score = {ws}·relevance + {wr}·recency + {wi}·importance (recency from occurred_at). \
         Expired, forgotten and (unless include_deprecated) superseded memories are never \
         returned. namespaces: [...] searches several namespaces at once, ranked together (each \
         hit names its own); with a scoped token and no namespace, every namespace it may read.",
        ws = n(rules.weight_similarity),
        wr = n(rules.weight_recency),
        wi = n(rules.weight_importance),
    )
}

pub fn memory_forget(_rules: &Rules) -> String {
    "Forget memories: one by memory_id, or all matching a filter (namespace required; optional \
     memory_type, entity, created_before), archived ones included. Soft by default (no longer \
     returned, kept for audit); hard: true deletes them for good. A forgotten memory is never \
     restored. Returns {forgotten: count, ids, archived, exported}."
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_read_as_before_and_other_rules_are_told_as_they_are() {
        let defaults = Rules::default();
        assert!(instructions(&defaults).contains("expires after 24 h"));
        assert!(memory_write(&defaults).contains("Importance below 0.3 is skipped"));
        assert!(memory_write(&defaults).contains("cosine above 0.92"));
        assert!(memory_search(&defaults).contains("0.7·relevance + 0.2·recency + 0.1·importance"));

        let rules = Rules {
            min_importance: 0.45,
            dedup_threshold: 0.95,
            working_ttl_hours: 72.0,
            weight_similarity: 0.6,
            weight_recency: 0.3,
            weight_importance: 0.1,
            ..Rules::default()
        };
        let all = [
            instructions(&rules),
            memory_write(&rules),
            memory_search(&rules),
        ]
        .join("\n");
        for told in [
            "expires after 72 h",
            "below 0.45",
            "cosine above 0.95",
            "0.6·relevance + 0.3·recency + 0.1·importance",
        ] {
            assert!(all.contains(told), "{told:?} in {all}");
        }
        for stale in ["24 h", "0.3 is", "0.92", "0.7·relevance"] {
            assert!(!all.contains(stale), "{stale:?} in {all}");
        }
    }
}
