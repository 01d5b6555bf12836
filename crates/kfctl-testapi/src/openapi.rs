//! A minimal OpenAPI v3 surface, enough for kubectl's server-side field validation probe.
//!
//! kubectl (1.27+) decides whether to send `fieldValidation=Strict` by looking in
//! `/openapi/v3/<group-version>` for the PATCH operation of the kind and its `fieldValidation`
//! parameter; without any OpenAPI it refuses to apply unless `--validate=false`. The test API
//! server therefore publishes, per served group/version, one path per resource with a PATCH
//! operation carrying `x-kubernetes-group-version-kind` and the query parameters. It publishes no
//! schemas: `kubectl explain` and client-side validation are out of scope.
//!
//! kubectl falls back to client-side validation with the OpenAPI v2 document (protobuf) for kinds
//! it finds no v3 document for, such as custom resources whose CRD is applied in the same run;
//! it skips validation of kinds the document does not define. `/openapi/v2` therefore serves an
//! empty document (zero protobuf bytes decode to an empty `openapi_v2.Document`).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Response;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::discovery::Catalog;
use super::http::Body;

/// Media type of the protobuf OpenAPI v2 document.
const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `GET /openapi/v2`: an empty protobuf document.
pub(crate) fn v2_response() -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    response.headers_mut().insert("content-type", V2_PROTOBUF.parse().expect("static content type"));
    response
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") }
}

/// `GET /openapi/v3/<gv>`: the document for one group/version, or `None` if not served.
pub(crate) fn group_version_doc(catalog: &Catalog, group: &str, version: &str, git_version: &str) -> Option<Value> {
    let mut paths = Map::new();
    for t in catalog.types().filter(|t| t.group == group && t.version == version) {
        let scope = if t.namespaced { "namespaces/{namespace}/" } else { "" };
        let path = format!("/{}/{scope}{}/{{name}}", gv_path(group, version), t.resource);
        let params: Vec<Value> = ["dryRun", "fieldManager", "fieldValidation", "force"]
            .iter()
            .map(|p| json!({"name": p, "in": "query", "schema": {"type": "string", "uniqueItems": true}}))
            .collect();
        let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
        paths.insert(path, json!({"patch": {"operationId": format!("patch{}", t.kind), "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk, "parameters": params, "responses": {"200": {"description": "OK"}}}}));
    }
    if paths.is_empty() {
        return None;
    }
    Some(
        json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": git_version}, "paths": paths, "components": {"schemas": {}}}),
    )
}

/// `GET /openapi/v3`: one entry per served group/version, with a content hash in the URL.
pub(crate) fn root(catalog: &Catalog, git_version: &str) -> Value {
    let mut gvs: Vec<(String, String)> = vec![(String::new(), "v1".to_string())];
    for (group, versions) in catalog.groups() {
        gvs.extend(versions.into_iter().map(|v| (group.clone(), v)));
    }
    let mut paths = Map::new();
    for (group, version) in gvs {
        let Some(doc) = group_version_doc(catalog, &group, &version, git_version) else { continue };
        let hash = hex::encode(Sha256::digest(doc.to_string().as_bytes()));
        let path = gv_path(&group, &version);
        paths.insert(path.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", &hash[..32])}));
    }
    json!({"paths": paths})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_lists_core_and_groups_with_hashes() {
        let root = root(&Catalog::builtin(), "v1.33.1");
        assert!(root["paths"]["api/v1"]["serverRelativeURL"].as_str().unwrap().starts_with("/openapi/v3/api/v1?hash="));
        assert!(root["paths"].get("apis/apps/v1").is_some());
    }

    #[test]
    fn group_version_doc_has_patch_with_gvk_and_field_validation() {
        let doc = group_version_doc(&Catalog::builtin(), "apps", "v1", "v1.33.1").unwrap();
        let op = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "Deployment");
        assert!(op["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "fieldValidation"));
        assert!(group_version_doc(&Catalog::builtin(), "nope", "v1", "v").is_none());
    }
}
