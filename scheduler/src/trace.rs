//! Parsing of the Alibaba GPU cluster trace v2023 ("openb") CSV files into typed rows.
//!
//! Pure: the functions take the file's text and return rows or a [`TraceError`] naming the
//! 1-based line and what is wrong; reading the file is the caller's business (the
//! `grus-replay` binary). Columns are found by header name, so both pod layouts parse: the
//! full one (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//! creation_time,deletion_time,scheduled_time`) and the five-column one of the multigpu20
//! file. Values are normalised the way the published experiment's YAML converter does:
//! `gpu_milli` is clamped to 1000, and a pod with `num_gpu = 0` or `gpu_milli = 0` requests
//! no GPU at all.

use crate::resources::MILLI_PER_GPU;

/// One GPU node (`openb_node_list_gpu_node.csv`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRow {
    /// 1-based line in the file.
    pub line: usize,
    pub name: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub gpus: u32,
    /// GPU model name; empty for a node without GPUs.
    pub model: String,
}

/// One pod (`openb_pod_list_<trace>.csv`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRow {
    /// 1-based line in the file.
    pub line: usize,
    pub name: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    /// GPUs requested; 0 for a CPU-only pod.
    pub num_gpu: u32,
    /// Milli per GPU, 1..=1000 when `num_gpu > 0`, else 0.
    pub gpu_milli: u32,
    /// Allowed GPU models, `|`-separated, kept as written (it is part of the workload key);
    /// empty means any model.
    pub gpu_spec: String,
    /// Columns absent from the five-column layout, or empty in a row, are `None`.
    pub qos: Option<String>,
    pub pod_phase: Option<String>,
    pub creation_time: Option<u64>,
    pub deletion_time: Option<u64>,
    pub scheduled_time: Option<u64>,
}

impl PodRow {
    /// A pod with only a name and requests, for tests.
    #[cfg(test)]
    pub(crate) fn bare(name: &str, cpu_milli: u64, num_gpu: u32, gpu_milli: u32) -> PodRow {
        PodRow {
            line: 0,
            name: name.into(),
            cpu_milli,
            memory_mib: 0,
            num_gpu,
            gpu_milli,
            gpu_spec: String::new(),
            qos: None,
            pod_phase: None,
            creation_time: None,
            deletion_time: None,
            scheduled_time: None,
        }
    }

    /// GPU milli the pod requests in total (`num_gpu · gpu_milli`).
    pub fn total_gpu_milli(&self) -> u64 {
        self.num_gpu as u64 * self.gpu_milli as u64
    }

    /// The allowed model names; empty for any model.
    pub fn allowed_models(&self) -> Vec<String> {
        self.gpu_spec.split('|').filter(|s| !s.is_empty()).map(str::to_string).collect()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TraceError {
    #[error("the file is empty: expected a header line")]
    Empty,
    #[error("line 1: the header lacks column `{0}`")]
    MissingColumn(&'static str),
    #[error("line {line}: expected {expected} comma-separated fields as in the header, found {found}")]
    FieldCount { line: usize, expected: usize, found: usize },
    #[error("line {line}: column `{column}`: `{value}` is not a non-negative integer")]
    BadInteger { line: usize, column: &'static str, value: String },
    #[error("line {line}: column `{column}` is empty")]
    EmptyField { line: usize, column: &'static str },
    #[error("line {line}: {num_gpu} GPUs of {gpu_milli} milli each; a share below 1000 needs num_gpu = 1")]
    FractionalMultiGpu { line: usize, num_gpu: u32, gpu_milli: u32 },
    #[error("line {line}: node `{name}` has {gpus} GPUs but no model")]
    MissingModel { line: usize, name: String, gpus: u32 },
    #[error("line {line}: name `{name}` already appears on line {first}")]
    DuplicateName { line: usize, name: String, first: usize },
}

/// The header's column positions and the data lines that follow it.
struct Table<'a> {
    columns: Vec<&'a str>,
    rows: Vec<(usize, Vec<&'a str>)>,
}

impl<'a> Table<'a> {
    fn parse(text: &'a str) -> Result<Table<'a>, TraceError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let (_, header) = lines.find(|(_, l)| !l.trim().is_empty()).ok_or(TraceError::Empty)?;
        let columns: Vec<&str> = header.split(',').map(str::trim).collect();
        let mut rows = Vec::new();
        for (line, l) in lines {
            // Blank lines (a trailing newline, an editor's empty last line) carry no row.
            if l.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            if fields.len() != columns.len() {
                return Err(TraceError::FieldCount { line, expected: columns.len(), found: fields.len() });
            }
            rows.push((line, fields));
        }
        Ok(Table { columns, rows })
    }

    fn required(&self, name: &'static str) -> Result<usize, TraceError> {
        self.optional(name).ok_or(TraceError::MissingColumn(name))
    }

    fn optional(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| *c == name)
    }
}

fn integer(line: usize, column: &'static str, value: &str) -> Result<u64, TraceError> {
    value.parse::<u64>().map_err(|_| TraceError::BadInteger { line, column, value: value.to_string() })
}

fn small_integer(line: usize, column: &'static str, value: &str) -> Result<u32, TraceError> {
    u32::try_from(integer(line, column, value)?).map_err(|_| TraceError::BadInteger {
        line,
        column,
        value: value.to_string(),
    })
}

fn name(line: usize, column: &'static str, value: &str) -> Result<String, TraceError> {
    if value.is_empty() {
        return Err(TraceError::EmptyField { line, column });
    }
    Ok(value.to_string())
}

fn check_unique<'r>(names: impl Iterator<Item = (usize, &'r str)>) -> Result<(), TraceError> {
    let mut seen = std::collections::HashMap::new();
    for (line, n) in names {
        if let Some(&first) = seen.get(n) {
            return Err(TraceError::DuplicateName { line, name: n.to_string(), first });
        }
        seen.insert(n, line);
    }
    Ok(())
}

/// Parses the node list: columns `sn,cpu_milli,memory_mib,gpu,model` in any order.
pub fn parse_nodes(text: &str) -> Result<Vec<NodeRow>, TraceError> {
    let t = Table::parse(text)?;
    let (sn, cpu, mem, gpu, model) = (
        t.required("sn")?,
        t.required("cpu_milli")?,
        t.required("memory_mib")?,
        t.required("gpu")?,
        t.required("model")?,
    );
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, f) in &t.rows {
        let line = *line;
        let row = NodeRow {
            line,
            name: name(line, "sn", f[sn])?,
            cpu_milli: integer(line, "cpu_milli", f[cpu])?,
            memory_mib: integer(line, "memory_mib", f[mem])?,
            gpus: small_integer(line, "gpu", f[gpu])?,
            model: f[model].to_string(),
        };
        if row.gpus > 0 && row.model.is_empty() {
            return Err(TraceError::MissingModel { line, name: row.name, gpus: row.gpus });
        }
        out.push(row);
    }
    check_unique(out.iter().map(|r| (r.line, r.name.as_str())))?;
    Ok(out)
}

/// Parses a pod list, full or five-column layout (see the module doc).
pub fn parse_pods(text: &str) -> Result<Vec<PodRow>, TraceError> {
    let t = Table::parse(text)?;
    let (name_col, cpu, mem, num, milli) = (
        t.required("name")?,
        t.required("cpu_milli")?,
        t.required("memory_mib")?,
        t.required("num_gpu")?,
        t.required("gpu_milli")?,
    );
    let spec = t.optional("gpu_spec");
    let text_col = |f: &[&str], c: Option<usize>| c.map(|c| f[c]).filter(|v| !v.is_empty()).map(str::to_string);
    let (qos, phase) = (t.optional("qos"), t.optional("pod_phase"));
    let times = [
        ("creation_time", t.optional("creation_time")),
        ("deletion_time", t.optional("deletion_time")),
        ("scheduled_time", t.optional("scheduled_time")),
    ];
    let mut out = Vec::with_capacity(t.rows.len());
    for (line, f) in &t.rows {
        let line = *line;
        let mut num_gpu = small_integer(line, "num_gpu", f[num])?;
        // The converter writes a per-GPU share of at most one GPU (README §1.1).
        let mut gpu_milli = small_integer(line, "gpu_milli", f[milli])?.min(MILLI_PER_GPU);
        if num_gpu == 0 || gpu_milli == 0 {
            // No GPU annotation is written, or a zero share: the pod skips every GPU check.
            num_gpu = 0;
            gpu_milli = 0;
        }
        if num_gpu > 1 && gpu_milli < MILLI_PER_GPU {
            return Err(TraceError::FractionalMultiGpu { line, num_gpu, gpu_milli });
        }
        let mut t3 = [None; 3];
        for (slot, (column, c)) in t3.iter_mut().zip(times) {
            if let Some(v) = c.map(|c| f[c]).filter(|v| !v.is_empty()) {
                *slot = Some(integer(line, column, v)?);
            }
        }
        out.push(PodRow {
            line,
            name: name(line, "name", f[name_col])?,
            cpu_milli: integer(line, "cpu_milli", f[cpu])?,
            memory_mib: integer(line, "memory_mib", f[mem])?,
            num_gpu,
            gpu_milli,
            gpu_spec: spec.map(|c| f[c].to_string()).unwrap_or_default(),
            qos: text_col(f, qos),
            pod_phase: text_col(f, phase),
            creation_time: t3[0],
            deletion_time: t3[1],
            scheduled_time: t3[2],
        });
    }
    check_unique(out.iter().map(|r| (r.line, r.name.as_str())))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n\
        p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n\
        p1,6000,12288,1,460,V100M16|V100M32,LS,Running,427061,,427061\n\
        p2,8000,30517,0,0,,BE,Running,1,2,3\n";

    #[test]
    fn full_layout_parses_with_optional_columns() {
        let pods = parse_pods(FULL).unwrap();
        assert_eq!(pods.len(), 3);
        assert_eq!(pods[1].line, 3);
        assert_eq!(pods[1].gpu_milli, 460);
        assert_eq!(pods[1].allowed_models(), vec!["V100M16".to_string(), "V100M32".to_string()]);
        assert_eq!(pods[1].deletion_time, None);
        assert_eq!(pods[0].qos.as_deref(), Some("LS"));
        assert_eq!(pods[2].total_gpu_milli(), 0);
    }

    #[test]
    fn five_column_layout_parses() {
        let pods = parse_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\r\na,1,2,8,1000\r\n\r\n").unwrap();
        assert_eq!(pods[0].total_gpu_milli(), 8000);
        assert_eq!(pods[0].gpu_spec, "");
        assert_eq!(pods[0].creation_time, None);
    }

    #[test]
    fn gpu_milli_above_1000_is_clamped_and_zero_shares_are_cpu_only() {
        let pods =
            parse_pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,2,1,1500\nb,1,2,2,0\nc,1,2,0,500\n").unwrap();
        assert_eq!((pods[0].num_gpu, pods[0].gpu_milli), (1, 1000));
        assert_eq!((pods[1].num_gpu, pods[1].gpu_milli), (0, 0));
        assert_eq!((pods[2].num_gpu, pods[2].gpu_milli), (0, 0));
    }

    #[test]
    fn errors_name_the_line() {
        let h = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
        assert_eq!(parse_pods(""), Err(TraceError::Empty));
        assert_eq!(parse_pods("name,cpu_milli,num_gpu,gpu_milli\n"), Err(TraceError::MissingColumn("memory_mib")));
        assert_eq!(
            parse_pods(&format!("{h}a,1,2,1,100\nb,1,2,1\n")),
            Err(TraceError::FieldCount { line: 3, expected: 5, found: 4 })
        );
        let err = parse_pods(&format!("{h}a,1,2,1,100\nb,1,2x,1,100\n")).unwrap_err();
        assert_eq!(err, TraceError::BadInteger { line: 3, column: "memory_mib", value: "2x".into() });
        assert_eq!(err.to_string(), "line 3: column `memory_mib`: `2x` is not a non-negative integer");
        assert_eq!(
            parse_pods(&format!("{h}a,-1,2,1,100\n")),
            Err(TraceError::BadInteger { line: 2, column: "cpu_milli", value: "-1".into() })
        );
        assert_eq!(
            parse_pods(&format!("{h}a,1,2,2,500\n")),
            Err(TraceError::FractionalMultiGpu { line: 2, num_gpu: 2, gpu_milli: 500 })
        );
        assert_eq!(
            parse_pods(&format!("{h}a,1,2,1,100\n\na,1,2,1,100\n")),
            Err(TraceError::DuplicateName { line: 4, name: "a".into(), first: 2 })
        );
        assert_eq!(parse_pods(&format!("{h},1,2,1,100\n")), Err(TraceError::EmptyField { line: 2, column: "name" }));
    }

    #[test]
    fn nodes_parse_and_complain() {
        let h = "sn,cpu_milli,memory_mib,gpu,model\n";
        let nodes = parse_nodes(&format!("{h}n0,64000,262144,2,P100\nn1,96000,1,0,\n")).unwrap();
        assert_eq!(
            nodes[0],
            NodeRow { line: 2, name: "n0".into(), cpu_milli: 64000, memory_mib: 262144, gpus: 2, model: "P100".into() }
        );
        assert_eq!(nodes[1].gpus, 0);
        assert_eq!(
            parse_nodes(&format!("{h}n0,64000,262144,2,\n")),
            Err(TraceError::MissingModel { line: 2, name: "n0".into(), gpus: 2 })
        );
        assert_eq!(
            parse_nodes(&format!("{h}n0,64000,262144,99999999999,T4\n")),
            Err(TraceError::BadInteger { line: 2, column: "gpu", value: "99999999999".into() })
        );
        assert_eq!(parse_nodes("sn,cpu_milli,memory_mib,model\n"), Err(TraceError::MissingColumn("gpu")));
    }
}
