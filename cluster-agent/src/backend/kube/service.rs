//! The Kubernetes Services of work that serves a port. A workspace gets its own
//! (`grus-ws-<job>`, selecting its pod by job). An inference service's replicas share one per service in
//! the project's namespace, named after the service ([`object_name`]), selecting its pods by
//! [`labels::SERVICE`] and [`labels::SERVICE_PROJECT`] (Kubernetes puts only Ready pods, those
//! past their readiness probe, in its endpoints), port `http` to the replicas' port. The
//! backend creates it with the service's first replica in this cluster and deletes it when
//! the last one is forgotten ([`ServiceObjects`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, HTTPGetAction, Pod, Probe, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use grus_protocol::wire::ServiceReplicaSpec;

use super::labels;

/// The name of the Service object: the service's name when it is a DNS-1035 label (starts with
/// a letter), else `svc-<name>` (shortened with a hash when needed).
pub fn object_name(service: &str) -> String {
    let first_letter = service.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    if first_letter && service.len() <= 63 && labels::label_value(service) == service {
        return service.to_owned();
    }
    labels::label_value(&format!("svc-{service}")).to_ascii_lowercase().replace(['.', '_'], "-")
}

/// The Service object of workspace job `job`: one per workspace.
pub fn workspace_object_name(job: u64) -> String {
    format!("grus-ws-{job}")
}

/// The Service object of a workspace: selects its pod by job, port `http`.
pub fn build_workspace_service(job: u64, port: u16, namespace: &str) -> Service {
    let selector = BTreeMap::from([
        (labels::MANAGED_BY.to_owned(), labels::MANAGER.to_owned()),
        (labels::JOB.to_owned(), job.to_string()),
    ]);
    Service {
        metadata: ObjectMeta {
            name: Some(workspace_object_name(job)),
            namespace: Some(namespace.to_owned()),
            labels: Some(selector.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![http_port(port)]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

fn http_port(port: u16) -> ServicePort {
    ServicePort {
        name: Some("http".to_owned()),
        port: i32::from(port),
        target_port: Some(IntOrString::Int(i32::from(port))),
        protocol: Some("TCP".to_owned()),
        ..ServicePort::default()
    }
}

/// The in-cluster URL of a Service object.
pub fn url(namespace: &str, object: &str, port: u16) -> String {
    format!("http://{object}.{namespace}.svc.cluster.local:{port}/")
}

/// The selector labels of a service's replicas (also set on the Service object).
pub fn selector(project: &str, service: &ServiceReplicaSpec) -> BTreeMap<String, String> {
    BTreeMap::from([
        (labels::MANAGED_BY.to_owned(), labels::MANAGER.to_owned()),
        (labels::SERVICE.to_owned(), labels::label_value(&service.name)),
        (labels::SERVICE_PROJECT.to_owned(), labels::label_value(project)),
    ])
}

/// The Service object for `service` of `project` in `namespace`.
pub fn build_service(project: &str, service: &ServiceReplicaSpec, namespace: &str) -> Service {
    let selector = selector(project, service);
    Service {
        metadata: ObjectMeta {
            name: Some(object_name(&service.name)),
            namespace: Some(namespace.to_owned()),
            labels: Some(selector.clone()),
            annotations: Some(BTreeMap::from([(labels::PROJECT.to_owned(), project.to_owned())])),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![http_port(service.port)]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

/// What a replica's container gets: its port, and the readiness probe (an HTTP GET on the
/// path, on the port).
pub fn configure_container(container: &mut Container, service: &ServiceReplicaSpec) {
    container.ports = Some(vec![ContainerPort {
        name: Some("http".to_owned()),
        container_port: i32::from(service.port),
        protocol: Some("TCP".to_owned()),
        ..ContainerPort::default()
    }]);
    if let Some(r) = &service.readiness {
        container.readiness_probe = Some(Probe {
            http_get: Some(HTTPGetAction {
                path: Some(r.path.clone()),
                port: IntOrString::Int(i32::from(service.port)),
                ..HTTPGetAction::default()
            }),
            initial_delay_seconds: Some(i32::try_from(r.initial_delay_s).unwrap_or(i32::MAX)),
            period_seconds: Some(i32::try_from(r.period_s).unwrap_or(i32::MAX)),
            ..Probe::default()
        });
    }
}

/// Where a Service object lives: namespace and name.
pub type ObjectKey = (String, String);

/// Which jobs keep each Service object: from launches, and from the pods listed after a
/// restart (their labels name the service).
#[derive(Debug, Default)]
pub struct ServiceObjects {
    by_object: HashMap<ObjectKey, BTreeSet<u64>>,
    created: BTreeSet<ObjectKey>,
}

impl ServiceObjects {
    /// Records that `job` is a replica behind the object; true when the object is not known
    /// to exist yet (the backend creates it).
    pub fn add(&mut self, object: ObjectKey, job: u64) -> bool {
        self.by_object.entry(object.clone()).or_default().insert(job);
        !self.created.contains(&object)
    }

    /// The object exists (created, or found already there).
    pub fn created(&mut self, object: ObjectKey) {
        self.created.insert(object);
    }

    /// A managed pod seen in a listing: the object of its service (or, for a workspace's, its
    /// own) exists and the job keeps it.
    pub fn seed(&mut self, pod: &Pod) {
        let meta = &pod.metadata;
        let (Some(ns), Some(l)) = (&meta.namespace, &meta.labels) else { return };
        let Some(job) = l.get(labels::JOB).and_then(|j| j.parse().ok()) else { return };
        let name = match (l.get(labels::SERVICE), l.get(labels::WORKSPACE)) {
            (Some(service), _) => object_name(service),
            (None, Some(_)) => workspace_object_name(job),
            (None, None) => return,
        };
        let object = (ns.clone(), name);
        self.by_object.entry(object.clone()).or_default().insert(job);
        self.created.insert(object);
    }

    /// Forgets `job`; returns the objects no job keeps any more (the backend deletes them).
    pub fn forget(&mut self, job: u64) -> Vec<ObjectKey> {
        let mut empty = Vec::new();
        self.by_object.retain(|object, jobs| {
            jobs.remove(&job);
            if jobs.is_empty() {
                empty.push(object.clone());
                false
            } else {
                true
            }
        });
        for object in &empty {
            self.created.remove(object);
        }
        empty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_are_dns_1035_labels() {
        assert_eq!(object_name("chat"), "chat");
        assert_eq!(object_name("7b-chat"), "svc-7b-chat");
        let long = "a".repeat(63);
        assert_eq!(object_name(&long), long);
        let longer = format!("9{}", "b".repeat(62));
        let name = object_name(&longer);
        assert!(name.len() <= 63 && name.starts_with("svc-"), "{name}");
    }

    #[test]
    fn the_object_goes_with_the_last_job_that_keeps_it() {
        let mut objects = ServiceObjects::default();
        let chat = ("grus-vision".to_owned(), "chat".to_owned());
        assert!(objects.add(chat.clone(), 1), "not created yet");
        objects.created(chat.clone());
        assert!(!objects.add(chat.clone(), 2));
        assert!(objects.forget(1).is_empty());
        assert_eq!(objects.forget(2), vec![chat.clone()]);
        assert!(objects.add(chat, 3), "created again after it went");
    }
}
