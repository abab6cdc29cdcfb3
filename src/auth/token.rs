use sha2::{Digest, Sha256};

use crate::secret::Secret;

/// A new token: `hs_` and 48 hex digits (192 random bits).
pub fn generate_token() -> Secret {
    use rand::Rng;
    let bytes: [u8; 24] = rand::rng().random();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Secret::new(format!("hs_{hex}"))
}

/// What is stored and looked up: the SHA-256 of the token, hex. Tokens are random and long, so
/// a fast hash is enough (no dictionary to guess from).
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hashed() {
        let a = generate_token();
        let b = generate_token();
        assert_ne!(a.expose(), b.expose());
        assert!(a.expose().starts_with("hs_") && a.expose().len() == 51);
        assert_eq!(token_hash(a.expose()), token_hash(a.expose()));
        assert_ne!(token_hash(a.expose()), token_hash(b.expose()));
        assert_eq!(token_hash(a.expose()).len(), 64);
    }
}
