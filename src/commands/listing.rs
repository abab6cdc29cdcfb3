//! How a listing command prints: a table of the columns that matter at a terminal; the JSON
//! it has always printed with `--json`, and whenever stdout is not a terminal (a pipe, a
//! script, a file), so scripts never parse a table.

use std::io::IsTerminal;

use serde::Serialize;

/// `--json` of a listing command.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Format {
    /// Print JSON (what a pipe or a file gets anyway) instead of a table.
    #[arg(long)]
    pub json: bool,
}

impl Format {
    fn table(self) -> bool {
        !self.json && std::io::stdout().is_terminal()
    }
}

/// Rows under a header; cells longer than `MAX_CELL` characters are cut with an ellipsis.
pub struct Table {
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

const MAX_CELL: usize = 60;

impl Table {
    pub fn new(header: &[&'static str]) -> Self {
        Self {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, columns padded to their widest cell.
    pub fn render(&self) -> String {
        let cut = |cell: &str| -> String {
            let one_line = cell.replace(['\n', '\r', '\t'], " ");
            if one_line.chars().count() > MAX_CELL {
                let kept: String = one_line.chars().take(MAX_CELL - 1).collect();
                format!("{kept}…")
            } else {
                one_line
            }
        };
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| cut(c)).collect())
            .collect();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (i, cell) in row.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(cell.chars().count());
                }
            }
        }
        let line = |cells: Vec<String>| -> String {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = widths.get(i).copied().unwrap_or(0);
                    format!("{c:<pad$}")
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        };
        let mut out = line(self.header.iter().map(|h| h.to_uppercase()).collect());
        for row in rows {
            out.push('\n');
            out.push_str(&line(row));
        }
        out
    }
}

/// `json` as JSON, or the table `table` builds, as `format` and stdout call for.
pub fn print_list(
    format: Format,
    json: &impl Serialize,
    table: impl FnOnce() -> Table,
) -> anyhow::Result<()> {
    if format.table() {
        let table = table();
        println!("{}", table.render());
        if table.rows.is_empty() {
            println!("(none)");
        }
        Ok(())
    } else {
        super::connection::print(json)
    }
}

/// A time as a table shows it: UTC to the second.
pub fn when(at: Option<chrono::DateTime<chrono::Utc>>) -> String {
    at.map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_columns_and_cut_long_cells() {
        let mut table = Table::new(&["id", "content"]);
        table.row(vec!["a".into(), "short".into()]);
        table.row(vec!["bcd".into(), "x".repeat(100)]);
        let text = table.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ID   CONTENT");
        assert_eq!(lines[1], "a    short");
        assert!(
            lines[2].starts_with("bcd  xxx") && lines[2].ends_with('…'),
            "{text}"
        );
        assert_eq!(lines[2].chars().count(), 5 + MAX_CELL);
    }
}
