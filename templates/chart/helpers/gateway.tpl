{{/* kfctl.gateway (list $): `global.gateway` checked and resolved, as JSON: host, issuer,
     credentialName (the Secret the HTTPS server reads: tls.secretName, or the Certificate's
     `kubeflow-gateway-tls` with tls.issuer; empty: no TLS), httpsRedirect, serviceType.
     Refuses what kfctl-rs refuses (catalog::gateway::GatewayError), with the same words. */}}
{{- define "kfctl.gateway" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $g := get $global "gateway" | default dict -}}
{{- $tls := get $g "tls" | default dict -}}
{{- $host := get $g "host" | default "" -}}
{{- $secret := get $tls "secretName" | default "" -}}
{{- $issuer := get $tls "issuer" | default "" -}}
{{- if and $secret $issuer -}}
{{- fail (printf "global.gateway.tls: secretName `%s` and issuer `%s` are both set; give one: secretName for an existing Secret in istio-system, or issuer for a cert-manager ClusterIssuer that issues it" $secret $issuer) -}}
{{- end -}}
{{- if and $issuer (not $host) -}}
{{- fail (printf "global.gateway.tls.issuer: `%s` needs a host to issue a certificate for; set global.gateway.host (e.g. kubeflow.example.com)" $issuer) -}}
{{- end -}}
{{- $credential := $secret -}}
{{- if $issuer -}}{{- $credential = "kubeflow-gateway-tls" -}}{{- end -}}
{{- $redirect := true -}}
{{- $given := get $g "httpsRedirect" -}}
{{- if kindIs "bool" $given -}}{{- $redirect = $given -}}{{- end -}}
{{- toJson (dict "host" $host "issuer" $issuer "credentialName" $credential "httpsRedirect" $redirect "serviceType" (get $g "serviceType" | default "")) -}}
{{- end -}}

{{/* kfctl.gatewayServers (list $ json): the Kubeflow Gateway's servers: each serves the host
     (when set), the HTTP ones redirect to HTTPS (TLS on and httpsRedirect), and an HTTPS
     server on 443 reads credentialName; upstream's list when neither host nor TLS is set. */}}
{{- define "kfctl.gatewayServers" -}}
{{- $gw := include "kfctl.gateway" (list (index . 0)) | fromJson -}}
{{- $raw := index . 1 -}}
{{- if or $gw.host $gw.credentialName -}}
{{- $out := list -}}
{{- range fromJsonArray $raw -}}
{{- $server := . -}}
{{- if $gw.host -}}{{- $_ := set $server "hosts" (list $gw.host) -}}{{- end -}}
{{- $protocol := get (get $server "port" | default dict) "protocol" -}}
{{- if and $gw.credentialName $gw.httpsRedirect (eq (toString $protocol) "HTTP") -}}
{{- $_ := set $server "tls" (dict "httpsRedirect" true) -}}
{{- end -}}
{{- $out = append $out $server -}}
{{- end -}}
{{- if $gw.credentialName -}}
{{- $port := dict "name" "https" "number" 443 "protocol" "HTTPS" -}}
{{- $tls := dict "credentialName" $gw.credentialName "mode" "SIMPLE" -}}
{{- $out = append $out (dict "hosts" (list ($gw.host | default "*")) "port" $port "tls" $tls) -}}
{{- end -}}
{{- toJson $out -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.gatewayServiceType (list $ json): the ingress gateway Service's `spec.type`:
     `global.gateway.serviceType` when set, else upstream's. */}}
{{- define "kfctl.gatewayServiceType" -}}
{{- $gw := include "kfctl.gateway" (list (index . 0)) | fromJson -}}
{{- if $gw.serviceType -}}{{- toJson $gw.serviceType -}}{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

{{/* kfctl.gatewayIssuer (list $): non-empty when `global.gateway.tls.issuer` is set (the
     added Certificate's template renders only then). */}}
{{- define "kfctl.gatewayIssuer" -}}
{{- $gw := include "kfctl.gateway" (list (index . 0)) | fromJson -}}
{{- $gw.issuer -}}
{{- end -}}

{{/* kfctl.gatewayCertificate (list $ field json): a field of the added Certificate:
     `dnsNames` ([host]) or `issuer` (the ClusterIssuer's name). */}}
{{- define "kfctl.gatewayCertificate" -}}
{{- $gw := include "kfctl.gateway" (list (index . 0)) | fromJson -}}
{{- if eq (index . 1) "dnsNames" -}}{{- toJson (list $gw.host) -}}{{- else -}}{{- toJson $gw.issuer -}}{{- end -}}
{{- end -}}
