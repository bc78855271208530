//! The decoder under fuzzing: mutations of a committed corpus of real messages (every command
//! and event kind, `tests/corpus/`) and arbitrary bytes must decode to a message, an unknown
//! kind or a `DecodeError`, never panic, and never take time out of proportion to the input.
//!
//! Proptest-driven, so it runs on stable Rust in the ordinary suite; `GRUS_FUZZ_CASES=N` runs
//! longer campaigns (BENCHMARKS.md records the executions run). A failing case is minimized
//! and printed; add it to the corpus.

use std::path::PathBuf;

use grus_protocol::{decode, encode, Command, Decoded, Envelope, Event};
use proptest::prelude::*;
use serde_json::Value;

use super::roundtrip::{commands, events};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// The committed corpus: one encoded envelope per file.
fn corpus() -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus")
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).expect("corpus file")).collect()
}

/// Every kind, encoded as the agent and the api write them.
fn seeds() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, c) in commands().into_iter().enumerate() {
        out.push((format!("command-{i}-{}", c.kind()), encode(&Envelope::new(format!("m{i}"), "c1", 1, c))));
    }
    for (i, e) in events().into_iter().enumerate() {
        out.push((format!("event-{i}-{}", e.kind()), encode(&Envelope::new(format!("e{i}"), "c1", 1, e))));
    }
    out
}

/// The corpus holds every kind this version knows (regenerate with `GRUS_WRITE_CORPUS=1`).
#[test]
fn the_corpus_holds_every_kind() {
    if std::env::var_os("GRUS_WRITE_CORPUS").is_some() {
        for (name, text) in seeds() {
            std::fs::write(corpus_dir().join(format!("{name}.json")), text).unwrap();
        }
    }
    let kinds: std::collections::BTreeSet<String> = corpus()
        .iter()
        .map(|raw| serde_json::from_slice::<Value>(raw).unwrap()["kind"].as_str().unwrap().to_owned())
        .collect();
    for k in Command::KINDS.iter().chain(Event::KINDS) {
        assert!(kinds.contains(*k), "the corpus lacks {k}: run with GRUS_WRITE_CORPUS=1");
    }
}

/// Decodes as both ends do; whatever the input, an answer.
fn decode_both(bytes: &[u8]) {
    match decode::<Command>(bytes, "c1") {
        Ok(Decoded::Known(env)) => {
            // What decodes re-encodes and decodes to the same message.
            let again = decode::<Command>(encode(&env).as_bytes(), "c1");
            assert_eq!(again, Ok(Decoded::Known(env)));
        }
        Ok(Decoded::UnknownKind { .. }) => {}
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Ok(Decoded::Known(env)) = decode::<Event>(bytes, "c1") {
        let again = decode::<Event>(encode(&env).as_bytes(), "c1");
        assert_eq!(again, Ok(Decoded::Known(env)));
    }
}

/// One mutation of a JSON value: a field removed or replaced, a value swapped for another type,
/// a string grown or given a NUL, a number pushed to an extreme.
fn mutate(v: &mut Value, choice: &mut impl Iterator<Item = u32>) {
    let pick = choice.next().unwrap_or(0);
    match v {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[pick as usize % keys.len()];
            match choice.next().unwrap_or(0) % 4 {
                0 => {
                    map.remove(key);
                }
                1 => mutate(map.get_mut(key).expect("key"), choice),
                2 => {
                    map.insert(key.clone(), Value::Null);
                }
                _ => {
                    map.insert(format!("{key}_extra"), Value::from(u64::MAX));
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = pick as usize % items.len();
            if choice.next().unwrap_or(0).is_multiple_of(2) {
                mutate(&mut items[i], choice);
            } else {
                let copy = items[i].clone();
                items.extend(std::iter::repeat_n(copy, 3));
            }
        }
        Value::String(s) => match pick % 3 {
            0 => s.push('\0'),
            1 => *s = s.repeat(50),
            _ => *v = Value::from(-1),
        },
        Value::Number(_) => {
            *v = [Value::from(u64::MAX), Value::from(-1i64), Value::from(1e300), Value::from("7")][pick as usize % 4]
                .clone()
        }
        Value::Bool(b) => *b = !*b,
        _ => *v = Value::from("x"),
    }
}

/// Cases per property: 2,000 in the suite, `GRUS_FUZZ_CASES` for a campaign.
fn cases() -> u32 {
    std::env::var("GRUS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Structured mutations of real messages (several at once, anywhere in the tree).
    #[test]
    fn mutated_messages_never_panic(seed in 0usize..64, choices in proptest::collection::vec(any::<u32>(), 1..24)) {
        let corpus = corpus();
        let mut v: Value = serde_json::from_slice(&corpus[seed % corpus.len()]).unwrap();
        let mut it = choices.into_iter();
        while it.len() > 0 {
            mutate(&mut v, &mut it);
        }
        decode_both(serde_json::to_string(&v).unwrap().as_bytes());
    }

    /// Byte-level damage: flips, truncation, splices.
    #[test]
    fn damaged_bytes_never_panic(seed in 0usize..64, at in any::<usize>(), byte in any::<u8>(), cut in any::<usize>()) {
        let corpus = corpus();
        let mut raw = corpus[seed % corpus.len()].clone();
        let i = at % raw.len();
        raw[i] = byte;
        decode_both(&raw);
        raw.truncate(cut % (raw.len() + 1));
        decode_both(&raw);
    }

    /// Anything at all.
    #[test]
    fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode_both(&raw);
    }
}

/// Deeply nested JSON must not overflow the stack (serde_json stops at depth 128).
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let body = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = format!(r#"{{"v":1,"id":"m","cluster":"c1","ts":1,"kind":"Cancel","body":{body}}}"#);
    assert!(decode::<Command>(text.as_bytes(), "c1").is_err());
}
