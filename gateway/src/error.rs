//! The error of a turn and of the services it calls.

use memory::StoreError;
use pairing::PairingError;

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Pairing(#[from] PairingError),
}

pub type Result<T, E = TurnError> = std::result::Result<T, E>;
