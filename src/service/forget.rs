//! `memory_forget`: soft (status `forgotten`, row kept for audit) or hard (row deleted), on
//! every copy: the hot row, the archived row and the copies in exported archive objects, each
//! id tombstoned so no restore brings it back.

use chrono::Utc;

use super::requests::ForgetRequest;
use super::{ForgetResult, MemoryService, ServiceError};
use crate::domain::MemoryType;
use crate::store::ForgetSelector;

impl MemoryService {
    pub async fn forget(&self, request: &ForgetRequest) -> Result<ForgetResult, ServiceError> {
        let valid = request.validate()?;
        let now = Utc::now();
        // The scopes whose rows this forget may change, so no write of theirs interleaves its
        // index update with this forget's (a merge's upsert landing after the delete).
        let _guard = match &valid.selector {
            ForgetSelector::Filter(filter) => {
                let types = filter
                    .memory_type
                    .map_or(MemoryType::ALL.to_vec(), |t| vec![t]);
                Some(
                    self.write_locks
                        .scopes(filter.namespace.as_str(), &types)
                        .await,
                )
            }
            // Only a hot row has a point; an archived one or none needs no scope.
            ForgetSelector::Id(id) => match self.store.get(*id).await? {
                Some(row) => Some(
                    self.write_locks
                        .scope(row.namespace.as_str(), row.memory_type)
                        .await,
                ),
                None => None,
            },
        };
        let forgotten = self.store.forget(&valid.selector, valid.hard, now).await?;
        let hot = &forgotten.hot;
        if !hot.is_empty() {
            // Soft: the rows are marked index-pending in the same statement; hard: the rows are
            // gone and their tombstones are marked instead (`index_delete_pending`). Either way
            // a failed or interrupted delete is finished by the next repair, and the flag is
            // cleared only once the engine has flushed it. Archived rows and exported copies
            // have no points.
            match self.index.delete(hot.clone()).await {
                Ok(()) if !valid.hard => self.note_unflushed(hot.iter().map(|id| (*id, now))),
                Ok(()) => self.note_unflushed_deletes(hot.iter().copied()),
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
