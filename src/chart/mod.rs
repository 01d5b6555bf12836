//! TODO: owned by the chart work; see ARCHITECTURE.md.
