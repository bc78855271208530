//! Resource units and GPU model identities shared by the cluster and job models.
//!
//! GPU time is counted in milli-GPU: 1000 is one whole device. Model names are interned per
//! cluster into `ModelId`s so that filters compare integers and `ModelSet` is a bit mask.

use std::collections::HashMap;

/// Thousandths of one GPU. A device holds at most [`MILLI_PER_GPU`].
pub type Milli = u32;

/// The capacity of one GPU device in milli.
pub const MILLI_PER_GPU: Milli = 1000;

/// Most GPU models one cluster can know (the width of [`ModelSet`]).
pub const MAX_MODELS: usize = 64;

/// An interned GPU model name (index into a [`ModelTable`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModelId(pub u16);

/// A set of GPU models. The empty set means "any model".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModelSet(u64);

impl ModelSet {
    pub const ANY: ModelSet = ModelSet(0);

    pub fn only(model: ModelId) -> ModelSet {
        ModelSet(1u64 << model.0)
    }

    pub fn insert(&mut self, model: ModelId) {
        self.0 |= 1u64 << model.0;
    }

    pub fn is_any(self) -> bool {
        self.0 == 0
    }

    pub fn allows(self, model: ModelId) -> bool {
        self.0 == 0 || self.0 & (1u64 << model.0) != 0
    }

    /// The models named explicitly (empty for [`ModelSet::ANY`]).
    pub fn iter(self) -> impl Iterator<Item = ModelId> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let i = bits.trailing_zeros();
                bits &= bits - 1;
                ModelId(i as u16)
            })
        })
    }
}

/// Interns GPU model names.
#[derive(Clone, Debug, Default)]
pub struct ModelTable {
    names: Vec<String>,
    by_name: HashMap<String, ModelId>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("a cluster can hold at most {MAX_MODELS} GPU models; `{0}` is one too many")]
pub struct TooManyModels(pub String);

impl ModelTable {
    pub fn intern(&mut self, name: &str) -> Result<ModelId, TooManyModels> {
        if let Some(&id) = self.by_name.get(name) {
            return Ok(id);
        }
        if self.names.len() >= MAX_MODELS {
            return Err(TooManyModels(name.to_string()));
        }
        let id = ModelId(self.names.len() as u16);
        self.names.push(name.to_string());
        self.by_name.insert(name.to_string(), id);
        Ok(id)
    }

    pub fn get(&self, name: &str) -> Option<ModelId> {
        self.by_name.get(name).copied()
    }

    pub fn name(&self, id: ModelId) -> &str {
        &self.names[id.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = ModelId> {
        (0..self.names.len() as u16).map(ModelId)
    }

    /// Resolves a list of allowed model names. Names this cluster does not have are dropped;
    /// `None` means the list named models but none exists here (nothing can match).
    pub fn resolve(&self, names: &[String]) -> Option<ModelSet> {
        if names.is_empty() {
            return Some(ModelSet::ANY);
        }
        let mut set = ModelSet::default();
        for name in names {
            if let Some(id) = self.get(name) {
                set.insert(id);
            }
        }
        if set.is_any() {
            None
        } else {
            Some(set)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_keeps_known_models_and_rejects_only_unknown() {
        let mut t = ModelTable::default();
        let a100 = t.intern("A100").unwrap();
        let t4 = t.intern("T4").unwrap();
        assert_eq!(t.resolve(&[]), Some(ModelSet::ANY));
        let set = t.resolve(&["T4".into(), "H100".into()]).unwrap();
        assert!(set.allows(t4) && !set.allows(a100));
        assert_eq!(t.resolve(&["H100".into()]), None);
    }
}
