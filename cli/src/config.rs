//! Where `grus` finds its server and credentials: flags, environment, the config file.
//!
//! Precedence, highest first: `--server` / `--token` / `--dev-user` flags, then `GRUS_SERVER` /
//! `GRUS_TOKEN` / `GRUS_DEV_USER` (clap merges these two), then the config file
//! (`$GRUS_CONFIG`, else `$XDG_CONFIG_HOME/grus/config.toml`, else
//! `~/.config/grus/config.toml`), then the default server `http://127.0.0.1:8080`.
//!
//! Credentials, the first that applies wins ([`resolve`] is the rule, pure and unit-tested):
//! 1. a token from the flag or env; or the config file's token, only when the resolved server
//!    is the server it was stored for (a token for production is never sent to `grus dev`);
//! 2. a dev user from the flag, env or config file: the `X-Grus-Dev-User` header, which only a
//!    server started with `--dev` (e.g. by `grus dev`) accepts;
//! 3. with no token and no dev user, a server on a loopback address (`localhost`, 127.0.0.0/8,
//!    `::1`) gets the dev user `admin`: `grus dev` needs no login step on the same machine;
//! 4. otherwise no credentials (the API answers UNAUTHENTICATED and `grus` says to log in).
//!
//! The file is written with mode 0600 (it holds secrets), into a directory with mode 0700.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use url::{Host, Url};

use crate::exit::{CliError, CliResult};

pub const DEFAULT_SERVER: &str = "http://127.0.0.1:8080";
/// The dev identity used against a loopback server when nothing else is configured.
pub const DEFAULT_DEV_USER: &str = "admin";

/// The config file, as stored. Unknown keys are refused so that a typo does not silently
/// fall back to a default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The server's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Bearer token for `server`: an API token (`grus_...`) or an OIDC token from `grus login`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// OIDC refresh token that renews `token` when it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When `token` expires (Unix seconds); absent for API tokens (the server knows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_expires_at: Option<i64>,
    /// Identity sent as `X-Grus-Dev-User` to a `--dev` server when there is no token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev_user: Option<String>,
    /// The identity provider `grus login` uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<OidcSettings>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcSettings {
    pub issuer: String,
    pub client_id: String,
    /// Scopes besides `openid`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// The config file's path: `$GRUS_CONFIG` (or `--config`), else the XDG location.
pub fn default_path() -> CliResult<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let base = match xdg {
        Some(dir) => dir,
        None => {
            let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or_else(|| {
                CliError::generic("cannot find the config file: neither XDG_CONFIG_HOME nor HOME is set (use --config)")
            })?;
            PathBuf::from(home).join(".config")
        }
    };
    Ok(base.join("grus").join("config.toml"))
}

/// Reads the config file; a missing file is an empty config.
pub fn load(path: &Path) -> CliResult<ConfigFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
        Err(e) => return Err(CliError::generic(format!("cannot read {}: {e}", path.display()))),
    };
    toml::from_str(&text).map_err(|e| CliError::usage(format!("invalid config file {}: {e}", path.display())))
}

/// Writes the config file atomically with mode 0600 (a temporary file renamed over it).
pub fn save(path: &Path, config: &ConfigFile) -> CliResult<()> {
    let text = toml::to_string(config).map_err(|e| CliError::generic(format!("cannot encode the config file: {e}")))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let io = |what: &str, e: std::io::Error| CliError::generic(format!("cannot {what} {}: {e}", dir.display()));
    create_private_dir(dir).map_err(|e| io("create", e))?;
    let tmp = dir.join(format!(".config.toml.{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::generic(format!("cannot write {}: {e}", path.display()))
    })
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// What flags and environment gave (clap has already merged the two).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub server: Option<String>,
    pub token: Option<String>,
    pub dev_user: Option<String>,
}

/// How requests authenticate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// `X-Grus-Dev-User: <name>`; `implicit` when chosen by the loopback rule, not configured.
    DevUser {
        name: String,
        implicit: bool,
    },
    None,
}

/// The settings every command receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub server: Url,
    pub auth: Auth,
    /// The config file's token was used (so a refresh may be saved back).
    pub token_from_file: bool,
}

/// Parses a server URL: http or https with a host; the path is kept as the base.
pub fn parse_server(raw: &str) -> CliResult<Url> {
    let mut url = Url::parse(raw.trim())
        .map_err(|e| CliError::usage(format!("invalid server URL {raw:?}: {e} (expected http://host:port)")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(CliError::usage(format!("invalid server URL {raw:?}: expected http:// or https:// and a host")));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

/// Whether the URL's host is a loopback address.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// Applies the precedence and credential rules of this module's documentation.
pub fn resolve(overrides: &Overrides, file: &ConfigFile) -> CliResult<Settings> {
    let file_server = non_empty(&file.server).map(parse_server).transpose()?;
    let server = match non_empty(&overrides.server) {
        Some(raw) => parse_server(raw)?,
        None => file_server.clone().unwrap_or_else(|| parse_server(DEFAULT_SERVER).expect("the default URL parses")),
    };
    if let Some(token) = non_empty(&overrides.token) {
        return Ok(Settings { server, auth: Auth::Bearer(token.to_owned()), token_from_file: false });
    }
    let stored_for = file_server.unwrap_or_else(|| parse_server(DEFAULT_SERVER).expect("the default URL parses"));
    if let Some(token) = non_empty(&file.token).filter(|_| stored_for == server) {
        return Ok(Settings { server, auth: Auth::Bearer(token.to_owned()), token_from_file: true });
    }
    let auth = match non_empty(&overrides.dev_user).or(non_empty(&file.dev_user)) {
        Some(name) => Auth::DevUser { name: name.to_owned(), implicit: false },
        None if is_loopback(&server) => Auth::DevUser { name: DEFAULT_DEV_USER.to_owned(), implicit: true },
        None => Auth::None,
    };
    Ok(Settings { server, auth, token_from_file: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Exit;

    fn over(server: Option<&str>, token: Option<&str>, dev_user: Option<&str>) -> Overrides {
        Overrides { server: server.map(Into::into), token: token.map(Into::into), dev_user: dev_user.map(Into::into) }
    }

    #[test]
    fn flag_beats_file_beats_default() {
        let file = ConfigFile { server: Some("https://grus.example.com".into()), ..Default::default() };
        let s = resolve(&over(Some("http://10.0.0.1:9000"), None, None), &file).unwrap();
        assert_eq!(s.server.as_str(), "http://10.0.0.1:9000/");
        let s = resolve(&over(None, None, None), &file).unwrap();
        assert_eq!(s.server.as_str(), "https://grus.example.com/");
        let s = resolve(&over(None, None, None), &ConfigFile::default()).unwrap();
        assert_eq!(s.server.as_str(), "http://127.0.0.1:8080/");
    }

    #[test]
    fn loopback_without_credentials_is_the_dev_admin() {
        let s = resolve(&over(None, None, None), &ConfigFile::default()).unwrap();
        assert_eq!(s.auth, Auth::DevUser { name: "admin".into(), implicit: true });
        let s = resolve(&over(Some("http://localhost:8080"), None, None), &ConfigFile::default()).unwrap();
        assert!(matches!(s.auth, Auth::DevUser { implicit: true, .. }));
        let s = resolve(&over(Some("http://[::1]:8080"), None, None), &ConfigFile::default()).unwrap();
        assert!(matches!(s.auth, Auth::DevUser { implicit: true, .. }));
        let s = resolve(&over(Some("https://grus.example.com"), None, None), &ConfigFile::default()).unwrap();
        assert_eq!(s.auth, Auth::None, "no dev identity is ever sent to a remote server by default");
    }

    #[test]
    fn token_beats_dev_user() {
        let s = resolve(&over(None, Some("grus_abc"), Some("alice")), &ConfigFile::default()).unwrap();
        assert_eq!(s.auth, Auth::Bearer("grus_abc".into()));
        let file = ConfigFile { dev_user: Some("bob".into()), ..Default::default() };
        let s = resolve(&over(None, None, Some("alice")), &file).unwrap();
        assert_eq!(s.auth, Auth::DevUser { name: "alice".into(), implicit: false }, "env beats the file");
        let s = resolve(&over(None, None, None), &file).unwrap();
        assert_eq!(s.auth, Auth::DevUser { name: "bob".into(), implicit: false });
    }

    #[test]
    fn the_files_token_only_goes_to_its_server() {
        let file = ConfigFile {
            server: Some("https://grus.example.com".into()),
            token: Some("grus_prod".into()),
            ..Default::default()
        };
        let s = resolve(&over(None, None, None), &file).unwrap();
        assert_eq!(s.auth, Auth::Bearer("grus_prod".into()));
        assert!(s.token_from_file);
        let s = resolve(&over(Some("https://grus.example.com/"), None, None), &file).unwrap();
        assert_eq!(s.auth, Auth::Bearer("grus_prod".into()), "the same server, spelled with a slash");
        let s = resolve(&over(Some("http://127.0.0.1:8080"), None, None), &file).unwrap();
        assert!(matches!(s.auth, Auth::DevUser { .. }), "not sent to another server: {:?}", s.auth);
        // A file token without a server belongs to the default server.
        let file = ConfigFile { token: Some("grus_local".into()), ..Default::default() };
        assert_eq!(resolve(&over(None, None, None), &file).unwrap().auth, Auth::Bearer("grus_local".into()));
    }

    #[test]
    fn empty_values_are_absent() {
        let s = resolve(&over(Some(""), Some(" "), Some("")), &ConfigFile::default()).unwrap();
        assert_eq!(s.server.as_str(), "http://127.0.0.1:8080/");
        assert!(matches!(s.auth, Auth::DevUser { implicit: true, .. }));
    }

    #[test]
    fn bad_server_urls_are_usage_errors() {
        for bad in ["127.0.0.1:8080", "ftp://x", "http://", "not a url"] {
            let err = resolve(&over(Some(bad), None, None), &ConfigFile::default()).unwrap_err();
            assert_eq!(err.exit, Exit::Usage, "{bad}");
        }
        assert_eq!(parse_server("http://h:1/grus").unwrap().as_str(), "http://h:1/grus/");
    }

    #[test]
    fn file_round_trips_with_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/grus/config.toml");
        assert_eq!(load(&path).unwrap(), ConfigFile::default(), "a missing file is empty");
        let config = ConfigFile {
            server: Some("https://grus.example.com".into()),
            token: Some("grus_x".into()),
            oidc: Some(OidcSettings { issuer: "https://idp".into(), client_id: "grus-cli".into(), scopes: vec![] }),
            ..Default::default()
        };
        save(&path, &config).unwrap();
        assert_eq!(load(&path).unwrap(), config);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, "servr = \"x\"\n").unwrap();
        assert_eq!(load(&path).unwrap_err().exit, Exit::Usage, "unknown keys are refused");
    }
}
