//! The offline rules' unit tests for what a heading before a colon frames
//! (issue 46's tenth sitting): a change named in it, a wish after it.

use super::tests::one;
use super::*;

/// How long or detailed the speaker wants replies is a form of them, either
/// way, and a short heading before a colon frames the wish; a question
/// after one is asked, never kept. Each phrased for this test.
#[test]
fn replies_longer_or_in_detail_are_a_preference_after_a_heading_too() {
    for said in [
        "Answer me in more detail from now on",
        "Second thought: reply to me in detail, with an example",
        "Schreib mir bitte ausführlicher",
        "Mudei de ideia: responde-me de forma mais detalhada",
        "Odpowiadaj mi szczegółowo",
    ] {
        let items = extract(said);
        assert_eq!(items.len(), 1, "{said}: {items:?}");
        assert_eq!(
            (items[0].channel, items[0].kind.as_str()),
            (ItemChannel::Personal, "preference"),
            "{said}"
        );
    }
    for said in [
        "Answer me this: how long is the warranty?",
        "Reminder: the long report is due at 10:00",
    ] {
        assert!(
            extract(said)
                .iter()
                .all(|c| c.channel != ItemChannel::Personal),
            "{said}: {:?}",
            extract(said)
        );
    }
}

/// A heading of change that names the thing changed ("Change for the
/// reading room: …") keeps it with the new value, so the correction names
/// the note it corrects; a heading naming only everyone, or what the
/// statement names itself, adds nothing. Each phrased for this test.
#[test]
fn the_thing_a_heading_of_change_names_stays_with_the_new_value() {
    for (said, opens) in [
        (
            "Change for the Reading Room: it now closes at 18:30 on Fridays",
            "Reading Room: it now closes",
        ),
        (
            "Änderung beim Lesesaal: ab sofort schließt er um 18:30",
            "Lesesaal: ab sofort",
        ),
        (
            "Changement pour la salle Molière : elle accueille 40 personnes maximum",
            "Salle Molière: elle accueille",
        ),
        (
            "Wijziging parkeergarage: vanaf maandag kost een plek 12 euro",
            "Parkeergarage: vanaf maandag",
        ),
    ] {
        let c = one(said);
        assert_eq!(
            (c.channel, c.kind.as_str()),
            (ItemChannel::Operational, "correction"),
            "{said}: {c:?}"
        );
        assert!(c.content.starts_with(opens), "{said}: {c:?}");
    }
    for (said, kept) in [
        (
            "Update for everyone: the standup is at 09:45 now",
            "The standup is at 09:45 now",
        ),
        (
            "Change for the Reading Room: the Reading Room closes at 18:30 now",
            "The Reading Room closes at 18:30 now",
        ),
    ] {
        let c = one(said);
        assert_eq!(c.content, kept, "{said}: {c:?}");
    }
}
