//! The credential screen over its corpus (`memory/tests/corpus/`): recall on
//! the synthetic credentials, the false-positive rate on the benign lines,
//! and the time per line of `credentials::credential_in` (and of `masked`).
//!
//! Run: `cargo bench -p steward-memory --bench credentials`

use memory::credentials::{credential_in, masked, rule_report};
use std::time::Instant;

const CREDENTIALS: &str = include_str!("../tests/corpus/credentials.tsv");
const BENIGN: &str = include_str!("../tests/corpus/benign.txt");
const ROUNDS: usize = 5;

fn main() {
    let started = Instant::now();
    let report = rule_report();
    let load = started.elapsed();
    println!(
        "gitleaks rules: {} in the file, {} for a file path only, {} compiled, {} refused by the regex crate ({:?}); loaded in {load:.1?}",
        report.total,
        report.path_only,
        report.compiled,
        report.failed.len(),
        report.failed.iter().map(|(id, _)| id).collect::<Vec<_>>()
    );
    let samples: Vec<&str> = CREDENTIALS
        .lines()
        .filter_map(|l| l.split_once('\t').map(|(_, t)| t))
        .collect();
    let benign: Vec<&str> = BENIGN.lines().collect();
    let missed: Vec<&&str> = samples
        .iter()
        .filter(|t| credential_in(t).is_none())
        .collect();
    let found = samples.len() - missed.len();
    let flagged: Vec<&&str> = benign
        .iter()
        .filter(|t| credential_in(t).is_some())
        .collect();
    println!(
        "recall {found}/{} = {:.1}% (missed {missed:?}); false positives {}/{} = {:.2}% {flagged:?}",
        samples.len(),
        100.0 * found as f64 / samples.len() as f64,
        flagged.len(),
        benign.len(),
        100.0 * flagged.len() as f64 / benign.len() as f64
    );
    let lines: Vec<&str> = samples.iter().chain(benign.iter()).copied().collect();
    let t = Instant::now();
    for _ in 0..ROUNDS {
        for l in &lines {
            std::hint::black_box(credential_in(l));
        }
    }
    let per = t.elapsed() / (ROUNDS * lines.len()) as u32;
    let t = Instant::now();
    for _ in 0..ROUNDS {
        for l in &lines {
            std::hint::black_box(masked(l));
        }
    }
    let per_mask = t.elapsed() / (ROUNDS * lines.len()) as u32;
    println!(
        "credential_in {per:.1?} per line, masked {per_mask:.1?} per line ({} lines x {ROUNDS})",
        lines.len()
    );
}
