//! Signing a browser in and out: one-time codes for `ide-bridge open` (bearer token),
//! the code exchanged for the cookie (POST from the login page), signing out.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::{ask, cookie, cookie_name, login_url, page_on, signed_in, PageError};
use crate::actors::dashboard::{IssueLoginCode, LoginRefused, RedeemLoginCode, SignOut, NAME};
use crate::http::guard::{check_bearer, check_host_and_origin, check_same_origin, Rejection};
use crate::services::Services;

/// `POST /ui/login-code` (bearer token, no browser): a one-time sign-in link.
pub async fn issue(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, PageError> {
    page_on(&services)?;
    check_host_and_origin(&req, &services.settings)?;
    check_bearer(&req, &services.auth_token)?;
    let code = ask(&services.dashboard, NAME, IssueLoginCode)
        .await?
        .ok_or_else(|| PageError::Unavailable("the dashboard is restarting; retry".into()))?;
    let ttl = services.settings.ui.login_code_ttl;
    Ok(HttpResponse::Ok().json(json!({
        "url": login_url(&services.settings, services.port, &code),
        "expiresInMs": u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
    })))
}

#[derive(Deserialize)]
pub struct Redeem {
    code: String,
}

/// `Set-Cookie` for the session cookie, or for its removal (`None`).
pub(super) fn set_cookie(port: u16, value: Option<(&str, u64)>) -> String {
    let name = cookie_name(port);
    match value {
        Some((v, max_age)) => {
            format!("{name}={v}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={max_age}")
        }
        None => format!("{name}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0"),
    }
}

/// `POST /ui/login` `{code}` from the login page: the cookie, or 401 saying why not.
pub async fn redeem(
    req: HttpRequest,
    services: web::Data<Services>,
    body: web::Json<Redeem>,
) -> Result<HttpResponse, PageError> {
    page_on(&services)?;
    check_same_origin(&req, &services.settings, true)?;
    let code = body.into_inner().code;
    match ask(
        &services.dashboard,
        NAME,
        RedeemLoginCode(code.trim().to_string()),
    )
    .await?
    {
        Ok(value) => {
            let max_age = services.settings.ui.session_idle.as_secs();
            tracing::info!("a browser signed in to the page");
            Ok(HttpResponse::Ok()
                .insert_header((
                    "Set-Cookie",
                    set_cookie(services.port, Some((&value, max_age))),
                ))
                .json(json!({ "signedIn": true })))
        }
        // Logged by the dashboard, once per burst.
        Err(LoginRefused::TooMany(wait)) => Err(PageError::TooMany {
            message: LoginRefused::TooMany(wait).to_string(),
            retry_after_s: wait,
        }),
        Err(refused) => Err(Rejection::Unauthorized(refused.to_string()).into()),
    }
}

/// `POST /ui/logout`: ends this browser's session.
pub async fn sign_out(
    req: HttpRequest,
    services: web::Data<Services>,
) -> Result<HttpResponse, PageError> {
    signed_in(&req, &services, true).await?;
    if let Some(value) = cookie(&req, &cookie_name(services.port)) {
        ask(&services.dashboard, NAME, SignOut(value)).await?;
    }
    Ok(HttpResponse::Ok()
        .insert_header(("Set-Cookie", set_cookie(services.port, None)))
        .json(json!({ "signedIn": false })))
}
