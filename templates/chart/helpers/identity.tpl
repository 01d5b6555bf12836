{{/* kfctl.dexConnectors (list $ json words): Dex's config text with `connectors:` appended,
     one `- <toJson connector>` line per item of the dex chart's `connectors`; fails, as
     kfctl-rs does, on a duplicate id or a secret written inline in a connector's `config` (a
     non-empty string not starting with `$` under a key containing one of `words`). */}}
{{- define "kfctl.dexConnectors" -}}
{{- $connectors := (index . 0).Values.connectors -}}
{{- if kindIs "string" $connectors -}}{{- $connectors = fromYamlArray $connectors -}}{{- end -}}
{{- $raw := index . 1 -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if and (kindIs "slice" $connectors) $connectors (kindIs "string" $text) -}}
{{- $secretKey := printf "\"([^\"]*(?i:%s)[^\"]*)\":\"[^$\"]" (join "|" (index . 2)) -}}
{{- $seen := dict -}}
{{- range $i, $c := $connectors -}}
{{- $id := toString (get $c "id") -}}
{{- if hasKey $seen $id -}}
{{- fail (printf "dex.connectors[%d].id: `%s` is also connectors[%d]'s; every connector needs an id of its own (Dex routes logins by it)" $i $id (get $seen $id)) -}}
{{- end -}}
{{- $_ := set $seen $id $i -}}
{{- $found := regexFind $secretKey (toJson (get $c "config" | default dict)) -}}
{{- if $found -}}
{{- fail (printf "security: dex.connectors[%d].config holds a secret inline (key %s), which would be readable in Dex's ConfigMap and in values files; write `$SOME_NAME` there (Dex reads it from its environment) and give Dex that variable from your own Secret with dex.env.dex.dex" $i (regexReplaceAll $secretKey $found "${1}")) -}}
{{- end -}}
{{- end -}}
{{- if and $text (not (hasSuffix "\n" $text)) -}}
{{- $text = printf "%s\n" $text -}}
{{- end -}}
{{- $text = printf "%sconnectors:\n" $text -}}
{{- range $connectors -}}
{{- $text = printf "%s- %s\n" $text (toJson .) -}}
{{- end -}}
{{- toJson $text -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.oidc (list $): the oauth2-proxy chart's `oidc` as JSON ({issuerURL, clientID,
     scope}, `""` when unset); fails, as kfctl-rs does, on an issuer without its client id or
     a client id without an issuer. */}}
{{- define "kfctl.oidc" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $o := (index . 0).Values.oidc | default dict -}}
{{- $issuer := get $o "issuerURL" | default "" -}}
{{- $id := get $o "clientID" | default "" -}}
{{- $existing := has "oauth2-proxy" (get $global "existingSecrets" | default list) -}}
{{- if and $id $existing -}}
{{- fail "oauth2-proxy.oidc.clientID: set, but the oauth2-proxy Secret is listed in global.existingSecrets, so the client id comes from your Secret; put it in its `client-id` key and leave oauth2-proxy.oidc.clientID empty" -}}
{{- end -}}
{{- if and $issuer (not $id) (not $existing) -}}
{{- fail "oauth2-proxy.oidc.clientID is missing: with oauth2-proxy.oidc.issuerURL set, oauth2-proxy needs the id of its client at that issuer (and global.oidcClientSecret its secret)" -}}
{{- end -}}
{{- if and $id (not $issuer) -}}
{{- fail "oauth2-proxy.oidc.clientID is set without oauth2-proxy.oidc.issuerURL: it is the client id at an external issuer (with Dex, oauth2-proxy and Dex share upstream's client); set the issuer too, or leave clientID empty" -}}
{{- end -}}
{{- toJson (dict "issuerURL" $issuer "clientID" $id "scope" (get $o "scope" | default "")) -}}
{{- end -}}

{{/* kfctl.oidcProxyConfig (list $ json rules): `oauth2_proxy.cfg` with each line starting with
     a rule's prefix changed by its action (`issuer`, `scope`: prefix + the quoted value;
     `literal`: prefix + text; `drop`: removed); all but `scope` only with an issuer. */}}
{{- define "kfctl.oidcProxyConfig" -}}
{{- $o := include "kfctl.oidc" (list (index . 0)) | fromJson -}}
{{- $raw := index . 1 -}}
{{- $rules := index . 2 -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if and (kindIs "string" $text) (or $o.issuerURL $o.scope) -}}
{{- $lines := list -}}
{{- range $line := splitList "\n" $text -}}
{{- $out := $line -}}
{{- $keep := true -}}
{{- range $rule := $rules -}}
{{- $prefix := index $rule 0 -}}
{{- $action := index $rule 1 -}}
{{- if hasPrefix $prefix $line -}}
{{- if and (eq $action "scope") $o.scope -}}
{{- $out = printf "%s\"%s\"" $prefix $o.scope -}}
{{- else if and $o.issuerURL (eq $action "issuer") -}}
{{- $out = printf "%s\"%s\"" $prefix $o.issuerURL -}}
{{- else if and $o.issuerURL (eq $action "literal") -}}
{{- $out = printf "%s%s" $prefix (index $rule 2) -}}
{{- else if and $o.issuerURL (eq $action "drop") -}}
{{- $keep = false -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $keep -}}
{{- $lines = append $lines $out -}}
{{- end -}}
{{- end -}}
{{- toJson (join "\n" $lines) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.oidcIssuer (list $ json): a RequestAuthentication rule's issuer: the external
     issuer when set, else upstream's (Dex's). */}}
{{- define "kfctl.oidcIssuer" -}}
{{- $o := include "kfctl.oidc" (list (index . 0)) | fromJson -}}
{{- if $o.issuerURL -}}{{- toJson $o.issuerURL -}}{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

{{/* kfctl.oidcClientID (list $ json): oauth2-proxy's `client-id` (base64): the external
     client's id when an issuer is set, else upstream's. */}}
{{- define "kfctl.oidcClientID" -}}
{{- $o := include "kfctl.oidc" (list (index . 0)) | fromJson -}}
{{- if $o.issuerURL -}}{{- toJson (b64enc $o.clientID) -}}{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

{{/* kfctl.oidcWithDex (list $): fail, as kfctl-rs does, when an external issuer is set while
     Dex is enabled (umbrella chart only: a subchart cannot see the other's values). A chart
     exported without Dex (`dex.enabled=false` at export) has no `dex:` section: no Dex. */}}
{{- define "kfctl.oidcWithDex" -}}
{{- $v := (index . 0).Values -}}
{{- $oidc := get (get $v "oauth2-proxy" | default dict) "oidc" | default dict -}}
{{- $dex := get $v "dex" | default dict -}}
{{- if and (get $oidc "issuerURL") (hasKey $v "dex") (ne (toString (get $dex "enabled")) "false") -}}
{{- fail "oauth2-proxy.oidc.issuerURL is set while dex is enabled: oauth2-proxy and Istio would trust that issuer and nothing would log in through Dex; disable Dex (--set dex.enabled=false), or keep Dex and add the issuer to it as a connector (dex.connectors)" -}}
{{- end -}}
{{- end -}}
