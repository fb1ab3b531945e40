//! "Your keys": every signed-in person's own API keys (make one, its secret
//! shown once on the page that made it; revoke one) and their delegations
//! (let another paired person act for them; end a grant), as
//! `/api/v1/me/keys` and `/api/v1/me/delegates` do, through the same
//! `Pairing` calls. A key made here is the person's own, in their own name.

use super::auth::{Screen, SignedIn, Submitted};
use super::pairing::outcome_at;
use super::view::{self, KEYS};
use super::{DashError, DashboardState, Page};
use maud::{html, Markup};
use memory::store::DelegationChange;
use serde::Deserialize;

pub(super) async fn page(screen: Screen) -> Page {
    let content = template(&screen.state, &screen.who, None).await?;
    screen.show(KEYS, content)
}

async fn template(
    state: &DashboardState,
    who: &SignedIn,
    made: Option<&pairing::NewApiKey>,
) -> Result<Markup, DashError> {
    let me = who.user_id();
    let keys = state.pairing().api_keys(state.org(), Some(me)).await?;
    let grants = state.pairing().delegations(state.org(), Some(me)).await?;
    let csrf = who.csrf();
    let keys_table = view::Table {
        class: "keys",
        head: &["Key", "Made", "Acts for", "State", ""],
        none: "You have no API keys.",
    }
    .rows(&keys, |k| {
        html! {
            tr id={ "key-" (k.key_id) } {
                td { code { (k.key_id) } }
                td.when { (view::date(k.created_at)) }
                td { (k.on_behalf_of.as_deref().unwrap_or("—")) }
                @match k.revoked_at {
                    Some(at) => { td { "revoked " (view::date(at)) } td {} }
                    None => {
                        td { "active" }
                        td.actions { (view::action("/dashboard/me/keys/revoke", csrf, &[("id", &k.key_id)], "Revoke", "danger")) }
                    }
                }
            }
        }
    });
    let grants_table = view::Table {
        class: "grants",
        head: &["Who", "Acts for", "Since", ""],
        none: "Nobody acts for you, and you act for nobody.",
    }
    .rows(&grants, |g| {
        html! {
            tr {
                td { code { (g.delegate) } }
                td { code { (g.principal) } }
                td.when { (view::date(g.granted_at)) }
                td.actions {
                    @if g.principal == me {
                        (view::action("/dashboard/me/delegates/remove", csrf, &[("delegate", &g.delegate)], "End", "danger"))
                    }
                }
            }
        }
    });
    Ok(html! {
        @if let Some(k) = made {
            div.flash.ok id="new-key" role="status" {
                "Your new key " code { (k.id) } " — copy it now, it is not shown again: "
                code.secret { (k.key) }
            }
        }
        section.card {
            h2 { "Your API keys" }
            p.muted { "A key speaks as you to steward's API (" code { "Authorization: Bearer …" } "), with your role and your memory." }
            (keys_table)
            (view::action("/dashboard/me/keys/create", csrf, &[], "Make a key", "primary"))
        }
        section.card {
            h2 { "Who may act for you" }
            (grants_table)
            form.inline method="post" action="/dashboard/me/delegates/add" {
                (view::csrf_field(csrf))
                input type="text" name="delegate" required placeholder="their stored id" aria-label="Delegate";
                button.secondary type="submit" { "Let them act for me" }
            }
        }
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct NoFields {}

/// Make a key of one's own: this page, with the secret shown once.
pub(super) async fn create(sent: Submitted<NoFields>) -> Page {
    let Submitted {
        state, who, jar, ..
    } = sent;
    let (org, me) = (state.org(), who.user_id());
    let made = state
        .pairing()
        .create_api_key(org, me, me, state.now_ms())
        .await?;
    let content = template(&state, &who, Some(&made)).await?;
    Screen { state, who, jar }.show(KEYS, content)
}

#[derive(Debug, Deserialize)]
pub(super) struct KeyForm {
    id: String,
}

/// Revoke one of one's own keys; another's is answered as one that does not exist.
pub(super) async fn revoke(sent: Submitted<KeyForm>) -> Page {
    let (state, me) = (&sent.state, sent.who.user_id());
    let wanted = pairing::normalise_key_id(&sent.form.id);
    let mine = state.pairing().api_keys(state.org(), Some(me)).await?;
    if !mine
        .iter()
        .any(|k| k.key_id == wanted && k.revoked_at.is_none())
    {
        let text = format!("You have no active API key {}.", sent.form.id.trim());
        return sent.done(false, text, KEYS.path);
    }
    state
        .pairing()
        .revoke_api_key(state.org(), &wanted, me, state.now_ms())
        .await?;
    sent.done(
        true,
        format!("Revoked {wanted}: it never works again."),
        KEYS.path,
    )
}

#[derive(Debug, Deserialize)]
pub(super) struct DelegateForm {
    delegate: String,
}

/// One's own grant to the form's delegate, made or ended now.
fn own_grant(sent: &Submitted<DelegateForm>) -> DelegationChange<'_> {
    DelegationChange {
        principal: sent.who.user_id(),
        delegate: sent.form.delegate.trim(),
        by: sent.who.act(&sent.state),
    }
}

/// Let another paired person act for oneself (audited: `delegate.grant`).
pub(super) async fn delegate_add(sent: Submitted<DelegateForm>) -> Page {
    let result = sent.state.pairing().grant_delegate(&own_grant(&sent)).await;
    let said = |new: bool, f: &DelegateForm| {
        let already = if new { "" } else { " (already)" };
        format!("{} may act for you{already}.", f.delegate.trim())
    };
    outcome_at(sent, result, said, KEYS.path)
}

/// End one's own grant: the delegate's keys acting for one stop at once.
pub(super) async fn delegate_remove(sent: Submitted<DelegateForm>) -> Page {
    let result = sent
        .state
        .pairing()
        .revoke_delegate(&own_grant(&sent))
        .await;
    let said = |(), f: &DelegateForm| format!("{} no longer acts for you.", f.delegate.trim());
    outcome_at(sent, result, said, KEYS.path)
}
