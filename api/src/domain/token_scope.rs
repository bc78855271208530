//! What an API token may do. `api_tokens.scopes` stores the names; a token stored without any
//! (made before scopes existed) may do everything its user may.

named_enum! {
    /// One permission of an API token.
    pub enum TokenScope("API token scope") {
        /// Queries and subscriptions.
        Read = "read",
        /// Mutations.
        Write = "write",
    }
}

/// Whether a token with `scopes` may run an operation that `writes` (a mutation) or reads.
pub fn token_allows(scopes: &[TokenScope], writes: bool) -> bool {
    scopes.is_empty() || scopes.contains(if writes { &TokenScope::Write } else { &TokenScope::Read })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_token_cannot_write_and_an_unscoped_one_can_do_both() {
        assert!(token_allows(&[TokenScope::Read], false));
        assert!(!token_allows(&[TokenScope::Read], true));
        assert!(!token_allows(&[TokenScope::Write], false));
        assert!(token_allows(&[], true) && token_allows(&[], false));
    }
}
