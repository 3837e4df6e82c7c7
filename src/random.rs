//! Random bytes from the runtime's CSPRNG (`crypto.getRandomValues` through getrandom).

use crate::error::ApiError;

/// `N` random bytes.
pub fn bytes<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(ApiError::internal)?;
    Ok(bytes)
}

/// 128 random bits as 32 lowercase hex digits: token ids, family ids, nonces.
pub fn id() -> Result<String, ApiError> {
    Ok(hex::encode(bytes::<16>()?))
}
