//! The process's write locks, one per (namespace, memory type) scope: a write holds its scope's
//! from the dedup probe until its row is in the index, so two near-duplicates of one scope
//! cannot both miss each other; writes to other scopes go on meanwhile. (One process-wide lock
//! used to serialise every write across all namespaces.) Across replicas the PostgreSQL
//! advisory lock on the same scope does this job (`MemoryService::write`).
//!
//! A fixed set of stripes, the scope hashed onto one: bounded memory whatever the number of
//! namespaces, and no clean-up. Two scopes that share a stripe only wait for each other.

use std::sync::Arc;

use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::domain::MemoryType;

const STRIPES: usize = 64;

pub(super) struct WriteLocks {
    stripes: Vec<Arc<Mutex<()>>>,
}

/// Held scopes; released on drop.
pub(super) struct WriteGuard {
    _held: Vec<OwnedMutexGuard<()>>,
}

impl WriteLocks {
    pub(super) fn new() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| Arc::new(Mutex::new(()))).collect(),
        }
    }

    fn stripe(namespace: &str, memory_type: MemoryType) -> usize {
        let key = format!("{namespace}\u{1f}{}", memory_type.as_str());
        (xxhash_rust::xxh3::xxh3_64(key.as_bytes()) % STRIPES as u64) as usize
    }

    /// One scope.
    pub(super) async fn scope(&self, namespace: &str, memory_type: MemoryType) -> WriteGuard {
        self.scopes(namespace, &[memory_type]).await
    }

    /// Several scopes of one namespace (a forget by filter), taken in stripe order so two
    /// callers never wait for each other in a cycle.
    pub(super) async fn scopes(&self, namespace: &str, types: &[MemoryType]) -> WriteGuard {
        let mut stripes: Vec<usize> = types.iter().map(|t| Self::stripe(namespace, *t)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let mut held = Vec::with_capacity(stripes.len());
        for i in stripes {
            held.push(self.stripes[i].clone().lock_owned().await);
        }
        WriteGuard { _held: held }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_scope_blocks_only_its_own_stripe() {
        let locks = WriteLocks::new();
        let held = locks.scope("a", MemoryType::Episodic).await;
        // Another scope on another stripe is free at once.
        let other = (0..100)
            .map(|i| format!("ns-{i}"))
            .find(|ns| {
                WriteLocks::stripe(ns, MemoryType::Episodic)
                    != WriteLocks::stripe("a", MemoryType::Episodic)
            })
            .unwrap();
        let free = locks.stripes[WriteLocks::stripe(&other, MemoryType::Episodic)].try_lock();
        assert!(free.is_ok());
        drop(free);
        let same = locks.stripes[WriteLocks::stripe("a", MemoryType::Episodic)].try_lock();
        assert!(same.is_err(), "the held scope's stripe is taken");
        drop(held);
        let all = locks.scopes("a", &MemoryType::ALL).await;
        assert!(!all._held.is_empty() && all._held.len() <= 3);
    }
}
