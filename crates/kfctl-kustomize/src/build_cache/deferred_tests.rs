use super::super::binary::{read_record, records, write_record};
use super::*;
use serde_json::json;

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "versions": [
            {"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "description": "cm-abc"}}, "served": true},
            {"name": "v2", "served": false},
            {"name": "v3", "schema": {"openAPIV3Schema": {"type": "object"}}, "storage": true},
        ]},
    })
}

/// `obj` stored as an entry's one record, its parts apart in the regions of a file (after some
/// other bytes in each region), read back: the regions, the stub and where its parts are.
struct Stored {
    regions: Arc<Regions>,
    stub: Value,
    placed: Option<Placed>,
    file: tempfile::NamedTempFile,
}

fn stored(obj: &Value) -> Stored {
    let (mut schemas, mut texts) = (b"other".to_vec(), b"other text\n".to_vec());
    let (mut schemas_len, mut texts_len) = (schemas.len() as u64, texts.len() as u64);
    let apart = apart(obj);
    let placed = apart.as_ref().map(|a| place(a, &mut schemas_len, &mut texts_len));
    if let Some(a) = &apart {
        a.schemas.iter().for_each(|(_, encoded)| schemas.extend_from_slice(encoded));
        texts.extend_from_slice(a.text.as_bytes());
    }
    let mut body = Vec::new();
    write_record(&mut body, Some("o"), obj, &[], placed.as_ref());
    let (_, stub, _, placed) = read_record(records(&body).expect("records")[0]).expect("reads");
    let mut file = tempfile::NamedTempFile::new().expect("file");
    std::io::Write::write_all(&mut file, &[schemas.as_slice(), &texts].concat()).expect("write");
    let regions = Regions {
        file: file.reopen().expect("reopen"),
        schemas_at: 0,
        texts_at: schemas.len() as u64,
        texts_len: texts.len() as u64,
        texts_crc: crc32fast::hash(&texts),
        texts_whole: OnceLock::new(),
    };
    Stored { regions: Arc::new(regions), stub, placed, file }
}

fn deferred(stored: &Stored) -> Deferred {
    let placed = stored.placed.clone().expect("deferred");
    Deferred::new(stored.regions.clone(), Arc::from(Path::new("cache/x.entry")), placed, &stored.stub)
}

#[test]
fn a_crd_is_stored_as_its_stub_and_attaching_restores_it_key_for_key() {
    let obj = crd();
    assert_eq!(deferrable(&obj), [0, 2]);
    let stored = stored(&obj);
    let stub = &stored.stub;
    assert_eq!(stub["spec"]["versions"][0]["schema"], Value::Null);
    assert_eq!(stub["spec"]["versions"][1], json!({"name": "v2", "served": false}));
    let deferred = deferred(&stored);
    assert_eq!(crate::json_size(stub) + deferred.json_size(), crate::json_size(&obj));
    assert_eq!(deferred.versions().collect::<Vec<_>>(), [0, 2]);
    assert!(deferred.has_text_for(stub));
    assert_eq!(deferred.text(stub), Some(kfctl_yaml::to_yaml(&obj)));
    let mut whole = stub.clone();
    deferred.attach(&mut whole).expect("attaches");
    assert_eq!(serde_json::to_string(&whole).unwrap(), serde_json::to_string(&obj).unwrap());
    let mut changed = stub.clone();
    changed["metadata"]["labels"] = json!({"a": "b"});
    assert!(!deferred.has_text_for(&changed), "a changed stub has no text");
    assert!(deferred.may_hold("cm-abc") && !deferred.may_hold("things.example.com"));
}

#[test]
fn objects_without_schemas_are_stored_whole() {
    for obj in [json!({"apiVersion": "v1", "kind": "ConfigMap"}), {
        let mut c = crd();
        c["apiVersion"] = json!("example.com/v1");
        c
    }] {
        assert!(deferrable(&obj).is_empty());
        let stored = stored(&obj);
        assert_eq!((&stored.stub, &stored.placed), (&obj, &None));
    }
}

#[test]
fn a_damaged_schema_is_an_error_naming_the_entry_and_damaged_texts_are_not_used() {
    let stored = stored(&crd());
    let deferred = deferred(&stored);
    // the first schema's first byte, and a byte of the text
    let mut bytes = std::fs::read(stored.file.path()).unwrap();
    bytes[5] ^= 1;
    let last = bytes.len() - 2;
    bytes[last] ^= 1;
    std::fs::write(stored.file.path(), bytes).unwrap();
    let err = deferred.attach(&mut stored.stub.clone()).expect_err("damaged");
    assert!(err.to_string().starts_with("cache/x.entry: "), "{err}");
    assert!(deferred.may_hold("no such text"), "a schema that does not read back may hold anything");
    assert!(!deferred.has_text_for(&stored.stub), "a texts region whose checksum fails is never used");
    assert_eq!(deferred.text(&stored.stub), None, "nor a text whose own checksum fails");
}
