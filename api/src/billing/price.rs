//! The price book: per GPU model, list and contracted prices per GPU-hour with effective
//! dates. Entries of one model never overlap (checked when the book is built), so the price
//! at an instant is unambiguous, and an interval crossing a price change splits at it.

use chrono::{DateTime, Utc};

use super::BillingError;

/// One price of one GPU model, valid in `[effective_from, effective_to)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PriceEntry {
    pub model: String,
    /// Public price per GPU-hour, in micro-units of the billing currency.
    pub list_micros: i64,
    /// Negotiated price per GPU-hour; `None` means the list price applies.
    pub contracted_micros: Option<i64>,
    pub effective_from: DateTime<Utc>,
    /// `None`: until further notice.
    pub effective_to: Option<DateTime<Utc>>,
}

impl PriceEntry {
    pub fn contracted(&self) -> i64 {
        self.contracted_micros.unwrap_or(self.list_micros)
    }

    fn covers(&self, t: DateTime<Utc>) -> bool {
        self.effective_from <= t && self.effective_to.is_none_or(|e| t < e)
    }

    /// A stable id of this price (FOCUS SkuPriceId).
    pub fn price_id(&self) -> String {
        format!("{}@{}", self.model, self.effective_from.format("%Y-%m-%dT%H:%M:%SZ"))
    }
}

/// `[start, end)` and the price in force throughout it.
pub type Segment<'a> = (DateTime<Utc>, DateTime<Utc>, &'a PriceEntry);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriceBook {
    /// Sorted by model, then effective_from.
    entries: Vec<PriceEntry>,
}

impl PriceBook {
    /// Validates and sorts the entries: non-negative prices, non-empty validity, and no two
    /// entries of one model in force at the same instant.
    pub fn new(mut entries: Vec<PriceEntry>) -> Result<PriceBook, BillingError> {
        for e in &entries {
            let empty = e.effective_to.is_some_and(|t| t <= e.effective_from);
            if empty || e.list_micros < 0 || e.contracted_micros.is_some_and(|c| c < 0) {
                return Err(BillingError::InvalidPrice { model: e.model.clone() });
            }
        }
        entries.sort();
        for w in entries.windows(2) {
            if w[0].model == w[1].model && w[0].effective_to.is_none_or(|t| t > w[1].effective_from) {
                return Err(BillingError::OverlappingPrices { model: w[1].model.clone(), at: w[1].effective_from });
            }
        }
        Ok(PriceBook { entries })
    }

    pub fn entries(&self) -> &[PriceEntry] {
        &self.entries
    }

    /// The price of `model` in force at `t`.
    pub fn price_at(&self, model: &str, t: DateTime<Utc>) -> Option<&PriceEntry> {
        self.entries.iter().find(|e| e.model == model && e.covers(t))
    }

    /// Splits `[start, end)` at every price change of `model`; every instant must be priced.
    pub fn segments(
        &self,
        model: &str,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
    ) -> Result<Vec<Segment<'_>>, BillingError> {
        let mut out = Vec::new();
        let mut t = start;
        while t < end {
            let e = self.price_at(model, t).ok_or_else(|| BillingError::NoPrice { model: model.to_string(), at: t })?;
            let next = e.effective_to.map_or(end, |to| to.min(end));
            out.push((t, next, e));
            t = next;
        }
        Ok(out)
    }
}
