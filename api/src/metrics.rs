//! Prometheus metrics, kept and written by the `prometheus` crate: the family trait, the
//! constructors every family shares, and the registry that `/metrics` renders in the text
//! exposition format.
//!
//! A leaf: it imports nothing from the crate. Each loop owns its family (a struct of the
//! crate's counters and gauges in its own module: `IngestMetrics`, `AdmissionMetrics`,
//! `JobCacheMetrics`, `AllocatorMetrics`, the HTTP layer's `RequestMetrics`), counts into it
//! directly (the counters are atomics), and the server registers the families it runs; the
//! HTTP layer only renders the registry.

use std::sync::Arc;

use prometheus::core::Collector;
use prometheus::{Encoder, Gauge, IntCounter, IntCounterVec, IntGauge, Opts, TextEncoder};

/// The content type of what [`Registry::render`] writes.
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// One group of metrics.
pub trait MetricFamily: Send + Sync {
    /// The collectors of this family (clones share their values with the family's own).
    fn collectors(&self) -> Vec<Box<dyn Collector>>;

    /// This family's Prometheus text alone.
    fn render(&self) -> String {
        let registry = prometheus::Registry::new();
        for c in self.collectors() {
            if let Err(e) = registry.register(c) {
                tracing::error!(error = %e, "a metric family cannot be rendered");
            }
        }
        encode(&registry)
    }
}

/// The families `/metrics` shows.
#[derive(Clone, Default)]
pub struct Registry {
    inner: prometheus::Registry,
}

impl Registry {
    /// Registers `family`'s collectors; a name registered twice is logged and left out (the
    /// first one stays).
    pub fn register(&mut self, family: Arc<dyn MetricFamily>) {
        for c in family.collectors() {
            if let Err(e) = self.inner.register(c) {
                tracing::error!(error = %e, "a metric is registered twice");
            }
        }
    }

    /// Every family's text, sorted by metric name.
    pub fn render(&self) -> String {
        encode(&self.inner)
    }
}

fn encode(registry: &prometheus::Registry) -> String {
    let mut out = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&registry.gather(), &mut out) {
        tracing::error!(error = %e, "metrics cannot be encoded");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A counter family labelled by `outcome` (`name{outcome="<label>"}`), every outcome present
/// from the start (at 0): the shape every loop's outcome counters share. Returns the family
/// (to register) and one counter per outcome, in the order given.
pub fn outcome_counters<const N: usize>(
    name: &str,
    help: &str,
    outcomes: [&str; N],
) -> (IntCounterVec, [IntCounter; N]) {
    let family = IntCounterVec::new(Opts::new(name, help), &["outcome"]).expect("a valid metric name and label");
    let counters = outcomes.map(|o| family.with_label_values(&[o]));
    (family, counters)
}

/// An unlabelled counter.
pub fn counter(name: &str, help: &str) -> IntCounter {
    IntCounter::with_opts(Opts::new(name, help)).expect("a valid metric name")
}

/// An unlabelled integer gauge.
pub fn gauge(name: &str, help: &str) -> IntGauge {
    IntGauge::with_opts(Opts::new(name, help)).expect("a valid metric name")
}

/// An unlabelled gauge whose value is not an integer.
pub fn float_gauge(name: &str, help: &str) -> Gauge {
    Gauge::with_opts(Opts::new(name, help)).expect("a valid metric name")
}

/// `collector` boxed, for [`MetricFamily::collectors`].
pub fn boxed(collector: &(impl Collector + Clone + 'static)) -> Box<dyn Collector> {
    Box::new(collector.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed {
        outcomes: IntCounterVec,
        ok: IntCounter,
        y: IntGauge,
        z: Gauge,
    }

    impl MetricFamily for Fixed {
        fn collectors(&self) -> Vec<Box<dyn Collector>> {
            vec![boxed(&self.outcomes), boxed(&self.y), boxed(&self.z)]
        }
    }

    fn fixed() -> Fixed {
        let (outcomes, [ok, _]) = outcome_counters("x_total", "Xs.", ["ok", "failed"]);
        Fixed { outcomes, ok, y: gauge("y", "Y."), z: float_gauge("z_seconds", "Z.") }
    }

    #[test]
    fn families_render_help_type_and_every_outcome() {
        let f = fixed();
        f.ok.inc_by(3);
        f.y.set(3);
        f.z.set(1.5);
        assert_eq!(
            f.render(),
            "# HELP x_total Xs.\n# TYPE x_total counter\nx_total{outcome=\"failed\"} 0\nx_total{outcome=\"ok\"} 3\n\
             # HELP y Y.\n# TYPE y gauge\ny 3\n\
             # HELP z_seconds Z.\n# TYPE z_seconds gauge\nz_seconds 1.5\n"
        );
    }

    #[test]
    fn the_registry_renders_every_family_and_keeps_the_first_of_a_name_registered_twice() {
        let (a, b) = (Arc::new(fixed()), Arc::new(fixed()));
        a.ok.inc();
        b.ok.inc_by(7);
        let mut r = Registry::default();
        r.register(a);
        r.register(b);
        let text = r.render();
        assert!(text.contains("x_total{outcome=\"ok\"} 1\n"), "{text}");
        assert_eq!(text.matches("# TYPE x_total counter").count(), 1, "{text}");
    }
}
