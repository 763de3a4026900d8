//! The page's files, embedded in the binary. The login page and what it needs (its
//! script, the style sheet) are served to anyone; the dashboard and its script only to
//! a signed-in browser.

use actix_web::{web, HttpRequest, HttpResponse};

use super::{page_on, signed_in, PageError};
use crate::http::guard::check_host;
use crate::services::Services;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
    /// Served without a sign-in (what the login page needs).
    public: bool,
}

const ASSETS: &[Asset] = &[
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/app.js"),
        public: false,
    },
    Asset {
        name: "login.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/login.js"),
        public: true,
    },
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("assets/app.css"),
        public: true,
    },
];

const INDEX: &str = include_str!("assets/index.html");
const LOGIN: &str = include_str!("assets/login.html");

/// What serving a public file takes: the page on and an acceptable `Host`.
fn public(req: &HttpRequest, services: &Services) -> Result<(), PageError> {
    page_on(services)?;
    check_host(req, &services.settings)?;
    Ok(())
}

fn html(body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body)
}

/// `GET /ui/`: the dashboard for a signed-in browser; otherwise 401 with the login page,
/// which says how to sign in (and signs in when the address carries a code).
pub async fn index(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, PageError> {
    match signed_in(&req, &services, false).await {
        Ok(renewed) => {
            let mut page = html(INDEX);
            if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&renewed) {
                page.headers_mut()
                    .append(actix_web::http::header::SET_COOKIE, value);
            }
            Ok(page)
        }
        Err(PageError::Refused(r)) if r.is_unauthorized() => Ok(HttpResponse::Unauthorized()
            .content_type("text/html; charset=utf-8")
            .body(LOGIN)),
        Err(e) => Err(e),
    }
}

/// `GET /ui/login`: the login page (no data in it).
pub async fn login_page(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, PageError> {
    public(&req, &services)?;
    Ok(html(LOGIN))
}

/// `GET /ui/assets/{name}`.
pub async fn asset(
    req: HttpRequest,
    services: web::Data<Services>,
    name: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let Some(asset) = ASSETS.iter().find(|a| a.name == name.as_str()) else {
        return Err(PageError::NotFound(format!("No asset {name:?}")));
    };
    if asset.public {
        public(&req, &services)?;
    } else {
        signed_in(&req, &services, false).await?;
    }
    Ok(HttpResponse::Ok()
        .content_type(asset.content_type)
        .insert_header(("Cache-Control", "no-cache"))
        .body(asset.body))
}
