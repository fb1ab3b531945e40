//! The harness of the small-model tests: the turn loop on the fake
//! OpenAI-compatible server, with the configuration it gives.

use crate::fake_llm::FakeLlm;
use crate::Harness;

pub async fn harness(fake: &FakeLlm) -> Harness {
    Harness::with_config(fake.config()).await
}
