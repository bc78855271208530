//! [`Joined`]: an object type whose selected fields are resolved as one join of its own
//! `resolve_field` futures.
//!
//! async-graphql resolves every field of every object as a boxed future in a
//! `FuturesUnordered` (a heap task and an atomic waker per field). On a page of 100 jobs with
//! their project, queue and tasks that machinery was the largest part of the server's CPU
//! (BENCHMARKS.md). `Joined<T>` is the same GraphQL type as `T` (same name and registry entry,
//! so the SDL does not change) and gives the same response: fields in selection order, a
//! failing field's error recorded and the field left out, `__typename`. The fields still run
//! concurrently (DataLoader batching across fields is kept); only the per-field allocations go.
//!
//! Fields that are the object's own data ([`PlainFields`]) are not even futures: their values
//! are taken in place, without a field context, before the other fields are joined.
//!
//! Selections it does not handle itself, fragments and field directives (`@skip`/`@include`
//! are already removed before execution; these would be custom ones) or a response key
//! selected twice (which merges), go to async-graphql's own resolution. Schema extensions'
//! per-field hooks are not called: the schema registers none ([`super::GrusSchema`]).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use async_graphql::futures_util::future::join_all;
use async_graphql::indexmap::IndexMap;
use async_graphql::parser::types::{Field, Selection};
use async_graphql::registry::Registry;
use async_graphql::resolver_utils::{resolve_container, ContainerType};
use async_graphql::{Context, ContextSelectionSet, ObjectType, OutputType, Positioned, ServerResult, Value};

/// `T`, resolved by joining its fields' futures.
pub struct Joined<T>(pub T);

/// The fields of an object type whose value is its own data: no arguments, no authorization
/// beyond the object's existence, no I/O. On a page of jobs most selected fields are such
/// (`id`, `name`, `state`, ...); taking them in place skips a field context, a future and the
/// derived `resolve_field`'s comparison of the name with every field of the type.
pub trait PlainFields {
    /// The value of the field named `name` (GraphQL name) when it is plain data, exactly as
    /// the type's own `resolve_field` gives it; `None` sends the field to `resolve_field`.
    fn plain_value(&self, name: &str) -> Option<Value>;
}

impl<T: ContainerType + OutputType + PlainFields> OutputType for Joined<T> {
    fn type_name() -> Cow<'static, str> {
        T::type_name()
    }

    fn qualified_type_name() -> String {
        T::qualified_type_name()
    }

    fn introspection_type_name(&self) -> Cow<'static, str> {
        self.0.introspection_type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        T::create_type_info(registry)
    }

    // Boxed as `dyn`: object types nest recursively (a job's project lists jobs), and an
    // unboxed future would contain itself.
    async fn resolve(&self, ctx: &ContextSelectionSet<'_>, _field: &Positioned<Field>) -> ServerResult<Value> {
        let future: Pin<Box<dyn Future<Output = ServerResult<Value>> + Send + '_>> =
            Box::pin(resolve_joined(ctx, &self.0));
        future.await
    }
}

impl<T: ContainerType + OutputType + PlainFields> ContainerType for Joined<T> {
    async fn resolve_field(&self, ctx: &Context<'_>) -> ServerResult<Option<Value>> {
        self.0.resolve_field(ctx).await
    }

    async fn find_entity(&self, ctx: &Context<'_>, params: &Value) -> ServerResult<Option<Value>> {
        self.0.find_entity(ctx, params).await
    }
}

impl<T: ObjectType + OutputType + PlainFields> ObjectType for Joined<T> {}

/// The selected fields of `root` as an object value, as `resolve_container` gives it.
pub async fn resolve_joined<T: ContainerType + PlainFields + ?Sized>(
    ctx: &ContextSelectionSet<'_>,
    root: &T,
) -> ServerResult<Value> {
    let Some(fields) = plain_fields(&ctx.item.node.items) else {
        return resolve_container(ctx, root).await;
    };
    let mut values: Vec<Option<Value>> = fields
        .iter()
        .map(|f| {
            let name = f.node.name.node.as_str();
            if name == "__typename" {
                Some(Value::String(root.introspection_type_name().into_owned()))
            } else if f.node.arguments.is_empty() {
                root.plain_value(name)
            } else {
                None
            }
        })
        .collect();
    let contexts: Vec<Context<'_>> =
        fields.iter().zip(&values).filter(|(_, v)| v.is_none()).map(|(f, _)| ctx.with_field(f)).collect();
    let mut resolved = join_all(contexts.iter().map(|field_ctx| root.resolve_field(field_ctx))).await.into_iter();
    let mut object = IndexMap::with_capacity(fields.len());
    for (field, value) in fields.iter().zip(values.iter_mut()) {
        let value = match value.take() {
            Some(value) => value,
            None => match resolved.next() {
                Some(Ok(value)) => value.unwrap_or_default(),
                Some(Err(error)) => {
                    ctx.add_error(error);
                    continue;
                }
                None => continue,
            },
        };
        object.insert(field.node.response_key().node.clone(), value);
    }
    Ok(if object.is_empty() { Value::Null } else { Value::Object(object) })
}

/// The selection's fields when it is only fields without directives, each response key once;
/// `None` for anything else (left to async-graphql).
fn plain_fields(items: &[Positioned<Selection>]) -> Option<Vec<&Positioned<Field>>> {
    let mut fields: Vec<&Positioned<Field>> = Vec::with_capacity(items.len());
    for item in items {
        let Selection::Field(field) = &item.node else { return None };
        let key = &field.node.response_key().node;
        if !field.node.directives.is_empty() || fields.iter().any(|f| f.node.response_key().node == *key) {
            return None;
        }
        fields.push(field);
    }
    Some(fields)
}

#[cfg(test)]
mod tests {
    use async_graphql::{ComplexObject, EmptyMutation, EmptySubscription, Object, Schema, SimpleObject};

    use super::*;

    #[derive(SimpleObject, Clone)]
    #[graphql(complex)]
    struct Item {
        id: i32,
        name: String,
    }

    impl PlainFields for Item {
        fn plain_value(&self, name: &str) -> Option<Value> {
            match name {
                "id" => Some(Value::from(self.id)),
                _ => None,
            }
        }
    }

    #[ComplexObject]
    impl Item {
        async fn double(&self) -> i32 {
            self.id * 2
        }

        async fn fails(&self) -> async_graphql::Result<Option<i32>> {
            Err("no".into())
        }

        async fn child(&self) -> Joined<Item> {
            Joined(Item { id: self.id + 100, name: format!("{}-child", self.name) })
        }
    }

    struct Root;

    #[Object]
    impl Root {
        async fn joined(&self) -> Vec<Joined<Item>> {
            items().into_iter().map(Joined).collect()
        }

        async fn direct(&self) -> Vec<Item> {
            items()
        }
    }

    fn items() -> Vec<Item> {
        vec![Item { id: 1, name: "a".into() }, Item { id: 2, name: "b".into() }]
    }

    /// Runs `selection` under both roots and checks the responses are the same.
    async fn same(selection: &str) -> serde_json::Value {
        let schema = Schema::new(Root, EmptyMutation, EmptySubscription);
        let joined = schema.execute(format!("{{ list: joined {selection} }}")).await;
        let direct = schema.execute(format!("{{ list: direct {selection} }}")).await;
        let joined = serde_json::to_value(&joined).unwrap();
        assert_eq!(joined, serde_json::to_value(&direct).unwrap(), "{selection}");
        joined
    }

    #[tokio::test]
    async fn responses_are_those_of_async_graphql() {
        let got = same("{ name id double alias: id __typename child { id name } }").await;
        assert_eq!(
            got["data"]["list"][1],
            serde_json::json!({ "name": "b", "id": 2, "double": 4, "alias": 2, "__typename": "Item",
                                "child": { "id": 102, "name": "b-child" } })
        );
        // An error: recorded with its path, the field left out, the other fields kept.
        let got = same("{ id fails }").await;
        assert_eq!(got["errors"][0]["path"], serde_json::json!(["list", 0, "fails"]));
        // Left to async-graphql: a key selected twice, fragments, skip/include.
        same("{ id id child { id } child { name } }").await;
        same("{ ... on Item { id } ...F }  } fragment F on Item { name ").await;
        same("{ id name @skip(if: true) double @include(if: false) }").await;
    }

    #[test]
    fn the_sdl_names_the_wrapped_type() {
        let sdl = Schema::new(Root, EmptyMutation, EmptySubscription).sdl();
        assert!(sdl.contains("joined: [Item!]!") && sdl.contains("direct: [Item!]!"), "{sdl}");
        assert!(!sdl.contains("Joined"), "{sdl}");
    }
}
