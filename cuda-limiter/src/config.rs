//! Owns the limits: parsing `CUDA_DEVICE_MEMORY_LIMIT[_i]` and `CUDA_DEVICE_SM_LIMIT[_i]` into
//! per-device limits. Pure: the environment is passed in as a lookup function.

use std::fmt;

/// The most devices the limiter tracks; a device beyond this index gets the un-suffixed limit,
/// and with a memory limit its allocations are refused (fail closed).
pub const MAX_DEVICES: usize = 16;

/// A limit value that could not be parsed; the limiter logs it and fails closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLimit {
    pub variable: String,
    pub value: String,
    pub reason: &'static str,
}

impl fmt::Display for BadLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.variable, self.value, self.reason)
    }
}

/// The limits of one device. `None` means unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceLimit {
    pub memory_bytes: Option<u64>,
    /// Percent of the device's SMs, 1..=99 (100 is unlimited and stored as `None`).
    pub sm_percent: Option<u32>,
}

/// Limits of every device index the container may see, plus the errors met while parsing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub devices: [DeviceLimit; MAX_DEVICES],
    /// What the un-suffixed variables say: the limit of devices beyond `MAX_DEVICES`.
    pub default: DeviceLimit,
    pub errors: Vec<BadLimit>,
}

impl Limits {
    pub fn device(&self, index: usize) -> DeviceLimit {
        self.devices.get(index).copied().unwrap_or(self.default)
    }

    pub fn any(&self) -> bool {
        self.devices.iter().any(|d| d.memory_bytes.is_some() || d.sm_percent.is_some())
    }
}

pub const MEMORY_VAR: &str = "CUDA_DEVICE_MEMORY_LIMIT";
pub const SM_VAR: &str = "CUDA_DEVICE_SM_LIMIT";

/// Reads the limits: the un-suffixed variable is the default for every device, `_<i>` overrides
/// device `i`. A value that does not parse fails closed: memory limit 0 (every allocation is
/// refused) and 1 % of the SMs, so a typo never silently removes isolation.
pub fn limits_from(lookup: impl Fn(&str) -> Option<String>) -> Limits {
    let mut limits = Limits::default();
    let mut read = |name: String, parse: fn(&str) -> Result<u64, &'static str>, fallback: u64| -> Option<u64> {
        let value = lookup(&name)?;
        match parse(&value) {
            Ok(v) => Some(v),
            Err(reason) => {
                limits.errors.push(BadLimit { variable: name, value, reason });
                Some(fallback)
            }
        }
    };
    let memory_default = read(MEMORY_VAR.to_string(), parse_size, 0);
    let sm_default = read(SM_VAR.to_string(), parse_sm, 1);
    let mut devices = [DeviceLimit::default(); MAX_DEVICES];
    for (i, device) in devices.iter_mut().enumerate() {
        let memory = read(format!("{MEMORY_VAR}_{i}"), parse_size, 0).or(memory_default);
        let sm = read(format!("{SM_VAR}_{i}"), parse_sm, 1).or(sm_default);
        *device = DeviceLimit { memory_bytes: memory, sm_percent: sm.and_then(|p| (p < 100).then_some(p as u32)) };
    }
    limits.devices = devices;
    limits.default = DeviceLimit {
        memory_bytes: memory_default,
        sm_percent: sm_default.and_then(|p| (p < 100).then_some(p as u32)),
    };
    limits
}

/// Parses a memory size: a whole number with an optional binary unit (`k`, `m`, `g`, `t`,
/// optionally followed by `i`/`b`/`ib`, any case). `20480m` is 20480 MiB; a bare number is bytes.
pub fn parse_size(value: &str) -> Result<u64, &'static str> {
    let value = value.trim();
    let digits_end = value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len());
    if digits_end == 0 {
        return Err("expected a number of bytes with an optional unit k/m/g/t");
    }
    let number: u64 = value[..digits_end].parse().map_err(|_| "number too large")?;
    let unit = value[digits_end..].trim().to_ascii_lowercase();
    let unit = unit.trim_end_matches('b').trim_end_matches('i');
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err("unknown unit (expected k, m, g or t)"),
    };
    number.checked_mul(1u64 << shift).ok_or("size too large")
}

/// Parses an SM share in percent, 1..=100.
pub fn parse_sm(value: &str) -> Result<u64, &'static str> {
    let value = value.trim().trim_end_matches('%');
    let number: u64 = value.parse().map_err(|_| "expected a whole percentage 1..100")?;
    if !(1..=100).contains(&number) {
        return Err("percentage out of range 1..100");
    }
    Ok(number)
}

/// `GRUS_CUDA_LIMITER=off|0|false|disabled` turns every hook into a pass-through.
pub fn disabled(value: Option<&str>) -> bool {
    matches!(value.map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("off" | "0" | "false" | "disabled" | "no"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(parse_size("20480m"), Ok(20480 << 20));
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("").is_err());
        assert!(parse_size("m").is_err());
        assert!(parse_size("12x").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999t").is_err());
    }

    #[test]
    fn sm_is_a_percentage() {
        assert_eq!(parse_sm("25"), Ok(25));
        assert_eq!(parse_sm("50%"), Ok(50));
        assert!(parse_sm("0").is_err());
        assert!(parse_sm("101").is_err());
        assert!(parse_sm("half").is_err());
    }

    #[test]
    fn default_applies_to_every_device_and_index_overrides() {
        let limits = limits_from(env(&[
            ("CUDA_DEVICE_MEMORY_LIMIT", "1g"),
            ("CUDA_DEVICE_MEMORY_LIMIT_1", "2g"),
            ("CUDA_DEVICE_SM_LIMIT_3", "30"),
        ]));
        assert!(limits.errors.is_empty());
        assert_eq!(limits.device(0).memory_bytes, Some(1 << 30));
        assert_eq!(limits.device(1).memory_bytes, Some(2 << 30));
        assert_eq!(limits.device(15).memory_bytes, Some(1 << 30), "the last device is limited too");
        assert_eq!(limits.device(40).memory_bytes, Some(1 << 30), "devices beyond the table too");
        assert_eq!(limits.device(3).sm_percent, Some(30));
        assert_eq!(limits.device(0).sm_percent, None);
    }

    #[test]
    fn the_device_plugin_env_parses() {
        // What cluster-agent's device plugin hands a container with two shares.
        let limits = limits_from(env(&[
            ("CUDA_DEVICE_MEMORY_LIMIT_0", "16384m"),
            ("CUDA_DEVICE_SM_LIMIT_0", "100"),
            ("CUDA_DEVICE_MEMORY_LIMIT_1", "8192m"),
            ("CUDA_DEVICE_SM_LIMIT_1", "50"),
        ]));
        assert_eq!(limits.device(0), DeviceLimit { memory_bytes: Some(16384 << 20), sm_percent: None });
        assert_eq!(limits.device(1), DeviceLimit { memory_bytes: Some(8192 << 20), sm_percent: Some(50) });
        assert_eq!(limits.device(2), DeviceLimit::default());
    }

    #[test]
    fn bad_values_fail_closed_and_are_reported() {
        let limits = limits_from(env(&[("CUDA_DEVICE_MEMORY_LIMIT", "lots"), ("CUDA_DEVICE_SM_LIMIT_0", "250")]));
        assert_eq!(limits.errors.len(), 2);
        assert_eq!(limits.device(0), DeviceLimit { memory_bytes: Some(0), sm_percent: Some(1) });
        assert_eq!(limits.device(5).memory_bytes, Some(0));
        assert!(limits.errors[0].to_string().contains("CUDA_DEVICE_MEMORY_LIMIT"));
    }

    #[test]
    fn off_switch() {
        assert!(disabled(Some("off")));
        assert!(disabled(Some(" FALSE ")));
        assert!(!disabled(Some("on")));
        assert!(!disabled(None));
    }

    proptest! {
        #[test]
        fn mebibytes_roundtrip(n in 0u64..(1 << 40)) {
            prop_assert_eq!(parse_size(&format!("{n}m")), Ok(n << 20));
            prop_assert_eq!(parse_size(&n.to_string()), Ok(n));
        }

        #[test]
        fn parse_never_panics(s in ".{0,12}") {
            let _ = parse_size(&s);
            let _ = parse_sm(&s);
        }
    }
}
