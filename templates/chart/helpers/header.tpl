{{/*
The kfctl-rs parameter table, Helm side. Written by `kfctl-rs chart export`; do not edit.

One helper per row of the native table (src/catalog/params.rs in kfctl-rs); the export
marks, in every object, each field a value can change and calls these helpers there. Each
helper takes the root context first and the field's current value as JSON (upstream's, or the
previous helper's result; "" when the field is absent) and returns the field's final value as
JSON, "" for absent. A value that is empty ("", [], {}) leaves upstream's data exactly as it
is, so the chart's defaults print exactly what `kfctl-rs template` prints.
*/}}
