//! Serving the portal's built files (`portal/dist`) next to the API.
//!
//! Client-side routes (`/jobs/42`, `/billing?period=…`) have no file on disk, so every GET
//! that matches no API route and no file gets `index.html` (the SPA fallback) and the
//! portal's router takes over. Asset requests under `/assets/` are the exception: a missing
//! hashed bundle must be a 404, not HTML that the browser would try to run as JavaScript.

use std::path::Path;

use axum::http::StatusCode;
use axum::routing::get_service;
use axum::Router;
use tower_http::services::{ServeDir, ServeFile};

/// Adds the portal to `api` as the fallback for every path the API does not route.
pub fn with_portal(api: Router, dir: &Path) -> Router {
    let index = ServeFile::new(dir.join("index.html"));
    let assets = ServeDir::new(dir.join("assets"));
    let files = ServeDir::new(dir).append_index_html_on_directories(true).fallback(index);
    api.nest_service("/assets", get_service(assets).handle_error(|_| async { StatusCode::INTERNAL_SERVER_ERROR }))
        .fallback_service(files)
}

#[cfg(test)]
mod tests {
    use axum::body::{to_bytes, Body};
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    async fn get_path(app: &Router, path: &str) -> (StatusCode, String) {
        let response = app.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        let status = response.status();
        let body = to_bytes(response.into_body(), 1 << 20).await.unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn routes_api_then_files_then_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.html"), "<div id=root></div>").unwrap();
        std::fs::write(dir.path().join("favicon.svg"), "<svg/>").unwrap();
        std::fs::create_dir(dir.path().join("assets")).unwrap();
        std::fs::write(dir.path().join("assets/app-1234.js"), "console.log(1)").unwrap();
        let api = Router::new().route("/healthz", get(|| async { "ok" }));
        let app = with_portal(api, dir.path());

        assert_eq!(get_path(&app, "/healthz").await, (StatusCode::OK, "ok".into()));
        assert_eq!(get_path(&app, "/").await, (StatusCode::OK, "<div id=root></div>".into()));
        assert_eq!(get_path(&app, "/jobs/42?tab=events").await, (StatusCode::OK, "<div id=root></div>".into()));
        assert_eq!(get_path(&app, "/favicon.svg").await, (StatusCode::OK, "<svg/>".into()));
        assert_eq!(get_path(&app, "/assets/app-1234.js").await, (StatusCode::OK, "console.log(1)".into()));
        assert_eq!(get_path(&app, "/assets/app-gone.js").await.0, StatusCode::NOT_FOUND);
        assert_eq!(get_path(&app, "/../Cargo.toml").await.1, "<div id=root></div>");
    }
}
