{{/* kfctl.hashedName (list base kind fieldsJson): kustomize's name for a generated ConfigMap or
     Secret whose content values can change, `base-<hash>`, hashed as kustomize's hasher does
     (api/hasher): the JSON document of kind, an empty name and the fields (a ConfigMap's data
     and binaryData, a Secret's data, stringData and type; a missing field is ""), keys sorted,
     its SHA-256 cut to 10 hex characters with 0 1 3 a e read as g h k m t. */}}
{{- define "kfctl.hashedName" -}}
{{- $kind := index . 1 -}}
{{- $fields := fromJson (index . 2) -}}
{{- $doc := dict "kind" $kind "name" "" -}}
{{- $names := list "data" "type" -}}
{{- if eq $kind "ConfigMap" -}}{{- $names = list "data" -}}{{- end -}}
{{- range $names -}}
{{- $v := get $fields . -}}
{{- if kindIs "invalid" $v -}}{{- $v = "" -}}{{- end -}}
{{- if or (kindIs "bool" $v) (kindIs "float64" $v) (kindIs "int64" $v) -}}{{- $v = toString $v -}}{{- end -}}
{{- $_ := set $doc . $v -}}
{{- end -}}
{{- $extra := ternary "binaryData" "stringData" (eq $kind "ConfigMap") -}}
{{- if kindIs "map" (get $fields $extra) -}}{{- $_ := set $doc $extra (get $fields $extra) -}}{{- end -}}
{{- $hex := toJson $doc | sha256sum | trunc 10 -}}
{{- printf "%s-%s" (index . 0) ($hex | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t") -}}
{{- end -}}

{{/* kfctl.secretName (list $ base hashedName): a generated Secret's name at a reference —
     `base` when `global.existingSecrets` lists it (the user's Secret has no hash suffix), else
     its hashed name. */}}
{{- define "kfctl.secretName" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $listed := get $global "existingSecrets" | default list -}}
{{- if has (index . 1) $listed -}}{{- index . 1 -}}{{- else -}}{{- index . 2 -}}{{- end -}}
{{- end -}}
