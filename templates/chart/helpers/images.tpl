{{/* kfctl.image (list $ key image): `images.<key>` when it differs from upstream's image,
     pulled as given; else `global.imageRegistry` (the registry replaces the image's own, kept
     are path, tag and digest). */}}
{{- define "kfctl.image" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $image := index . 2 -}}
{{- $given := false -}}
{{- with index . 1 -}}
{{- $override := get ($v.images | default dict) . -}}
{{- if and (kindIs "string" $override) $override (ne $override $image) -}}{{- $image = $override -}}{{- $given = true -}}{{- end -}}
{{- end -}}
{{- $registry := get $global "imageRegistry" -}}
{{- if and (not $given) (kindIs "string" $registry) $registry -}}
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
{{/* kfctl.imageText (list $ text (list (list rewrite key token) ...)): each token of a text
     that names images (`charts/<component>/images.yaml`) replaced where it stands as a whole token
     (the characters around it are not reference characters): an "image" as kfctl.image
     computes it, a "hub" (Istio's registry and path) moved by `global.imageRegistry`. */}}
{{- define "kfctl.imageText" -}}
{{- $root := index . 0 -}}
{{- $text := index . 1 -}}
{{- range index . 2 -}}
{{- $old := index . 2 -}}
{{- $new := "" -}}
{{- if eq (index . 0) "hub" -}}
{{- $new = trimSuffix "/x" (include "kfctl.image" (list $root "" (printf "%s/x" $old)) | trimPrefix "\"" | trimSuffix "\"") -}}
{{- else -}}
{{- $new = include "kfctl.image" (list $root (index . 1) $old) | trimPrefix "\"" | trimSuffix "\"" -}}
{{- end -}}
{{- if ne $new $old -}}
{{- $text = regexReplaceAll (printf "(^|[^A-Za-z0-9._/:@-])%s($|[^A-Za-z0-9._/:@-])" (regexQuoteMeta $old)) $text (printf "${1}%s${2}" $new) -}}
{{- end -}}
{{- end -}}
{{- toJson $text -}}
{{- end -}}
