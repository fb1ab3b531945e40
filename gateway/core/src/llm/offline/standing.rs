//! Standing requests and stated preferences: how the speaker asks to be served
//! from now on.

use super::*;

/// Asking for information, not a way of being served: "Could you tell me if
/// deploys always need a reviewer?" is a question.
pub(super) const ASKS_FOR_INFORMATION: &[&str] = &[
    "tell ",
    "show ",
    "explain ",
    "find ",
    "check ",
    "list ",
    "look ",
    "let me know",
    "confirm ",
    "remind ",
    "what ",
    "where ",
    "who ",
    "when ",
    "why ",
    "how ",
    "which ",
    "if ",
    "whether ",
];

/// `body` without its standing marker, when one stands where a standing
/// request puts it: among its first three words ("always give me …",
/// "responderme siempre en …", "mir ab jetzt immer …") or at its end
/// ("… short from now on"). A condition on every reply ("… when you answer
/// me") is standing too, and stays in what is asked. `None` without either.
pub(super) fn without_standing(body: &str) -> Option<String> {
    let (said, words) = said_and_compared(body);
    let marker = words::find_all(Class::Standing, &words)
        .into_iter()
        .map(|(at, len)| (at, at + len))
        .find(|&(at, end)| at < 3 || end == words.len());
    let Some((at, end)) = marker else {
        return of_each_reply(&words).then(|| clean(body));
    };
    Some(without_words(&said, at..end))
}

/// The text as said, a token a word, and each word as compared: lower case
/// without the punctuation around it ("on," is "on").
fn said_and_compared(body: &str) -> (Vec<&str>, Vec<String>) {
    let said: Vec<&str> = body.split_whitespace().collect();
    let words = said
        .iter()
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''))
                .to_lowercase()
                .replace('’', "'")
        })
        .collect();
    (said, words)
}

/// `said` without the words in `marker`, as written, commas at its ends dropped.
fn without_words(said: &[&str], marker: std::ops::Range<usize>) -> String {
    let kept: Vec<&str> = said[..marker.start]
        .iter()
        .chain(&said[marker.end..])
        .copied()
        .collect();
    kept.join(" ")
        .trim_matches(|c: char| c == ',' || c.is_whitespace())
        .to_string()
}

/// Words that open a clause asking whether or what: a standing word after
/// one is inside what is asked about ("… if deploys always need …").
pub(super) const ASKS_WHETHER: &[&str] = &[
    "if", "whether", "what", "where", "who", "when", "why", "how", "which", "ob", "si", "se", "of",
    "om", "czy", "ли",
];

/// `body` without its standing marker when the marker stands anywhere in a
/// request that names the speaker and asks no "whether" ("Zou je bedragen
/// voor mij altijd in euro willen noemen?"): the speaker named is who is
/// served for good. `None` otherwise.
pub(super) fn standing_for_the_speaker(body: &str) -> Option<String> {
    let (said, words) = said_and_compared(body);
    if !first_person(body) || words.iter().any(|w| ASKS_WHETHER.contains(&w.as_str())) {
        return None;
    }
    let (at, len) = words::find(Class::Standing, &words)?;
    Some(without_words(&said, at..at + len))
}

/// "When you answer me", "wenn du mir antwortest": a condition on every
/// reply — a "when" phrase with a word of replying among the three words after it.
pub(super) fn of_each_reply(words: &[String]) -> bool {
    words::find_all(Class::When, words)
        .into_iter()
        .any(|(at, len)| {
            words[at + len..]
                .iter()
                .take(3)
                .any(|w| words::starts_like(Class::Reply, w))
        })
}

/// Whether `s` holds a standing marker anywhere ("… sempre in italiano"),
/// or a condition on every reply — in a language written without spaces, a
/// condition and a word of replying anywhere in it ("短く答えてもらえると助か
/// ります": it would help if you answered briefly).
pub(super) fn has_standing(s: &str) -> bool {
    words::holds(Class::Standing, s)
        || of_each_reply(&words_of(s))
        || (words::holds_unspaced(Class::When, s) && words::holds_unspaced(Class::Reply, s))
}

/// The language `body` asks to be answered in ("answer me in French",
/// "responderme en español", "用中文回答"), as the speaker wrote it: a word
/// of replying and the name of a language, in any language of the lexicon.
pub(super) fn asked_language(body: &str) -> Option<String> {
    let replying = words::holds_unspaced(Class::Reply, body)
        || words_of(body)
            .iter()
            .any(|w| words::starts_like(Class::Reply, w));
    if !replying {
        return None;
    }
    words::language_named(body).map(|lang| capitalise(&lang))
}

/// A request that the agent serve the speaker a certain way from now on: a
/// request form ("could you", "bitte", "¿puedes") and a standing marker
/// ("always", "from now on", "immer", "siempre") around what is asked —
/// "Could you always answer me in French?", "Can you please keep your
/// answers short from now on?", "Bitte antworte mir immer auf Deutsch".
/// A personal preference, or a rule when what is asked is about the team's
/// work ("Could you always use example_orders for the weekly digest?").
pub(super) fn standing_request(s: &str, question: bool) -> Option<Candidate> {
    let mut rest = s.trim_start_matches(['¿', '¡']).trim();
    let mut asked = false;
    // The language of the first request form: what is asked in another
    // language than English is kept as said.
    let mut asked_in = "en";
    while let Some((r, code)) = words::strip_opening(Class::Request, rest) {
        if !asked {
            asked_in = code;
        }
        rest = r;
        asked = true;
    }
    // Said outright, for good ("Antworte mir bitte ab sofort auf Englisch"),
    // or as what the speaker prefers ("Preferirei risposte in inglese").
    if !asked && !question {
        let lang = (has_standing(rest) || words::holds(Class::Prefer, rest))
            .then(|| asked_language(rest))
            .flatten();
        return lang.map(|lang| {
            let said = format!("Wants answers in {lang}");
            personal_item("preference", ANSWER_IN_SUBJECT, said)
        });
    }
    let mut rest = clean(rest);
    while let Some(r) = words::strip_closing(Class::Courtesy, &rest).map(clean) {
        rest = r;
    }
    let standing = without_standing(&rest).or_else(|| standing_for_the_speaker(&rest));
    // A reply language asked for, however the question is put ("Would it be
    // possible to always answer me in Dutch?", "Ti dispiace rispondermi
    // sempre in italiano?"): for the speaker, for good — a standing marker
    // anywhere, or the speaker named.
    if has_standing(&rest)
        || first_person(&rest)
        || words::holds(Class::Prefer, &rest)
        || !rest.is_ascii()
    {
        if let Some(lang) = asked_language(&rest).filter(|_| !makes_a_thing(&rest)) {
            let said = format!("Wants answers in {lang}");
            return Some(personal_item("preference", ANSWER_IN_SUBJECT, said));
        }
    }
    // Anything else must be asked of the agent ("could you", "peux-tu"), for
    // good or as how the agent is with the speaker ("… avec moi"): a question
    // alone ("Is it always at 10?") asks for information.
    let body = match standing {
        Some(body) if asked => body,
        // Asking to be called something is for good by what it asks.
        None if asked
            && (how_with_the_speaker(&rest)
                || of_every_reply(&rest)
                || called(&rest).is_some()
                || replies_to_speaker(&rest)) =>
        {
            rest.clone()
        }
        _ => return None,
    };
    let lower = body.to_lowercase();
    if body.is_empty() || ASKS_FOR_INFORMATION.iter().any(|a| lower.starts_with(a)) {
        return None;
    }
    if let Some(lang) = asked_language(&body) {
        let said = format!("Wants answers in {lang}");
        return Some(personal_item("preference", ANSWER_IN_SUBJECT, said));
    }
    if let Some(c) = personal(&body).filter(|c| c.kind == "preference" || c.subject == "name") {
        return Some(c);
    }
    if for_everyone(&body) {
        return operational(&body, Some("rule"));
    }
    if let Some(rule) = operational(&body, None) {
        return Some(rule);
    }
    let head = key_terms(&body, 2);
    // "Would you mind always using metric units?": what they prefer, as said.
    let said = if asked_in != "en" {
        // Asked in another language: kept as said, not half translated.
        capitalise(&clean(s.trim_start_matches(['¿', '¡'])))
    } else if words_of(&body).first().is_some_and(|w| w.ends_with("ing")) {
        format!("Prefers {}", clean(&rest))
    } else {
        format!("Wants you to {}", clean(&rest))
    };
    Some(personal_item("preference", format!("always:{head}"), said))
}

/// A request for how the agent replies to the speaker: a word of replying
/// next to the speaker's own ("answer me in bullet points", "отвечать мне
/// по пунктам", "mir kurz antworten"). Not when a colon introduces what is
/// to be answered ("answer me this: …").
pub(super) fn replies_to_speaker(s: &str) -> bool {
    let words = words_of(s);
    // "write me a summary" makes a thing: a task.
    let one_off_at = |at: usize| {
        words[at..]
            .iter()
            .take(3)
            .any(|w| ARTICLES.contains(&w.as_str()))
    };
    !s.contains(':')
        && words.windows(2).enumerate().any(|(at, w)| {
            ((words::starts_like(Class::Reply, &w[0]) && words::is_word(Class::Speaker, &w[1]))
                || (words::is_word(Class::Speaker, &w[0])
                    && words::starts_like(Class::Reply, &w[1])))
                && !one_off_at(at + 2)
        })
}

/// How the agent is with the speaker, said in the request ("… with me",
/// "… avec moi", "… mit mir"): the way they are served, not a one-off task
/// ("send me the report" is one).
pub(super) fn with_the_speaker(s: &str) -> bool {
    words::find(Class::WithMe, &words_of(s)).is_some()
}

/// How the agent is with the speaker ("be patient with me", "keep it short
/// with me"), not a thing shared with them: no article before "with me"
/// ("share the quarterly deck with me" is a task).
fn how_with_the_speaker(s: &str) -> bool {
    let words = words_of(s);
    words::find(Class::WithMe, &words)
        .is_some_and(|(at, _)| !words[..at].iter().any(|w| ARTICLES.contains(&w.as_str())))
}

/// The agent's replies named in the plural ("keep replies under three
/// sentences", "make your answers shorter"), in the languages the rules know:
/// a request about every reply is standing, as "always" makes one. The
/// replies are the agent's when "your" (or its like) names them, or when
/// they are what the verb opening the request acts on; "send me the survey
/// answers" names someone else's.
pub(super) fn of_every_reply(s: &str) -> bool {
    const YOUR: &[&str] = &[
        "your", "deine", "ihre", "tus", "sus", "tes", "vos", "tue", "suas", "tuas", "je", "jouw",
        "twoje", "свои", "твои", "dina",
    ];
    let words = words_of(s);
    words.iter().enumerate().any(|(i, w)| {
        REPLIES.contains(&w.as_str())
            && (i == 1 || (i > 0 && YOUR.contains(&words[i - 1].as_str())))
    })
}

/// How the speaker likes to be served, stated rather than asked: a thing
/// refused in how the agent is with them ("Niente emoji con me"), or what
/// they like of its replies, the speaker and the replies
/// named ("I'd appreciate it if you kept
/// your answers to two sentences", "Jeg kan bedst lide korte og præcise
/// svar"). Kept as said. Not a one-off, nor what names the team's things.
pub(super) fn stated_preference(s: &str) -> Option<Candidate> {
    let words = words_of(s);
    // The agent's replies, not the speaker's own ("my answers in the quiz").
    let of_replies = words.iter().enumerate().any(|(at, w)| {
        REPLIES.contains(&w.as_str()) && !(at > 0 && words::is_word(Class::Mine, &words[at - 1]))
    }) && words.iter().any(|w| words::is_word(Class::Speaker, w));
    // A thing refused "with me" ("Niente emoji con me"); "share the deck
    // with me" opens with no refusal, and asks a task.
    let refused_with_me = with_the_speaker(s)
        && words
            .first()
            .is_some_and(|w| REFUSALS.contains(&w.as_str()));
    if !(of_replies || refused_with_me) || transient(s) || for_everyone(s) {
        return None;
    }
    let said = capitalise(&clean(s));
    Some(personal_item(
        "preference",
        format!("always:{}", key_terms(s, 2)),
        said,
    ))
}

/// Whether `s` is no wish about how the speaker is answered: said for
/// everyone, of a one-off, or opening as a request for information.
fn said_for_all_now_or_asking(s: &str) -> bool {
    let lower = s.to_lowercase();
    for_everyone(s) || transient(s) || ASKS_FOR_INFORMATION.iter().any(|a| lower.starts_with(a))
}

/// How long or detailed the speaker wants the agent's replies, said in any
/// shape the lexicon reads: a word of [`Class::Length`] beside the replies
/// (a word starting like one of replying: "answers", "Antworten",
/// "respuestas", "svar"), said as a wish (a word of preferring, courtesy, a
/// standing word) or a request — "Ich möchte lieber ausführlichere Antworten",
/// "Mejor respuestas más largas y detalladas, por favor", "Actually, I'd
/// rather have detailed answers from now on". One answer made ("give me a
/// detailed answer about the API": an article before it) is a task, a
/// question asks unless it is a request ("Could you give shorter answers?"),
/// the speaker's own answers ("my answers were short") are no wish, and
/// neither is a reason ("long answers lose me"), which joins the wish before it.
pub(super) fn length_preference(s: &str, question: bool) -> Option<Candidate> {
    let words = words_of(s);
    let (length_at, _) = words::find(Class::Length, &words)?;
    let replies_at = words
        .iter()
        .position(|w| words::starts_like(Class::Reply, w))?;
    // One thing: an article within the two words before the length or the replies.
    let one = |at: usize| {
        words[at.saturating_sub(2)..at]
            .iter()
            .any(|w| ARTICLES.contains(&w.as_str()))
    };
    let theirs = replies_at > 0 && words::is_word(Class::Mine, &words[replies_at - 1]);
    if one(length_at) || one(replies_at) || theirs || makes_a_thing(s) {
        return None;
    }
    if said_for_all_now_or_asking(s) {
        return None;
    }
    let requested =
        words::find(Class::Request, &words).is_some() || words::holds_unspaced(Class::Request, s);
    // A wish, not the speaker alone: "long answers lose me" is a reason.
    let wished = words::find(Class::Prefer, &words).is_some()
        || words::holds_unspaced(Class::Prefer, s)
        || words::find(Class::Courtesy, &words).is_some()
        || has_standing(s);
    let asked = if question {
        requested
    } else {
        requested || wished
    };
    asked.then(|| {
        personal_item(
            "preference",
            REPLY_LENGTH_SUBJECT.to_string(),
            capitalise(&clean(s)),
        )
    })
}

/// What opens a thing refused ("no", "niente", "sin", "kein"): with
/// "with me" it says how the agent is with the speaker; without it,
/// "share the deck with me" asks a task.
pub(super) const REFUSALS: &[&str] = &[
    "no",
    "never",
    "without",
    "niente",
    "nessun",
    "nessuna",
    "senza",
    "sin",
    "nada",
    "sans",
    "pas",
    "kein",
    "keine",
    "keinen",
    "ohne",
    "geen",
    "zonder",
    "nie",
    "bez",
    "без",
    "никаких",
    "не",
    "hiç",
    "ingen",
    "inga",
    "uden",
    "sem",
    "nenhum",
];

/// The agent's replies, named in the plural, in the languages the rules know.
pub(super) const REPLIES: &[&str] = &[
    "replies",
    "answers",
    "responses",
    "respuestas",
    "réponses",
    "reponses",
    "risposte",
    "respostas",
    "odpowiedzi",
    "ответы",
    "cevaplar",
    "cevapları",
    "yanıtlar",
    "svaren",
    "svar",
];

/// Whether `s` states something for everyone, not for the speaker alone.
pub(super) fn for_everyone(s: &str) -> bool {
    let words = words_of(s);
    words
        .iter()
        .any(|w| ["everyone", "everyone's", "everybody", "team", "team's"].contains(&w.as_str()))
        || s.split_whitespace().any(|w| {
            // An identifier (a table, a host, a channel) is the team's, not a taste.
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            w.contains('_') || w.contains('@') || (w.contains('.') && w.len() > 4)
        })
}

/// Articles that open a thing to be made ("write me a summary", "schreib
/// mir einen Bericht"): what follows a word of replying is then a one-off
/// task, not how the speaker is answered. Not "en", "et" (prepositions too).
pub(super) const ARTICLES: &[&str] = &[
    "a", "an", "the", "ein", "eine", "einen", "un", "una", "une", "uno", "um", "uma", "een", "ett",
];

/// Whether a word of replying in `s` is followed by an article opening a
/// thing to make ("write me a summary", "write a summary for me in
/// English"): a one-off task, not how the speaker is answered.
pub(super) fn makes_a_thing(s: &str) -> bool {
    let words = words_of(s);
    words
        .iter()
        .position(|w| words::starts_like(Class::Reply, w))
        .is_some_and(|at| {
            words[at + 1..]
                .iter()
                .take(3)
                .any(|w| ARTICLES.contains(&w.as_str()))
        })
}

/// A request addressed to the agent about how it answers the speaker,
/// said without a standing word: the reply's language, length, format,
/// tone or emoji, asked of the agent and for the speaker ("no emojis for me
/// please", "Отвечай мне, пожалуйста, по-русски", "저한테는 짧게 답해 주실 수
/// 있나요?"). Read by its shape over the lexicon's classes:
/// - addressed: a question, a request form or courtesy anywhere, or an
///   opening word of replying or of refusal;
/// - for the speaker: a word the speaker uses of themselves, or a thing
///   refused ("bez emoji proszę": the replies refused are theirs);
/// - a form of reply: a language named with a word of replying, the
///   agent's replies named, or a word of form with a word of replying or a
///   refusal — "write me a short summary" makes a thing (an article opens
///   it), and is a task.
///
/// How the speaker wants answers is how they want every answer: a lasting
/// preference, proposed, never answered as a one-off.
pub(super) fn addressed_preference(s: &str, question: bool) -> Option<Candidate> {
    // A short heading before a colon ("zmieniam zdanie: pisz mi dłużej",
    // "one more thing: …") frames what follows: that is read; "answer me
    // this: what is …?" introduces a question, which is no preference.
    if let Some((head, rest)) = s.split_once(':') {
        let framed = (1..=5).contains(&head.split_whitespace().count())
            && rest.split_whitespace().count() >= 2;
        return if framed && !question {
            addressed_preference(rest.trim(), question)
        } else {
            None
        };
    }
    let words = words_of(s);
    let unspaced = |class| words::holds_unspaced(class, s);
    // A verb of replying: the replies named ("answers") are no verb.
    let replying_at = words
        .iter()
        .position(|w| words::starts_like(Class::Reply, w) && !REPLIES.contains(&w.as_str()));
    let replying = replying_at.is_some() || unspaced(Class::Reply);
    let refused = words.len() >= 2
        && words
            .first()
            .is_some_and(|w| REFUSALS.contains(&w.as_str()));
    // A word of form: whole, or after an elided article ("pas d'emojis").
    let form = || {
        words::find(Class::Form, &words).is_some()
            || unspaced(Class::Form)
            || words.iter().any(|w| {
                w.split_once('\'')
                    .is_some_and(|(_, after)| words::is_word(Class::Form, after))
            })
    };
    // How the agent is with the speaker, in a form ("Mag het wat informeler
    // met mij?", "could you be more formal with me?"): the form word right
    // before "with me" — "share the short report with me" names a thing.
    let with_me = !replying
        && !refused
        && words::find(Class::WithMe, &words)
            .is_some_and(|(at, _)| at > 0 && words::is_word(Class::Form, &words[at - 1]));
    // Every preference below is of replying, refuses a form or is a form
    // with the speaker: a clause with none (most requests) is read no further.
    if !replying && !refused && !with_me {
        return None;
    }
    if said_for_all_now_or_asking(s) {
        return None;
    }
    // For good: a standing word, or a condition on every reply.
    let for_good = has_standing(s);
    let addressed = question
        || refused
        || (replying && for_good)
        // "Keep it brief with me from now on": a form with the speaker, for good.
        || (with_me && for_good)
        // "短い返事のほうがいいです": replies of a form, preferred.
        || (replying && words::holds(Class::Prefer, s) && form())
        || replying_at == Some(0)
        || words::find(Class::Request, &words).is_some()
        || words::find(Class::Courtesy, &words).is_some()
        || unspaced(Class::Request)
        || unspaced(Class::Courtesy);
    // "rispondimi", "respóndeme", "responde-me": the speaker joined to the
    // verb of replying, as Italian, Spanish and Portuguese write it.
    let to_the_speaker = || {
        words.iter().any(|w| {
            words::starts_like(Class::Reply, w)
                && ["mi", "me", "-me"].iter().any(|m| w.ends_with(m))
                && !REPLIES.contains(&w.as_str())
        })
    };
    // Where pronouns are dropped and words are not spaced, a standing wish
    // for how the agent replies names no one else ("これからは返事を箇条書きに
    // してもらえますか"): the speaker's. A spaced word only starts like one of
    // replying in some language ("talepleri", Danish "tal"), so spaced
    // languages name the speaker.
    let wished = || for_good || words::holds(Class::Prefer, s);
    let unnamed = || unspaced(Class::Reply) && wished() && in_a_pro_drop_language(s);
    let for_speaker =
        refused || first_person(s) || with_the_speaker(s) || to_the_speaker() || unnamed();
    if !addressed || !for_speaker {
        return None;
    }
    let one_off = makes_a_thing(s);
    if replying && !one_off {
        if let Some(lang) = asked_language(s) {
            let said = format!("Wants answers in {lang}");
            return Some(personal_item("preference", ANSWER_IN_SUBJECT, said));
        }
    }
    let replies = words.iter().any(|w| REPLIES.contains(&w.as_str()));
    let form = form();
    // The agent's replies: a word of replying says so ("send me the survey
    // answers" names someone else's).
    // Or replying to the speaker for good, in a way the lexicon does not
    // name ("Respóndeme siempre en catalán"): a preference, never a rule.
    let of_replies =
        ((replies || form || for_good) && replying && !one_off) || (form && refused) || with_me;
    if !of_replies {
        return None;
    }
    let said = capitalise(&clean(s));
    Some(personal_item(
        "preference",
        format!("always:{}", key_terms(s, 2)),
        said,
    ))
}
