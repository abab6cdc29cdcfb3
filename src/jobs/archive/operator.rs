//! What an operator asks of the archive (`hindsight archive restore|purge`, and the daemon's
//! routes for them), run under the archive job's guards: a run finishing meanwhile could
//! otherwise drop restored rows' fresh index points, or rewrite the objects a purge is
//! rewriting.

use async_trait::async_trait;

use super::purge::{self, PurgeReport};
use super::{RestoreReport, SPEC, Sink, restore, sink};
use crate::jobs::{JobError, Runner};
use crate::store::RestoreSelector;

#[async_trait]
pub trait ArchiveOperations {
    /// Archived memories back into the hot table and the index, from where the archive job's
    /// configured sink put them. Busy while the archive job runs.
    async fn restore(&self, selector: &RestoreSelector) -> Result<RestoreReport, JobError>;
    /// Exported objects holding hard-forgotten memories rewritten without them. Busy while
    /// the archive job runs.
    async fn purge(&self, dry_run: bool) -> Result<PurgeReport, JobError>;
}

#[async_trait]
impl ArchiveOperations for Runner {
    async fn restore(&self, selector: &RestoreSelector) -> Result<RestoreReport, JobError> {
        self.under_guards(SPEC.name, |settings| async move {
            let sink = sink(&settings)?;
            restore(self.service(), self.db().as_ref(), &sink, selector).await
        })
        .await
    }

    async fn purge(&self, dry_run: bool) -> Result<PurgeReport, JobError> {
        self.under_guards(SPEC.name, |settings| async move {
            match sink(&settings)? {
                Sink::Object(sink) => {
                    sink.partial_files(!dry_run).await?;
                    purge::purge(self.db().as_ref(), &sink, dry_run).await
                }
                // No object sink configured: fine as long as no object needs a purge.
                Sink::Table => match self.db().batches_to_purge().await?.len() {
                    0 => Ok(PurgeReport {
                        dry_run,
                        ..Default::default()
                    }),
                    n => Err(JobError::NoObjectSink(n)),
                },
            }
        })
        .await
    }
}
