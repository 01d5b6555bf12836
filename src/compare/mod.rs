//! TODO: owned by the compare work; see ARCHITECTURE.md.
