//! How results are printed: `-o table` (aligned columns for people), `-o json` and `-o yaml`
//! (the API's objects as they came, camelCase, for scripts).

use std::io::Write;

use clap::ValueEnum;
use serde::Serialize;

use crate::exit::{CliError, CliResult};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Table,
    Json,
    Yaml,
}

/// A table: a header and rows of cells, rendered with columns padded to their widest cell.
#[derive(Clone, Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Two spaces between columns, no trailing spaces, widths in characters. Cells never
    /// contain newlines (they are replaced by spaces) so that one row stays one line.
    pub fn render(&self) -> String {
        let clean = |s: &str| s.replace(['\n', '\r', '\t'], " ");
        let cols = self.rows.iter().map(Vec::len).chain([self.header.len()]).max().unwrap_or(0);
        let lines: Vec<Vec<String>> =
            std::iter::once(&self.header).chain(&self.rows).map(|r| r.iter().map(|c| clean(c)).collect()).collect();
        let mut widths = vec![0; cols];
        for line in &lines {
            for (i, cell) in line.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for line in &lines {
            let mut text = String::new();
            for (i, cell) in line.iter().enumerate() {
                if i > 0 {
                    text.push_str("  ");
                }
                text.push_str(cell);
                if i + 1 < line.len() {
                    text.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count()));
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Prints `value` as JSON or YAML.
pub fn print_data<T: Serialize>(format: Format, value: &T) -> CliResult<()> {
    let text = match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(value).map_err(|e| CliError::generic(e.to_string()))?;
            s.push('\n');
            s
        }
        Format::Yaml => serde_yaml::to_string(value).map_err(|e| CliError::generic(e.to_string()))?,
        Format::Table => unreachable!("tables are rendered by each command"),
    };
    write_stdout(text.as_bytes())
}

/// Writes to stdout; a closed pipe (`grus jobs | head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> CliResult<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(CliError::from),
    }
}

/// A cell for an optional value.
pub fn opt(v: Option<impl ToString>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

/// GPU milli as GPUs (`2500` -> `2.5`).
pub fn gpus_from_milli(milli: i64) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        let s = format!("{:.3}", milli as f64 / 1000.0);
        s.trim_end_matches('0').to_owned()
    }
}

/// A duration as an estimate reads (`~40 s`, `~14 min`, `~2 h 5 min`).
pub fn about(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("~{secs} s"),
        60..3600 => format!("~{} min", (secs + 30) / 60),
        _ => {
            let minutes = (secs + 30) / 60;
            match minutes % 60 {
                0 => format!("~{} h", minutes / 60),
                m => format!("~{} h {m} min", minutes / 60),
            }
        }
    }
}

/// An RFC 3339 timestamp shortened for a table (`2026-11-02 10:04:05`).
pub fn short_time(ts: &str) -> String {
    let t = ts.replacen('T', " ", 1);
    t.get(..19).map(str::to_owned).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_read_in_the_largest_sensible_unit() {
        assert_eq!(about(-5), "~0 s");
        assert_eq!(about(40), "~40 s");
        assert_eq!(about(14 * 60 + 10), "~14 min");
        assert_eq!(about(2 * 3600 + 5 * 60), "~2 h 5 min");
        assert_eq!(about(3 * 3600), "~3 h");
    }

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut t = Table::new(&["ID", "NAME", "STATE"]);
        t.row(vec!["1".into(), "train-llama".into(), "RUNNING".into()]);
        t.row(vec!["12".into(), "nb".into(), "PENDING".into()]);
        assert_eq!(t.render(), "ID  NAME         STATE\n1   train-llama  RUNNING\n12  nb           PENDING\n");
    }

    #[test]
    fn no_trailing_spaces_and_one_line_per_row() {
        let mut t = Table::new(&["A", "B"]);
        t.row(vec!["x\ny".into(), "".into()]);
        assert_eq!(t.render(), "A    B\nx y\n");
    }

    #[test]
    fn widths_count_characters_not_bytes() {
        let mut t = Table::new(&["N", "X"]);
        t.row(vec!["ü".into(), "1".into()]);
        assert_eq!(t.render(), "N  X\nü  1\n");
    }

    #[test]
    fn formats_gpus_and_times() {
        assert_eq!(gpus_from_milli(8000), "8");
        assert_eq!(gpus_from_milli(2500), "2.5");
        assert_eq!(gpus_from_milli(250), "0.25");
        assert_eq!(short_time("2026-11-02T10:04:05.123456Z"), "2026-11-02 10:04:05");
    }
}
