//! External tools (MCP): the listings waiting for approval, each with its
//! description shown escaped, what the screen found in it and its input
//! schema; Approve (bound to the hash shown, for the roles typed, with or
//! without confirmation of each call), Reject; the approved ones with
//! Suspend; the suspended and rejected ones with why (docs/tools.md).

use super::auth::{Screen, Submitted};
use super::view::{self, TOOLS};
use super::{Page, PAGE_ROWS};
use maud::{html, Markup};
use memory::authz::{Action, Actor};
use memory::external_tool::{ExternalTool, ExternalToolStatus};
use memory::store::{Act, ToolDecided, ToolGrant};
use serde::Deserialize;
use steward_core::mcp::{escaped, review_line};

pub(super) async fn page(screen: Screen) -> Page {
    let store = screen.state.db().external_tools();
    let all = store.list(screen.state.org(), None).await?;
    let of = |status: ExternalToolStatus| -> Vec<ExternalTool> {
        all.iter()
            .filter(|t| t.status == status)
            .take(PAGE_ROWS as usize)
            .cloned()
            .collect()
    };
    let (waiting, approved) = (
        of(ExternalToolStatus::Proposed),
        of(ExternalToolStatus::Approved),
    );
    let mut out_of_use = of(ExternalToolStatus::Suspended);
    out_of_use.extend(of(ExternalToolStatus::Rejected));
    let content = template(&waiting, &approved, &out_of_use, screen.who.csrf());
    screen.show(TOOLS, content)
}

fn template(
    waiting: &[ExternalTool],
    approved: &[ExternalTool],
    out_of_use: &[ExternalTool],
    csrf: &str,
) -> Markup {
    html! {
        section.card id="tools-waiting" {
            h2 { "Waiting for approval" }
            p.muted { "What MCP servers list, exactly as listed. No model is offered a tool until it is approved here, for the roles you name; approving names the hash shown, and a tool its server changed since is a new listing. Acts are audited." }
            @if waiting.is_empty() {
                (view::empty("No tool is waiting."))
            }
            @for t in waiting {
                (listing(t, csrf))
            }
        }
        section.card id="tools-approved" {
            h2 { "Approved" }
            @if approved.is_empty() {
                (view::empty("No tool is approved."))
            }
            @for t in approved {
                article.tool id={ "tool-" (t.id) } {
                    p { code { (review_line(t)) } }
                    (view::action(&format!("{}/suspend", TOOLS.path), csrf, &[("id", &t.id.to_string())], "Suspend", "danger"))
                }
            }
        }
        section.card id="tools-out-of-use" {
            h2 { "Suspended or rejected" }
            @if out_of_use.is_empty() {
                (view::empty("None."))
            }
            @for t in out_of_use {
                article.tool id={ "tool-" (t.id) } {
                    p { code { (review_line(t)) } }
                    @if !t.note.is_empty() { p.muted { (escaped(&t.note)) } }
                    @if t.status == ExternalToolStatus::Suspended {
                        (approve_form(t, csrf))
                    }
                }
            }
        }
    }
}

/// A listing as an approval shows it.
fn listing(t: &ExternalTool, csrf: &str) -> Markup {
    html! {
        article.tool id={ "tool-" (t.id) } {
            h3 { code { (escaped(&t.server)) "/" (escaped(&t.name)) } " " span.badge.pending { "proposed" } }
            p.muted { "listing #" (t.id) " · agent " (t.agent) " · " (view::date(t.created_at)) }
            @if !t.finding.is_empty() {
                p.stale { "Screen: the description " (t.finding) "." }
            }
            p.description { "“" (escaped(&t.description)) "”" }
            pre.body { (escaped(&t.input_schema)) }
            div.decide {
                (approve_form(t, csrf))
                (view::action(&format!("{}/reject", TOOLS.path), csrf, &[("id", &t.id.to_string())], "Reject", "danger"))
            }
        }
    }
}

fn approve_form(t: &ExternalTool, csrf: &str) -> Markup {
    html! {
        form.inline method="post" action={ (TOOLS.path) "/approve" } {
            (view::csrf_field(csrf))
            input type="hidden" name="id" value=(t.id);
            input type="hidden" name="hash" value=(t.hash);
            span.muted { "hash " code { (t.hash.get(..12).unwrap_or(&t.hash)) } " " }
            label { "roles " input type="text" name="roles" value="user" size="16"; }
            label { input type="checkbox" name="confirm" value="on"; " ask before each call" }
            button.primary type="submit" { "Approve" }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct ApproveForm {
    id: i64,
    hash: String,
    roles: String,
    confirm: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct IdForm {
    id: i64,
}

/// The signed-in administrator's stored id, once the one authorization
/// point let them curate tools (else why not).
fn curator(who: &super::auth::SignedIn) -> Result<String, String> {
    let principal = who.principal();
    match memory::authz::authorize(Actor::own(&principal), Action::CurateTools) {
        Ok(()) => Ok(principal.author_id().unwrap_or_default()),
        Err(denial) => Err(format!("Refused: {denial}.")),
    }
}

fn finish<T>(sent: Submitted<T>, decided: ToolDecided, what: &str) -> Page {
    match decided {
        Ok(t) => {
            let text = format!("{what}: {}/{}.", t.server, t.name);
            sent.done(true, text, TOOLS.path)
        }
        Err(why) => sent.done(false, format!("Refused: {why}."), TOOLS.path),
    }
}

pub(super) async fn approve(sent: Submitted<ApproveForm>) -> Page {
    let actor = match curator(&sent.who) {
        Ok(actor) => actor,
        Err(why) => return sent.done(false, why, TOOLS.path),
    };
    let roles: Vec<String> = sent
        .form
        .roles
        .split([',', ' '])
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect();
    let grant = ToolGrant {
        id: sent.form.id,
        hash: sent.form.hash.trim(),
        roles: &roles,
        confirm: sent.form.confirm.is_some(),
        // The page approves for people; runs, a tool's own rate and the
        // speaker's identity are set with the CLI or the API (docs/tools.md).
        runs: false,
        calls_per_minute: None,
        identity: false,
    };
    let who = Act {
        org: sent.state.org(),
        actor: &actor,
        at: sent.state.now_ms(),
    };
    let decided = sent
        .state
        .db()
        .external_tools()
        .approve(who, &grant)
        .await?;
    finish(sent, decided, "Approved")
}

pub(super) async fn reject(sent: Submitted<IdForm>) -> Page {
    let actor = match curator(&sent.who) {
        Ok(actor) => actor,
        Err(why) => return sent.done(false, why, TOOLS.path),
    };
    let who = Act {
        org: sent.state.org(),
        actor: &actor,
        at: sent.state.now_ms(),
    };
    let decided = sent
        .state
        .db()
        .external_tools()
        .reject(who, sent.form.id)
        .await?;
    finish(sent, decided, "Rejected")
}

pub(super) async fn suspend(sent: Submitted<IdForm>) -> Page {
    let actor = match curator(&sent.who) {
        Ok(actor) => actor,
        Err(why) => return sent.done(false, why, TOOLS.path),
    };
    let who = Act {
        org: sent.state.org(),
        actor: &actor,
        at: sent.state.now_ms(),
    };
    let why = "suspended by an administrator";
    let decided = sent
        .state
        .db()
        .external_tools()
        .suspend(who, sent.form.id, why)
        .await?;
    finish(sent, decided, "Suspended")
}
