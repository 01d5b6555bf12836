//! The exported umbrella chart's `NOTES.txt` tells a person how to reach the dashboard and who
//! to log in as, in the same words `kfctl-rs install` ends with (`catalog::access`), for the
//! values that change the answer: upstream's defaults (a port-forward, the demo login), a host
//! with TLS, a load balancer, users of one's own. Helm renders the notes with real Helm's
//! engine (the oracle of `../shared/tools`); kfctl-rs reads the same facts from its render.

use crate::common;

use kfctl::catalog::access::describe;
use std::process::{Command, Stdio};

const CASES: &[&[&str]] = &[
    &[],
    &["global.gateway.host=kubeflow.example.com", "global.gateway.tls.secretName=kubeflow-tls"],
    &["global.gateway.serviceType=LoadBalancer"],
    &[
        "global.users[0].email=alice@example.com",
        "global.users[0].passwordHash=$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72",
        "global.users[1].email=bob@example.com",
        "global.users[1].passwordHash=$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72",
    ],
];

/// Real Helm's `NOTES.txt` of the umbrella chart at `chart`, one per case, in order.
fn helm_notes(chart: &std::path::Path) -> Vec<String> {
    let script = r#"
import sys, json, helm_python as helm
def merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict): merge(base[k], v)
        else: base[k] = v
out = []
with helm.Chart.load(sys.argv[1]) as c:
    for case in json.loads(sys.argv[2]):
        values = {}
        if case: merge(values, helm.parse_set_string(",".join(case)))
        rendered = c.render(values, name="kubeflow", namespace="default", is_install=True)
        out.append(next(t for p, t in rendered.items() if p.endswith("/templates/NOTES.txt") and "/charts/" not in p))
print(json.dumps(out))
"#;
    let oracle_env = common::oracle_env();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}'; exec \"$ORACLE_PY\" -c \"$0\" \"$@\"", oracle_env.display()))
        .arg(script)
        .arg(chart)
        .arg(serde_json::to_string(CASES).unwrap())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "helm notes: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[cfg_attr(
    kfctl_no_upstream,
    ignore = "needs the upstream snapshot: set KFCTL_TEST_UPSTREAM or put ../shared beside the repo"
)]
#[cfg_attr(kfctl_no_oracles, ignore = "needs the oracles (real Helm): put ../shared/tools beside the repo")]
fn notes_say_how_to_reach_the_dashboard_and_log_in_as_the_install_does() {
    let notes = helm_notes(common::exported_multi_tenant());
    for (case, note) in CASES.iter().zip(&notes) {
        let rendered = kfctl::catalog::render(&common::render_request_set("multi-tenant", case)).unwrap();
        let default_login = rendered.keeps_demo_login();
        if case.iter().any(|s| s.starts_with("global.users")) {
            // the other credentials left at upstream's defaults do not bring the demo login back
            assert!(!default_login && !rendered.default_credentials.is_empty(), "{case:?}");
        }
        let objects: Vec<serde_json::Value> = rendered.objects.into_iter().map(|o| o.obj).collect();
        let access = describe(&objects.iter().collect::<Vec<_>>(), default_login).expect("multi-tenant has a gateway");
        let steps: Vec<&String> = access.reach.iter().chain([&access.login]).collect();
        for (n, step) in steps.iter().enumerate() {
            let line = format!("  {}. {step}\n", n + 1);
            assert!(note.contains(&line), "{case:?}: NOTES.txt lacks {line:?}:\n{note}");
        }
    }
    assert!(notes[0].contains("kubectl port-forward") && notes[1].contains("open https://kubeflow.example.com/"));
    assert!(
        notes[3].contains("log in as alice@example.com, bob@example.com with the password you set"),
        "{}",
        notes[3]
    );
}
