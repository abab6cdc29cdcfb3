//! Per-term statistics remembered between searches: SQLite's document counts (fts5vocab counts
//! a term's rows by reading its whole doclist on every query — about 0.4 ms a common term at
//! 100k rows, more than the match itself) and the embedded index's IDFs (read off a one-term
//! search each). They only decide which query terms are left out (`search_lexical_max_df`) and
//! the BM25 scale fusion reads scores against, where a figure a little out of date changes
//! nothing that matters.
//!
//! The figures are dropped together once the table (or index) has grown by more than 1% since
//! they were taken, or after a minute (deletes and rewrites do not grow it). Small ones are not
//! cached at all: reading their figures is cheap, and every answer stays exact.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Below this many rows, counts are always read fresh.
const MIN_ROWS: i64 = 1_000;
const MAX_AGE: Duration = Duration::from_secs(60);
/// Bounds the memory a stream of one-off query words can take (~100 B a term).
const MAX_TERMS: usize = 100_000;

/// A figure `V` per term (a document count, an IDF), for a table of so many rows.
pub struct StatsCache<V> {
    inner: Mutex<Option<Generation<V>>>,
}

impl<V> Default for StatsCache<V> {
    fn default() -> Self {
        Self {
            inner: Mutex::new(None),
        }
    }
}

struct Generation<V> {
    rows: i64,
    taken: Instant,
    counts: HashMap<String, V>,
}

impl<V: Copy + Default> StatsCache<V> {
    /// The remembered figure of each of `terms` that is still good for a table of `rows` rows,
    /// and the terms whose figures must be read.
    pub fn lookup(&self, rows: i64, terms: &[String]) -> (Vec<(String, V)>, Vec<String>) {
        if rows < MIN_ROWS {
            return (vec![], terms.to_vec());
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let stale = inner.as_ref().is_none_or(|g| {
            rows > g.rows + g.rows / 100 || rows < g.rows || g.taken.elapsed() > MAX_AGE
        });
        if stale {
            *inner = Some(Generation {
                rows,
                taken: Instant::now(),
                counts: HashMap::new(),
            });
        }
        let counts = inner.as_ref().map(|g| &g.counts);
        let mut known = Vec::new();
        let mut missing = Vec::new();
        for term in terms {
            match counts.and_then(|c| c.get(term)) {
                Some(&df) => known.push((term.clone(), df)),
                None => missing.push(term.clone()),
            }
        }
        (known, missing)
    }

    /// Remember figures just read for a table of `rows` rows. Terms `read` has no entry for
    /// (no row holds them) are remembered as `V::default()`.
    pub fn remember(&self, rows: i64, asked: &[String], read: &[(String, V)]) {
        if rows < MIN_ROWS {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let Some(generation) = inner
            .as_mut()
            .filter(|g| rows >= g.rows && rows <= g.rows + g.rows / 100)
        else {
            return; // another search started a newer generation meanwhile
        };
        if generation.counts.len() + asked.len() > MAX_TERMS {
            generation.counts.clear();
        }
        for term in asked {
            let df = read
                .iter()
                .find(|(t, _)| t == term)
                .map_or_else(V::default, |(_, d)| *d);
            generation.counts.insert(term.clone(), df);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn small_tables_are_always_read() {
        let cache = StatsCache::<i64>::default();
        cache.remember(10, &terms(&["a"]), &[("a".into(), 3)]);
        assert_eq!(cache.lookup(10, &terms(&["a"])), (vec![], terms(&["a"])));
    }

    #[test]
    fn counts_are_kept_until_the_table_grows_by_more_than_one_percent() {
        let cache = StatsCache::<i64>::default();
        assert_eq!(
            cache.lookup(10_000, &terms(&["a", "b"])).1,
            terms(&["a", "b"])
        );
        cache.remember(10_000, &terms(&["a", "b"]), &[("a".into(), 7)]);
        let (known, missing) = cache.lookup(10_100, &terms(&["a", "b", "c"]));
        assert_eq!(known, vec![("a".into(), 7), ("b".into(), 0)]);
        assert_eq!(missing, terms(&["c"]));
        let (known, missing) = cache.lookup(10_101, &terms(&["a"]));
        assert!(known.is_empty(), "grown by more than 1%: counted again");
        assert_eq!(missing, terms(&["a"]));
    }

    #[test]
    fn counts_for_an_older_generation_are_not_kept() {
        let cache = StatsCache::<i64>::default();
        cache.lookup(10_000, &terms(&["a"]));
        cache.lookup(20_000, &terms(&["a"]));
        cache.remember(10_000, &terms(&["a"]), &[("a".into(), 7)]);
        assert_eq!(cache.lookup(20_000, &terms(&["a"])).1, terms(&["a"]));
    }
}
