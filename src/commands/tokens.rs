//! `hindsight tokens create|list|revoke`: the operator's tokens for agents. A token's secret is
//! printed once, at creation; only its hash is kept.

use clap::Subcommand;
use hindsight::auth::{Grants, Scopes};
use hindsight::configuration::Settings;
use hindsight::operations::NewToken;

use super::connection::{print, with_operations};

#[derive(Debug, Subcommand)]
pub enum TokensCommand {
    /// Create a token; prints its secret, which is not shown again.
    Create {
        /// Who holds it (an agent's name).
        #[arg(long)]
        name: String,
        /// Namespaces it may search and read: names, `prefix/*` or `*`, comma-separated
        /// (e.g. `global,team/analytics,private/writer-agent`).
        #[arg(long, default_value = "")]
        read: String,
        /// Namespaces it may write to and forget in.
        #[arg(long, default_value = "")]
        write: String,
        /// Namespaces whose distilled candidates it may review.
        #[arg(long, default_value = "")]
        review: String,
        /// Everything, like the operator.
        #[arg(long)]
        operator: bool,
    },
    /// Every token (no secrets), revoked ones too.
    List {
        #[command(flatten)]
        format: super::listing::Format,
    },
    /// Revoke a token: it stops working at once.
    Revoke { name: String },
}

pub async fn run(settings: Settings, command: TokensCommand) -> anyhow::Result<()> {
    match command {
        TokensCommand::Create {
            name,
            read,
            write,
            review,
            operator,
        } => {
            let scopes = |flag: &str, text: &str| {
                Scopes::parse_list(text).map_err(|e| anyhow::anyhow!("--{flag}: {e}"))
            };
            let request = NewToken {
                name,
                grants: Grants {
                    read: scopes("read", &read)?,
                    write: scopes("write", &write)?,
                    review: scopes("review", &review)?,
                },
                operator,
            };
            let created = with_operations(&settings, |ops, _| async move {
                ops.create_token(request).await
            })
            .await?;
            eprintln!(
                "token {:?} created; its secret is shown this once: send it as \
                 `Authorization: Bearer <secret>`",
                created.token.name
            );
            print(&created)
        }
        TokensCommand::List { format } => {
            let tokens =
                with_operations(&settings, |ops, _| async move { ops.tokens().await }).await?;
            super::listing::print_list(format, &tokens, || {
                let mut table = super::listing::Table::new(&[
                    "name", "operator", "read", "write", "review", "created", "revoked",
                ]);
                for t in &tokens {
                    table.row(vec![
                        t.name.clone(),
                        t.operator.to_string(),
                        t.grants.read.to_string(),
                        t.grants.write.to_string(),
                        t.grants.review.to_string(),
                        super::listing::when(Some(t.created_at)),
                        super::listing::when(t.revoked_at),
                    ]);
                }
                table
            })
        }
        TokensCommand::Revoke { name } => print(
            &with_operations(
                &settings,
                |ops, _| async move { ops.revoke_token(&name).await },
            )
            .await?,
        ),
    }
}
