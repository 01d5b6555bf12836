//! The best-effort notice every rendering and installing command prints on stderr (the binary
//! prints it; exported charts carry it in NOTES.txt).

/// Kubeflow's community gives no official production support for any deployment method.
pub const BEST_EFFORT: &str = "note: kfctl-rs is a best-effort installer. The Kubeflow community gives no official \
production support for any deployment method, this one included; kfctl-rs is a quick, reproducible way to a \
working platform built 1:1 from kubeflow/manifests.";
