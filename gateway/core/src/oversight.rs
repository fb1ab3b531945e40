//! Oversight that cannot become surveillance (docs/memory.md, "Oversight and the two
//! promises"): the two promises steward makes to every person, the audit of
//! an administrator's reasoned look at one person's records, and the list of
//! those looks the person is shown.

use memory::admin_text::OrgWords;
use memory::store::Db;
use memory::StoreError;

/// The consent promise, shown at first contact, in chat `/memory`,
/// `GET /api/v1/me/memory` (`promises`), the dashboard's own-memory view and
/// the README — always these exact words.
pub const KEEP_PROMISE: &str = "Nothing about you is kept unless you say yes: steward asks before it saves what it learns from you, and you can read, promote or forget every record with /memory and /forget.";

/// The training promise, shown wherever [`KEEP_PROMISE`] is.
pub const TRAINING_PROMISE: &str =
    "Your memory is never used to train or tune a model: it is only read to answer you.";

/// Both promises, in the order every surface shows them.
pub const PROMISES: [&str; 2] = [KEEP_PROMISE, TRAINING_PROMISE];

/// The separator between the surface and the reason in an audit row's detail.
const REASON: &str = "reason: ";

/// One administrator's look at a person's records or direct conversation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct View {
    /// The administrator's stored user id (or `operator (cli)`).
    pub who: String,
    /// When, in milliseconds since the epoch.
    pub at_ms: i64,
    /// The reason they gave; none for looks made before reasons were asked.
    pub reason: Option<String>,
    /// What they did: looked, or acted as the person.
    #[serde(skip)]
    pub looked: Looked,
    /// When they acted as the person: how (a key made to act as them, with
    /// its id the person can revoke; a chat as them).
    pub acted_as: Option<String>,
}

/// What an oversight read looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looked {
    /// One person's records (`memory.view`).
    Memory,
    /// The archive of one person's direct conversation (`archive.view`).
    Archive,
    /// The operator acted as the person: a key made to act as them, or a
    /// chat as them (`person.act_as`).
    ActedAs,
}

impl Looked {
    pub fn action(self) -> &'static str {
        match self {
            Looked::Memory => "memory.view",
            Looked::Archive => "archive.view",
            Looked::ActedAs => "person.act_as",
        }
    }

    /// How the person is told of it: "Viewed by …" or "Acted as you: …".
    pub fn told(self) -> &'static str {
        match self {
            Looked::Memory | Looked::Archive => "Viewed by",
            Looked::ActedAs => "Acted as you:",
        }
    }
}

/// One oversight read to audit: `actor` looked at `person`'s data through `surface`.
#[derive(Debug, Clone, Copy)]
pub struct Look<'a> {
    pub org: &'a str,
    pub actor: &'a str,
    pub looked: Looked,
    pub person: &'a str,
    pub surface: &'a str,
    pub reason: &'a str,
}

/// Audit an oversight read with its reason (the person is shown it); its
/// proof opens a direct conversation's archive (`Archive::words`).
pub async fn audit_view(
    db: &Db,
    look: Look<'_>,
    at: i64,
) -> Result<memory::store::AuditedLook, StoreError> {
    let detail = memory::admin_text!(
        "{} {}{}",
        OrgWords::administrators_words(look.surface),
        REASON,
        OrgWords::administrators_words(look.reason)
    );
    db.audit()
        .append_look(
            look.org,
            look.actor,
            look.looked.action(),
            look.person,
            &detail,
            at,
        )
        .await
}

/// Every oversight look at `person`'s records and direct conversations, oldest first.
pub async fn views(db: &Db, org: &str, person: &str) -> Result<Vec<View>, StoreError> {
    let mut out = Vec::new();
    for looked in [Looked::Memory, Looked::Archive, Looked::ActedAs] {
        for e in db.audit().about(org, looked.action(), person).await? {
            let reason = e
                .detail
                .split_once(REASON)
                .map(|(_, r)| r.to_string())
                .filter(|r| !r.trim().is_empty());
            let acted_as = (looked == Looked::ActedAs).then(|| {
                e.detail
                    .split_once(REASON)
                    .map_or(e.detail.as_str(), |(how, _)| how)
                    .trim()
                    .to_string()
            });
            out.push(View {
                who: e.actor,
                at_ms: e.at,
                reason,
                looked,
                acted_as,
            });
        }
    }
    out.sort_by_key(|v| v.at_ms);
    Ok(out)
}

/// The person whose direct conversation `archive` is, if it is one: reading
/// it is an oversight read of that person (`archive.view`, with a reason).
pub async fn direct_person(
    db: &Db,
    archive: &memory::store::Archive,
) -> Result<Option<String>, StoreError> {
    if !archive.is_direct() {
        return Ok(None);
    }
    let lines = db
        .conversations()
        .archive_lines(&archive.org, archive.id)
        .await?;
    Ok(memory::policy::speakers(&lines).into_iter().next())
}
