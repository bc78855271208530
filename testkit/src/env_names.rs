//! The environment variables of the workspace's binaries (`grus`, `grus-api`, `grus-agent` and
//! the benches), read from their clap definitions in the sources (`#[arg(.., env = "..")]` in
//! every crate's `src/`), and the one way they are named:
//!
//! - `DATABASE_URL` and `REDIS_URL` for the database and Redis, `NODE_NAME` for the node the
//!   Kubernetes downward API names ([`UNPREFIXED`]), `GRUS_*` for everything else;
//! - one setting, one name: a `--flag` that several binaries (or subcommands) take reads the
//!   same variable in all of them, except the flags of [`DIFFERENT_SETTINGS`].
//!
//! Read from the sources rather than from the built binaries so that the check sees every
//! binary at once without building any. Comments and string literals are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::module_graph::workspace_crate_roots;

/// The names allowed without the `GRUS_` prefix.
pub const UNPREFIXED: &[&str] = &["DATABASE_URL", "REDIS_URL", "NODE_NAME"];

/// Flags that name different settings in different binaries, each with its own variable:
/// (flag without `--`, its variables, why they differ).
pub const DIFFERENT_SETTINGS: &[(&str, &[&str], &str)] = &[
    ("listen", &["GRUS_LISTEN", "GRUS_DEV_LISTEN"], "`grus dev`'s address is kept apart from a real grus-api's"),
    (
        "state-dir",
        &["GRUS_STATE_DIR", "GRUS_DEV_STATE_DIR"],
        "`grus dev`'s is the root of all its simulated agents' state directories, not one agent's",
    ),
    (
        "database-url",
        &["DATABASE_URL", "GRUS_BENCH_DATABASE_URL"],
        "grus-allocbench's is a PostgreSQL server, on which it creates a scratch database",
    ),
];

/// One argument with an environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvArg {
    /// `file:line` of its attribute.
    pub at: String,
    /// Its long flag without `--` (`None`: positional or short only).
    pub long: Option<String>,
    pub env: String,
}

/// Every argument with an environment variable in the `src/` of the workspace's crates.
pub fn workspace_env_args(workspace: &Path) -> Result<Vec<EnvArg>, String> {
    let roots = workspace_crate_roots(workspace).map_err(|e| e.to_string())?;
    let mut dirs = BTreeSet::new();
    for root in &roots {
        let Ok(relative) = root.strip_prefix(workspace) else { continue };
        let parts: Vec<_> = relative.components().collect();
        if let Some(i) = parts.iter().position(|c| c.as_os_str() == "src") {
            dirs.insert(parts[..=i].iter().collect::<PathBuf>());
        }
    }
    let mut files = Vec::new();
    for dir in &dirs {
        rust_files(&workspace.join(dir), &mut files).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut args = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let name = file.strip_prefix(workspace).unwrap_or(&file).display().to_string();
        args.extend(env_args(&name, &text)?);
    }
    Ok(args)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The arguments with an environment variable that `text` (the source file `file`) defines in
/// `#[arg(..)]` (or `#[clap(..)]`) attributes: `long` and `env` literal or taken from the field.
pub fn env_args(file: &str, text: &str) -> Result<Vec<EnvArg>, String> {
    let code = code_only(text);
    let mut found = Vec::new();
    for opener in ["#[arg(", "#[clap("] {
        let mut from = 0;
        while let Some(i) = find(&code, opener.as_bytes(), from) {
            from = i + opener.len();
            let at = format!("{file}:{}", 1 + text[..i].matches('\n').count());
            let open = i + opener.len() - 1;
            let close = matching(&code, open).ok_or_else(|| format!("{at}: unclosed {opener}"))?;
            let (mut long, mut env) = (None, None);
            // Read in `code` (no comments), the literals' contents from `text`.
            for (start, end) in top_level_items(&code, open + 1, close) {
                let start = skip_space(&code, start);
                let end = (start..end).rev().find(|&j| !code[j].is_ascii_whitespace()).map_or(start, |j| j + 1);
                let key_end = (start..end).find(|&j| !is_ident(code[j])).unwrap_or(end);
                let key = &text[start..key_end];
                if key != "long" && key != "env" {
                    continue;
                }
                let eq = skip_space(&code, key_end);
                let value = if eq >= end {
                    Value::FromField
                } else if code[eq] != b'=' {
                    continue;
                } else {
                    let v = skip_space(&code, eq + 1);
                    if end >= v + 2 && code[v] == b'"' && code[end - 1] == b'"' {
                        Value::Literal(text[v + 1..end - 1].to_owned())
                    } else {
                        return Err(format!("{at}: `{}`: write the name as a string literal", &text[start..end]));
                    }
                };
                if key == "long" {
                    long = Some(value);
                } else {
                    env = Some(value);
                }
            }
            let Some(env) = env else { continue };
            let field =
                || field_after(&code, text, close + 1).ok_or_else(|| format!("{at}: no field after {opener}..)]"));
            let long = match long {
                None => None,
                Some(Value::Literal(l)) => Some(l),
                Some(Value::FromField) => Some(field()?.replace('_', "-")),
            };
            let env = match env {
                Value::Literal(e) => e,
                Value::FromField => field()?.to_ascii_uppercase(),
            };
            found.push(EnvArg { at, long, env });
        }
    }
    Ok(found)
}

enum Value {
    Literal(String),
    FromField,
}

/// Whatever breaks the naming rule in `args`, one line each (empty: none).
pub fn naming_violations(args: &[EnvArg]) -> Vec<String> {
    let mut report = Vec::new();
    for a in args {
        let shape =
            !a.env.is_empty() && a.env.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !shape || !(a.env.starts_with("GRUS_") || UNPREFIXED.contains(&a.env.as_str())) {
            report.push(format!(
                "{}: {} is not GRUS_<UPPER_SNAKE> (only {} go without the prefix)",
                a.at,
                a.env,
                UNPREFIXED.join(", ")
            ));
        }
    }
    let mut by_flag: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for a in args {
        if let Some(long) = &a.long {
            by_flag.entry(long.as_str()).or_default().entry(a.env.as_str()).or_default().push(a.at.as_str());
        }
    }
    for (&flag, names) in &by_flag {
        let seen: BTreeSet<&str> = names.keys().copied().collect();
        match DIFFERENT_SETTINGS.iter().find(|(f, _, _)| *f == flag) {
            Some((_, listed, _)) => {
                let listed: BTreeSet<&str> = listed.iter().copied().collect();
                let unlisted: Vec<String> =
                    seen.difference(&listed).map(|env| format!("{env} at {}", names[env].join(", "))).collect();
                let unread: Vec<&str> = listed.difference(&seen).copied().collect();
                if !unlisted.is_empty() {
                    report.push(format!(
                        "--{flag} reads {} besides the variables of its different settings (DIFFERENT_SETTINGS: \
                         {listed:?}): one setting, one name",
                        unlisted.join("; ")
                    ));
                }
                if !unread.is_empty() {
                    report.push(format!("--{flag}: no binary reads {unread:?}: remove it from DIFFERENT_SETTINGS"));
                }
            }
            None if seen.len() > 1 => {
                let places: Vec<String> = names.iter().map(|(env, at)| format!("{env} at {}", at.join(", "))).collect();
                report.push(format!(
                    "--{flag} reads different variables: {} (one setting, one name; a different setting belongs in \
                     DIFFERENT_SETTINGS)",
                    places.join("; ")
                ));
            }
            None => {}
        }
    }
    for &(flag, _, _) in DIFFERENT_SETTINGS {
        if !by_flag.contains_key(flag) {
            report.push(format!("--{flag}: DIFFERENT_SETTINGS lists a flag no binary reads: remove the entry"));
        }
    }
    report
}

/// `text` with comments and the contents of string and character literals blanked out (same
/// length, newlines kept), so that what looks like code there is not taken for code.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |i: usize| is_ident(b[i]);
    let mut i = 0;
    while i < b.len() {
        let next = b.get(i + 1).copied();
        match b[i] {
            b'/' if next == Some(b'/') => {
                let end = find(b, b"\n", i).unwrap_or(b.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if next == Some(b'*') => {
                let (mut j, mut depth) = (i + 2, 1);
                while j < b.len() && depth > 0 {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j);
                i = j + 1;
            }
            b'r' if (i == 0 || !ident(i - 1) || (b[i - 1] == b'b' && (i == 1 || !ident(i - 2))))
                && matches!(next, Some(b'"' | b'#')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let mut closing = vec![b'"'];
                closing.extend(std::iter::repeat_n(b'#', hashes));
                let start = i + 2 + hashes;
                let end = find(b, &closing, start).unwrap_or(b.len());
                blank(&mut out, start, end);
                i = end + closing.len();
            }
            b'\'' => {
                if next == Some(b'\\') {
                    let end = find(b, b"'", i + 3).unwrap_or(b.len());
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                } else {
                    let len = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                    if len > 0 && b.get(i + 1 + len) == Some(&b'\'') {
                        blank(&mut out, i + 1, i + 1 + len);
                        i += 2 + len;
                    } else {
                        i += 1; // a lifetime
                    }
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn skip_space(code: &[u8], mut i: usize) -> usize {
    while code.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index of the bracket closing the one at `open` (`None`: no bracket there, or unclosed).
fn matching(code: &[u8], open: usize) -> Option<usize> {
    if !matches!(code.get(open), Some(b'(' | b'[' | b'{')) {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in code.iter().enumerate().skip(open) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The spans of the comma-separated items of `code[start..end]` (not splitting inside brackets).
fn top_level_items(code: &[u8], start: usize, end: usize) -> Vec<(usize, usize)> {
    let (mut items, mut depth, mut from) = (Vec::new(), 0usize, start);
    for (i, &c) in code.iter().enumerate().take(end).skip(start) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                items.push((from, i));
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push((from, end));
    items
}

/// The name of the field an attribute ending at `from` (its `)`) belongs to, past further
/// attributes, doc comments and the visibility.
fn field_after(code: &[u8], text: &str, from: usize) -> Option<String> {
    let skip_space = |i: usize| skip_space(code, i);
    let mut i = skip_space(from);
    if code.get(i) != Some(&b']') {
        return None;
    }
    i = skip_space(i + 1);
    while code.get(i) == Some(&b'#') {
        i = skip_space(matching(code, skip_space(i + 1))? + 1);
    }
    let word = move |i: usize| {
        let end = (i..code.len()).find(|&j| !(is_ident(code[j]) || code[j] == b'#'));
        (&text[i..end.unwrap_or(code.len())], end.unwrap_or(code.len()))
    };
    let (mut name, mut end) = word(i);
    if name == "pub" {
        i = skip_space(end);
        if code.get(i) == Some(&b'(') {
            i = skip_space(matching(code, i)? + 1);
        }
        (name, end) = word(i);
    }
    let after = skip_space(end);
    let name = name.strip_prefix("r#").unwrap_or(name);
    let is_field = !name.is_empty() && code.get(after) == Some(&b':') && code.get(after + 1) != Some(&b':');
    is_field.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(at: &str, long: &str, env: &str) -> EnvArg {
        EnvArg { at: at.into(), long: Some(long.into()), env: env.into() }
    }

    #[test]
    fn reads_long_and_env_from_the_attribute_or_the_field() {
        let src = r#####"
// #[arg(long, env = "IN_A_COMMENT")]
/* #[arg(long, env = "IN_A_BLOCK") /* nested */ ] */
const S: &str = "#[arg(long, env = \"IN_A_STRING\")]";
const R: &str = r#"#[arg(long, env = "IN_A_RAW_STRING")]"#;
const C: char = '"';
struct A<'a> {
    /// Doc with `#[arg(long, env = "IN_A_DOC")]` and a paren (.
    #[arg(long, env = "GRUS_LISTEN", default_value = "a,b)")]
    pub listen: &'a str,
    #[arg(long = "node-pool", env = "GRUS_NODE_POOLS", value_delimiter = ';',
          value_parser = clap::value_parser!(u8).range(0..=100))]
    /// Doc between.
    #[allow(dead_code)]
    pub(crate) node_pools: Vec<u8>,
    #[arg(short, env)]
    r#type: String,
    #[arg(long)]
    no_env: bool,
    #[clap(long, env = "GRUS_OLD_STYLE")]
    old_style: bool,
}
"#####;
        let args = env_args("x.rs", src).unwrap();
        assert_eq!(
            args,
            [
                arg("x.rs:9", "listen", "GRUS_LISTEN"),
                arg("x.rs:11", "node-pool", "GRUS_NODE_POOLS"),
                EnvArg { at: "x.rs:16".into(), long: None, env: "TYPE".into() },
                arg("x.rs:20", "old-style", "GRUS_OLD_STYLE"),
            ]
        );
        let err = env_args("y.rs", "struct A {\n    #[arg(long, env = NAME)]\n    a: u8,\n}").unwrap_err();
        assert!(err.starts_with("y.rs:2: `env = NAME`"), "{err}");
    }

    #[test]
    fn flags_a_name_without_the_prefix_and_a_setting_with_two_names() {
        let ok = [
            arg("api:1", "database-url", "DATABASE_URL"),
            arg("dev:1", "database-url", "DATABASE_URL"),
            arg("bench:1", "database-url", "GRUS_BENCH_DATABASE_URL"),
            arg("api:2", "listen", "GRUS_LISTEN"),
            arg("dev:2", "listen", "GRUS_DEV_LISTEN"),
            arg("agent:1", "state-dir", "GRUS_STATE_DIR"),
            arg("dev:3", "state-dir", "GRUS_DEV_STATE_DIR"),
            arg("agent:2", "node", "NODE_NAME"),
        ];
        assert_eq!(naming_violations(&ok), Vec::<String>::new());

        let mut bad = ok.to_vec();
        bad.push(arg("api:3", "redis-url", "GRUS_REDIS_URL"));
        bad.push(arg("dev:4", "redis-url", "REDIS_URL"));
        bad.push(arg("agent:3", "metrics", "METRICS_ADDR"));
        bad.push(arg("agent:4", "lower", "GRUS_lower"));
        let report = naming_violations(&bad);
        assert_eq!(report.len(), 3, "{report:#?}");
        assert!(report[0].starts_with("agent:3: METRICS_ADDR is not GRUS_"), "{report:#?}");
        assert!(report[1].starts_with("agent:4: GRUS_lower"), "{report:#?}");
        assert!(
            report[2].starts_with("--redis-url reads different variables: GRUS_REDIS_URL at api:3; REDIS_URL at dev:4")
        );

        let stale: Vec<EnvArg> = ok.iter().filter(|a| a.env != "GRUS_DEV_LISTEN").cloned().collect();
        let report = naming_violations(&stale);
        assert_eq!(report.len(), 1, "{report:#?}");
        assert!(report[0].starts_with("--listen: no binary reads [\"GRUS_DEV_LISTEN\"]"), "{report:#?}");

        let mut third = ok.to_vec();
        third.push(arg("load:1", "database-url", "GRUS_DATABASE_URL"));
        let report = naming_violations(&third);
        assert_eq!(report.len(), 1, "{report:#?}");
        assert!(report[0].starts_with("--database-url reads GRUS_DATABASE_URL at load:1 besides"), "{report:#?}");
    }

    /// The check this module exists for, over the real sources: every binary names its
    /// environment variables the one way, and one setting has one name in all of them.
    #[test]
    fn every_binary_names_its_environment_variables_one_way() {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
        let args = workspace_env_args(workspace).unwrap();
        // The scan reaches each binary's flags (else a pass would prove nothing).
        for (file, env) in [
            ("api/src/config.rs", "DATABASE_URL"),
            ("api/src/config.rs", "REDIS_URL"),
            ("cli/src/cli.rs", "GRUS_SERVER"),
            ("cli/src/dev/mod.rs", "DATABASE_URL"),
            ("cluster-agent/src/main.rs", "REDIS_URL"),
            ("cluster-agent/src/main.rs", "GRUS_EVICTION_GRACE"),
            ("api/src/config.rs", "GRUS_EVICTION_GRACE"),
        ] {
            assert!(
                args.iter().any(|a| a.at.starts_with(file) && a.env == env),
                "{env} not found in {file}: {args:#?}"
            );
        }
        let report = naming_violations(&args);
        assert!(report.is_empty(), "environment variables named another way:\n{}", report.join("\n"));
    }
}
