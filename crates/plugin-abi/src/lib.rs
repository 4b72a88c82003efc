//! The C ABI of vcsim's compiled policy plugins (placeholder).
