{{/*
The kfctl-rs parameter table, Helm side. Written by `kfctl-rs chart export`; do not edit.

One helper per row of the native table (src/catalog/params.rs in kfctl-rs); the export
marks, in every object, each field a value can change and calls these helpers there. Each
helper takes the root context first and the field's current value as JSON (upstream's, or the
previous helper's result; "" when the field is absent) and returns the field's final value as
JSON, "" for absent. A value that is empty ("", [], {}) leaves upstream's data exactly as it
is, so the chart's defaults print exactly what `kfctl-rs template` prints.
*/}}

{{/* kfctl.enabled (list $ isCRD): "true" when the object renders: the chart's `enabled`
     and `global.crds` ("" every object, "only" just CRDs, "skip" all but CRDs). */}}
{{- define "kfctl.enabled" -}}
{{- $v := (index . 0).Values -}}
{{- $crd := index . 1 -}}
{{- $mode := toString (get ($v.global | default dict) "crds") -}}
{{- if ne (toString (get $v "enabled")) "false" -}}
{{- if or (and (ne $mode "only") (ne $mode "skip")) (and $crd (eq $mode "only")) (and (not $crd) (eq $mode "skip")) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.image (list $ key image): `images.<key>` when set, then `global.imageRegistry`
     (the registry replaces the image's own, kept are path, tag and digest). */}}
{{- define "kfctl.image" -}}
{{- $v := (index . 0).Values -}}
{{- $image := index . 2 -}}
{{- with index . 1 -}}
{{- $override := get ($v.images | default dict) . -}}
{{- if and (kindIs "string" $override) $override -}}{{- $image = $override -}}{{- end -}}
{{- end -}}
{{- $registry := get ($v.global | default dict) "imageRegistry" -}}
{{- if and (kindIs "string" $registry) $registry -}}
{{- $registry = regexReplaceAll "/+$" $registry "" -}}
{{- if $registry -}}
{{- $first := index (splitList "/" $image) 0 -}}
{{- if and (contains "/" $image) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $image = printf "%s/%s" $registry (trimPrefix (printf "%s/" $first) $image) -}}
{{- else -}}
{{- $image = printf "%s/%s" $registry $image -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $image -}}
{{- end -}}

{{/* kfctl.pullSecrets (list $ json): `global.imagePullSecrets` appended as {name: ...}. */}}
{{- define "kfctl.pullSecrets" -}}
{{- $v := (index . 0).Values -}}
{{- $raw := index . 1 -}}
{{- $names := get ($v.global | default dict) "imagePullSecrets" -}}
{{- if and (kindIs "slice" $names) $names (or (eq $raw "") (hasPrefix "[" $raw)) -}}
{{- $list := list -}}
{{- if $raw -}}{{- $list = fromJsonArray $raw -}}{{- end -}}
{{- range $names -}}{{- $list = append $list (dict "name" .) -}}{{- end -}}
{{- toJson $list -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.scoped (list $ name): the chart's own non-empty value, else global's, as JSON. */}}
{{- define "kfctl.scoped" -}}
{{- $v := (index . 0).Values -}}
{{- $own := get $v (index . 1) -}}
{{- if not (empty $own) -}}
{{- toJson $own -}}
{{- else -}}
{{- with get ($v.global | default dict) (index . 1) -}}{{- toJson . -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.nodeSelector (list $ json): the scoped nodeSelector merged over the pod's (it wins). */}}
{{- define "kfctl.nodeSelector" -}}
{{- $raw := index . 1 -}}
{{- $selector := include "kfctl.scoped" (list (index . 0) "nodeSelector") -}}
{{- if and (hasPrefix "{" $selector) (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $pod := dict -}}
{{- if $raw -}}{{- $pod = fromJson $raw -}}{{- end -}}
{{- toJson (merge (fromJson $selector) $pod) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.tolerations (list $ json): the scoped tolerations appended to the pod's. */}}
{{- define "kfctl.tolerations" -}}
{{- $raw := index . 1 -}}
{{- $tolerations := include "kfctl.scoped" (list (index . 0) "tolerations") -}}
{{- if and (hasPrefix "[" $tolerations) (or (eq $raw "") (hasPrefix "[" $raw)) -}}
{{- $pod := list -}}
{{- if $raw -}}{{- $pod = fromJsonArray $raw -}}{{- end -}}
{{- toJson (concat $pod (fromJsonArray $tolerations)) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.affinity (list $ json): the scoped affinity replaces the pod's. */}}
{{- define "kfctl.affinity" -}}
{{- with include "kfctl.scoped" (list (index . 0) "affinity") -}}{{- . -}}{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

{{/* kfctl.replicas (list $ workload json): `replicas.<workload>` when it is a number. */}}
{{- define "kfctl.replicas" -}}
{{- $v := (index . 0).Values -}}
{{- $replicas := toJson (get ($v.replicas | default dict) (index . 1)) -}}
{{- if regexMatch "^-?[0-9]" $replicas -}}{{- $replicas -}}{{- else -}}{{- index . 2 -}}{{- end -}}
{{- end -}}

{{/* kfctl.resources (list $ workload container json): `resources.<workload>.<container>`
     when not empty. */}}
{{- define "kfctl.resources" -}}
{{- $v := (index . 0).Values -}}
{{- $workload := get ($v.resources | default dict) (index . 1) -}}
{{- $resources := "" -}}
{{- if kindIs "map" $workload -}}{{- $resources = get $workload (index . 2) -}}{{- end -}}
{{- if not (empty $resources) -}}{{- toJson $resources -}}{{- else -}}{{- index . 3 -}}{{- end -}}
{{- end -}}

{{/* kfctl.commonMetadata (list $ valueName json): `global.commonLabels` or
     `global.commonAnnotations` merged over the object's (they win). */}}
{{- define "kfctl.commonMetadata" -}}
{{- $v := (index . 0).Values -}}
{{- $raw := index . 2 -}}
{{- $extra := get ($v.global | default dict) (index . 1) -}}
{{- if and (kindIs "map" $extra) (not (empty $extra)) (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $own := dict -}}
{{- if $raw -}}{{- $own = fromJson $raw -}}{{- end -}}
{{- toJson (merge (deepCopy $extra) $own) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.credential (list $ valuePath encoding json needle prefix): a non-empty credential
     value, stored as is ("plain"), base64-encoded ("base64"), or replacing `needle` with
     `prefix` + value in the field's text ("text"). */}}
{{- define "kfctl.credential" -}}
{{- $value := (index . 0).Values -}}
{{- range splitList "." (index . 1) -}}
{{- if kindIs "map" $value -}}{{- $value = get $value . -}}{{- else -}}{{- $value = "" -}}{{- end -}}
{{- end -}}
{{- $encoding := index . 2 -}}
{{- $raw := index . 3 -}}
{{- if and (kindIs "string" $value) $value -}}
{{- if eq $encoding "plain" -}}
{{- toJson $value -}}
{{- else if eq $encoding "base64" -}}
{{- toJson (b64enc $value) -}}
{{- else -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if kindIs "string" $text -}}
{{- toJson (replace (index . 4) (printf "%s%s" (index . 5) $value) $text) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.podSecurityLevel (list $ name): `global.podSecurity.<name>` when a non-empty string. */}}
{{- define "kfctl.podSecurityLevel" -}}
{{- $podSecurity := get ((index . 0).Values.global | default dict) "podSecurity" -}}
{{- if kindIs "map" $podSecurity -}}
{{- $level := get $podSecurity (index . 1) -}}
{{- if kindIs "string" $level -}}{{- $level -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.pssNamespace (list $ json): a Namespace's PSS enforce label, when it has one, set
     to `global.podSecurity.namespaces` ("off" removes it). */}}
{{- define "kfctl.pssNamespace" -}}
{{- $raw := index . 1 -}}
{{- $level := include "kfctl.podSecurityLevel" (list (index . 0) "namespaces") -}}
{{- $label := "pod-security.kubernetes.io/enforce" -}}
{{- $labels := dict -}}
{{- if hasPrefix "{" $raw -}}{{- $labels = fromJson $raw -}}{{- end -}}
{{- if and $level (hasKey $labels $label) -}}
{{- if eq $level "off" -}}{{- $_ := unset $labels $label -}}{{- else -}}{{- $_ := set $labels $label $level -}}{{- end -}}
{{- toJson $labels -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.pssProfiles (list $ json): the PSS line of the profile controller's label config
     set to `global.podSecurity.profiles` ("off" empties it). */}}
{{- define "kfctl.pssProfiles" -}}
{{- $raw := index . 1 -}}
{{- $level := include "kfctl.podSecurityLevel" (list (index . 0) "profiles") -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if and $level (kindIs "string" $text) -}}
{{- $line := printf "pod-security.kubernetes.io/enforce: \"%s\"" (ternary "" $level (eq $level "off")) -}}
{{- toJson (regexReplaceAllLiteral "(?m)^pod-security\\.kubernetes\\.io/enforce: \"[^\\n]*" $text $line) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.requires (list $ component dependencies...): fail, as kfctl-rs does, when an
     enabled component misses an enabled dependency (umbrella chart only). */}}
{{- define "kfctl.requires" -}}
{{- $v := (index . 0).Values -}}
{{- $component := index . 1 -}}
{{- if ne (toString (get (get $v $component | default dict) "enabled")) "false" -}}
{{- range (index . 2) -}}
{{- if eq (toString (get (get $v . | default dict) "enabled")) "false" -}}
{{- fail (printf "component `%s` needs %s; enable it (--set %s.enabled=true) or disable `%s`" $component . . $component) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
