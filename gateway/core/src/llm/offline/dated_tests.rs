//! The offline rules' unit tests for what holds only the day it is said
//! (issue 46's seventeenth sitting): a sentence opening with "today" in a
//! language whose "from today" opens standing requests, and a correction's
//! heading. Every phrasing is written for this test, none taken from a
//! transcript.

use super::*;

/// A sentence that opens with a time that is only now and holds the
/// speaker's act is a one-off in each of its clauses, whoever the first
/// clause is about; "from today" still opens a standing wish.
#[test]
fn a_sentence_of_today_with_the_speakers_act_is_no_memory() {
    for said in [
        "Hôm nay xe giao hàng đến muộn, tôi đã trả thêm 50 nghìn cho tài xế.",
        "Hari ini printer di lantai 2 rusak, saya sudah telepon teknisi.",
        "Σήμερα ο προμηθευτής άργησε, εγώ πλήρωσα τα έξοδα αποστολής.",
        "Hoy he pagado 40 EUR de mensajería porque el proveedor no vino.",
        "I dag kom bussen for sent, og jeg betalte taxi selv.",
    ] {
        assert!(
            statements(said).is_empty(),
            "{said}: {:?}",
            statements(said)
        );
    }
    for standing in [
        "Từ hôm nay hãy luôn trả lời tôi bằng tiếng Việt.",
        "Mulai hari ini tolong selalu jawab saya dalam bahasa Indonesia.",
    ] {
        let items = extract(standing);
        assert!(
            items.iter().any(|c| c.kind == "preference"),
            "{standing}: {items:?}"
        );
    }
    // A lasting fact is kept when no time of the day opens it.
    assert!(!statements("Tôi làm việc ở kho Bình Dương.").is_empty());
}

/// A correction is kept without the heading that says how it was said,
/// French spacing before its colon too.
#[test]
fn a_corrections_heading_is_not_kept() {
    for (said, kept) in [
        (
            "correction: the night bus now leaves at 23:40.",
            "The night bus now leaves at 23:40.",
        ),
        (
            "correction : le bus de nuit part maintenant à 23:40",
            "Le bus de nuit part maintenant à 23:40",
        ),
        ("Update: gate B opens at 06:00", "Gate B opens at 06:00"),
        // A sentence that only mentions a correction keeps its words.
        (
            "The correction desk is on floor 2",
            "The correction desk is on floor 2",
        ),
    ] {
        assert_eq!(unheaded(said), kept, "{said}");
    }
    assert!(corrects_a_fact("correction : le code est 7742"));
}

/// A rule told to everyone asks nothing of the agent, whatever requests it
/// holds for the team; a question beside it is asked.
#[test]
fn a_rule_told_to_everyone_asks_the_agent_nothing() {
    assert!(told_to_everyone(
        "Heads up everyone — from now on visitors sign in at the side door. Please remind your guests."
    ));
    assert!(!told_to_everyone(
        "Heads up everyone — visitors sign in at the side door. Where do couriers go?"
    ));
    assert!(!told_to_everyone("Please remind your guests to sign in."));
}
