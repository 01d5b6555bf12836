//! The integration tests: one test binary, one module per suite (ripgrep's `tests/tests.rs`
//! layout). One binary links once, shares its fixtures (the localized snapshot, the default
//! renders, the exported charts: `common`) across every suite, and reports every failure in
//! one run. `cargo test --test tests parity::` runs one suite.

/// The binary's allocator here too: the suites parse and compare whole-platform renders, and
/// the test API server clones objects per request; under glibc's allocator its malloc and free
/// were a tenth of the suite's CPU (tests/bench/README.md, CI timings).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
mod day1_support;

mod analyze;
mod as_kustomization;
mod bounds;
mod bounds_output;
mod chart_credentials;
mod chart_export_values;
mod chart_hygiene;
mod chart_notes;
mod chart_package;
mod cli;
mod cli_checks;
mod cli_fixes;
mod cluster_adopt;
mod cluster_check;
mod cluster_check_drift;
mod cluster_check_installed;
mod cluster_ci;
mod cluster_flags;
mod cluster_graph;
mod cluster_install;
mod cluster_lease;
mod cluster_lifecycle;
mod cluster_ownership;
mod cluster_preexisting;
mod cluster_readiness_failure;
mod cluster_replace;
mod cluster_robust;
mod cluster_rollback;
mod cluster_verify;
mod completion;
mod component_namespaces;
mod day1_gateway;
mod day1_identity;
mod day1_storage;
mod day1_values;
mod engine_edges;
mod engine_errors;
mod engine_tables;
mod environments;
mod generated_names;
mod helm_chart;
mod helm_disable;
mod helm_matrix;
mod helm_nulls;
mod helm_values;
mod image_platforms;
mod images;
mod install_ways;
mod merged_trees;
mod parity;
mod profile_patches;
mod profiles;
mod provided;
mod release;
mod releases;
mod render_cache;
mod source_bundle;
mod source_fetch;
mod support_bundle;
mod testapi_server;
mod unknown_trees;
mod values_docs;
mod yaml_golden;
