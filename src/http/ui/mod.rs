//! The browser page at `/ui/`: agents, the live timeline, Claude tasks, the editor and
//! automation, charts, reviews, diffs to decide without an editor and tool requests to
//! approve. Every asset is embedded in the binary and served under a strict
//! Content-Security-Policy (nothing from another origin, no inline script or style).
//!
//! Access: a browser cannot send the token header when it navigates, so `ide-bridge
//! open` (and the start-up line) hand out a one-time link whose code the login page
//! exchanges, by POST, for an HttpOnly, SameSite=Strict cookie named after the port.
//! Every request checks `Host` (loopback names only) and, when it changes state, that
//! it comes from the page itself (`Origin`); nothing that changes state accepts a GET;
//! without the cookie every page and API answers 401 and no data.

mod api;
mod assets;
mod events;
mod login;
mod review;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::JsonPayloadError;
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::{from_fn, DefaultHeaders, Next};
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use serde_json::json;

use super::body::BODY_DEADLINE;
use super::guard::{check_same_origin, Rejection};
use crate::actors::dashboard::CheckBrowser;
use crate::actors::supervise::ActorFault;
use crate::config::Settings;
use crate::services::Services;

/// The page may load only its own scripts, styles and data, and no one may frame it.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// Registers `/ui` and everything under it.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let json_limit = web::JsonConfig::default()
        .limit(api::MAX_BODY_BYTES)
        .error_handler(|err, _| {
            let said = match err {
                JsonPayloadError::Deserialize(e) => format!("Invalid request body: {e}"),
                JsonPayloadError::ContentType => {
                    "The request body must be JSON (Content-Type: application/json)".into()
                }
                other => other.to_string(),
            };
            PageError::BadRequest(said).into()
        });
    // A bad id in the path or a bad query is the page's 400 in JSON too. The page's
    // ids in paths that can fail to parse are numbers.
    let path = web::PathConfig::default().error_handler(|_, req| {
        PageError::BadRequest(format!(
            "{} does not name anything here: its id must be a whole number",
            req.path()
        ))
        .into()
    });
    let query = web::QueryConfig::default().error_handler(|err, req| {
        PageError::BadRequest(format!("{err} (in ?{})", req.query_string())).into()
    });
    cfg.service(
        web::scope("/ui")
            .app_data(json_limit)
            .app_data(path)
            .app_data(query)
            .wrap(from_fn(body_deadline))
            .wrap(
                DefaultHeaders::new()
                    .add(("Content-Security-Policy", CONTENT_SECURITY_POLICY))
                    .add(("X-Content-Type-Options", "nosniff"))
                    .add(("Referrer-Policy", "no-referrer"))
                    .add(("X-Frame-Options", "DENY"))
                    .add(("Cross-Origin-Opener-Policy", "same-origin"))
                    .add(("Cross-Origin-Resource-Policy", "same-origin"))
                    .add(("Cache-Control", "no-store")),
            )
            .route("", web::get().to(assets::index))
            .route("/", web::get().to(assets::index))
            .route("/login", web::get().to(assets::login_page))
            .route("/login", web::post().to(login::redeem))
            .route("/logout", web::post().to(login::sign_out))
            .route("/login-code", web::post().to(login::issue))
            .route("/assets/{name}", web::get().to(assets::asset))
            .service(
                // Every API call is checked here, before its body is read.
                web::scope("/api")
                    .wrap(from_fn(require_browser))
                    .route("/status", web::get().to(api::status))
                    .route("/activity", web::get().to(api::activity))
                    .route("/events", web::get().to(events::page_events))
                    .route("/tasks", web::get().to(api::tasks))
                    .route("/tasks/{id}/output", web::get().to(events::task_output))
                    .route("/tasks/{id}/cancel", web::post().to(api::cancel_task))
                    .route("/samples", web::get().to(api::samples))
                    .route("/diffs", web::get().to(api::diffs))
                    .route("/diffs/{id}", web::post().to(api::decide_diff))
                    .route("/approvals", web::get().to(api::approvals))
                    .route("/approvals/{id}", web::post().to(api::decide_approval))
                    .route("/claims", web::get().to(api::claims))
                    .route("/claims", web::post().to(api::claim))
                    .route("/claims/{id}/release", web::post().to(api::release_claim))
                    .route("/changes", web::get().to(api::changes))
                    .route("/changes/keep", web::post().to(api::keep_changes))
                    .route("/changes/undo", web::post().to(api::undo_changes))
                    .route("/reviews", web::get().to(review::list))
                    .route("/reviews/{id}", web::get().to(review::one))
                    .route("/reviews/{id}/excerpt", web::get().to(review::excerpt))
                    .route("/reviews/{id}/commit", web::post().to(review::commit))
                    .route("/open", web::post().to(review::open_in_editor))
                    .route("/mention", web::post().to(review::mention))
                    .default_service(web::to(not_found)),
            )
            .default_service(web::to(not_found)),
    );
}

/// Why a page request failed; the page shows the text.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// Host, Origin or sign-in refused (403, 401).
    #[error(transparent)]
    Refused(#[from] Rejection),
    /// `ui.enabled = false` (404).
    #[error("The browser page is off (ui.enabled = false)")]
    Off,
    /// 404.
    #[error("{0}")]
    NotFound(String),
    /// 400.
    #[error("{0}")]
    BadRequest(String),
    /// 409: what was asked for is no longer possible (a diff decided meanwhile).
    #[error("{0}")]
    Gone(String),
    /// 503.
    #[error("{0}")]
    Unavailable(String),
    /// An actor failed (503).
    #[error(transparent)]
    Fault(#[from] ActorFault),
    /// A request's body not all there within [`BODY_DEADLINE`] (408).
    #[error("The request was not received within {} s", BODY_DEADLINE.as_secs())]
    TooSlow,
    /// 429, with `Retry-After`.
    #[error("{message}")]
    TooMany {
        /// What the page shows.
        message: String,
        /// Seconds until an attempt is checked again.
        retry_after_s: u64,
    },
}

impl ResponseError for PageError {
    fn status_code(&self) -> StatusCode {
        match self {
            PageError::Refused(r) => r.status_code(),
            PageError::Off | PageError::NotFound(_) => StatusCode::NOT_FOUND,
            PageError::BadRequest(_) => StatusCode::BAD_REQUEST,
            PageError::Gone(_) => StatusCode::CONFLICT,
            PageError::Unavailable(_) | PageError::Fault(_) => StatusCode::SERVICE_UNAVAILABLE,
            PageError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            PageError::TooSlow => StatusCode::REQUEST_TIMEOUT,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        if let PageError::TooMany { retry_after_s, .. } = self {
            response.insert_header(("Retry-After", retry_after_s.to_string()));
        }
        response.json(json!({ "error": self.to_string() }))
    }
}

/// Asks the singleton `actor` (named `name`): a mailbox failure is a fault.
async fn ask<A, M>(
    actor: &actix::Addr<A>,
    name: &'static str,
    msg: M,
) -> Result<M::Result, PageError>
where
    A: actix::Handler<M>,
    A::Context: actix::dev::ToEnvelope<A, M>,
    M: actix::Message + Send + 'static,
    M::Result: Send,
{
    actor
        .send(msg)
        .await
        .map_err(|e| PageError::Fault(ActorFault::mailbox(name, e)))
}

/// The cookie that names a signed-in browser. Cookies are shared by every port of a
/// host, so each bridge's has its port in its name.
pub fn cookie_name(port: u16) -> String {
    format!("ide_bridge_ui_{port}")
}

/// The value of cookie `name`, if the request carries it.
fn cookie(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get_all("cookie")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
}

/// 404 when the page is off (`ui.enabled = false`).
fn page_on(services: &Services) -> Result<(), PageError> {
    if services.settings.ui.enabled {
        Ok(())
    } else {
        Err(PageError::Off)
    }
}

/// Passes when the page is on, `Host` (and `Origin`, see [`check_same_origin`]) are
/// acceptable and the request carries a signed-in browser's cookie; answers the
/// `Set-Cookie` that renews it (its `Max-Age` counts idleness from now, as the bridge's
/// own record of the browser does).
async fn signed_in(
    req: &HttpRequest,
    services: &Services,
    changes_state: bool,
) -> Result<String, PageError> {
    page_on(services)?;
    check_same_origin(req, &services.settings, changes_state)?;
    let refused = |why: &str| {
        PageError::Refused(Rejection::Unauthorized(format!(
            "{why}: run `ide-bridge open` in the workspace to sign in"
        )))
    };
    let Some(value) = cookie(req, &cookie_name(services.port)) else {
        return Err(refused("Not signed in"));
    };
    let known = ask(
        &services.dashboard,
        crate::actors::dashboard::NAME,
        CheckBrowser(value.clone()),
    )
    .await?;
    if known {
        let idle = services.settings.ui.session_idle.as_secs();
        Ok(login::set_cookie(services.port, Some((&value, idle))))
    } else {
        Err(refused(
            "This browser's sign-in ended (it expired, was signed out, or the bridge restarted)",
        ))
    }
}

/// A request with a body (anything but GET and HEAD) is answered within
/// [`BODY_DEADLINE`], its body read first, or refused with 408: one trickled a byte at
/// a time (the sign-in needs no cookie) held its connection for as long as it liked.
async fn body_deadline(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if matches!(*req.method(), Method::GET | Method::HEAD) {
        return next.call(req).await;
    }
    match actix_web::rt::time::timeout(BODY_DEADLINE, next.call(req)).await {
        Ok(answered) => answered,
        Err(_) => Err(PageError::TooSlow.into()),
    }
}

/// The gate in front of `/ui/api/*`: [`signed_in`], with anything but GET taken as a
/// state change (so it must come from the page's own origin).
async fn require_browser(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let checked = match req.app_data::<web::Data<Services>>().cloned() {
        None => Err(PageError::Unavailable("the bridge is starting".into())),
        Some(services) => {
            let changes_state = !matches!(*req.method(), Method::GET | Method::HEAD);
            signed_in(req.request(), &services, changes_state).await
        }
    };
    match checked {
        Ok(renewed) => {
            let mut response = next.call(req).await?;
            if let Ok(value) = actix_web::http::header::HeaderValue::from_str(&renewed) {
                response
                    .headers_mut()
                    .append(actix_web::http::header::SET_COOKIE, value);
            }
            Ok(response.map_into_left_body())
        }
        // A response, not an error: it passes back through the scope's headers
        // (Content-Security-Policy, nosniff, no-store) like every other answer.
        Err(refused) => Ok(req
            .into_response(refused.error_response())
            .map_into_right_body()),
    }
}

/// A one-time sign-in link for `code`. The code travels in the fragment, which
/// browsers never send to a server nor put in a `Referer`.
pub fn login_url(settings: &Settings, port: u16, code: &str) -> String {
    format!("{}/ui/login#{code}", settings.page_origin(port))
}

async fn not_found(req: HttpRequest) -> Result<HttpResponse, PageError> {
    Err(PageError::NotFound(format!(
        "No page at {} {}",
        req.method(),
        req.path()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_found_among_others_and_only_by_its_exact_name() {
        let req = actix_web::test::TestRequest::default()
            .insert_header(("cookie", "a=1; ide_bridge_ui_80x=no; ide_bridge_ui_80=yes"))
            .to_http_request();
        assert_eq!(cookie(&req, &cookie_name(80)).as_deref(), Some("yes"));
        assert_eq!(cookie(&req, &cookie_name(81)), None);
    }

    #[test]
    fn links_use_loopback_when_the_bridge_listens_everywhere() {
        let mut s = Settings::default();
        assert_eq!(login_url(&s, 9, "c"), "http://127.0.0.1:9/ui/login#c");
        s.server.bind = "0.0.0.0".parse().unwrap();
        assert_eq!(s.page_origin(9), "http://127.0.0.1:9");
        s.server.bind = "::1".parse().unwrap();
        assert_eq!(s.page_origin(9), "http://[::1]:9");
    }
}
