//! The sign-in page, signing in with the admin token, and signing out.

use super::auth::{self, SignIn, Submitted};
use super::{view, DashboardState, Page};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect};
use axum::Form;
use axum_extra::extract::CookieJar;
use maud::html;
use serde::Deserialize;

/// The sign-in form, with what went wrong the last time.
fn template(error: Option<&str>) -> Html<String> {
    Html(
        view::bare(
            "Sign in",
            html! {
                div.card.signin {
                    h1 { "Sign in" }
                    p.muted {
                        "Use the admin token that " code { "steward serve" }
                        " printed when it generated one, or the " code { "dashboard.admin_token" }
                        " you configured."
                    }
                    @if let Some(e) = error {
                        div.flash.err id="flash" role="alert" { (e) }
                    }
                    form method="post" action="/dashboard/login" {
                        label for="token" { "Admin token" }
                        input id="token" name="token" type="password" autocomplete="current-password" required autofocus;
                        button.primary type="submit" { "Sign in" }
                    }
                }
            },
        )
        .into_string(),
    )
}

pub(super) async fn page() -> Html<String> {
    template(None)
}

#[derive(Debug, Deserialize)]
pub(super) struct LoginForm {
    #[serde(default)]
    token: String,
}

pub(super) async fn login(State(state): State<DashboardState>, Form(f): Form<LoginForm>) -> Page {
    Ok(match auth::sign_in(&state.turns, &f.token).await? {
        SignIn::Ok(cookie) => (CookieJar::new().add(cookie), Redirect::to(view::CHAT.path)).into_response(),
        SignIn::Refused => {
            tracing::warn!("dashboard sign-in refused: wrong admin token");
            (
                StatusCode::UNAUTHORIZED,
                template(Some("That is not the admin token.")),
            )
                .into_response()
        }
        SignIn::NoToken => (
            StatusCode::UNAUTHORIZED,
            template(Some(
                "No admin token exists yet: start the server with `steward serve` (it prints one) or set dashboard.admin_token.",
            )),
        )
            .into_response(),
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct NoFields {}

pub(super) async fn logout(
    Submitted {
        state, admin, jar, ..
    }: Submitted<NoFields>,
) -> Page {
    state
        .db()
        .delete_dashboard_session(state.org(), &admin.session.id_hash)
        .await?;
    let gone = auth::session_cookie(String::new(), false);
    Ok((jar.remove(gone), Redirect::to("/dashboard/login")).into_response())
}
