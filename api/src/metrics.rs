//! Prometheus text exposition: the family trait, the writers every family shares, and the
//! registry that `/metrics` renders.
//!
//! A leaf: it imports nothing from the crate. Each loop owns its family (a struct of atomics
//! in its own module: `IngestMetrics`, `AdmissionMetrics`, `JobCacheMetrics`,
//! `AllocatorMetrics`, the HTTP layer's `RequestMetrics`), counts into it directly, and the
//! server registers the families it runs; the HTTP layer only renders the registry.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// One group of metrics with its HELP and TYPE lines.
pub trait MetricFamily: Send + Sync {
    /// Appends this family's Prometheus text to `out`.
    fn write(&self, out: &mut String);

    /// This family's Prometheus text alone.
    fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// The families `/metrics` shows, in the order they were registered.
#[derive(Clone, Default)]
pub struct Registry {
    families: Vec<Arc<dyn MetricFamily>>,
}

impl Registry {
    pub fn register(&mut self, family: Arc<dyn MetricFamily>) {
        self.families.push(family);
    }

    /// Every family's text, one after the other.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for family in &self.families {
            family.write(&mut out);
        }
        out
    }
}

/// Writes a counter family labelled by `outcome` (`name{outcome="<label>"} <value>`), with its
/// HELP and TYPE lines: the shape every loop's outcome counters share.
pub fn write_outcome_counters(out: &mut String, name: &str, help: &str, counters: &[(&str, &AtomicU64)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
    for (label, v) in counters {
        let _ = writeln!(out, "{name}{{outcome=\"{label}\"}} {}", v.load(Ordering::Relaxed));
    }
}

/// Writes unlabelled metrics, each `(name, kind, help, value)` with its HELP and TYPE lines.
pub fn write_plain_metrics(out: &mut String, metrics: &[(&str, &str, &str, &AtomicU64)]) {
    for (name, kind, help, v) in metrics {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}", v.load(Ordering::Relaxed));
    }
}

/// Writes one unlabelled gauge whose value is not a counter's integer.
pub fn write_gauge(out: &mut String, name: &str, help: &str, value: f64) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}");
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(&'static str);

    impl MetricFamily for Fixed {
        fn write(&self, out: &mut String) {
            out.push_str(self.0);
        }
    }

    #[test]
    fn registry_renders_families_in_registration_order() {
        let mut r = Registry::default();
        r.register(Arc::new(Fixed("a 1\n")));
        r.register(Arc::new(Fixed("b 2\n")));
        assert_eq!(r.render(), "a 1\nb 2\n");
    }

    #[test]
    fn writers_emit_help_type_and_samples() {
        let n = AtomicU64::new(3);
        let mut out = String::new();
        write_outcome_counters(&mut out, "x_total", "Xs.", &[("ok", &n)]);
        write_plain_metrics(&mut out, &[("y", "gauge", "Y.", &n)]);
        write_gauge(&mut out, "z_seconds", "Z.", 1.5);
        assert_eq!(
            out,
            "# HELP x_total Xs.\n# TYPE x_total counter\nx_total{outcome=\"ok\"} 3\n\
             # HELP y Y.\n# TYPE y gauge\ny 3\n\
             # HELP z_seconds Z.\n# TYPE z_seconds gauge\nz_seconds 1.5\n"
        );
    }
}
