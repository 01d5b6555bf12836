//! TODO: owned by the cluster work; see ARCHITECTURE.md.
