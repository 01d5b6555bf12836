//! TODO: owned by the catalog work; see ARCHITECTURE.md.
