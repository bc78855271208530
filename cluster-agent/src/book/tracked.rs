//! A map of the book keyed by job id that remembers which entries changed since the book was
//! last saved, so that a save journals those entries instead of rewriting the whole book.
//!
//! Reads go through `Deref` to the map; every way to change an entry goes through a method
//! here that marks it, so a change cannot escape the journal.

use std::collections::{btree_map, BTreeMap, BTreeSet};
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Debug)]
pub struct Tracked<V> {
    map: BTreeMap<u64, V>,
    changed: BTreeSet<u64>,
}

impl<V> Default for Tracked<V> {
    fn default() -> Self {
        Tracked { map: BTreeMap::new(), changed: BTreeSet::new() }
    }
}

/// Equal when the maps are: what is still to be saved is not part of the value.
impl<V: PartialEq> PartialEq for Tracked<V> {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

impl<V> Deref for Tracked<V> {
    type Target = BTreeMap<u64, V>;

    fn deref(&self) -> &BTreeMap<u64, V> {
        &self.map
    }
}

impl<'a, V> IntoIterator for &'a Tracked<V> {
    type Item = (&'a u64, &'a V);
    type IntoIter = btree_map::Iter<'a, u64, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
}

impl<V> Tracked<V> {
    pub fn get_mut(&mut self, id: &u64) -> Option<&mut V> {
        let entry = self.map.get_mut(id)?;
        self.changed.insert(*id);
        Some(entry)
    }

    pub fn insert(&mut self, id: u64, value: V) -> Option<V> {
        self.changed.insert(id);
        self.map.insert(id, value)
    }

    pub fn remove(&mut self, id: &u64) -> Option<V> {
        let old = self.map.remove(id)?;
        self.changed.insert(*id);
        Some(old)
    }

    /// Visits every entry mutably; `visit` says whether it changed the entry.
    pub fn update_each(&mut self, mut visit: impl FnMut(u64, &mut V) -> bool) {
        for (&id, value) in self.map.iter_mut() {
            if visit(id, value) {
                self.changed.insert(id);
            }
        }
    }

    /// The ids changed (inserted, changed or removed) since the last call, each once.
    pub fn take_changed(&mut self) -> BTreeSet<u64> {
        std::mem::take(&mut self.changed)
    }

    /// Whether any entry changed since [`Tracked::take_changed`] was last called.
    pub fn has_changes(&self) -> bool {
        !self.changed.is_empty()
    }
}

impl<V: Serialize> Serialize for Tracked<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.map.serialize(s)
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Tracked<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Tracked { map: BTreeMap::deserialize(d)?, changed: BTreeSet::new() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_is_marked_once_and_reads_are_not() {
        let mut m = Tracked::default();
        m.insert(1, "a");
        m.insert(2, "b");
        assert_eq!(m.take_changed(), BTreeSet::from([1, 2]));
        assert!(m.get(&1).is_some() && m.len() == 2 && !m.has_changes(), "reads mark nothing");
        assert!(m.get_mut(&9).is_none() && m.remove(&9).is_none() && !m.has_changes(), "absent: nothing changed");
        *m.get_mut(&1).unwrap() = "c";
        m.remove(&2);
        m.update_each(|_, _| false);
        assert_eq!(m.take_changed(), BTreeSet::from([1, 2]));
        m.update_each(|id, v| {
            *v = "d";
            id == 1
        });
        assert_eq!(m.take_changed(), BTreeSet::from([1]));
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, r#"{"1":"d"}"#, "serialized as the plain map");
    }
}
