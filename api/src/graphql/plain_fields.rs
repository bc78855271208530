//! [`PlainFields`] of the types that are resolved as [`Joined`](super::joined::Joined): the
//! values of their data fields, taken in place. Each value is built by the same conversion the
//! derived resolver uses (`ScalarType::to_value`, `enum_value`), and a test checks every field
//! answered here against async-graphql's own resolution of the type.

use async_graphql::resolver_utils::enum_value;
use async_graphql::{ScalarType, Value};

use super::joined::PlainFields;
use super::types::{JobObj, ProjectObj, QueueObj, TaskObj};

fn optional_string(value: &Option<String>) -> Value {
    value.as_ref().map_or(Value::Null, |s| Value::String(s.clone()))
}

impl PlainFields for JobObj {
    fn plain_value(&self, name: &str) -> Option<Value> {
        Some(match name {
            "id" => self.id.to_value(),
            "projectId" => self.project_id.to_value(),
            "queueId" => self.queue_id.to_value(),
            "name" => self.name.to_value(),
            "priority" => self.priority.to_value(),
            "priorityClass" => self.priority_class.to_value(),
            "preemptible" => self.preemptible.to_value(),
            "state" => enum_value(self.state),
            "borrowed" => self.borrowed.to_value(),
            "submittedBy" => self.submitted_by.to_value(),
            "submittedAt" => self.submitted_at.to_value(),
            "updatedAt" => self.updated_at.to_value(),
            "clusterId" => optional_string(&self.cluster_id),
            "epoch" => self.epoch.to_value(),
            _ => return None,
        })
    }
}

impl PlainFields for ProjectObj {
    fn plain_value(&self, name: &str) -> Option<Value> {
        Some(match name {
            "id" => self.id.to_value(),
            "tenantId" => self.tenant_id.to_value(),
            "slug" => self.slug.to_value(),
            "name" => self.name.to_value(),
            "myRole" => enum_value(self.my_role),
            "createdAt" => self.created_at.to_value(),
            _ => return None,
        })
    }
}

impl PlainFields for QueueObj {
    fn plain_value(&self, name: &str) -> Option<Value> {
        Some(match name {
            "id" => self.id.to_value(),
            "name" => self.name.to_value(),
            "weight" => self.weight.to_value(),
            "canBorrow" => self.can_borrow.to_value(),
            _ => return None,
        })
    }
}

impl PlainFields for TaskObj {
    fn plain_value(&self, name: &str) -> Option<Value> {
        Some(match name {
            "id" => self.id.to_value(),
            "name" => self.name.to_value(),
            "replicaCount" => self.replicas.to_value(),
            "state" => self.state.to_value(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use async_graphql::{EmptyMutation, EmptySubscription, Object, Schema, ID};
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::db;
    use crate::domain::{JobState, Role, UnitState};
    use crate::graphql::joined::Joined;

    fn job(cluster: Option<&str>) -> JobObj {
        let at = Utc.with_ymd_and_hms(2026, 11, 25, 2, 0, 40).unwrap() + chrono::Duration::microseconds(853_332);
        JobObj::from(db::JobHead {
            id: 4991,
            project_id: 7,
            queue_id: 9,
            name: "train \"llama\" ✓".into(),
            priority: -3,
            priority_class: "batch".into(),
            preemptible: true,
            state: JobState::Running,
            borrowed: false,
            submitted_by: 12,
            submitted_at: at,
            updated_at: at + chrono::Duration::seconds(5),
            cluster_id: cluster.map(str::to_owned),
            epoch: 3,
        })
    }

    fn project() -> ProjectObj {
        let created_at = Utc.with_ymd_and_hms(2025, 1, 2, 3, 4, 5).unwrap();
        ProjectObj::new(
            db::Project { id: 7, tenant_id: 2, slug: "vision".into(), name: "Vision".into(), created_at },
            Role::Member,
        )
    }

    fn queue() -> QueueObj {
        let created_at = Utc.with_ymd_and_hms(2025, 1, 2, 3, 4, 5).unwrap();
        QueueObj::from(db::Queue {
            id: 9,
            project_id: 7,
            name: "default".into(),
            weight: 1.5,
            can_borrow: true,
            created_at,
            max_wait_s: Some(3600),
            default_runtime_s: None,
            max_runtime_s: Some(86400),
            borrowed_suspend_from_min: None,
            borrowed_suspend_until_min: None,
            interactive_reserve_milli: 0,
        })
    }

    fn task() -> TaskObj {
        TaskObj::new(&db::Task { id: 31, job_id: 4991, name: "main".into(), replicas: 4, state: UnitState::Placed }, 7)
    }

    struct Root;

    #[Object]
    impl Root {
        async fn direct_jobs(&self) -> Vec<JobObj> {
            vec![job(Some("eu-1")), job(None)]
        }
        async fn joined_jobs(&self) -> Vec<Joined<JobObj>> {
            vec![Joined(job(Some("eu-1"))), Joined(job(None))]
        }
        async fn direct_project(&self) -> ProjectObj {
            project()
        }
        async fn joined_project(&self) -> Joined<ProjectObj> {
            Joined(project())
        }
        async fn direct_queue(&self) -> QueueObj {
            queue()
        }
        async fn joined_queue(&self) -> Joined<QueueObj> {
            Joined(queue())
        }
        async fn direct_task(&self) -> TaskObj {
            task()
        }
        async fn joined_task(&self) -> Joined<TaskObj> {
            Joined(task())
        }
    }

    /// The type's fields (GraphQL names) whose values `plain_value` gives.
    async fn answered(
        schema: &Schema<Root, EmptyMutation, EmptySubscription>,
        ty: &str,
        sample: &dyn PlainFields,
    ) -> Vec<String> {
        let got = schema.execute(format!("{{ __type(name: \"{ty}\") {{ fields {{ name }} }} }}")).await;
        let got = serde_json::to_value(&got).unwrap();
        let fields = got["data"]["__type"]["fields"].as_array().unwrap().clone();
        fields
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_owned())
            .filter(|name| sample.plain_value(name).is_some())
            .collect()
    }

    #[tokio::test]
    async fn plain_values_are_those_of_async_graphql() {
        let schema = Schema::new(Root, EmptyMutation, EmptySubscription);
        for (ty, root, sample, expected) in [
            ("Job", "Jobs", &job(None) as &dyn PlainFields, 14),
            ("Project", "Project", &project(), 6),
            ("Queue", "Queue", &queue(), 4),
            ("Task", "Task", &task(), 4),
        ] {
            let fields = answered(&schema, ty, sample).await;
            // Every name answered in place is one of the type's fields.
            assert_eq!(fields.len(), expected, "{ty}: {fields:?}");
            let selection = format!("{{ {} __typename }}", fields.join(" "));
            let direct = schema.execute(format!("{{ out: direct{root} {selection} }}")).await;
            let joined = schema.execute(format!("{{ out: joined{root} {selection} }}")).await;
            assert!(direct.errors.is_empty(), "{ty}: {:?}", direct.errors);
            assert_eq!(serde_json::to_value(&joined).unwrap(), serde_json::to_value(&direct).unwrap(), "{ty}");
        }
    }

    #[test]
    fn ids_are_strings() {
        assert_eq!(job(None).plain_value("id"), Some(Value::String("4991".into())));
        assert_eq!(ID::from("4991").to_value(), Value::String("4991".into()));
    }
}
