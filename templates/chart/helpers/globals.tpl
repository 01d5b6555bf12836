{{/* kfctl.exportedGlobal (list $ (list key...) (list subchart...)): fail when a value given at
     export under `global` (the path `key...`) is gone from the umbrella's `global:` (a null
     removed it) while a subchart's copy still holds it. Helm copies the umbrella's `global:`
     into each subchart's values (`<subchart>.global`, helm/helm#6277) before the install's
     values apply, so the null would leave the value in every subchart; kfctl-rs drops it. Only
     the path is named, never the value (umbrella chart only). */}}
{{- define "kfctl.exportedGlobal" -}}
{{- $v := (index . 0).Values -}}
{{- $path := index . 1 -}}
{{- if not (include "kfctl.holds" (list $v (concat (list "global") $path))) -}}
{{- $left := list -}}
{{- range (index . 2) -}}
{{- if include "kfctl.holds" (list $v (concat (list . "global") $path)) -}}
{{- $left = append $left . -}}
{{- end -}}
{{- end -}}
{{- if $left -}}
{{- $keys := list -}}
{{- range $path -}}
{{- $keys = append $keys (replace "." "\\." .) -}}
{{- end -}}
{{- $key := printf "global.%s" (join "." $keys) -}}
{{- fail (printf "%s: a null cannot undo a value given at export, Helm keeps each subchart's copy (helm/helm#6277); add --set <subchart>.%s=null for every subchart still holding it (%s) (see GUIDE.md, \"Values given at export\") or export again without it" $key $key (join ", " $left)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.holds (list node (list key...)): "true" when `node` has a value (not null) at the
     path `key...`, "" otherwise. */}}
{{- define "kfctl.holds" -}}
{{- $node := index . 0 -}}
{{- $found := true -}}
{{- range (index . 1) -}}
{{- if and $found (kindIs "map" $node) -}}
{{- if hasKey $node . -}}
{{- $node = index $node . -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- end -}}
{{- if and $found (not (kindIs "invalid" $node)) -}}true{{- end -}}
{{- end -}}
