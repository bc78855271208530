//! The CLI's integration tests, one binary: the built `grus` against a real grus-api (`cli`,
//! `oidc_login`), `grus dev` as a process (`dev`), and the job YAML examples (`job_yaml`).

mod cli;
mod dev;
mod job_yaml;
mod oidc_login;
mod services;
mod support;
