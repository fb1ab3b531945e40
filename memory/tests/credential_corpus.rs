//! The credential screen over its corpus (`tests/corpus/`, written by
//! `generate.py`): synthetic credentials of many formats and languages, and
//! benign lines of the same shapes (hosts, ticket ids, commit hashes,
//! UUIDs, versions, order numbers, prices, sentences about passwords).

use memory::credentials::{credential_in, masked, rule_report, MASK};

const CREDENTIALS: &str = include_str!("corpus/credentials.tsv");
const BENIGN: &str = include_str!("corpus/benign.txt");

fn samples() -> Vec<(&'static str, &'static str)> {
    CREDENTIALS
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .collect()
}

#[test]
fn the_corpus_is_as_large_as_promised() {
    let samples = samples();
    let mut formats: Vec<_> = samples.iter().map(|(f, _)| *f).collect();
    formats.sort_unstable();
    formats.dedup();
    let languages = formats.iter().filter(|f| f.starts_with("label-")).count();
    assert!(samples.len() >= 150, "{}", samples.len());
    assert!(formats.len() >= 60, "{}", formats.len());
    assert!(languages >= 12, "{languages}");
    assert!(BENIGN.lines().count() >= 1000);
}

#[test]
fn credentials_are_found_and_benign_lines_are_not() {
    let samples = samples();
    let missed: Vec<_> = samples
        .iter()
        .filter(|(_, text)| credential_in(text).is_none())
        .collect();
    let flagged: Vec<_> = BENIGN
        .lines()
        .filter(|l| credential_in(l).is_some())
        .collect();
    let recall = 1.0 - missed.len() as f64 / samples.len() as f64;
    let false_positives = flagged.len() as f64 / BENIGN.lines().count() as f64;
    assert!(recall >= 0.99, "recall {recall:.3}, missed: {missed:#?}");
    assert!(
        false_positives <= 0.01,
        "false positives {false_positives:.3}: {flagged:#?}"
    );
}

#[test]
fn a_masked_sample_holds_no_credential() {
    for (format, text) in samples() {
        if credential_in(text).is_none() {
            continue;
        }
        let m = masked(text);
        assert!(m.contains(MASK), "{format}: {m}");
        assert_eq!(credential_in(&m), None, "{format}: {m}");
    }
}

#[test]
fn almost_every_gitleaks_rule_compiles() {
    let report = rule_report();
    // 222 rules in gitleaks v8.30; those for a file path do not apply to chat.
    assert!(report.total >= 200, "{}", report.total);
    assert_eq!(
        report.compiled + report.path_only + report.failed.len(),
        report.total
    );
    assert!(report.failed.len() <= 5, "{:?}", report.failed);
}
