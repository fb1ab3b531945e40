//! The offline rules' unit tests for how long a person wants their replies
//! (issue 46's fourteenth sitting): one subject however it is said.

use super::*;

/// A wish about the replies' length, in any shape and language, is the
/// speaker's preference on one subject; one answer made, a question or the
/// speaker's own answers are not. Each phrased for this test.
#[test]
fn how_long_the_replies_should_be_is_one_preference_in_any_shape() {
    for said in [
        "Honestly I'd rather have shorter answers",
        "Liefst wat kortere antwoorden, alsjeblieft",
        "Meglio risposte più brevi, grazie",
        "Wolałbym dłuższe odpowiedzi, proszę",
        "Hellre utförliga svar framöver",
        "Could you keep answers brief?",
    ] {
        let items = extract(said);
        assert_eq!(items.len(), 1, "{said}: {items:?}");
        let k = keyed_by_length(&items[0]).unwrap_or_else(|| items[0].clone());
        assert_eq!(
            (k.channel, k.kind.as_str(), k.subject.as_str()),
            (ItemChannel::Personal, "preference", REPLY_LENGTH_SUBJECT),
            "{said}: {items:?}"
        );
    }
    for said in [
        "Give me a detailed answer about the warranty, please",
        "Are short answers stored anywhere?",
        "My answers in the quiz were too short",
    ] {
        let of_length =
            |i: &Candidate| i.subject == REPLY_LENGTH_SUBJECT || keyed_by_length(i).is_some();
        assert!(
            !extract(said).iter().any(of_length),
            "{said}: {:?}",
            extract(said)
        );
    }
    // A reply language is its own subject, whatever length it names too.
    let language = extract("Please answer me in Portuguese from now on");
    assert!(language
        .iter()
        .all(|i| i.subject == ANSWER_IN_SUBJECT && keyed_by_length(i).is_none()));
}
