//! What the write path's optional model calls (`triage_llm`, `update_llm`) share: answers
//! cached by the SHA-256 of what was asked (the last `CACHE` of them), and a cap on calls per
//! UTC day. A spent budget means no call: the rules' own decision holds.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use chrono::{NaiveDate, Utc};
use sha2::{Digest, Sha256};

/// Answers remembered.
const CACHE: usize = 10_000;

pub(super) type Key = [u8; 32];

/// The key of what is asked (its parts joined unambiguously).
pub(super) fn key(parts: &[&str]) -> Key {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().into()
}

/// Whether to call the model.
pub(super) enum Ask<V> {
    /// Answered before.
    Cached(V),
    /// Call it (the call is counted against today's budget).
    Call,
    /// Today's calls are spent.
    Spent,
}

pub(super) struct ModelCalls<V> {
    daily_calls: u64,
    state: Mutex<State<V>>,
}

struct State<V> {
    answers: HashMap<Key, V>,
    order: VecDeque<Key>,
    day: Option<NaiveDate>,
    calls: u64,
}

impl<V: Clone> ModelCalls<V> {
    pub fn new(daily_calls: u64) -> Self {
        Self {
            daily_calls,
            state: Mutex::new(State {
                answers: HashMap::new(),
                order: VecDeque::new(),
                day: None,
                calls: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<V>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached answer, or leave to call (counted), or not today.
    pub fn ask(&self, key: &Key) -> Ask<V> {
        let mut state = self.state();
        if let Some(answer) = state.answers.get(key) {
            return Ask::Cached(answer.clone());
        }
        let today = Utc::now().date_naive();
        if state.day != Some(today) {
            state.day = Some(today);
            state.calls = 0;
        }
        if state.calls >= self.daily_calls {
            return Ask::Spent;
        }
        state.calls += 1;
        Ask::Call
    }

    /// Remember a readable answer.
    pub fn remember(&self, key: Key, answer: V) {
        let mut state = self.state();
        if state.order.len() >= CACHE
            && let Some(old) = state.order.pop_front()
        {
            state.answers.remove(&old);
        }
        state.order.push_back(key);
        state.answers.insert(key, answer);
    }
}
