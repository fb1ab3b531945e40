//! The structured answers (extraction, belief revision, consolidation,
//! summary): their schemas, the one call that asks for them and repairs
//! once, and the checks their items pass.

use super::*;

// The structured answers, one per schema; their JSON schemas are derived from
// them, so the two cannot drift. Unknown fields are invalid.

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ItemsAnswer {
    #[schemars(length(max = MAX_ITEMS))]
    items: Vec<ItemAnswer>,
    /// The statement that tells how a task should have been answered, copied;
    /// empty when none does. Required by the schema (strict), defaulted when
    /// parsing: an answer without it labels no correction.
    #[serde(default)]
    #[schemars(length(max = MAX_ITEM_CHARS))]
    correction: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ItemAnswer {
    channel: ItemChannel,
    #[schemars(length(max = MAX_KIND_CHARS))]
    kind: String,
    #[schemars(length(max = MAX_SUBJECT_CHARS))]
    subject: String,
    #[schemars(length(max = MAX_ITEM_CHARS))]
    content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JudgeAnswer {
    #[schemars(length(max = MAX_ITEMS))]
    retire: Vec<JudgeItem>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JudgeItem {
    id: i64,
    #[schemars(length(max = MAX_REASON_CHARS))]
    reason: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ConsolidationAnswer {
    #[schemars(length(max = MAX_ITEMS))]
    groups: Vec<GroupAnswer>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GroupAnswer {
    #[schemars(length(max = MAX_GROUP_IDS))]
    ids: Vec<i64>,
    #[schemars(length(max = MAX_ITEM_CHARS))]
    merged: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SummaryAnswer {
    #[schemars(length(max = MAX_SUMMARY_CHARS))]
    pub(super) summary: String,
}

/// The schema OpenAI's strict structured output accepts for `T`: one
/// self-contained object (subschemas inline), every property required and
/// nothing else allowed (`deny_unknown_fields`), no `$schema`, `title` or
/// integer `format` keywords. With `limits` off, no length keywords either
/// (`maxLength`, `maxItems`, …), for servers whose strict mode refuses them.
pub(super) fn strict_schema<T: JsonSchema>(limits: SchemaLimits) -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.root_schema_for::<T>();
    RecursiveTransform(|s: &mut Schema| {
        s.remove("$schema");
        s.remove("title");
        s.remove("format");
        s.remove("default");
        // Strict mode: every property is required (a `#[serde(default)]`
        // field is one only for parsing).
        let keys: Option<Vec<Value>> = s
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(|k| Value::String(k.clone())).collect());
        if let Some(keys) = keys {
            s.insert("required".into(), Value::Array(keys));
        }
        if limits == SchemaLimits::Off {
            for k in LENGTH_KEYWORDS {
                s.remove(k);
            }
        }
    })
    .transform(&mut schema);
    schema.to_value()
}

/// A structured answer and the name of its schema (requests, logs and the
/// test server key on it).
pub(super) trait Answer: DeserializeOwned + JsonSchema {
    const SCHEMA: &'static str;
}

/// The extraction.
impl Answer for ItemsAnswer {
    const SCHEMA: &'static str = "memory_items";
}

/// Which candidates the new record replaces, and why.
impl Answer for JudgeAnswer {
    const SCHEMA: &'static str = "belief_revision";
}

/// Groups of records that say the same thing, each with the merged text.
impl Answer for ConsolidationAnswer {
    const SCHEMA: &'static str = "consolidation";
}

/// The summary of a trimmed slice.
impl Answer for SummaryAnswer {
    const SCHEMA: &'static str = "slice_summary";
}

/// Parse a structured answer; tolerates a Markdown code fence around the JSON.
pub(super) fn parse<T: DeserializeOwned>(answer: &str) -> Result<T, String> {
    let mut s = answer.trim();
    if let Some(rest) = s.strip_prefix("```") {
        s = rest.trim_start_matches("json").trim();
        s = s.strip_suffix("```").unwrap_or(s).trim();
    }
    serde_json::from_str(s).map_err(|e| format!("not the expected JSON ({e})"))
}

impl OpenAi {
    /// A structured call: constrained by `T`'s schema, or by `tighter` (`T`'s
    /// with tighter bounds), validated by `check`, repaired once.
    async fn structured<T, U, F>(
        &self,
        role: &'static str,
        cap: u32,
        prompt: prompts::PromptText,
        user: String,
        tighter: Option<Value>,
        check: F,
    ) -> Result<U, LlmError>
    where
        T: Answer,
        F: Fn(T) -> Result<U, String>,
    {
        let schema = tighter.unwrap_or_else(|| strict_schema::<T>(self.schema_limits));
        let (schema_name, system) = (T::SCHEMA, prompt.text);
        let format = json!({
            "type": "json_schema",
            "json_schema": {"name": schema_name, "strict": true, "schema": schema}
        });
        let mut messages = vec![
            json!({"role": "system", "content": system}),
            json!({"role": "user", "content": user}),
        ];
        let first = self.call(role, cap, &messages, Some(&format)).await?;
        let error = match parse::<T>(&first).and_then(&check) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        tracing::warn!(role, schema = schema_name, error = %error, "invalid structured answer; asking once for a repair");
        self.usage.repaired();
        messages.push(json!({"role": "assistant", "content": first}));
        messages.push(json!({
            "role": "user",
            "content": format!(
                "That answer is invalid: {error}. Answer again with only a JSON object matching the `{schema_name}` schema."
            )
        }));
        let second = self.call(role, cap, &messages, Some(&format)).await?;
        parse::<T>(&second).and_then(&check).map_err(|e| {
            tracing::warn!(role, schema = schema_name, error = %e, "invalid structured answer after the repair; skipped");
            LlmError::Invalid(format!("{schema_name}: {e}"))
        })
    }
}

/// Most answer tokens an extraction of `source_chars` characters in
/// `items` lines needs: the items' text (about a token for three characters,
/// twice over for a normalising frame) and each item's labels and JSON.
fn extraction_cap(source_chars: usize, items: usize) -> u32 {
    // The correction label copies at most one statement: a token for three
    // characters of the source, and its key.
    let tokens = 16 + items * 40 + source_chars * 2 / 3 + 8 + source_chars / 3;
    u32::try_from(tokens)
        .unwrap_or(u32::MAX)
        .min(EXTRACT_MAX_TOKENS)
}

/// Items and the correction label from an extraction answer; unusable
/// items are skipped and logged.
pub(super) fn check_extraction(a: ItemsAnswer) -> Result<Extraction, String> {
    let correction = a.correction.trim();
    let correction = (!correction.is_empty() && correction.chars().count() <= MAX_ITEM_CHARS)
        .then(|| correction.to_string());
    Ok(Extraction {
        items: check_items(a.items)?,
        correction,
    })
}

/// Items from an extraction answer; unusable items are skipped and logged.
fn check_items(items: Vec<ItemAnswer>) -> Result<Vec<Candidate>, String> {
    let mut out = Vec::new();
    for item in items {
        if out.len() == MAX_ITEMS {
            tracing::warn!(
                max = MAX_ITEMS,
                "extraction answer has too many items; the rest skipped"
            );
            break;
        }
        let content = item.content.trim();
        if content.is_empty() || content.chars().count() > MAX_ITEM_CHARS {
            tracing::warn!(
                len = content.len(),
                "extracted item with empty or overlong content skipped"
            );
            continue;
        }
        let mut kind = key(&item.kind, MAX_KIND_CHARS).replace(' ', "_");
        if kind.is_empty() {
            kind = if item.channel == ItemChannel::Task {
                "task".into()
            } else {
                "fact".into()
            };
        }
        let mut subject = key(&item.subject, MAX_SUBJECT_CHARS);
        if subject.is_empty() && item.channel != ItemChannel::Task {
            subject = format!(
                "{kind}:{}",
                terms(content)
                    .into_iter()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        out.push(Candidate {
            channel: item.channel,
            kind,
            subject,
            content: content.to_string(),
        });
    }
    Ok(out)
}

#[async_trait::async_trait]
impl Extractor for OpenAi {
    async fn extract(&self, text: &str) -> Result<Vec<Candidate>, LlmError> {
        Ok(self.extract_labelled(text).await?.items)
    }

    async fn extract_labelled(&self, text: &str) -> Result<Extraction, LlmError> {
        if text.trim().is_empty() {
            return Ok(Extraction::default());
        }
        // What extraction may write is bounded by its source: each item's
        // text by the source's length (the grammar closes the string there),
        // the items by its lines, the answer's tokens by both.
        let source_chars = text.chars().count();
        let most_items = text.lines().count().clamp(1, MAX_ITEMS);
        let item_chars = grounding::longest_for(source_chars).min(MAX_ITEM_CHARS);
        let mut schema = strict_schema::<ItemsAnswer>(self.schema_limits);
        if self.schema_limits == SchemaLimits::On {
            schema["properties"]["items"]["maxItems"] = json!(most_items);
            schema["properties"]["items"]["items"]["properties"]["content"]["maxLength"] =
                json!(item_chars);
            schema["properties"]["correction"]["maxLength"] = json!(item_chars);
        }
        let cap = extraction_cap(source_chars, most_items);
        self.structured::<ItemsAnswer, _, _>(
            "extract",
            cap,
            prompts::extractor(),
            text.to_string(),
            Some(schema),
            check_extraction,
        )
        .await
    }
}

#[async_trait::async_trait]
impl Judge for OpenAi {
    fn provenance(&self) -> Provenance<'_> {
        self.under(prompts::judge())
    }

    async fn judge(
        &self,
        new: &MemoryRecord,
        candidates: &[MemoryRecord],
    ) -> Result<Vec<JudgedRetirement>, LlmError> {
        let header = format!("NEW RECORD\n{}\n\nCANDIDATES", memory_line(new));
        let user = memory_lines(header, candidates);
        let known: HashSet<i64> = candidates.iter().map(|c| c.id).collect();
        self.structured(
            "judge",
            JUDGE_MAX_TOKENS,
            prompts::judge(),
            user,
            None,
            |a: JudgeAnswer| {
                let mut seen = HashSet::new();
                let mut out = Vec::new();
                for item in a.retire {
                    if !known.contains(&item.id) {
                        tracing::warn!(
                            id = item.id,
                            "judge named a record that is not a candidate; skipped"
                        );
                        continue;
                    }
                    if !seen.insert(item.id) {
                        continue;
                    }
                    let reason = chars(sanitize(&item.reason).trim(), MAX_REASON_CHARS);
                    out.push(JudgedRetirement {
                        id: item.id,
                        reason: if reason.is_empty() {
                            "a newer value on the same topic".into()
                        } else {
                            reason
                        },
                    });
                }
                Ok(out)
            },
        )
        .await
    }
}

#[async_trait::async_trait]
impl Consolidator for OpenAi {
    fn provenance(&self) -> Provenance<'_> {
        self.under(prompts::consolidation())
    }

    async fn consolidate(&self, records: &[MemoryRecord]) -> Result<Vec<MergeGroup>, LlmError> {
        let user = memory_lines("RECORDS".into(), records);
        let known: HashSet<i64> = records.iter().map(|r| r.id).collect();
        self.structured("consolidate", CONSOLIDATE_MAX_TOKENS, prompts::consolidation(),
            user,
            None,
            |a: ConsolidationAnswer| {
                let mut used = HashSet::new();
                let mut out = Vec::new();
                for g in a.groups {
                    let mut ids: Vec<i64> = g.ids.into_iter().filter(|id| known.contains(id)).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    let merged = g.merged.trim();
                    if ids.len() < 2 || merged.is_empty() || merged.chars().count() > MAX_ITEM_CHARS {
                        tracing::warn!(?ids, "consolidation group unusable (fewer than two known records, or no merged text); skipped");
                        continue;
                    }
                    if ids.iter().any(|id| used.contains(id)) {
                        tracing::warn!(?ids, "consolidation group reuses a record of another group; skipped");
                        continue;
                    }
                    used.extend(ids.iter().copied());
                    out.push(MergeGroup {
                        ids,
                        merged: merged.to_string(),
                    });
                }
                Ok(out)
            },
        )
        .await
    }
}

#[async_trait::async_trait]
impl Summarizer for OpenAi {
    async fn summarize(&self, slice: &[StoredMessage]) -> Result<String, LlmError> {
        let mut user = String::from("LINES");
        for (i, m) in slice.iter().enumerate() {
            let who = match (m.author.as_str(), &m.sender) {
                ("agent", _) => "agent".to_string(),
                (_, Some(s)) => format!(
                    "{} ({})",
                    framed(s),
                    framed(m.sender_role.as_deref().unwrap_or("unknown"))
                ),
                (_, None) => "unpaired".to_string(),
            };
            user.push_str(&format!(
                "\n<<<line {} {} {}: {}>>>",
                i + 1,
                time(m.said_at),
                who,
                framed(&m.text)
            ));
        }
        self.structured(
            "summary",
            SUMMARY_MAX_TOKENS,
            prompts::summary(),
            user,
            None,
            |a: SummaryAnswer| {
                let s = a.summary.trim();
                if s.is_empty() {
                    return Err("the summary is empty".into());
                }
                Ok(chars(s, MAX_SUMMARY_CHARS))
            },
        )
        .await
    }
}
