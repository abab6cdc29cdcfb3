//! `hindsight audit [--since WHEN] [--limit N]`: who wrote, forgot, reviewed and changed tokens,
//! oldest first.

use chrono::{DateTime, Duration, Utc};
use hindsight::configuration::Settings;

use super::connection::with_operations;
use super::listing::{Format, Table, print_list, when};

/// `--since`: an RFC 3339 time, or how long ago (`90m`, `24h`, `7d`).
fn since(text: &str) -> anyhow::Result<DateTime<Utc>> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(at.with_timezone(&Utc));
    }
    let bad =
        || anyhow::anyhow!("--since: an RFC 3339 time or a span like 90m, 24h, 7d; got {text:?}");
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = number.parse().map_err(|_| bad())?;
    let span = match unit {
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        _ => None,
    }
    .ok_or_else(bad)?;
    Ok(Utc::now() - span)
}

pub async fn run(
    settings: Settings,
    since_text: String,
    limit: i64,
    format: Format,
) -> anyhow::Result<()> {
    let since = since(&since_text)?;
    let entries = with_operations(
        &settings,
        |ops, _| async move { ops.audit(since, limit).await },
    )
    .await?;
    print_list(format, &entries, || {
        let mut table = Table::new(&["at", "actor", "action", "namespace", "outcome", "ids"]);
        for e in &entries {
            table.row(vec![
                when(Some(e.at)),
                e.actor.clone(),
                e.action.clone(),
                e.namespace.clone().unwrap_or_default(),
                e.outcome.clone(),
                e.ids.join(" "),
            ]);
        }
        table
    })
}

#[cfg(test)]
mod tests {
    use super::since;

    #[test]
    fn since_takes_a_time_or_a_span() {
        let at = since("2026-01-02T03:04:05Z").unwrap();
        assert_eq!(at.to_rfc3339(), "2026-01-02T03:04:05+00:00");
        let day = since("1d").unwrap();
        assert!((chrono::Utc::now() - day).num_hours() == 24);
        for bad in ["", "d", "7w", "x1h", "yesterday"] {
            assert!(since(bad).is_err(), "{bad}");
        }
    }
}
