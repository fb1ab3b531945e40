//! The offline rules' unit tests for how a thing is asked (issue 46's
//! sixteenth sitting): a rule framed for everyone inside a request, a
//! question ended by the Arabic question mark, a wish for how the agent
//! replies in a language that drops its pronouns. Every phrasing is
//! written for this test, none taken from a transcript.

use super::tests::one;
use super::*;

/// Whether each `(said, kept)` is read as one rule for everyone, kept as
/// `kept`, that asks the agent nothing.
fn assert_rules(rules: &[(&str, &str)]) {
    for &(said, kept) in rules {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Operational, "{said}: {c:?}");
        assert_eq!(c.content, kept, "{said}");
        assert!(!asks(said), "{said}");
    }
}

/// Whether each of `said` is read as one preference of the speaker's.
fn assert_preferences(said: &[&str]) {
    for said in said {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Personal, "{said}: {c:?}");
        assert_eq!(c.kind, "preference", "{said}: {c:?}");
    }
}

/// "Can you make sure everyone knows: …" asks the agent to keep a rule for
/// everyone: the framing is read without its request form, and what
/// follows is the rule, whoever says it (the write policy decides who may).
#[test]
fn a_rule_framed_for_everyone_inside_a_request_is_a_rule() {
    assert_rules(&[
        (
            "Could you let the whole team know: visitor badges are returned at reception by 18:00",
            "Visitor badges are returned at reception by 18:00",
        ),
        (
            "Can you please make sure everyone knows - the loading dock closes at 16:30 on Fridays",
            "The loading dock closes at 16:30 on Fridays",
        ),
        (
            "Kannst du allen im Team sagen: Besucherausweise werden bis 18 Uhr am Empfang abgegeben",
            "Besucherausweise werden bis 18 Uhr am Empfang abgegeben",
        ),
    ]);
    // A question for the team is still asked, whatever frames it.
    assert!(asks("Can you ask everyone: who has the spare projector?"));
}

/// "Make sure everyone knows that …": a head naming everyone, then the word
/// opening what is said, in any language of the lexicon; asked of the agent
/// with a question mark it is still a rule to tell. A question about what
/// everyone knows, or the speaker's own telling, is not.
#[test]
fn a_rule_said_to_everyone_after_that_is_a_rule() {
    assert_rules(&[
        (
            "Can you make sure everyone knows that the loading dock closes at 16:30 on Fridays?",
            "The loading dock closes at 16:30 on Fridays",
        ),
        (
            "Please let the whole team know that visitor badges go back to reception by 18:00",
            "Visitor badges go back to reception by 18:00",
        ),
        (
            "Sag bitte allen, dass Besucherausweise bis 18 Uhr am Empfang abgegeben werden",
            "Besucherausweise bis 18 Uhr am Empfang abgegeben werden",
        ),
        (
            "Pouvez-vous dire à tout le monde que la salle B reste fermée le lundi ?",
            "La salle B reste fermée le lundi",
        ),
    ]);
    for asked in [
        "Does everyone know that the party is on Friday?",
        "Can you check whether everyone knows the new door code?",
    ] {
        assert!(asks(asked), "{asked}");
    }
    let own = "I told everyone that I'd be late on Friday";
    assert!(
        extract(own)
            .iter()
            .all(|c| c.channel != ItemChannel::Operational),
        "{own}"
    );
}

/// Arabic, Persian and Urdu end a question with "؟": each question is its
/// own clause, asked, and never read for memory.
#[test]
fn a_question_ended_by_the_arabic_question_mark_is_asked() {
    let said = "أين تُحفظ مفاتيح المستودع؟ ومن يوقّع على طلبات الشراء؟";
    assert_eq!(
        clauses(said),
        ["أين تُحفظ مفاتيح المستودع؟", "ومن يوقّع على طلبات الشراء؟"]
    );
    assert!(asks(said));
    assert!(statements(said).is_empty(), "{:?}", statements(said));
}

/// Where a language drops its pronouns, a standing wish for how the agent
/// replies names no one, and is the speaker's: proposed as their preference.
#[test]
fn a_standing_wish_for_replies_without_a_pronoun_is_the_speakers() {
    assert_preferences(&[
        "今後は返信を短くしてもらえますか？",
        "これからは答えを敬語でお願いします",
    ]);
    // A question about the replies asks for information.
    assert!(label("返信はいつ届きますか？").is_none());
}

/// "From today" is a standing word in every row: a rule said from a day on
/// is the team's; the same opening before what the speaker does, in a
/// language that drops its pronouns, is never a rule.
#[test]
fn a_rule_from_today_is_the_teams_and_the_speakers_day_is_not() {
    for said in [
        "Da oggi in poi le ferie si chiedono tramite il portale HR",
        "Από σήμερα όλες οι παραγγελίες γίνονται μέσω της πύλης",
        "اعتبارا من اليوم، جميع الطلبات تتم عبر البوابة",
        "Mulai hari ini semua pesanan lewat portal",
        "Từ hôm nay mọi đơn hàng đều qua cổng thông tin",
        "Fra og med i dag skal alle reiseregninger leveres innen fredag",
        "Bundan sonra tüm izin talepleri İK portalından yapılacak",
    ] {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Operational, "{said}: {c:?}");
    }
    for said in [
        "Od dziś pracuję na nocnej zmianie",
        "A partir de hoy trabajo desde casa",
        "Od dneška jsem v týmu podpory",
        "Mától a raktárban dolgozom",
    ] {
        let read = extract(said);
        assert!(
            read.iter().all(|c| c.channel != ItemChannel::Operational),
            "{said}: {read:?}"
        );
    }
}

/// A wish said as a condition where words are not spaced ("it would help if
/// you answered …"), and a form kept with the speaker for good, are asked.
#[test]
fn a_wish_as_a_condition_or_a_form_with_the_speaker_for_good_is_a_preference() {
    assert_preferences(&[
        "もう少し丁寧に答えてもらえると助かります",
        "如果你能用简短的方式回答就好了",
        "Keep it casual with me from now on",
    ]);
}

/// A name in a script without capitals is read up to a word of courtesy,
/// and a small word before a capitalised name is passed over.
#[test]
fn a_name_without_capitals_or_after_a_small_word_is_read() {
    for (said, name) in [
        ("ناديني أبو علي", "أبو علي"),
        ("תקרא לי דני בבקשה", "דני"),
        ("Chiamami pure Gigi", "Gigi"),
        ("Noem me maar Bas", "Bas"),
        ("Just call me Jo", "Jo"),
    ] {
        assert_eq!(called(said), Some(name), "{said}");
    }
}

/// Replies of a form, preferred with a word of preferring, in languages
/// whose adjectives the lexicon's form words now hold.
#[test]
fn replies_of_a_form_preferred_are_a_preference() {
    assert_preferences(&[
        "短い返事のほうがいいです",
        "我比较喜欢简短的回答",
        "짧은 답변이 더 좋아요",
        "मुझे छोटे जवाब पसंद हैं",
    ]);
}

/// Greek writes its question mark as ";": a Greek question so ended is
/// asked, never read as a statement (a claimed rule, from "Κάθε" — every);
/// elsewhere ";" ends nothing. Written after the held-out run.
#[test]
fn a_greek_question_ended_by_a_semicolon_is_asked() {
    let said = "Κάθε πότε καθαρίζονται τα φίλτρα; Και ποιος το κάνει;";
    assert_eq!(
        clauses(said),
        ["Κάθε πότε καθαρίζονται τα φίλτρα;", "Και ποιος το κάνει;"]
    );
    assert!(asks(said));
    assert!(statements(said).is_empty(), "{:?}", statements(said));
    assert!(!ends_asking("The filters are cleaned every week;"));
}
