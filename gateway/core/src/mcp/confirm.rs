//! "Run `tool` with …? Reply yes or no": a call whose approval asks for the
//! speaker's confirmation is kept with the exact arguments shown, and runs
//! with those — never others — only after that speaker's yes, here, before
//! it expires, while its listing is still approved for their role.

use super::{timed, CallEnd, Mcp, Recorded, TurnPlace};
use memory::external_tool::ExternalToolStatus;
use memory::store::WaitingOutcome;
use prompts::answers::Choice;
use serde_json::Value;

/// The arguments as the question shows them: compact JSON, a credential
/// masked, neutralised, at most 300 characters (the call runs with the
/// arguments kept, which this shows).
pub fn shown_arguments(arguments: &Value) -> String {
    let text = arguments.to_string();
    let masked = memory::credentials::masked(&text);
    let shown: String = memory::sanitize::sanitize(&masked)
        .chars()
        .take(300)
        .collect();
    shown
}

/// The question a reply asks.
pub fn question(tool: &str, shown: &str) -> String {
    format!("Run `{tool}` with {shown}? Reply yes or no.")
}

impl Mcp {
    /// A yes or no to the newest "Run …?" this speaker was asked here:
    /// the reply, or `None` when the message answers no such question.
    pub async fn answer_waiting(
        &self,
        place: TurnPlace<'_>,
        text: &str,
    ) -> Result<Option<String>, memory::StoreError> {
        let (Some(speaker), true) = (place.principal.user_id(), self.configured()) else {
            return Ok(None);
        };
        let Some(read) = prompts::answers::read(text) else {
            return Ok(None);
        };
        let store = self.db.external_tools();
        let waiting = store
            .waiting(
                place.org,
                place.agent,
                place.conversation,
                speaker,
                place.now,
            )
            .await?;
        let Some((newest, older)) = waiting.split_first() else {
            return Ok(None);
        };
        for w in older {
            store
                .settle(place.org, w.id, WaitingOutcome::Lapsed)
                .await?;
        }
        // A yes answers the question asked at the speaker's previous line
        // here, nothing older: one passed over has lapsed.
        let previous = self
            .db
            .conversations()
            .previous_line_of(
                place.org,
                place.agent,
                place.conversation,
                speaker,
                place.message_id,
            )
            .await?
            .map(|(id, _)| id);
        if previous != Some(newest.batch) {
            store
                .settle(place.org, newest.id, WaitingOutcome::Lapsed)
                .await?;
            return Ok(None);
        }
        let tool = store.listing(place.org, newest.tool_id).await?;
        if read.choice == Choice::No {
            store
                .settle(place.org, newest.id, WaitingOutcome::Declined)
                .await?;
            return Ok(Some(format!("Okay, I did not run `{}`.", tool.name)));
        }
        if !store
            .settle(place.org, newest.id, WaitingOutcome::Run)
            .await?
        {
            return Ok(Some("That question was answered already.".into()));
        }
        let role = match place.principal {
            memory::Principal::Human { role, .. } => role.as_str(),
            _ => return Ok(None),
        };
        let arguments: Value = serde_json::from_str(&newest.arguments).unwrap_or(Value::Null);
        let record = |end, took| Recorded {
            org: place.org,
            speaker,
            run: place.run,
            tool: &tool,
            arguments_hash: &newest.arguments_hash,
            end,
            took,
            at: place.now,
        };
        // Approved then is not enough: it must be approved now, for them.
        if tool.status != ExternalToolStatus::Approved || !tool.offered_to(role, place.work_roles) {
            self.record(&record(CallEnd::Refused, Default::default()))
                .await;
            return Ok(Some(format!(
                "`{}` is no longer approved for you, so I did not run it.",
                tool.name
            )));
        }
        if let Err(limited) = self.within_rate(&tool, &format!("{}|{speaker}", place.org)) {
            self.record(&record(CallEnd::RateLimited, Default::default()))
                .await;
            return Ok(Some(limited.explained(&tool.name)));
        }
        let ((end, result), took) = timed(self.run(&tool, &arguments, (place.org, speaker))).await;
        self.record(&record(end, took)).await;
        Ok(Some(result))
    }
}
