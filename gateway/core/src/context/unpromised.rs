//! Promises to remember that nothing kept: found in an answer and replaced.

use super::*;

/// Said in place of a model's promise to remember, or to serve the person a
/// way from now on ([`promises`]): memory, not the model, carries anything over.
pub const NOT_PROMISED: &str = "Nothing was saved for later, so I can't promise that: I keep only what you say yes to, or ask me to remember.";

/// Said in place of such a promise when the turn asks "Remember this?".
pub const ASKED_FIRST: &str = "I keep it only if you say yes.";

/// Openings of a promise about later, in the first person: "I will", "I'll",
/// "ich werde", "voy a", "je vais" (lower case; a word start follows).
pub(super) const PROMISE_OPENINGS: &[&str] = &[
    "i will",
    "i'll",
    "i can",
    "i am going to",
    "i'm going to",
    "i shall",
    "from now on i",
    "puedo",
    "posso",
    "je peux",
    "ich werde",
    "werde ich",
    "ich kann",
    "ich antworte",
    "ich merke",
    "voy a",
    "te responderé",
    "le responderé",
    "responderé",
    "je vais",
    "je te répondrai",
    "je vous répondrai",
    "je répondrai",
    "vou ",
    "irei",
    "responderei",
    "farò",
    "risponderò",
    "ti risponderò",
];

/// What makes such a sentence a promise about later: remembering, or a
/// standing "always" / "from now on" (`all my answers`, `immer`, `siempre`…).
pub(super) const PROMISE_OF_LATER: &[&str] = &[
    "remember",
    "keep that in mind",
    "keep this in mind",
    "keep it in mind",
    "make a note",
    "note that",
    "noted",
    "save",
    "store",
    "always",
    "from now on",
    "going forward",
    "in future",
    "in the future",
    "all my answers",
    "all future",
    // Carrying on as asked is a promise about later too ("I will continue
    // to answer your questions in English").
    "continue to",
    "continue answering",
    "continue replying",
    "keep answering",
    "keep replying",
    "keep responding",
    "weiterhin",
    "continuaré",
    "seguiré",
    "continuerai",
    "continuarei",
    "continuerò",
    "every answer",
    "merke",
    "speicher",
    "immer",
    "ab jetzt",
    "alle antworten",
    "alle meine antworten",
    "künftig",
    "recordar",
    "recordaré",
    "guardar",
    "siempre",
    "de ahora en adelante",
    "todas mis respuestas",
    "souviendrai",
    "retiendrai",
    "toujours",
    "désormais",
    "toutes mes réponses",
    "lembrar",
    "guardarei",
    "sempre",
    "ricorderò",
    "d'ora in poi",
    "tutte le risposte",
];

/// Whether `sentence` promises to remember something, or to do something
/// from now on ("Sure, I will always reply to you in French.", "Ja, ich werde
/// alle Antworten auf Deutsch geben."): a model cannot keep such a promise,
/// only memory can.
pub fn promises(sentence: &str) -> bool {
    if forged_receipt(sentence) {
        return true;
    }
    let lower = sentence.to_lowercase().replace('’', "'");
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let text = words.join(" ");
    // What is promised for later first: most sentences promise nothing.
    let of_later = match promise_of_later() {
        Some(any) => any.is_match(&text),
        None => PROMISE_OF_LATER.iter().any(|p| text.contains(p)),
    };
    of_later
        && PROMISE_OPENINGS.iter().any(|o| {
            let o = o.trim_end();
            text == o || text.starts_with(&format!("{o} ")) || text.contains(&format!(" {o} "))
        })
}

/// Whether `sentence` reads as steward's receipt in any language — "(id: N)"
/// beside the memory it was kept in, or "replaces #N: “…”" after a replaced
/// record: a model copying one from the conversation ("Gespeichert:
/// agent_notes aktualisiert (id: 5)") claims a save that never happened.
/// Only the turn writes receipts; a ticket's "(id: 4711)" from a tool is no
/// receipt.
pub(super) fn forged_receipt(sentence: &str) -> bool {
    let before_a_digit = |mark: &str| {
        sentence.match_indices(mark).any(|(at, _)| {
            sentence[at + mark.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
    };
    let kept_in_memory = [
        Scope::Personal,
        Scope::AgentNotes,
        Scope::OrgPolicy,
        Scope::Role,
    ]
    .into_iter()
    .any(|scope| sentence.contains(crate::learning::place(scope)));
    (before_a_digit("(id: ") && kept_in_memory)
        || (before_a_digit("replaces #") && sentence.contains(": “"))
}

/// [`PROMISE_OF_LATER`] as one automaton: a sentence is read once, not once a phrase.
pub(super) fn promise_of_later() -> Option<&'static AhoCorasick> {
    static ANY: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    ANY.get_or_init(|| {
        AhoCorasick::new(PROMISE_OF_LATER)
            .map_err(|e| tracing::error!(error = %e, "promise phrases"))
            .ok()
    })
    .as_ref()
}

/// A model's answer without its promises to remember or to serve the person
/// a way from now on ([`promises`]): what was promised is answered by what is
/// true — [`ASKED_FIRST`] when the turn asks "Remember this?" (`asked`),
/// else [`NOT_PROMISED`].
pub fn unpromised(answer: &str, asked: bool) -> String {
    let mut promised = false;
    let lines: Vec<String> = answer
        .lines()
        .map(|line| without_promises(line, &mut promised))
        .filter(|line| !line.trim().is_empty())
        .collect();
    if !promised {
        return answer.to_string();
    }
    lines
        .into_iter()
        .chain([if asked { ASKED_FIRST } else { NOT_PROMISED }.to_string()])
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` without its sentences that promise something later ([`promises`]);
/// `promised` is set when one was dropped.
pub(super) fn without_promises(line: &str, promised: &mut bool) -> String {
    let kept: Vec<&str> = sentences(line)
        .into_iter()
        .filter(|sentence| {
            let promise = promises(sentence);
            *promised |= promise;
            !promise
        })
        .map(str::trim)
        .collect();
    let indent = &line[..line.len() - line.trim_start().len()];
    format!("{indent}{}", kept.join(" "))
}
