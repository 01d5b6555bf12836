use super::*;

const CONFIG: &str = "issuer: x\nstaticClients:\n- idEnv: OIDC_CLIENT_ID\n";

fn github(secret: &str) -> Value {
    json!({"type": "github", "id": "github", "name": "GitHub", "config": {"clientID": "abc", "clientSecret": secret, "orgs": [{"name": "a<b"}]}})
}

#[test]
fn connectors_are_appended_as_go_json_lines() {
    let text = with_connectors(
        CONFIG,
        &[github("$GH_SECRET"), json!({"id": "ldap", "type": "ldap", "config": {"port": 389}})],
    );
    assert_eq!(
        text,
        format!(
            "{CONFIG}connectors:\n- {{\"config\":{{\"clientID\":\"abc\",\"clientSecret\":\"$GH_SECRET\",\"orgs\":[{{\"name\":\"a\\u003cb\"}}]}},\"id\":\"github\",\"name\":\"GitHub\",\"type\":\"github\"}}\n- {{\"config\":{{\"port\":389}},\"id\":\"ldap\",\"type\":\"ldap\"}}\n"
        )
    );
    assert_eq!(with_connectors(CONFIG, &[]), CONFIG);
    assert_eq!(
        with_connectors("a: 1", &[json!({"id": "x", "type": "oidc"})]),
        "a: 1\nconnectors:\n- {\"id\":\"x\",\"type\":\"oidc\"}\n"
    );
}

#[test]
fn bad_connectors_are_refused_naming_the_value() {
    let values = |list: Value| json!({"dex": {"connectors": list, "enabled": true}});
    let dup = check(&values(json!([github("$A"), {"type": "oidc", "id": "gitlab"}, {"type": "oidc", "id": "github"}])));
    assert_eq!(dup, Err(IdentityError::DuplicateConnector { index: 2, first: 0, id: "github".into() }));
    let inline = check(&values(json!([github("hunter2")]))).unwrap_err();
    assert_eq!(inline, IdentityError::InlineSecret { index: 0, key: "clientSecret".into() });
    assert!(inline.to_string().starts_with("security: dex.connectors[0].config.clientSecret"), "{inline}");
    let nested = json!({"bindPW": "$LDAP", "userSearch": {"adminPassword": "x"}});
    assert_eq!(inline_secret(&nested).as_deref(), Some("userSearch.adminPassword"));
    let schema = connectors_schema();
    let err = schema.check(&json!([{"type": "oidc"}])).unwrap_err().to_string();
    assert!(err.contains("`[0].id` is missing"), "{err}");
    assert!(schema.check(&json!([{"type": "oidc", "id": "a", "extra": 1}])).is_err());
}

#[test]
fn an_issuer_needs_its_client_id_and_no_dex() {
    let values =
        |oidc: Value, dex: bool| json!({"dex": {"enabled": dex}, "oauth2-proxy": {"enabled": true, "oidc": oidc}});
    let issuer = "https://login.example.com/realms/kf";
    assert_eq!(check(&values(json!({"issuerURL": issuer}), false)), Err(IdentityError::MissingClientId));
    assert_eq!(check(&values(json!({"clientID": "kf"}), false)), Err(IdentityError::ClientIdWithoutIssuer));
    assert_eq!(check(&values(json!({"issuerURL": issuer, "clientID": "kf"}), true)), Err(IdentityError::WithDex));
    assert_eq!(check(&values(json!({"issuerURL": issuer, "clientID": "kf"}), false)), Ok(()));
    let no_proxy = json!({"oauth2-proxy": {"enabled": false, "oidc": {"clientID": "kf"}}});
    assert_eq!(check(&no_proxy), Ok(()), "as the charts: only checked where it renders");
    let schema = oidc_schema();
    for bad in ["http://login.example.com", "login.example.com", "https://a b", "https://x/?q=1"] {
        assert!(schema.check(&json!({"issuerURL": bad})).is_err(), "{bad}");
    }
    assert!(schema.check(&json!({"issuerURL": issuer, "scope": "openid email"})).is_ok());
}

#[test]
fn the_proxy_config_points_at_the_issuer_and_discovers_it() {
    let cfg = "provider = \"oidc\"\noidc_issuer_url = \"http://dex\"\nscope = \"profile email groups openid\"\nskip_oidc_discovery = true\nlogin_url = \"/dex/auth\"\nprompt = \"none\"\nkeep = 1";
    let oidc = Oidc { issuer: "https://idp.example.com".into(), client_id: "kf".into(), scope: String::new() };
    assert_eq!(
        proxy_config(cfg, &oidc),
        "provider = \"oidc\"\noidc_issuer_url = \"https://idp.example.com\"\nscope = \"profile email groups openid\"\nskip_oidc_discovery = false\nkeep = 1"
    );
    let scope_only = Oidc { scope: "openid email".into(), ..Oidc::default() };
    assert_eq!(proxy_config(cfg, &scope_only), cfg.replace("profile email groups openid", "openid email"));
    let mut rule = json!({"apiVersion": "security.istio.io/v1beta1", "kind": "RequestAuthentication", "spec": {"jwtRules": [{"issuer": DEX_ISSUER}, {"issuer": "https://kubernetes.default.svc"}]}});
    let values = json!({"oauth2-proxy": {"oidc": {"issuerURL": "https://idp.example.com", "clientID": "kf"}}});
    apply(&mut rule, &values);
    assert_eq!(rule.pointer("/spec/jwtRules/0/issuer").unwrap(), "https://idp.example.com");
    assert_eq!(rule.pointer("/spec/jwtRules/1/issuer").unwrap(), "https://kubernetes.default.svc");
}
