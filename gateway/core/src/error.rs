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

/// `r` with the memory write path's refusal split out (`Ok(Err(refusal))`):
/// a surface answers the refusal in its own terms and fails on anything else.
pub fn refused<T>(r: Result<T>) -> Result<std::result::Result<T, memory::write::WriteRefusal>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(TurnError::Store(StoreError::Write { refusal, .. })) => Ok(Err(refusal)),
        Err(e) => Err(e),
    }
}
