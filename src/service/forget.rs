//! `memory_forget`: soft (status `forgotten`, row kept for audit) or hard (row deleted).

use chrono::Utc;

use super::requests::ForgetRequest;
use super::{ForgetResult, MemoryService, ServiceError};

impl MemoryService {
    pub async fn forget(&self, request: &ForgetRequest) -> Result<ForgetResult, ServiceError> {
        let valid = request.validate()?;
        let now = Utc::now();
        let _guard = self.write_lock.lock().await;
        let ids = self.store.forget(&valid.selector, valid.hard, now).await?;
        if !ids.is_empty() {
            // Soft: the rows are marked index-pending in the same statement, so a crash here is
            // repaired at start. Hard: the rows are gone; a leftover point is dropped by the
            // next search that meets it.
            match self.index.delete(ids.clone()).await {
                Ok(()) if !valid.hard => self.note_unflushed(ids.iter().map(|id| (*id, now))),
                Ok(()) => {}
                Err(e) => tracing::warn!(error = %e, "index delete failed; repair will retry"),
            }
        }
        Ok(ForgetResult {
            forgotten: ids.len(),
            ids,
            mode: if valid.hard { "hard" } else { "soft" }.to_owned(),
        })
    }
}
