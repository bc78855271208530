//! MIG geometry: which Multi-Instance GPU profiles a GPU model offers, where on the GPU each may
//! be placed, and where to place the next one so that large profiles stay placeable.
//!
//! A MIG-capable GPU is split into eight memory slices and seven compute slices. A GPU instance
//! of a profile takes a run of memory slices that starts at one of the profile's valid
//! positions, and some compute slices; instances never overlap, and their compute slices never
//! add up to more than seven. The positions are NVIDIA's (`nvidia-smi mig -lgipp`): for an
//! A100-40GB, `1g.5gb` at 0-6, `2g.10gb` at 0, 2 or 4, `3g.20gb` at 0 or 4, `4g.20gb` at 0 and
//! `7g.40gb` at 0 (so the eighth memory slice is only ever used by the profiles that span it).
//! A100-80GB and H100 (80 and 94 GB) have the same geometry with twice (or more) the memory per
//! slice and a `1g.*` profile with two memory slices, at 0, 2, 4 or 6.
//!
//! Placement is a choice among valid positions; the one taken is the one that leaves the most
//! room for the largest profiles still placeable ([`MigLayout::best_start`]), as the MIG
//! "fragmentation" measure of [`MigLayout::fragmentation`] counts it. An idle GPU may be
//! re-partitioned toward the waiting demand ([`repartition`]). Pure and small: a layout is a
//! bit mask of memory slices and a count of compute slices.

/// Memory slices of a MIG-capable GPU.
pub const MEMORY_SLICES: u8 = 8;
/// Compute slices of a MIG-capable GPU.
pub const COMPUTE_SLICES: u8 = 7;

/// One MIG profile of a GPU model: its name as the device plugin's mixed strategy advertises it
/// (`nvidia.com/mig-<name>`), its size and where it may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MigProfile {
    pub name: &'static str,
    /// Compute slices it takes.
    pub compute: u8,
    /// Memory slices it takes (a run of this many, from its start).
    pub memory: u8,
    /// The memory slices it may start at.
    pub starts: &'static [u8],
    /// Its memory in MiB.
    pub memory_mib: u64,
}

const fn p(name: &'static str, compute: u8, memory: u8, starts: &'static [u8], memory_mib: u64) -> MigProfile {
    MigProfile { name, compute, memory, starts, memory_mib }
}

const A100_40GB: &[MigProfile] = &[
    p("1g.5gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6], 4_864),
    p("2g.10gb", 2, 2, &[0, 2, 4], 9_856),
    p("3g.20gb", 3, 4, &[0, 4], 19_968),
    p("4g.20gb", 4, 4, &[0], 19_968),
    p("7g.40gb", 7, 8, &[0], 40_192),
];

const A100_80GB: &[MigProfile] = &[
    p("1g.10gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6], 9_728),
    p("1g.20gb", 1, 2, &[0, 2, 4, 6], 19_968),
    p("2g.20gb", 2, 2, &[0, 2, 4], 19_968),
    p("3g.40gb", 3, 4, &[0, 4], 40_192),
    p("4g.40gb", 4, 4, &[0], 40_192),
    p("7g.80gb", 7, 8, &[0], 80_384),
];

const H100_80GB: &[MigProfile] = &[
    p("1g.10gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6], 10_240),
    p("1g.20gb", 1, 2, &[0, 2, 4, 6], 20_480),
    p("2g.20gb", 2, 2, &[0, 2, 4], 20_480),
    p("3g.40gb", 3, 4, &[0, 4], 40_960),
    p("4g.40gb", 4, 4, &[0], 40_960),
    p("7g.80gb", 7, 8, &[0], 81_920),
];

const H100_94GB: &[MigProfile] = &[
    p("1g.12gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6], 12_288),
    p("1g.24gb", 1, 2, &[0, 2, 4, 6], 24_576),
    p("2g.24gb", 2, 2, &[0, 2, 4], 24_576),
    p("3g.47gb", 3, 4, &[0, 4], 48_128),
    p("4g.47gb", 4, 4, &[0], 48_128),
    p("7g.94gb", 7, 8, &[0], 96_256),
];

/// The MIG profiles of a GPU model as the inventory names it (`A100-80GB`, `H100-SXM-80GB`,
/// `NVIDIA H100 NVL`...), smallest first; none for a model without MIG (T4, V100, L4...).
pub fn profiles_of(model: &str) -> Option<&'static [MigProfile]> {
    let m = model.to_ascii_uppercase();
    if m.contains("A100") {
        Some(if m.contains("40") { A100_40GB } else { A100_80GB })
    } else if m.contains("H100") || m.contains("H200") || m.contains("GH200") {
        Some(if m.contains("94") || m.contains("NVL") { H100_94GB } else { H100_80GB })
    } else {
        None
    }
}

/// The profile named `name` among `profiles`.
pub fn profile<'a>(profiles: &'a [MigProfile], name: &str) -> Option<&'a MigProfile> {
    profiles.iter().find(|p| p.name == name)
}

/// Every model's table, for what holds across models.
const TABLES: [&[MigProfile]; 4] = [A100_40GB, A100_80GB, H100_80GB, H100_94GB];

/// The profile of this name on any model that offers it: its compute and memory slices and
/// positions are the same on every such model (only `memory_mib` differs). `None` for a name
/// no supported model offers.
pub fn known_profile(name: &str) -> Option<&'static MigProfile> {
    TABLES.iter().find_map(|t| profile(t, name))
}

/// Every profile name some supported model offers, sorted; what an error lists.
pub fn known_profile_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = TABLES.iter().flat_map(|t| t.iter().map(|p| p.name)).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether `model` offers the profile `name`.
pub fn model_offers(model: &str, name: &str) -> bool {
    profiles_of(model).is_some_and(|t| profile(t, name).is_some())
}

/// A profile's instance counted in GPU milli, for quotas, fair share and billing: its share of
/// the seven compute slices, rounded down so that instances filling a GPU never count more
/// than the whole GPU (a `7g` is exactly 1000).
pub fn milli_of(profile: &MigProfile) -> u32 {
    u32::from(profile.compute) * 1000 / u32::from(COMPUTE_SLICES)
}

/// One placed GPU instance: where it starts and what it takes. What a replica holding a MIG
/// device records, enough to give the slices back without the profile table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MigSlot {
    pub start: u8,
    pub compute: u8,
    pub memory: u8,
}

impl MigSlot {
    pub fn of(profile: &MigProfile, start: u8) -> MigSlot {
        MigSlot { start, compute: profile.compute, memory: profile.memory }
    }

    /// The profile among `profiles` this slot is an instance of, if it sits at one of that
    /// profile's valid positions.
    pub fn profile_in<'a>(&self, profiles: &'a [MigProfile]) -> Option<&'a MigProfile> {
        profiles.iter().find(|p| p.compute == self.compute && p.memory == self.memory && p.starts.contains(&self.start))
    }
}

/// The GPU instances on one GPU: which memory slices they take and how many compute slices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MigLayout {
    /// Bit `i`: memory slice `i` is taken.
    pub memory: u8,
    pub compute: u8,
}

fn run(start: u8, len: u8) -> u8 {
    let bits = if len >= 8 { u8::MAX } else { (1u8 << len) - 1 };
    bits << start
}

impl MigLayout {
    /// Whether `profile` fits at `start` (a valid position, free slices, compute left).
    pub fn fits_at(&self, profile: &MigProfile, start: u8) -> bool {
        profile.starts.contains(&start)
            && start + profile.memory <= MEMORY_SLICES
            && self.memory & run(start, profile.memory) == 0
            && self.compute + profile.compute <= COMPUTE_SLICES
    }

    /// Whether `slot` can be added: its slices free and compute left (the position's validity
    /// for a model is [`MigSlot::profile_in`]'s question).
    pub fn can_take(&self, slot: MigSlot) -> bool {
        slot.start + slot.memory <= MEMORY_SLICES
            && self.memory & run(slot.start, slot.memory) == 0
            && self.compute + slot.compute <= COMPUTE_SLICES
    }

    /// The layout with `slot` added (which [`can_take`](MigLayout::can_take) allowed).
    pub fn take(&self, slot: MigSlot) -> MigLayout {
        debug_assert!(self.can_take(slot));
        MigLayout { memory: self.memory | run(slot.start, slot.memory), compute: self.compute + slot.compute }
    }

    /// Whether every slice of `slot` is taken here (it may be given back).
    pub fn holds(&self, slot: MigSlot) -> bool {
        let bits = run(slot.start, slot.memory);
        self.memory & bits == bits && self.compute >= slot.compute
    }

    /// The layout with `slot` given back.
    pub fn give_back(&self, slot: MigSlot) -> MigLayout {
        MigLayout {
            memory: self.memory & !run(slot.start, slot.memory),
            compute: self.compute.saturating_sub(slot.compute),
        }
    }

    /// Every position `profile` fits at now.
    pub fn free_starts<'a>(&'a self, profile: &'a MigProfile) -> impl Iterator<Item = u8> + 'a {
        profile.starts.iter().copied().filter(move |s| self.fits_at(profile, *s))
    }

    /// The lowest position `profile` fits at now.
    pub fn first_free(&self, profile: &MigProfile) -> Option<u8> {
        self.free_starts(profile).next()
    }

    /// The layout with `profile` placed at `start` (which must fit).
    pub fn with(&self, profile: &MigProfile, start: u8) -> MigLayout {
        debug_assert!(self.fits_at(profile, start));
        MigLayout { memory: self.memory | run(start, profile.memory), compute: self.compute + profile.compute }
    }

    /// The layout with an instance of `profile` at `start` removed.
    pub fn without(&self, profile: &MigProfile, start: u8) -> MigLayout {
        MigLayout {
            memory: self.memory & !run(start, profile.memory),
            compute: self.compute.saturating_sub(profile.compute),
        }
    }

    /// How many more instances of `profile` fit, this one profile alone filling the GPU.
    pub fn instances_left(&self, profile: &MigProfile) -> u32 {
        let (mut layout, mut n) = (*self, 0u32);
        while let Some(s) = layout.first_free(profile) {
            layout = layout.with(profile, s);
            n += 1;
        }
        n
    }

    /// What is still placeable, weighed towards large profiles: for each profile, its compute
    /// slices times the number of its instances that could still be placed one after another
    /// (greedily, at the lowest free position). Higher is better.
    pub fn room(&self, profiles: &[MigProfile]) -> u32 {
        profiles.iter().map(|p| self.instances_left(p) * u32::from(p.compute) * u32::from(p.compute)).sum()
    }

    /// Where to place `profile`: the valid free position after which the most [`room`] is left
    /// (ties: the lowest position); `None` when it fits nowhere.
    ///
    /// [`room`]: MigLayout::room
    pub fn best_start(&self, profiles: &[MigProfile], profile: &MigProfile) -> Option<u8> {
        let mut best: Option<(u32, u8)> = None;
        for s in self.free_starts(profile) {
            let left = self.with(profile, s).room(profiles);
            if best.is_none_or(|(room, _)| left > room) {
                best = Some((left, s));
            }
        }
        best.map(|(_, s)| s)
    }

    /// The largest profile (by compute slices) still placeable, if any.
    pub fn largest_placeable<'a>(&self, profiles: &'a [MigProfile]) -> Option<&'a MigProfile> {
        profiles.iter().filter(|p| self.first_free(p).is_some()).max_by_key(|p| (p.compute, p.memory))
    }

    /// MIG fragmentation, 0 to 1: the share of the free compute slices that the largest
    /// placeable profile cannot use. 0 on an empty or full GPU, or when one instance can take
    /// everything free; close to 1 when free slices are scattered between instances.
    pub fn fragmentation(&self, profiles: &[MigProfile]) -> f64 {
        let free = COMPUTE_SLICES - self.compute;
        if free == 0 {
            return 0.0;
        }
        let largest = self.largest_placeable(profiles).map_or(0, |p| p.compute);
        f64::from(free - largest.min(free)) / f64::from(free)
    }
}

/// A layout for an idle GPU that serves the waiting demand best: the instances of `wanted`
/// (profiles in order of preference, one entry per instance wanted) that can be placed
/// together, each taken only if it fits beside every one taken before it (so earlier requests
/// win), with their positions. Dynamic re-partitioning: the agent applies it to a GPU with no
/// instance in use. Exhaustive over positions, which is cheap: a GPU holds at most seven
/// instances.
pub fn repartition(wanted: &[MigProfile]) -> Vec<(MigProfile, u8)> {
    let mut taken: Vec<MigProfile> = Vec::new();
    let mut layout = Vec::new();
    for w in wanted {
        let mut trial = taken.clone();
        trial.push(*w);
        if let Some(found) = arrange(&trial) {
            taken = trial;
            layout = found;
        }
    }
    layout
}

/// Positions for all of `instances` on one empty GPU, if they fit together.
fn arrange(instances: &[MigProfile]) -> Option<Vec<(MigProfile, u8)>> {
    // Largest first: the fewest positions, so the search fails fast.
    let mut order: Vec<MigProfile> = instances.to_vec();
    order.sort_by_key(|p| std::cmp::Reverse((p.memory, p.compute)));
    let mut placed = Vec::with_capacity(order.len());
    place_from(&order, MigLayout::default(), &mut placed).then_some(placed)
}

fn place_from(rest: &[MigProfile], layout: MigLayout, placed: &mut Vec<(MigProfile, u8)>) -> bool {
    let Some((first, rest)) = rest.split_first() else { return true };
    for start in first.starts.iter().copied().filter(|s| layout.fits_at(first, *s)) {
        placed.push((*first, start));
        if place_from(rest, layout.with(first, start), placed) {
            return true;
        }
        placed.pop();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a100() -> &'static [MigProfile] {
        profiles_of("A100-SXM4-80GB").unwrap()
    }

    fn place(layout: MigLayout, name: &str) -> Option<MigLayout> {
        let p = profile(a100(), name).unwrap();
        layout.best_start(a100(), p).map(|s| layout.with(p, s))
    }

    #[test]
    fn models_have_their_own_profiles_and_others_none() {
        assert_eq!(profiles_of("A100-40GB").unwrap()[0].name, "1g.5gb");
        assert_eq!(profiles_of("A100-80GB").unwrap()[0].name, "1g.10gb");
        assert_eq!(profiles_of("NVIDIA H100 80GB HBM3").unwrap().last().unwrap().name, "7g.80gb");
        assert_eq!(profiles_of("H100-NVL").unwrap().last().unwrap().name, "7g.94gb");
        for model in ["T4", "V100-32GB", "L4", "A10"] {
            assert!(profiles_of(model).is_none(), "{model}");
        }
    }

    #[test]
    fn the_geometry_allows_what_nvidia_allows() {
        let empty = MigLayout::default();
        // A 4g and a 3g fill a GPU; two 4g do not fit, nor a 7g beside anything.
        let half = place(empty, "4g.40gb").unwrap();
        assert!(place(half, "4g.40gb").is_none());
        let full = place(half, "3g.40gb").unwrap();
        assert_eq!((full.memory, full.compute), (u8::MAX, 7));
        assert!(place(place(empty, "1g.10gb").unwrap(), "7g.80gb").is_none());
        // Seven 1g instances, never on the eighth memory slice; then nothing more.
        let mut layout = empty;
        for _ in 0..7 {
            layout = place(layout, "1g.10gb").unwrap();
        }
        assert_eq!((layout.memory, layout.compute), (0b0111_1111, 7));
        assert!(place(layout, "1g.10gb").is_none());
        // A 1g.20gb may take the last two memory slices; a 2g may not start at 6.
        let one = profile(a100(), "1g.20gb").unwrap();
        assert!(empty.fits_at(one, 6));
        assert!(!empty.fits_at(profile(a100(), "2g.20gb").unwrap(), 6));
    }

    #[test]
    fn small_instances_are_packed_to_keep_large_ones_placeable() {
        // Two 1g instances go side by side in one half: a 3g (and a 4g... no: 4g only at 0)
        // stays placeable in the other.
        let two = place(place(MigLayout::default(), "1g.10gb").unwrap(), "1g.10gb").unwrap();
        assert_eq!(two.memory.count_ones(), 2);
        assert!(two.memory & 0b1111_0000 == 0 || two.memory & 0b0000_1111 == 0, "{:08b}", two.memory);
        assert!(place(two, "3g.40gb").is_some());
        // A 3g goes where a 4g cannot: at 4, leaving 0 for a 4g.
        let three = place(MigLayout::default(), "3g.40gb").unwrap();
        assert!(place(three, "4g.40gb").is_some(), "{:08b}", three.memory);
    }

    #[test]
    fn fragmentation_counts_free_compute_the_largest_instance_cannot_use() {
        let p = |name| *profile(a100(), name).unwrap();
        let empty = MigLayout::default();
        assert_eq!(empty.fragmentation(a100()), 0.0);
        // 1g instances at 0 and 4: 5 compute slices free, the largest placeable is a 2g.
        let scattered = empty.with(&p("1g.10gb"), 0).with(&p("1g.10gb"), 4);
        assert!((scattered.fragmentation(a100()) - 3.0 / 5.0).abs() < 1e-9);
        // Packed at 0 and 1: a 3g still fits in the other half.
        let packed = empty.with(&p("1g.10gb"), 0).with(&p("1g.10gb"), 1);
        assert!(packed.fragmentation(a100()) < scattered.fragmentation(a100()));
        assert_eq!(empty.with(&p("7g.80gb"), 0).fragmentation(a100()), 0.0);
    }

    proptest::proptest! {
        /// A repartition is a valid layout, and no wanted instance left out would fit beside it.
        #[test]
        fn a_repartition_is_valid_and_leaves_out_only_what_does_not_fit(
            model in proptest::sample::select(vec!["A100-40GB", "A100-80GB", "H100-80GB"]),
            picks in proptest::collection::vec(0usize..6, 0..12),
        ) {
            let profiles = profiles_of(model).unwrap();
            let wanted: Vec<MigProfile> = picks.iter().map(|i| profiles[i % profiles.len()]).collect();
            let plan = repartition(&wanted);
            let mut layout = MigLayout::default();
            for (q, s) in &plan {
                proptest::prop_assert!(layout.fits_at(q, *s), "{plan:?}");
                layout = layout.with(q, *s);
            }
            let taken: Vec<MigProfile> = plan.iter().map(|(q, _)| *q).collect();
            for w in &wanted {
                let used = taken.iter().filter(|t| *t == w).count();
                let asked = wanted.iter().filter(|x| *x == w).count();
                if used < asked {
                    let mut more = taken.clone();
                    more.push(*w);
                    proptest::prop_assert!(arrange(&more).is_none(), "{} would still fit beside {plan:?}", w.name);
                }
            }
        }

        /// Any sequence of requests and releases on any MIG model: instances never overlap, never
        /// use more than seven compute slices, sit only at valid positions, and a request is
        /// refused only when no valid free position exists.
        #[test]
        fn placements_always_respect_the_geometry(
            model in proptest::sample::select(vec!["A100-40GB", "A100-80GB", "H100-80GB", "H100-NVL"]),
            ops in proptest::collection::vec((0usize..6, proptest::bool::ANY), 1..40),
        ) {
            let profiles = profiles_of(model).unwrap();
            let mut layout = MigLayout::default();
            let mut placed: Vec<(MigProfile, u8)> = Vec::new();
            for (pick, release) in ops {
                if release && !placed.is_empty() {
                    let (p, s) = placed.remove(pick % placed.len());
                    layout = layout.without(&p, s);
                    continue;
                }
                let p = profiles[pick % profiles.len()];
                match layout.best_start(profiles, &p) {
                    Some(s) => {
                        proptest::prop_assert!(p.starts.contains(&s));
                        layout = layout.with(&p, s);
                        placed.push((p, s));
                    }
                    None => proptest::prop_assert!(layout.first_free(&p).is_none()),
                }
                let mut memory = 0u8;
                for (q, s) in &placed {
                    proptest::prop_assert_eq!(memory & run(*s, q.memory), 0, "overlap");
                    memory |= run(*s, q.memory);
                }
                let compute: u8 = placed.iter().map(|(q, _)| q.compute).sum();
                proptest::prop_assert!(compute <= COMPUTE_SLICES);
                proptest::prop_assert_eq!(layout, MigLayout { memory, compute });
                let f = layout.fragmentation(profiles);
                proptest::prop_assert!((0.0..=1.0).contains(&f));
            }
        }
    }

    #[test]
    fn an_idle_gpu_is_repartitioned_toward_the_waiting_demand_earlier_requests_first() {
        let p = |name| *profile(a100(), name).unwrap();
        // A 4g, a 3g... and a 1g that no longer fits: the first two fill the GPU.
        let plan = repartition(&[p("4g.40gb"), p("3g.40gb"), p("1g.10gb")]);
        let names: Vec<(&str, u8)> = plan.iter().map(|(q, s)| (q.name, *s)).collect();
        assert_eq!(names, [("4g.40gb", 0), ("3g.40gb", 4)]);
        // Three 2g and a 1g: all fit (2g at 0, 2, 4; the 1g at 6).
        let plan = repartition(&[p("2g.20gb"), p("2g.20gb"), p("2g.20gb"), p("1g.10gb")]);
        assert_eq!(plan.len(), 4, "{plan:?}");
        // A 7g first takes the whole GPU; nothing after it.
        assert_eq!(repartition(&[p("7g.80gb"), p("1g.10gb")]).len(), 1);
        // Two 4g: only one fits; then a 3g beside it.
        let plan = repartition(&[p("4g.40gb"), p("4g.40gb"), p("3g.40gb")]);
        assert_eq!(plan.iter().map(|(q, _)| q.name).collect::<Vec<_>>(), ["4g.40gb", "3g.40gb"]);
    }

    #[test]
    fn removing_an_instance_frees_its_slices() {
        let p = *profile(a100(), "2g.20gb").unwrap();
        let layout = MigLayout::default().with(&p, 2);
        assert_eq!(layout.without(&p, 2), MigLayout::default());
    }
}
