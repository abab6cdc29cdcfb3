//! `memory_forget`: soft (status `forgotten`, row kept for audit) or hard (row deleted), on
//! every copy: the hot row, the archived row and the copies in exported archive objects, each
//! id tombstoned so no restore brings it back.

use chrono::Utc;

use super::requests::ForgetRequest;
use super::{ForgetResult, MemoryService, ServiceError};

impl MemoryService {
    pub async fn forget(&self, request: &ForgetRequest) -> Result<ForgetResult, ServiceError> {
        let valid = request.validate()?;
        let now = Utc::now();
        let _guard = self.write_lock.lock().await;
        let forgotten = self.store.forget(&valid.selector, valid.hard, now).await?;
        let hot = &forgotten.hot;
        if !hot.is_empty() {
            // Soft: the rows are marked index-pending in the same statement, so a crash here is
            // repaired at start. Hard: the rows are gone; a leftover point is dropped by the
            // next search that meets it. Archived rows and exported copies have no points.
            match self.index.delete(hot.clone()).await {
                Ok(()) if !valid.hard => self.note_unflushed(hot.iter().map(|id| (*id, now))),
                Ok(()) => {}
                Err(e) => tracing::warn!(error = %e, "index delete failed; repair will retry"),
            }
        }
        let exported = forgotten.exported.len();
        let ids = forgotten.ids();
        Ok(ForgetResult {
            forgotten: ids.len(),
            ids,
            mode: if valid.hard { "hard" } else { "soft" }.to_owned(),
            archived: forgotten.archived.len(),
            exported,
            note: (valid.hard && exported > 0).then(|| {
                format!(
                    "{exported} exported archive cop{} of these memories stay in the archive's \
                     objects until the archive job's next run or `hindsight archive purge` \
                     rewrites them; none can be restored",
                    if exported == 1 { "y" } else { "ies" }
                )
            }),
        })
    }
}
