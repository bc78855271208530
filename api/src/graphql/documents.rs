//! Parsed GraphQL documents by query text, so that a query sent again (a portal page that
//! polls, a CLI in a loop) is not parsed again. Parsing is a tenth of the server's CPU for a
//! `jobs(first: 100)` page (BENCHMARKS.md); a cached document is cloned instead.
//!
//! Only documents that parse are kept, and only short queries. The cache is bounded by entries
//! and bytes: when an insert would exceed either, it is emptied (a client that sends endless
//! distinct queries pays the parse each time, as without the cache, and cannot grow memory).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_graphql::parser::types::ExecutableDocument;

/// Longest query text kept, in bytes.
const MAX_QUERY_BYTES: usize = 16 * 1024;

pub struct DocumentCache {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    documents: HashMap<Box<str>, Arc<ExecutableDocument>>,
    /// Sum of the cached query texts' lengths.
    bytes: usize,
}

impl Default for DocumentCache {
    fn default() -> Self {
        DocumentCache::new(1024, 4 * 1024 * 1024)
    }
}

impl DocumentCache {
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        DocumentCache { max_entries, max_bytes, inner: Mutex::default() }
    }

    pub fn get(&self, query: &str) -> Option<Arc<ExecutableDocument>> {
        self.inner.lock().ok()?.documents.get(query).cloned()
    }

    /// Keeps `document` as the parse of `query` (ignored when the query is too long to keep).
    pub fn insert(&self, query: &str, document: ExecutableDocument) {
        if query.len() > MAX_QUERY_BYTES || query.len() > self.max_bytes || self.max_entries == 0 {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else { return };
        if inner.documents.contains_key(query) {
            return;
        }
        if inner.documents.len() >= self.max_entries || inner.bytes + query.len() > self.max_bytes {
            inner.documents.clear();
            inner.bytes = 0;
        }
        inner.bytes += query.len();
        inner.documents.insert(query.into(), Arc::new(document));
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.documents.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gives `req` its parsed document, from the cache or parsed now (and then kept); the
    /// document, or the parse error that async-graphql will also report when executing.
    pub fn parse<'r>(
        &self,
        req: &'r mut async_graphql::Request,
    ) -> Result<&'r ExecutableDocument, async_graphql::ServerError> {
        match self.get(&req.query) {
            Some(document) => req.set_parsed_query(ExecutableDocument::clone(&document)),
            None => {
                let document = req.parsed_query()?.clone();
                self.insert(&req.query, document);
            }
        }
        req.parsed_query()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> ExecutableDocument {
        async_graphql::parser::parse_query(q).unwrap()
    }

    #[test]
    fn a_repeated_query_comes_from_the_cache() {
        let cache = DocumentCache::default();
        let mut req = async_graphql::Request::new("{ me { id } }");
        assert!(cache.parse(&mut req).is_ok());
        assert_eq!(cache.len(), 1);
        let mut again = async_graphql::Request::new("{ me { id } }");
        let doc = cache.parse(&mut again).unwrap();
        assert_eq!(format!("{doc:?}"), format!("{:?}", parse("{ me { id } }")));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn invalid_queries_are_not_kept() {
        let cache = DocumentCache::default();
        let mut req = async_graphql::Request::new("{ me { id ");
        assert!(cache.parse(&mut req).is_err());
        assert!(cache.is_empty());
    }

    #[test]
    fn bounded_by_entries_and_bytes() {
        let cache = DocumentCache::new(2, 1024);
        for q in ["{ a }", "{ b }", "{ c }"] {
            cache.insert(q, parse(q));
        }
        // The third insert found the cache full and emptied it first.
        assert_eq!(cache.len(), 1);
        assert!(cache.get("{ c }").is_some());

        let cache = DocumentCache::new(100, 12);
        cache.insert("{ aaaa }", parse("{ aaaa }"));
        cache.insert("{ bbbb }", parse("{ bbbb }"));
        assert_eq!(cache.len(), 1);
        assert!(cache.get("{ bbbb }").is_some());

        let long = format!("{{ {} }}", "a ".repeat(MAX_QUERY_BYTES));
        let cache = DocumentCache::default();
        cache.insert(&long, parse("{ a }"));
        assert!(cache.is_empty());
    }
}
