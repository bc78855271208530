//! Trace variants: new pod lists made from a base trace by resampling its own pods, the way
//! the FGD paper's variants (`cpu050`, `gpushare40`, `gpuspec10`, `multigpu20`) were made
//! from `default`, so that a placement policy can be measured on workloads nobody tuned it
//! for.
//!
//! A [`VariantSpec`] names up to four stresses, written `cpu30+share60+spec20+multi30`:
//! - `cpuX`: X % of the pods are CPU-only; the GPU pods stay. Fewer than the base has: a
//!   random subset of its CPU-only pods; more: all of them plus pods drawn from them with
//!   replacement (`default` is at 13.3 %, `cpu050` at 5.0 %: the paper's `cpuNNN` is N/10 %).
//! - `shareX`: GPU-sharing pods (one GPU, under 1000 milli) hold X % of the GPU pods' GPU
//!   milli. Random whole-GPU single-GPU pods are replaced by shares drawn from the base's
//!   shares until the share reaches X %; the pod count stays (as in `gpushare40`).
//! - `multiX`: multi-GPU pods hold X % of the GPU milli; random single-GPU pods are replaced
//!   by multi-GPU pods drawn from the base's (as in `multigpu20`).
//! - `specX`: X % of the GPU pods may run only on some GPU models; each such pod gets a model
//!   list drawn from `spec_pool`, the lists the real trace's constrained pods carry (the
//!   `gpuspec10` file's), as `gpuspec10` did with 10 %.
//!
//! Stresses apply in that order (CPU, share, multi, then spec over the final GPU pods); a
//! stress below the base's own level leaves it as is. The result is shuffled and renamed
//! `openb-pod-NNNNN`, so name order (the replay's starting order) is random. A variant is a
//! pure function of the base, the node list, the spec pool, the spec and the seed.

use std::fmt;

use crate::rng::SeededRng;
use crate::trace::PodRow;

/// Which stresses a variant applies, each as a percentage (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VariantSpec {
    pub cpu_only_pods_pct: Option<f64>,
    pub share_milli_pct: Option<f64>,
    pub multi_milli_pct: Option<f64>,
    pub spec_pods_pct: Option<f64>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VariantError {
    #[error("bad variant `{0}`: expected stresses like `cpu30+share60+multi30+spec20` (percentages 0..=100)")]
    Syntax(String),
    #[error("variant `{spec}` needs {what} in the base trace, and it has none")]
    NoSource { spec: String, what: &'static str },
    #[error("variant `{0}` asks for model constraints but the spec pool is empty")]
    NoSpecPool(String),
}

impl std::str::FromStr for VariantSpec {
    type Err = VariantError;

    fn from_str(s: &str) -> Result<VariantSpec, VariantError> {
        let bad = || VariantError::Syntax(s.to_string());
        let mut spec = VariantSpec::default();
        for part in s.split('+').map(str::trim) {
            let split = part.find(|c: char| c.is_ascii_digit()).ok_or_else(bad)?;
            let (name, value) = part.split_at(split);
            let pct: f64 = value.parse().map_err(|_| bad())?;
            if !(0.0..=100.0).contains(&pct) {
                return Err(bad());
            }
            let slot = match name {
                "cpu" => &mut spec.cpu_only_pods_pct,
                "share" => &mut spec.share_milli_pct,
                "multi" => &mut spec.multi_milli_pct,
                "spec" => &mut spec.spec_pods_pct,
                _ => return Err(bad()),
            };
            if slot.replace(pct).is_some() {
                return Err(bad());
            }
        }
        Ok(spec)
    }
}

impl fmt::Display for VariantSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [
            ("cpu", self.cpu_only_pods_pct),
            ("share", self.share_milli_pct),
            ("multi", self.multi_milli_pct),
            ("spec", self.spec_pods_pct),
        ];
        let mut first = true;
        for (name, pct) in parts {
            if let Some(pct) = pct {
                write!(f, "{}{name}{pct}", if first { "" } else { "+" })?;
                first = false;
            }
        }
        if first {
            f.write_str("base")?;
        }
        Ok(())
    }
}

fn is_cpu_only(p: &PodRow) -> bool {
    p.num_gpu == 0
}

fn is_share(p: &PodRow) -> bool {
    p.num_gpu == 1 && p.gpu_milli < 1000
}

fn is_multi(p: &PodRow) -> bool {
    p.num_gpu > 1
}

fn is_whole_single(p: &PodRow) -> bool {
    p.num_gpu == 1 && p.gpu_milli >= 1000
}

/// Share of the GPU pods' milli held by pods that match `which`, in percent.
fn milli_pct(pods: &[PodRow], which: fn(&PodRow) -> bool) -> f64 {
    let total: u64 = pods.iter().map(PodRow::total_gpu_milli).sum();
    if total == 0 {
        return 0.0;
    }
    let part: u64 = pods.iter().filter(|p| which(p)).map(PodRow::total_gpu_milli).sum();
    100.0 * part as f64 / total as f64
}

/// Replaces random pods matching `victim` by pods drawn from `source` until the milli share
/// of pods matching `which` reaches `pct` (or no victim is left).
fn raise_milli_share(
    pods: &mut [PodRow],
    source: &[PodRow],
    which: fn(&PodRow) -> bool,
    victim: fn(&PodRow) -> bool,
    pct: f64,
    rng: &mut SeededRng,
) {
    let mut victims: Vec<usize> = (0..pods.len()).filter(|&i| victim(&pods[i])).collect();
    rng.shuffle(&mut victims);
    let total: u64 = pods.iter().map(PodRow::total_gpu_milli).sum();
    let part: u64 = pods.iter().filter(|p| which(p)).map(PodRow::total_gpu_milli).sum();
    let (mut total, mut part) = (total as f64, part as f64);
    for i in victims {
        if total > 0.0 && 100.0 * part / total >= pct {
            break;
        }
        let new = source[rng.below(source.len())].clone();
        total += new.total_gpu_milli() as f64 - pods[i].total_gpu_milli() as f64;
        part += new.total_gpu_milli() as f64;
        pods[i] = new;
    }
}

/// Builds the variant `spec` of `base` (see the module doc); `spec_pool` holds the model
/// lists `specX` draws from.
pub fn generate(
    base: &[PodRow],
    spec_pool: &[String],
    spec: &VariantSpec,
    seed: u64,
) -> Result<Vec<PodRow>, VariantError> {
    let name = spec.to_string();
    let no_source = |what| VariantError::NoSource { spec: name.clone(), what };
    let mut rng = SeededRng::new(seed);
    let mut pods: Vec<PodRow> = base.to_vec();

    if let Some(pct) = spec.cpu_only_pods_pct {
        let source: Vec<PodRow> = base.iter().filter(|p| is_cpu_only(p)).cloned().collect();
        if source.is_empty() {
            return Err(no_source("CPU-only pods"));
        }
        pods.retain(|p| !is_cpu_only(p));
        if pct >= 100.0 {
            return Err(VariantError::Syntax(name));
        }
        let want = (pods.len() as f64 * pct / (100.0 - pct)).round() as usize;
        let mut kept = source.clone();
        rng.shuffle(&mut kept);
        kept.truncate(want);
        while kept.len() < want {
            kept.push(source[rng.below(source.len())].clone());
        }
        pods.extend(kept);
    }
    if let Some(pct) = spec.share_milli_pct {
        if milli_pct(&pods, is_share) < pct {
            let source: Vec<PodRow> = base.iter().filter(|p| is_share(p)).cloned().collect();
            if source.is_empty() {
                return Err(no_source("GPU-sharing pods"));
            }
            raise_milli_share(&mut pods, &source, is_share, is_whole_single, pct, &mut rng);
        }
    }
    if let Some(pct) = spec.multi_milli_pct {
        if milli_pct(&pods, is_multi) < pct {
            let source: Vec<PodRow> = base.iter().filter(|p| is_multi(p)).cloned().collect();
            if source.is_empty() {
                return Err(no_source("multi-GPU pods"));
            }
            let single = |p: &PodRow| p.num_gpu == 1;
            raise_milli_share(&mut pods, &source, is_multi, single, pct, &mut rng);
        }
    }
    if let Some(pct) = spec.spec_pods_pct {
        if spec_pool.is_empty() {
            return Err(VariantError::NoSpecPool(name));
        }
        let mut gpu_pods: Vec<usize> = (0..pods.len()).filter(|&i| pods[i].num_gpu > 0).collect();
        let have = gpu_pods.iter().filter(|&&i| !pods[i].gpu_spec.is_empty()).count();
        let want = (gpu_pods.len() as f64 * pct / 100.0).round() as usize;
        gpu_pods.retain(|&i| pods[i].gpu_spec.is_empty());
        rng.shuffle(&mut gpu_pods);
        for &i in gpu_pods.iter().take(want.saturating_sub(have)) {
            pods[i].gpu_spec = spec_pool[rng.below(spec_pool.len())].clone();
        }
    }

    rng.shuffle(&mut pods);
    for (i, p) in pods.iter_mut().enumerate() {
        p.name = format!("openb-pod-{i:05}");
        p.line = i + 2;
    }
    Ok(pods)
}

/// The model lists of the pods that carry one, in file order: the pool `specX` draws from.
pub fn spec_pool(pods: &[PodRow]) -> Vec<String> {
    pods.iter().filter(|p| !p.gpu_spec.is_empty()).map(|p| p.gpu_spec.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(cpu: u64, num_gpu: u32, gpu_milli: u32) -> PodRow {
        PodRow::bare("", cpu, num_gpu, gpu_milli)
    }

    fn base() -> Vec<PodRow> {
        let mut pods = Vec::new();
        for i in 0..400 {
            pods.push(match i % 10 {
                0 => pod(2000, 0, 0),
                1..=3 => pod(4000, 1, 500),
                4 => pod(16000, 4, 1000),
                _ => pod(8000, 1, 1000),
            });
        }
        pods
    }

    #[test]
    fn specs_parse_and_print_back() {
        let s: VariantSpec = "cpu30+share60+multi25.5+spec20".parse().unwrap();
        assert_eq!(s.cpu_only_pods_pct, Some(30.0));
        assert_eq!(s.multi_milli_pct, Some(25.5));
        assert_eq!(s.to_string(), "cpu30+share60+multi25.5+spec20");
        for bad in ["", "cpu", "gpu30", "cpu30+cpu20", "cpu130", "share-5", "cpu30,share5"] {
            assert!(bad.parse::<VariantSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn each_stress_reaches_its_level_and_keeps_the_rest() {
        let pool = vec!["T4".to_string(), "V100M16|V100M32".to_string()];
        // 360 GPU pods; 30 % CPU-only is 154 of 514 (more than the base's 40: drawn again).
        let v = generate(&base(), &pool, &"cpu30".parse().unwrap(), 1).unwrap();
        assert_eq!(v.iter().filter(|p| p.num_gpu == 0).count(), 154);
        assert_eq!(v.iter().filter(|p| p.num_gpu > 0).count(), 360, "GPU pods untouched");
        // 5 %: 19 of the base's 40 CPU-only pods.
        let v = generate(&base(), &pool, &"cpu5".parse().unwrap(), 1).unwrap();
        assert_eq!(v.iter().filter(|p| p.num_gpu == 0).count(), 19);

        // Shares hold 14 % of the GPU milli; 40 % takes 155 of the 200 whole single GPUs.
        let v = generate(&base(), &pool, &"share40".parse().unwrap(), 1).unwrap();
        assert_eq!(v.len(), 400);
        let pct = milli_pct(&v, is_share);
        assert!((40.0..40.5).contains(&pct), "{pct}");
        // Past what the victims allow it stops: every whole single GPU replaced, 50 %.
        let v = generate(&base(), &pool, &"share90".parse().unwrap(), 1).unwrap();
        assert_eq!(v.iter().filter(|p| is_whole_single(p)).count(), 0);

        let v = generate(&base(), &pool, &"multi70".parse().unwrap(), 1).unwrap();
        assert!(milli_pct(&v, is_multi) >= 70.0);

        let v = generate(&base(), &pool, &"spec25".parse().unwrap(), 1).unwrap();
        let gpu = v.iter().filter(|p| p.num_gpu > 0).count();
        let constrained = v.iter().filter(|p| !p.gpu_spec.is_empty()).count();
        assert_eq!(constrained, (gpu as f64 * 0.25).round() as usize);
        assert!(v.iter().all(|p| p.gpu_spec.is_empty() || pool.contains(&p.gpu_spec)));
    }

    #[test]
    fn a_variant_is_a_pure_function_of_its_seed_and_renames_in_random_order() {
        let pool = vec!["T4".to_string()];
        let spec: VariantSpec = "cpu25+share50+spec10".parse().unwrap();
        let a = generate(&base(), &pool, &spec, 7).unwrap();
        assert_eq!(a, generate(&base(), &pool, &spec, 7).unwrap());
        assert_ne!(a, generate(&base(), &pool, &spec, 8).unwrap());
        assert_eq!(a[0].name, "openb-pod-00000");
        assert!(a.windows(2).all(|w| w[0].name < w[1].name));
    }

    #[test]
    fn a_stress_without_source_pods_is_an_error() {
        let no_cpu: Vec<PodRow> = base().into_iter().filter(|p| p.num_gpu > 0).collect();
        let err = generate(&no_cpu, &[], &"cpu20".parse().unwrap(), 1).unwrap_err();
        assert!(matches!(err, VariantError::NoSource { .. }));
        let err = generate(&base(), &[], &"spec20".parse().unwrap(), 1).unwrap_err();
        assert!(matches!(err, VariantError::NoSpecPool(_)));
    }
}
