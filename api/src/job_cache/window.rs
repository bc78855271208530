//! The jobs one process holds in memory for the `jobs` list, and the pages answered from them.
//! Pure: no I/O, no clock; [`super::JobCache`] feeds it what PostgreSQL says changed.
//!
//! Per project the window holds its newest jobs, at most `per_project` of them (and, over all
//! projects, at most `max_jobs`: beyond it the project holding the most gives up its oldest),
//! and the project's `floor`: every job of the project above the floor is held, any at or
//! below it may be missing. A page is answered only from the part of the window that is
//! complete for every project the page may show; a page that reaches further down returns
//! `None`, and the caller reads PostgreSQL instead. So the window never answers with a job
//! missing or stale that the database would have shown at the same point: the caller keeps it
//! current.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

use crate::db::{JobHead, Task, VisibleJobFilter};
use crate::domain::Role;

/// A job as the list shows it: its head and its tasks in insertion order.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedJob {
    pub head: JobHead,
    pub tasks: Vec<Task>,
}

/// The projects whose jobs a page may show.
#[derive(Clone, Copy, Debug)]
pub enum Visible<'a> {
    /// Every project (a platform admin).
    All,
    /// The projects the reader holds a role in.
    Projects(&'a HashMap<i64, Role>),
}

/// A page, newest first; `next_cursor` as in [`crate::db::JobHeadPage`].
#[derive(Clone, Debug, PartialEq)]
pub struct WindowPage {
    pub jobs: Vec<Arc<CachedJob>>,
    pub next_cursor: Option<i64>,
}

#[derive(Clone, Debug, Default)]
struct ProjectJobs {
    ids: BTreeSet<i64>,
    /// Every job of the project with a greater id is held.
    floor: i64,
}

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct JobWindow {
    per_project: usize,
    max_jobs: usize,
    jobs: BTreeMap<i64, Arc<CachedJob>>,
    /// A project absent here has no job at or below its floor that is missing: it had no jobs
    /// when the window was loaded, or was created since, and its jobs all came as changes.
    projects: HashMap<i64, ProjectJobs>,
}

impl JobWindow {
    /// An empty window holding at most `per_project` jobs of each project and `max_jobs` in
    /// all (each at least one).
    pub fn new(per_project: usize, max_jobs: usize) -> JobWindow {
        JobWindow {
            per_project: per_project.max(1),
            max_jobs: max_jobs.max(1),
            jobs: BTreeMap::new(),
            projects: HashMap::new(),
        }
    }

    /// Jobs held, over all projects.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The project's jobs as loaded: `newest` in any order, and `floor`, the id at or below
    /// which jobs of the project were not read (0: none were left out).
    pub fn load_project(&mut self, project_id: i64, newest: Vec<CachedJob>, floor: i64) {
        if let Some(old) = self.projects.remove(&project_id) {
            for id in old.ids {
                self.jobs.remove(&id);
            }
        }
        self.projects.insert(project_id, ProjectJobs { ids: BTreeSet::new(), floor });
        for job in newest {
            self.upsert(job);
        }
    }

    /// A job as it is now: added, or replacing what was held. A job at or below its
    /// project's floor stays out (its neighbours may be missing too); adding one beyond a
    /// limit drops the oldest of the project (for `max_jobs`: of the project holding the most)
    /// and raises that project's floor to it.
    pub fn upsert(&mut self, job: CachedJob) {
        let (id, project_id) = (job.head.id, job.head.project_id);
        let project = self.projects.entry(project_id).or_default();
        if id <= project.floor {
            return;
        }
        project.ids.insert(id);
        self.jobs.insert(id, Arc::new(job));
        if project.ids.len() > self.per_project {
            drop_oldest(project, &mut self.jobs);
        }
        if self.jobs.len() > self.max_jobs {
            // Rare (a fleet of many busy projects) and O(projects): no index kept for it.
            if let Some(largest) = self.projects.values_mut().max_by_key(|p| p.ids.len()) {
                drop_oldest(largest, &mut self.jobs);
            }
        }
    }

    fn floor(&self, project_id: i64) -> i64 {
        self.projects.get(&project_id).map_or(0, |p| p.floor)
    }

    /// The page `list_visible_jobs` gives for the same reader, filter, `first` and `after`,
    /// or `None` when the window cannot tell it: the page reaches below a visible project's
    /// floor, or the filter is one only PostgreSQL evaluates (a non-ASCII search, whose case
    /// folding is the database's).
    pub fn page(
        &self,
        visible: Visible<'_>,
        filter: &VisibleJobFilter,
        first: u32,
        after: Option<i64>,
    ) -> Option<WindowPage> {
        if filter.search.as_deref().is_some_and(|s| !s.is_ascii()) {
            return None;
        }
        let search = filter.search.as_deref().map(str::to_ascii_lowercase);
        let want = first.max(1) as usize + 1;
        let upper = after.unwrap_or(i64::MAX);
        let matches = |job: &CachedJob| matches(job, filter, search.as_deref());
        let mut found: Vec<Arc<CachedJob>> = Vec::with_capacity(want);
        let floor = match (visible, filter.project_id) {
            (Visible::All, None) => {
                let floor = self.projects.values().map(|p| p.floor).max().unwrap_or(0);
                for (&id, job) in self.jobs.range(..upper).rev() {
                    if id <= floor || found.len() == want {
                        break;
                    }
                    if matches(job) {
                        found.push(job.clone());
                    }
                }
                floor
            }
            (visible, project) => {
                let projects: Vec<i64> = match (visible, project) {
                    (Visible::Projects(roles), Some(p)) => roles.contains_key(&p).then_some(p).into_iter().collect(),
                    (Visible::Projects(roles), None) => roles.keys().copied().collect(),
                    (Visible::All, p) => p.into_iter().collect(),
                };
                let floor = projects.iter().map(|&p| self.floor(p)).max().unwrap_or(0);
                // Newest first across the projects: a k-way merge of their id sets (the heap
                // is a max-heap, so it pops the newest).
                let mut runs: Vec<_> = projects
                    .iter()
                    .filter_map(|p| self.projects.get(p))
                    .map(|p| p.ids.range(..upper).rev().copied())
                    .collect();
                let mut heads: BinaryHeap<(i64, usize)> =
                    runs.iter_mut().enumerate().filter_map(|(i, run)| Some((run.next()?, i))).collect();
                while let Some((id, run)) = heads.pop() {
                    if id <= floor || found.len() == want {
                        break;
                    }
                    if let Some(job) = self.jobs.get(&id).filter(|j| matches(j)) {
                        found.push(job.clone());
                    }
                    if let Some(next) = runs[run].next() {
                        heads.push((next, run));
                    }
                }
                floor
            }
        };
        // Fewer than asked for means the walk reached the floor (or the end): only a floor of 0
        // says there is nothing further down.
        if found.len() < want && floor > 0 {
            return None;
        }
        let next_cursor = if found.len() == want {
            found.pop();
            found.last().map(|j| j.head.id)
        } else {
            None
        };
        Some(WindowPage { jobs: found, next_cursor })
    }
}

fn drop_oldest(project: &mut ProjectJobs, jobs: &mut BTreeMap<i64, Arc<CachedJob>>) {
    if let Some(oldest) = project.ids.pop_first() {
        jobs.remove(&oldest);
        project.floor = oldest;
    }
}

/// `filter` as `list_visible_jobs` applies it (the project is the caller's concern), with
/// `search` already lowercased.
fn matches(job: &CachedJob, filter: &VisibleJobFilter, search: Option<&str>) -> bool {
    let j = &job.head;
    filter.project_id.is_none_or(|p| j.project_id == p)
        && filter.queue_id.is_none_or(|q| j.queue_id == q)
        && filter.submitted_by.is_none_or(|u| j.submitted_by == u)
        && (filter.states.is_empty() || filter.states.contains(&j.state))
        && filter.cluster_id.as_deref().is_none_or(|c| j.cluster_id.as_deref() == Some(c))
        && search.is_none_or(|s| j.name.to_ascii_lowercase().contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{JobState, UnitState};
    use chrono::{TimeZone, Utc};
    use proptest::prelude::*;

    fn job(id: i64, project_id: i64, state: JobState) -> CachedJob {
        let at = Utc.timestamp_opt(1_700_000_000 + id, 0).unwrap();
        CachedJob {
            head: JobHead {
                id,
                project_id,
                queue_id: project_id * 10,
                name: format!("train-{id}"),
                priority: 0,
                priority_class: "normal".into(),
                preemptible: false,
                state,
                borrowed: false,
                submitted_by: id % 3,
                submitted_at: at,
                updated_at: at,
                cluster_id: (id % 2 == 0).then(|| "c1".to_owned()),
                epoch: 0,
            },
            tasks: vec![Task { id: id * 10, job_id: id, name: "main".into(), replicas: 1, state: UnitState::Pending }],
        }
    }

    fn ids(page: &WindowPage) -> Vec<i64> {
        page.jobs.iter().map(|j| j.head.id).collect()
    }

    #[test]
    fn a_complete_window_answers_every_page() {
        let mut w = JobWindow::new(10, 1000);
        for id in 1..=5 {
            w.upsert(job(id, 1 + id % 2, JobState::Pending));
        }
        let all = VisibleJobFilter::default();
        let page = w.page(Visible::All, &all, 2, None).unwrap();
        assert_eq!((ids(&page), page.next_cursor), (vec![5, 4], Some(4)));
        let page = w.page(Visible::All, &all, 2, Some(2)).unwrap();
        assert_eq!((ids(&page), page.next_cursor), (vec![1], None));
        let roles = HashMap::from([(2, Role::Viewer)]);
        let page = w.page(Visible::Projects(&roles), &all, 10, None).unwrap();
        assert_eq!(ids(&page), vec![5, 3, 1]);
    }

    #[test]
    fn a_page_below_a_floor_is_not_answered() {
        let mut w = JobWindow::new(2, 1000);
        for id in 1..=4 {
            w.upsert(job(id, 1, JobState::Pending));
        }
        assert_eq!(w.len(), 2);
        let all = VisibleJobFilter::default();
        assert_eq!(ids(&w.page(Visible::All, &all, 1, None).unwrap()), vec![4]);
        // Two jobs are held but a page of two needs a third to know whether a next page exists.
        assert_eq!(w.page(Visible::All, &all, 2, None), None);
        // A job below the floor is not taken in: its neighbours are missing too.
        w.upsert(job(1, 1, JobState::Running));
        assert_eq!(w.len(), 2);
    }

    #[test]
    fn another_project_filter_does_not_show_jobs() {
        let mut w = JobWindow::new(10, 1000);
        w.upsert(job(1, 1, JobState::Pending));
        let roles = HashMap::from([(2, Role::Viewer)]);
        let filter = VisibleJobFilter { project_id: Some(1), ..Default::default() };
        assert_eq!(w.page(Visible::Projects(&roles), &filter, 10, None).unwrap().jobs, vec![]);
    }

    #[test]
    fn a_non_ascii_search_is_left_to_the_database() {
        let w = JobWindow::new(10, 1000);
        let filter = VisibleJobFilter { search: Some("é".into()), ..Default::default() };
        assert_eq!(w.page(Visible::All, &filter, 10, None), None);
    }

    /// The reference: the page `list_visible_jobs` defines, over every job there is.
    fn reference(
        all: &[CachedJob],
        visible: Visible<'_>,
        filter: &VisibleJobFilter,
        first: u32,
        after: Option<i64>,
    ) -> (Vec<i64>, Option<i64>) {
        let search = filter.search.as_deref().map(str::to_ascii_lowercase);
        let mut ids: Vec<i64> = all
            .iter()
            .filter(|j| match visible {
                Visible::All => true,
                Visible::Projects(roles) => roles.contains_key(&j.head.project_id),
            })
            .filter(|j| after.is_none_or(|a| j.head.id < a))
            .filter(|j| matches(j, filter, search.as_deref()))
            .map(|j| j.head.id)
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let more = ids.len() > first as usize;
        ids.truncate(first as usize);
        let next = if more { ids.last().copied() } else { None };
        (ids, next)
    }

    fn state() -> impl Strategy<Value = JobState> {
        prop::sample::select(vec![JobState::Pending, JobState::Running, JobState::Succeeded])
    }

    proptest! {
        /// Whatever the order of changes and the limit, a page the window answers is the page
        /// the database gives over the jobs as they are last.
        #[test]
        fn answered_pages_equal_the_database(
            changes in prop::collection::vec((1i64..60, 1i64..4, state()), 1..150),
            per_project in 1usize..40,
            max_jobs in 1usize..80,
            first in 1u32..8,
            after in prop::option::of(1i64..62),
            admin in any::<bool>(),
            visible_projects in prop::collection::btree_set(1i64..4, 0..4),
            project in prop_oneof![3 => Just(None), 1 => (1i64..5).prop_map(Some)],
            states in prop_oneof![3 => Just(vec![]), 1 => prop::collection::vec(state(), 1..3)],
            cluster in prop::bool::weighted(0.25),
            search in prop_oneof![3 => Just(None), 1 => prop::sample::select(vec!["1", "TRAIN-2", "x"]).prop_map(Some)],
        ) {
            let mut window = JobWindow::new(per_project, max_jobs);
            // The database: each id belongs to one project for good (the first change names it).
            let mut db: BTreeMap<i64, CachedJob> = BTreeMap::new();
            for (id, project, st) in changes {
                let project = db.get(&id).map_or(project, |j| j.head.project_id);
                let j = job(id, project, st);
                db.insert(id, j.clone());
                window.upsert(j);
                prop_assert!(window.len() <= max_jobs);
            }
            let all: Vec<CachedJob> = db.into_values().collect();
            let roles: HashMap<i64, Role> = visible_projects.iter().map(|&p| (p, Role::Viewer)).collect();
            let visible = if admin { Visible::All } else { Visible::Projects(&roles) };
            let filter = VisibleJobFilter {
                project_id: project,
                states,
                cluster_id: cluster.then(|| "c1".to_owned()),
                search: search.map(str::to_owned),
                ..Default::default()
            };
            if let Some(page) = window.page(visible, &filter, first, after) {
                let got = (ids(&page), page.next_cursor);
                prop_assert_eq!(got, reference(&all, visible, &filter, first, after));
                for j in &page.jobs {
                    prop_assert_eq!(Some(&**j), all.iter().find(|a| a.head.id == j.head.id));
                }
            }
            // With room for everything, every page is answered.
            let mut roomy = JobWindow::new(1000, 1000);
            for j in &all {
                roomy.upsert(j.clone());
            }
            prop_assert!(roomy.page(visible, &filter, first, after).is_some());
        }
    }
}
