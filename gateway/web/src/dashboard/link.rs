//! One-time sign-in links (`/web` in a direct message, `pairing::sign_in_link`):
//! `GET /web/sign-in/<token>` shows a button and spends nothing, so a chat
//! platform's link preview cannot use the link up; the button's `POST`
//! spends it and opens a session of the person it was made for, whose role
//! is then read on every request like any session's (`auth::SignedIn`).

use super::oidc::signed_in_page;
use super::signin::{Peer, TOO_MANY_ATTEMPTS};
use super::{auth, view, DashboardState, Page};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse};
use axum_extra::extract::CookieJar;
use maud::html;
use pairing::LinkRefusal;

/// The longest token taken: a link's is 43 characters.
const MAX_TOKEN_CHARS: usize = 128;

/// `GET /web/sign-in/<token>`: the button that uses the link.
pub(super) async fn page(Path(token): Path<String>) -> Html<String> {
    let action = format!("{}{}", pairing::SIGN_IN_LINK_PATH, token);
    Html(
        view::bare(
            "Sign in",
            html! {
                div.card.signin {
                    h1 { "Sign in" }
                    p { "This link signs you in to steward's dashboard as yourself. It works once." }
                    form method="post" action=(action) {
                        button.primary id="use-link" type="submit" { "Sign in" }
                    }
                }
            },
        )
        .into_string(),
    )
}

/// `POST /web/sign-in/<token>`: spend the link and sign its person in, or
/// say why not: 404 for a link steward never gave, 410 for one used or
/// expired, 403 for a person no longer paired or a form posted from another
/// site, 429 past the sign-in limits.
pub(super) async fn sign_in(
    State(state): State<DashboardState>,
    peer: Peer,
    headers: HeaderMap,
    jar: CookieJar,
    Path(token): Path<String>,
) -> Page {
    // A browser says where a form came from: one posted from another site
    // would sign its visitor in as someone else.
    let cross_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v != "same-origin" && v != "none");
    if cross_site {
        return Ok(refused(
            StatusCode::FORBIDDEN,
            "This sign-in form came from another site. Nothing was done.",
        ));
    }
    if let Err(wait) = state.sign_in.check(peer) {
        return Ok((
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, wait.to_string())],
            view::message_page("Not signed in", TOO_MANY_ATTEMPTS),
        )
            .into_response());
    }
    if token.len() > MAX_TOKEN_CHARS {
        return Ok(refused(
            StatusCode::NOT_FOUND,
            &LinkRefusal::Unknown.to_string(),
        ));
    }
    let redeemed = state
        .pairing()
        .redeem_sign_in_link(state.org(), &token, state.now_ms())
        .await?;
    let user = match redeemed {
        Ok(user) => user,
        Err(why) => {
            let status = match why {
                LinkRefusal::Unknown => StatusCode::NOT_FOUND,
                LinkRefusal::AlreadyUsed | LinkRefusal::Expired => StatusCode::GONE,
                LinkRefusal::NotPaired => StatusCode::FORBIDDEN,
            };
            return Ok(refused(status, &why.to_string()));
        }
    };
    let cookie = auth::open_session(&state, &user.user_id, "").await?;
    Ok((jar.add(cookie), signed_in_page(&user.name)).into_response())
}

fn refused(status: StatusCode, why: &str) -> axum::response::Response {
    (status, view::message_page("Not signed in", why)).into_response()
}
