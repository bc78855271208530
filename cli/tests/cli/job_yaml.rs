//! The job files in `examples/jobs/` read into exactly the `JobInput` (or the field errors)
//! stored next to them. The portal's Vitest test (`portal/src/jobs/examples.test.ts`) checks
//! the same files against the same expectations, so the CLI and the portal's YAML editor
//! cannot drift apart.

use std::path::{Path, PathBuf};

use grus::jobspec::{self, FieldError};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/jobs")
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

fn sibling(yaml: &Path, suffix: &str) -> String {
    let stem = yaml.file_stem().expect("stem").to_string_lossy();
    let path = yaml.with_file_name(format!("{stem}{suffix}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn valid_examples_map_to_their_job_input() {
    let files = yaml_files(&examples());
    assert!(files.len() >= 3, "examples missing: {files:?}");
    for yaml in files {
        let text = std::fs::read_to_string(&yaml).expect("read example");
        let input = jobspec::parse(&text).unwrap_or_else(|e| panic!("{}: {e:?}", yaml.display()));
        let expected: serde_json::Value = serde_json::from_str(&sibling(&yaml, ".input.json")).expect("json");
        assert_eq!(serde_json::to_value(&input).expect("serialize"), expected, "{}", yaml.display());
    }
}

#[test]
fn invalid_examples_give_their_field_errors() {
    let files = yaml_files(&examples().join("invalid"));
    assert!(files.len() >= 2, "invalid examples missing: {files:?}");
    for yaml in files {
        let text = std::fs::read_to_string(&yaml).expect("read example");
        let errors = jobspec::parse(&text).expect_err(&yaml.display().to_string());
        let expected: Vec<FieldError> = serde_json::from_str(&sibling(&yaml, ".errors.json")).expect("json");
        assert_eq!(errors, expected, "{}", yaml.display());
    }
}
